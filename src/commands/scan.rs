//! `mcprisk scan TARGET...`: introspect and assess every target, then write the report in the
//! format asked for (and, with `--lock`, pin what every server offers in a lock file).

use crate::assess::pipeline::{exit_code, load_and_assess, load_rules, Assessed};
use crate::ci::lock::Lock;
use crate::cli::ScanArgs;
use crate::error::Result;
use crate::output::terminal::{terminal_width, use_color};
use crate::output::{emit, io_err, note_written};
use crate::policy::policylayer;
use crate::report::{self, ci_formats, templates, Format, Report};

/// Runs `scan`.
pub fn run(args: &ScanArgs) -> Result<u8> {
    let Assessed {
        servers,
        any_failed,
        mut raw_tools,
        settings,
    } = load_and_assess(&args.target, &args.assess, args.output.quiet)?;
    if let Some(lock_path) = &args.lock {
        let raw = std::mem::take(&mut raw_tools);
        let pairs: Vec<_> = servers.iter().cloned().zip(raw).collect();
        let mut lock = Lock::from_assessments(&pairs);
        // A server that failed keeps what the lock said of it: its 0 tools are not news.
        let failed: Vec<&str> = servers
            .iter()
            .filter(|s| s.errors.iter().any(|e| e.location == "server"))
            .map(|s| s.name.as_str())
            .collect();
        if !failed.is_empty() {
            let previous = std::path::Path::new(lock_path)
                .exists()
                .then(|| Lock::load(lock_path))
                .transpose()?;
            for (name, kept) in lock.keep_failed(previous.as_ref(), &failed) {
                let name = crate::output::sanitize::one_line(&name, 60);
                if kept {
                    eprintln!("mcprisk: {name} failed: its entry in {lock_path} is kept as it was");
                } else {
                    eprintln!("mcprisk: {name} failed: not added to {lock_path}");
                }
            }
        }
        // A list of offers that failed keeps what the lock said of it, as a failed server does.
        if servers.iter().any(|s| !s.offers.unlisted.is_empty()) {
            let previous = std::path::Path::new(lock_path)
                .exists()
                .then(|| Lock::load(lock_path))
                .transpose()?;
            for (name, kind) in lock.keep_unlisted(previous.as_ref(), &servers) {
                eprintln!(
                    "mcprisk: {}: {} failed: its {} entries in {lock_path} are kept as they were",
                    crate::output::sanitize::one_line(&name, 60),
                    kind.list_method().unwrap_or("listing"),
                    kind.as_str().replace('_', " ")
                );
            }
        }
        let text = lock.to_text();
        emit(Some(lock_path), |out| {
            out.write_all(text.as_bytes()).map_err(io_err)
        })?;
        if !args.output.quiet {
            eprintln!("mcprisk: locked {} server(s) in {lock_path}", servers.len());
        }
    }
    let policy = policylayer::policy(&servers);
    let report = Report {
        servers: &servers,
        policy: &policy,
    };
    let color = use_color(args.output.color, args.output.output.is_some());
    match args.format {
        Format::Table => emit(args.output.output.as_deref(), |out| {
            let width = terminal_width(args.output.output.is_none());
            report::table::write(&report, out, color, width).map_err(io_err)
        })?,
        Format::Json => emit(args.output.output.as_deref(), |out| {
            report::json::write(&report, out).map_err(io_err)
        })?,
        Format::Md | Format::Html => {
            let env = templates::environment(args.templates.as_deref())?;
            let name = if args.format == Format::Md {
                templates::MARKDOWN_NAME
            } else {
                templates::HTML_NAME
            };
            emit(args.output.output.as_deref(), |out| {
                templates::render(&env, name, &report, out)
            })?
        }
        Format::Sarif | Format::Github | Format::Junit => ci_formats::write(
            args.format,
            &report,
            &load_rules(args.assess.rules.as_deref())?,
            args.fail_on.or(settings.project.fail_on_value()),
            args.output.output.as_deref(),
        )?,
    }
    note_written(args.output.output.as_deref(), args.output.quiet);
    let fail_on = args.fail_on.or(settings.project.fail_on_value());
    let code = exit_code(&servers, fail_on, any_failed);
    // The process ends next: handing every tool's JSON and verdict back to the
    // allocator piece by piece would cost a millisecond or more on a large list.
    std::mem::forget((servers, raw_tools, policy));
    Ok(code)
}
