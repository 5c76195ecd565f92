//! `mcprisk catalog list|search|show|lint|add|import-registry`: work with the catalog's records.

use crate::catalog::lint::{self, check_record, Lint};
use crate::catalog::lookup::search;
use crate::catalog::record::{fingerprint, Record, Snapshot};
use crate::catalog::store::{self, file_name_for, parse_record, Catalog, Entry};
use crate::cli::{AddArgs, CatalogCommand, RulesFormat};
use crate::error::{Error, Result};
use crate::output::sanitize::one_line;
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
            print_entries(&rows, format, None)?;
            if rows.is_empty() {
                // Like grep: exit 1, and say so rather than print nothing.
                eprintln!(
                    "mcprisk: no catalog record matches {:?} (ids, names, aliases, packages, summaries and tool names of {} record(s) searched); `mcprisk catalog list` shows them all",
                    one_line(&word, 80),
                    catalog.entries.len()
                );
                return Ok(1);
            }
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
                print!("{report}");
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
            serde_json::to_writer_pretty(&mut *w, &v).map_err(|e| io_err(e.into()))?;
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
        println!("{records} records, no problems");
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
    let mut record = parse_record(Path::new(&args.record))?;
    let name = file_name_for(&record.id)?;
    let dest = Path::new(&args.dir).join(&name);
    if dest.exists() && !args.force {
        return Err(Error::new(format!(
            "{}: exists; pass --force to replace it",
            dest.display()
        )));
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
    let (tools, mut server_info, mut protocol_version) = assessed;
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
    record.snapshot = Some(Snapshot {
        source,
        taken: crate::assess::project::today(),
        server_info,
        protocol_version,
        fingerprint: fingerprint(&tools),
        tools,
    });
    let problems = check_record(&record);
    if !problems.is_empty() {
        return Err(Error::new(format!(
            "{}: {}",
            args.record,
            problems.join("; ")
        )));
    }
    let text = serde_saphyr::to_string(&record)
        .map_err(|e| Error::new(format!("cannot write the record: {e}")))?;
    let back: Record = serde_saphyr::from_str(&text)
        .map_err(|e| Error::new(format!("the written record does not read back: {e}")))?;
    if back.snapshot.as_ref().map(|s| fingerprint(&s.tools))
        != back.snapshot.as_ref().map(|s| s.fingerprint.clone())
    {
        return Err(Error::new(
            "the written record does not keep the snapshot exactly",
        ));
    }
    std::fs::create_dir_all(&args.dir).map_err(|e| Error::new(format!("{}: {e}", args.dir)))?;
    emit(Some(dest.to_str().unwrap_or(&name)), |w| {
        w.write_all(text.as_bytes()).map_err(io_err)
    })?;
    if !args.quiet {
        eprintln!("mcprisk: wrote {}", dest.display());
    }
    Ok(0)
}
