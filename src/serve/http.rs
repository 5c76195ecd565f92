//! The streamable HTTP transport: `POST /mcp` carries one JSON-RPC message and is answered with
//! one JSON body (never an event stream: nothing here outlives its request). `initialize`
//! opens a session whose id comes back in `Mcp-Session-Id` and must accompany the session's
//! later requests; `DELETE /mcp` ends it. Stateless 2026-07-28 requests need no session.
//! `GET /mcp` is 405: the server has nothing to push.
//!
//! Guards, for a server that any local web page could otherwise reach:
//! * unless `--allow-remote` was given, a request whose `Origin` or `Host` is not a loopback
//!   name (localhost, 127.0.0.0/8, ::1) is refused with 403 (DNS rebinding);
//! * bodies are read at most [`MAX_MESSAGE_BYTES`] (413 past it) within 30 seconds, headers
//!   within 10; at most [`MAX_CONNECTIONS`] connections are served at once and
//!   [`MAX_SESSIONS`] sessions kept (the oldest is dropped for a new one).

use super::protocol::{self, code, RpcError, Session, MAX_MESSAGE_BYTES};
use super::Service;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Bytes;
use hyper::body::Incoming;
use hyper::header::{HeaderValue, ALLOW, CONTENT_TYPE, HOST, ORIGIN};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::io::Read;
use std::net::{SocketAddr, TcpListener};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Connections served at once; more wait to be accepted.
pub const MAX_CONNECTIONS: usize = 64;
/// Requests worked on at once (tool calls are CPU work of about a millisecond); more wait
/// their turn.
pub const WORK_THREADS: usize = 1;
/// Sessions kept; a new one past this drops the oldest.
pub const MAX_SESSIONS: usize = 1024;
/// The path of the MCP endpoint.
pub const PATH: &str = "/mcp";
const SESSION_HEADER: &str = "mcp-session-id";
const VERSION_HEADER: &str = "mcp-protocol-version";
const BODY_TIMEOUT: Duration = Duration::from_secs(30);
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// A connection (with keep-alive, several requests) is closed after this long.
const CONNECTION_LIFETIME: Duration = Duration::from_secs(600);

/// The sessions opened by `initialize`, oldest first.
#[derive(Default)]
struct Sessions {
    by_id: HashMap<String, Session>,
    order: VecDeque<String>,
}

struct State {
    service: Service,
    sessions: Mutex<Sessions>,
    /// `--allow-remote`: Origin and Host are not checked.
    remote: bool,
}

type Reply = Response<Full<Bytes>>;

/// Serves MCP on `listener` until the process ends. `remote` turns off the loopback checks of
/// `Origin` and `Host` (for a bind on a non-loopback address, which the command line allows
/// only when asked explicitly).
pub fn serve(service: Service, listener: TcpListener, remote: bool) -> std::io::Result<()> {
    // One thread for the connections (they only move bytes) and one for the work:
    // every thread that has run an assessment keeps an allocator heap, so a pool the size of
    // tokio's default (512 blocking threads) would let memory grow with the load's peak.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .max_blocking_threads(WORK_THREADS)
        .enable_io()
        .enable_time()
        .build()?;
    let state = Arc::new(State {
        service,
        sessions: Mutex::new(Sessions::default()),
        remote,
    });
    rt.block_on(async move {
        listener.set_nonblocking(true)?;
        let listener = tokio::net::TcpListener::from_std(listener)?;
        let permits = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
        loop {
            let Ok(permit) = permits.clone().acquire_owned().await else {
                return Ok(());
            };
            let stream = match listener.accept().await {
                Ok((s, _)) => s,
                Err(e) => {
                    // Out of file descriptors and the like: wait, then go on serving.
                    eprintln!("mcprisk: serve: cannot accept a connection: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            };
            let state = state.clone();
            tokio::spawn(async move {
                let svc = hyper::service::service_fn(move |req| {
                    let state = state.clone();
                    async move { Ok::<_, Infallible>(handle(state, req).await) }
                });
                let conn = hyper::server::conn::http1::Builder::new()
                    .timer(TokioTimer::new())
                    .header_read_timeout(HEADER_TIMEOUT)
                    .max_buf_size(64 * 1024)
                    .serve_connection(TokioIo::new(stream), svc);
                let _ = tokio::time::timeout(CONNECTION_LIFETIME, conn).await;
                drop(permit);
            });
        }
    })
}

fn respond(status: StatusCode, body: Option<&Value>) -> Reply {
    let mut r = match body {
        Some(v) => {
            let mut r = Response::new(Full::new(Bytes::from(protocol::encode(v))));
            r.headers_mut()
                .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            r
        }
        None => Response::new(Full::new(Bytes::new())),
    };
    *r.status_mut() = status;
    r
}

/// An HTTP error with a JSON-RPC error body (`id: null`).
fn refuse(status: StatusCode, code: i64, message: impl Into<String>) -> Reply {
    respond(
        status,
        Some(&protocol::error_response(
            Value::Null,
            &RpcError::new(code, message),
        )),
    )
}

/// Whether a host name or address is loopback: localhost, 127.0.0.0/8, ::1.
fn loopback_host(host: &str) -> bool {
    let h = host.trim_start_matches('[').trim_end_matches(']');
    h.eq_ignore_ascii_case("localhost")
        || h.parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// The host of a `Host` header value (`127.0.0.1:7410`, `[::1]:7410`, `localhost`).
fn host_of_header(v: &str) -> &str {
    if let Some(rest) = v.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    v.rsplit_once(':').map_or(v, |(h, _)| h)
}

/// 403 when the request may come from a web page of another site.
fn check_origin(req: &Request<Incoming>) -> Option<Reply> {
    if let Some(origin) = req.headers().get(ORIGIN) {
        let ok = origin
            .to_str()
            .ok()
            .and_then(|o| url::Url::parse(o).ok())
            .and_then(|u| u.host_str().map(loopback_host))
            .unwrap_or(false);
        if !ok {
            return Some(refuse(
                StatusCode::FORBIDDEN,
                code::INVALID_REQUEST,
                "Origin is not a loopback address; this server answers local clients only (serve --allow-remote lifts this)",
            ));
        }
    }
    let host_ok = req
        .headers()
        .get(HOST)
        .and_then(|h| h.to_str().ok())
        .is_none_or(|h| loopback_host(host_of_header(h)));
    if !host_ok {
        return Some(refuse(
            StatusCode::FORBIDDEN,
            code::INVALID_REQUEST,
            "Host is not a loopback name; this server answers local clients only (serve --allow-remote lifts this)",
        ));
    }
    None
}

async fn handle(state: Arc<State>, req: Request<Incoming>) -> Reply {
    if req.uri().path() != PATH {
        return refuse(
            StatusCode::NOT_FOUND,
            code::INVALID_REQUEST,
            format!("not found: the MCP endpoint is {PATH}"),
        );
    }
    if !state.remote {
        if let Some(r) = check_origin(&req) {
            return r;
        }
    }
    let session_id = req
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(String::from);
    match *req.method() {
        Method::POST => post(state, req, session_id).await,
        Method::DELETE => match session_id {
            Some(id) => {
                let mut sessions = lock(&state.sessions);
                if sessions.by_id.remove(&id).is_some() {
                    sessions.order.retain(|s| s != &id);
                    respond(StatusCode::OK, None)
                } else {
                    unknown_session()
                }
            }
            None => refuse(
                StatusCode::BAD_REQUEST,
                code::INVALID_REQUEST,
                "DELETE ends a session: send its Mcp-Session-Id",
            ),
        },
        _ => {
            let mut r = refuse(
                StatusCode::METHOD_NOT_ALLOWED,
                code::INVALID_REQUEST,
                "this endpoint takes POST (messages) and DELETE (end a session); it opens no event stream",
            );
            r.headers_mut()
                .insert(ALLOW, HeaderValue::from_static("POST, DELETE"));
            r
        }
    }
}

fn lock(m: &Mutex<Sessions>) -> std::sync::MutexGuard<'_, Sessions> {
    // A panic while holding the lock cannot leave the map half-changed in a way that matters.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn unknown_session() -> Reply {
    refuse(
        StatusCode::NOT_FOUND,
        code::INVALID_REQUEST,
        "unknown or ended session: send initialize again without Mcp-Session-Id",
    )
}

async fn post(state: Arc<State>, req: Request<Incoming>, session_id: Option<String>) -> Reply {
    if let Some(v) = req.headers().get(VERSION_HEADER) {
        let known = v
            .to_str()
            .is_ok_and(|v| protocol::supported_versions().contains(&v));
        if !known {
            return refuse(
                StatusCode::BAD_REQUEST,
                code::INVALID_REQUEST,
                format!(
                    "unsupported MCP-Protocol-Version; supported: {}",
                    protocol::supported_versions().join(", ")
                ),
            );
        }
    }
    let json_type = req
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';')
                .next()
                .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"))
        });
    if !json_type {
        return refuse(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            code::INVALID_REQUEST,
            "send the message as Content-Type: application/json",
        );
    }
    let declared = req
        .headers()
        .get(hyper::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<usize>().ok());
    if let Some(n) = declared.filter(|n| *n > MAX_MESSAGE_BYTES) {
        return respond(StatusCode::PAYLOAD_TOO_LARGE, Some(&protocol::too_large(n)));
    }
    let body = Limited::new(req.into_body(), MAX_MESSAGE_BYTES);
    let bytes = match tokio::time::timeout(BODY_TIMEOUT, body.collect()).await {
        Ok(Ok(c)) => c.to_bytes(),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => {
            return respond(
                StatusCode::PAYLOAD_TOO_LARGE,
                Some(&protocol::too_large(MAX_MESSAGE_BYTES + 1)),
            )
        }
        Ok(Err(_)) => {
            return refuse(
                StatusCode::BAD_REQUEST,
                code::INVALID_REQUEST,
                "the request body could not be read",
            )
        }
        Err(_) => {
            return refuse(
                StatusCode::REQUEST_TIMEOUT,
                code::INVALID_REQUEST,
                format!(
                    "the request body did not arrive within {} seconds",
                    BODY_TIMEOUT.as_secs()
                ),
            )
        }
    };
    // Parsed once here; what does not parse goes to handle_bytes for its error message.
    let parsed = serde_json::from_slice::<Value>(&bytes).ok();
    let is_initialize = parsed
        .as_ref()
        .is_some_and(|v| v.get("method").and_then(Value::as_str) == Some("initialize"));
    let mut session = match (&session_id, is_initialize) {
        (_, true) => Session::default(),
        (Some(id), false) => match lock(&state.sessions).by_id.get(id) {
            Some(s) => s.clone(),
            None => return unknown_session(),
        },
        (None, false) => Session::default(),
    };
    // Tool calls are CPU work of a few milliseconds (an assessment of a large list longer):
    // off the threads that serve connections.
    let work = state.clone();
    let outcome = tokio::task::spawn_blocking(move || {
        let reply = match parsed {
            Some(msg) => protocol::handle(&work.service, &mut session, msg),
            None => protocol::handle_bytes(&work.service, &mut session, &bytes),
        };
        (reply, session)
    })
    .await;
    let Ok((reply, session)) = outcome else {
        return refuse(
            StatusCode::INTERNAL_SERVER_ERROR,
            code::INVALID_REQUEST,
            "the request could not be handled",
        );
    };
    let Some(reply) = reply else {
        // A notification or a response: accepted, nothing to say.
        return respond(StatusCode::ACCEPTED, None);
    };
    let status = if reply.get("id").is_some_and(Value::is_null) {
        StatusCode::BAD_REQUEST
    } else {
        StatusCode::OK
    };
    let mut response = respond(status, Some(&reply));
    if is_initialize && reply.get("result").is_some() {
        let id = match new_session_id() {
            Ok(id) => id,
            Err(e) => {
                return refuse(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    code::INVALID_REQUEST,
                    format!("cannot make a session id: {e}"),
                )
            }
        };
        let mut sessions = lock(&state.sessions);
        if sessions.by_id.len() >= MAX_SESSIONS {
            if let Some(old) = sessions.order.pop_front() {
                sessions.by_id.remove(&old);
            }
        }
        sessions.by_id.insert(id.clone(), session);
        sessions.order.push_back(id.clone());
        if let Ok(v) = HeaderValue::from_str(&id) {
            response.headers_mut().insert(SESSION_HEADER, v);
        }
    } else if let Some(id) = session_id.filter(|_| !is_initialize) {
        if let Some(s) = lock(&state.sessions).by_id.get_mut(&id) {
            *s = session;
        }
    }
    response
}

/// 128 random bits from the kernel, as hex.
fn new_session_id() -> std::io::Result<String> {
    let mut b = [0u8; 16];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut b)?;
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}

/// Where `--http` binds: `HOST:PORT` (an IP address, or `localhost` for 127.0.0.1).
pub fn parse_addr(s: &str) -> Result<SocketAddr, String> {
    let s = s.trim();
    let parsed = match s.strip_prefix("localhost:") {
        Some(port) => format!("127.0.0.1:{port}").parse(),
        None => s.parse(),
    };
    parsed.map_err(|_| {
        format!(
            "{} is not HOST:PORT with an IP address (e.g. 127.0.0.1:7410, [::1]:7410, localhost:7410)",
            crate::output::sanitize::one_line(s, 80)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_names() {
        for h in [
            "localhost",
            "127.0.0.1",
            "127.3.4.5",
            "[::1]",
            "::1",
            "LOCALHOST",
        ] {
            assert!(loopback_host(h), "{h}");
        }
        for h in [
            "example.com",
            "10.0.0.1",
            "0.0.0.0",
            "localhost.evil.example",
            "[::]",
        ] {
            assert!(!loopback_host(h), "{h}");
        }
        assert_eq!(host_of_header("127.0.0.1:7410"), "127.0.0.1");
        assert_eq!(host_of_header("[::1]:7410"), "::1");
        assert_eq!(host_of_header("localhost"), "localhost");
    }

    #[test]
    fn addresses() {
        assert_eq!(
            parse_addr("localhost:7410").unwrap(),
            "127.0.0.1:7410".parse().unwrap()
        );
        assert!(parse_addr("[::1]:0").is_ok());
        assert!(parse_addr("example.com:80").is_err());
        assert!(parse_addr("127.0.0.1").is_err());
    }
}
