//! Runs a parsed command line: load the target, assess it, emit reports or policies.

use crate::assess::{assess, Settings};
use crate::classify::{Engine, RuleFile};
use crate::cli::{AssessArgs, ColorChoice, Command, OutputArgs, TargetArgs};
use crate::error::{Error, Result};
use crate::model::{ServerAssessment, Severity};
use crate::output::{emit, io_err};
use crate::policy::{claude_code, policylayer, Flavor, Limits};
use crate::report::{self, templates, Format, Report};
use std::io::IsTerminal;

/// Runs a command and returns the exit code (0 fine, 1 findings at or above --fail-on).
pub fn run(cli: crate::cli::Cli) -> Result<u8> {
    match cli.command {
        Command::Scan(args) => {
            let servers = load_and_assess(&args.target, &args.assess)?;
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
            }
            note_written(&args.output);
            Ok(exit_for(&servers, args.fail_on))
        }
        Command::Policy(args) => {
            let servers = load_and_assess(&args.target, &args.assess)?;
            let doc = match args.flavor {
                Flavor::Policylayer => policylayer::policy(&servers),
                Flavor::ClaudeCode => claude_code::settings(&servers),
            };
            emit(args.output.output.as_deref(), |out| {
                serde_json::to_writer_pretty(&mut *out, &doc).map_err(|e| io_err(e.into()))?;
                writeln!(out).map_err(io_err)
            })?;
            note_written(&args.output);
            Ok(exit_for(&servers, args.fail_on))
        }
        Command::Rules(args) => {
            let rules = load_rules(args.rules.as_deref())?;
            emit(None, |out| {
                crate::rules_cmd::run(&rules, args.id.as_deref(), args.format, out)
            })?;
            Ok(0)
        }
    }
}

fn load_rules(path: Option<&str>) -> Result<RuleFile> {
    match path {
        Some(p) => RuleFile::load(p),
        None => Ok(RuleFile::embedded()),
    }
}

fn settings(args: &AssessArgs) -> Result<Settings> {
    let mut limits = Limits::default();
    for spec in &args.limits {
        limits.set(spec).map_err(Error::new)?;
    }
    Ok(Settings {
        profile: args.profile,
        limits,
    })
}

/// Loads every target named on the command line and assesses each as one server.
pub fn load_and_assess(target: &TargetArgs, args: &AssessArgs) -> Result<Vec<ServerAssessment>> {
    let settings = settings(args)?;
    let engine = Engine::new(load_rules(args.rules.as_deref())?);
    let Some(path) = target.tools.as_deref() else {
        return Err(Error::new(
            "no target: give a saved tool list with --tools FILE (or --tools - for standard input)",
        ));
    };
    let list = crate::toollist::load(path)?;
    let name = target
        .name
        .clone()
        .unwrap_or_else(|| server_name_from_path(path));
    let source = if path == "-" {
        "standard input".to_string()
    } else {
        format!("tool list {path}")
    };
    Ok(vec![assess(&engine, &name, &source, list, &settings)])
}

/// A server name from a tool list's file name: `proxmox-mcp.tools.json` gives `proxmox-mcp`.
pub fn server_name_from_path(path: &str) -> String {
    if path == "-" {
        return "stdin".into();
    }
    let file = std::path::Path::new(path)
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.to_string());
    let mut name = file.as_str();
    for suffix in [".json", ".tools", "-tools", "_tools"] {
        name = name.strip_suffix(suffix).unwrap_or(name);
    }
    if name.is_empty() {
        "server".into()
    } else {
        name.to_string()
    }
}

fn exit_for(servers: &[ServerAssessment], fail_on: Option<Severity>) -> u8 {
    match fail_on {
        Some(threshold)
            if servers
                .iter()
                .any(|s| s.max_severity().is_some_and(|m| m >= threshold)) =>
        {
            1
        }
        _ => 0,
    }
}

fn use_color(choice: ColorChoice, to_file: bool) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            !to_file
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::io::stdout().is_terminal()
        }
    }
}

fn terminal_width(to_stdout: bool) -> u16 {
    if to_stdout && std::io::stdout().is_terminal() {
        if let Some(cols) = std::env::var("COLUMNS").ok().and_then(|c| c.parse().ok()) {
            return cols;
        }
        if let Some((w, _)) = comfy_table::Table::new().width().map(|w| (w, 0)) {
            return w;
        }
    }
    160
}

fn note_written(out: &OutputArgs) {
    if let (Some(path), false) = (&out.output, out.quiet) {
        if path != "-" {
            eprintln!("mcprisk: wrote {path}");
        }
    }
}
