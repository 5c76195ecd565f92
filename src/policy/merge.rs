//! Merging a freshly recommended policy into the file on disk: a rule a person changed by hand
//! is kept (and reported when looser than recommended), rules for tools that are gone are
//! dropped, and everything the file holds that mcprisk does not manage is left alone.
//!
//! A rule that differs from the recommendation is taken to be a hand edit: the file carries
//! no other record of who wrote what.

use super::read::{strictness, Kind, ReadPolicy};
use crate::model::ServerAssessment;
use serde_json::{json, Value};

/// What merging kept and dropped, for the user.
#[derive(Debug, Default)]
pub struct MergeNotes {
    pub kept: Vec<String>,
    pub looser: Vec<String>,
    pub dropped: Vec<String>,
}

/// Merges a new PolicyLayer policy into the existing one.
pub fn policylayer(new: &Value, old: &ReadPolicy) -> (Value, MergeNotes) {
    let mut notes = MergeNotes::default();
    let mut doc = old.doc.clone();
    let new_tools = new["tools"].as_object().cloned().unwrap_or_default();
    let new_hide: std::collections::HashSet<String> = new["hide"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    let mut tools = serde_json::Map::new();
    let mut hide: Vec<String> = Vec::new();
    let recommended = |name: &str| -> Option<(crate::model::Action, Option<&Value>)> {
        if new_hide.contains(name) {
            Some((crate::model::Action::Hide, None))
        } else {
            new_tools.get(name).map(|r| {
                let read = super::read::parse(json!({"tools": {name: r}}), "new").ok();
                let action = read
                    .and_then(|p| p.rules.get(name).map(|x| x.action))
                    .unwrap_or(crate::model::Action::Allow);
                (action, Some(r))
            })
        }
    };
    let mut names: Vec<String> = new_tools
        .keys()
        .cloned()
        .chain(new_hide.iter().cloned())
        .collect();
    names.sort();
    names.dedup();
    for name in &names {
        let Some((rec_action, rec_rule)) = recommended(name) else {
            continue;
        };
        match old.rules.get(name) {
            Some(existing) => {
                let same = match (&existing.raw, rec_rule) {
                    // A rule in mcprisk's older condition format is its own, not a hand edit.
                    (Some(a), Some(b)) => a == b || super::policylayer::upgrade_rule(a) == *b,
                    (None, None) => existing.action == rec_action,
                    _ => false,
                };
                if !same {
                    notes.kept.push(name.clone());
                    if strictness(existing.action) < strictness(rec_action) {
                        notes.looser.push(format!(
                            "{name}: {} kept, {} recommended",
                            existing.action.as_str(),
                            rec_action.as_str()
                        ));
                    }
                }
                match (&existing.raw, rec_rule) {
                    (Some(_), Some(rec)) if same => {
                        tools.insert(name.clone(), rec.clone());
                    }
                    (Some(raw), _) => {
                        tools.insert(name.clone(), raw.clone());
                    }
                    (None, _) => hide.push(name.clone()),
                }
            }
            None => match rec_rule {
                Some(r) => {
                    tools.insert(name.clone(), r.clone());
                }
                None => hide.push(name.clone()),
            },
        }
    }
    let kept: std::collections::HashSet<&String> = names.iter().collect();
    for name in old.rules.keys() {
        if !kept.contains(name) {
            notes.dropped.push(name.clone());
        }
    }
    hide.sort();
    if let Value::Object(m) = &mut doc {
        m.insert("tools".into(), Value::Object(tools));
        if hide.is_empty() {
            m.remove("hide");
        } else {
            m.insert("hide".into(), json!(hide));
        }
        m.entry("version").or_insert(json!("1"));
        m.entry("default").or_insert(json!("deny"));
    }
    (doc, notes)
}

/// Merges new Claude Code permissions into existing settings: entries that are not about the
/// scanned servers' tools (other MCP servers, Bash rules...) are kept as they are.
pub fn claude_code(
    new: &Value,
    old: &ReadPolicy,
    servers: &[ServerAssessment],
) -> (Value, MergeNotes) {
    let mut notes = MergeNotes::default();
    let mut doc = old.doc.clone();
    let ours: std::collections::HashSet<String> = servers
        .iter()
        .flat_map(|s| {
            s.tools
                .iter()
                .map(|t| super::claude_code::rule_name(&s.name, &t.name))
        })
        .collect();
    let prefixes: Vec<String> = servers
        .iter()
        .map(|s| super::claude_code::rule_name(&s.name, ""))
        .collect();
    let lists = ["allow", "ask", "deny"];
    let mut out: Vec<Vec<String>> = vec![Vec::new(); 3];
    for (i, list) in lists.iter().enumerate() {
        for v in old.doc["permissions"][list]
            .as_array()
            .into_iter()
            .flatten()
        {
            let Some(s) = v.as_str() else { continue };
            let managed = prefixes.iter().any(|p| s.starts_with(p.as_str()));
            if !managed {
                out[i].push(s.to_string());
            } else if !ours.contains(s) {
                notes.dropped.push(s.to_string());
            }
        }
    }
    for (i, list) in lists.iter().enumerate() {
        for v in new["permissions"][list].as_array().into_iter().flatten() {
            let Some(name) = v.as_str() else { continue };
            match old.rules.get(name) {
                Some(existing) => {
                    let j = match existing.action {
                        crate::model::Action::Allow => 0,
                        crate::model::Action::Deny | crate::model::Action::Hide => 2,
                        _ => 1,
                    };
                    if j != i {
                        notes.kept.push(name.to_string());
                        if j < i {
                            notes
                                .looser
                                .push(format!("{name}: {} kept, {} recommended", lists[j], list));
                        }
                    }
                    out[j].push(name.to_string());
                }
                None => out[i].push(name.to_string()),
            }
        }
    }
    for v in &mut out {
        v.sort();
        v.dedup();
    }
    if !doc.is_object() {
        doc = json!({});
    }
    doc["permissions"]["allow"] = json!(out[0]);
    doc["permissions"]["ask"] = json!(out[1]);
    doc["permissions"]["deny"] = json!(out[2]);
    (doc, notes)
}

/// Merges new agentgateway `mcpAuthorization` rules into the existing ones (the snippet, or
/// a whole config holding it). A rule of the old file that the new set lacks is kept: when it
/// names a scanned tool the recommendation refuses, it is a hand edit (and looser than
/// recommended); when it names only tools no scanned server offers, it is dropped; when it
/// names no tool (a rule about users, say), it is left alone.
pub fn agentgateway(
    new: &Value,
    old: &ReadPolicy,
    servers: &[ServerAssessment],
) -> (Value, MergeNotes) {
    let mut notes = MergeNotes::default();
    let new_rules: Vec<String> = new["mcpAuthorization"]["rules"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(String::from))
        .collect();
    let pointer = super::read::mcp_authorization_pointer(&old.doc)
        .unwrap_or_else(|| "/mcpAuthorization".into());
    let old_rules: Vec<String> = old
        .doc
        .pointer(&pointer)
        .and_then(|m| m.get("rules"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(String::from))
        .collect();
    // Sets built once keep the merge linear in the tool count (issue 12, item 12).
    let offered_names: std::collections::HashSet<&str> = servers
        .iter()
        .flat_map(|s| s.tools.iter().map(|t| t.name.as_str()))
        .collect();
    let offered = |name: &str| offered_names.contains(name);
    let new_set: std::collections::HashSet<&String> = new_rules.iter().collect();
    let mut out: Vec<String> = Vec::new();
    for r in &old_rules {
        if new_set.contains(r) {
            out.push(r.clone());
            continue;
        }
        let names = super::agentgateway::named_tools(r);
        if names.is_empty() {
            out.push(r.clone());
        } else if names.iter().any(|n| offered(n)) {
            notes.kept.push(r.clone());
            for n in names.iter().filter(|n| offered(n)) {
                notes
                    .looser
                    .push(format!("{n}: allowed kept, denied recommended"));
            }
            out.push(r.clone());
        } else {
            notes.dropped.extend(names);
        }
    }
    let mut present: std::collections::HashSet<String> = out.iter().cloned().collect();
    for r in &new_rules {
        if present.insert(r.clone()) {
            out.push(r.clone());
        }
    }
    let mut doc = old.doc.clone();
    if !doc.is_object() {
        doc = json!({});
    }
    match doc.pointer_mut(&pointer) {
        Some(Value::Object(m)) => {
            m.insert("rules".into(), json!(out));
        }
        _ => doc["mcpAuthorization"] = json!({ "rules": out }),
    }
    (doc, notes)
}

/// Merges by the existing file's flavour.
pub fn merge(new: &Value, old: &ReadPolicy, servers: &[ServerAssessment]) -> (Value, MergeNotes) {
    match old.kind {
        // Intercept's document has PolicyLayer's shape: `tools` by name, `hide`, `version`
        // and `default`; only the rule objects differ, and those are kept or replaced whole.
        Kind::PolicyLayer | Kind::Intercept => policylayer(new, old),
        Kind::ClaudeCode => claude_code(new, old, servers),
        Kind::Agentgateway => agentgateway(new, old, servers),
    }
}
