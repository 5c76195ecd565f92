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
use crate::model::{Category, Finding, ServerAssessment, Severity};
use crate::output::sanitize;
use minijinja::value::{Enumerator, Object, ObjectRepr};
use minijinja::{AutoEscape, Environment, Value};
use serde_json::json;
use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::sync::Arc;

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

/// A server's findings by the tool they name, in their order.
pub fn findings_by_tool(s: &ServerAssessment) -> HashMap<&str, Vec<&Finding>> {
    let mut m: HashMap<&str, Vec<&Finding>> = HashMap::new();
    for f in &s.findings {
        if let Some(t) = f.tool.as_deref() {
            m.entry(t).or_default().push(f);
        }
    }
    m
}

/// Rank used to put the most dangerous tools first.
fn danger(category: Category, severity: Severity) -> (Severity, Category) {
    (severity, category)
}

/// What a server's tool rows need, shared by the rows: the server, its tools in review order,
/// its findings by tool, and the policy's hidden tools and rules. Rows are made from it one at
/// a time while the template walks `s.tools` (see [`ToolRows`]), so a report of 100,000 tools
/// never holds 100,000 rows (issue 12, item 12: the HTML report peaked at 2.3 GB).
#[derive(Debug)]
struct ServerRows {
    server: ServerAssessment,
    /// Tool indices, most dangerous first.
    order: Vec<usize>,
    /// Finding indices by tool name.
    by_tool: HashMap<String, Vec<usize>>,
    /// Names the policy hides.
    hidden: HashSet<String>,
    /// The policy every row's rule is read from.
    policy: Arc<serde_json::Value>,
}

impl ServerRows {
    fn new(s: &ServerAssessment, policy: Arc<serde_json::Value>) -> ServerRows {
        let mut order: Vec<usize> = (0..s.tools.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(danger(s.tools[i].category, s.tools[i].severity)));
        let mut by_tool: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, f) in s.findings.iter().enumerate() {
            if let Some(t) = &f.tool {
                by_tool.entry(t.clone()).or_default().push(i);
            }
        }
        let hidden = policy["hide"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        ServerRows {
            server: s.clone(),
            order,
            by_tool,
            hidden,
            policy,
        }
    }

    /// The row of the tool at review position `pos`.
    fn row(&self, pos: usize) -> Option<serde_json::Value> {
        let i = *self.order.get(pos)?;
        let t = &self.server.tools[i];
        let rec = &t.recommended;
        let rule = match rec.max_per_minute {
            Some(n) => format!("{} {n}/min", rec.action.as_str()),
            None => rec.action.as_str().to_string(),
        };
        let findings: Vec<_> = self
            .by_tool
            .get(&t.name)
            .into_iter()
            .flatten()
            .map(|&fi| {
                let f = &self.server.findings[fi];
                json!({"rule": f.rule, "severity": f.severity, "message": f.message})
            })
            .collect();
        Some(json!({
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
                "policy": self.policy["tools"].get(&t.name).map(sanitize::json_inline),
                "hidden": self.hidden.contains(&t.name),
            },
            "findings": findings,
        }))
    }
}

/// A server's tools as the template sees them (`s.tools`): a sequence whose rows are made when
/// the template reads them.
#[derive(Debug)]
struct ToolRows(ServerRows);

impl Object for ToolRows {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Seq
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        self.0
            .row(key.as_usize()?)
            .map(|v| Value::from(minijinja::value::Serde(&v)))
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Seq(self.0.order.len())
    }
}

/// The anchor of the tool at index `i` (`tool-1` for the first the server listed).
fn anchor(i: usize) -> String {
    format!("tool-{}", i + 1)
}

/// A server as the template sees it: every key of the view model, with `tools` made lazily.
fn server_view(s: &ServerAssessment, policy: &Arc<serde_json::Value>) -> Value {
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
    let mut by_severity = [0usize; 4];
    for t in &s.tools {
        by_severity[t.severity as usize] += 1;
    }
    let severity_counts: Vec<_> = Severity::ALL
        .iter()
        .rev()
        .map(|sev| {
            let n = by_severity[*sev as usize];
            json!({"severity": sev.as_str(), "count": n, "percent": percent(n, total)})
        })
        .collect();
    // The first tool of each name, for the findings' links: built once, so matching every
    // finding to its tool is linear (issue 12, item 12).
    let mut first_index: HashMap<&str, usize> = HashMap::with_capacity(total);
    for (i, t) in s.tools.iter().enumerate() {
        first_index.entry(t.name.as_str()).or_insert(i);
    }
    let mut findings: Vec<_> = s.findings.iter().collect();
    findings.sort_by_key(|f| std::cmp::Reverse(f.severity));
    let findings: Vec<_> = findings
        .into_iter()
        .map(|f| {
            let tool_anchor = f
                .tool
                .as_deref()
                .and_then(|name| first_index.get(name).copied())
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
    let view = json!({
        "name": s.name,
        "source": s.source,
        "grade": s.grade.to_string(),
        "score": s.score,
        "points_lost": lost,
        "grade_reasons": s.grade_reasons,
        "grade_formula": crate::assess::grade::FORMULA,
        "max_severity": s.max_severity(),
        "identity": sanitize::json_text(&s.identity),
        "auth": sanitize::json_text(&s.auth),
        "tool_count": total,
        "category_counts": category_counts,
        "max_count": max,
        "severity_counts": severity_counts,
        "findings": findings,
        "errors": errors,
        "offer_count": offer_count(s),
        "instructions": s.offers.instructions,
        "prompts": s.offers.prompts,
        "resources": s.offers.resources,
        "resource_templates": s.offers.resource_templates,
    });
    let mut pairs: Vec<(String, Value)> = match view {
        serde_json::Value::Object(m) => m
            .into_iter()
            .map(|(k, v)| (k, Value::from(minijinja::value::Serde(&v))))
            .collect(),
        _ => Vec::new(),
    };
    pairs.push((
        "tools".into(),
        Value::from_object(ToolRows(ServerRows::new(s, policy.clone()))),
    ));
    Value::from_pairs(pairs)
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
    let policy = Arc::new(report.policy.clone());
    let servers: Vec<Value> = report
        .servers
        .iter()
        .map(|s| server_view(s, &policy))
        .collect();
    Value::from_pairs([
        ("servers", Value::from(servers)),
        ("policy", Value::from(sanitize::json_text(report.policy))),
        ("version", Value::from(env!("CARGO_PKG_VERSION"))),
    ])
}

/// A template that failed while rendering: the file, minijinja's cause, and the line of the
/// template it stopped at (minijinja shows that line only in debug builds), escaped and cut.
fn render_error(shown: &str, source: &str, e: &minijinja::Error) -> Error {
    let line = e
        .line()
        .and_then(|n| source.lines().nth(n.saturating_sub(1)))
        .map(|l| format!(": {}", sanitize::one_line(l.trim(), 200)))
        .unwrap_or_default();
    Error::new(format!("{shown}: cannot render: {e}{line}"))
}

/// Renders the named template (`MARKDOWN_NAME` or `HTML_NAME`) into `out`.
pub fn render(env: &Environment, name: &str, report: &Report, out: &mut dyn Write) -> Result<()> {
    let shown = source_of(env, name);
    let tmpl = env
        .get_template(name)
        .map_err(|e| Error::new(format!("{shown}: {e}")))?;
    let text = tmpl
        .render(context(report))
        .map_err(|e| render_error(&shown, tmpl.source(), &e))?;
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
        .map_err(|e| render_error(&shown, tmpl.source(), &e))?;
    out.write_all(text.as_bytes())
        .map_err(|e| Error::new(format!("cannot write the report: {e}")))
}
