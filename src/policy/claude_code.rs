//! Claude Code `settings.json` permissions: `mcp__<server>__<tool>` in allow, ask or deny.

use crate::model::{Action, ServerAssessment};
use serde_json::json;

/// A server name as Claude Code writes it in permission rules: letters, digits, `_` and `-`.
pub fn rule_name(server: &str, tool: &str) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    format!("mcp__{}__{}", clean(server), clean(tool))
}

/// The `permissions` fragment for every tool of every server.
pub fn settings(servers: &[ServerAssessment]) -> serde_json::Value {
    let (mut allow, mut ask, mut deny) = (Vec::new(), Vec::new(), Vec::new());
    for s in servers {
        for t in &s.tools {
            let name = rule_name(&s.name, &t.name);
            match t.recommended.action {
                Action::Allow => allow.push(name),
                Action::RateLimit | Action::Validate | Action::Approval => ask.push(name),
                Action::Hide | Action::Deny => deny.push(name),
            }
        }
    }
    for v in [&mut allow, &mut ask, &mut deny] {
        v.sort();
        v.dedup();
    }
    json!({ "permissions": { "allow": allow, "ask": ask, "deny": deny } })
}
