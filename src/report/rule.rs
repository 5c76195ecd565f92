//! One classification rule as data: what `mcprisk rules ID --format json` prints and what the
//! MCP server's `explain_rule` tool and `mcprisk://rules/{id}` resource return.

use crate::classify::{Rule, RuleKind};
use serde_json::{json, Value};

/// The kind of a rule as written in every output.
pub fn kind_name(k: RuleKind) -> &'static str {
    match k {
        RuleKind::Category => "category",
        RuleKind::Severity => "severity",
        RuleKind::Signal => "signal",
        RuleKind::Finding => "finding",
        RuleKind::Grade => "grade",
    }
}

/// A rule's documentation as a JSON object (id, name, kind, effect fields, summary, why, example).
pub fn document(r: &Rule) -> Value {
    json!({
        "id": r.id,
        "name": r.name,
        "kind": kind_name(r.kind),
        "category": r.category.map(|c| c.as_str()),
        "weight": r.weight,
        "applies_to": r.applies_to.iter().map(|c| c.as_str()).collect::<Vec<_>>(),
        "severity": r.severity.map(|s| s.as_str()),
        "summary": r.summary,
        "why": r.why,
        "example": r.example,
    })
}

/// What the rule adds, in a few words.
pub fn effect(r: &Rule) -> String {
    match r.kind {
        RuleKind::Category => format!(
            "{} (weight {})",
            r.category.map(|c| c.as_str()).unwrap_or("?"),
            r.weight.unwrap_or_default()
        ),
        RuleKind::Severity => format!(
            "raises {} one step",
            r.applies_to
                .iter()
                .map(|c| c.as_str())
                .collect::<Vec<_>>()
                .join("/")
        ),
        RuleKind::Signal => "noted, changes nothing".into(),
        RuleKind::Finding => format!("{} finding", r.severity.map(|s| s.as_str()).unwrap_or("?")),
        RuleKind::Grade => match r.points {
            Some(p) => format!("grade: -{p} per item"),
            None => "grade".into(),
        },
    }
}
