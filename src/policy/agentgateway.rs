//! agentgateway `mcpAuthorization`: a list of CEL rules, each allowing the MCP calls it
//! evaluates true for; a tool that no rule allows is removed from `tools/list` and its calls
//! are refused. Documented in agentgateway's schema/config.md
//! (`binds[].listeners[].routes[].policies.mcpAuthorization.rules`, `[]string`) and
//! examples/authorization/config.yaml (`mcp.tool.name == "echo"`); `mcp.tool.name` is in
//! schema/cel.md.
//!
//! What the rules can say: only which tools are allowed. schema/cel.md says request-time CEL
//! carries only the tool's identity, not its arguments, so argument validation cannot be
//! written as an authorization rule, and rate limits and approvals are not part of
//! `mcpAuthorization`. So: allow and rate-limit tools get a rule (the rate limit must be set
//! up with agentgateway's rate-limit policies); validate, approval, hide and deny tools get
//! none, and are refused.

use crate::model::{Action, ServerAssessment};
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// Put at the top of the YAML file: where the snippet goes and what it leaves out.
pub const HEADER: &str = "\
# agentgateway mcpAuthorization rules written by mcprisk: put this under a route's
# `policies:` (binds[].listeners[].routes[].policies). A tool no rule allows is refused.
# Rate limits are not part of mcpAuthorization: configure them with a rate-limit policy.
";

/// Whether a recommendation lets the tool be called without a person or an argument check.
pub fn allows(action: Action) -> bool {
    matches!(action, Action::Allow | Action::RateLimit)
}

/// A CEL string literal (double-quoted, with `\` escapes).
pub fn cel_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The rule that allows one tool.
pub fn rule(tool: &str) -> String {
    format!("mcp.tool.name == {}", cel_string(tool))
}

/// The tool names a rule allows by `mcp.tool.name == "..."` (either quote style, and either
/// side of `==`), for reading a file back. A rule naming none is about something else.
pub fn named_tools(expr: &str) -> Vec<String> {
    const FIELD: &str = "mcp.tool.name";
    let mut out = Vec::new();
    let bytes = expr.as_bytes();
    let mut from = 0;
    while let Some(i) = expr[from..].find(FIELD) {
        let at = from + i;
        from = at + FIELD.len();
        // After: `== "lit"`.
        let after = expr[from..].trim_start();
        if let Some(rest) = after.strip_prefix("==") {
            if let Some((lit, _)) = string_literal(rest.trim_start()) {
                out.push(lit);
                continue;
            }
        }
        // Before: `"lit" ==`.
        let before = expr[..at].trim_end();
        if let Some(b) = before.strip_suffix("==") {
            let b = b.trim_end();
            if let Some(q) = b.chars().last().filter(|c| *c == '"' || *c == '\'') {
                // Find the opening quote by scanning literals from the start of the rule.
                let mut j = 0;
                while j < b.len() {
                    if bytes[j] as char == q {
                        if let Some((lit, len)) = string_literal(&b[j..]) {
                            if j + len == b.len() {
                                out.push(lit);
                                break;
                            }
                            j += len;
                            continue;
                        }
                    }
                    j += 1;
                }
            }
        }
    }
    out
}

/// A CEL string literal at the start of `s`: its value and its length in bytes.
fn string_literal(s: &str) -> Option<(String, usize)> {
    let quote = s.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let mut out = String::new();
    let mut chars = s.char_indices().skip(1);
    while let Some((i, c)) = chars.next() {
        match c {
            c if c == quote => return Some((out, i + 1)),
            '\\' => {
                let (_, e) = chars.next()?;
                match e {
                    'n' => out.push('\n'),
                    'r' => out.push('\r'),
                    't' => out.push('\t'),
                    'u' => {
                        let hex: String =
                            (0..4).filter_map(|_| chars.next().map(|x| x.1)).collect();
                        out.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
                    }
                    e => out.push(e),
                }
            }
            c => out.push(c),
        }
    }
    None
}

/// The `mcpAuthorization` snippet for every tool of every server. Tool names are what the
/// rules match, so the same name on two servers is allowed only when both allow it.
pub fn policy(servers: &[ServerAssessment]) -> Value {
    let mut allowed: BTreeMap<String, bool> = BTreeMap::new();
    for s in servers {
        for t in &s.tools {
            let ok = allows(t.recommended.action);
            allowed
                .entry(t.name.clone())
                .and_modify(|a| *a = *a && ok)
                .or_insert(ok);
        }
    }
    let rules: Vec<String> = allowed
        .iter()
        .filter(|(_, ok)| **ok)
        .map(|(name, _)| rule(name))
        .collect();
    json!({ "mcpAuthorization": { "rules": rules } })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_name_their_tools_back() {
        for name in ["get", "we\"ird\\name", "tab\there", "ünï", "it's"] {
            assert_eq!(named_tools(&rule(name)), vec![name.to_string()], "{name}");
        }
        assert_eq!(
            named_tools(r#"jwt.sub == "me" && 'add' == mcp.tool.name"#),
            vec!["add".to_string()]
        );
        assert_eq!(
            named_tools(r#"mcp.tool.name == "a" || mcp.tool.name == "b""#),
            vec!["a".to_string(), "b".to_string()]
        );
        assert!(named_tools(r#"jwt.sub == "admin""#).is_empty());
    }
}
