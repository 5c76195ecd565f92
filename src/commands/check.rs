//! `mcprisk check`: the CI gate. Drift against a lock file (never written here), and tools a
//! policy does not cover or covers more loosely than recommended. Exit 1 on any, 0 on none.

use crate::assess::pipeline::{baseline_keys, load_and_assess, load_rules, Assessed};
use crate::ci::as_findings;
use crate::ci::coverage::policy_issues;
use crate::ci::drift::compare;
use crate::ci::lock::Lock;
use crate::cli::{CheckArgs, CheckFormat};
use crate::error::{Error, Result};
use crate::model::Severity;
use crate::output::sanitize::one_line;
use crate::output::{emit, io_err};
use crate::policy::read;
use serde_json::json;

/// Whether a server could not be scanned (its error is reported at `server`).
fn scan_failed(s: &crate::model::ServerAssessment) -> bool {
    s.errors.iter().any(|e| e.location == "server")
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
    // A server that could not be scanned was not checked: it is listed as such, and neither
    // its lock entry nor a policy's rules for its tools are judged from a list it never gave.
    let failed: std::collections::HashSet<&str> = servers
        .iter()
        .filter(|s| scan_failed(s))
        .map(|s| s.name.as_str())
        .collect();
    let mut changes = Vec::new();
    if let Some(lock) = &lock {
        let pairs: Vec<_> = servers
            .iter()
            .cloned()
            .zip(raw_tools)
            .filter(|(s, _)| !failed.contains(s.name.as_str()))
            .collect();
        changes.extend(
            compare(lock, &pairs)
                .into_iter()
                .filter(|c| !failed.contains(c.server.as_str())),
        );
    }
    if let Some(p) = &policy {
        changes.extend(
            policy_issues(p, &servers)
                .into_iter()
                .filter(|c| failed.is_empty() || c.rule != crate::ci::coverage::ids::STALE_RULE),
        );
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
                crate::assess::pipeline::baseline_target(c.tool.as_deref(), c.subject.as_ref()),
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
        let report_servers = as_findings(
            &changes,
            &servers,
            args.lock.as_deref(),
            args.policy.as_deref(),
        );
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
            crate::output::inert::json_pretty(&mut *w, &doc).map_err(io_err)?;
            writeln!(w).map_err(io_err)
        })?,
        CheckFormat::Table => emit(out, |w| {
            // A server that could not be scanned was not checked: never count it as clean.
            let failed: Vec<_> = servers.iter().filter(|s| scan_failed(s)).collect();
            let checked = servers.len() - failed.len();
            if changes.is_empty() && failed.is_empty() {
                writeln!(
                    w,
                    "No drift and no policy gaps: {checked} server(s) checked."
                )
                .map_err(io_err)?;
            } else if changes.is_empty() {
                writeln!(
                    w,
                    "No drift and no policy gaps in {checked} of {} server(s); {} could not be checked.",
                    servers.len(),
                    failed.len()
                )
                .map_err(io_err)?;
            }
            for s in &failed {
                let why = s
                    .errors
                    .iter()
                    .find(|e| e.location == "server")
                    .map(|e| one_line(&e.message, 300))
                    .unwrap_or_default();
                writeln!(
                    w,
                    "NOT CHECKED {}: the server could not be scanned: {why}",
                    one_line(&s.name, 60)
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
                    match (&c.tool, &c.subject) {
                        (Some(t), _) => format!("/{}", one_line(t, 60)),
                        (None, Some(o)) => format!(" {}", one_line(&o.to_string(), 80)),
                        (None, None) => String::new(),
                    },
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
