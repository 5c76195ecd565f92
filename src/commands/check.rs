//! `mcprisk check`: the CI gate. Drift against a lock file (never written here), and tools a
//! policy does not cover or covers more loosely than recommended. Exit 1 on any, 0 on none.

use crate::assess::pipeline::{baseline_keys, load_and_assess, load_rules, Assessed};
use crate::ci::drift::{compare, Change};
use crate::ci::lock::Lock;
use crate::cli::{CheckArgs, CheckFormat};
use crate::error::{Error, Result};
use crate::model::{Action, Severity};
use crate::output::sanitize::one_line;
use crate::output::{emit, io_err};
use crate::policy::{claude_code, read};
use serde_json::json;

/// Rule IDs of policy coverage problems (documented in catalog/rules.yaml).
pub mod ids {
    pub const NOT_COVERED: &str = "MR-P001";
    pub const LOOSER: &str = "MR-P002";
    pub const STALE_RULE: &str = "MR-P003";
}

/// Compares a policy with the recommendation for every assessed tool.
pub fn policy_issues(
    policy: &read::ReadPolicy,
    servers: &[crate::model::ServerAssessment],
) -> Vec<Change> {
    let mut out = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    let change = |rule, severity, server: &str, tool: &str, message: String| Change {
        rule,
        severity,
        server: server.to_string(),
        tool: Some(tool.to_string()),
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
                    let mapped = if crate::policy::agentgateway::allows(rec.action) {
                        Action::Allow
                    } else {
                        Action::Deny
                    };
                    (t.name.clone(), Some(found), mapped)
                }
            };
            seen.push(key.clone());
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
                message: "a rule for a tool no scanned server offers".into(),
            });
        }
    }
    out
}

/// Runs `check`.
pub fn run(args: &CheckArgs) -> Result<u8> {
    if args.lock.is_none() && args.policy.is_none() {
        return Err(Error::new(
            "check needs --lock FILE (drift) and/or --policy FILE (coverage)",
        ));
    }
    let lock = args.lock.as_deref().map(Lock::load).transpose()?;
    let policy = args.policy.as_deref().map(read::load).transpose()?;
    let Assessed {
        servers,
        any_failed,
        raw_tools,
        settings,
    } = load_and_assess(&args.target, &args.assess, args.output.quiet)?;
    let mut changes = Vec::new();
    if let Some(lock) = &lock {
        let pairs: Vec<_> = servers.iter().cloned().zip(raw_tools).collect();
        changes.extend(compare(lock, &pairs));
    }
    if let Some(p) = &policy {
        changes.extend(policy_issues(p, &servers));
    }
    changes.retain(|c| {
        !settings
            .project
            .suppresses(c.rule, &c.server, c.tool.as_deref(), &settings.today)
    });
    if let Some(path) = &args.assess.baseline {
        let known = baseline_keys(path)?;
        changes.retain(|c| {
            !known.contains(&(
                c.rule.to_string(),
                c.server.clone(),
                c.tool.clone().unwrap_or_default(),
                c.message.clone(),
            ))
        });
    }
    let out = args.output.output.as_deref();
    let ci = match args.format {
        CheckFormat::Sarif => Some(crate::report::Format::Sarif),
        CheckFormat::Github => Some(crate::report::Format::Github),
        CheckFormat::Junit => Some(crate::report::Format::Junit),
        _ => None,
    };
    if let Some(format) = ci {
        let report_servers = as_findings(&changes, &servers, args);
        let policy = serde_json::Value::Null;
        let report = crate::report::Report {
            servers: &report_servers,
            policy: &policy,
        };
        crate::report::ci_formats::write(
            format,
            &report,
            &load_rules(args.assess.rules.as_deref())?,
            Some(Severity::Low),
            out,
        )?;
    }
    match args.format {
        CheckFormat::Sarif | CheckFormat::Github | CheckFormat::Junit => {}
        CheckFormat::Json => emit(out, |w| {
            let doc = json!({
                "schema_version": crate::report::json::SCHEMA_VERSION,
                "lock": args.lock,
                "policy": args.policy,
                "changes": changes,
                "servers": servers.iter().map(|s| json!({"name": s.name, "grade": s.grade, "errors": s.errors})).collect::<Vec<_>>(),
            });
            serde_json::to_writer_pretty(&mut *w, &doc).map_err(|e| io_err(e.into()))?;
            writeln!(w).map_err(io_err)
        })?,
        CheckFormat::Table => emit(out, |w| {
            if changes.is_empty() {
                writeln!(
                    w,
                    "No drift and no policy gaps: {} server(s) checked.",
                    servers.len()
                )
                .map_err(io_err)?;
            }
            for c in &changes {
                writeln!(
                    w,
                    "{} {:<8} {}{}: {}",
                    c.rule,
                    c.severity.as_str(),
                    one_line(&c.server, 60),
                    c.tool
                        .as_deref()
                        .map(|t| format!("/{}", one_line(t, 60)))
                        .unwrap_or_default(),
                    one_line(&c.message, 600)
                )
                .map_err(io_err)?;
            }
            Ok(())
        })?,
    }
    Ok(if any_failed {
        2
    } else if changes.is_empty() {
        0
    } else {
        1
    })
}

/// The changes as findings of their servers (no tools: check reports what moved, not what is),
/// located at the lock file line of the server, or at the policy file.
fn as_findings(
    changes: &[Change],
    servers: &[crate::model::ServerAssessment],
    args: &CheckArgs,
) -> Vec<crate::model::ServerAssessment> {
    let lock_text = args
        .lock
        .as_deref()
        .and_then(|p| std::fs::read_to_string(p).ok())
        .unwrap_or_default();
    let mut out: Vec<crate::model::ServerAssessment> = Vec::new();
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
        let mine: Vec<crate::model::Finding> = changes
            .iter()
            .filter(|c| {
                (if c.server.is_empty() {
                    "(policy)"
                } else {
                    c.server.as_str()
                }) == name
            })
            .map(|c| crate::model::Finding {
                rule: c.rule.to_string(),
                severity: c.severity,
                tool: c.tool.clone(),
                message: c.message.clone(),
            })
            .collect();
        let base = servers.iter().find(|s| s.name == name);
        let drift = mine.iter().any(|f| f.rule.starts_with("MR-D"));
        let origin = match (&args.lock, &args.policy) {
            (Some(lock), _) if drift => Some(crate::model::Origin {
                file: lock.clone(),
                line: Some(Lock::line_of(&lock_text, &name, None)),
            }),
            (_, Some(policy)) => Some(crate::model::Origin {
                file: policy.clone(),
                line: Some(1),
            }),
            _ => base.and_then(|b| b.origin.clone()),
        };
        out.push(crate::model::ServerAssessment {
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
            findings: mine,
            errors: base.map(|b| b.errors.clone()).unwrap_or_default(),
            origin,
        });
    }
    out
}
