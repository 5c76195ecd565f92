//! `mcprisk lookup NAME [TOOL]`: a server's record (identity, auth posture, grade, tools, policy)
//! or one tool's record, computed from the catalog by the same engine as a live scan.

use crate::assess::pipeline::{assess_targets, load_rules, Assessed};
use crate::catalog::lookup::resolve;
use crate::catalog::{store, Catalog};
use crate::cli::LookupArgs;
use crate::error::{Error, Result};
use crate::model::{Action, ServerAssessment, ToolAssessment};
use crate::output::sanitize::one_line;
use crate::output::terminal::{terminal_width, use_color};
use crate::output::{emit, io_err};
use crate::policy::policylayer;
use crate::report::{self, templates, Format, Report};
use serde_json::json;
use std::io::Write;

/// Runs `lookup`.
pub fn run(args: &LookupArgs) -> Result<u8> {
    let catalog = Catalog::load(&store::user_dirs(&args.catalog_dirs))?;
    let record = resolve(&catalog, &args.name)?;
    let target = crate::targets::Target {
        name: record.id.clone(),
        source: crate::targets::Source::Catalog(Box::new(record.clone())),
        entry: None,
        needs_consent: false,
    };
    let Assessed { servers, .. } = assess_targets(vec![target], &args.assess, true, None)?;
    let server = &servers[0];
    match &args.tool {
        None => server_view(args, &record, &servers),
        Some(tool) => {
            let t = server
                .tools
                .iter()
                .find(|t| t.name == *tool)
                .ok_or_else(|| {
                    let names: Vec<&str> = server.tools.iter().map(|t| t.name.as_str()).collect();
                    Error::new(format!(
                        "{} has no tool {tool:?}; its tools: {}",
                        record.id,
                        one_line(&names.join(", "), 600)
                    ))
                })?;
            tool_view(args, &record, server, t)
        }
    }
}

fn server_view(
    args: &LookupArgs,
    record: &crate::catalog::Record,
    servers: &[ServerAssessment],
) -> Result<u8> {
    let policy = policylayer::policy(servers);
    let report = Report {
        servers,
        policy: &policy,
    };
    let out = args.output.output.as_deref();
    match args.format {
        Format::Json => emit(out, |w| report::json::write(&report, w).map_err(io_err))?,
        Format::Md | Format::Html => {
            let env = templates::environment(args.templates.as_deref())?;
            let name = if args.format == Format::Md {
                templates::MARKDOWN_NAME
            } else {
                templates::HTML_NAME
            };
            emit(out, |w| templates::render(&env, name, &report, w))?
        }
        Format::Sarif | Format::Github | Format::Junit => report::ci_formats::write(
            args.format,
            &report,
            &load_rules(args.assess.rules.as_deref())?,
            None,
            out,
        )?,
        Format::Table => emit(out, |w| {
            write_identity(w, record).map_err(io_err)?;
            let color = use_color(args.output.color, out.is_some());
            report::table::write(&report, w, color, terminal_width(out.is_none()))
                .map_err(io_err)?;
            writeln!(w, "Recommended policy (PolicyLayer policy.json):").map_err(io_err)?;
            serde_json::to_writer_pretty(&mut *w, &policy).map_err(|e| io_err(e.into()))?;
            writeln!(w).map_err(io_err)
        })?,
    }
    Ok(0)
}

fn write_identity(w: &mut dyn Write, r: &crate::catalog::Record) -> std::io::Result<()> {
    writeln!(w, "{} — {}", one_line(&r.name, 80), one_line(&r.id, 120))?;
    writeln!(w, "{}", one_line(&r.summary, 200))?;
    let level = serde_json::to_value(r.identity.level)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default();
    writeln!(
        w,
        "Identity: {} ({level}); {}",
        one_line(&r.publisher, 80),
        one_line(&r.identity.evidence.join("; "), 300)
    )?;
    let kinds: Vec<String> = r
        .auth
        .kinds
        .iter()
        .filter_map(|k| serde_json::to_value(k).ok()?.as_str().map(String::from))
        .collect();
    let secrets: Vec<&str> = r
        .auth
        .variables
        .iter()
        .filter(|v| v.secret)
        .map(|v| v.name.as_str())
        .collect();
    writeln!(
        w,
        "Auth: {}{}",
        kinds.join(", "),
        if secrets.is_empty() {
            String::new()
        } else {
            format!("; secrets: {}", one_line(&secrets.join(", "), 200))
        }
    )?;
    if let Some(s) = &r.snapshot {
        writeln!(
            w,
            "Tools: snapshot of {} taken {} ({})",
            one_line(&s.source, 120),
            one_line(&s.taken, 20),
            one_line(&s.fingerprint, 80)
        )?;
    }
    if let Some(c) = &r.command {
        writeln!(w, "Start: {}", one_line(c, 200))?;
    }
    writeln!(w)
}

/// The policy.json with this tool's recommended rule only, as on a tool's record page.
pub fn single_tool_policy(t: &ToolAssessment) -> serde_json::Value {
    let mut doc = json!({"version": "1", "default": "deny"});
    match policylayer::tool_rule(t) {
        Some(rule) => doc["tools"] = json!({ t.name.clone(): rule }),
        None if t.recommended.action == Action::Hide => {
            doc["hide"] = json!([t.name]);
            doc["tools"] = json!({});
        }
        None => doc["tools"] = json!({}),
    }
    doc
}

fn category_meaning(t: &ToolAssessment) -> &'static str {
    match t.category {
        crate::model::Category::Read => "it retrieves data without modifying state",
        crate::model::Category::Write => "it creates or changes data in a way that can be undone",
        crate::model::Category::Execute => "it can trigger actions or run processes",
        crate::model::Category::Destructive => {
            "it can delete, destroy or irreversibly change data or access"
        }
        crate::model::Category::Financial => "it can move money or create a financial obligation",
    }
}

fn tool_view(
    args: &LookupArgs,
    record: &crate::catalog::Record,
    server: &ServerAssessment,
    t: &ToolAssessment,
) -> Result<u8> {
    let policy = single_tool_policy(t);
    let deny = json!({"version": "1", "default": "deny", "tools": {}});
    let rate = json!({"version": "1", "default": "deny", "tools": { t.name.clone(): {"limits": [{"counter": format!("{}_rate", t.name), "window": "minute", "max": t.recommended.max_per_minute.unwrap_or(10), "scope": "grant"}]}}});
    let findings: Vec<&crate::model::Finding> = server
        .findings
        .iter()
        .filter(|f| f.tool.as_deref() == Some(t.name.as_str()))
        .collect();
    let doc = json!({
        "schema_version": report::json::SCHEMA_VERSION,
        "server": {"id": record.id, "name": record.name, "publisher": record.publisher, "grade": server.grade},
        "tool": t,
        "findings": findings,
        "policy": policy,
        "how_to_deny": deny,
        "how_to_rate_limit": rate,
    });
    let out = args.output.output.as_deref();
    match args.format {
        Format::Json => emit(out, |w| {
            serde_json::to_writer_pretty(&mut *w, &doc).map_err(|e| io_err(e.into()))?;
            writeln!(w).map_err(io_err)
        })?,
        Format::Md | Format::Html => {
            let env = templates::environment(args.templates.as_deref())?;
            let name = if args.format == Format::Md {
                templates::TOOL_MARKDOWN_NAME
            } else {
                templates::TOOL_HTML_NAME
            };
            emit(out, |w| templates::render_value(&env, name, &doc, w))?
        }
        Format::Sarif | Format::Github | Format::Junit => {
            return Err(Error::new(
                "lookup NAME TOOL prints one tool as table, json, md or html; CI formats (sarif, github, junit) take the whole server: drop TOOL",
            ))
        }
        Format::Table => emit(out, |w| {
            let name = one_line(&t.name, 80);
            let server_name = one_line(&record.name, 80);
            let io = |r: std::io::Result<()>| r.map_err(io_err);
            io(writeln!(w, "{name} · {server_name}: Risk & Policy\n"))?;
            io(writeln!(
                w,
                "WHAT IT DOES\n  {}\n",
                one_line(&t.description, 600)
            ))?;
            io(writeln!(
                w,
                "WHY IT NEEDS A POLICY\n  {name} is {} {} tool ({} risk): {}.",
                if t.category == crate::model::Category::Execute {
                    "an"
                } else {
                    "a"
                },
                t.category,
                t.severity.as_str().to_lowercase(),
                category_meaning(t)
            ))?;
            for e in &t.evidence {
                io(writeln!(w, "  {} {}", e.rule, one_line(&e.detail, 200)))?;
            }
            for f in &findings {
                io(writeln!(
                    w,
                    "  finding {} ({}): {}",
                    f.rule,
                    f.severity,
                    one_line(&f.message, 200)
                ))?;
            }
            io(writeln!(
                w,
                "\nVERDICT\n  Category {}, severity {}, confidence {:.2}{}",
                t.category,
                t.severity,
                t.confidence,
                if t.reviewed { ", reviewed" } else { "" }
            ))?;
            io(writeln!(
                w,
                "  Recommended rule: {} ({})\n",
                t.recommended.action.as_str(),
                one_line(&t.recommended.reason, 200)
            ))?;
            io(writeln!(w, "policy.json"))?;
            serde_json::to_writer_pretty(&mut *w, &policy).map_err(|e| io_err(e.into()))?;
            io(writeln!(w, "\n\nHOW TO BLOCK IT\n  Leave it out of \"tools\" under \"default\": \"deny\" (or list it under \"hide\" so the agent never sees it):"))?;
            serde_json::to_writer(&mut *w, &deny).map_err(|e| io_err(e.into()))?;
            io(writeln!(w, "\n\nHOW TO RATE-LIMIT IT"))?;
            serde_json::to_writer(&mut *w, &rate).map_err(|e| io_err(e.into()))?;
            io(writeln!(
                w,
                "\n\nProvided by {} ({}).",
                server_name,
                one_line(&record.id, 120)
            ))
        })?,
    }
    Ok(0)
}
