//! The pipeline: a tool list in, a server assessment out (verdicts, findings, grade, rules).

use crate::classify::{findings, Engine};
use crate::grade::grade;
use crate::model::{ServerAssessment, ToolAssessment};
use crate::policy::{recommend, Limits, Profile};
use crate::toollist::ToolList;
use serde_json::json;

/// How recommendations are made.
#[derive(Debug, Clone, Copy, Default)]
pub struct Settings {
    pub profile: Profile,
    pub limits: Limits,
}

/// Assesses one server's tool list. `name` labels the server; `source` says where the list came from.
pub fn assess(
    engine: &Engine,
    name: &str,
    source: &str,
    list: ToolList,
    settings: &Settings,
) -> ServerAssessment {
    let rules = engine.rules();
    let mut tools = Vec::with_capacity(list.tools.len());
    let mut all_findings = Vec::new();
    for tool in &list.tools {
        let verdict = engine.classify(tool);
        all_findings.extend(verdict.findings);
        if let Some(f) = findings::hidden_characters(rules, tool) {
            all_findings.push(f);
        }
        if let Some(f) = findings::annotation_contradiction(rules, tool, verdict.category) {
            all_findings.push(f);
        }
        let recommended = recommend(
            tool,
            verdict.category,
            verdict.severity,
            settings.profile,
            &settings.limits,
        );
        tools.push(ToolAssessment {
            name: tool.name.clone(),
            title: tool.title.clone(),
            description: tool.description.clone(),
            category: verdict.category,
            severity: verdict.severity,
            confidence: verdict.confidence,
            evidence: verdict.evidence,
            recommended,
        });
    }
    all_findings.extend(findings::duplicate_names(rules, &list.tools));
    let g = grade(rules, &tools, &all_findings, &list.errors);
    let mut reasons = g.reasons;
    reasons.push(crate::model::GradeReason {
        points: 0,
        reason: "MR-G007: identity and auth posture not assessed (a saved tool list does not say who publishes the server or how it authenticates)".into(),
    });
    ServerAssessment {
        name: name.to_string(),
        source: source.to_string(),
        grade: g.letter,
        score: g.score,
        grade_reasons: reasons,
        identity: json!({ "assessed": false, "reason": "saved tool list" }),
        auth: json!({ "assessed": false, "reason": "saved tool list" }),
        tools,
        findings: all_findings,
        errors: list.errors,
    }
}
