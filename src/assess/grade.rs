//! The server grade: 100 points less documented deductions (rules MR-G001..), then a letter.
//!
//! A: 85 and up, B: 70 and up, C: 55 and up, D: 40 and up, F: below 40. A Critical finding
//! caps the grade at D. Every deduction is listed with the grade.

use crate::classify::RuleFile;
use crate::model::{Finding, GradeReason, InputError, Severity, ToolAssessment};

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
