//! A catalog record's pages as `lookup` prints them, like the PolicyLayer reference pages: the
//! server's identity above its table and recommended policy, and one tool's risk and policy.

use super::json::SCHEMA_VERSION;
use super::{table, Report};
use crate::catalog::Record;
use crate::model::{Action, Category, Finding, ServerAssessment, ToolAssessment};
use crate::output::sanitize::one_line;
use crate::policy::policylayer;
use serde_json::{json, Value};
use std::io::{self, Write};

/// The server's page for the terminal: the record's identity, the assessment table, and the
/// recommended policy (`policy`, PolicyLayer's policy.json).
pub fn write_server(
    w: &mut dyn Write,
    record: &Record,
    report: &Report,
    policy: &Value,
    color: bool,
    width: u16,
) -> io::Result<()> {
    write_identity(w, record)?;
    table::write(report, w, color, width)?;
    writeln!(w, "Recommended policy (PolicyLayer policy.json):")?;
    crate::output::inert::json_pretty(&mut *w, policy)?;
    writeln!(w)
}

/// The record's identity, auth and snapshot lines, above the server's table.
fn write_identity(w: &mut dyn Write, r: &Record) -> io::Result<()> {
    writeln!(w, "{} — {}", one_line(&r.name, 80), one_line(&r.id, 120))?;
    writeln!(w, "{}", one_line(&r.summary, 200))?;
    let level = serde_json::to_value(r.identity.level)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default();
    writeln!(
        w,
        "Identity: {} ({level}); {}",
        one_line(&r.publisher, 80),
        one_line(&r.identity.evidence.join("; "), 300)
    )?;
    let kinds: Vec<String> = r
        .auth
        .kinds
        .iter()
        .filter_map(|k| serde_json::to_value(k).ok()?.as_str().map(String::from))
        .collect();
    let secrets: Vec<&str> = r
        .auth
        .variables
        .iter()
        .filter(|v| v.secret)
        .map(|v| v.name.as_str())
        .collect();
    writeln!(
        w,
        "Auth: {}{}",
        kinds.join(", "),
        if secrets.is_empty() {
            String::new()
        } else {
            format!("; secrets: {}", one_line(&secrets.join(", "), 200))
        }
    )?;
    if let Some(s) = &r.snapshot {
        writeln!(
            w,
            "Tools: snapshot of {} taken {} ({})",
            one_line(&s.source, 120),
            one_line(&s.taken, 20),
            one_line(&s.fingerprint, 80)
        )?;
        let mut also = Vec::new();
        if s.instructions.is_some() {
            also.push("instructions".to_string());
        }
        for (n, what) in [
            (s.prompts.len(), "prompt(s)"),
            (s.resources.len(), "resource(s)"),
            (s.resource_templates.len(), "resource template(s)"),
        ] {
            if n > 0 {
                also.push(format!("{n} {what}"));
            }
        }
        if !also.is_empty() {
            writeln!(w, "Also offers: {}", also.join(", "))?;
        }
    }
    if let Some(c) = &r.command {
        writeln!(w, "Start: {}", one_line(c, 200))?;
    }
    writeln!(w)
}

/// The page of a record without tool snapshot: what is known, why there are no tools, and
/// the exact command that scans it.
pub fn write_unscanned(w: &mut dyn Write, record: &Record) -> io::Result<()> {
    write_identity(w, record)?;
    match &record.unscanned {
        Some(u) => {
            writeln!(
                w,
                "No tool snapshot: {} (tried {}).",
                one_line(&u.outcome, 40),
                one_line(&u.tried, 20)
            )?;
            writeln!(w, "It said: {}", one_line(&u.reason, 500))?;
            writeln!(w, "Scan it yourself, with real values for its variables:")?;
            writeln!(w, "  {}", one_line(&u.scan, 500))
        }
        None => {
            writeln!(w, "No tool snapshot yet.")?;
            match record.packages.first() {
                Some(p) if p.registry == "npm" || p.registry == "pypi" => {
                    let pin = if p.registry == "npm" { "@" } else { "==" };
                    let spec = match &p.version {
                        Some(v) => format!("{}{pin}{v}", p.identifier),
                        None => p.identifier.clone(),
                    };
                    writeln!(w, "Scan it: mcprisk scan --{} {}", p.registry, spec)
                }
                _ => writeln!(w, "Scan it: mcprisk scan -- <command that starts it>"),
            }
        }
    }
}

/// The policy.json with this tool's recommended rule only, as on a tool's record page.
pub fn single_tool_policy(t: &ToolAssessment) -> Value {
    let mut doc = json!({"version": "1", "default": "deny"});
    match policylayer::tool_rule(t) {
        Some(rule) => doc["tools"] = json!({ t.name.clone(): rule }),
        None if t.recommended.action == Action::Hide => {
            doc["hide"] = json!([t.name]);
            doc["tools"] = json!({});
        }
        None => doc["tools"] = json!({}),
    }
    doc
}

/// A policy.json that refuses every tool, to show how a tool is blocked.
fn how_to_deny() -> Value {
    json!({"version": "1", "default": "deny", "tools": {}})
}

/// A policy.json that rate-limits this tool only (10 calls a minute unless recommended otherwise).
fn how_to_rate_limit(t: &ToolAssessment) -> Value {
    json!({"version": "1", "default": "deny", "tools": { t.name.clone(): {"limits": [{"counter": format!("{}_rate", t.name), "window": "minute", "max": t.recommended.max_per_minute.unwrap_or(10), "scope": "grant"}]}}})
}

/// The server's findings about this tool.
fn findings_of<'a>(server: &'a ServerAssessment, t: &ToolAssessment) -> Vec<&'a Finding> {
    server
        .findings
        .iter()
        .filter(|f| f.tool.as_deref() == Some(t.name.as_str()))
        .collect()
}

/// One tool's page as a JSON document, which the Markdown and HTML tool templates render too.
pub fn tool_document(record: &Record, server: &ServerAssessment, t: &ToolAssessment) -> Value {
    json!({
        "schema_version": SCHEMA_VERSION,
        "server": {"id": record.id, "name": record.name, "publisher": record.publisher, "grade": server.grade},
        "tool": t,
        "findings": findings_of(server, t),
        "policy": single_tool_policy(t),
        "how_to_deny": how_to_deny(),
        "how_to_rate_limit": how_to_rate_limit(t),
    })
}

/// What a tool of its category can do, for the page's "why it needs a policy".
fn category_meaning(t: &ToolAssessment) -> &'static str {
    match t.category {
        Category::Read => "it retrieves data without modifying state",
        Category::Write => "it creates or changes data in a way that can be undone",
        Category::Execute => "it can trigger actions or run processes",
        Category::Destructive => "it can delete, destroy or irreversibly change data or access",
        Category::Financial => "it can move money or create a financial obligation",
    }
}

/// One tool's page for the terminal: what it does, why it needs a policy, the verdict, and the
/// policy.json that allows, blocks or rate-limits it.
pub fn write_tool(
    w: &mut dyn Write,
    record: &Record,
    server: &ServerAssessment,
    t: &ToolAssessment,
) -> io::Result<()> {
    let policy = single_tool_policy(t);
    let deny = how_to_deny();
    let rate = how_to_rate_limit(t);
    let findings = findings_of(server, t);
    let name = one_line(&t.name, 80);
    let server_name = one_line(&record.name, 80);
    writeln!(w, "{name} · {server_name}: Risk & Policy\n")?;
    writeln!(w, "WHAT IT DOES\n  {}\n", one_line(&t.description, 600))?;
    writeln!(
        w,
        "WHY IT NEEDS A POLICY\n  {name} is {} {} tool ({} risk): {}.",
        if t.category == Category::Execute {
            "an"
        } else {
            "a"
        },
        t.category,
        t.severity.as_str().to_lowercase(),
        category_meaning(t)
    )?;
    for e in &t.evidence {
        writeln!(w, "  {} {}", e.rule, one_line(&e.detail, 200))?;
    }
    for f in &findings {
        writeln!(
            w,
            "  finding {} ({}): {}",
            f.rule,
            f.severity,
            one_line(&f.message, 200)
        )?;
    }
    writeln!(
        w,
        "\nVERDICT\n  Category {}, severity {}, confidence {:.2}{}",
        t.category,
        t.severity,
        t.confidence,
        if t.reviewed { ", reviewed" } else { "" }
    )?;
    if let Some(r) = &t.needs_review {
        writeln!(w, "  Needs review: {}", one_line(&r.reason, 300))?;
    }
    writeln!(
        w,
        "  Recommended rule: {} ({})\n",
        t.recommended.action.as_str(),
        one_line(&t.recommended.reason, 200)
    )?;
    writeln!(w, "policy.json")?;
    crate::output::inert::json_pretty(&mut *w, &policy)?;
    writeln!(w, "\n\nHOW TO BLOCK IT\n  Leave it out of \"tools\" under \"default\": \"deny\" (or list it under \"hide\" so the agent never sees it):")?;
    w.write_all(crate::output::sanitize::json_inline(&deny).as_bytes())?;
    writeln!(w, "\n\nHOW TO RATE-LIMIT IT")?;
    w.write_all(crate::output::sanitize::json_inline(&rate).as_bytes())?;
    writeln!(
        w,
        "\n\nProvided by {} ({}).",
        server_name,
        one_line(&record.id, 120)
    )
}
