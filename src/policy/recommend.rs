//! The recommended rule per tool: category and severity, shifted by a profile, with per-category
//! rate limits and argument validation where the schema allows it.

use crate::model::{Action, ArgCondition, Category, Recommendation, Severity, Tool};
use serde_json::Value;

/// How strict the recommendations are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Profile {
    /// One step stricter: writes and executes need approval, financial tools are denied.
    Strict,
    /// The rules of docs/classification.md (the default).
    #[default]
    Balanced,
    /// One step looser: writes are allowed, destructive tools need approval instead of being hidden.
    Permissive,
}

/// Calls per minute for rate-limited categories.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub write: u32,
    pub execute: u32,
    pub read_sensitive: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            write: 30,
            execute: 10,
            read_sensitive: 30,
        }
    }
}

impl Limits {
    /// Applies `category=N`, as given to `--limit`.
    pub fn set(&mut self, spec: &str) -> Result<(), String> {
        let (cat, n) = spec
            .split_once('=')
            .ok_or_else(|| format!("--limit {spec:?}: expected CATEGORY=N, e.g. write=30"))?;
        let n: u32 = n
            .trim()
            .parse()
            .ok()
            .filter(|&n| n > 0 && n <= 100_000)
            .ok_or_else(|| {
                format!("--limit {spec:?}: N must be a whole number from 1 to 100000")
            })?;
        match cat.trim().to_ascii_lowercase().as_str() {
            "write" => self.write = n,
            "execute" => self.execute = n,
            "read" => self.read_sensitive = n,
            other => {
                return Err(format!(
                    "--limit {spec:?}: unknown category {other:?}; rate limits apply to read (sensitive reads), write and execute"
                ))
            }
        }
        Ok(())
    }
}

/// HTTP methods that only read: the only ones a method argument may take without approval.
/// OPTIONS is left out on purpose: the values that pass are the ones the issue names and
/// reviewers expect (GET, HEAD), and anything else costs one approval, not a breach.
const SAFE_METHODS: [&str; 2] = ["GET", "HEAD"];
/// Enum values of an action-like argument that only read.
const SAFE_ACTIONS: [&str; 12] = [
    "get", "list", "read", "search", "describe", "show", "view", "status", "fetch", "query",
    "info", "find",
];
/// Argument names (as `normalize_key` spells them) that choose an HTTP method.
const METHOD_ARGUMENTS: [&str; 4] = ["method", "httpmethod", "requestmethod", "verb"];
/// Argument names that choose what the tool does, as an enum or as free text.
const ACTION_ARGUMENTS: [&str; 7] = [
    "action",
    "operation",
    "op",
    "mode",
    "subcommand",
    "operationtype",
    "actiontype",
];
/// `command` chooses a mode only when it is an enum; as free text it is a command line with
/// its own arguments, which no list of values can check.
const ENUM_ONLY_ACTION_ARGUMENTS: [&str; 1] = ["command"];
/// How deep into nested object arguments mode arguments are looked for (`args.request.method`).
const MAX_DEPTH: usize = 3;

/// The recommended rule for a tool of this category and severity.
pub fn recommend(
    tool: &Tool,
    category: Category,
    severity: Severity,
    profile: Profile,
    limits: &Limits,
) -> Recommendation {
    use Action::*;
    let rate = |action: Action, max: u32, reason: &str| Recommendation {
        action,
        max_per_minute: Some(max),
        validate: Vec::new(),
        reason: reason.to_string(),
    };
    let plain = |action: Action, reason: &str| Recommendation {
        action,
        max_per_minute: None,
        validate: Vec::new(),
        reason: reason.to_string(),
    };
    match (profile, category) {
        (Profile::Strict, Category::Read) if severity > Severity::Low => rate(
            RateLimit,
            limits.read_sensitive,
            "strict: a read that returns sensitive data is rate-limited",
        ),
        (_, Category::Read) => plain(Allow, "reads have no lasting effect"),
        (Profile::Permissive, Category::Write) => plain(Allow, "permissive: writes are allowed"),
        (Profile::Strict, Category::Write) => plain(Approval, "strict: every write needs a human"),
        (Profile::Balanced, Category::Write) => rate(
            RateLimit,
            limits.write,
            "writes can be undone; a rate limit stops a runaway agent",
        ),
        (Profile::Strict, Category::Execute) => {
            plain(Approval, "strict: every execution needs a human")
        }
        (Profile::Balanced, Category::Execute) if severity == Severity::Critical => plain(
            Approval,
            "runs arbitrary code or commands on a host: a human approves each call",
        ),
        (_, Category::Execute) => {
            let max = if profile == Profile::Permissive {
                limits.execute.saturating_mul(3)
            } else {
                limits.execute
            };
            let validate = argument_validation(tool);
            if validate.is_empty() {
                return rate(
                    RateLimit,
                    max,
                    "executions reach beyond the call; rate-limited",
                );
            }
            let checks: Vec<String> = validate
                .iter()
                .map(|c| format!("{} other than {}", c.argument, c.allowed.join("/")))
                .collect();
            let mut r = rate(
                Validate,
                max,
                &format!(
                    "executions reach beyond the call: rate-limited, and {} needs human approval, so the tool cannot do what hidden tools do",
                    checks.join(" or ")
                ),
            );
            r.validate = validate;
            r
        }
        (Profile::Permissive, Category::Destructive) => {
            plain(Approval, "permissive: destructive tools need a human")
        }
        (_, Category::Destructive) => {
            plain(Hide, "destructive: hidden so the agent never sees the tool")
        }
        (Profile::Strict, Category::Financial) => plain(Deny, "strict: financial tools are denied"),
        (_, Category::Financial) => plain(
            Approval,
            "moves money or creates an obligation: a human approves each call",
        ),
    }
}

/// Conditions that let only the safe values of a method- or action-like argument through:
/// `GET`/`HEAD` for a method, read-only words (`get`, `list`, ...) for an action. The argument
/// may be an enum (its safe values pass) or free text (the safe values listed here pass and
/// anything else needs approval), also inside nested object arguments (`request.method`).
/// Without this a passthrough such as `pve_api_request` ("Call any Proxmox API path") reaches
/// everything the hidden tools do, since a rate limit alone still lets a DELETE through.
pub fn argument_validation(tool: &Tool) -> Vec<ArgCondition> {
    let mut out = Vec::new();
    collect_validation(tool.input_schema(), "", 0, &mut out);
    out
}

/// The enum values of an argument's schema, also under `anyOf`/`oneOf` (an optional enum is
/// often `anyOf: [{enum}, {type: null}]`); `None` when it takes any string.
fn enum_values(schema: &Value) -> Option<Vec<&str>> {
    if let Some(a) = schema.get("enum").and_then(Value::as_array) {
        return Some(a.iter().filter_map(Value::as_str).collect());
    }
    if let Some(c) = schema.get("const").and_then(Value::as_str) {
        return Some(vec![c]);
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(alts) = schema.get(key).and_then(Value::as_array) {
            let values: Vec<&str> = alts.iter().filter_map(enum_values).flatten().collect();
            if !values.is_empty() {
                return Some(values);
            }
        }
    }
    None
}

/// Whether an argument takes free text: a string type (alone, in a type list, or as one of
/// `anyOf`/`oneOf`) with no enum or const, or no type at all.
fn takes_free_text(schema: &Value) -> bool {
    if enum_values(schema).is_some() {
        return false;
    }
    let is_string = |t: &Value| match t {
        Value::String(s) => s == "string",
        Value::Array(a) => a.iter().any(|t| t == "string"),
        _ => false,
    };
    match schema.get("type") {
        Some(t) => is_string(t),
        None => ["anyOf", "oneOf"].iter().any(|k| {
            schema
                .get(*k)
                .and_then(Value::as_array)
                .is_some_and(|alts| alts.iter().any(|a| a.get("type").is_some_and(is_string)))
        }),
    }
}

/// Whether an action value only reads: its first word is a read-only verb.
fn is_safe_action(value: &str) -> bool {
    let mut words = crate::classify::words::Words::default();
    crate::classify::words::split_identifier(value, &mut words);
    words.first().is_some_and(|w| SAFE_ACTIONS.contains(&w))
}

fn collect_validation(schema: &Value, prefix: &str, depth: usize, out: &mut Vec<ArgCondition>) {
    let Some(Value::Object(props)) = schema.get("properties") else {
        return;
    };
    for (name, schema) in props {
        // Intercept paths are dotted; a name with a dot cannot be addressed.
        if name.is_empty() || name.contains('.') {
            continue;
        }
        let path = format!("{prefix}{name}");
        let key = crate::classify::words::normalize_key(name);
        let method = METHOD_ARGUMENTS.contains(&key.as_str());
        let action = ACTION_ARGUMENTS.contains(&key.as_str());
        let enum_action = action || ENUM_ONLY_ACTION_ARGUMENTS.contains(&key.as_str());
        match enum_values(schema) {
            Some(values) if method || enum_action => {
                let safe: Vec<String> = values
                    .iter()
                    .filter(|v| {
                        if method {
                            SAFE_METHODS.iter().any(|m| m.eq_ignore_ascii_case(v))
                        } else {
                            is_safe_action(v)
                        }
                    })
                    .map(|v| v.to_string())
                    .collect();
                // An enum of safe values only needs no check; one with none is left to the
                // category's rule (a tool with no safe mode is judged by its modes).
                if !safe.is_empty() && safe.len() < values.len() {
                    out.push(ArgCondition {
                        argument: path,
                        allowed: safe,
                    });
                }
            }
            None if (method || action) && takes_free_text(schema) => {
                let allowed = if method {
                    SAFE_METHODS.iter().map(|m| m.to_string()).collect()
                } else {
                    SAFE_ACTIONS.iter().map(|a| a.to_string()).collect()
                };
                out.push(ArgCondition {
                    argument: path,
                    allowed,
                });
            }
            _ if depth + 1 < MAX_DEPTH => {
                collect_validation(schema, &format!("{path}."), depth + 1, out)
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(schema: Value) -> Tool {
        Tool {
            name: "t".into(),
            title: None,
            description: String::new(),
            raw: json!({"name": "t", "inputSchema": schema}),
        }
    }

    /// Issue 12, item 14: a free-text method (pve_api_request) is validated, not only limited.
    #[test]
    fn free_text_methods_and_actions_are_validated() {
        let t = tool(json!({"type": "object", "properties": {
            "method": {"type": "string", "title": "Method"},
            "path": {"type": "string"},
            "confirm": {"type": "boolean"}}}));
        assert_eq!(
            argument_validation(&t),
            vec![ArgCondition {
                argument: "method".into(),
                allowed: vec!["GET".into(), "HEAD".into()]
            }]
        );
        let t = tool(json!({"type": "object", "properties": {
            "action": {"type": ["string", "null"], "description": "create, list or delete"}}}));
        let v = argument_validation(&t);
        assert_eq!(v[0].argument, "action");
        assert!(v[0].allowed.contains(&"list".to_string()));
        assert!(!v[0].allowed.iter().any(|a| a == "delete"));
        // A free-text command is a command line, not a mode: no list of values can check it.
        let t = tool(json!({"type": "object", "properties": {"command": {"type": "string"}}}));
        assert!(argument_validation(&t).is_empty());
    }

    #[test]
    fn enums_keep_their_safe_values_also_nested_and_optional() {
        let t = tool(json!({"type": "object", "properties": {
            "request": {"type": "object", "properties": {
                "method": {"anyOf": [{"enum": ["GET", "POST", "OPTIONS"]}, {"type": "null"}]}}},
            "operation": {"enum": ["list_items", "delete_item"]},
            "mode": {"enum": ["get", "list"]}}}));
        let v = argument_validation(&t);
        assert_eq!(
            v,
            vec![
                ArgCondition {
                    argument: "request.method".into(),
                    allowed: vec!["GET".into()]
                },
                ArgCondition {
                    argument: "operation".into(),
                    allowed: vec!["list_items".into()]
                },
            ],
            "an enum of safe values only needs no check"
        );
    }
}
