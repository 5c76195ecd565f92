//! The CI gate's parts, after the pipeline: a [`lock`] file of what every server offered, the
//! [`drift`] between it and a fresh scan, and a policy's [`coverage`] of the scanned tools.
//! Each change carries its rule ID, and [`as_findings`] lays them out for the CI formats.

pub mod coverage;
pub mod drift;
pub mod lock;

use crate::model::{Finding, Origin, ServerAssessment};
use drift::Change;
use lock::Lock;

/// The changes as findings of their servers (no tools: check reports what moved, not what is),
/// located at the lock file line of the server, or at the policy file.
pub fn as_findings(
    changes: &[Change],
    servers: &[ServerAssessment],
    lock: Option<&str>,
    policy: Option<&str>,
) -> Vec<ServerAssessment> {
    let lock_text = lock
        .and_then(|p| std::fs::read_to_string(p).ok())
        .unwrap_or_default();
    let mut out: Vec<ServerAssessment> = Vec::new();
    let mut names: Vec<String> = servers.iter().map(|s| s.name.clone()).collect();
    for c in changes {
        let name = if c.server.is_empty() {
            "(policy)".to_string()
        } else {
            c.server.clone()
        };
        if !names.contains(&name) {
            names.push(name.clone());
        }
    }
    for name in names {
        let mine: Vec<Finding> = changes
            .iter()
            .filter(|c| {
                (if c.server.is_empty() {
                    "(policy)"
                } else {
                    c.server.as_str()
                }) == name
            })
            .map(|c| Finding {
                rule: c.rule.to_string(),
                severity: c.severity,
                tool: c.tool.clone(),
                subject: c.subject.clone(),
                message: c.message.clone(),
            })
            .collect();
        let base = servers.iter().find(|s| s.name == name);
        let drift = mine.iter().any(|f| f.rule.starts_with("MR-D"));
        let origin = match (lock, policy) {
            (Some(lock), _) if drift => Some(Origin {
                file: lock.to_string(),
                line: Some(Lock::line_of(&lock_text, &name, None)),
            }),
            (_, Some(policy)) => Some(Origin {
                file: policy.to_string(),
                line: Some(1),
            }),
            _ => base.and_then(|b| b.origin.clone()),
        };
        out.push(ServerAssessment {
            name: name.clone(),
            source: base
                .map(|b| b.source.clone())
                .unwrap_or_else(|| "policy".into()),
            grade: base.map(|b| b.grade).unwrap_or('-'),
            score: base.map(|b| b.score).unwrap_or(0),
            grade_reasons: Vec::new(),
            identity: serde_json::Value::Null,
            auth: serde_json::Value::Null,
            tools: Vec::new(),
            offers: Default::default(),
            findings: mine,
            errors: base.map(|b| b.errors.clone()).unwrap_or_default(),
            origin,
        });
    }
    out
}
