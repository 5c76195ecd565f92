//! `mcprisk lookup NAME [TOOL]`: a server's record (identity, auth posture, grade, tools, policy)
//! or one tool's record, computed from the catalog by the same engine as a live scan.

use crate::assess::pipeline::{assess_targets, load_rules, Assessed};
use crate::catalog::lookup::resolve;
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
    let record = resolve(&catalog, &args.name)?;
    let target = Target {
        name: record.id.clone(),
        source: Source::Catalog(Box::new(record.clone())),
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
