//! `mcprisk catalog list|search|show|lint|add|import-registry`: work with the catalog's records.

use crate::catalog::lint::{self, check_record, Lint};
use crate::catalog::lookup::search;
use crate::catalog::record::{Record, Snapshot};
use crate::catalog::store::{self, file_name_for, parse_record, Catalog, Entry};
use crate::cli::{AddArgs, CatalogCommand, RulesFormat};
use crate::error::{Error, Result};
use crate::output::sanitize::{one_line, one_line_ends};
use crate::output::{emit, io_err};
use std::path::{Path, PathBuf};

/// Runs a catalog subcommand.
pub fn run(cmd: CatalogCommand) -> Result<u8> {
    match cmd {
        CatalogCommand::List {
            category,
            catalog_dirs,
            format,
        } => {
            let catalog = Catalog::load(&store::user_dirs(&catalog_dirs))?;
            let wanted = match category.as_deref() {
                Some(c) => Some(crate::model::Category::parse(c).ok_or_else(|| {
                    Error::new(format!(
                        "--category {c:?}: one of Read, Write, Execute, Destructive, Financial"
                    ))
                })?),
                None => None,
            };
            let mut rows: Vec<(&Entry, Option<usize>)> = Vec::new();
            let engine =
                wanted.map(|_| crate::classify::Engine::new(crate::classify::RuleFile::embedded()));
            for e in &catalog.entries {
                match (wanted, &engine) {
                    (Some(c), Some(engine)) => {
                        let rec = e.record()?;
                        let tools = rec
                            .snapshot
                            .map(|s| crate::targets::toollist::from_tools(s.tools).tools)
                            .unwrap_or_default();
                        let n = tools
                            .iter()
                            .filter(|t| effective_category(engine, &rec.overrides, t) == c)
                            .count();
                        if n > 0 {
                            rows.push((e, Some(n)));
                        }
                    }
                    _ => rows.push((e, None)),
                }
            }
            rows.sort_by(|a, b| a.0.listing.id.cmp(&b.0.listing.id));
            print_entries(&rows, format, wanted.map(|c| c.as_str()))?;
            Ok(0)
        }
        CatalogCommand::Search {
            word,
            catalog_dirs,
            format,
        } => {
            let catalog = Catalog::load(&store::user_dirs(&catalog_dirs))?;
            let rows: Vec<(&Entry, Option<usize>)> = search(&catalog, &word)
                .into_iter()
                .map(|e| (e, None))
                .collect();
            if rows.is_empty() {
                eprintln!(
                    "mcprisk: no record matches {:?} (searched the ids, names, aliases, packages, summaries and tool names of {} records); `mcprisk catalog list` shows them all",
                    one_line(&word, 80),
                    catalog.entries.len()
                );
                return Ok(1);
            }
            print_entries(&rows, format, None)?;
            Ok(0)
        }
        CatalogCommand::Show { id, catalog_dirs } => {
            let catalog = Catalog::load(&store::user_dirs(&catalog_dirs))?;
            let record = crate::catalog::lookup::resolve(&catalog, &id)?;
            let text = serde_saphyr::to_string(&record)
                .map_err(|e| Error::new(format!("cannot write the record: {e}")))?;
            emit(None, |w| {
                w.write_all(crate::output::sanitize::visible(&text).as_bytes())
                    .map_err(io_err)
            })?;
            Ok(0)
        }
        CatalogCommand::Lint { dirs } => run_lint(&dirs),
        CatalogCommand::Add(args) => add(&args),
        CatalogCommand::ImportRegistry(args) => {
            if !(args.timeout.is_finite() && args.timeout > 0.0 && args.timeout <= 3600.0) {
                return Err(Error::new(
                    "--timeout takes seconds, more than 0 and at most 3600",
                ));
            }
            let report =
                crate::catalog::registry::import(&crate::catalog::registry::ImportOptions {
                    url: args.url.clone(),
                    dir: PathBuf::from(&args.dir),
                    max_pages: args.max_pages,
                    timeout: std::time::Duration::from_secs_f64(args.timeout),
                })?;
            if !args.quiet {
                emit(None, |w| write!(w, "{report}").map_err(io_err))?;
            }
            Ok(0)
        }
    }
}

/// The category of a tool after a catalog override, if any.
fn effective_category(
    engine: &crate::classify::Engine,
    overrides: &[crate::catalog::record::Override],
    t: &crate::model::Tool,
) -> crate::model::Category {
    overrides
        .iter()
        .find(|o| o.tool == t.name)
        .and_then(|o| {
            o.category
                .as_deref()
                .and_then(crate::model::Category::parse)
        })
        .unwrap_or_else(|| engine.classify(t).category)
}

fn print_entries(
    rows: &[(&Entry, Option<usize>)],
    format: RulesFormat,
    category: Option<&str>,
) -> Result<()> {
    emit(None, |w| match format {
        RulesFormat::Json => {
            let v: Vec<serde_json::Value> = rows
                .iter()
                .map(|(e, n)| {
                    let mut o = serde_json::json!({"id": e.listing.id, "name": e.listing.name, "aliases": e.listing.aliases, "summary": e.listing.summary, "tools": e.listing.tools.len()});
                    if let (Some(n), Some(c)) = (n, category) {
                        o[format!("{}_tools", c.to_lowercase())] = serde_json::json!(n);
                    }
                    o
                })
                .collect();
            crate::output::inert::json_pretty(&mut *w, &v).map_err(io_err)?;
            writeln!(w).map_err(io_err)
        }
        RulesFormat::Table => {
            for (e, n) in rows {
                let extra = match (n, category) {
                    (Some(n), Some(c)) => format!("  ({n} {c})"),
                    _ => String::new(),
                };
                writeln!(
                    w,
                    "{:<48} {:>3} tools  {}{}",
                    one_line(&e.listing.id, 48),
                    e.listing.tools.len(),
                    one_line(&e.listing.summary, 90),
                    extra
                )
                .map_err(io_err)?;
            }
            Ok(())
        }
    })
}

/// Runs `catalog lint` over `dirs` (`catalog/servers` when none is given).
fn run_lint(dirs: &[String]) -> Result<u8> {
    let dirs: Vec<PathBuf> = if dirs.is_empty() {
        vec![PathBuf::from("catalog/servers")]
    } else {
        dirs.iter().map(PathBuf::from).collect()
    };
    let Lint { records, problems } = lint::lint(&dirs)?;
    if problems.is_empty() {
        emit(None, |w| {
            writeln!(w, "{records} records, no problems").map_err(io_err)
        })?;
        Ok(0)
    } else {
        for p in &problems {
            eprintln!("{}", one_line(p, 600));
        }
        Err(Error::new(format!(
            "{} problem(s) in {records} records",
            problems.len()
        )))
    }
}

fn add(args: &AddArgs) -> Result<u8> {
    if !args.target.npm.is_empty() || !args.target.pypi.is_empty() {
        return add_package(args);
    }
    let facts = args.record.as_deref().ok_or_else(|| {
        Error::new("--record FILE: the record's facts (or name a package with --npm/--pypi)")
    })?;
    let mut record = parse_record(Path::new(facts))?;
    let name = file_name_for(&record.id)?;
    let dest = Path::new(&args.dir).join(&name);
    // symlink_metadata, not exists(): a dangling link planted in the directory "does not exist"
    // but would be written through, to wherever it points.
    match std::fs::symlink_metadata(&dest) {
        Ok(m) if m.file_type().is_symlink() && !args.force => {
            return Err(Error::new(format!(
                "{}: is a symbolic link; not writing through it (--force replaces the link with the record)",
                dest.display()
            )))
        }
        Ok(_) if !args.force => {
            return Err(Error::new(format!(
                "{}: exists; pass --force to replace it",
                dest.display()
            )))
        }
        _ => {}
    }
    let mut target = args.target.clone();
    target.name = Some(record.id.clone());
    let assessed = crate::targets::fetch::fetch_for_add(&target, args.quiet)?;
    let source = args
        .source
        .clone()
        .or_else(|| {
            record.packages.first().map(|p| match &p.version {
                Some(v) => format!("{} {}@{v}", p.registry, p.identifier),
                None => format!("{} {}", p.registry, p.identifier),
            })
        })
        .ok_or_else(|| Error::new("--source: say what was run (the record has no packages)"))?;
    let crate::targets::fetch::ForAdd {
        tools,
        offers,
        mut server_info,
        mut protocol_version,
    } = assessed;
    if let Some(scan) = &args.from_scan {
        let text = std::fs::read_to_string(scan)
            .map_err(|e| Error::new(format!("{scan}: cannot read: {e}")))?;
        let doc: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| Error::new(format!("{scan}: not a scan JSON document: {e}")))?;
        let identity = &doc["servers"][0]["identity"];
        if server_info.is_none() {
            server_info = identity
                .get("server_info")
                .filter(|v| !v.is_null())
                .cloned();
        }
        if protocol_version.is_none() {
            protocol_version = identity
                .get("protocol_version")
                .and_then(|v| v.as_str())
                .map(String::from);
        }
    }
    record.snapshot = Some(Snapshot::new(
        source,
        crate::assess::project::today(),
        server_info,
        protocol_version,
        tools,
        offers,
    ));
    let problems = check_record(&record);
    if !problems.is_empty() {
        return Err(Error::new(format!("{facts}: {}", problems.join("; "))));
    }
    let text = record_text(&record)?;
    std::fs::create_dir_all(&args.dir).map_err(|e| Error::new(format!("{}: {e}", args.dir)))?;
    // The record is written in the directory: a link there is replaced, never followed.
    crate::output::replace_file(&dest, |w| w.write_all(text.as_bytes()).map_err(io_err))?;
    if !args.quiet {
        eprintln!("mcprisk: wrote {}", dest.display());
    }
    Ok(0)
}

/// `catalog add --npm/--pypi`: install (or reuse) the package, scan it, and write its record:
/// a new one from the package's own files, or the existing record of the same package brought
/// up to this version. A server that lists no tools still gets a record, without snapshot,
/// saying why (exit 1); a package with nothing to start gets none (exit 2).
fn add_package(args: &AddArgs) -> Result<u8> {
    use crate::catalog::facts;
    use crate::targets::package::{install, Registry, Spec};
    let t = &args.target;
    if t.npm.len() + t.pypi.len() != 1
        || !t.tools.is_empty()
        || !t.stdio.is_empty()
        || !t.url.is_empty()
        || !t.command.is_empty()
        || !t.config.is_empty()
        || t.discover
        || !t.server.is_empty()
    {
        return Err(Error::new(
            "catalog add takes one server: one --npm or --pypi package, and no other target",
        ));
    }
    let spec = match (t.npm.first(), t.pypi.first()) {
        (Some(n), _) => Spec::parse(Registry::Npm, n)?,
        (_, Some(p)) => Spec::parse(Registry::Pypi, p)?,
        _ => unreachable!("one package was checked above"),
    };
    let mut launch = crate::targets::resolve::launch_of(t)?;
    launch.no_network = t.no_network;
    crate::targets::fetch::set_startup_timeout(
        &mut crate::targets::mcp::Options::default(),
        t.startup_timeout,
    )?;
    let installed = install(&spec, &launch, args.quiet)?;
    let bin = installed.choose_bin(launch.bin.as_deref())?;
    // A bin the package declares but does not ship is a failure to start, with a record.
    let cmd = installed.command(&launch);
    let start = installed.start_line(&bin, &launch.args);

    // The record of the same package, if the directory has one.
    let dir = Path::new(&args.dir);
    let existing: Option<(PathBuf, Record)> = if dir.is_dir() {
        let mut found = None;
        for path in store::record_files(dir)? {
            // Parse only the files that name the package somewhere (a directory of hundreds
            // of records is otherwise parsed whole on every add).
            let named = std::fs::read_to_string(&path).is_ok_and(|t| match spec.registry {
                Registry::Npm => t.contains(spec.name.as_str()),
                Registry::Pypi => t
                    .to_ascii_lowercase()
                    .replace(['_', '.'], "-")
                    .contains(&crate::targets::package::pypi_normalize(&spec.name)),
            });
            if !named {
                continue;
            }
            let Ok(r) = parse_record(&path) else { continue };
            if r.packages
                .iter()
                .any(|p| facts::same_package(p, spec.registry, &spec.name))
            {
                found = Some((path, r));
                break;
            }
        }
        found
    } else {
        None
    };

    type Scanned = crate::targets::fetch::ForAdd;
    let scanned: std::result::Result<Scanned, String> = match cmd {
        Err(e) => Err(e.to_string()),
        Ok(cmd) => {
            let target = crate::targets::Target {
                name: crate::targets::resolve::package_server_name(&spec.name),
                source: crate::targets::Source::Stdio(cmd),
                entry: None,
                needs_consent: false,
            };
            let mut opts = crate::targets::mcp::Options {
                timeout: std::time::Duration::from_secs_f64(t.timeout.clamp(0.1, 86_400.0)),
                ..Default::default()
            };
            opts.request_timeout = opts.request_timeout.min(opts.timeout);
            // A bad --startup-timeout is an error before anything starts (checked below).
            let _ = crate::targets::fetch::set_startup_timeout(&mut opts, t.startup_timeout);
            let fetched = crate::targets::fetch::fetch_all(vec![target], &opts, 1, false).remove(0);
            match (&fetched.list, &fetched.wire) {
                (Ok(_), Some(Ok(intro))) => {
                    crate::targets::fetch::warn_offer_errors(&spec.name, intro, args.quiet);
                    Ok(crate::targets::fetch::ForAdd {
                        tools: fetched.raw_tools.clone().unwrap_or_default(),
                        offers: intro.offers.clone(),
                        server_info: intro.server_info.clone().filter(|v| !v.is_null()),
                        protocol_version: intro.protocol_version.clone(),
                    })
                }
                (Err(e), _) => Err(e.clone()),
                (Ok(_), _) => Err("the server answered without a tool list".into()),
            }
        }
    };

    let refusal = scanned
        .as_ref()
        .err()
        .map(|e| facts::clean_reason(e, &installed));
    let (mut record, path) = match existing {
        Some((path, r)) => {
            if refusal.is_some() && r.snapshot.is_some() {
                return Err(Error::new(format!(
                    "{}: {} listed no tools ({}); the record keeps its snapshot of {}",
                    path.display(),
                    installed.pinned(),
                    refusal.as_deref().unwrap_or(""),
                    r.snapshot.as_ref().map(|s| s.source.as_str()).unwrap_or("")
                )));
            }
            (r, path)
        }
        None => {
            let r = match &args.record {
                Some(f) => parse_record(Path::new(f))?,
                None => facts::new_record(&installed, None, &launch, refusal.as_deref()),
            };
            let mut path = dir.join(facts::package_file_name(&r.id));
            let mut n = 2;
            // symlink_metadata: a dangling link counts as taken, and is never written through.
            while std::fs::symlink_metadata(&path).is_ok() {
                let other = parse_record(&path).map(|o| o.id).unwrap_or_default();
                if other.eq_ignore_ascii_case(&r.id) {
                    if !args.force {
                        return Err(Error::new(format!(
                            "{}: exists; pass --force to replace it",
                            path.display()
                        )));
                    }
                    break;
                }
                path = dir
                    .join(facts::package_file_name(&r.id).replace(".yaml", &format!("-{n}.yaml")));
                n += 1;
            }
            (r, path)
        }
    };
    facts::pin_package(&mut record, &installed);
    // A hand-written start command for this very version is kept (PyPI names compare
    // normalized: `awslabs.x==1.2` is `awslabs-x==1.2`), unless it lacks a requirement that
    // was installed alongside (`--with`).
    let loose = |s: &str| s.to_ascii_lowercase().replace(['_', '.'], "-");
    if !record.command.as_deref().is_some_and(|c| {
        loose(c).contains(&loose(&installed.pinned()))
            && installed.with.iter().all(|w| c.contains(w.as_str()))
    }) {
        record.command = Some(start);
    }
    // `npm NAME@VERSION` / `pypi NAME@VERSION`, the name as the record spells it, and
    // ` --with REQ` for each requirement installed alongside.
    let ident = record
        .packages
        .iter()
        .find(|p| facts::same_package(p, spec.registry, &spec.name))
        .map(|p| p.identifier.clone())
        .unwrap_or_else(|| spec.name.clone());
    let source = format!(
        "{} {ident}@{}{}",
        installed.spec.registry.as_str(),
        installed.version(),
        installed.with_words()
    );
    // A record whose auth posture was only inferred from a refusal (no credential given, so
    // "api-key" by default) and that now listed its tools: the posture is what this run shows.
    // A posture that differs from the inferred one was written by hand and is kept, and so is
    // one of a server given a credential as an argument (`--auth-token X`), which the
    // posture's variables cannot show.
    let secret_arg = launch.args.iter().any(|a| {
        let flag = a.trim_start_matches('-');
        // (`--db-path` is not a credential, though secret_name's `_PAT` matches it.)
        a.starts_with('-')
            && facts::secret_name(flag)
            && !flag.to_ascii_uppercase().ends_with("PATH")
    });
    if scanned.is_ok() && !secret_arg {
        if let Some(u) = &record.unscanned {
            if record.auth == facts::auth(&launch, Some(&u.reason)) {
                record.auth = facts::auth(&launch, None);
            }
        }
    }
    let (outcome, code) = match scanned {
        Ok(got)
            if record.snapshot.as_ref().is_some_and(|s| {
                s.source == source
                    && s.fingerprint
                        == Snapshot::new(
                            String::new(),
                            String::new(),
                            None,
                            None,
                            got.tools.clone(),
                            got.offers.clone(),
                        )
                        .fingerprint
            }) =>
        {
            // The same tools and offers from the same package@version: the snapshot stands.
            record.unscanned = None;
            (format!("snapshot, {} tools", got.tools.len()), 0)
        }
        Ok(got) => {
            let n = got.tools.len();
            record.snapshot = Some(Snapshot::new(
                source,
                crate::assess::project::today(),
                got.server_info,
                got.protocol_version,
                got.tools,
                got.offers,
            ));
            record.unscanned = None;
            (format!("snapshot, {n} tools"), 0)
        }
        Err(_) => {
            let reason = refusal.clone().unwrap_or_default();
            let u = facts::unscanned(reason, &installed, &launch);
            let said = format!("{}: {}", u.outcome, u.reason);
            record.snapshot = None;
            record.unscanned = Some(u);
            (said, 1)
        }
    };
    let problems = check_record(&record);
    if !problems.is_empty() {
        return Err(Error::new(format!(
            "{}: {}",
            path.display(),
            problems.join("; ")
        )));
    }
    let text = record_text(&record)?;
    if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) && !args.force {
        return Err(Error::new(format!(
            "{}: is a symbolic link; not writing through it (--force replaces the link with the record)",
            path.display()
        )));
    }
    std::fs::create_dir_all(dir).map_err(|e| Error::new(format!("{}: {e}", args.dir)))?;
    // The record is written in the directory: a link there is replaced, never followed.
    crate::output::replace_file(&path, |w| w.write_all(text.as_bytes()).map_err(io_err))?;
    if !args.quiet {
        eprintln!(
            "mcprisk: wrote {} ({})",
            path.display(),
            one_line_ends(&outcome, 450)
        );
    }
    Ok(code)
}

/// A record as the YAML written to its file, checked to read back with its snapshot's
/// fingerprint intact (a record that would not reproduce its snapshot is never written).
fn record_text(record: &Record) -> Result<String> {
    let text = serde_saphyr::to_string(record)
        .map_err(|e| Error::new(format!("cannot write the record: {e}")))?;
    let back: Record = serde_saphyr::from_str(&text)
        .map_err(|e| Error::new(format!("the written record does not read back: {e}")))?;
    if back.snapshot.as_ref().map(Snapshot::expected_fingerprint)
        != back.snapshot.as_ref().map(|s| s.fingerprint.clone())
    {
        return Err(Error::new(
            "the written record does not keep the snapshot exactly",
        ));
    }
    Ok(text)
}
