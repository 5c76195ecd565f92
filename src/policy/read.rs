//! Reads an existing policy file in any flavour mcprisk writes, as a rule per tool, so `check
//! --policy` can compare it with the recommendation and `policy` can keep hand edits.

use crate::error::{Error, Result};
use crate::model::Action;
use serde_json::Value;
use std::collections::BTreeMap;

/// What a policy file says about one tool.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    pub action: Action,
    /// Calls a minute, for rate limits.
    pub max: Option<u64>,
    /// The rule as written (policylayer), to keep it exactly when merging.
    pub raw: Option<Value>,
}

/// Which flavour a policy file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    PolicyLayer,
    ClaudeCode,
}

/// A policy file read into rules by tool name (`server/tool` is not known to PolicyLayer, so
/// its keys are bare tool names; Claude Code's are `mcp__server__tool`).
#[derive(Debug, Clone)]
pub struct ReadPolicy {
    pub kind: Kind,
    pub rules: BTreeMap<String, Rule>,
    /// Claude Code entries for a whole server (`mcp__server`).
    pub server_rules: BTreeMap<String, Action>,
    pub doc: Value,
}

/// How strict an action is, for "looser than recommended".
pub fn strictness(a: Action) -> u8 {
    match a {
        Action::Allow => 0,
        Action::RateLimit => 1,
        Action::Validate => 2,
        Action::Approval => 3,
        Action::Hide | Action::Deny => 4,
    }
}

/// Reads a policy file.
pub fn load(path: &str) -> Result<ReadPolicy> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::new(format!("{path}: cannot read the policy: {e}")))?;
    let doc: Value = serde_json::from_str(&text).map_err(|e| {
        Error::new(format!(
            "{path}: not a JSON policy at line {}, column {}: {e}",
            e.line(),
            e.column()
        ))
    })?;
    parse(doc, path)
}

/// Reads a parsed policy document.
pub fn parse(doc: Value, path: &str) -> Result<ReadPolicy> {
    let mut rules = BTreeMap::new();
    let mut server_rules = BTreeMap::new();
    if let Some(perms) = doc.get("permissions") {
        for (list, action) in [
            ("allow", Action::Allow),
            ("ask", Action::Approval),
            ("deny", Action::Deny),
        ] {
            let Some(items) = perms.get(list) else {
                continue;
            };
            let items = items.as_array().ok_or_else(|| {
                Error::new(format!("{path}: permissions.{list} must be an array"))
            })?;
            for item in items {
                let Some(s) = item.as_str() else {
                    return Err(Error::new(format!(
                        "{path}: permissions.{list} holds a non-string"
                    )));
                };
                let Some(rest) = s.strip_prefix("mcp__") else {
                    continue;
                };
                match rest.split_once("__") {
                    Some(_) => {
                        rules.insert(
                            s.to_string(),
                            Rule {
                                action,
                                max: None,
                                raw: None,
                            },
                        );
                    }
                    None => {
                        server_rules.insert(rest.to_string(), action);
                    }
                }
            }
        }
        return Ok(ReadPolicy {
            kind: Kind::ClaudeCode,
            rules,
            server_rules,
            doc,
        });
    }
    let tools = doc
        .get("tools")
        .and_then(Value::as_object)
        .ok_or_else(|| Error::new(format!("{path}: neither a PolicyLayer policy (\"tools\") nor Claude Code settings (\"permissions\")")))?;
    for (name, rule) in tools {
        let Value::Object(r) = rule else {
            return Err(Error::new(format!(
                "{path}: tools.{name} must be an object"
            )));
        };
        let max = r.get("limits").and_then(Value::as_array).and_then(|l| {
            l.iter()
                .filter_map(|x| x.get("max").and_then(Value::as_u64))
                .min()
        });
        let deny_if = r.get("deny_if").and_then(Value::as_array);
        let action = match deny_if {
            Some(d)
                if d.iter().any(|x| {
                    x.get("conditions")
                        .and_then(Value::as_array)
                        .is_some_and(|c| c.is_empty())
                }) =>
            {
                Action::Approval
            }
            Some(d) if !d.is_empty() => Action::Validate,
            _ if max.is_some() => Action::RateLimit,
            _ => Action::Allow,
        };
        rules.insert(
            name.clone(),
            Rule {
                action,
                max,
                raw: Some(rule.clone()),
            },
        );
    }
    if let Some(hide) = doc.get("hide").and_then(Value::as_array) {
        for h in hide.iter().filter_map(Value::as_str) {
            rules.insert(
                h.to_string(),
                Rule {
                    action: Action::Hide,
                    max: None,
                    raw: None,
                },
            );
        }
    }
    Ok(ReadPolicy {
        kind: Kind::PolicyLayer,
        rules,
        server_rules,
        doc,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_policylayer_rules() {
        let p = parse(
            json!({"version": "1", "default": "deny", "hide": ["rm"], "tools": {
                "get": {}, "w": {"limits": [{"counter": "w_rate", "window": "minute", "max": 30, "scope": "grant"}]},
                "pay": {"deny_if": [{"conditions": [], "on_deny": "Requires human approval."}]}}}),
            "p.json",
        )
        .unwrap();
        assert_eq!(p.rules["get"].action, Action::Allow);
        assert_eq!(p.rules["w"].action, Action::RateLimit);
        assert_eq!(p.rules["w"].max, Some(30));
        assert_eq!(p.rules["pay"].action, Action::Approval);
        assert_eq!(p.rules["rm"].action, Action::Hide);
    }

    #[test]
    fn reads_claude_code_permissions() {
        let p = parse(json!({"permissions": {"allow": ["mcp__s__get", "mcp__t"], "ask": [], "deny": ["mcp__s__rm", "Bash(rm:*)"]}}), "s.json").unwrap();
        assert_eq!(p.kind, Kind::ClaudeCode);
        assert_eq!(p.rules["mcp__s__get"].action, Action::Allow);
        assert_eq!(p.rules["mcp__s__rm"].action, Action::Deny);
        assert_eq!(p.server_rules["t"], Action::Allow);
    }
}
