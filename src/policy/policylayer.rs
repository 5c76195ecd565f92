//! PolicyLayer `policy.json`: default deny, hidden tools, and per tool `{}` (allow), `limits`
//! or `deny_if`.

use crate::model::{Action, ServerAssessment, ToolAssessment};
use serde_json::{json, Map, Value};

/// The message an agent gets when a call waits for a person.
pub const APPROVAL_MESSAGE: &str = "Requires human approval.";

/// The rule object for one tool, or `None` when the tool is hidden or denied outright.
pub fn tool_rule(tool: &ToolAssessment) -> Option<Value> {
    let rec = &tool.recommended;
    let limits = |max: u32| {
        json!([{
            "counter": format!("{}_rate", tool.name),
            "window": "minute",
            "max": max,
            "scope": "grant"
        }])
    };
    match rec.action {
        Action::Allow => Some(json!({})),
        Action::RateLimit => Some(json!({ "limits": limits(rec.max_per_minute.unwrap_or(10)) })),
        Action::Validate => {
            let conditions: Vec<Value> = rec
                .validate
                .iter()
                .map(|c| {
                    json!({
                        "field": format!("args.{}", c.argument),
                        "operator": "not_in",
                        "value": c.allowed,
                    })
                })
                .collect();
            let mut rule = Map::new();
            rule.insert(
                "deny_if".into(),
                json!([{ "conditions": conditions, "on_deny": APPROVAL_MESSAGE }]),
            );
            rule.insert("limits".into(), limits(rec.max_per_minute.unwrap_or(10)));
            Some(Value::Object(rule))
        }
        Action::Approval => Some(json!({
            "deny_if": [{ "conditions": [], "on_deny": APPROVAL_MESSAGE }]
        })),
        Action::Hide | Action::Deny => None,
    }
}

/// The whole policy for one or more servers. Tool names are keys, so the same name on two
/// servers gets the stricter rule.
pub fn policy(servers: &[ServerAssessment]) -> Value {
    let (tools, hide) = super::strictest_rules(servers, tool_rule);
    let mut doc = Map::new();
    doc.insert("version".into(), json!("1"));
    doc.insert("default".into(), json!("deny"));
    if !hide.is_empty() {
        doc.insert("hide".into(), json!(hide));
    }
    doc.insert("tools".into(), Value::Object(tools));
    Value::Object(doc)
}
