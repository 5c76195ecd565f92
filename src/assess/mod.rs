//! The second stage of the pipeline: a tool list in, a server assessment out (verdicts,
//! findings, grade, recommended rules).
//!
//! The classifier ([`crate::classify`]) gives each tool its verdict; here the verdicts meet
//! what else is known of the server: its [`posture`] (identity and auth), the repository's
//! [`project`] settings (ignores, thresholds), and the [`grade`](mod@grade). The [`pipeline`]
//! runs every stage for the commands that assess.

pub mod grade;
pub mod pipeline;
pub mod posture;
pub mod project;

use crate::classify::{engine::Verdict, findings, Engine};
use crate::model::{
    Finding, GradeReason, InputError, Recommendation, Review, ServerAssessment, Tool,
    ToolAssessment,
};
use crate::policy::{recommend, Limits, Profile};
use crate::targets::toollist::ToolList;
use grade::grade;
use posture::Posture;
use serde_json::json;

/// How recommendations are made.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// How strict the recommended rules are.
    pub profile: Profile,
    /// Calls a minute for the rate-limited categories.
    pub limits: Limits,
    /// The repository's ignores (findings they match are dropped before grading).
    pub project: project::ProjectSettings,
    /// Today, for ignores that expire.
    pub today: String,
}

/// What is known of a server besides its tools.
#[derive(Debug, Clone, Default)]
pub struct Context {
    /// The server's name in reports and policies.
    pub name: String,
    /// Where the tool list came from, for people.
    pub source: String,
    /// Identity and auth posture of a live server; `None` for a saved tool list.
    pub posture: Option<Posture>,
    /// Findings that need more than this server (collisions, shadowing).
    pub extra_findings: Vec<Finding>,
    /// Reviewed verdicts from a catalog record.
    pub overrides: Vec<crate::catalog::record::Override>,
}

/// Assesses one server's tool list. `name` labels the server; `source` says where the list came from.
pub fn assess(
    engine: &Engine,
    name: &str,
    source: &str,
    list: ToolList,
    settings: &Settings,
) -> ServerAssessment {
    assess_in(
        engine,
        Context {
            name: name.to_string(),
            source: source.to_string(),
            ..Context::default()
        },
        &list,
        settings,
    )
}

/// A server that could not be scanned: its error, what was learnt of its posture, grade F.
pub fn failed(engine: &Engine, ctx: Context, error: String) -> ServerAssessment {
    let rules = engine.rules();
    let points = rules.get("MR-G010").and_then(|r| r.points).unwrap_or(100);
    let posture = ctx.posture.unwrap_or_default();
    let mut findings = posture.findings;
    findings.extend(ctx.extra_findings);
    let mut reasons = vec![GradeReason {
        points,
        reason: "MR-G010: the server could not be scanned".into(),
    }];
    reasons.extend(posture.grade);
    ServerAssessment {
        origin: None,
        name: ctx.name,
        source: ctx.source,
        grade: 'F',
        score: 100u32.saturating_sub(points),
        grade_reasons: reasons,
        identity: if posture.identity.is_null() {
            json!({ "assessed": false, "reason": "the server could not be scanned" })
        } else {
            posture.identity
        },
        auth: if posture.auth.is_null() {
            json!({ "assessed": false, "reason": "the server could not be scanned" })
        } else {
            posture.auth
        },
        tools: Vec::new(),
        offers: Default::default(),
        findings,
        errors: vec![InputError {
            location: "server".into(),
            tool: None,
            message: error,
        }],
    }
}

/// The engine's verdicts on `tools`, in their order. A long list is shared out among the
/// machine's cores (at most four, at least 64 tools each): classifying is most of a scan's own
/// work, and every tool is classified on its own, so the verdicts are the same either way.
fn verdicts(engine: &Engine, tools: &[Tool]) -> Vec<Verdict> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    verdicts_on(engine, tools, cores)
}

/// [`verdicts`] on a machine of `cores` cores.
fn verdicts_on(engine: &Engine, tools: &[Tool], cores: usize) -> Vec<Verdict> {
    const AT_LEAST: usize = 64;
    let classify_all = |part: &[Tool]| part.iter().map(|t| engine.classify(t)).collect::<Vec<_>>();
    let threads = cores.min(4).min(tools.len() / AT_LEAST).max(1);
    if threads == 1 {
        return classify_all(tools);
    }
    let share = tools.len().div_ceil(threads);
    std::thread::scope(|scope| {
        // A part whose thread cannot be started (a process at its thread limit) is classified
        // here, after the first, so the order holds either way.
        let others: Vec<_> = tools
            .chunks(share)
            .skip(1)
            .map(|part| {
                std::thread::Builder::new()
                    .spawn_scoped(scope, move || classify_all(part))
                    .map_err(|_| part)
            })
            .collect();
        let mut all = classify_all(&tools[..share]);
        for other in others {
            all.extend(match other {
                Ok(thread) => thread
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
                Err(part) => classify_all(part),
            });
        }
        all
    })
}

/// Assesses one server's tool list with everything else known about the server.
pub fn assess_in(
    engine: &Engine,
    ctx: Context,
    list: &ToolList,
    settings: &Settings,
) -> ServerAssessment {
    let rules = engine.rules();
    let mut tools = Vec::with_capacity(list.tools.len());
    let mut all_findings = Vec::new();
    for (tool, mut verdict) in list.tools.iter().zip(verdicts(engine, &list.tools)) {
        let reviewed = apply_override(&ctx.overrides, &tool.name, &mut verdict);
        all_findings.extend(verdict.findings);
        if let Some(f) = findings::hidden_characters(rules, tool) {
            all_findings.push(f);
        }
        if let Some(f) = findings::deceptive_markup(rules, tool) {
            all_findings.push(f);
        }
        if let Some(f) = findings::annotation_contradiction(rules, tool, verdict.category) {
            all_findings.push(f);
        }
        let mut recommended = recommend(
            tool,
            verdict.category,
            verdict.severity,
            settings.profile,
            &settings.limits,
        );
        let needs_review = verdict.review.filter(|_| !reviewed).map(|alternative| {
            let other = recommend(
                tool,
                alternative,
                alternative.default_severity(),
                settings.profile,
                &settings.limits,
            );
            let stricter = stricter_of(&other, &recommended);
            let reason = format!(
                "confidence {:.2} is below {:.2}: weighed against {alternative}; the stricter rule of the two ({}) applies",
                verdict.confidence,
                crate::classify::engine::REVIEW_BELOW,
                if stricter { alternative } else { verdict.category },
            );
            if stricter {
                recommended = other;
            }
            recommended.reason = format!("needs review: {}", recommended.reason);
            Review {
                alternative,
                reason,
            }
        });
        tools.push(ToolAssessment {
            name: tool.name.clone(),
            title: tool.title.clone(),
            description: tool.description.clone(),
            category: verdict.category,
            severity: verdict.severity,
            confidence: verdict.confidence,
            evidence: verdict.evidence,
            recommended,
            reviewed,
            needs_review,
        });
    }
    all_findings.extend(findings::duplicate_names(rules, &list.tools));
    let failed: Vec<(crate::model::offers::OfferKind, String)> = list
        .offer_failures
        .iter()
        .map(|e| (e.kind, e.message.clone()))
        .collect();
    all_findings.extend(engine.offer_checks().check(rules, &list.offers, &failed));
    all_findings.extend(ctx.extra_findings);
    let (identity, auth, posture_reasons) = match ctx.posture {
        Some(p) => {
            all_findings.extend(p.findings);
            (p.identity, p.auth, p.grade)
        }
        None => (
            json!({ "assessed": false, "reason": "saved tool list" }),
            json!({ "assessed": false, "reason": "saved tool list" }),
            vec![GradeReason {
                points: 0,
                reason: "MR-G007: identity and auth posture not assessed (a saved tool list does not say who publishes the server or how it authenticates)".into(),
            }],
        ),
    };
    let all_findings = settings
        .project
        .filter_findings(&ctx.name, all_findings, &settings.today);
    // A server-wide error (an incomplete list) is not an unreadable tool.
    let tool_errors: Vec<InputError> = list
        .errors
        .iter()
        .filter(|e| e.location != "server")
        .cloned()
        .collect();
    let g = grade(rules, &tools, &all_findings, &tool_errors, &posture_reasons);
    ServerAssessment {
        origin: None,
        name: ctx.name,
        source: ctx.source,
        grade: g.letter,
        score: g.score,
        grade_reasons: g.reasons,
        identity,
        auth,
        tools,
        offers: crate::model::offers::Offers {
            unlisted: list.offer_failures.iter().map(|e| e.kind).collect(),
            ..list.offers.clone()
        },
        findings: all_findings,
        errors: list.errors.clone(),
    }
}

/// Whether `a` is a stricter rule than `b`: a stricter action, or the same action with fewer
/// calls allowed or more argument checks.
fn stricter_of(a: &Recommendation, b: &Recommendation) -> bool {
    match a.action.cmp(&b.action) {
        std::cmp::Ordering::Equal => {
            a.max_per_minute.unwrap_or(u32::MAX) < b.max_per_minute.unwrap_or(u32::MAX)
                || a.validate.len() > b.validate.len()
        }
        o => o == std::cmp::Ordering::Greater,
    }
}

/// Applies a reviewed verdict from the catalog, if one names this tool; says whether it did.
fn apply_override(
    overrides: &[crate::catalog::record::Override],
    tool: &str,
    verdict: &mut crate::classify::Verdict,
) -> bool {
    let Some(o) = overrides.iter().find(|o| o.tool == tool) else {
        return false;
    };
    let category = o
        .category
        .as_deref()
        .and_then(crate::model::Category::parse);
    let severity = o
        .severity
        .as_deref()
        .and_then(crate::model::Severity::parse);
    if let Some(c) = category {
        if c != verdict.category {
            verdict.severity = c.default_severity();
        }
        verdict.category = c;
    }
    if let Some(s) = severity {
        verdict.severity = s;
    }
    verdict.confidence = 1.0;
    verdict.evidence.insert(
        0,
        crate::model::Evidence {
            rule: "MR-R001".into(),
            detail: format!("reviewed: {}", o.reason),
        },
    );
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::rules::RuleFile;

    /// Shared out among threads or not, every tool gets the verdict the engine gives it alone,
    /// in the list's order.
    #[test]
    fn verdicts_shared_among_threads_are_each_tools_own() {
        let engine = Engine::new(RuleFile::embedded());
        let words = [
            "delete", "list", "create", "refund", "run", "get", "update", "transfer",
        ];
        let things = [
            "file", "order", "user", "payment", "script", "branch", "invoice",
        ];
        let tools: Vec<Tool> = (0..300)
            .map(|i| {
                let name = format!("{}_{}_{i}", words[i % words.len()], things[i % things.len()]);
                let raw = json!({
                    "name": name,
                    "description": format!("Does {} to a {}.", words[(i / 3) % words.len()], things[i % things.len()]),
                    "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}}
                });
                crate::targets::toollist::from_value(json!({ "tools": [raw] }), "test")
                    .unwrap()
                    .tools
                    .remove(0)
            })
            .collect();
        let alone: Vec<String> = tools
            .iter()
            .map(|t| format!("{:?}", engine.classify(t)))
            .collect();
        let mut shared = Vec::new();
        for cores in [1, 2, 3, 4, 16] {
            shared = verdicts_on(&engine, &tools, cores);
            let shared_text: Vec<String> = shared.iter().map(|v| format!("{v:?}")).collect();
            assert_eq!(shared_text, alone, "on {cores} cores");
        }
        let categories: std::collections::HashSet<_> = shared.iter().map(|v| v.category).collect();
        assert!(
            categories.len() >= 3,
            "the list is not all one kind: {categories:?}"
        );
    }
}
