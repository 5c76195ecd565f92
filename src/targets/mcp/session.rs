//! The transport-independent part: handshake (initialize or server/discover), `tools/list`
//! pagination, then `prompts/list`, `resources/list` and `resources/templates/list` where the
//! capabilities announce them (a failure there is an offer error, not the end), over any
//! [`Channel`].

use std::collections::HashSet;
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};

use super::{
    Limit, OfferError, Options, Step, WireError, LATEST_PROTOCOL_VERSION,
    STATELESS_PROTOCOL_VERSION,
};
use crate::model::offers::OfferKind;
use crate::targets::offers::RawOffers;

/// When a wait must end, and which limit that is (for the error message).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Wait {
    pub deadline: Instant,
    pub limit: Limit,
}

impl Wait {
    /// The earlier of `inner_deadline` and the overall deadline.
    pub(crate) fn new(overall: Instant, overall_d: Duration, inner: Instant, limit: Limit) -> Self {
        if inner < overall {
            Wait {
                deadline: inner,
                limit,
            }
        } else {
            Wait {
                deadline: overall,
                limit: Limit::Overall(overall_d),
            }
        }
    }

    pub(crate) fn remaining(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }
}

/// One way of exchanging JSON-RPC messages with a server.
pub(crate) trait Channel {
    fn server(&self) -> &str;
    /// Sends the request `msg` (whose id is `id`) and returns the server's response message
    /// (an object with `result` or `error`). Requests the server makes meanwhile (ping) are
    /// answered, notifications ignored.
    fn request(
        &mut self,
        id: u64,
        msg: &Value,
        step: &Step,
        wait: Wait,
    ) -> Result<Value, WireError>;
    fn notify(&mut self, msg: &Value, step: &Step, wait: Wait) -> Result<(), WireError>;
    /// The size in bytes of the message that carried the last response `request` returned.
    fn response_bytes(&self) -> usize;
    /// Called once the protocol version is known (HTTP sends it as a header from then on).
    fn negotiated(&mut self, _protocol_version: &str) {}
}

pub(crate) struct Outcome {
    pub tools: Vec<Value>,
    pub server_info: Option<Value>,
    pub protocol_version: Option<String>,
    pub offers: RawOffers,
    pub offer_errors: Vec<OfferError>,
    pub warnings: Vec<String>,
    /// Why the tool list is incomplete, when a limit that makes it an error stopped it.
    pub incomplete: Option<String>,
}

/// True when `id` (as the server echoed it) is our numeric request id.
pub(crate) fn id_matches(id: Option<&Value>, want: u64) -> bool {
    match id {
        Some(Value::Number(n)) => n.as_u64() == Some(want),
        Some(Value::String(s)) => s == &want.to_string(),
        _ => false,
    }
}

/// What an incoming message is.
pub(crate) enum Incoming<'a> {
    /// A request from the server; answer with [`answer_server_request`].
    Request,
    Notification,
    /// A response to our request `id`.
    Response(&'a Value),
    /// Not JSON-RPC at all (e.g. a JSON number on a line).
    Other,
}

pub(crate) fn classify(msg: &Value) -> Incoming<'_> {
    let Some(obj) = msg.as_object() else {
        return Incoming::Other;
    };
    if obj.contains_key("method") {
        if obj.contains_key("id") {
            Incoming::Request
        } else {
            Incoming::Notification
        }
    } else if obj.contains_key("result") || obj.contains_key("error") {
        match obj.get("id") {
            Some(id) => Incoming::Response(id),
            None => Incoming::Other,
        }
    } else {
        Incoming::Other
    }
}

/// The reply to a request the server made: `ping` gets an empty result, anything else "method not
/// found" (we declare no client capabilities, so a server has no business asking for more).
pub(crate) fn answer_server_request(msg: &Value) -> Value {
    let id = msg.get("id").cloned().unwrap_or(Value::Null);
    if msg.get("method").and_then(Value::as_str) == Some("ping") {
        json!({"jsonrpc": "2.0", "id": id, "result": {}})
    } else {
        json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}})
    }
}

fn rpc(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// The `result` of a response, or the JSON-RPC error as a [`WireError::Rpc`].
fn result_of(server: &str, step: &Step, resp: Value) -> Result<Value, WireError> {
    let mut obj = match resp {
        Value::Object(o) => o,
        _ => unreachable!("classify() only passes objects"),
    };
    if let Some(err) = obj.remove("error") {
        return Err(WireError::Rpc {
            server: server.to_string(),
            step: step.clone(),
            code: err.get("code").and_then(Value::as_i64).unwrap_or(0),
            message: err
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("(no message)")
                .chars()
                .take(500)
                .collect(),
        });
    }
    Ok(obj.remove("result").unwrap_or(Value::Null))
}

fn protocol_err(server: &str, step: &Step, detail: String) -> WireError {
    WireError::Protocol {
        server: server.to_string(),
        step: step.clone(),
        detail,
        stderr: Vec::new(),
    }
}

fn stateless_meta(opts: &Options, version: &str) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientInfo": {"name": opts.client_name, "version": opts.client_version},
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

/// Handshake and list every tool. `started` is when the server was launched / first contacted.
pub(crate) fn run<C: Channel>(
    ch: &mut C,
    opts: &Options,
    started: Instant,
) -> Result<Outcome, WireError> {
    let overall = started + opts.timeout;
    let server = ch.server().to_string();
    let mut warnings = Vec::new();
    let mut next_id = 1u64;

    // initialize
    let startup = Wait::new(
        overall,
        opts.timeout,
        started + opts.startup_timeout,
        Limit::StartUp(opts.startup_timeout),
    );
    let init = rpc(
        next_id,
        "initialize",
        json!({
            "protocolVersion": LATEST_PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": opts.client_name, "version": opts.client_version},
        }),
    );
    let resp = ch.request(next_id, &init, &Step::Initialize, startup)?;
    next_id += 1;
    let mut stateless = false;
    let (server_info, protocol_version, capabilities, instructions) = match result_of(
        &server,
        &Step::Initialize,
        resp,
    ) {
        Ok(result) => {
            let pv = match result.get("protocolVersion") {
                Some(Value::String(s)) => Some(s.clone()),
                _ => {
                    warnings.push(
                        "initialize result has no protocolVersion string; went on anyway"
                            .to_string(),
                    );
                    None
                }
            };
            (
                result.get("serverInfo").cloned(),
                pv,
                result.get("capabilities").cloned(),
                result.get("instructions").cloned(),
            )
        }
        Err(WireError::Rpc { code: -32601, .. }) => {
            // No initialize: the stateless 2026-07-28 protocol.
            stateless = true;
            let discover = rpc(
                next_id,
                "server/discover",
                json!({"_meta": stateless_meta(opts, STATELESS_PROTOCOL_VERSION)}),
            );
            let resp = ch.request(next_id, &discover, &Step::Discover, startup)?;
            next_id += 1;
            let result = result_of(&server, &Step::Discover, resp)?;
            let versions: Vec<String> = result
                .get("supportedVersions")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|v| v.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default();
            let chosen = if versions.iter().any(|v| v == STATELESS_PROTOCOL_VERSION) {
                STATELESS_PROTOCOL_VERSION.to_string()
            } else if let Some(newest) = versions.iter().max() {
                warnings.push(format!(
                        "server/discover lists {versions:?}, not {STATELESS_PROTOCOL_VERSION}; used {newest}"
                    ));
                newest.clone()
            } else {
                warnings.push(format!(
                    "server/discover lists no supportedVersions; used {STATELESS_PROTOCOL_VERSION}"
                ));
                STATELESS_PROTOCOL_VERSION.to_string()
            };
            (
                result.get("serverInfo").cloned(),
                Some(chosen),
                result.get("capabilities").cloned(),
                result.get("instructions").cloned(),
            )
        }
        Err(e) => return Err(e),
    };
    let version_for_meta = protocol_version
        .clone()
        .unwrap_or_else(|| LATEST_PROTOCOL_VERSION.to_string());
    if let Some(pv) = &protocol_version {
        ch.negotiated(pv);
    }
    if !stateless {
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let wait = Wait::new(
            overall,
            opts.timeout,
            Instant::now() + opts.request_timeout,
            Limit::Request(opts.request_timeout),
        );
        ch.notify(&note, &Step::Initialized, wait)?;
    }
    let declares_tools = capabilities.as_ref().and_then(|c| c.get("tools")).is_some();
    let mut pager = Pager {
        server: &server,
        opts,
        overall,
        stateless,
        meta_version: &version_for_meta,
        next_id,
    };

    // tools/list, page by page
    let mut tools = Vec::new();
    let incomplete = match pager.list(ch, ListKind::Tools, &mut tools) {
        Ok(Ended::Done) => None,
        Ok(Ended::Stopped(why)) => {
            warnings.push(why);
            None
        }
        Ok(Ended::TooLarge(why)) => Some(why),
        Err(WireError::Rpc {
            code: -32601, step, ..
        }) if !declares_tools && step == (Step::ToolsList { page: 1 }) => {
            warnings.push(
                "server declares no tools capability and does not implement tools/list".to_string(),
            );
            None
        }
        Err(e) => return Err(e),
    };
    if !declares_tools && !tools.is_empty() {
        warnings.push("server lists tools without declaring the tools capability".to_string());
    }

    // What else it offers, where its capabilities say so. A failure here is reported with the
    // list it stopped, never the end of the scan: the tools are already in hand.
    let mut offers = RawOffers {
        instructions: instructions.filter(|v| !v.is_null()),
        ..RawOffers::default()
    };
    let mut offer_errors = Vec::new();
    let declares = |key: &str| capabilities.as_ref().and_then(|c| c.get(key)).is_some();
    for (kind, announced) in [
        (OfferKind::Prompt, declares("prompts")),
        (OfferKind::Resource, declares("resources")),
        (OfferKind::ResourceTemplate, declares("resources")),
    ] {
        if !announced {
            continue;
        }
        let into = match kind {
            OfferKind::Prompt => &mut offers.prompts,
            OfferKind::Resource => &mut offers.resources,
            _ => &mut offers.resource_templates,
        };
        match pager.list(ch, ListKind::Offer(kind), into) {
            Ok(Ended::Done) => {}
            Ok(Ended::Stopped(why)) => warnings.push(why),
            Ok(Ended::TooLarge(why)) => offer_errors.push(OfferError { kind, message: why }),
            // A server that announces resources but has no templates may not know the method.
            Err(WireError::Rpc { code: -32601, .. })
                if kind == OfferKind::ResourceTemplate && into.is_empty() => {}
            Err(e) => offer_errors.push(OfferError {
                kind,
                message: e.to_string(),
            }),
        }
    }
    Ok(Outcome {
        tools,
        server_info,
        protocol_version,
        offers,
        offer_errors,
        warnings,
        incomplete,
    })
}

/// Which list a [`Pager`] walks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ListKind {
    Tools,
    Offer(OfferKind),
}

impl ListKind {
    fn method(self) -> &'static str {
        match self {
            ListKind::Tools => "tools/list",
            ListKind::Offer(k) => k.list_method().unwrap_or("tools/list"),
        }
    }

    /// The key of the result that holds the page's items.
    fn key(self) -> &'static str {
        match self {
            ListKind::Tools => "tools",
            ListKind::Offer(OfferKind::Prompt) => "prompts",
            ListKind::Offer(OfferKind::ResourceTemplate) => "resourceTemplates",
            ListKind::Offer(_) => "resources",
        }
    }

    /// The items' name in messages ("tool", "prompt", ...).
    fn noun(self) -> &'static str {
        match self {
            ListKind::Tools => "tool",
            ListKind::Offer(OfferKind::Prompt) => "prompt",
            ListKind::Offer(OfferKind::ResourceTemplate) => "resource template",
            ListKind::Offer(_) => "resource",
        }
    }

    fn step(self, page: usize) -> Step {
        match self {
            ListKind::Tools => Step::ToolsList { page },
            ListKind::Offer(_) => Step::OfferList {
                method: self.method(),
                page,
            },
        }
    }
}

/// How a list ended when it did not fail.
enum Ended {
    /// The last page said so.
    Done,
    /// A pagination guard stopped it: the items so far are kept, with this warning.
    Stopped(String),
    /// The pages passed [`Options::max_list_bytes`]: an error to report, items so far kept.
    TooLarge(String),
}

/// Walks paginated `*/list` methods, every request bounded by the per-request limit and the
/// overall deadline.
struct Pager<'a> {
    server: &'a str,
    opts: &'a Options,
    overall: Instant,
    stateless: bool,
    meta_version: &'a str,
    next_id: u64,
}

impl Pager<'_> {
    /// Appends every item of every page of `what` to `items`.
    fn list<C: Channel>(
        &mut self,
        ch: &mut C,
        what: ListKind,
        items: &mut Vec<Value>,
    ) -> Result<Ended, WireError> {
        let (server, opts) = (self.server, self.opts);
        let (method, key, noun) = (what.method(), what.key(), what.noun());
        let mut list_bytes = 0usize;
        let mut seen = HashSet::new();
        let mut cursor: Option<String> = None;
        let mut page = 1usize;
        loop {
            let step = what.step(page);
            let mut params = Map::new();
            if let Some(c) = &cursor {
                params.insert("cursor".into(), Value::String(c.clone()));
            }
            if self.stateless {
                params.insert("_meta".into(), stateless_meta(opts, self.meta_version));
            }
            let id = self.next_id;
            self.next_id += 1;
            let msg = rpc(id, method, Value::Object(params));
            let wait = Wait::new(
                self.overall,
                opts.timeout,
                Instant::now() + opts.request_timeout,
                Limit::Request(opts.request_timeout),
            );
            let resp = ch.request(id, &msg, &step, wait)?;
            list_bytes = list_bytes.saturating_add(ch.response_bytes());
            if list_bytes > opts.max_list_bytes {
                return Ok(Ended::TooLarge(format!(
                    "{noun} list incomplete: page {page} would take the whole list past the {} MiB limit on a {noun} list, so listing stopped with the {} {noun}s of the first {} page(s)",
                    opts.max_list_bytes >> 20,
                    items.len(),
                    page - 1
                )));
            }
            let mut result = match result_of(server, &step, resp)? {
                Value::Object(o) => o,
                other => {
                    return Err(protocol_err(
                        server,
                        &step,
                        format!("result is {}, not an object", kind(&other)),
                    ))
                }
            };
            match result.remove(key) {
                Some(Value::Array(page_items)) => items.extend(page_items),
                Some(other) => {
                    return Err(protocol_err(
                        server,
                        &step,
                        format!("`{key}` is {}, not an array", kind(&other)),
                    ))
                }
                None => {
                    return Err(protocol_err(
                        server,
                        &step,
                        format!("result has no `{key}` array"),
                    ))
                }
            }
            match result.remove("nextCursor") {
                None | Some(Value::Null) => return Ok(Ended::Done),
                Some(Value::String(c)) => {
                    if !seen.insert(c.clone()) {
                        return Ok(Ended::Stopped(format!(
                            "{noun} list incomplete: page {page} repeated an earlier nextCursor, so listing stopped with the {} {noun}s gathered so far",
                            items.len()
                        )));
                    }
                    if page >= opts.max_pages {
                        return Ok(Ended::Stopped(format!(
                            "{noun} list incomplete: stopped after {page} pages ({} {noun}s) although the server offered more",
                            items.len()
                        )));
                    }
                    cursor = Some(c);
                    page += 1;
                }
                Some(other) => {
                    return Ok(Ended::Stopped(format!(
                        "{method} page {page} has a nextCursor that is {}, not a string; took it as the last page",
                        kind(&other)
                    )))
                }
            }
        }
    }
}

pub(crate) fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
