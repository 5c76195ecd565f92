//! The recommended rule per tool: category and severity, shifted by a profile, with per-category
//! rate limits and argument validation where the schema allows it.

use crate::model::{Action, ArgCondition, Category, Recommendation, Severity, Tool};
use serde_json::Value;

/// How strict the recommendations are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Profile {
    /// One step stricter: writes and executes need approval, financial tools are denied.
    Strict,
    /// The rules of classification.md.
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

/// HTTP methods that only read.
const SAFE_METHODS: [&str; 3] = ["GET", "HEAD", "OPTIONS"];
/// Enum values of an action-like argument that only read.
const SAFE_ACTIONS: [&str; 12] = [
    "get", "list", "read", "search", "describe", "show", "view", "status", "fetch", "query",
    "info", "find",
];

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
            let mut r = rate(
                if validate.is_empty() { RateLimit } else { Validate },
                max,
                "executions reach beyond the call; rate-limited, with argument validation where the schema allows it",
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

/// Conditions that let the safe values of a method- or action-like enum through.
pub fn argument_validation(tool: &Tool) -> Vec<ArgCondition> {
    let Some(Value::Object(props)) = tool.input_schema().get("properties") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (name, schema) in props {
        let key = crate::classify::words::normalize_key(name);
        let values: Vec<&str> = schema
            .get("enum")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if values.len() < 2 {
            continue;
        }
        let safe: Vec<String> = if matches!(key.as_str(), "method" | "httpmethod" | "requestmethod")
        {
            values
                .iter()
                .filter(|v| SAFE_METHODS.iter().any(|m| m.eq_ignore_ascii_case(v)))
                .map(|v| v.to_string())
                .collect()
        } else if matches!(
            key.as_str(),
            "action" | "operation" | "op" | "mode" | "command"
        ) {
            values
                .iter()
                .filter(|v| {
                    let mut words = crate::classify::words::Words::default();
                    crate::classify::words::split_identifier(v, &mut words);
                    words.first().is_some_and(|w| SAFE_ACTIONS.contains(&w))
                })
                .map(|v| v.to_string())
                .collect()
        } else {
            continue;
        };
        if !safe.is_empty() && safe.len() < values.len() {
            out.push(ArgCondition {
                argument: name.clone(),
                allowed: safe,
            });
        }
    }
    out
}
