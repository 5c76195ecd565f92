//! GitHub Actions workflow commands: `::error file=F,line=L,title=T::message` per finding and per
//! tool at or above High (or `--fail-on` when lower). GitHub shows them as annotations on the
//! run and, for files in the repository, on the config file line that declares the server.
//!
//! Hostile text cannot inject commands: data has `%`, `\r` and `\n` escaped (`%25`, `%0D`,
//! `%0A`), properties also `:` and `,` (`%3A`, `%2C`); tool text is made visible first (control
//! and invisible characters as `\u{XXXX}`) and cut to one line, so no line of ours starts with
//! anything but `::`.

use super::ci::{self, CiOptions};
use super::Report;
use crate::classify::RuleFile;
use crate::model::{Origin, Severity};
use crate::output::sanitize;
use std::io::Write;

/// The command for a severity.
pub fn command(s: Severity) -> &'static str {
    match s {
        Severity::Critical | Severity::High => "error",
        Severity::Medium => "warning",
        Severity::Low => "notice",
    }
}

/// Escapes a command's message (data).
pub fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a command property value.
pub fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

fn annotation(
    out: &mut dyn Write,
    severity: Severity,
    origin: Option<&Origin>,
    title: &str,
    message: &str,
) -> std::io::Result<()> {
    let mut props = Vec::new();
    if let Some(o) = origin {
        props.push(format!("file={}", escape_property(&o.file)));
        if let Some(l) = o.line {
            props.push(format!("line={l}"));
        }
    }
    props.push(format!(
        "title={}",
        escape_property(&sanitize::one_line(title, 200))
    ));
    writeln!(
        out,
        "::{} {}::{}",
        command(severity),
        props.join(","),
        escape_data(&sanitize::one_line(message, 2000))
    )
}

/// Writes one workflow command per finding and per reported tool.
pub fn write(
    report: &Report,
    rules: &RuleFile,
    opts: &CiOptions,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    for s in report.servers {
        let origin = s.origin.as_ref();
        for f in &s.findings {
            let name = rules.get(&f.rule).map(|r| r.name.as_str()).unwrap_or("");
            let title = format!("mcprisk {} {}", f.rule, name);
            annotation(
                out,
                f.severity,
                origin,
                title.trim_end(),
                &ci::finding_message(s, f),
            )?;
        }
        for t in ci::reported_tools(s, opts) {
            let rule = ci::tool_rule(t, rules).unwrap_or("");
            let title = format!("mcprisk {rule} {} tool", t.category);
            annotation(out, t.severity, origin, &title, &ci::tool_message(s, t))?;
        }
        for e in &s.errors {
            let failed = e.location == "server";
            let sev = if failed {
                Severity::Critical
            } else {
                Severity::Medium
            };
            let msg = format!(
                "MCP server '{}': {}: {}",
                sanitize::one_line(&s.name, 80),
                e.location,
                e.message
            );
            let title = if failed {
                "mcprisk: server not scanned"
            } else if ["prompts", "resources", "resourceTemplates", "instructions"]
                .iter()
                .any(|k| e.location.starts_with(k))
            {
                "mcprisk: prompt, resource or instructions not readable"
            } else {
                "mcprisk: tool not readable"
            };
            annotation(out, sev, origin, title, &msg)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_follow_the_workflow_command_rules() {
        assert_eq!(escape_data("50% a\r\nb::c"), "50%25 a%0D%0Ab::c");
        assert_eq!(escape_property("a:b,c%\n"), "a%3Ab%2Cc%25%0A");
    }
}
