//! A cache of each user catalog directory's index, so a directory of thousands of records is
//! not parsed from YAML on every run (10,000 records took about a second).
//!
//! For each `.yaml` file the cache keeps its size and modification time and the fields lookups
//! read (id, name, aliases, packages, summary, tool names). A file whose size and time match is
//! taken from the cache and parsed only if its full record is asked for; any other file is
//! parsed (and so checked) as before. A file changed within two seconds of the cache being
//! written is never trusted, since a same-size edit in the same clock tick would look
//! unchanged. The cache lives in `$MCPRISK_CACHE_DIR`, else `$XDG_CACHE_HOME/mcprisk`, else
//! `~/.cache/mcprisk`; if it cannot be read or written, the directory is simply parsed.

use super::record::Record;
use super::store::{parse_record, record_files, Entry, Listing};
use crate::error::Result;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Bumped when the cache's shape or meaning changes; other versions are ignored.
const VERSION: u32 = 2;

/// How recent a file's change may be, against the cache's writing, and still be trusted.
const RACY: Duration = Duration::from_secs(2);

#[derive(Serialize, Deserialize)]
struct CacheFile {
    version: u32,
    /// The directory, as given, so two directories never share a file by a hash collision.
    dir: String,
    /// When the cache was written, in nanoseconds since the epoch.
    written_ns: u128,
    files: Vec<Cached>,
}

/// What is kept of one record file.
#[derive(Serialize, Deserialize, Clone)]
pub struct Cached {
    pub file: String,
    pub size: u64,
    pub modified_ns: u128,
    #[serde(flatten)]
    pub listing: Listing,
}

/// The entries of one directory's records, from the cache where the files are unchanged.
pub fn load_dir(dir: &Path) -> Result<Vec<Entry>> {
    let files = record_files(dir)?;
    let path = cache_path(dir);
    let old = path.as_deref().and_then(|p| read_cache(p, dir));
    let (trusted, written_ns) = match &old {
        Some(c) => (
            c.files
                .iter()
                .map(|f| (f.file.as_str(), f))
                .collect::<HashMap<_, _>>(),
            c.written_ns,
        ),
        None => (HashMap::new(), 0),
    };
    let mut entries = Vec::with_capacity(files.len());
    let mut kept = Vec::with_capacity(files.len());
    let mut parsed_any = false;
    for file in &files {
        let name = file.display().to_string();
        let stamp = stamp(file);
        let hit = trusted.get(name.as_str()).filter(|c| {
            stamp.is_some_and(|(size, modified_ns)| {
                c.size == size
                    && c.modified_ns == modified_ns
                    && modified_ns + RACY.as_nanos() < written_ns
            })
        });
        match hit {
            Some(c) => {
                entries.push(Entry::from_cached(c, file.clone()));
                kept.push((*c).clone());
            }
            None => {
                let record: Record = parse_record(file)?;
                parsed_any = true;
                let entry = Entry::from_record(record, name.clone());
                if let Some((size, modified_ns)) = stamp {
                    kept.push(entry.cached(name, size, modified_ns));
                }
                entries.push(entry);
            }
        }
    }
    let same_files = old.as_ref().is_some_and(|c| c.files.len() == kept.len());
    if let (Some(path), true) = (path, parsed_any || !same_files) {
        write_cache(&path, dir, kept);
    }
    Ok(entries)
}

/// A file's size and modification time, if they can be read.
fn stamp(file: &Path) -> Option<(u64, u128)> {
    let meta = std::fs::metadata(file).ok()?;
    let modified = meta.modified().ok()?.duration_since(UNIX_EPOCH).ok()?;
    Some((meta.len(), modified.as_nanos()))
}

/// Where the cache of `dir` lives, if a cache directory can be named.
fn cache_path(dir: &Path) -> Option<PathBuf> {
    let base = match std::env::var_os("MCPRISK_CACHE_DIR") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => match std::env::var_os("XDG_CACHE_HOME") {
            Some(d) if !d.is_empty() => PathBuf::from(d).join("mcprisk"),
            _ => PathBuf::from(std::env::var_os("HOME")?).join(".cache/mcprisk"),
        },
    };
    let canonical = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(canonical.as_os_str().as_encoded_bytes());
    let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    Some(base.join(format!("catalog-{hex}.json")))
}

fn read_cache(path: &Path, dir: &Path) -> Option<CacheFile> {
    let bytes = std::fs::read(path).ok()?;
    let cache: CacheFile = serde_json::from_slice(&bytes).ok()?;
    (cache.version == VERSION && cache.dir == dir.display().to_string()).then_some(cache)
}

/// Writes the cache through a temporary file and a rename, so a reader never sees half of
/// it; failing to write it only costs the next run a parse.
fn write_cache(path: &Path, dir: &Path, files: Vec<Cached>) {
    let Some(parent) = path.parent() else { return };
    if std::fs::create_dir_all(parent).is_err() {
        return;
    }
    let written_ns = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let cache = CacheFile {
        version: VERSION,
        dir: dir.display().to_string(),
        written_ns,
        files,
    };
    let Ok(mut tmp) = tempfile::NamedTempFile::new_in(parent) else {
        return;
    };
    let mut out = std::io::BufWriter::new(tmp.as_file_mut());
    let written = serde_json::to_writer(&mut out, &cache).is_ok();
    let flushed = std::io::Write::flush(&mut out).is_ok();
    drop(out);
    if written && flushed {
        let _ = tmp.persist(path);
    }
}
