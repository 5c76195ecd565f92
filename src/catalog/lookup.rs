//! Finding a record by what a person types: exact id, alias, name or package, then a close
//! spelling. Several close matches are returned as candidates, never guessed between.

use super::store::{Catalog, Entry};
use super::Record;
use crate::error::{Error, Result};
use crate::output::sanitize::one_line;

/// The result of a lookup.
#[derive(Debug)]
pub enum Found<'a> {
    One(&'a Entry),
    /// Several records fit equally well.
    Several(Vec<&'a Entry>),
    /// Nothing fits; the nearest records, if any are near at all.
    None(Vec<&'a Entry>),
}

/// Lowercase letters and digits only: `Proxmox-MCP` and `proxmox_mcp` compare equal.
fn norm(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// The last segment of an id or package (`io.github.x/proxmox-mcp` -> `proxmox-mcp`).
fn tail(s: &str) -> &str {
    s.rsplit('/').next().unwrap_or(s)
}

fn keys(e: &Entry) -> impl Iterator<Item = &str> {
    std::iter::once(e.listing.id.as_str())
        .chain(std::iter::once(tail(&e.listing.id)))
        .chain(std::iter::once(e.listing.name.as_str()))
        .chain(e.listing.aliases.iter().map(String::as_str))
        .chain(e.listing.packages.iter().map(String::as_str))
        .chain(e.listing.packages.iter().map(|p| tail(p)))
}

/// Looks a name up.
pub fn find<'a>(catalog: &'a Catalog, query: &str) -> Found<'a> {
    let q = query.trim();
    if let Some(e) = catalog
        .entries
        .iter()
        .find(|e| e.listing.id.eq_ignore_ascii_case(q))
    {
        return Found::One(e);
    }
    let exact: Vec<&Entry> = catalog
        .entries
        .iter()
        .filter(|e| keys(e).any(|k| k.eq_ignore_ascii_case(q)))
        .collect();
    match exact.len() {
        1 => return Found::One(exact[0]),
        n if n > 1 => return Found::Several(exact),
        _ => {}
    }
    let nq = norm(q);
    if nq.is_empty() {
        return Found::None(Vec::new());
    }
    let normalized: Vec<&Entry> = catalog
        .entries
        .iter()
        .filter(|e| keys(e).any(|k| norm(k) == nq))
        .collect();
    match normalized.len() {
        1 => return Found::One(normalized[0]),
        n if n > 1 => return Found::Several(normalized),
        _ => {}
    }
    // Fuzzy: the best score per record over its keys; typos by edit distance, fragments by
    // containment ("proxmox" in "proxmox-mcp").
    let mut scored: Vec<(f64, &Entry)> = catalog
        .entries
        .iter()
        .map(|e| {
            // Not the full id: its namespace (io.github...) says who, not what.
            let best = keys(e)
                .skip(1)
                .map(|k| {
                    let nk = norm(k);
                    let mut s = strsim::jaro_winkler(&nq, &nk);
                    if nq.len() >= 3 && (nk.starts_with(&nq) || nk.contains(&nq)) {
                        s = s.max(0.9 + 0.1 * nq.len() as f64 / nk.len().max(1) as f64);
                    }
                    // The distance is at least the length difference: skip what cannot be <= 2.
                    if nq.len() >= 4
                        && nq.len().abs_diff(nk.len()) <= 2
                        && strsim::levenshtein(&nq, &nk) <= 2
                    {
                        s = s.max(0.93);
                    }
                    s
                })
                .fold(0.0, f64::max);
            (best, e)
        })
        .collect();
    scored.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then_with(|| a.1.listing.id.cmp(&b.1.listing.id))
    });
    let good: Vec<&(f64, &Entry)> = scored.iter().filter(|(s, _)| *s >= 0.9).collect();
    match good.as_slice() {
        [] => Found::None(
            scored
                .iter()
                .take(3)
                .filter(|(s, _)| *s >= 0.75)
                .map(|(_, e)| *e)
                .collect(),
        ),
        [(_, e)] => Found::One(e),
        [(a, e), (b, _), ..] if a - b >= 0.04 => Found::One(e),
        many => Found::Several(many.iter().take(8).map(|(_, e)| *e).collect()),
    }
}

/// Records whose id, name, aliases, summary or tool names contain `word` (any case).
pub fn search<'a>(catalog: &'a Catalog, word: &str) -> Vec<&'a Entry> {
    let w = word.to_lowercase();
    catalog
        .entries
        .iter()
        .filter(|e| {
            keys(e).any(|k| k.to_lowercase().contains(&w))
                || e.listing.summary.to_lowercase().contains(&w)
                || e.listing
                    .tools
                    .iter()
                    .any(|t| t.to_lowercase().contains(&w))
        })
        .collect()
}

/// Finds the record named by a person, or says what was meant and how to scan it instead.
pub fn resolve(catalog: &Catalog, name: &str) -> Result<Record> {
    match find(catalog, name) {
        Found::One(e) => e.record(),
        Found::Several(es) => {
            let list: Vec<String> = es
                .iter()
                .map(|e| format!("  {}  {}", e.listing.id, one_line(&e.listing.summary, 80)))
                .collect();
            Err(Error::new(format!(
                "{name:?} matches several servers; name one:\n{}",
                list.join("\n")
            )))
        }
        Found::None(near) => {
            let hint = match near.first() {
                Some(e) => format!(" Did you mean {} ({})?", e.listing.id, e.listing.name),
                None => String::new(),
            };
            Err(Error::new(format!(
                "no server {name:?} in the catalog.{hint} To assess a server that is not in it, scan it: \
                 mcprisk scan -- <command that starts it>, or mcprisk scan --url <URL>"
            )))
        }
    }
}
