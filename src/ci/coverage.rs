//! Policy coverage for `check --policy`: the scanned tools a policy does not cover, or covers
//! more loosely than recommended, and its rules for tools no scanned server offers.

use super::drift::Change;
use crate::model::{Action, ServerAssessment, Severity};
use crate::policy::{agentgateway, claude_code, read};

/// Rule IDs of policy coverage problems (documented in catalog/rules.yaml).
pub mod ids {
    /// A scanned tool the policy has no rule for.
    pub const NOT_COVERED: &str = "MR-P001";
    /// A rule looser than the one recommended for its tool.
    pub const LOOSER: &str = "MR-P002";
    /// A rule for a tool that no scanned server offers.
    pub const STALE_RULE: &str = "MR-P003";
}

/// Compares a policy with the recommendation for every assessed tool.
pub fn policy_issues(policy: &read::ReadPolicy, servers: &[ServerAssessment]) -> Vec<Change> {
    let mut out = Vec::new();
    let mut seen: std::collections::HashSet<String> = std::collections::HashSet::new();
    let change = |rule, severity, server: &str, tool: &str, message: String| Change {
        rule,
        severity,
        server: server.to_string(),
        tool: Some(tool.to_string()),
        subject: None,
        message,
    };
    for s in servers {
        for t in &s.tools {
            let rec = &t.recommended;
            let (key, found, rec_action) = match policy.kind {
                read::Kind::PolicyLayer | read::Kind::Intercept => (
                    t.name.clone(),
                    policy.rules.get(&t.name).map(|r| (r.action, r.max)),
                    rec.action,
                ),
                read::Kind::ClaudeCode => {
                    let key = claude_code::rule_name(&s.name, &t.name);
                    let server_key = key
                        .trim_start_matches("mcp__")
                        .split("__")
                        .next()
                        .unwrap_or("")
                        .to_string();
                    let found = policy
                        .rules
                        .get(&key)
                        .map(|r| (r.action, None))
                        .or_else(|| policy.server_rules.get(&server_key).map(|a| (*a, None)));
                    let mapped = match rec.action {
                        Action::Allow => Action::Allow,
                        Action::RateLimit | Action::Validate | Action::Approval => Action::Approval,
                        Action::Hide | Action::Deny => Action::Deny,
                    };
                    (key, found, mapped)
                }
                // Only allowed tools are named; any other is refused, which covers it.
                read::Kind::Agentgateway => {
                    let found = policy
                        .rules
                        .get(&t.name)
                        .map(|r| (r.action, None))
                        .unwrap_or((Action::Deny, None));
                    let mapped = if agentgateway::allows(rec.action) {
                        Action::Allow
                    } else {
                        Action::Deny
                    };
                    (t.name.clone(), Some(found), mapped)
                }
            };
            seen.insert(key.clone());
            match found {
                None => out.push(change(
                    ids::NOT_COVERED,
                    if t.severity >= Severity::High {
                        Severity::High
                    } else {
                        Severity::Medium
                    },
                    &s.name,
                    &t.name,
                    format!(
                        "no rule for this {} tool (recommended: {})",
                        t.category,
                        rec_action.as_str()
                    ),
                )),
                Some((action, max)) => {
                    let looser = read::strictness(action) < read::strictness(rec_action)
                        || (action == Action::RateLimit
                            && rec_action == Action::RateLimit
                            && max
                                .zip(rec.max_per_minute)
                                .is_some_and(|(m, r)| m > u64::from(r)));
                    if looser {
                        out.push(change(
                            ids::LOOSER,
                            Severity::High,
                            &s.name,
                            &t.name,
                            format!(
                                "the policy says {}{} but {} {} is recommended ({})",
                                action.as_str(),
                                max.map(|m| format!(" {m}/min")).unwrap_or_default(),
                                rec_action.as_str(),
                                rec.max_per_minute
                                    .filter(|_| rec_action == Action::RateLimit)
                                    .map(|m| format!("{m}/min"))
                                    .unwrap_or_default(),
                                t.category
                            ),
                        ));
                    }
                }
            }
        }
    }
    for key in policy.rules.keys() {
        if !seen.contains(key) {
            out.push(Change {
                rule: ids::STALE_RULE,
                severity: Severity::Low,
                server: String::new(),
                tool: Some(key.clone()),
                subject: None,
                message: "a rule for a tool no scanned server offers".into(),
            });
        }
    }
    out
}
