//! Fetches every target's tool list, concurrently (bounded by `--jobs`), with a progress line
//! per server on a terminal. One failing server does not stop the others.

use crate::cli::TargetArgs;
use crate::error::{Error, Result};
use crate::targets::mcp::{self, Options};
use crate::targets::offers::RawOffers;
use crate::targets::toollist::{self, ToolList};
use crate::targets::{Source, Target};
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use serde_json::Value;
use std::io::{BufRead, IsTerminal, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// What fetching one target gave.
#[derive(Debug)]
pub struct Fetched {
    /// The target fetched.
    pub target: Target,
    /// The tools, or why there are none.
    pub list: std::result::Result<ToolList, String>,
    /// Exactly what a live server sent, for `--save-tools`.
    pub raw_tools: Option<Vec<Value>>,
    /// What a live server said about itself besides its tools (which are in `list`), or why it
    /// could not be introspected; `None` for a saved tool list or a catalog record. The
    /// assessment judges its identity and auth posture from this.
    pub wire: Option<std::result::Result<mcp::Introspection, mcp::WireError>>,
    /// Things worth knowing that did not stop the scan.
    pub warnings: Vec<String>,
    /// Why the tool list is incomplete, when that is an error (a live server's list passed the
    /// total size limit): the tools read before it are in `list`, and the error in its `errors`.
    pub incomplete: Option<String>,
}

/// Asks before starting servers that come from config files, or sending environment values a
/// config names to a remote server, unless `yes`. Without a terminal to ask on, refuses with a
/// message that says how to allow it. Every command line is listed whole (wrapped, never cut),
/// with secret values masked.
pub fn consent(targets: &[Target], yes: bool) -> Result<()> {
    let pending: Vec<&Target> = targets.iter().filter(|t| t.needs_consent).collect();
    if pending.is_empty() || yes {
        return Ok(());
    }
    let width = crate::output::terminal::terminal_width(false).clamp(40, 160) as usize;
    let mut listing = String::new();
    for t in &pending {
        let origin = t
            .entry
            .as_ref()
            .map(|e| format!(" ({}:{})", e.file.display(), e.line))
            .unwrap_or_default();
        listing.push_str(&format!(
            "  {}{}:\n{}\n",
            crate::output::sanitize::whole_line(&t.name),
            crate::output::sanitize::whole_line(&origin),
            crate::output::sanitize::wrap(
                &crate::output::sanitize::whole_line(&crate::targets::consent_line(t)),
                width.saturating_sub(6),
                "      "
            )
        ));
    }
    let starts = pending
        .iter()
        .filter(|t| matches!(t.source, Source::Stdio(_)))
        .count();
    let sends = pending.len() - starts;
    let what = match (starts, sends) {
        (s, 0) => format!("start {s} server(s), which runs their code"),
        (0, r) => format!(
            "send values of your environment to {r} remote server(s) a config file names"
        ),
        (s, r) => format!(
            "start {s} server(s), which runs their code, and send values of your environment to {r} remote server(s) a config file names"
        ),
    };
    let interactive = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    if !interactive {
        return Err(Error::new(format!(
            "this would {what}:\n{listing}no terminal to ask on: rerun with --yes to allow it"
        )));
    }
    let mut err = std::io::stderr();
    let _ = write!(err, "mcprisk will {what}:\n{listing}Go ahead? [y/N] ");
    let _ = err.flush();
    let mut answer = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut answer)
        .map_err(|e| Error::new(format!("cannot read the answer: {e}")))?;
    if matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes") {
        Ok(())
    } else {
        Err(Error::new("not started: the servers were not approved"))
    }
}

/// Fetches every target, at most `jobs` at once; results keep the targets' order.
///
/// For a command-line program: when a target is a live server, this process starts guarding
/// its servers ([`mcp::procs::guard`]): signals end them, and orphans they leave are ended.
pub fn fetch_all(
    targets: Vec<Target>,
    opts: &Options,
    jobs: usize,
    progress: bool,
) -> Vec<Fetched> {
    if targets.iter().any(|t| matches!(t.source, Source::Stdio(_))) {
        mcp::procs::guard();
    }
    let n = targets.len();
    let multi = progress.then(MultiProgress::new);
    let bars: Vec<Option<ProgressBar>> = targets
        .iter()
        .map(|t| {
            multi.as_ref().map(|m| {
                let bar = m.add(ProgressBar::new_spinner());
                bar.set_style(
                    ProgressStyle::with_template("{spinner} {prefix:.bold} {wide_msg}")
                        .unwrap_or_else(|_| ProgressStyle::default_spinner()),
                );
                bar.set_prefix(crate::output::sanitize::one_line(&t.name, 40));
                bar.set_message("waiting");
                bar.enable_steady_tick(Duration::from_millis(120));
                bar
            })
        })
        .collect();
    let next = AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<Fetched>>> = (0..n).map(|_| Mutex::new(None)).collect();
    // Each target is handed over, not copied: a catalog record may hold thousands of tools.
    let targets: Vec<Mutex<Option<Target>>> =
        targets.into_iter().map(|t| Mutex::new(Some(t))).collect();
    let targets_ref = &targets;
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, n.max(1)) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= n {
                    break;
                }
                if let Some(bar) = &bars[i] {
                    bar.set_message("listing tools");
                }
                // Each index is taken by one thread only, so the slot still holds its target.
                let Some(target) = targets_ref[i]
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .take()
                else {
                    continue;
                };
                let fetched = fetch_one(target, opts);
                if let Some(bar) = &bars[i] {
                    match &fetched.list {
                        Ok(l) => bar.finish_with_message(format!("{} tools", l.tools.len())),
                        Err(e) => bar.finish_with_message(format!(
                            "failed: {}",
                            crate::output::sanitize::one_line(e, 100)
                        )),
                    }
                }
                *slots[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(fetched);
            });
        }
    });
    slots
        .into_iter()
        .map(|s| {
            s.into_inner()
                .unwrap_or_else(|e| e.into_inner())
                .expect("every slot is filled")
        })
        .collect()
}

/// Sets the start-up bound from `--startup-timeout` (default 20 s), never past the whole
/// scan's bound (`opts.timeout`, set first).
pub fn set_startup_timeout(opts: &mut Options, given: Option<f64>) -> Result<()> {
    if let Some(s) = given {
        if !(s.is_finite() && s > 0.0 && s <= 86_400.0) {
            return Err(Error::new(
                "--startup-timeout takes seconds, more than 0 and at most 86400",
            ));
        }
        opts.startup_timeout = Duration::from_secs_f64(s);
    }
    opts.startup_timeout = opts.startup_timeout.min(opts.timeout);
    Ok(())
}

/// What one server sent for `catalog add`: its tools and offers exactly as sent, its
/// serverInfo and protocol version.
pub struct ForAdd {
    /// The tools as sent.
    pub tools: Vec<Value>,
    /// Instructions, prompts, resources and templates as sent.
    pub offers: RawOffers,
    /// The `serverInfo` of the handshake.
    pub server_info: Option<Value>,
    /// The protocol version spoken.
    pub protocol_version: Option<String>,
}

/// The tool list exactly as one server sent it, with its offers, serverInfo and protocol
/// version, for `catalog add`.
pub fn fetch_for_add(t: &TargetArgs, quiet: bool) -> Result<ForAdd> {
    let targets = super::resolve::from_args(t, quiet)?;
    if targets.len() != 1 {
        return Err(Error::new(format!(
            "catalog add takes one server, but {} were named",
            targets.len()
        )));
    }
    if let Source::ToolsFile(path) = &targets[0].source {
        let (tools, offers) = toollist::load_raw(path)?;
        return Ok(ForAdd {
            tools,
            offers,
            server_info: None,
            protocol_version: None,
        });
    }
    consent(&targets, t.yes)?;
    let mut opts = Options {
        timeout: Duration::from_secs_f64(t.timeout.clamp(0.1, 86_400.0)),
        ..Default::default()
    };
    set_startup_timeout(&mut opts, t.startup_timeout)?;
    opts.request_timeout = opts.request_timeout.min(opts.timeout);
    let mut fetched = fetch_all(targets, &opts, 1, false);
    let f = fetched.remove(0);
    if let Err(e) = &f.list {
        return Err(Error::new(e.clone()));
    }
    if let Some(why) = &f.incomplete {
        return Err(Error::new(format!(
            "{}: {why}; not taken as a snapshot",
            f.target.name
        )));
    }
    let (server_info, protocol_version, offers) = match f.wire {
        Some(Ok(intro)) => {
            warn_offer_errors(&f.target.name, &intro, quiet);
            (
                intro.server_info.filter(|v| !v.is_null()),
                intro.protocol_version,
                intro.offers,
            )
        }
        _ => (None, None, RawOffers::default()),
    };
    Ok(ForAdd {
        tools: f.raw_tools.unwrap_or_default(),
        offers,
        server_info,
        protocol_version,
    })
}

/// Says on standard error which lists of offers a server did not deliver (a snapshot then
/// holds the lists that it did).
pub fn warn_offer_errors(name: &str, intro: &mcp::Introspection, quiet: bool) {
    if quiet {
        return;
    }
    for e in &intro.offer_errors {
        eprintln!(
            "mcprisk: {}: {} failed, so the snapshot has no {}s: {}",
            crate::output::sanitize::one_line(name, 60),
            e.kind.list_method().unwrap_or("listing"),
            e.kind.as_str().replace('_', " "),
            crate::output::sanitize::one_line(&e.message, 300)
        );
    }
}

fn fetch_one(mut target: Target, opts: &Options) -> Fetched {
    match &mut target.source {
        Source::ToolsFile(path) => {
            let list = toollist::load(path).map_err(|e| e.to_string());
            Fetched {
                target,
                list,
                raw_tools: None,
                wire: None,
                warnings: Vec::new(),
                incomplete: None,
            }
        }
        Source::Catalog(record) => {
            let list = record_tools(record);
            Fetched {
                target,
                list,
                raw_tools: None,
                wire: None,
                warnings: Vec::new(),
                incomplete: None,
            }
        }
        Source::Stdio(cmd) => {
            let result = mcp::introspect_stdio(cmd, opts);
            finish(target.clone(), result)
        }
        Source::Http { url, headers, .. } => {
            let exposed: Vec<(String, String)> = headers
                .iter()
                .map(|(k, v)| (k.clone(), v.expose().to_string()))
                .collect();
            let result = mcp::introspect_http(url, &exposed, opts);
            finish(target.clone(), result)
        }
    }
}

/// A catalog record's tool list. The tools move out of the record (nothing reads them there
/// afterwards), and each parsed tool keeps its JSON as sent (`Tool::raw`), so a record of
/// thousands of tools is held once, not four times.
fn record_tools(record: &mut crate::catalog::Record) -> std::result::Result<ToolList, String> {
    match &mut record.snapshot {
        Some(s) => {
            Ok(toollist::from_tools(std::mem::take(&mut s.tools)).with_offers(&s.raw_offers()))
        }
        None => Err(record.no_snapshot_reason()),
    }
}

fn finish(
    target: Target,
    result: std::result::Result<mcp::Introspection, mcp::WireError>,
) -> Fetched {
    match result {
        Ok(mut intro) => {
            let tools = std::mem::take(&mut intro.tools);
            let raw = tools.clone();
            let warnings = intro.warnings.clone();
            let mut list = toollist::from_tools(tools).with_offers(&intro.offers);
            list.offer_failures = intro.offer_errors.clone();
            let incomplete = intro.incomplete.clone();
            if let Some(why) = &incomplete {
                list.errors.insert(
                    0,
                    crate::model::InputError {
                        location: "server".into(),
                        tool: None,
                        message: why.clone(),
                    },
                );
            }
            Fetched {
                list: Ok(list),
                raw_tools: Some(raw),
                wire: Some(Ok(intro)),
                warnings,
                incomplete,
                target,
            }
        }
        Err(err) => Fetched {
            list: Err(err.to_string()),
            raw_tools: None,
            wire: Some(Err(err)),
            warnings: Vec::new(),
            incomplete: None,
            target,
        },
    }
}
