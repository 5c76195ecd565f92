//! `mcprisk catalog list|search|show|lint|add`.

use crate::catalog::lookup::search;
use crate::catalog::record::{fingerprint, Record, Snapshot};
use crate::catalog::store::{self, parse_record, record_files, Catalog, Entry};
use crate::cli::{AddArgs, CatalogCommand, RulesFormat};
use crate::error::{Error, Result};
use crate::output::sanitize::one_line;
use crate::output::{emit, io_err};
use std::collections::HashMap;
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
            Ok(if rows.is_empty() { 1 } else { 0 })
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
        CatalogCommand::Lint { dirs } => lint(&dirs),
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

/// Checks records: parse (unknown keys rejected with file and line), unique ids and aliases,
/// fingerprints that match snapshots, required facts present.
fn lint(dirs: &[String]) -> Result<u8> {
    let dirs: Vec<PathBuf> = if dirs.is_empty() {
        vec![PathBuf::from("catalog/servers")]
    } else {
        dirs.iter().map(PathBuf::from).collect()
    };
    let mut problems: Vec<String> = Vec::new();
    let mut records: Vec<(PathBuf, Record)> = Vec::new();
    for dir in &dirs {
        for path in record_files(dir)? {
            match parse_record(&path) {
                Ok(r) => records.push((path, r)),
                Err(e) => problems.push(e.to_string()),
            }
        }
    }
    let mut ids: HashMap<String, &Path> = HashMap::new();
    let mut names: HashMap<String, (String, &Path)> = HashMap::new();
    for (path, r) in &records {
        let at = path.display();
        if let Some(prev) = ids.insert(r.id.to_lowercase(), path) {
            problems.push(format!(
                "{at}: id {} is also used by {}",
                r.id,
                prev.display()
            ));
        }
        for a in &r.aliases {
            let key = a.to_lowercase();
            if key == r.id.to_lowercase() {
                continue;
            }
            if let Some((other, p)) = names.get(&key) {
                if *other != r.id {
                    problems.push(format!(
                        "{at}: alias {a:?} is also an alias of {other} ({})",
                        p.display()
                    ));
                }
            }
            names.insert(key, (r.id.clone(), path));
        }
        problems.extend(check_record(r).into_iter().map(|p| format!("{at}: {p}")));
    }
    for (key, (id, path)) in &names {
        if let Some(other) = ids.get(key) {
            if *other != *path {
                problems.push(format!(
                    "{}: alias {key:?} of {id} is the id of {}",
                    path.display(),
                    other.display()
                ));
            }
        }
    }
    if problems.is_empty() {
        println!("{} records, no problems", records.len());
        Ok(0)
    } else {
        for p in &problems {
            eprintln!("{}", one_line(p, 600));
        }
        Err(Error::new(format!(
            "{} problem(s) in {} records",
            problems.len(),
            records.len()
        )))
    }
}

/// Facts a record must have, and a snapshot that matches its fingerprint.
pub fn check_record(r: &Record) -> Vec<String> {
    let mut p = Vec::new();
    if !r.id.contains('/') || r.id.contains("..") || r.id.chars().any(char::is_control) {
        p.push(format!(
            "id {:?} is not registry style (namespace/name)",
            r.id
        ));
    }
    for (what, v) in [
        ("name", &r.name),
        ("summary", &r.summary),
        ("publisher", &r.publisher),
    ] {
        if v.trim().is_empty() {
            p.push(format!("{what} is empty"));
        }
    }
    if r.transports.is_empty() {
        p.push("transports is empty".into());
    }
    if r.identity.evidence.is_empty() {
        p.push("identity.evidence is empty: say why the publisher is what the level claims".into());
    }
    if r.auth.kinds.is_empty() {
        p.push("auth.kinds is empty (use [none] when the server needs nothing)".into());
    }
    if r.packages.is_empty() && r.remotes.is_empty() {
        p.push("neither packages nor remotes: say how the server is obtained".into());
    }
    if let Some(s) = &r.snapshot {
        let fp = fingerprint(&s.tools);
        if fp != s.fingerprint {
            p.push(format!(
                "snapshot fingerprint {} does not match its tools ({fp})",
                s.fingerprint
            ));
        }
        if s.taken.len() != 10 || s.taken.as_bytes()[4] != b'-' {
            p.push(format!("snapshot.taken {:?} is not YYYY-MM-DD", s.taken));
        }
        let names: Vec<&str> = s.tool_names().collect();
        for o in &r.overrides {
            if !names.contains(&o.tool.as_str()) {
                p.push(format!(
                    "override for {:?}, which the snapshot does not have",
                    o.tool
                ));
            }
            if o.category
                .as_deref()
                .is_some_and(|c| crate::model::Category::parse(c).is_none())
            {
                p.push(format!("override for {:?}: unknown category", o.tool));
            }
            if o.severity
                .as_deref()
                .is_some_and(|c| crate::model::Severity::parse(c).is_none())
            {
                p.push(format!("override for {:?}: unknown severity", o.tool));
            }
        }
    }
    p
}

/// The file name of a record: the id's last part, made safe for any file system.
pub fn file_name_for(id: &str) -> Result<String> {
    let last = id.rsplit('/').next().unwrap_or(id);
    let ns = id.split('/').next().unwrap_or("");
    let base = if ns.is_empty() || ns == last {
        last.to_string()
    } else {
        format!("{ns}--{last}")
    };
    let safe: String = base
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '-'
            }
        })
        .collect();
    let safe = safe.trim_matches(['.', '-']).to_string();
    if safe.is_empty() || safe.contains("..") {
        return Err(Error::new(format!("id {id:?} gives no safe file name")));
    }
    Ok(format!("{safe}.yaml"))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_are_safe() {
        assert_eq!(
            file_name_for("io.github.x/proxmox-mcp").unwrap(),
            "io.github.x--proxmox-mcp.yaml"
        );
        assert_eq!(file_name_for("../../etc/passwd").unwrap(), "passwd.yaml");
        assert!(file_name_for("..").is_err());
    }
}
