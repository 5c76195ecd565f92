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
