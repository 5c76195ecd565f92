//! Markdown and HTML reports rendered from minijinja templates, embedded at build time and
//! overridable with `--templates DIR` (files `report.md.j2` and `report.html.j2`).
//!
//! Templates see a view model built here (see [`context`]): per server its tools, findings
//! (with `subject`, the prompt, resource, template or instructions a finding is about),
//! `instructions`, `prompts`, `resources` and `resource_templates`. Every key is always present
//! (absent values are `none`), so templates render under strict undefined behaviour, and the
//! order is the review order (most severe tools first). Tool text stays raw in the view model;
//! templates escape it: `*.html.j2` autoescape HTML (and may use `reveal`, which escapes itself),
//! Markdown templates must pass tool text through `md`.

use super::Report;
use crate::error::{Error, Result};
use crate::model::{Category, ServerAssessment, Severity};
use crate::output::sanitize;
use minijinja::{AutoEscape, Environment, Value};
use serde_json::json;
use std::io::Write;

/// The shipped Markdown template.
pub const MARKDOWN_TEMPLATE: &str = include_str!("../../templates/report.md.j2");
/// The shipped HTML template.
pub const HTML_TEMPLATE: &str = include_str!("../../templates/report.html.j2");
/// Template names, as files in a `--templates` directory.
pub const MARKDOWN_NAME: &str = "report.md.j2";
/// The HTML template's file name.
pub const HTML_NAME: &str = "report.html.j2";
/// The shipped Markdown template of one tool's record (`lookup NAME TOOL`).
pub const TOOL_MARKDOWN_TEMPLATE: &str = include_str!("../../templates/tool.md.j2");
/// The shipped HTML template of one tool's record.
pub const TOOL_HTML_TEMPLATE: &str = include_str!("../../templates/tool.html.j2");
/// File name of the tool Markdown template in a `--templates` directory.
pub const TOOL_MARKDOWN_NAME: &str = "tool.md.j2";
/// File name of the tool HTML template.
pub const TOOL_HTML_NAME: &str = "tool.html.j2";

/// The global that maps template names to where they were read from, for error messages.
const SOURCES: &str = "template_sources";

/// Where the named template came from: its file in the `--templates` directory, or built in.
fn source_of(env: &Environment, name: &str) -> String {
    env.globals()
        .find(|(k, _)| *k == SOURCES)
        .and_then(|(_, v)| v.get_attr(name).ok())
        .filter(|v| !v.is_undefined())
        .map(|v| v.to_string())
        .unwrap_or_else(|| name.to_string())
}

/// Builds the template environment, reading overrides from `dir` when given.
pub fn environment(dir: Option<&str>) -> Result<Environment<'static>> {
    let mut env = Environment::new();
    env.set_auto_escape_callback(|name| {
        if name.ends_with(".html.j2") || name.ends_with(".html") {
            AutoEscape::Html
        } else {
            AutoEscape::None
        }
    });
    env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
    // Reports end with a newline, like every text file.
    if let Ok(syntax) = minijinja::syntax::SyntaxConfig::builder()
        .keep_trailing_newline(true)
        .build()
    {
        env.set_syntax(syntax);
    }
    env.add_filter("md", |s: String| sanitize::markdown(&s));
    env.add_filter("visible", |s: String| sanitize::visible(&s));
    env.add_filter("reveal", |s: String| {
        Value::from_safe_string(sanitize::html_reveal(&s))
    });
    env.add_filter("oneline", |s: String, n: Option<usize>| {
        sanitize::one_line(&s, n.unwrap_or(200))
    });
    if let Some(d) = dir {
        if !std::path::Path::new(d).is_dir() {
            return Err(Error::new(format!(
                "{d}: --templates needs a directory holding {MARKDOWN_NAME} and/or {HTML_NAME}"
            )));
        }
    }
    let mut sources = std::collections::BTreeMap::new();
    for (name, builtin) in [
        (MARKDOWN_NAME, MARKDOWN_TEMPLATE),
        (HTML_NAME, HTML_TEMPLATE),
        (TOOL_MARKDOWN_NAME, TOOL_MARKDOWN_TEMPLATE),
        (TOOL_HTML_NAME, TOOL_HTML_TEMPLATE),
    ] {
        let (source, shown) = match dir {
            Some(d) => {
                let path = std::path::Path::new(d).join(name);
                if path.exists() {
                    let text = std::fs::read_to_string(&path).map_err(|e| {
                        Error::new(format!("{}: cannot read template: {e}", path.display()))
                    })?;
                    (text, path.display().to_string())
                } else {
                    (builtin.to_string(), format!("{name} (built in)"))
                }
            }
            None => (builtin.to_string(), format!("{name} (built in)")),
        };
        env.add_template_owned(name, source)
            .map_err(|e| Error::new(format!("{shown}: invalid template: {e}")))?;
        sources.insert(name, shown);
    }
    env.add_global(
        SOURCES,
        Value::from_pairs(sources.into_iter().collect::<Vec<_>>()),
    );
    Ok(env)
}

/// How much of a description the HTML report shows before "Full description".
const PREVIEW_CHARS: usize = 160;

/// Rank used to put the most dangerous tools first.
fn danger(category: Category, severity: Severity) -> (Severity, Category) {
    (severity, category)
}

fn server_view(s: &ServerAssessment, policy: &serde_json::Value) -> serde_json::Value {
    let total = s.tools.len();
    let counts = s.category_counts();
    let max = counts.iter().map(|(_, n)| *n).max().unwrap_or(0);
    let percent = |n: usize, of: usize| (n * 100 + of / 2).checked_div(of).unwrap_or(0);
    let category_counts: Vec<_> = counts
        .iter()
        .map(|(c, n)| {
            json!({
                "category": c.as_str(),
                "count": n,
                "percent": percent(*n, total),
                "bar": percent(*n, max),
            })
        })
        .collect();
    let severity_counts: Vec<_> = Severity::ALL
        .iter()
        .rev()
        .map(|sev| {
            let n = s.tools.iter().filter(|t| t.severity == *sev).count();
            json!({"severity": sev.as_str(), "count": n, "percent": percent(n, total)})
        })
        .collect();

    let hidden: Vec<&str> = policy["hide"]
        .as_array()
        .map(|a| a.iter().filter_map(|v| v.as_str()).collect())
        .unwrap_or_default();
    let mut order: Vec<usize> = (0..total).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(danger(s.tools[i].category, s.tools[i].severity)));
    let anchor = |i: usize| format!("tool-{}", i + 1);
    let tools: Vec<_> = order
        .iter()
        .map(|&i| {
            let t = &s.tools[i];
            let rec = &t.recommended;
            let rule = match rec.max_per_minute {
                Some(n) => format!("{} {n}/min", rec.action.as_str()),
                None => rec.action.as_str().to_string(),
            };
            let is_hidden = hidden.contains(&t.name.as_str());
            let policy_entry = policy["tools"].get(&t.name).map(sanitize::json_inline);
            let findings: Vec<_> = s
                .findings
                .iter()
                .filter(|f| f.tool.as_deref() == Some(t.name.as_str()))
                .map(|f| json!({"rule": f.rule, "severity": f.severity, "message": f.message}))
                .collect();
            json!({
                "number": i + 1,
                "anchor": anchor(i),
                "name": t.name,
                "title": t.title,
                "description": t.description,
                "description_chars": t.description.chars().count(),
                "description_short": t.description.chars().count() <= PREVIEW_CHARS
                    && !t.description.chars().any(|c| c == '\n' || c == '\t' || sanitize::is_hidden(c)),
                "category": t.category,
                "needs_review": t.needs_review,
                "severity": t.severity,
                "confidence": format!("{:.2}", t.confidence),
                "evidence": t.evidence,
                "recommended": {
                    "action": rec.action.as_str(),
                    "max_per_minute": rec.max_per_minute,
                    "validate": rec.validate,
                    "reason": rec.reason,
                    "rule": rule,
                    "policy": policy_entry,
                    "hidden": is_hidden,
                },
                "findings": findings,
            })
        })
        .collect();
    let mut findings: Vec<_> = s.findings.iter().collect();
    findings.sort_by_key(|f| std::cmp::Reverse(f.severity));
    let findings: Vec<_> = findings
        .into_iter()
        .map(|f| {
            let tool_anchor = f
                .tool
                .as_deref()
                .and_then(|name| s.tools.iter().position(|t| t.name == name))
                .map(anchor);
            json!({
                "rule": f.rule,
                "severity": f.severity,
                "tool": f.tool,
                "subject": f.subject.as_ref().map(|x| x.to_string()),
                "tool_anchor": tool_anchor,
                "message": f.message,
            })
        })
        .collect();
    let errors: Vec<_> = s
        .errors
        .iter()
        .map(|e| json!({"location": e.location, "tool": e.tool, "message": e.message}))
        .collect();
    let lost: u32 = s.grade_reasons.iter().map(|r| r.points).sum();
    json!({
        "name": s.name,
        "source": s.source,
        "grade": s.grade.to_string(),
        "score": s.score,
        "points_lost": lost,
        "grade_reasons": s.grade_reasons,
        "max_severity": s.max_severity(),
        "identity": sanitize::json_text(&s.identity),
        "auth": sanitize::json_text(&s.auth),
        "tool_count": total,
        "category_counts": category_counts,
        "max_count": max,
        "severity_counts": severity_counts,
        "tools": tools,
        "findings": findings,
        "errors": errors,
        "offer_count": offer_count(s),
        "instructions": s.offers.instructions,
        "prompts": s.offers.prompts,
        "resources": s.offers.resources,
        "resource_templates": s.offers.resource_templates,
    })
}

/// How many things besides tools the server offers (its instructions count as one).
fn offer_count(s: &ServerAssessment) -> usize {
    usize::from(s.offers.instructions.is_some())
        + s.offers.prompts.len()
        + s.offers.resources.len()
        + s.offers.resource_templates.len()
}

/// The values a template sees: `servers` (see `server_view`), `policy` (the recommended
/// policy as inert JSON text, see [`sanitize::json_text`]) and `version`.
pub fn context(report: &Report) -> Value {
    let servers: Vec<_> = report
        .servers
        .iter()
        .map(|s| server_view(s, report.policy))
        .collect();
    Value::from(minijinja::value::Serde(json!({
        "servers": servers,
        "policy": sanitize::json_text(report.policy),
        "version": env!("CARGO_PKG_VERSION"),
    })))
}

/// Renders the named template (`MARKDOWN_NAME` or `HTML_NAME`) into `out`.
pub fn render(env: &Environment, name: &str, report: &Report, out: &mut dyn Write) -> Result<()> {
    let shown = source_of(env, name);
    let tmpl = env
        .get_template(name)
        .map_err(|e| Error::new(format!("{shown}: {e}")))?;
    let text = tmpl
        .render(context(report))
        .map_err(|e| Error::new(format!("{shown}: cannot render: {e}")))?;
    out.write_all(text.as_bytes())
        .map_err(|e| Error::new(format!("cannot write the report: {e}")))
}

/// Renders a template against a prepared JSON document (the tool record of `lookup NAME TOOL`);
/// policy JSON inside it is passed as inert text (`policy_text`, `deny_text`, `rate_text`).
pub fn render_value(
    env: &Environment,
    name: &str,
    doc: &serde_json::Value,
    out: &mut dyn Write,
) -> Result<()> {
    let shown = source_of(env, name);
    let mut ctx = doc.clone();
    ctx["policy_text"] = serde_json::Value::String(sanitize::json_text(&doc["policy"]));
    ctx["deny_text"] = serde_json::Value::String(sanitize::json_text(&doc["how_to_deny"]));
    ctx["rate_text"] = serde_json::Value::String(sanitize::json_text(&doc["how_to_rate_limit"]));
    ctx["version"] = serde_json::Value::String(env!("CARGO_PKG_VERSION").into());
    let tmpl = env
        .get_template(name)
        .map_err(|e| Error::new(format!("{shown}: {e}")))?;
    let text = tmpl
        .render(Value::from(minijinja::value::Serde(ctx)))
        .map_err(|e| Error::new(format!("{shown}: cannot render: {e}")))?;
    out.write_all(text.as_bytes())
        .map_err(|e| Error::new(format!("cannot write the report: {e}")))
}
