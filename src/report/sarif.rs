//! SARIF 2.1.0 for GitHub code scanning and other SARIF viewers.
//!
//! Results: every finding, and every tool at or above High (or `--fail-on` when lower) under
//! the rule that explains its verdict (see [`ci::tool_rule`]), so a reviewer sees the dangerous
//! tools. Each result is located at the config file line that declares its server, else at the
//! tool list file, and always carries a logical location `server/tool`. Rules come with their
//! docs from the rules file and a `security-severity` GitHub uses to rank alerts.
//! `partialFingerprints` hash the rule, server, tool and message, nothing volatile, so an alert
//! keeps its identity across runs.
//!
//! Tool text is hostile: it is made visible (control and invisible characters as `\u{XXXX}`),
//! cut to one line, and `[`, `]` and `\` are backslash-escaped in messages so it cannot form
//! SARIF embedded links. JSON escaping is serde's.

use super::ci::{self, CiOptions};
use super::Report;
use crate::classify::{Rule, RuleFile, RuleKind};
use crate::model::{Origin, ServerAssessment, Severity};
use crate::output::sanitize;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::Write;

/// The schema URI written into every document.
pub const SCHEMA_URI: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// The key of our fingerprint in `partialFingerprints`.
pub const FINGERPRINT_KEY: &str = "mcprisk/v1";

/// SARIF `level` for a severity.
pub fn level(s: Severity) -> &'static str {
    match s {
        Severity::Critical | Severity::High => "error",
        Severity::Medium => "warning",
        Severity::Low => "note",
    }
}

/// GitHub's `security-severity` (a CVSS-like score) for a severity.
pub fn security_severity(s: Severity) -> &'static str {
    match s {
        Severity::Low => "2.0",
        Severity::Medium => "5.0",
        Severity::High => "7.5",
        Severity::Critical => "9.5",
    }
}

/// Text for a SARIF message: visible, one line, no embedded links (`[`, `]`, `\` escaped).
pub fn message_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in sanitize::one_line(s, 2000).chars() {
        if matches!(c, '[' | ']' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A relative path as a URI reference (forward slashes, percent-encoded), resolved against
/// `%SRCROOT%`; an absolute path as a `file:` URI.
fn artifact_location(path: &str) -> Value {
    let p = std::path::Path::new(path);
    if p.is_absolute() {
        if let Ok(u) = url::Url::from_file_path(p) {
            return json!({ "uri": u.as_str() });
        }
    }
    let mut rel = path.replace('\\', "/");
    while let Some(rest) = rel.strip_prefix("./") {
        rel = rest.to_string();
    }
    let mut uri = String::with_capacity(rel.len());
    for b in rel.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            uri.push(b as char);
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    json!({ "uri": uri, "uriBaseId": "%SRCROOT%" })
}

fn fingerprint(parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p.as_bytes());
        h.update([0u8]);
    }
    h.finalize()
        .iter()
        .take(16)
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn locations(origin: Option<&Origin>, server: &str, tool: Option<&str>) -> Value {
    let server_name = sanitize::one_line(server, 200);
    let logical = match tool {
        Some(t) => {
            let tool_name = sanitize::one_line(t, 200);
            json!({
                "name": tool_name,
                "fullyQualifiedName": format!("{server_name}/{tool_name}"),
                "kind": "function",
            })
        }
        None => json!({ "name": server_name, "fullyQualifiedName": server_name, "kind": "module" }),
    };
    let mut loc = json!({ "logicalLocations": [logical] });
    if let Some(o) = origin {
        let mut physical = json!({ "artifactLocation": artifact_location(&o.file) });
        // A region is required by GitHub for an alert to point at a line; a tool list file
        // without a known line points at its first line.
        physical["region"] = json!({ "startLine": o.line.unwrap_or(1).max(1) });
        loc["physicalLocation"] = physical;
    }
    json!([loc])
}

/// Where a finding about an offer is: the server's declaration, and the offer (`prompt:NAME`,
/// `resource:URI`...) as a logical location of kind `resource`.
fn offer_locations(origin: Option<&Origin>, server: &str, offer: &str) -> Value {
    let mut locs = locations(origin, server, None);
    let server_name = sanitize::one_line(server, 200);
    let name = sanitize::one_line(offer, 200);
    locs[0]["logicalLocations"] = json!([{
        "name": name,
        "fullyQualifiedName": format!("{server_name}/{name}"),
        "kind": "resource",
    }]);
    locs
}

/// The driver's entry for a rule: its docs from the rules file, or a bare entry for an ID the
/// rules file does not know.
fn rule_descriptor(id: &str, rule: Option<&Rule>) -> Value {
    let Some(r) = rule else {
        return json!({
            "id": id,
            "shortDescription": { "text": id },
            "properties": { "tags": ["security", "mcp"] },
        });
    };
    let kind = match r.kind {
        RuleKind::Category => "category",
        RuleKind::Severity => "severity",
        RuleKind::Signal => "signal",
        RuleKind::Finding => "finding",
        RuleKind::Grade => "grade",
    };
    let mut tags = vec!["security".to_string(), "mcp".to_string(), kind.to_string()];
    if let Some(c) = r.category {
        tags.push(c.as_str().to_lowercase());
    }
    let full = format!("{} {}", r.summary, r.why);
    let help_text = format!(
        "{}\n\nWhy it matters: {}\n\nExample: {}\n\nMore: mcprisk rules {}",
        r.summary, r.why, r.example, r.id
    );
    let help_md = format!(
        "{}\n\n**Why it matters.** {}\n\n**Example:** {}\n\nRun `mcprisk rules {}` for more.",
        sanitize::markdown(&r.summary),
        sanitize::markdown(&r.why),
        sanitize::markdown(&r.example),
        r.id
    );
    let mut props = json!({ "tags": tags, "precision": "medium" });
    if let Some(s) = ci::rule_severity(r) {
        props["security-severity"] = json!(security_severity(s));
        props["problem.severity"] = json!(match s {
            Severity::Critical | Severity::High => "error",
            Severity::Medium => "warning",
            Severity::Low => "recommendation",
        });
    }
    let mut d = json!({
        "id": r.id,
        "name": r.name,
        "shortDescription": { "text": r.summary },
        "fullDescription": { "text": full },
        "help": { "text": help_text, "markdown": help_md },
        "properties": props,
    });
    if let Some(s) = ci::rule_severity(r) {
        d["defaultConfiguration"] = json!({ "level": level(s) });
    }
    d
}

/// Collects rule IDs in first-use order and hands out their indices.
struct RuleTable<'a> {
    rules: &'a RuleFile,
    ids: Vec<String>,
    index: BTreeMap<String, usize>,
}

impl<'a> RuleTable<'a> {
    fn index_of(&mut self, id: &str) -> usize {
        if let Some(i) = self.index.get(id) {
            return *i;
        }
        let i = self.ids.len();
        self.ids.push(id.to_string());
        self.index.insert(id.to_string(), i);
        i
    }

    fn descriptors(&self) -> Vec<Value> {
        self.ids
            .iter()
            .map(|id| rule_descriptor(id, self.rules.get(id)))
            .collect()
    }
}

fn server_results(
    s: &ServerAssessment,
    opts: &CiOptions,
    table: &mut RuleTable,
    results: &mut Vec<Value>,
) {
    let origin = s.origin.as_ref();
    for f in &s.findings {
        let i = table.index_of(&f.rule);
        // A finding about a prompt, resource or template is located at it, as at a tool.
        let offer = f.subject.as_ref().map(|o| format!("{}:{}", o.kind, o.name));
        let fp = fingerprint(&[
            &f.rule,
            &s.name,
            f.tool.as_deref().or(offer.as_deref()).unwrap_or(""),
            &f.message,
        ]);
        let mut props =
            json!({ "severity": f.severity, "server": sanitize::one_line(&s.name, 200) });
        if let Some(t) = &f.tool {
            props["tool"] = json!(sanitize::one_line(t, 200));
        }
        if let Some(o) = &f.subject {
            props["subject"] = json!({
                "kind": o.kind.as_str(),
                "name": sanitize::one_line(&o.name, 200),
            });
        }
        let located = match (&f.tool, &offer) {
            (Some(t), _) => locations(origin, &s.name, Some(t)),
            (None, Some(o)) => offer_locations(origin, &s.name, o),
            (None, None) => locations(origin, &s.name, None),
        };
        results.push(json!({
            "ruleId": f.rule,
            "ruleIndex": i,
            "kind": "fail",
            "level": level(f.severity),
            "message": { "text": message_text(&ci::finding_message(s, f)) },
            "locations": located,
            "partialFingerprints": { FINGERPRINT_KEY: fp },
            "properties": props,
        }));
    }
    for t in ci::reported_tools(s, opts) {
        let Some(rule) = ci::tool_rule(t, table.rules) else {
            continue;
        };
        let rule = rule.to_string();
        let i = table.index_of(&rule);
        let fp = fingerprint(&[&rule, &s.name, &t.name, t.category.as_str()]);
        results.push(json!({
            "ruleId": rule,
            "ruleIndex": i,
            "kind": "fail",
            "level": level(t.severity),
            "message": { "text": message_text(&ci::tool_message(s, t)) },
            "locations": locations(origin, &s.name, Some(&t.name)),
            "partialFingerprints": { FINGERPRINT_KEY: fp },
            "properties": {
                "severity": t.severity,
                "category": t.category,
                "needsReview": t.needs_review.as_ref().map(|r| r.alternative),
                "recommended": t.recommended.action.as_str(),
                "server": sanitize::one_line(&s.name, 200),
                "tool": sanitize::one_line(&t.name, 200),
            },
        }));
    }
}

/// The SARIF document.
pub fn document(report: &Report, rules: &RuleFile, opts: &CiOptions) -> Value {
    let mut table = RuleTable {
        rules,
        ids: Vec::new(),
        index: BTreeMap::new(),
    };
    let mut results = Vec::new();
    for s in report.servers {
        server_results(s, opts, &mut table, &mut results);
    }
    let mut notifications = Vec::new();
    let mut successful = true;
    for s in report.servers {
        for e in &s.errors {
            let failed = e.location == "server";
            successful &= !failed;
            let what = match &e.tool {
                Some(t) => format!("{} ({})", e.location, sanitize::one_line(t, 120)),
                None => e.location.clone(),
            };
            notifications.push(json!({
                "level": if failed { "error" } else { "warning" },
                "message": { "text": message_text(&format!(
                    "MCP server '{}': {}: {}",
                    sanitize::one_line(&s.name, 80),
                    what,
                    e.message
                )) },
            }));
        }
    }
    json!({
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "mcprisk",
                "semanticVersion": env!("CARGO_PKG_VERSION"),
                "version": env!("CARGO_PKG_VERSION"),
                "rules": table.descriptors(),
            } },
            "invocations": [{
                "executionSuccessful": successful,
                "toolExecutionNotifications": notifications,
            }],
            "originalUriBaseIds": { "%SRCROOT%": { "description": {
                "text": "The directory mcprisk ran in (the repository root in CI)."
            } } },
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    })
}

/// Writes the SARIF document.
pub fn write(
    report: &Report,
    rules: &RuleFile,
    opts: &CiOptions,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, &document(report, rules, opts))?;
    writeln!(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_cannot_form_links_or_hide_text() {
        assert_eq!(message_text("see [x](1) \\"), "see \\[x\\](1) \\\\");
        assert_eq!(message_text("a\u{202e}b\nc"), "a\\\\u{202E}b c");
    }

    #[test]
    fn paths_become_uris() {
        assert_eq!(
            artifact_location("./.mcp.json"),
            json!({"uri": ".mcp.json", "uriBaseId": "%SRCROOT%"})
        );
        assert_eq!(
            artifact_location("my dir/a#b.json")["uri"],
            json!("my%20dir/a%23b.json")
        );
        assert_eq!(
            artifact_location("/etc/x y.json")["uri"],
            json!("file:///etc/x%20y.json")
        );
    }
}
