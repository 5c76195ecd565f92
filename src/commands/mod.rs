//! The subcommands, on top of the pipeline: each reads its arguments, calls down (targets ->
//! assessment -> policy / report) and writes the result. Nothing below imports a command.

mod catalog;
mod check;
mod lookup;
mod rules;

use crate::assess::pipeline::{exit_code, load_and_assess, load_rules, Assessed};
use crate::cli::Command;
use crate::error::{Error, Result};
use crate::output::sanitize;
use crate::output::terminal::{terminal_width, use_color};
use crate::output::{emit, io_err, note_written};
use crate::policy::{agentgateway, claude_code, intercept, policylayer, Flavor};
use crate::report::{self, ci_formats, templates, Format, Report};

/// Runs a command and returns the exit code (0 fine, 1 findings at or above --fail-on).
pub fn run(cli: crate::cli::Cli) -> Result<u8> {
    match cli.command {
        Command::Scan(args) => {
            let Assessed {
                servers,
                any_failed,
                mut raw_tools,
                settings,
            } = load_and_assess(&args.target, &args.assess, args.output.quiet)?;
            if let Some(lock_path) = &args.lock {
                let raw = std::mem::take(&mut raw_tools);
                let pairs: Vec<_> = servers.iter().cloned().zip(raw).collect();
                let text = crate::ci::lock::Lock::from_assessments(&pairs).to_text();
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
        Command::Policy(args) => {
            let Assessed {
                servers,
                any_failed,
                settings,
                raw_tools,
            } = load_and_assess(&args.target, &args.assess, args.output.quiet)?;
            let fail_on = args.fail_on.or(settings.project.fail_on_value());
            let fresh = match args.flavor {
                Flavor::Policylayer => policylayer::policy(&servers),
                Flavor::ClaudeCode => claude_code::settings(&servers),
                Flavor::Intercept => intercept::policy(&servers),
                Flavor::Agentgateway => agentgateway::policy(&servers),
            };
            let path = args.output.output.as_deref().filter(|p| *p != "-");
            if args.check && path.is_none() {
                return Err(Error::new(
                    "policy --check compares with the file given by -o FILE",
                ));
            }
            // Only a regular file holds a policy to merge with: `-o /dev/stdout` or a FIFO is
            // somewhere to write, and reading it would block or consume someone else's data.
            let existing = match path {
                Some(p) if std::fs::metadata(p).is_ok_and(|m| m.is_file()) => {
                    Some(crate::policy::read::load(p)?)
                }
                _ => None,
            };
            if let Some(old) = existing.as_ref().filter(|_| !args.reset) {
                if old.kind != args.flavor.kind() {
                    return Err(Error::new(format!(
                        "{}: the file is not a {} policy; give its --flavor, or --reset to replace it",
                        path.unwrap_or_default(),
                        args.flavor.as_str()
                    )));
                }
            }
            let doc = match &existing {
                Some(old) if !args.reset => {
                    let (doc, notes) = crate::policy::merge::merge(&fresh, old, &servers);
                    if !args.output.quiet {
                        for k in &notes.looser {
                            eprintln!(
                                "mcprisk: hand-edited rule looser than recommended: {}",
                                sanitize::one_line(k, 300)
                            );
                        }
                        if !notes.kept.is_empty() {
                            eprintln!(
                                "mcprisk: kept {} hand-edited rule(s); --reset replaces them",
                                notes.kept.len()
                            );
                        }
                        for d in &notes.dropped {
                            eprintln!(
                                "mcprisk: dropped the rule for {}, which no scanned server offers",
                                sanitize::one_line(d, 200)
                            );
                        }
                    }
                    doc
                }
                _ => fresh,
            };
            if args.check {
                let same = existing.as_ref().is_some_and(|old| old.doc == doc);
                if !args.output.quiet {
                    if same {
                        eprintln!("mcprisk: {} is up to date", path.unwrap_or_default());
                    } else {
                        eprintln!("mcprisk: {} differs from the policy that would be written; run mcprisk policy without --check", path.unwrap_or_default());
                    }
                }
                return Ok(if any_failed {
                    2
                } else if same {
                    0
                } else {
                    1
                });
            }
            emit(args.output.output.as_deref(), |out| {
                if args.flavor.is_yaml() {
                    let yaml = serde_saphyr::to_string(&doc)
                        .map_err(|e| Error::new(format!("cannot write the policy as YAML: {e}")))?;
                    if args.flavor == Flavor::Agentgateway {
                        out.write_all(agentgateway::HEADER.as_bytes())
                            .map_err(io_err)?;
                    }
                    out.write_all(yaml.as_bytes()).map_err(io_err)?;
                    if !yaml.ends_with('\n') {
                        writeln!(out).map_err(io_err)?;
                    }
                    return Ok(());
                }
                serde_json::to_writer_pretty(&mut *out, &doc).map_err(|e| io_err(e.into()))?;
                writeln!(out).map_err(io_err)
            })?;
            note_written(args.output.output.as_deref(), args.output.quiet);
            let code = exit_code(&servers, fail_on, any_failed);
            // As for scan: the process ends next, so nothing is freed piece by piece.
            std::mem::forget((servers, raw_tools, doc));
            Ok(code)
        }
        Command::Check(args) => check::run(&args),
        Command::Lookup(args) => lookup::run(&args),
        Command::Catalog(cmd) => catalog::run(cmd),
        Command::Completions(args) => {
            emit(None, |out| {
                let mut cmd = <crate::cli::Cli as clap::CommandFactory>::command();
                clap_complete::generate(args.shell, &mut cmd, "mcprisk", out);
                Ok(())
            })?;
            Ok(0)
        }
        Command::Man => {
            emit(None, |out| {
                let cmd = <crate::cli::Cli as clap::CommandFactory>::command();
                clap_mangen::Man::new(cmd).render(out).map_err(io_err)
            })?;
            Ok(0)
        }
        Command::Rules(args) => {
            let rules = load_rules(args.rules.as_deref())?;
            emit(None, |out| {
                rules::run(&rules, args.id.as_deref(), args.format, out)
            })?;
            Ok(0)
        }
    }
}
