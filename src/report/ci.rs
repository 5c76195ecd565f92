//! What the CI formats (SARIF, GitHub annotations, JUnit) have in common: which tools are worth
//! a result of their own, the rule that explains a tool's verdict, and the messages.

use crate::classify::{Rule, RuleFile, RuleKind};
use crate::model::{Category, ServerAssessment, Severity, ToolAssessment};

/// Settings shared by the CI formats.
#[derive(Debug, Clone, Copy)]
pub struct CiOptions {
    /// `--fail-on`, when given.
    pub fail_on: Option<Severity>,
}

impl CiOptions {
    /// Tools at or above this severity get a result of their own (besides every finding):
    /// High, or `--fail-on` when it is lower, so every tool that fails the build is shown.
    pub fn tool_threshold(&self) -> Severity {
        match self.fail_on {
            Some(s) if s < Severity::High => s,
            _ => Severity::High,
        }
    }

    /// What fails: `--fail-on`, High by default.
    pub fn fail_threshold(&self) -> Severity {
        self.fail_on.unwrap_or(Severity::High)
    }
}

/// The rule that best explains a tool's verdict: a severity rule when one raised the tool above
/// its category's default severity, else the strongest category rule for its category, else the
/// first rule in its evidence (`MR-R001` for a reviewed verdict without evidence).
pub fn tool_rule<'a>(t: &'a ToolAssessment, rules: &'a RuleFile) -> Option<&'a str> {
    let rule_of = |id: &str| rules.get(id);
    if t.severity > t.category.default_severity() {
        if let Some(e) = t.evidence.iter().find(|e| {
            rule_of(&e.rule)
                .is_some_and(|r| r.kind == RuleKind::Severity && r.applies_to.contains(&t.category))
        }) {
            return Some(&e.rule);
        }
    }
    let best = t
        .evidence
        .iter()
        .filter_map(|e| rule_of(&e.rule).map(|r| (e, r)))
        .filter(|(_, r)| r.kind == RuleKind::Category && r.category == Some(t.category))
        .max_by(|a, b| {
            let w = |r: &Rule| r.weight.unwrap_or(0.0);
            w(a.1).total_cmp(&w(b.1))
        });
    if let Some((e, _)) = best {
        return Some(&e.rule);
    }
    if t.reviewed {
        return Some("MR-R001");
    }
    t.evidence.first().map(|e| e.rule.as_str())
}

/// The severity a rule stands for (GitHub's `security-severity` is per rule): a finding's own
/// severity, a category's default, one step above the categories a severity rule raises.
pub fn rule_severity(r: &Rule) -> Option<Severity> {
    match r.kind {
        RuleKind::Finding => r.severity,
        RuleKind::Category => r.category.map(Category::default_severity),
        RuleKind::Severity => r
            .applies_to
            .iter()
            .map(|c| c.default_severity().raised())
            .max(),
        RuleKind::Signal | RuleKind::Grade => None,
    }
}

/// The tools of a server that get a result of their own, in the server's order.
pub fn reported_tools<'a>(
    s: &'a ServerAssessment,
    opts: &CiOptions,
) -> impl Iterator<Item = &'a ToolAssessment> {
    let threshold = opts.tool_threshold();
    s.tools.iter().filter(move |t| t.severity >= threshold)
}

/// A one-line message about a dangerous tool. The caller escapes it for its format; tool text
/// in it is already made visible (control and invisible characters as `\u{XXXX}`).
pub fn tool_message(s: &ServerAssessment, t: &ToolAssessment) -> String {
    let rec = &t.recommended;
    let rule = match rec.max_per_minute {
        Some(n) => format!("{} {n}/min", rec.action.as_str()),
        None => rec.action.as_str().to_string(),
    };
    let evidence: Vec<&str> = t.evidence.iter().map(|e| e.rule.as_str()).collect();
    let mut msg = format!(
        "Tool '{}' of MCP server '{}' is {} ({} severity); recommended rule: {}.",
        crate::output::sanitize::one_line(&t.name, 120),
        crate::output::sanitize::one_line(&s.name, 80),
        t.category,
        t.severity,
        rule,
    );
    if !rec.reason.is_empty() {
        msg.push(' ');
        msg.push_str(&crate::output::sanitize::one_line(&rec.reason, 300));
        if !msg.ends_with('.') {
            msg.push('.');
        }
    }
    if !evidence.is_empty() {
        msg.push_str(&format!(" Evidence: {}.", evidence.join(", ")));
    }
    if let Some(r) = &t.needs_review {
        msg.push_str(&format!(" Needs review: {}.", r.reason));
    }
    msg
}

/// A one-line message about a finding, naming its server (and tool).
pub fn finding_message(s: &ServerAssessment, f: &crate::model::Finding) -> String {
    let server = crate::output::sanitize::one_line(&s.name, 80);
    let text = crate::output::sanitize::one_line(&f.message, 600);
    match (&f.tool, &f.subject) {
        (Some(t), _) => format!(
            "MCP server '{server}', tool '{}': {text}",
            crate::output::sanitize::one_line(t, 120)
        ),
        (None, Some(o)) => format!(
            "MCP server '{server}', {}: {text}",
            crate::output::sanitize::one_line(&o.to_string(), 160)
        ),
        (None, None) => format!("MCP server '{server}': {text}"),
    }
}
