//! `mcprisk lookup NAME [TOOL]`: a server's record (identity, auth posture, grade, tools, policy)
//! or one tool's record, computed from the catalog by the same engine as a live scan.

use crate::assess::pipeline::{assess_targets, load_rules, Assessed};
use crate::catalog::lookup::{find, resolve, Found};
use crate::catalog::Entry;
use crate::catalog::{store, Catalog, Record};
use crate::cli::LookupArgs;
use crate::error::{Error, Result};
use crate::model::{ServerAssessment, ToolAssessment};
use crate::output::sanitize::one_line;
use crate::output::terminal::{terminal_width, use_color};
use crate::output::{emit, io_err};
use crate::policy::policylayer;
use crate::report::{self, lookup, templates, Format, Report};
use crate::targets::{Source, Target};

/// Runs `lookup`.
pub fn run(args: &LookupArgs) -> Result<u8> {
    let catalog = Catalog::load(&store::user_dirs(&args.catalog_dirs))?;
    if let (Found::Vendor(vendor, entries), None) = (find(&catalog, &args.name), &args.tool) {
        return vendor_view(args, &vendor, &entries);
    }
    let record = resolve(&catalog, &args.name)?;
    if record.snapshot.is_none() && args.format == Format::Table {
        // Nothing to assess: say what is known and how to scan it.
        let out = args.output.output.as_deref();
        emit(out, |w| lookup::write_unscanned(w, &record).map_err(io_err))?;
        return Ok(0);
    }
    // The views read the record's facts, not its tools: the tools move into the assessment
    // and a copy of the rest stays here (a record may hold thousands of tools).
    let header = record.clone_without_tools();
    let target = Target {
        name: record.id.clone(),
        source: Source::Catalog(Box::new(record)),
        entry: None,
        needs_consent: false,
    };
    let record = header;
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

fn server_view(args: &LookupArgs, record: &Record, servers: &[ServerAssessment]) -> Result<u8> {
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
            let color = use_color(args.output.color, out.is_some());
            let width = terminal_width(out.is_none());
            lookup::write_server(w, record, &report, &policy, color, width).map_err(io_err)
        })?,
    }
    Ok(0)
}

fn tool_view(
    args: &LookupArgs,
    record: &Record,
    server: &ServerAssessment,
    t: &ToolAssessment,
) -> Result<u8> {
    let doc = lookup::tool_document(record, server, t);
    let out = args.output.output.as_deref();
    match args.format {
        Format::Json => emit(out, |w| {
            crate::output::inert::json_pretty(&mut *w, &doc).map_err(io_err)?;
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
            lookup::write_tool(w, record, server, t).map_err(io_err)
        })?,
    }
    Ok(0)
}

/// Every server of a vendor (`lookup stripe`), one line each, with how to look one up.
fn vendor_view(args: &LookupArgs, vendor: &str, entries: &[&Entry]) -> Result<u8> {
    let out = args.output.output.as_deref();
    match args.format {
        Format::Json => emit(out, |w| {
            let servers: Vec<serde_json::Value> = entries
                .iter()
                .map(|e| {
                    serde_json::json!({"id": e.listing.id, "name": e.listing.name,
                        "publisher": e.listing.publisher, "summary": e.listing.summary,
                        "tools": e.listing.tools.len()})
                })
                .collect();
            let doc = serde_json::json!({"schema_version": report::json::SCHEMA_VERSION,
                "vendor": vendor, "matches": servers});
            serde_json::to_writer_pretty(&mut *w, &doc).map_err(|e| io_err(e.into()))?;
            writeln!(w).map_err(io_err)
        })?,
        _ => emit(out, |w| {
            writeln!(w, "{} servers of {}:", entries.len(), one_line(vendor, 60))
                .map_err(io_err)?;
            for e in entries {
                let tools = if e.listing.tools.is_empty() {
                    "no snapshot".to_string()
                } else {
                    format!("{} tools", e.listing.tools.len())
                };
                writeln!(
                    w,
                    "  {:<48} {:>11}  {}",
                    one_line(&e.listing.id, 48),
                    tools,
                    one_line(&e.listing.summary, 80)
                )
                .map_err(io_err)?;
            }
            writeln!(w, "mcprisk lookup ID shows one of them.").map_err(io_err)
        })?,
    }
    Ok(0)
}
