//! HTTP transports: streamable HTTP (2025-03-26 on), falling back to the old HTTP+SSE transport
//! (2024-11-05) when the first POST gets 400, 404 or 405, as the spec's backwards-compatibility
//! section says. Blocking reqwest with rustls.
//!
//! Limits: every POST carries the per-request (or start-up) limit as its reqwest timeout and every
//! body is read through a deadline check. The old transport's GET stream lives for the whole
//! introspection, so a server that goes silent on it is bounded by the overall timeout (a blocked
//! read cannot be cut shorter), not by the per-request limit.

use std::io::{self, BufReader, Read};
use std::time::{Duration, Instant};

use reqwest::blocking::{Client, Response};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE, WWW_AUTHENTICATE};
use reqwest::{StatusCode, Url};
use serde_json::Value;

use super::session::{self, answer_server_request, classify, Channel, Incoming, Wait};
use super::sse::{SseError, SseReader};
use super::{
    redact_url, AuthChallenge, AuthPosture, ChannelSecurity, Introspection, Limit, Options, Step,
    Transport, WireError,
};

const SESSION_HEADER: &str = "mcp-session-id";
const VERSION_HEADER: &str = "mcp-protocol-version";

/// Connect to `url`, handshake, list its tools.
///
/// `headers` are sent with every request to the server (and never to another origin: redirects
/// are followed only within the same origin, the OAuth metadata is fetched without them). Their
/// values never appear in errors. A refusal (401, or 403 with `WWW-Authenticate`) is
/// [`WireError::AuthRequired`] with the observed [`AuthPosture`].
pub fn introspect_http(
    url: &str,
    headers: &[(String, String)],
    opts: &Options,
) -> Result<Introspection, WireError> {
    let started = Instant::now();
    let server = format!("HTTP server {}", redact_url(url));
    let parsed = Url::parse(url).map_err(|e| WireError::InvalidUrl {
        server: server.clone(),
        detail: e.to_string(),
    })?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(WireError::InvalidUrl {
            server,
            detail: format!("scheme {:?} is not http or https", parsed.scheme()),
        });
    }
    let mut user_headers = HeaderMap::new();
    for (name, value) in headers {
        let bad = || WireError::InvalidHeader {
            server: server.clone(),
            name: name.clone(),
        };
        let n = HeaderName::from_bytes(name.as_bytes()).map_err(|_| bad())?;
        let mut v = HeaderValue::from_str(value).map_err(|_| bad())?;
        v.set_sensitive(true);
        user_headers.append(n, v);
    }
    let origin = parsed.clone();
    let client = Client::builder()
        .user_agent(format!("{}/{}", opts.client_name, opts.client_version))
        .connect_timeout(opts.startup_timeout.min(Duration::from_secs(10)))
        .redirect(reqwest::redirect::Policy::custom(move |attempt| {
            if attempt.previous().len() >= 5 {
                attempt.error("more than 5 redirects")
            } else if same_origin(attempt.url(), &origin) {
                attempt.follow()
            } else {
                attempt.stop()
            }
        }))
        .build()
        .map_err(|e| WireError::Network {
            server: server.clone(),
            step: Step::StartUp,
            detail: error_text(&e),
        })?;
    let base = Base {
        client,
        server: server.clone(),
        url: parsed,
        headers: user_headers,
        credential_names: headers.iter().map(|(k, _)| k.clone()).collect(),
        cap: opts.max_message_bytes,
        warnings: Vec::new(),
        last_bytes: 0,
    };

    let mut streamable = Streamable {
        base,
        session_id: None,
        protocol_version: None,
        try_sse: false,
    };
    let first = session::run(&mut streamable, opts, started);
    let first_err = match first {
        Ok(out) => {
            streamable.close_session(opts, started);
            let auth = streamable.base.posture(None);
            let mut warnings = std::mem::take(&mut streamable.base.warnings);
            warnings.extend(out.warnings);
            return Ok(Introspection {
                tools: out.tools,
                server_info: out.server_info,
                protocol_version: out.protocol_version,
                transport: Transport::StreamableHttp,
                auth,
                warnings,
                incomplete: out.incomplete,
                offers: out.offers,
                offer_errors: out.offer_errors,
            });
        }
        Err(e) if streamable.try_sse => e,
        Err(e) => {
            streamable.close_session(opts, started);
            return Err(e);
        }
    };

    let base = streamable.base;
    let second = Legacy::open(base, opts, started)
        .and_then(|mut legacy| session::run(&mut legacy, opts, started).map(|o| (o, legacy)));
    match second {
        Ok((out, mut legacy)) => {
            let auth = legacy.base.posture(None);
            let mut warnings = std::mem::take(&mut legacy.base.warnings);
            warnings.extend(out.warnings);
            Ok(Introspection {
                tools: out.tools,
                server_info: out.server_info,
                protocol_version: out.protocol_version,
                transport: Transport::Sse,
                auth,
                warnings,
                incomplete: out.incomplete,
                offers: out.offers,
                offer_errors: out.offer_errors,
            })
        }
        Err(e @ WireError::AuthRequired { .. }) => Err(e),
        Err(e) => Err(WireError::NoTransport {
            server,
            streamable: Box::new(first_err),
            sse: Box::new(e),
        }),
    }
}

fn same_origin(a: &Url, b: &Url) -> bool {
    a.scheme() == b.scheme()
        && a.host_str() == b.host_str()
        && a.port_or_known_default() == b.port_or_known_default()
}

fn is_loopback(u: &Url) -> bool {
    match u.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(d)) => {
            let d = d.to_ascii_lowercase();
            d == "localhost" || d.ends_with(".localhost")
        }
        None => false,
    }
}

/// The error and its causes, without any URL (the query string may hold a key).
fn error_text(e: &reqwest::Error) -> String {
    let mut s = String::new();
    let mut cur: Option<&dyn std::error::Error> = Some(e);
    let mut first = true;
    while let Some(err) = cur {
        let text = if first {
            // reqwest's own Display may include the URL; `without_url` is by value, so rebuild.
            let t = err.to_string();
            match t.find(" for url (") {
                Some(i) => t[..i].to_string(),
                None => t,
            }
        } else {
            err.to_string()
        };
        if !s.contains(&text) {
            if !s.is_empty() {
                s.push_str(": ");
            }
            s.push_str(&text);
        }
        first = false;
        cur = err.source();
    }
    s
}

/// A body reader that refuses to go on past a deadline (a slow drip cannot outlive the limit).
struct DeadlineReader<R> {
    inner: R,
    deadline: Instant,
}

impl<R: Read> Read for DeadlineReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if Instant::now() >= self.deadline {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "deadline passed"));
        }
        self.inner.read(buf)
    }
}

fn is_timeout(e: &io::Error) -> bool {
    if e.kind() == io::ErrorKind::TimedOut {
        return true;
    }
    e.get_ref()
        .and_then(|inner| inner.downcast_ref::<reqwest::Error>())
        .is_some_and(|re| re.is_timeout())
}

/// What both transports share.
struct Base {
    client: Client,
    server: String,
    url: Url,
    headers: HeaderMap,
    credential_names: Vec<String>,
    cap: usize,
    warnings: Vec<String>,
    /// The size of the message that carried the last response returned.
    last_bytes: usize,
}

impl Base {
    fn posture(&self, challenge: Option<AuthChallenge>) -> AuthPosture {
        AuthPosture {
            channel: if self.url.scheme() == "https" {
                ChannelSecurity::Https
            } else {
                ChannelSecurity::PlainHttp {
                    loopback: is_loopback(&self.url),
                }
            },
            credential_names: self.credential_names.clone(),
            challenge,
        }
    }

    fn timeout_err(&self, step: &Step, limit: Limit) -> WireError {
        WireError::Timeout {
            server: self.server.clone(),
            step: step.clone(),
            limit,
            stderr: Vec::new(),
        }
    }

    fn send_err(&self, e: reqwest::Error, step: &Step, wait: Wait) -> WireError {
        if e.is_timeout() {
            self.timeout_err(step, wait.limit)
        } else {
            WireError::Network {
                server: self.server.clone(),
                step: step.clone(),
                detail: error_text(&e),
            }
        }
    }

    fn read_err(&self, e: io::Error, step: &Step, wait: Wait, what: &str) -> WireError {
        if is_timeout(&e) || Instant::now() >= wait.deadline {
            self.timeout_err(step, wait.limit)
        } else {
            WireError::Network {
                server: self.server.clone(),
                step: step.clone(),
                detail: format!("{what} broke off: {e}"),
            }
        }
    }

    fn is_refusal(resp: &Response) -> bool {
        resp.status() == StatusCode::UNAUTHORIZED
            || (resp.status() == StatusCode::FORBIDDEN
                && resp.headers().contains_key(WWW_AUTHENTICATE))
    }

    /// Builds the auth error from a refusal: the challenge, and the OAuth protected-resource
    /// metadata (RFC 9728) if it can be found on the server's own origin.
    fn refusal(&self, resp: Response, transport: Transport, wait: Wait) -> WireError {
        let status = resp.status().as_u16();
        let www: Vec<String> = resp
            .headers()
            .get_all(WWW_AUTHENTICATE)
            .iter()
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
            .collect();
        drop(resp);
        let rm = www.iter().find_map(|h| auth_param(h, "resource_metadata"));
        let mut challenge = AuthChallenge {
            status,
            www_authenticate: www,
            resource_metadata_url: rm.clone(),
            metadata_url: None,
            metadata: None,
            metadata_problem: None,
        };
        let mut candidates = Vec::new();
        let mut problems = Vec::new();
        if let Some(rm) = &rm {
            match self.url.join(rm) {
                Ok(u) if same_origin(&u, &self.url) => candidates.push(u),
                Ok(u) => problems.push(format!(
                    "resource_metadata points to another origin ({}), not fetched",
                    redact_url(u.as_str())
                )),
                Err(_) => problems.push("resource_metadata is not a URL".to_string()),
            }
        }
        let path = self.url.path().trim_end_matches('/');
        let mut well_known = self.url.clone();
        well_known.set_query(None);
        well_known.set_fragment(None);
        if !path.is_empty() {
            well_known.set_path(&format!("/.well-known/oauth-protected-resource{path}"));
            candidates.push(well_known.clone());
        }
        well_known.set_path("/.well-known/oauth-protected-resource");
        candidates.push(well_known);
        candidates.dedup();
        for u in candidates {
            let t = wait.remaining().min(Duration::from_secs(5));
            if t.is_zero() {
                problems.push("no time left to fetch the metadata".to_string());
                break;
            }
            // No user headers here: the metadata is public, and the credentials stay with the MCP
            // endpoint.
            let got = self
                .client
                .get(u.clone())
                .header(ACCEPT, "application/json")
                .timeout(t)
                .send();
            match got {
                Ok(r) if r.status().is_success() => {
                    let mut body = Vec::new();
                    let read = r.take(1 << 20).read_to_end(&mut body);
                    match read
                        .ok()
                        .and_then(|_| serde_json::from_slice::<Value>(&body).ok())
                    {
                        Some(v @ Value::Object(_)) => {
                            challenge.metadata_url = Some(u.to_string());
                            challenge.metadata = Some(v);
                            break;
                        }
                        _ => problems
                            .push(format!("{} is not a JSON object", redact_url(u.as_str()))),
                    }
                }
                Ok(r) => problems.push(format!(
                    "{} answered {}",
                    redact_url(u.as_str()),
                    r.status().as_u16()
                )),
                Err(e) => problems.push(format!("{}: {}", redact_url(u.as_str()), error_text(&e))),
            }
        }
        if challenge.metadata.is_none() {
            challenge.metadata_problem = Some(problems.join("; "));
        }
        WireError::AuthRequired {
            server: self.server.clone(),
            transport,
            auth: Box::new(self.posture(Some(challenge))),
        }
    }

    fn http_err(&self, resp: Response, step: &Step, extra: &str) -> WireError {
        let status = resp.status();
        let mut body = Vec::new();
        let _ = resp.take(300).read_to_end(&mut body);
        let snippet: String = String::from_utf8_lossy(&body)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .chars()
            .take(200)
            .collect();
        let mut detail = String::new();
        if let Some(r) = status.canonical_reason() {
            detail.push_str(&format!(" {r}"));
        }
        detail.push_str(extra);
        if !snippet.is_empty() {
            detail.push_str(&format!(": {snippet}"));
        }
        WireError::Http {
            server: self.server.clone(),
            step: step.clone(),
            status: status.as_u16(),
            detail,
        }
    }

    fn too_large(&self, step: &Step) -> WireError {
        WireError::MessageTooLarge {
            server: self.server.clone(),
            step: step.clone(),
            limit: self.cap,
            stderr: Vec::new(),
        }
    }

    fn protocol(&self, step: &Step, detail: String) -> WireError {
        WireError::Protocol {
            server: self.server.clone(),
            step: step.clone(),
            detail,
            stderr: Vec::new(),
        }
    }
}

/// The value of `name=` in a `WWW-Authenticate` header (quoted or token).
fn auth_param(header: &str, name: &str) -> Option<String> {
    let lower = header.to_ascii_lowercase();
    let key = format!("{}=", name.to_ascii_lowercase());
    let mut from = 0;
    while let Some(i) = lower[from..].find(&key) {
        let at = from + i;
        let before = lower[..at].chars().last();
        from = at + key.len();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &header[from..];
        if let Some(q) = rest.strip_prefix('"') {
            let mut out = String::new();
            let mut chars = q.chars();
            while let Some(c) = chars.next() {
                match c {
                    '\\' => out.extend(chars.next()),
                    '"' => return Some(out),
                    c => out.push(c),
                }
            }
            return Some(out);
        }
        let end = rest
            .find(|c: char| c == ',' || c.is_whitespace())
            .unwrap_or(rest.len());
        return Some(rest[..end].to_string());
    }
    None
}

fn content_type(resp: &Response) -> String {
    resp.headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase()
}

struct Streamable {
    base: Base,
    session_id: Option<HeaderValue>,
    protocol_version: Option<HeaderValue>,
    /// Set when the first POST was answered 400/404/405: the old HTTP+SSE transport may be there.
    try_sse: bool,
}

impl Streamable {
    fn post(&self, msg: &Value, step: &Step, wait: Wait) -> Result<Response, WireError> {
        let mut h = self.base.headers.clone();
        h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        h.insert(
            ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream"),
        );
        if let Some(s) = &self.session_id {
            h.insert(SESSION_HEADER, s.clone());
        }
        if let Some(v) = &self.protocol_version {
            h.insert(VERSION_HEADER, v.clone());
        }
        let t = wait.remaining();
        if t.is_zero() {
            return Err(self.base.timeout_err(step, wait.limit));
        }
        self.base
            .client
            .post(self.base.url.clone())
            .headers(h)
            .timeout(t)
            .body(serde_json::to_vec(msg).expect("a Value always serializes"))
            .send()
            .map_err(|e| self.base.send_err(e, step, wait))
    }

    /// Handles a response that must carry the answer to request `id`: JSON body or SSE stream.
    fn answer(
        &mut self,
        resp: Response,
        id: u64,
        step: &Step,
        wait: Wait,
    ) -> Result<Value, WireError> {
        let ct = content_type(&resp);
        let status = resp.status();
        let reader = DeadlineReader {
            inner: resp,
            deadline: wait.deadline,
        };
        if ct.starts_with("text/event-stream") {
            let mut sse = SseReader::new(BufReader::new(reader), self.base.cap);
            loop {
                match sse.next_event() {
                    Ok(Some(ev)) => {
                        if ev.event != "message" || ev.data.trim().is_empty() {
                            continue;
                        }
                        let Ok(msg) = serde_json::from_str::<Value>(&ev.data) else {
                            self.base
                                .warnings
                                .push(format!("{step}: skipped an SSE event that is not JSON"));
                            continue;
                        };
                        if let Some(found) = self.dispatch(msg, id, step, wait) {
                            self.base.last_bytes = ev.data.len();
                            return Ok(found);
                        }
                    }
                    Ok(None) => {
                        return Err(self.base.protocol(
                            step,
                            "the SSE stream ended before the response came".to_string(),
                        ))
                    }
                    Err(SseError::TooLarge) => return Err(self.base.too_large(step)),
                    Err(SseError::Io(e)) => {
                        return Err(self.base.read_err(e, step, wait, "the SSE stream"))
                    }
                }
            }
        }
        let mut body = Vec::new();
        reader
            .take(self.base.cap as u64 + 1)
            .read_to_end(&mut body)
            .map_err(|e| self.base.read_err(e, step, wait, "the response body"))?;
        if body.len() > self.base.cap {
            return Err(self.base.too_large(step));
        }
        if body.iter().all(u8::is_ascii_whitespace) {
            return Err(self.base.protocol(
                step,
                format!(
                    "HTTP {} with an empty body instead of a response",
                    status.as_u16()
                ),
            ));
        }
        let msg: Value = serde_json::from_slice(&body).map_err(|e| {
            self.base
                .protocol(step, format!("the body ({ct}) is not JSON: {e}"))
        })?;
        match self.dispatch(msg, id, step, wait) {
            Some(found) => {
                self.base.last_bytes = body.len();
                Ok(found)
            }
            None => Err(self.base.protocol(
                step,
                "the JSON body holds no response to our request".to_string(),
            )),
        }
    }

    /// Answers server requests, skips notifications; returns the response to `id` if present.
    fn dispatch(&mut self, msg: Value, id: u64, step: &Step, wait: Wait) -> Option<Value> {
        let msgs = match msg {
            Value::Array(a) => a,
            m => vec![m],
        };
        let mut found = None;
        for m in msgs {
            match classify(&m) {
                Incoming::Request => {
                    let reply = answer_server_request(&m);
                    // Fire and forget: the reply is answered 202 and carries nothing we need.
                    let _ = self.post(&reply, step, wait);
                }
                Incoming::Response(rid) if session::id_matches(Some(rid), id) => found = Some(m),
                _ => {}
            }
        }
        found
    }

    fn close_session(&mut self, opts: &Options, started: Instant) {
        let Some(sid) = self.session_id.take() else {
            return;
        };
        let left = (started + opts.timeout).saturating_duration_since(Instant::now());
        let t = left.clamp(Duration::from_millis(200), Duration::from_secs(2));
        let mut h = self.base.headers.clone();
        h.insert(SESSION_HEADER, sid);
        if let Some(v) = &self.protocol_version {
            h.insert(VERSION_HEADER, v.clone());
        }
        // 200/204 closes it; 405 means the server does not let clients end sessions. Either way
        // there is nothing more to do.
        let _ = self
            .base
            .client
            .delete(self.base.url.clone())
            .headers(h)
            .timeout(t)
            .send();
    }
}

impl Channel for Streamable {
    fn server(&self) -> &str {
        &self.base.server
    }

    fn request(
        &mut self,
        id: u64,
        msg: &Value,
        step: &Step,
        wait: Wait,
    ) -> Result<Value, WireError> {
        let resp = self.post(msg, step, wait)?;
        if self.session_id.is_none() {
            if let Some(s) = resp.headers().get(SESSION_HEADER) {
                self.session_id = Some(s.clone());
            }
        }
        if Base::is_refusal(&resp) {
            return Err(self.base.refusal(resp, Transport::StreamableHttp, wait));
        }
        let status = resp.status();
        if !status.is_success() {
            let extra = if *step == Step::Initialize && matches!(status.as_u16(), 400 | 404 | 405) {
                self.try_sse = true;
                ""
            } else if status == StatusCode::NOT_FOUND && self.session_id.is_some() {
                " (the session has ended on the server)"
            } else {
                ""
            };
            return Err(self.base.http_err(resp, step, extra));
        }
        self.answer(resp, id, step, wait)
    }

    fn notify(&mut self, msg: &Value, step: &Step, wait: Wait) -> Result<(), WireError> {
        let resp = self.post(msg, step, wait)?;
        if Base::is_refusal(&resp) {
            return Err(self.base.refusal(resp, Transport::StreamableHttp, wait));
        }
        if !resp.status().is_success() {
            self.base.warnings.push(format!(
                "{step} was answered HTTP {} (expected 202); went on",
                resp.status().as_u16()
            ));
        }
        Ok(())
    }

    fn response_bytes(&self) -> usize {
        self.base.last_bytes
    }

    fn negotiated(&mut self, protocol_version: &str) {
        self.protocol_version = HeaderValue::from_str(protocol_version).ok();
    }
}

/// The old HTTP+SSE transport: one GET stream for everything the server says, POSTs to the
/// endpoint it names.
struct Legacy {
    base: Base,
    events: SseReader<BufReader<DeadlineReader<Response>>>,
    endpoint: Url,
}

impl Legacy {
    fn open(base: Base, opts: &Options, started: Instant) -> Result<Self, WireError> {
        let overall = started + opts.timeout;
        let wait = Wait::new(
            overall,
            opts.timeout,
            started + opts.startup_timeout,
            Limit::StartUp(opts.startup_timeout),
        );
        let step = Step::SseEndpoint;
        let mut h = base.headers.clone();
        h.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        let t = overall.saturating_duration_since(Instant::now());
        if t.is_zero() {
            return Err(base.timeout_err(&step, Limit::Overall(opts.timeout)));
        }
        // The stream lives as long as the whole introspection may.
        let resp = base
            .client
            .get(base.url.clone())
            .headers(h)
            .timeout(t)
            .send()
            .map_err(|e| base.send_err(e, &step, wait))?;
        if Base::is_refusal(&resp) {
            return Err(base.refusal(resp, Transport::Sse, wait));
        }
        if !resp.status().is_success() {
            return Err(base.http_err(resp, &step, ""));
        }
        let ct = content_type(&resp);
        if !ct.starts_with("text/event-stream") {
            return Err(base.protocol(&step, format!("GET answered {:?}, not an SSE stream", ct)));
        }
        let mut events = SseReader::new(
            BufReader::new(DeadlineReader {
                inner: resp,
                deadline: wait.deadline,
            }),
            base.cap,
        );
        loop {
            match events.next_event() {
                Ok(Some(ev)) if ev.event == "endpoint" => {
                    let endpoint = base.url.join(ev.data.trim()).map_err(|e| {
                        base.protocol(&step, format!("the endpoint event is not a URL: {e}"))
                    })?;
                    if !same_origin(&endpoint, &base.url) {
                        return Err(base.protocol(
                            &step,
                            format!(
                                "the endpoint event points to another origin ({}); not sending anything there",
                                redact_url(endpoint.as_str())
                            ),
                        ));
                    }
                    return Ok(Legacy {
                        base,
                        events,
                        endpoint,
                    });
                }
                Ok(Some(_)) => continue,
                Ok(None) => {
                    return Err(base.protocol(
                        &step,
                        "the SSE stream ended before an endpoint event".to_string(),
                    ))
                }
                Err(SseError::TooLarge) => return Err(base.too_large(&step)),
                Err(SseError::Io(e)) => {
                    return Err(base.read_err(e, &step, wait, "the SSE stream"))
                }
            }
        }
    }

    fn post(&self, msg: &Value, step: &Step, wait: Wait) -> Result<(), WireError> {
        let mut h = self.base.headers.clone();
        h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        let t = wait.remaining();
        if t.is_zero() {
            return Err(self.base.timeout_err(step, wait.limit));
        }
        let resp = self
            .base
            .client
            .post(self.endpoint.clone())
            .headers(h)
            .timeout(t)
            .body(serde_json::to_vec(msg).expect("a Value always serializes"))
            .send()
            .map_err(|e| self.base.send_err(e, step, wait))?;
        if Base::is_refusal(&resp) {
            return Err(self.base.refusal(resp, Transport::Sse, wait));
        }
        if !resp.status().is_success() {
            return Err(self
                .base
                .http_err(resp, step, " (POST to the SSE endpoint)"));
        }
        Ok(())
    }
}

impl Channel for Legacy {
    fn server(&self) -> &str {
        &self.base.server
    }

    fn request(
        &mut self,
        id: u64,
        msg: &Value,
        step: &Step,
        wait: Wait,
    ) -> Result<Value, WireError> {
        self.post(msg, step, wait)?;
        self.events.inner_mut().get_mut().deadline = wait.deadline;
        loop {
            let ev = match self.events.next_event() {
                Ok(Some(ev)) => ev,
                Ok(None) => {
                    return Err(self.base.protocol(
                        step,
                        "the SSE stream ended before the response came".to_string(),
                    ))
                }
                Err(SseError::TooLarge) => return Err(self.base.too_large(step)),
                Err(SseError::Io(e)) => {
                    return Err(self.base.read_err(e, step, wait, "the SSE stream"))
                }
            };
            if ev.event != "message" || ev.data.trim().is_empty() {
                continue;
            }
            let Ok(m) = serde_json::from_str::<Value>(&ev.data) else {
                self.base
                    .warnings
                    .push(format!("{step}: skipped an SSE event that is not JSON"));
                continue;
            };
            let msgs = match m {
                Value::Array(a) => a,
                m => vec![m],
            };
            for m in msgs {
                match classify(&m) {
                    Incoming::Request => {
                        let reply = answer_server_request(&m);
                        self.post(&reply, step, wait)?;
                    }
                    Incoming::Response(rid) if session::id_matches(Some(rid), id) => {
                        self.base.last_bytes = ev.data.len();
                        return Ok(m);
                    }
                    _ => {}
                }
            }
        }
    }

    fn notify(&mut self, msg: &Value, step: &Step, wait: Wait) -> Result<(), WireError> {
        self.post(msg, step, wait)
    }

    fn response_bytes(&self) -> usize {
        self.base.last_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_resource_metadata_from_a_challenge() {
        let h = r#"Bearer realm="mcp", error="invalid_token", resource_metadata="http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp""#;
        assert_eq!(
            auth_param(h, "resource_metadata").as_deref(),
            Some("http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp")
        );
        assert_eq!(
            auth_param("Bearer x_resource_metadata=a", "resource_metadata"),
            None
        );
        assert_eq!(
            auth_param("Bearer resource_metadata=tok, a=b", "resource_metadata").as_deref(),
            Some("tok")
        );
    }

    #[test]
    fn loopback_hosts() {
        for (u, want) in [
            ("http://127.0.0.1:1/", true),
            ("http://[::1]:1/", true),
            ("http://localhost/", true),
            ("http://example.invalid/", false),
        ] {
            assert_eq!(is_loopback(&Url::parse(u).unwrap()), want, "{u}");
        }
    }
}
