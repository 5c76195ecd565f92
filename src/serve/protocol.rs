//! JSON-RPC 2.0 and the MCP lifecycle, the same for every transport: one message in, at most one
//! message out.
//!
//! * Versions: `initialize` negotiates among [`LEGACY_VERSIONS`] (a version we do not know gets
//!   the newest of them, and the client decides whether to go on). A request whose
//!   `params._meta` names `io.modelcontextprotocol/protocolVersion` [`STATELESS_VERSION`] is
//!   served without a handshake (the stateless 2026-07-28 revision; `server/discover` says what
//!   we support), and its result carries `resultType: "complete"`.
//! * Errors: a line that is not JSON is a parse error (-32700); a message that is not a
//!   JSON-RPC request, a batch, or one larger than [`MAX_MESSAGE_BYTES`] is an invalid request
//!   (-32600); an unknown method -32601; bad params -32602; a request before `initialize`
//!   -32600 saying so; a stateless request naming a version we do not speak -32022 with the
//!   versions we do. Errors a request cannot be matched to carry `id: null`.
//! * Notifications (no `id`) and responses are never answered.
//! * Everything sent is compact JSON with hidden characters written as `\uXXXX` escapes
//!   ([`encode`]), so no text from a catalog record or a client's tool list reaches a log or a
//!   terminal raw.

use super::{resources, schema, tools, Service};
use serde_json::{json, Map, Value};

/// The protocol versions `initialize` accepts, oldest first.
pub const LEGACY_VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
/// The stateless revision, spoken per request without `initialize`.
pub const STATELESS_VERSION: &str = crate::targets::mcp::STATELESS_PROTOCOL_VERSION;
/// The largest message accepted (a stdio line or an HTTP body): 8 MiB, room for a tool list of
/// several thousand tools in `assess_tools`. A larger one is refused without being parsed.
pub const MAX_MESSAGE_BYTES: usize = 8 << 20;

/// The `_meta` key that carries a stateless request's protocol version.
const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

/// JSON-RPC error codes.
pub mod code {
    /// Not JSON.
    pub const PARSE_ERROR: i64 = -32700;
    /// Not a JSON-RPC request, too large, or sent before `initialize`.
    pub const INVALID_REQUEST: i64 = -32600;
    /// A method the server does not have.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// Params missing, ill-typed or naming something that does not exist.
    pub const INVALID_PARAMS: i64 = -32602;
    /// A resource URI that names nothing.
    pub const RESOURCE_NOT_FOUND: i64 = -32002;
    /// A stateless request names a protocol version the server does not speak.
    pub const UNSUPPORTED_VERSION: i64 = -32022;
}

/// A JSON-RPC error to send back.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    /// One of [`code`].
    pub code: i64,
    /// What was wrong, for a person.
    pub message: String,
    /// Machine-readable details, when there are any.
    pub data: Option<Value>,
}

impl RpcError {
    /// An error without data.
    pub fn new(code: i64, message: impl Into<String>) -> RpcError {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// Invalid params (-32602).
    pub fn params(message: impl Into<String>) -> RpcError {
        RpcError::new(code::INVALID_PARAMS, message)
    }
}

/// What a connection (stdio) or session (HTTP) has negotiated.
#[derive(Debug, Clone, Default)]
pub struct Session {
    /// The version `initialize` settled on; `None` before it.
    pub version: Option<String>,
}

/// Every version this server speaks, oldest first.
pub fn supported_versions() -> Vec<&'static str> {
    let mut v = LEGACY_VERSIONS.to_vec();
    v.push(STATELESS_VERSION);
    v
}

/// The methods served (others are "method not found").
const METHODS: [&str; 9] = [
    "initialize",
    "ping",
    "server/discover",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "notifications/initialized",
];

/// The results 2026-07-28 lets a client cache (they carry `ttlMs` and `cacheScope`).
const CACHEABLE: [&str; 4] = [
    "tools/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
];
/// How long a client may cache a list or a resource: an hour. What is served changes only
/// when the server is restarted with another catalog, and holds nothing user-specific
/// (`cacheScope: public`).
const CACHE_TTL_MS: u64 = 3_600_000;

/// A message as sent: compact JSON, hidden characters escaped.
pub fn encode(msg: &Value) -> String {
    crate::output::sanitize::json_inline(msg)
}

/// An error response.
pub fn error_response(id: Value, err: &RpcError) -> Value {
    let mut e = json!({"code": err.code, "message": err.message});
    if let Some(d) = &err.data {
        e["data"] = d.clone();
    }
    json!({"jsonrpc": "2.0", "id": id, "error": e})
}

/// The answer to a message larger than [`MAX_MESSAGE_BYTES`] (`len` bytes, or at least that).
pub fn too_large(len: usize) -> Value {
    error_response(
        Value::Null,
        &RpcError::new(
            code::INVALID_REQUEST,
            format!(
                "message of {len} bytes or more is larger than the limit of {} MiB; it was not read",
                MAX_MESSAGE_BYTES >> 20
            ),
        ),
    )
}

/// Handles one message as it arrived (a stdio line, an HTTP body): the response to send, or
/// `None` for notifications and responses.
pub fn handle_bytes(service: &Service, session: &mut Session, bytes: &[u8]) -> Option<Value> {
    if bytes.len() > MAX_MESSAGE_BYTES {
        return Some(too_large(bytes.len()));
    }
    let text = match std::str::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            return Some(error_response(
                Value::Null,
                &RpcError::new(
                    code::PARSE_ERROR,
                    format!("not UTF-8 at byte {}", e.valid_up_to()),
                ),
            ))
        }
    };
    match serde_json::from_str::<Value>(text) {
        Ok(msg) => handle(service, session, msg),
        Err(e) => Some(error_response(
            Value::Null,
            &RpcError::new(
                code::PARSE_ERROR,
                format!(
                    "not JSON (line {}, column {}): one JSON-RPC message per line is expected",
                    e.line(),
                    e.column()
                ),
            ),
        )),
    }
}

/// Handles one parsed message.
pub fn handle(service: &Service, session: &mut Session, msg: Value) -> Option<Value> {
    let mut obj = match msg {
        Value::Object(o) => o,
        Value::Array(_) => {
            return Some(error_response(
                Value::Null,
                &RpcError::new(
                    code::INVALID_REQUEST,
                    "JSON-RPC batches are not accepted; send one message at a time",
                ),
            ))
        }
        _ => {
            return Some(error_response(
                Value::Null,
                &RpcError::new(code::INVALID_REQUEST, "a JSON-RPC message is a JSON object"),
            ))
        }
    };
    let id = obj.remove("id");
    let Some(method) = obj.get("method") else {
        // A response (we send no requests) or something without a method.
        return match (&id, obj.contains_key("result") || obj.contains_key("error")) {
            (_, true) | (None, false) => None,
            (Some(id), false) => Some(error_response(
                valid_id(id).unwrap_or(Value::Null),
                &RpcError::new(code::INVALID_REQUEST, "the request has no method"),
            )),
        };
    };
    let reply_id = match &id {
        None => None,
        Some(i) => match valid_id(i) {
            Some(v) => Some(v),
            None => {
                return Some(error_response(
                    Value::Null,
                    &RpcError::new(
                        code::INVALID_REQUEST,
                        "the id must be a string or an integer",
                    ),
                ))
            }
        },
    };
    // Notifications are never answered, not even with an error.
    let id = reply_id?;
    let result = check_envelope(&obj, method)
        .map(str::to_string)
        .and_then(|method| {
            // Taken, not copied: an assess_tools call may carry megabytes of tools.
            let params = match obj.remove("params") {
                None | Some(Value::Null) => Map::new(),
                Some(Value::Object(p)) => p,
                Some(_) => return Err(RpcError::params("params must be an object")),
            };
            dispatch(service, session, &method, &params)
        });
    Some(match result {
        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        Err(err) => error_response(id, &err),
    })
}

/// The id to echo: a string or an integer (MCP forbids null; a fraction is no id either).
fn valid_id(id: &Value) -> Option<Value> {
    match id {
        Value::String(_) => Some(id.clone()),
        Value::Number(n) if n.is_i64() || n.is_u64() => Some(id.clone()),
        _ => None,
    }
}

/// `jsonrpc` is "2.0" and the method a string: the method.
fn check_envelope<'a>(obj: &'a Map<String, Value>, method: &'a Value) -> Result<&'a str, RpcError> {
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(RpcError::new(
            code::INVALID_REQUEST,
            "not JSON-RPC 2.0: \"jsonrpc\": \"2.0\" is missing",
        ));
    }
    method
        .as_str()
        .ok_or_else(|| RpcError::new(code::INVALID_REQUEST, "the method must be a string"))
}

/// The protocol version a request's `_meta` names, if it names one.
fn meta_version(params: &Map<String, Value>) -> Result<Option<&str>, RpcError> {
    match params.get("_meta").and_then(|m| m.get(META_VERSION)) {
        None => Ok(None),
        Some(Value::String(v)) => Ok(Some(v)),
        Some(_) => Err(RpcError::params(format!(
            "_meta[\"{META_VERSION}\"] must be a string"
        ))),
    }
}

fn unsupported(requested: &str) -> RpcError {
    RpcError {
        code: code::UNSUPPORTED_VERSION,
        message: format!(
            "protocol version {} is not supported; supported: {}",
            crate::output::sanitize::one_line(requested, 40),
            supported_versions().join(", ")
        ),
        data: Some(json!({"supported": supported_versions(), "requested": requested})),
    }
}

fn server_info() -> Value {
    json!({
        "name": "mcprisk",
        "title": "mcprisk risk catalog",
        "version": env!("CARGO_PKG_VERSION"),
    })
}

fn capabilities() -> Value {
    json!({
        "tools": {"listChanged": false},
        "resources": {"subscribe": false, "listChanged": false},
    })
}

const INSTRUCTIONS: &str = "Offline MCP risk catalog. Look a server up by name (lookup_server, \
lookup_tool, search_catalog) or send a tool list (assess_tools) for its risk category per tool, \
grade and recommended policy (recommend_policy). Answers come from data only.";

fn dispatch(
    service: &Service,
    session: &mut Session,
    method: &str,
    params: &Map<String, Value>,
) -> Result<Value, RpcError> {
    if !METHODS.contains(&method) || method.starts_with("notifications/") {
        return Err(RpcError::new(
            code::METHOD_NOT_FOUND,
            format!(
                "method not found: {}",
                crate::output::sanitize::one_line(method, 80)
            ),
        ));
    }
    let requested = meta_version(params)?;
    match method {
        "initialize" => return initialize(session, params),
        "ping" => return Ok(json!({})),
        "server/discover" => {
            if let Some(v) = requested.filter(|v| *v != STATELESS_VERSION) {
                if !LEGACY_VERSIONS.contains(&v) {
                    return Err(unsupported(v));
                }
            }
            return Ok(json!({
                "resultType": "complete",
                "ttlMs": CACHE_TTL_MS,
                "cacheScope": "public",
                "supportedVersions": supported_versions(),
                "capabilities": capabilities(),
                "serverInfo": server_info(),
                "_meta": {"io.modelcontextprotocol/serverInfo": server_info()},
                "instructions": INSTRUCTIONS,
            }));
        }
        _ => {}
    }
    let stateless = match requested {
        Some(v) if v == STATELESS_VERSION => true,
        Some(_) if session.version.is_some() => false,
        Some(v) => return Err(unsupported(v)),
        None if session.version.is_some() => false,
        None => {
            return Err(RpcError::new(
                code::INVALID_REQUEST,
                format!(
                    "{method} before initialize: send initialize first (or, for protocol {STATELESS_VERSION}, name it in params._meta[\"{META_VERSION}\"])"
                ),
            ))
        }
    };
    let mut result = match method {
        "tools/list" => {
            no_cursor(params)?;
            json!({"tools": schema::definitions()})
        }
        "tools/call" => tools::call(service, params)?,
        "resources/list" => resources::list(service, params)?,
        "resources/templates/list" => {
            no_cursor(params)?;
            json!({"resourceTemplates": resources::templates()})
        }
        "resources/read" => resources::read(service, params)?,
        _ => unreachable!("every method of METHODS is matched"),
    };
    if stateless {
        result["resultType"] = json!("complete");
        if CACHEABLE.contains(&method) {
            result["ttlMs"] = json!(CACHE_TTL_MS);
            result["cacheScope"] = json!("public");
        }
    }
    Ok(result)
}

/// Lists that fit in one page take no cursor.
fn no_cursor(params: &Map<String, Value>) -> Result<(), RpcError> {
    match params.get("cursor") {
        None | Some(Value::Null) => Ok(()),
        Some(_) => Err(RpcError::params(
            "unknown cursor: this list has a single page",
        )),
    }
}

fn initialize(session: &mut Session, params: &Map<String, Value>) -> Result<Value, RpcError> {
    let requested = match params.get("protocolVersion") {
        Some(Value::String(v)) => v.as_str(),
        Some(_) => return Err(RpcError::params("protocolVersion must be a string")),
        None => return Err(RpcError::params("initialize needs protocolVersion")),
    };
    if session.version.is_some() {
        return Err(RpcError::new(
            code::INVALID_REQUEST,
            "already initialized: initialize is sent once per connection",
        ));
    }
    let latest = LEGACY_VERSIONS[LEGACY_VERSIONS.len() - 1];
    let chosen = if LEGACY_VERSIONS.contains(&requested) {
        requested
    } else {
        latest
    };
    session.version = Some(chosen.to_string());
    Ok(json!({
        "protocolVersion": chosen,
        "capabilities": capabilities(),
        "serverInfo": server_info(),
        "instructions": INSTRUCTIONS,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every cut of a valid message, and bytes that are no message at all, get an answer (or
    /// none, for what reads as a notification) and never a panic.
    #[test]
    fn any_prefix_of_a_message_is_answered_without_a_panic() {
        let service = Service::new(&Default::default()).unwrap();
        let messages = [
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#,
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"lookup_server","arguments":{"name":"git"}}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"assess_tools","arguments":{"tools":[{"name":"x","inputSchema":{}}]},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"mcprisk://rules/MR-C304"}}"#,
        ];
        for m in messages {
            for cut in 0..=m.len() {
                let mut session = Session::default();
                let reply = handle_bytes(&service, &mut session, &m.as_bytes()[..cut]);
                if cut < m.len() {
                    let reply = reply.expect("a cut message is answered with an error");
                    assert!(reply.get("error").is_some(), "{cut}: {reply}");
                }
            }
        }
        let mut session = Session::default();
        for junk in [
            &b"\x00\x01"[..],
            b"null",
            b"\"x\"",
            b"{}",
            b"{\"id\":1}",
            b"[[[[[[[[[[",
        ] {
            let reply = handle_bytes(&service, &mut session, junk);
            assert!(reply.is_none_or(|r| r.get("error").is_some()));
        }
        let deep = "[".repeat(10_000);
        let reply = handle_bytes(&service, &mut session, deep.as_bytes()).unwrap();
        assert_eq!(reply["error"]["code"], code::PARSE_ERROR);
    }
}
