//! Runs a parsed command line: load the target, assess it, emit reports or policies.

use crate::assess::{assess_in, failed, Context, Settings};
use crate::classify::findings;
use crate::classify::{Engine, RuleFile};
use crate::cli::{AssessArgs, ColorChoice, Command, OutputArgs, TargetArgs};
use crate::error::{Error, Result};
use crate::model::{ServerAssessment, Severity};
use crate::output::sanitize;
use crate::output::{emit, io_err};
use crate::policy::{agentgateway, claude_code, intercept, policylayer, Flavor, Limits};
use crate::report::{self, templates, Format, Report};
use crate::targets::fetch as runner;
use crate::targets::{self as target, Source, Target};
use std::io::IsTerminal;
use std::time::Duration;

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
                Format::Sarif | Format::Github | Format::Junit => write_ci(
                    args.format,
                    &report,
                    args.assess.rules.as_deref(),
                    args.fail_on.or(settings.project.fail_on_value()),
                    args.output.output.as_deref(),
                )?,
            }
            note_written(&args.output);
            let fail_on = args.fail_on.or(settings.project.fail_on_value());
            let code = exit_for(&servers, fail_on, any_failed);
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
            note_written(&args.output);
            let code = exit_for(&servers, fail_on, any_failed);
            // As for scan: the process ends next, so nothing is freed piece by piece.
            std::mem::forget((servers, raw_tools, doc));
            Ok(code)
        }
        Command::Check(args) => crate::check_cmd::run(&args),
        Command::Lookup(args) => crate::lookup_cmd::run(&args),
        Command::Catalog(cmd) => crate::catalog_cmd::run(cmd),
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
                crate::rules_cmd::run(&rules, args.id.as_deref(), args.format, out)
            })?;
            Ok(0)
        }
    }
}

/// Writes a CI format (SARIF, GitHub annotations, JUnit) of `report`; rule docs come from the
/// rules file in use.
pub fn write_ci(
    format: Format,
    report: &Report,
    rules_path: Option<&str>,
    fail_on: Option<Severity>,
    output: Option<&str>,
) -> Result<()> {
    let rules = load_rules(rules_path)?;
    let opts = report::ci::CiOptions { fail_on };
    emit(output, |out| {
        match format {
            Format::Sarif => report::sarif::write(report, &rules, &opts, out),
            Format::Github => report::github::write(report, &rules, &opts, out),
            _ => report::junit::write(report, &rules, &opts, out),
        }
        .map_err(io_err)
    })
}

fn load_rules(path: Option<&str>) -> Result<RuleFile> {
    match path {
        Some(p) => RuleFile::load(p),
        None => Ok(RuleFile::embedded()),
    }
}

/// The effective settings: flags first, then the repository's settings file, then defaults.
pub fn settings(args: &AssessArgs) -> Result<Settings> {
    let project = crate::assess::project::ProjectSettings::load(args.settings.as_deref())?;
    let today = crate::assess::project::today();
    let mut limits = Limits::default();
    for (cat, n) in &project.limits {
        limits
            .set(&format!("{cat}={n}"))
            .map_err(|e| Error::new(format!("{}: limits: {e}", project.path)))?;
    }
    for spec in &args.limits {
        limits.set(spec).map_err(Error::new)?;
    }
    Ok(Settings {
        profile: args.profile.or(project.profile_value()).unwrap_or_default(),
        limits,
        project,
        today,
    })
}

/// Keys of what a saved run reported: (rule, server, tool, message).
pub fn baseline_keys(
    path: &str,
) -> Result<std::collections::HashSet<(String, String, String, String)>> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::new(format!("{path}: cannot read the baseline: {e}")))?;
    let doc: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| Error::new(format!("{path}: not a saved mcprisk JSON run: {e}")))?;
    if doc.get("schema_version").is_none() {
        return Err(Error::new(format!(
            "{path}: not a saved mcprisk JSON run (no schema_version)"
        )));
    }
    let s = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_string();
    let mut keys = std::collections::HashSet::new();
    for server in doc["servers"].as_array().into_iter().flatten() {
        for f in server["findings"].as_array().into_iter().flatten() {
            keys.insert((
                s(&f["rule"]),
                s(&server["name"]),
                s(&f["tool"]),
                s(&f["message"]),
            ));
        }
    }
    for c in doc["changes"].as_array().into_iter().flatten() {
        keys.insert((
            s(&c["rule"]),
            s(&c["server"]),
            s(&c["tool"]),
            s(&c["message"]),
        ));
    }
    Ok(keys)
}

/// The outcome of assessing every target: the assessments, and whether any server failed.
pub struct Assessed {
    pub servers: Vec<ServerAssessment>,
    pub any_failed: bool,
    /// Each server's tools as raw JSON (the readable ones), for lock files.
    pub raw_tools: Vec<Vec<serde_json::Value>>,
    /// The effective settings the servers were assessed with (flags, then .mcprisk.yaml).
    pub settings: Settings,
}

/// How live servers are fetched.
#[derive(Debug, Clone)]
pub struct FetchSettings {
    pub timeout: f64,
    pub jobs: usize,
    pub save_tools: Option<String>,
}

impl Default for FetchSettings {
    fn default() -> Self {
        FetchSettings {
            timeout: 30.0,
            jobs: 8,
            save_tools: None,
        }
    }
}

/// Resolves the targets named on the command line, fetches their tool lists (asking before
/// starting servers from config files) and assesses each as one server.
pub fn load_and_assess(target: &TargetArgs, args: &AssessArgs, quiet: bool) -> Result<Assessed> {
    let targets = resolve_targets(target, quiet)?;
    if target.save_tools.is_some() && targets.len() != 1 {
        return Err(Error::new(format!(
            "--save-tools keeps one server's tool list, but {} servers were named",
            targets.len()
        )));
    }
    runner::consent(&targets, target.yes)?;
    let fetch = FetchSettings {
        timeout: target.timeout,
        jobs: target.jobs,
        save_tools: target.save_tools.clone(),
    };
    assess_targets(targets, args, quiet, Some(&fetch))
}

/// Fetches and assesses resolved targets (consent already given).
pub fn assess_targets(
    targets: Vec<Target>,
    args: &AssessArgs,
    quiet: bool,
    fetch: Option<&FetchSettings>,
) -> Result<Assessed> {
    let default_fetch = FetchSettings::default();
    let fetch = fetch.unwrap_or(&default_fetch);
    let settings = settings(args)?;
    for ig in settings.project.expired(&settings.today) {
        eprintln!(
            "mcprisk: {}: the ignore of {} expired on {} and no longer suppresses ({})",
            settings.project.path,
            ig.rule,
            ig.expires.as_deref().unwrap_or(""),
            sanitize::one_line(&ig.reason, 200)
        );
    }
    let engine = Engine::new(load_rules(args.rules.as_deref())?);
    if !(fetch.timeout.is_finite() && fetch.timeout > 0.0 && fetch.timeout <= 86_400.0) {
        return Err(Error::new(
            "--timeout takes seconds, more than 0 and at most 86400",
        ));
    }
    let mut opts = crate::targets::mcp::Options {
        timeout: Duration::from_secs_f64(fetch.timeout),
        ..Default::default()
    };
    opts.startup_timeout = opts.startup_timeout.min(opts.timeout);
    opts.request_timeout = opts.request_timeout.min(opts.timeout);
    let live = targets
        .iter()
        .any(|t| !matches!(t.source, Source::ToolsFile(_)));
    if live {
        // Servers run in their own process groups, so Ctrl-C must end them explicitly.
        let _ = ctrlc::set_handler(|| {
            crate::targets::mcp::kill_running_servers();
            eprintln!("mcprisk: interrupted; servers stopped");
            std::process::exit(130);
        });
    }
    let progress = live && !quiet && std::io::stderr().is_terminal();
    let fetched = runner::fetch_all(targets, &opts, fetch.jobs, progress);
    // A saved tool list that cannot be read is bad input, not a server that failed: stop.
    if let Some(err) = fetched
        .iter()
        .find_map(|f| match (&f.target.source, &f.list) {
            (Source::ToolsFile(_), Err(e)) => Some(e.clone()),
            _ => None,
        })
    {
        return Err(Error::new(err));
    }
    if let Some(path) = &fetch.save_tools {
        let f = &fetched[0];
        match (&f.raw_tools, &f.list) {
            (Some(raw), _) => emit(Some(path), |out| {
                serde_json::to_writer_pretty(&mut *out, &serde_json::json!({ "tools": raw }))
                    .map_err(|e| io_err(e.into()))?;
                writeln!(out).map_err(io_err)
            })?,
            (None, Ok(_)) => {
                return Err(Error::new(
                    "--save-tools needs a live server (--stdio, --url, --config or --)",
                ))
            }
            (None, Err(_)) => {}
        }
    }
    let lists: Vec<(&str, &[crate::model::Tool])> = fetched
        .iter()
        .map(|f| {
            (
                f.target.name.as_str(),
                f.list.as_ref().map(|l| l.tools.as_slice()).unwrap_or(&[]),
            )
        })
        .collect();
    let mut cross: Vec<Vec<crate::model::Finding>> = vec![Vec::new(); fetched.len()];
    for (i, f) in findings::cross_server(engine.rules(), &lists) {
        cross[i].push(f);
    }
    let mut servers = Vec::new();
    let mut raw_tools = Vec::new();
    let mut any_failed = false;
    for (f, extra) in fetched.into_iter().zip(cross) {
        if !quiet {
            for w in &f.warnings {
                eprintln!(
                    "mcprisk: {}: {}",
                    sanitize::one_line(&f.target.name, 60),
                    sanitize::one_line(w, 300)
                );
            }
        }
        let ctx = Context {
            name: f.target.name.clone(),
            source: f.target.describe(),
            posture: crate::assess::posture::of(engine.rules(), &f),
            extra_findings: extra,
            overrides: match &f.target.source {
                Source::Catalog(r) => r.overrides.clone(),
                _ => Vec::new(),
            },
        };
        let origin = origin_of(&f.target);
        match f.list {
            Ok(list) => {
                servers.push(assess_in(&engine, ctx, &list, &settings));
                raw_tools.push(list.tools.into_iter().map(|t| t.raw).collect());
            }
            Err(e) => {
                any_failed = true;
                {
                    // Errors are printed even with -q.
                    eprintln!(
                        "mcprisk: {}: {}",
                        sanitize::one_line(&f.target.name, 60),
                        sanitize::one_line(&e, 400)
                    );
                }
                raw_tools.push(Vec::new());
                servers.push(failed(&engine, ctx, e));
            }
        }
        if let Some(s) = servers.last_mut() {
            s.origin = origin;
        }
    }
    if let Some(path) = &args.baseline {
        let known = baseline_keys(path)?;
        for server in &mut servers {
            let name = server.name.clone();
            server.findings.retain(|f| {
                !known.contains(&(
                    f.rule.clone(),
                    name.clone(),
                    f.tool.clone().unwrap_or_default(),
                    f.message.clone(),
                ))
            });
        }
    }
    Ok(Assessed {
        servers,
        any_failed,
        raw_tools,
        settings,
    })
}

/// Where a target was declared: its config file line, or the tool list file it is read from.
pub fn origin_of(t: &Target) -> Option<crate::model::Origin> {
    match (&t.entry, &t.source) {
        (Some(e), _) => Some(crate::model::Origin {
            file: e.file.display().to_string(),
            line: Some(e.line),
        }),
        (None, Source::ToolsFile(p)) if p != "-" => Some(crate::model::Origin {
            file: p.clone(),
            line: None,
        }),
        _ => None,
    }
}

/// Every target on the command line, in order: tool lists, stdio commands, URLs, configs.
fn resolve_targets(t: &TargetArgs, quiet: bool) -> Result<Vec<Target>> {
    let mut targets = Vec::new();
    for path in &t.tools {
        targets.push(Target {
            name: server_name_from_path(path),
            source: Source::ToolsFile(path.clone()),
            entry: None,
            needs_consent: false,
        });
    }
    for line in &t.stdio {
        targets.push(target::stdio(target::split_command(line)?, None));
    }
    if !t.command.is_empty() {
        targets.push(target::stdio(t.command.clone(), None));
    }
    let headers = t
        .headers
        .iter()
        .map(|h| target::parse_header(h))
        .collect::<Result<Vec<_>>>()?;
    if !headers.is_empty() && t.url.is_empty() {
        return Err(Error::new(
            "--header applies to --url servers; none was given",
        ));
    }
    for url in &t.url {
        let parsed = url::Url::parse(url).map_err(|e| {
            Error::new(format!("--url {}: not a URL: {e}", target::redact_url(url)))
        })?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(Error::new(format!(
                "--url {}: only http and https are supported",
                target::redact_url(url)
            )));
        }
        targets.push(Target {
            name: parsed.host_str().unwrap_or("server").to_string(),
            source: Source::Http {
                url: url.clone(),
                headers: headers.clone(),
                kind: crate::targets::clients::HttpKind::Auto,
            },
            entry: None,
            needs_consent: false,
        });
    }
    if !t.server.is_empty() {
        let catalog =
            crate::catalog::Catalog::load(&crate::catalog::store::user_dirs(&t.catalog_dirs))?;
        for name in &t.server {
            let record = crate::catalog::lookup::resolve(&catalog, name)?;
            targets.push(Target {
                name: record.id.clone(),
                source: Source::Catalog(Box::new(record)),
                entry: None,
                needs_consent: false,
            });
        }
    }
    let mut configs: Vec<std::path::PathBuf> = t.config.iter().map(Into::into).collect();
    if t.discover {
        let roots = crate::targets::clients::discover::Roots::current()
            .ok_or_else(|| Error::new("--discover: cannot tell the home directory"))?;
        let found = crate::targets::clients::discover::existing(&roots);
        if found.is_empty() {
            let looked: Vec<String> = crate::targets::clients::discover::candidates(&roots)
                .iter()
                .map(|(c, p)| format!("  {} {}", c.as_str(), p.display()))
                .collect();
            return Err(Error::new(format!(
                "--discover: no MCP client config found; looked in:\n{}",
                looked.join("\n")
            )));
        }
        for (client, path) in found {
            if !quiet {
                eprintln!(
                    "mcprisk: found {} config {}",
                    client.as_str(),
                    path.display()
                );
            }
            configs.push(path);
        }
    }
    for path in &configs {
        let file = crate::targets::clients::load(path)?;
        if !quiet {
            for p in &file.problems {
                eprintln!("mcprisk: {}", sanitize::one_line(p, 300));
            }
        }
        let from = target::from_config(&file);
        if from.is_empty() && !quiet {
            eprintln!("mcprisk: {}: declares no enabled server", path.display());
        }
        targets.extend(from);
    }
    if targets.is_empty() {
        return Err(Error::new(
            "no target: give --tools FILE, --server NAME, --stdio \"CMD\", --url URL, --config FILE, --discover, or -- CMD ARGS",
        ));
    }
    if let Some(name) = &t.name {
        if targets.len() != 1 {
            return Err(Error::new(
                "--name names one server, but several targets were given",
            ));
        }
        targets[0].name = name.clone();
    }
    dedupe_names(&mut targets);
    Ok(targets)
}

/// The tool list exactly as one server sent it, with its serverInfo and protocol version, for
/// `catalog add`.
pub fn fetch_for_add(
    t: &TargetArgs,
    quiet: bool,
) -> Result<(
    Vec<serde_json::Value>,
    Option<serde_json::Value>,
    Option<String>,
)> {
    let targets = resolve_targets(t, quiet)?;
    if targets.len() != 1 {
        return Err(Error::new(format!(
            "catalog add takes one server, but {} were named",
            targets.len()
        )));
    }
    if let Source::ToolsFile(path) = &targets[0].source {
        return Ok((crate::targets::toollist::load_raw(path)?, None, None));
    }
    runner::consent(&targets, t.yes)?;
    let mut opts = crate::targets::mcp::Options {
        timeout: Duration::from_secs_f64(t.timeout.clamp(0.1, 86_400.0)),
        ..Default::default()
    };
    opts.startup_timeout = opts.startup_timeout.min(opts.timeout);
    opts.request_timeout = opts.request_timeout.min(opts.timeout);
    let mut fetched = runner::fetch_all(targets, &opts, 1, false);
    let f = fetched.remove(0);
    if let Err(e) = &f.list {
        return Err(Error::new(e.clone()));
    }
    let (info, proto) = match &f.wire {
        Some(Ok(intro)) => (
            intro.server_info.clone().filter(|v| !v.is_null()),
            intro.protocol_version.clone(),
        ),
        _ => (None, None),
    };
    Ok((f.raw_tools.unwrap_or_default(), info, proto))
}

/// Makes server names unique (`github`, `github-2`), so policies and reports can tell them apart.
fn dedupe_names(targets: &mut [Target]) {
    let mut seen: std::collections::HashMap<String, usize> = Default::default();
    for t in targets.iter_mut() {
        let n = seen.entry(t.name.clone()).or_insert(0);
        *n += 1;
        if *n > 1 {
            t.name = format!("{}-{}", t.name, n);
        }
    }
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

/// 2 when a server could not be scanned, 1 for findings at or above `--fail-on`, else 0.
fn exit_for(servers: &[ServerAssessment], fail_on: Option<Severity>, any_failed: bool) -> u8 {
    if any_failed {
        return 2;
    }
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

/// Whether to colour output for this choice and destination.
pub fn use_color(choice: ColorChoice, to_file: bool) -> bool {
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

/// The table width: the terminal's, or 160 when writing elsewhere.
pub fn terminal_width(to_stdout: bool) -> u16 {
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
