//! The transport-independent part: handshake (initialize or server/discover) and `tools/list`
//! pagination, over any [`Channel`].

use std::collections::HashSet;
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};

use super::{Limit, Options, Step, WireError, LATEST_PROTOCOL_VERSION, STATELESS_PROTOCOL_VERSION};

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
    let (server_info, protocol_version, capabilities) = match result_of(
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

    // tools/list, page by page
    let mut tools = Vec::new();
    let mut incomplete = None;
    let mut list_bytes = 0usize;
    let mut seen = HashSet::new();
    let mut cursor: Option<String> = None;
    let mut page = 1usize;
    loop {
        let step = Step::ToolsList { page };
        let mut params = Map::new();
        if let Some(c) = &cursor {
            params.insert("cursor".into(), Value::String(c.clone()));
        }
        if stateless {
            params.insert("_meta".into(), stateless_meta(opts, &version_for_meta));
        }
        let msg = rpc(next_id, "tools/list", Value::Object(params));
        let wait = Wait::new(
            overall,
            opts.timeout,
            Instant::now() + opts.request_timeout,
            Limit::Request(opts.request_timeout),
        );
        let resp = ch.request(next_id, &msg, &step, wait)?;
        next_id += 1;
        list_bytes = list_bytes.saturating_add(ch.response_bytes());
        if list_bytes > opts.max_list_bytes {
            incomplete = Some(format!(
                "tool list incomplete: page {page} would take the whole list past the {} MiB limit on a tool list, so listing stopped with the {} tools of the first {} page(s)",
                opts.max_list_bytes >> 20,
                tools.len(),
                page - 1
            ));
            break;
        }
        let result = match result_of(&server, &step, resp) {
            Ok(r) => r,
            Err(WireError::Rpc { code: -32601, .. }) if page == 1 && !declares_tools => {
                warnings.push(
                    "server declares no tools capability and does not implement tools/list"
                        .to_string(),
                );
                break;
            }
            Err(e) => return Err(e),
        };
        let mut result = match result {
            Value::Object(o) => o,
            other => {
                return Err(protocol_err(
                    &server,
                    &step,
                    format!("result is {}, not an object", kind(&other)),
                ))
            }
        };
        match result.remove("tools") {
            Some(Value::Array(page_tools)) => tools.extend(page_tools),
            Some(other) => {
                return Err(protocol_err(
                    &server,
                    &step,
                    format!("`tools` is {}, not an array", kind(&other)),
                ))
            }
            None => {
                return Err(protocol_err(
                    &server,
                    &step,
                    "result has no `tools` array".to_string(),
                ))
            }
        }
        match result.remove("nextCursor") {
            None | Some(Value::Null) => break,
            Some(Value::String(c)) => {
                if !seen.insert(c.clone()) {
                    warnings.push(format!(
                        "tool list incomplete: page {page} repeated an earlier nextCursor, so listing stopped with the {} tools gathered so far",
                        tools.len()
                    ));
                    break;
                }
                if page >= opts.max_pages {
                    warnings.push(format!(
                        "tool list incomplete: stopped after {page} pages ({} tools) although the server offered more",
                        tools.len()
                    ));
                    break;
                }
                cursor = Some(c);
                page += 1;
            }
            Some(other) => {
                warnings.push(format!(
                    "page {page} has a nextCursor that is {}, not a string; took it as the last page",
                    kind(&other)
                ));
                break;
            }
        }
    }
    if !declares_tools && !tools.is_empty() {
        warnings.push("server lists tools without declaring the tools capability".to_string());
    }
    Ok(Outcome {
        tools,
        server_info,
        protocol_version,
        warnings,
        incomplete,
    })
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
