//! PolicyLayer `policy.json`: default deny, hidden tools, and per tool `{}` (allow), `limits`
//! or `deny_if`.

use crate::model::{Action, ServerAssessment, ToolAssessment};
use serde_json::{json, Map, Value};

/// The message an agent gets when a call waits for a person.
pub const APPROVAL_MESSAGE: &str = "Requires human approval.";

/// A `deny_if` condition that sends a call to approval when an argument is not one of the
/// allowed values. PolicyLayer's one published condition format is Intercept's (`path`, `op`,
/// `value`; `reference/intercept-policy.md`), so the hosted policy uses it too.
pub fn condition(argument: &str, allowed: &[String]) -> Value {
    json!({
        "path": format!("args.{argument}"),
        "op": "not_in",
        "value": allowed,
    })
}

/// A condition as mcprisk wrote it before the Intercept format (`field`, `operator`, `value`),
/// rewritten in that format; `None` when it is not of that older shape.
pub fn upgrade_condition(c: &Value) -> Option<Value> {
    let m = c.as_object()?;
    if m.len() != 3 {
        return None;
    }
    Some(json!({
        "path": m.get("field")?.as_str()?,
        "op": m.get("operator")?.as_str()?,
        "value": m.get("value")?,
    }))
}

/// A tool rule with every older-format condition rewritten (see [`upgrade_condition`]), so a
/// policy mcprisk wrote before is recognised as its own and not taken for a hand edit.
pub fn upgrade_rule(rule: &Value) -> Value {
    let mut rule = rule.clone();
    if let Some(list) = rule.get_mut("deny_if").and_then(Value::as_array_mut) {
        for d in list {
            if let Some(conds) = d.get_mut("conditions").and_then(Value::as_array_mut) {
                for c in conds.iter_mut() {
                    if let Some(new) = upgrade_condition(c) {
                        *c = new;
                    }
                }
            }
        }
    }
    rule
}

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
                .map(|c| condition(&c.argument, &c.allowed))
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
