//! The server grade: 100 points less documented deductions (rules MR-G001..), then a letter,
//! then the caps: the grade is never better than the server's worst tools allow.
//!
//! See [`FORMULA`], which `mcprisk rules` and every report print.

use crate::classify::RuleFile;
use crate::model::{Finding, GradeReason, InputError, Severity, ToolAssessment};

/// How a grade is computed, in a few lines: printed by `mcprisk rules` beside the grade rules
/// and under "Why grade" in the Markdown and HTML reports.
pub const FORMULA: &str = "Grade = 100 points less the deductions MR-G001..MR-G011 \
(Critical tools 5 each, at most 25; High 3, at most 15; Medium 1, at most 10; findings by \
severity, at most 50; unreadable tools 2, at most 10; posture); A 85+, B 70+, C 55+, D 40+, \
F below 40. Then the caps: one Critical tool caps the grade at C and two or more at D \
(MR-G012); a Critical finding caps it at D (MR-G005).";

/// The best letter a server with this many Critical tools can get (MR-G012): a server is
/// graded no better than its worst tools allow, whatever else it does well.
pub fn critical_tool_cap(critical_tools: usize) -> Option<char> {
    match critical_tools {
        0 => None,
        1 => Some('C'),
        _ => Some('D'),
    }
}

/// Points a finding costs, by severity.
fn finding_points(s: Severity) -> u32 {
    match s {
        Severity::Critical => 20,
        Severity::High => 10,
        Severity::Medium => 4,
        Severity::Low => 1,
    }
}

/// The letter for a score.
pub fn letter(score: u32) -> char {
    match score {
        85.. => 'A',
        70..=84 => 'B',
        55..=69 => 'C',
        40..=54 => 'D',
        _ => 'F',
    }
}

/// A graded server: score, letter and the reasons.
#[derive(Debug, Clone, PartialEq)]
pub struct Grade {
    /// 100 less the deductions.
    pub score: u32,
    /// A to F.
    pub letter: char,
    /// Every deduction, and the notes that cost nothing.
    pub reasons: Vec<GradeReason>,
}

/// Grades a server from its assessed tools, findings and unreadable tools.
pub fn grade(
    rules: &RuleFile,
    tools: &[ToolAssessment],
    findings: &[Finding],
    errors: &[InputError],
    posture: &[GradeReason],
) -> Grade {
    let mut reasons = Vec::new();
    let mut deduct = |id: &str, count: usize, what: &str| {
        if count == 0 {
            return;
        }
        let Some(rule) = rules.get(id) else { return };
        let per = rule.points.unwrap_or(0);
        let max = rule.max_points.unwrap_or(u32::MAX);
        let points = (per.saturating_mul(count as u32)).min(max);
        reasons.push(GradeReason {
            points,
            reason: format!("{id}: {count} {what} x {per} points (at most {max})"),
        });
    };
    let count = |s: Severity| tools.iter().filter(|t| t.severity == s).count();
    deduct("MR-G001", count(Severity::Critical), "Critical tool(s)");
    deduct("MR-G002", count(Severity::High), "High tool(s)");
    deduct("MR-G003", count(Severity::Medium), "Medium tool(s)");
    let offers_unread = errors.iter().any(|e| {
        ["prompts", "resources", "resourceTemplates", "instructions"]
            .iter()
            .any(|k| e.location.starts_with(k))
    });
    deduct(
        "MR-G006",
        errors.len(),
        if offers_unread {
            "unreadable tool(s), prompt(s), resource(s), template(s) or instructions"
        } else {
            "unreadable tool(s)"
        },
    );
    if !findings.is_empty() {
        let max = rules
            .get("MR-G004")
            .and_then(|r| r.max_points)
            .unwrap_or(50);
        let raw: u32 = findings.iter().map(|f| finding_points(f.severity)).sum();
        let by = |s: Severity| findings.iter().filter(|f| f.severity == s).count();
        reasons.push(GradeReason {
            points: raw.min(max),
            reason: format!(
                "MR-G004: findings: {} Critical x 20, {} High x 10, {} Medium x 4, {} Low x 1 (at most {max})",
                by(Severity::Critical),
                by(Severity::High),
                by(Severity::Medium),
                by(Severity::Low)
            ),
        });
    }
    reasons.extend(posture.iter().cloned());
    let lost: u32 = reasons.iter().map(|r| r.points).sum();
    let score = 100u32.saturating_sub(lost);
    let mut letter = letter(score);
    let critical_tools = count(Severity::Critical);
    if let Some(cap) = critical_tool_cap(critical_tools) {
        if letter < cap {
            letter = cap;
            reasons.push(GradeReason {
                points: 0,
                reason: format!(
                    "MR-G012: {critical_tools} Critical tool(s) cap the grade at {cap} (score {score})"
                ),
            });
        }
    }
    if findings.iter().any(|f| f.severity == Severity::Critical) && letter < 'D' {
        letter = 'D';
        reasons.push(GradeReason {
            points: 0,
            reason: "MR-G005: a Critical finding caps the grade at D".into(),
        });
    }
    Grade {
        score,
        letter,
        reasons,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, severity: Severity) -> ToolAssessment {
        use crate::model::{Action, Category, Recommendation};
        ToolAssessment {
            name: name.into(),
            title: None,
            description: String::new(),
            category: Category::Destructive,
            severity,
            confidence: 1.0,
            evidence: Vec::new(),
            recommended: Recommendation {
                action: Action::Hide,
                max_per_minute: None,
                validate: Vec::new(),
                reason: String::new(),
            },
            reviewed: false,
            needs_review: None,
        }
    }

    /// Issue 12, item 15: a server whose only tool is `delete_all` graded A (91/100).
    #[test]
    fn critical_tools_cap_the_grade() {
        let rules = RuleFile::embedded();
        let one = grade(
            &rules,
            &[tool("delete_all", Severity::Critical)],
            &[],
            &[],
            &[],
        );
        assert_eq!(one.letter, 'C', "{one:?}");
        assert!(one.score >= 85, "the points are unchanged: {one:?}");
        assert!(one.reasons.iter().any(|r| r.reason.starts_with("MR-G012")));
        let two = grade(
            &rules,
            &[
                tool("delete_all", Severity::Critical),
                tool("drop_db", Severity::Critical),
            ],
            &[],
            &[],
            &[],
        );
        assert_eq!(two.letter, 'D', "{two:?}");
        let none = grade(&rules, &[tool("get", Severity::Low)], &[], &[], &[]);
        assert_eq!(none.letter, 'A');
        assert!(!none.reasons.iter().any(|r| r.reason.starts_with("MR-G012")));
        // A cap never raises a grade the points already put lower.
        assert_eq!(critical_tool_cap(0), None);
        assert!(
            rules.get("MR-G012").is_some(),
            "documented for `mcprisk rules`"
        );
    }

    #[test]
    fn letters_follow_the_documented_bands() {
        assert_eq!(letter(100), 'A');
        assert_eq!(letter(85), 'A');
        assert_eq!(letter(84), 'B');
        assert_eq!(letter(55), 'C');
        assert_eq!(letter(40), 'D');
        assert_eq!(letter(39), 'F');
    }
}
