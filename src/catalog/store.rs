//! Where records come from: the ones embedded at build time, then the user's directories
//! (`--catalog DIR`, `MCPRISK_CATALOG`), where a record with the same id overrides a shipped one.

use super::record::Record;
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Where a string lies in the embedded index's text, or a list in its table of spans: start
/// and length. The index holds spans, not `&str`s, so that loading the binary relocates no
/// pointer per string.
#[derive(Debug, Clone, Copy)]
pub struct Span(u32, u32);

impl Span {
    /// The string this span covers in the index's text.
    fn text(self) -> &'static str {
        &TEXT[self.0 as usize..(self.0 + self.1) as usize]
    }

    /// The strings of the list this span covers in the index's table.
    fn list(self) -> impl Iterator<Item = &'static str> {
        LISTS[self.0 as usize..(self.0 + self.1) as usize]
            .iter()
            .map(|s| s.text())
    }
}

/// One record as embedded by build.rs: the index fields, and where its deflated compact JSON
/// lies in [`BLOB`].
#[derive(Debug)]
pub struct EmbeddedRecord {
    file: Span,
    id: Span,
    name: Span,
    aliases: Span,
    packages: Span,
    summary: Span,
    tools: Span,
    repository: Option<Span>,
    publisher: Span,
    /// Offset and length in [`BLOB`].
    at: (usize, usize),
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
                    id: e.id.text().to_string(),
                    name: e.name.text().to_string(),
                    aliases: e.aliases.list().map(String::from).collect(),
                    packages: e.packages.list().map(String::from).collect(),
                    summary: e.summary.text().to_string(),
                    tools: e.tools.list().map(std::borrow::Cow::Borrowed).collect(),
                    repository: e.repository.map(|r| r.text().to_string()),
                    publisher: e.publisher.text().to_string(),
                },
                file: e.file.text().to_string(),
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

    /// The index build.rs lays out as spans reads back as the records it was made from, for
    /// every embedded record: each field, in order, with the record's own file.
    #[test]
    fn embedded_index_reads_back_as_its_records() {
        let catalog = Catalog::load(&[]).unwrap();
        assert_eq!(catalog.entries.len(), EMBEDDED.len());
        assert!(EMBEDDED.len() > 1000, "the shipped catalog is embedded");
        let files: Vec<&str> = catalog.entries.iter().map(|e| e.file.as_str()).collect();
        assert!(
            files.windows(2).all(|w| w[0] < w[1]),
            "one entry per file, in order"
        );
        for entry in &catalog.entries {
            let record = entry.record().unwrap();
            let from_record = Listing::of(&record);
            let l = &entry.listing;
            assert_eq!(
                (&l.id, &l.name, &l.aliases, &l.packages, &l.summary),
                (
                    &from_record.id,
                    &from_record.name,
                    &from_record.aliases,
                    &from_record.packages,
                    &from_record.summary
                ),
                "{}",
                entry.file
            );
            assert_eq!(l.tools, from_record.tools, "{}", entry.file);
            assert_eq!(
                (&l.repository, &l.publisher),
                (&from_record.repository, &from_record.publisher),
                "{}",
                entry.file
            );
            assert!(
                entry.file.starts_with("catalog/servers/") && entry.file.ends_with(".yaml"),
                "{}",
                entry.file
            );
        }
    }

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
