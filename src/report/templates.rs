//! Markdown and HTML reports rendered from minijinja templates, embedded at build time and
//! overridable with `--templates DIR` (files `report.md.j2` and `report.html.j2`).

use super::sanitize;
use super::Report;
use crate::error::{Error, Result};
use minijinja::{AutoEscape, Environment, Value};
use std::io::Write;

/// The shipped Markdown template.
pub const MARKDOWN_TEMPLATE: &str = include_str!("../../templates/report.md.j2");
/// The shipped HTML template.
pub const HTML_TEMPLATE: &str = include_str!("../../templates/report.html.j2");
/// Template names, as files in a `--templates` directory.
pub const MARKDOWN_NAME: &str = "report.md.j2";
/// The HTML template's file name.
pub const HTML_NAME: &str = "report.html.j2";

/// Builds the template environment, reading overrides from `dir` when given.
pub fn environment(dir: Option<&str>) -> Result<Environment<'static>> {
    let mut env = Environment::new();
    env.set_auto_escape_callback(|name| {
        if name.ends_with(".html.j2") {
            AutoEscape::Html
        } else {
            AutoEscape::None
        }
    });
    env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
    env.add_filter("md", |s: String| sanitize::markdown(&s));
    env.add_filter("visible", |s: String| sanitize::visible(&s));
    env.add_filter("oneline", |s: String, n: Option<usize>| {
        sanitize::one_line(&s, n.unwrap_or(200))
    });
    for (name, builtin) in [
        (MARKDOWN_NAME, MARKDOWN_TEMPLATE),
        (HTML_NAME, HTML_TEMPLATE),
    ] {
        let source = match dir {
            Some(d) => {
                let path = std::path::Path::new(d).join(name);
                if path.exists() {
                    std::fs::read_to_string(&path).map_err(|e| {
                        Error::new(format!("{}: cannot read template: {e}", path.display()))
                    })?
                } else {
                    builtin.to_string()
                }
            }
            None => builtin.to_string(),
        };
        let shown = match dir {
            Some(d) => format!("{d}/{name}"),
            None => name.to_string(),
        };
        env.add_template_owned(name, source)
            .map_err(|e| Error::new(format!("{shown}: invalid template: {e}")))?;
    }
    Ok(env)
}

fn context(report: &Report) -> Value {
    let servers: Vec<serde_json::Value> = report
        .servers
        .iter()
        .map(|s| {
            let mut v = serde_json::to_value(s).unwrap_or_default();
            let counts: Vec<serde_json::Value> = s
                .category_counts()
                .iter()
                .map(|(c, n)| serde_json::json!({"category": c.as_str(), "count": n}))
                .collect();
            let max = s
                .category_counts()
                .iter()
                .map(|(_, n)| *n)
                .max()
                .unwrap_or(0);
            v["category_counts"] = serde_json::Value::Array(counts);
            v["max_count"] = serde_json::json!(max);
            v
        })
        .collect();
    let policy = serde_json::to_string_pretty(report.policy).unwrap_or_default();
    Value::from(minijinja::value::Serde(serde_json::json!({
        "servers": servers,
        "policy": policy,
        "version": env!("CARGO_PKG_VERSION"),
    })))
}

/// Renders the named template (`MARKDOWN_NAME` or `HTML_NAME`) into `out`.
pub fn render(env: &Environment, name: &str, report: &Report, out: &mut dyn Write) -> Result<()> {
    let tmpl = env
        .get_template(name)
        .map_err(|e| Error::new(format!("template {name}: {e}")))?;
    let text = tmpl
        .render(context(report))
        .map_err(|e| Error::new(format!("template {name}: cannot render: {e}")))?;
    out.write_all(text.as_bytes())
        .map_err(|e| Error::new(format!("cannot write the report: {e}")))
}
