//! The whole pipeline for the commands that assess: resolve the targets the command line
//! names, fetch their tool lists, and assess each as one server (with the findings that need
//! several servers, the repository's settings and a baseline applied).

use super::project::{self, ProjectSettings};
use super::{assess_in, failed, posture, Context, Settings};
use crate::classify::findings;
use crate::classify::{Engine, RuleFile};
use crate::cli::{AssessArgs, TargetArgs};
use crate::error::{Error, Result};
use crate::model::{ServerAssessment, Severity};
use crate::output::sanitize;
use crate::output::{emit, io_err};
use crate::policy::Limits;
use crate::targets::fetch::{consent, fetch_all};
use crate::targets::{resolve, Source, Target};
use std::io::IsTerminal;
use std::time::Duration;

/// The rules in use: the file `--rules` names, else the built-in `catalog/rules.yaml`.
pub fn load_rules(path: Option<&str>) -> Result<RuleFile> {
    match path {
        Some(p) => RuleFile::load(p),
        None => Ok(RuleFile::embedded()),
    }
}

/// The effective settings: flags first, then the repository's settings file, then defaults.
pub fn settings(args: &AssessArgs) -> Result<Settings> {
    let project = ProjectSettings::load(args.settings.as_deref())?;
    let today = project::today();
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

/// What a finding or change is about, as a baseline key has it: the tool's name, else the
/// offer as `kind:name` (`prompt:review`), else empty.
pub fn baseline_target(
    tool: Option<&str>,
    subject: Option<&crate::model::offers::Subject>,
) -> String {
    match (tool, subject) {
        (Some(t), _) => t.to_string(),
        (None, Some(o)) => format!("{}:{}", o.kind, o.name),
        (None, None) => String::new(),
    }
}

/// Keys of what a saved run reported: (rule, server, tool or offer, message).
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
    // What a finding or change is about: its tool, else its offer (`prompt:NAME`).
    let about = |v: &serde_json::Value| match (v["tool"].as_str(), v.get("subject")) {
        (Some(t), _) => t.to_string(),
        (None, Some(o)) => format!("{}:{}", s(&o["kind"]), s(&o["name"])),
        (None, None) => String::new(),
    };
    let mut keys = std::collections::HashSet::new();
    for server in doc["servers"].as_array().into_iter().flatten() {
        for f in server["findings"].as_array().into_iter().flatten() {
            keys.insert((
                s(&f["rule"]),
                s(&server["name"]),
                about(f),
                s(&f["message"]),
            ));
        }
    }
    for c in doc["changes"].as_array().into_iter().flatten() {
        keys.insert((s(&c["rule"]), s(&c["server"]), about(c), s(&c["message"])));
    }
    Ok(keys)
}

/// The outcome of assessing every target: the assessments, and whether any server failed.
pub struct Assessed {
    /// One assessment per target, in the targets' order (a failed server is graded F).
    pub servers: Vec<ServerAssessment>,
    /// Whether any server could not be scanned.
    pub any_failed: bool,
    /// Each server's tools as raw JSON (the readable ones), for lock files.
    pub raw_tools: Vec<Vec<serde_json::Value>>,
    /// The effective settings the servers were assessed with (flags, then .mcprisk.yaml).
    pub settings: Settings,
}

/// How live servers are fetched.
#[derive(Debug, Clone)]
pub struct FetchSettings {
    /// Bound on each server's whole scan, in seconds (`--timeout`).
    pub timeout: f64,
    /// Bound on each server's start-up, in seconds (`--startup-timeout`; default 20).
    pub startup_timeout: Option<f64>,
    /// How many servers are fetched at once (`--jobs`).
    pub jobs: usize,
    /// Where to save exactly what the one live server sent (`--save-tools`).
    pub save_tools: Option<String>,
}

impl Default for FetchSettings {
    fn default() -> Self {
        FetchSettings {
            timeout: 30.0,
            startup_timeout: None,
            jobs: 8,
            save_tools: None,
        }
    }
}

/// Resolves the targets named on the command line, fetches their tool lists (asking before
/// starting servers from config files) and assesses each as one server.
pub fn load_and_assess(target: &TargetArgs, args: &AssessArgs, quiet: bool) -> Result<Assessed> {
    let targets = resolve::from_args(target, quiet)?;
    if target.save_tools.is_some() && targets.len() != 1 {
        return Err(Error::new(format!(
            "--save-tools keeps one server's tool list, but {} servers were named",
            targets.len()
        )));
    }
    consent(&targets, target.yes)?;
    let fetch = FetchSettings {
        timeout: target.timeout,
        startup_timeout: target.startup_timeout,
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
    let rules = load_rules(args.rules.as_deref())?;
    if !(fetch.timeout.is_finite() && fetch.timeout > 0.0 && fetch.timeout <= 86_400.0) {
        return Err(Error::new(
            "--timeout takes seconds, more than 0 and at most 86400",
        ));
    }
    let mut opts = crate::targets::mcp::Options {
        timeout: Duration::from_secs_f64(fetch.timeout),
        ..Default::default()
    };
    crate::targets::fetch::set_startup_timeout(&mut opts, fetch.startup_timeout)?;
    opts.request_timeout = opts.request_timeout.min(opts.timeout);
    let live = targets
        .iter()
        .any(|t| !matches!(t.source, Source::ToolsFile(_)));
    let progress = live && !quiet && std::io::stderr().is_terminal();
    // The engine (its rule index and the learned model's table) is built while the tool lists
    // are read or fetched: for a saved list of a few hundred tools, building it is about a
    // third of what parsing the list takes, and it need not wait for it.
    let (engine, fetched) = std::thread::scope(|scope| {
        let fetching = scope.spawn(|| fetch_all(targets, &opts, fetch.jobs, progress));
        let engine = Engine::new(rules);
        let fetched = fetching
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (engine, fetched)
    });
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
        // A catalog record's tools are kept only parsed, each with its JSON as sent.
        let from_record: Option<Vec<serde_json::Value>> = match (&f.target.source, &f.list) {
            (Source::Catalog(_), Ok(list)) => {
                Some(list.tools.iter().map(|t| t.raw.clone()).collect())
            }
            _ => None,
        };
        match (f.raw_tools.as_ref().or(from_record.as_ref()), &f.list) {
            (Some(raw), _) => {
                // The combined capture: the tools and, beside them, whatever else was offered.
                let mut capture = serde_json::json!({ "tools": raw });
                if let (Some(Ok(intro)), serde_json::Value::Object(m)) = (&f.wire, &mut capture) {
                    if let Ok(serde_json::Value::Object(offers)) =
                        serde_json::to_value(&intro.offers)
                    {
                        m.extend(offers);
                    }
                }
                emit(Some(path), |out| {
                    crate::output::inert::json_pretty(&mut *out, &capture).map_err(io_err)?;
                    writeln!(out).map_err(io_err)
                })?
            }
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
    let with_instructions: Vec<(&str, &[crate::model::Tool], Option<&str>)> = fetched
        .iter()
        .zip(&lists)
        .map(|(f, (name, tools))| {
            let instructions = f.list.as_ref().ok();
            (
                *name,
                *tools,
                instructions.and_then(|l| l.offers.instructions.as_deref()),
            )
        })
        .collect();
    for (i, f) in crate::classify::offers::instructions_mentions(engine.rules(), &with_instructions)
    {
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
            posture: posture::of(engine.rules(), &f),
            extra_findings: extra,
            overrides: match &f.target.source {
                Source::Catalog(r) => r.overrides.clone(),
                _ => Vec::new(),
            },
        };
        let origin = origin_of(&f.target);
        if let Some(why) = &f.incomplete {
            // The tools read are assessed; the list's end is missing, which is an error.
            any_failed = true;
            eprintln!(
                "mcprisk: {}: {}",
                sanitize::one_line(&f.target.name, 60),
                sanitize::one_line_ends(why, 400)
            );
        }
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
                        sanitize::one_line_ends(&e, 400)
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
                    baseline_target(f.tool.as_deref(), f.subject.as_ref()),
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
fn origin_of(t: &Target) -> Option<crate::model::Origin> {
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

/// The exit code of an assessing command: 2 when a server could not be scanned, 1 for
/// findings at or above `--fail-on`, else 0. A 1 is explained on standard error (see
/// [`fail_on_reason`]), even with `-q`: it is the reason the build fails.
pub fn exit_code(servers: &[ServerAssessment], fail_on: Option<Severity>, any_failed: bool) -> u8 {
    if any_failed {
        return 2;
    }
    match fail_on.and_then(|t| fail_on_reason(servers, t)) {
        Some(reason) => {
            eprintln!("mcprisk: {reason}");
            1
        }
        None => 0,
    }
}

/// What crossed `--fail-on`: how many tools and findings are at or above the threshold, and
/// the first few of them, most severe first; `None` when nothing did.
pub fn fail_on_reason(servers: &[ServerAssessment], threshold: Severity) -> Option<String> {
    const SHOWN: usize = 5;
    let mut hits: Vec<(Severity, String)> = Vec::new();
    let (mut tools, mut findings) = (0usize, 0usize);
    for s in servers {
        let server = sanitize::one_line(&s.name, 60);
        for t in s.tools.iter().filter(|t| t.severity >= threshold) {
            tools += 1;
            hits.push((
                t.severity,
                format!(
                    "{server}/{} ({} {})",
                    sanitize::one_line(&t.name, 60),
                    t.severity,
                    t.category
                ),
            ));
        }
        for f in s.findings.iter().filter(|f| f.severity >= threshold) {
            findings += 1;
            let at = match &f.tool {
                Some(t) => format!("{server}/{}", sanitize::one_line(t, 60)),
                None => server.clone(),
            };
            hits.push((f.severity, format!("{} {at} ({})", f.rule, f.severity)));
        }
    }
    if hits.is_empty() {
        return None;
    }
    // Stable: the servers' own order within a severity.
    hits.sort_by_key(|(sev, _)| std::cmp::Reverse(*sev));
    let more = hits.len().saturating_sub(SHOWN);
    let listed: Vec<String> = hits.into_iter().take(SHOWN).map(|(_, h)| h).collect();
    Some(format!(
        "exit 1: {tools} tool(s) and {findings} finding(s) at or above --fail-on {}: {}{}",
        threshold.as_str().to_ascii_lowercase(),
        listed.join(", "),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        }
    ))
}
