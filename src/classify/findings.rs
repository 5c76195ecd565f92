//! Findings whose logic is code, not phrase lists: hidden characters, annotations that
//! understate a tool, and duplicate tool names. Their IDs and docs live in the rules file
//! (rules with a `check`), so `mcprisk rules ID` explains them like any other.

use super::rules::RuleFile;
use crate::model::{Category, Finding, Severity, Tool};
use serde_json::Value;
use std::collections::HashMap;

/// The code checks, by the `check` name the rules file gives them.
pub const CHECK_HIDDEN_CHARACTERS: &str = "hidden-characters";
/// Annotations that claim less risk than the tool has.
pub const CHECK_ANNOTATION_CONTRADICTION: &str = "annotation-contradiction";
/// Two tools with the same name.
pub const CHECK_DUPLICATE_NAME: &str = "duplicate-tool-name";

/// Every code check, so tests can prove each has a rule.
pub const ALL_CHECKS: [&str; 3] = [
    CHECK_HIDDEN_CHARACTERS,
    CHECK_ANNOTATION_CONTRADICTION,
    CHECK_DUPLICATE_NAME,
];

/// Most strings of a tool looked at for hidden characters.
const MAX_STRINGS: usize = 10_000;

fn finding(rules: &RuleFile, check: &str, tool: Option<&str>, message: String) -> Option<Finding> {
    let rule = rules
        .rules
        .iter()
        .find(|r| r.check.as_deref() == Some(check))?;
    Some(Finding {
        rule: rule.id.clone(),
        severity: rule.severity.unwrap_or(Severity::Medium),
        tool: tool.map(str::to_string),
        message,
    })
}

/// What kind of character hides text from a human reader.
fn hidden_kind(c: char) -> Option<&'static str> {
    match c {
        '\u{1b}' => Some("ANSI escape"),
        '\u{200b}'..='\u{200f}' | '\u{2060}'..='\u{2064}' | '\u{feff}' | '\u{180e}' => {
            Some("zero-width")
        }
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => Some("bidi override"),
        '\u{e0000}'..='\u{e007f}' => Some("Unicode tag"),
        '\u{fff9}'..='\u{fffb}' => Some("interlinear annotation"),
        c if c.is_control() && !matches!(c, '\n' | '\t' | '\r') => Some("control"),
        _ => None,
    }
}

/// Whether any string (key or value) under `v` holds a hidden character; no allocation.
fn any_hidden(v: &Value, budget: &mut usize) -> bool {
    if *budget == 0 {
        return false;
    }
    *budget -= 1;
    let hidden = |s: &str| {
        // Printable ASCII is the common case: skip the char loop for it.
        s.bytes()
            .any(|b| !(0x20..0x7f).contains(&b) && !matches!(b, b'\n' | b'\t' | b'\r'))
            && s.chars().any(|c| hidden_kind(c).is_some())
    };
    match v {
        Value::String(s) => hidden(s),
        Value::Array(items) => items.iter().any(|i| any_hidden(i, budget)),
        Value::Object(map) => map.iter().any(|(k, i)| hidden(k) || any_hidden(i, budget)),
        _ => false,
    }
}

/// Hidden or deceptive characters anywhere in the tool's JSON (names, descriptions, schema).
pub fn hidden_characters(rules: &RuleFile, tool: &Tool) -> Option<Finding> {
    if !any_hidden(&tool.raw, &mut { MAX_STRINGS }) {
        return None;
    }
    let mut kinds: Vec<&'static str> = Vec::new();
    let mut count = 0usize;
    let mut where_found: Vec<String> = Vec::new();
    let mut seen = 0usize;
    let mut stack: Vec<(&Value, String)> = vec![(&tool.raw, String::new())];
    while let Some((v, path)) = stack.pop() {
        seen += 1;
        if seen > MAX_STRINGS {
            break;
        }
        match v {
            Value::String(s) => scan(s, &path, &mut kinds, &mut count, &mut where_found),
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    stack.push((item, format!("{path}[{i}]")));
                }
            }
            Value::Object(map) => {
                for (k, item) in map {
                    let sub = if path.is_empty() {
                        k.clone()
                    } else {
                        format!("{path}.{k}")
                    };
                    scan(k, &sub, &mut kinds, &mut count, &mut where_found);
                    stack.push((item, sub));
                }
            }
            _ => {}
        }
    }
    if count == 0 {
        return None;
    }
    kinds.sort_unstable();
    kinds.dedup();
    where_found.sort();
    where_found.dedup();
    where_found.truncate(5);
    finding(
        rules,
        CHECK_HIDDEN_CHARACTERS,
        Some(&tool.name),
        format!(
            "{count} hidden or deceptive character(s) ({}) in {}",
            kinds.join(", "),
            where_found.join(", ")
        ),
    )
}

fn scan(
    s: &str,
    path: &str,
    kinds: &mut Vec<&'static str>,
    count: &mut usize,
    at: &mut Vec<String>,
) {
    let mut here = false;
    for c in s.chars() {
        if let Some(k) = hidden_kind(c) {
            *count += 1;
            kinds.push(k);
            here = true;
        }
    }
    if here {
        at.push(if path.is_empty() {
            "(root)".into()
        } else {
            path.to_string()
        });
    }
}

/// Annotations that say a tool is safer than its verdict.
pub fn annotation_contradiction(
    rules: &RuleFile,
    tool: &Tool,
    category: Category,
) -> Option<Finding> {
    let message = if tool.hint("readOnlyHint") == Some(true) && category != Category::Read {
        format!("annotation readOnlyHint=true, but the tool is classified {category}")
    } else if tool.hint("destructiveHint") == Some(false) && category == Category::Destructive {
        "annotation destructiveHint=false, but the tool is classified Destructive".to_string()
    } else {
        return None;
    };
    finding(
        rules,
        CHECK_ANNOTATION_CONTRADICTION,
        Some(&tool.name),
        message,
    )
}

/// Tool names that appear more than once; clients keep one and drop the other unpredictably.
pub fn duplicate_names(rules: &RuleFile, tools: &[Tool]) -> Vec<Finding> {
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for t in tools {
        *counts.entry(t.name.as_str()).or_default() += 1;
    }
    let mut dups: Vec<(&str, usize)> = counts.into_iter().filter(|&(_, n)| n > 1).collect();
    dups.sort();
    dups.into_iter()
        .filter_map(|(name, n)| {
            finding(
                rules,
                CHECK_DUPLICATE_NAME,
                Some(name),
                format!("the name is used by {n} tools; a client may call a different one than was reviewed"),
            )
        })
        .collect()
}
