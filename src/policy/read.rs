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
    /// Intercept's YAML: like PolicyLayer, rules by bare tool name.
    Intercept,
    /// agentgateway `mcpAuthorization`: only allowed tools are named; every other is denied.
    Agentgateway,
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
    let doc: Value = match serde_json::from_str(&text) {
        Ok(doc) => doc,
        Err(json_err) => {
            // Intercept and agentgateway policies are YAML.
            let yaml: Value = serde_saphyr::from_str(&text).map_err(|e| {
                Error::new(format!(
                    "{path}: neither a JSON policy (line {}, column {}: {json_err}) nor a YAML one ({e})",
                    json_err.line(),
                    json_err.column()
                ))
            })?;
            let mut read = parse(yaml, path)?;
            if read.kind == Kind::PolicyLayer {
                // A YAML file with `tools` is Intercept's even when no tool has rules yet.
                read.kind = Kind::Intercept;
            }
            return Ok(read);
        }
    };
    parse(doc, path)
}

/// The `mcpAuthorization` object in a document: at the top (the snippet mcprisk writes) or
/// anywhere inside a whole agentgateway config (a route's `policies`). Its JSON pointer.
pub fn mcp_authorization_pointer(doc: &Value) -> Option<String> {
    fn find(v: &Value, at: String) -> Option<String> {
        match v {
            Value::Object(m) => {
                if m.get("mcpAuthorization").is_some_and(Value::is_object) {
                    return Some(format!("{at}/mcpAuthorization"));
                }
                m.iter().find_map(|(k, v)| {
                    find(
                        v,
                        format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")),
                    )
                })
            }
            Value::Array(a) => a
                .iter()
                .enumerate()
                .find_map(|(i, v)| find(v, format!("{at}/{i}"))),
            _ => None,
        }
    }
    find(doc, String::new())
}

/// Reads agentgateway `mcpAuthorization` rules: a tool a rule names is allowed.
fn parse_agentgateway(doc: Value, pointer: &str, path: &str) -> Result<ReadPolicy> {
    let mut rules = BTreeMap::new();
    let list = match doc.pointer(pointer).and_then(|m| m.get("rules")) {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a.clone(),
        Some(_) => {
            return Err(Error::new(format!(
                "{path}: mcpAuthorization.rules must be a list of CEL expressions"
            )))
        }
    };
    for item in &list {
        let Some(expr) = item.as_str() else {
            return Err(Error::new(format!(
                "{path}: mcpAuthorization.rules holds a non-string"
            )));
        };
        for name in super::agentgateway::named_tools(expr) {
            rules.insert(
                name,
                Rule {
                    action: Action::Allow,
                    max: None,
                    raw: Some(Value::String(expr.to_string())),
                },
            );
        }
    }
    Ok(ReadPolicy {
        kind: Kind::Agentgateway,
        rules,
        server_rules: BTreeMap::new(),
        doc,
    })
}

/// Calls a minute an Intercept `rate_limit` (`N/minute|hour|day`) allows, rounded up.
fn intercept_per_minute(rate: &str) -> Option<u64> {
    let (n, window) = rate.split_once('/')?;
    let n: u64 = n.trim().parse().ok()?;
    let minutes = match window.trim() {
        "minute" => 1,
        "hour" => 60,
        "day" => 1440,
        _ => return None,
    };
    Some(n.div_ceil(minutes))
}

/// What one Intercept tool entry (`{rules: [...]}`) says.
fn intercept_rule(name: &str, entry: &Value, path: &str) -> Result<Rule> {
    let list = match entry.get("rules") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a.clone(),
        Some(_) => {
            return Err(Error::new(format!(
                "{path}: tools.{name}.rules must be a list"
            )))
        }
    };
    let mut action = Action::Allow;
    let mut max: Option<u64> = None;
    for r in &list {
        let this = if r.get("action").and_then(Value::as_str) == Some("deny") {
            Action::Deny
        } else if let Some(rate) = r.get("rate_limit").and_then(Value::as_str) {
            if let Some(m) = intercept_per_minute(rate) {
                max = Some(max.map_or(m, |x| x.min(m)));
            }
            Action::RateLimit
        } else if r
            .get("conditions")
            .and_then(Value::as_array)
            .is_some_and(|c| {
                c.iter().any(|c| {
                    c.get("path")
                        .and_then(Value::as_str)
                        .is_some_and(|p| p.starts_with("args."))
                })
            })
        {
            Action::Validate
        } else if r.get("state").is_some() {
            Action::RateLimit
        } else {
            Action::Allow
        };
        if strictness(this) > strictness(action) {
            action = this;
        }
    }
    Ok(Rule {
        action,
        max,
        raw: Some(entry.clone()),
    })
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
    if doc.get("tools").is_none() {
        if let Some(pointer) = mcp_authorization_pointer(&doc) {
            return parse_agentgateway(doc, &pointer, path);
        }
    }
    let intercept = doc
        .get("tools")
        .and_then(Value::as_object)
        .is_some_and(|t| t.values().any(|r| r.get("rules").is_some()));
    let tools = doc
        .get("tools")
        .and_then(Value::as_object)
        .ok_or_else(|| Error::new(format!("{path}: neither a PolicyLayer or Intercept policy (\"tools\"), Claude Code settings (\"permissions\") nor agentgateway rules (\"mcpAuthorization\")")))?;
    for (name, rule) in tools {
        if intercept {
            if name == "*" {
                // Intercept's wildcard rules apply to every tool; they name none.
                continue;
            }
            rules.insert(name.clone(), intercept_rule(name, rule, path)?);
            continue;
        }
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
        kind: if intercept {
            Kind::Intercept
        } else {
            Kind::PolicyLayer
        },
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

    #[test]
    fn reads_intercept_rules() {
        let p = parse(
            json!({"version": "1", "default": "deny", "hide": ["rm"], "tools": {
                "get": {"rules": []},
                "w": {"rules": [{"name": "r", "rate_limit": "120/hour"}]},
                "api": {"rules": [
                    {"name": "m", "conditions": [{"path": "args.method", "op": "in", "value": ["GET"]}]},
                    {"name": "r", "rate_limit": "10/minute"}]},
                "pay": {"rules": [{"name": "a", "action": "deny", "on_deny": "no"}]},
                "*": {"rules": [{"name": "g", "rate_limit": "60/minute"}]}}}),
            "p.yaml",
        )
        .unwrap();
        assert_eq!(p.kind, Kind::Intercept);
        assert_eq!(p.rules["get"].action, Action::Allow);
        assert_eq!(p.rules["w"].action, Action::RateLimit);
        assert_eq!(p.rules["w"].max, Some(2));
        assert_eq!(p.rules["api"].action, Action::Validate);
        assert_eq!(p.rules["api"].max, Some(10));
        assert_eq!(p.rules["pay"].action, Action::Deny);
        assert_eq!(p.rules["rm"].action, Action::Hide);
        assert!(!p.rules.contains_key("*"), "wildcard rules name no tool");
    }

    #[test]
    fn reads_intercept_yaml_and_agentgateway_from_files() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("p.yaml");
        std::fs::write(&file, "version: \"1\"\ndefault: deny\ntools: {}\n").unwrap();
        let p = load(file.to_str().unwrap()).unwrap();
        assert_eq!(p.kind, Kind::Intercept, "YAML with tools is Intercept's");

        // A whole agentgateway config: the rules are found in the route's policies.
        std::fs::write(
            &file,
            r#"# comment
binds:
- port: 3000
  listeners:
  - routes:
    - policies:
        mcpAuthorization:
          rules:
          - 'mcp.tool.name == "echo"'
          - 'jwt.sub == "test-user" && mcp.tool.name == "add"'
          - jwt.sub == "admin"
"#,
        )
        .unwrap();
        let p = load(file.to_str().unwrap()).unwrap();
        assert_eq!(p.kind, Kind::Agentgateway);
        assert_eq!(p.rules.keys().collect::<Vec<_>>(), ["add", "echo"]);
        assert_eq!(p.rules["echo"].action, Action::Allow);
        assert_eq!(
            mcp_authorization_pointer(&p.doc).unwrap(),
            "/binds/0/listeners/0/routes/0/policies/mcpAuthorization"
        );

        std::fs::write(&file, "mcpAuthorization:\n  rules: [1]\n").unwrap();
        assert!(load(file.to_str().unwrap()).is_err());
        std::fs::write(&file, "a: [b\n").unwrap();
        let err = load(file.to_str().unwrap()).unwrap_err().to_string();
        assert!(err.contains("neither a JSON policy"), "{err}");
    }
}
