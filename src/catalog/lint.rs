//! The catalog's linter (`mcprisk catalog lint`, and `catalog add` before it writes): every
//! record parses (unknown keys rejected with file and line), ids and aliases are unique,
//! snapshots match their fingerprints, and the facts a record must have are there.

use super::record::Record;
use super::store::{parse_record, record_files};
use crate::error::Result;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// What linting found: how many records were read, and each problem with its file.
#[derive(Debug, Default)]
pub struct Lint {
    /// The records that parsed.
    pub records: usize,
    /// Every problem, each starting with the file it is in.
    pub problems: Vec<String>,
}

/// Checks the records in `dirs`: parse (unknown keys rejected with file and line), unique ids
/// and aliases, fingerprints that match snapshots, required facts present.
pub fn lint(dirs: &[PathBuf]) -> Result<Lint> {
    let mut problems: Vec<String> = Vec::new();
    let mut records: Vec<(PathBuf, Record)> = Vec::new();
    for dir in dirs {
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
    Ok(Lint {
        records: records.len(),
        problems,
    })
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
        let fp = s.expected_fingerprint();
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
