//! Intercept (PolicyLayer's open-source MCP proxy) YAML policy: `version: "1"`, `default: deny`,
//! `hide`, and per tool a list of `rules`. The format is documented in Intercept's POLICY.md
//! and defined by `internal/config/config.go` and `internal/config/validate.go` of
//! github.com/policylayer/intercept:
//!
//! - `rules: []` allows a listed tool unconditionally under `default: deny`;
//! - `rate_limit: N/minute` is the rate-limit shorthand (it cannot be combined with
//!   `conditions`, so argument checks are a rule of their own);
//! - an `evaluate` rule denies the call when any of its `conditions` fails, so argument
//!   validation is `args.<argument>` `in` the allowed values;
//! - `action: deny` blocks a tool unconditionally.
//!
//! Intercept has no human approval: a tool that needs one gets an unconditional deny rule whose
//! message says a person must make the call, and argument values outside the allowed ones are
//! denied rather than sent to approval.

use crate::model::{Action, ServerAssessment, ToolAssessment};
use serde_json::{json, Map, Value};

/// The `on_deny` message of a tool that needs a person's approval, which Intercept cannot ask.
pub const APPROVAL_MESSAGE: &str =
    "Requires human approval, which Intercept cannot ask for: a person must make this call.";

/// The message when an argument has a value outside the allowed ones.
fn validate_message(argument: &str, allowed: &[String]) -> String {
    format!(
        "{argument} must be one of {}; other values need human approval",
        allowed.join(", ")
    )
}

/// The rules of one tool, or `None` when the tool is hidden or denied outright (left to
/// `default: deny`).
pub fn tool_rule(tool: &ToolAssessment) -> Option<Value> {
    let rec = &tool.recommended;
    let rate = |max: u32| {
        json!({
            "name": "rate limit",
            "rate_limit": format!("{}/minute", max.max(1)),
        })
    };
    let rules: Vec<Value> = match rec.action {
        Action::Allow => Vec::new(),
        Action::RateLimit => vec![rate(rec.max_per_minute.unwrap_or(10))],
        Action::Validate => {
            let mut rules: Vec<Value> = rec
                .validate
                .iter()
                .map(|c| {
                    json!({
                        "name": format!("allowed {} values", c.argument),
                        "conditions": [{
                            "path": format!("args.{}", c.argument),
                            "op": "in",
                            "value": c.allowed,
                        }],
                        "on_deny": validate_message(&c.argument, &c.allowed),
                    })
                })
                .collect();
            rules.push(rate(rec.max_per_minute.unwrap_or(10)));
            rules
        }
        Action::Approval => vec![json!({
            "name": "requires human approval",
            "action": "deny",
            "on_deny": APPROVAL_MESSAGE,
        })],
        Action::Hide | Action::Deny => return None,
    };
    Some(json!({ "rules": rules }))
}

/// The whole policy for one or more servers. Tool names are keys, so the same name on two
/// servers gets the stricter rule.
pub fn policy(servers: &[ServerAssessment]) -> Value {
    let (tools, hide) = super::strictest_rules(servers, tool_rule);
    let mut doc = Map::new();
    doc.insert("version".into(), json!("1"));
    doc.insert(
        "description".into(),
        json!("Least-privilege policy written by mcprisk"),
    );
    doc.insert("default".into(), json!("deny"));
    if !hide.is_empty() {
        doc.insert("hide".into(), json!(hide));
    }
    doc.insert("tools".into(), Value::Object(tools));
    Value::Object(doc)
}
