//! JUnit XML for CI systems that show test results: one `testsuite` per server, one `testcase`
//! per tool, failed when the tool or one of its findings is at or above `--fail-on` (High by
//! default); server-wide findings are one more testcase (`(server)`), and a server that could
//! not be scanned is an `error`.
//!
//! Tool text is hostile: it is made visible (control and invisible characters as `\u{XXXX}`),
//! XML-escaped, and characters XML 1.0 forbids are dropped.

use super::ci::{self, CiOptions};
use super::Report;
use crate::classify::RuleFile;
use crate::model::offers::{OfferKind, Subject};
use crate::model::{Finding, ServerAssessment, ToolAssessment};
use crate::output::sanitize;
use std::io::Write;

/// Whether XML 1.0 allows the character in a document.
fn xml_allowed(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
}

/// Escapes text for XML content and attribute values (quotes included); line breaks and tabs
/// are written as character references so attributes keep them.
pub fn escape(s: &str) -> String {
    let shown = sanitize::visible(s);
    let mut out = String::with_capacity(shown.len());
    for c in shown.chars().filter(|c| xml_allowed(*c)) {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' => out.push_str("&#9;"),
            c => out.push(c),
        }
    }
    out
}

fn attr(s: &str, max: usize) -> String {
    escape(&sanitize::one_line(s, max))
}

fn tool_failure(
    t: &ToolAssessment,
    findings: &[&Finding],
    opts: &CiOptions,
    rules: &RuleFile,
) -> Option<(String, String)> {
    let threshold = opts.fail_threshold();
    let failing: Vec<&&Finding> = findings
        .iter()
        .filter(|f| f.severity >= threshold)
        .collect();
    if t.severity < threshold && failing.is_empty() {
        return None;
    }
    let worst = failing
        .iter()
        .map(|f| f.severity)
        .chain(Some(t.severity))
        .max()
        .unwrap_or(t.severity);
    let rule = ci::tool_rule(t, rules).unwrap_or("");
    let message = format!(
        "{}{} ({}{}){}",
        t.category,
        match &t.needs_review {
            Some(r) => format!(" (needs review: or {})", r.alternative),
            None => String::new(),
        },
        t.severity,
        if rule.is_empty() {
            String::new()
        } else {
            format!(", {rule}")
        },
        if failing.is_empty() {
            String::new()
        } else {
            format!(
                "; findings: {}",
                failing
                    .iter()
                    .map(|f| f.rule.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    );
    Some((worst.as_str().to_string(), message))
}

fn details(s: &ServerAssessment, t: &ToolAssessment, findings: &[&Finding]) -> String {
    let mut text = ci::tool_message(s, t);
    for f in findings {
        text.push('\n');
        text.push_str(&format!(
            "{} ({}): {}",
            f.rule,
            f.severity,
            sanitize::one_line(&f.message, 600)
        ));
    }
    text
}

fn suite(
    s: &ServerAssessment,
    rules: &RuleFile,
    opts: &CiOptions,
    out: &mut dyn Write,
) -> std::io::Result<(usize, usize, usize)> {
    let threshold = opts.fail_threshold();
    let class = format!("mcprisk.{}", sanitize::one_line(&s.name, 200));
    let mut cases: Vec<String> = Vec::new();
    let mut failures = 0;
    let mut errors = 0;
    // Findings by tool name, built once, so matching them is linear in the tool count.
    let by_tool = super::templates::findings_by_tool(s);
    let no_findings: Vec<&Finding> = Vec::new();
    for t in &s.tools {
        let findings = by_tool.get(t.name.as_str()).unwrap_or(&no_findings);
        let mut case = format!(
            "    <testcase classname=\"{}\" name=\"{}\">\n",
            escape(&class),
            attr(&t.name, 300)
        );
        let text = details(s, t, findings);
        match tool_failure(t, findings, opts, rules) {
            Some((kind, message)) => {
                failures += 1;
                case.push_str(&format!(
                    "      <failure type=\"{}\" message=\"{}\">{}</failure>\n",
                    escape(&kind),
                    escape(&message),
                    escape(&text)
                ));
            }
            None => case.push_str(&format!(
                "      <system-out>{}</system-out>\n",
                escape(&text)
            )),
        }
        case.push_str("    </testcase>\n");
        cases.push(case);
    }
    // One testcase per instructions, prompt, resource and template, failed by its findings.
    // Findings grouped by their offer once, so matching stays linear.
    let subjects = offer_subjects(s);
    let mut by_subject: std::collections::HashMap<&Subject, Vec<&Finding>> =
        std::collections::HashMap::new();
    for f in &s.findings {
        if let (None, Some(o)) = (&f.tool, &f.subject) {
            by_subject.entry(o).or_default().push(f);
        }
    }
    let offered: std::collections::HashSet<&Subject> = subjects.iter().collect();
    for subject in &subjects {
        let findings: Vec<&Finding> = by_subject.get(subject).cloned().unwrap_or_default();
        let mut case = format!(
            "    <testcase classname=\"{}\" name=\"{}\">\n",
            escape(&class),
            attr(&subject.to_string(), 300)
        );
        let text: Vec<String> = findings.iter().map(|f| ci::finding_message(s, f)).collect();
        let failing: Vec<&&Finding> = findings
            .iter()
            .filter(|f| f.severity >= threshold)
            .collect();
        if let Some(worst) = failing.iter().map(|f| f.severity).max() {
            failures += 1;
            let ids: Vec<&str> = failing.iter().map(|f| f.rule.as_str()).collect();
            case.push_str(&format!(
                "      <failure type=\"{worst}\" message=\"findings: {}\">{}</failure>\n",
                escape(&ids.join(", ")),
                escape(&text.join("\n"))
            ));
        } else if !text.is_empty() {
            case.push_str(&format!(
                "      <system-out>{}</system-out>\n",
                escape(&text.join("\n"))
            ));
        }
        case.push_str("    </testcase>\n");
        cases.push(case);
    }
    let tool_names: std::collections::HashSet<&str> =
        s.tools.iter().map(|t| t.name.as_str()).collect();
    let server_findings: Vec<&Finding> = s
        .findings
        .iter()
        .filter(|f| {
            f.tool.as_deref().is_none_or(|n| !tool_names.contains(n))
                && !(f.tool.is_none() && f.subject.as_ref().is_some_and(|o| offered.contains(o)))
        })
        .collect();
    let server_errors: Vec<_> = s.errors.iter().collect();
    if !server_findings.is_empty() || !server_errors.is_empty() {
        let mut case = format!(
            "    <testcase classname=\"{}\" name=\"(server)\">\n",
            escape(&class)
        );
        let failed_scan: Vec<_> = server_errors
            .iter()
            .filter(|e| e.location == "server")
            .collect();
        let text: Vec<String> = server_findings
            .iter()
            .map(|f| ci::finding_message(s, f))
            .map(|m| m.to_string())
            .chain(server_errors.iter().map(|e| {
                format!(
                    "{}: {}",
                    sanitize::one_line(&e.location, 100),
                    sanitize::one_line(&e.message, 600)
                )
            }))
            .collect();
        let text = text.join("\n");
        let failing: Vec<&&Finding> = server_findings
            .iter()
            .filter(|f| f.severity >= threshold)
            .collect();
        if !failed_scan.is_empty() {
            errors += 1;
            case.push_str(&format!(
                "      <error type=\"scan\" message=\"{}\">{}</error>\n",
                attr(&failed_scan[0].message, 300),
                escape(&text)
            ));
        } else if !failing.is_empty() {
            failures += 1;
            let worst = failing
                .iter()
                .map(|f| f.severity)
                .max()
                .unwrap_or(threshold);
            let ids: Vec<&str> = failing.iter().map(|f| f.rule.as_str()).collect();
            case.push_str(&format!(
                "      <failure type=\"{}\" message=\"findings: {}\">{}</failure>\n",
                worst,
                escape(&ids.join(", ")),
                escape(&text)
            ));
        } else {
            case.push_str(&format!(
                "      <system-out>{}</system-out>\n",
                escape(&text)
            ));
        }
        case.push_str("    </testcase>\n");
        cases.push(case);
    }
    writeln!(
        out,
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"0\">",
        attr(&s.name, 200),
        cases.len()
    )?;
    writeln!(out, "    <properties>")?;
    let mut props = vec![
        ("grade", s.grade.to_string()),
        ("score", s.score.to_string()),
        ("source", sanitize::one_line(&s.source, 400)),
    ];
    if let Some(o) = &s.origin {
        props.push(("file", o.file.clone()));
        if let Some(l) = o.line {
            props.push(("line", l.to_string()));
        }
    }
    for (k, v) in props {
        writeln!(
            out,
            "      <property name=\"{k}\" value=\"{}\"/>",
            escape(&v)
        )?;
    }
    writeln!(out, "    </properties>")?;
    for c in &cases {
        out.write_all(c.as_bytes())?;
    }
    writeln!(out, "  </testsuite>")?;
    Ok((cases.len(), failures, errors))
}

/// Every offer of a server as a finding's subject: its instructions, prompts, resources and
/// resource templates, in that order.
fn offer_subjects(s: &ServerAssessment) -> Vec<Subject> {
    let o = &s.offers;
    o.instructions
        .iter()
        .map(|_| Subject::new(OfferKind::Instructions, ""))
        .chain(
            o.prompts
                .iter()
                .map(|p| Subject::new(OfferKind::Prompt, &p.name)),
        )
        .chain(
            o.resources
                .iter()
                .map(|r| Subject::new(OfferKind::Resource, &r.uri)),
        )
        .chain(
            o.resource_templates
                .iter()
                .map(|r| Subject::new(OfferKind::ResourceTemplate, &r.uri_template)),
        )
        .collect()
}

/// Writes the JUnit XML document.
pub fn write(
    report: &Report,
    rules: &RuleFile,
    opts: &CiOptions,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let mut body = Vec::new();
    let (mut tests, mut failures, mut errors) = (0, 0, 0);
    for s in report.servers {
        let (t, f, e) = suite(s, rules, opts, &mut body)?;
        tests += t;
        failures += f;
        errors += e;
    }
    writeln!(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>")?;
    writeln!(
        out,
        "<testsuites name=\"mcprisk\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\">"
    )?;
    out.write_all(&body)?;
    writeln!(out, "</testsuites>")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_drops_what_xml_forbids() {
        assert_eq!(
            escape("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&apos;"
        );
        // Controls become visible escapes; U+FFFE (not allowed in XML 1.0) is dropped.
        assert_eq!(escape("a\u{1b}b\u{fffe}c\u{0}"), "a\\u{001B}bc\\u{0000}");
    }
}
