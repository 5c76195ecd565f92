//! Where records come from: the ones embedded at build time, then the user's directories
//! (`--catalog DIR`, `MCPRISK_CATALOG`), where a record with the same id overrides a shipped one.

use super::record::Record;
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// One record as embedded by build.rs: the index fields, and where its deflated compact JSON
/// lies in [`BLOB`].
#[derive(Debug)]
pub struct EmbeddedRecord {
    pub file: &'static str,
    pub id: &'static str,
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub packages: &'static [&'static str],
    pub summary: &'static str,
    pub tools: &'static [&'static str],
    pub repository: Option<&'static str>,
    pub publisher: &'static str,
    /// Offset and length in [`BLOB`].
    pub at: (usize, usize),
}

include!(concat!(env!("OUT_DIR"), "/embedded_catalog.rs"));

/// What lookups, searches and listings read of a record, without parsing the whole of it.
/// The directory cache stores exactly this per file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Listing {
    pub id: String,
    pub name: String,
    pub aliases: Vec<String>,
    pub packages: Vec<String>,
    pub summary: String,
    /// Tool names; the embedded records' are borrowed from the binary, not copied on every run.
    pub tools: Vec<std::borrow::Cow<'static, str>>,
    #[serde(default)]
    pub repository: Option<String>,
    #[serde(default)]
    pub publisher: String,
}

impl Listing {
    /// The listing fields of a parsed record.
    pub fn of(r: &Record) -> Listing {
        Listing {
            id: r.id.clone(),
            name: r.name.clone(),
            aliases: r.aliases.clone(),
            packages: r.packages.iter().map(|p| p.identifier.clone()).collect(),
            summary: r.summary.clone(),
            tools: r
                .tool_names()
                .map(|t| std::borrow::Cow::Owned(t.to_string()))
                .collect(),
            repository: r.repository.clone(),
            publisher: r.publisher.clone(),
        }
    }
}

/// An index entry: what lookups and searches read, with the record parsed only when needed.
#[derive(Debug, Clone)]
pub struct Entry {
    pub listing: Listing,
    /// Where the record lives, for messages.
    pub file: String,
    body: Body,
}

#[derive(Debug, Clone)]
enum Body {
    /// Deflated JSON in the embedded blob.
    Embedded(&'static [u8]),
    Parsed(Box<Record>),
    /// An unchanged file whose index came from the directory cache: parsed when needed.
    File(PathBuf),
}

impl Entry {
    /// The full record.
    pub fn record(&self) -> Result<Record> {
        match &self.body {
            Body::Embedded(packed) => {
                let json = miniz_oxide::inflate::decompress_to_vec(packed).map_err(|e| {
                    Error::new(format!(
                        "{}: embedded record is unreadable: {e:?}",
                        self.file
                    ))
                })?;
                serde_json::from_slice(&json).map_err(|e| {
                    Error::new(format!("{}: embedded record is unreadable: {e}", self.file))
                })
            }
            Body::Parsed(r) => Ok((**r).clone()),
            Body::File(path) => parse_record(path),
        }
    }

    /// An entry from the directory cache; the record is read from `path` when asked for.
    pub(super) fn from_cached(c: &super::dircache::Cached, path: PathBuf) -> Entry {
        Entry {
            listing: c.listing.clone(),
            file: c.file.clone(),
            body: Body::File(path),
        }
    }

    /// What the directory cache keeps of this entry.
    pub(super) fn cached(
        &self,
        file: String,
        size: u64,
        modified_ns: u128,
    ) -> super::dircache::Cached {
        super::dircache::Cached {
            file,
            size,
            modified_ns,
            listing: self.listing.clone(),
        }
    }

    pub(super) fn from_record(r: Record, file: String) -> Entry {
        Entry {
            listing: Listing::of(&r),
            file,
            body: Body::Parsed(Box::new(r)),
        }
    }
}

/// Every record available, shipped and the user's.
#[derive(Debug, Default)]
pub struct Catalog {
    pub entries: Vec<Entry>,
}

/// The directories named by `--catalog` and `MCPRISK_CATALOG` (a path list).
pub fn user_dirs(flag: &[String]) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some(env) = std::env::var_os("MCPRISK_CATALOG") {
        dirs.extend(std::env::split_paths(&env).filter(|p| !p.as_os_str().is_empty()));
    }
    dirs.extend(flag.iter().map(PathBuf::from));
    dirs
}

/// Parses one record file; unknown keys and bad values are errors with file and line.
pub fn parse_record(path: &Path) -> Result<Record> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::new(format!("{}: cannot read: {e}", path.display())))?;
    serde_saphyr::from_str(&text)
        .map_err(|e| Error::new(format!("{}: invalid catalog record: {e}", path.display())))
}

/// The `.yaml` files of a directory, sorted.
pub fn record_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let rd = std::fs::read_dir(dir).map_err(|e| {
        Error::new(format!(
            "{}: cannot read catalog directory: {e}",
            dir.display()
        ))
    })?;
    let mut files: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
        .collect();
    files.sort();
    Ok(files)
}

impl Catalog {
    /// The shipped records plus those in `dirs`; a user record replaces a shipped one with its id.
    pub fn load(dirs: &[PathBuf]) -> Result<Catalog> {
        let mut entries: Vec<Entry> = EMBEDDED
            .iter()
            .map(|e| Entry {
                listing: Listing {
                    id: e.id.to_string(),
                    name: e.name.to_string(),
                    aliases: e.aliases.iter().map(|s| s.to_string()).collect(),
                    packages: e.packages.iter().map(|s| s.to_string()).collect(),
                    summary: e.summary.to_string(),
                    tools: e
                        .tools
                        .iter()
                        .map(|s| std::borrow::Cow::Borrowed(*s))
                        .collect(),
                    repository: e.repository.map(String::from),
                    publisher: e.publisher.to_string(),
                },
                file: e.file.to_string(),
                body: Body::Embedded(&BLOB[e.at.0..e.at.0 + e.at.1]),
            })
            .collect();
        // Ids compare without case; an index keeps a directory of many records linear.
        let mut by_id: std::collections::HashMap<String, usize> = entries
            .iter()
            .enumerate()
            .map(|(i, e)| (e.listing.id.to_ascii_lowercase(), i))
            .collect();
        for dir in dirs {
            for entry in super::dircache::load_dir(dir)? {
                match by_id.entry(entry.listing.id.to_ascii_lowercase()) {
                    std::collections::hash_map::Entry::Occupied(slot) => {
                        entries[*slot.get()] = entry
                    }
                    std::collections::hash_map::Entry::Vacant(slot) => {
                        slot.insert(entries.len());
                        entries.push(entry);
                    }
                }
            }
        }
        Ok(Catalog { entries })
    }
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
