//! Finding a record by what a person types: exact id, a command line that starts the server
//! (`npx -y PKG`, `uvx PKG`), a repository URL, an alias, name or package, a vendor (every
//! server it publishes), then a close spelling. Several close matches are returned as
//! candidates, never guessed between. And `catalog search`, ranked.

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
    /// Every server of the vendor named (at least two).
    Vendor(String, Vec<&'a Entry>),
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

/// Tools that start a package: `npx -y PKG`, `uvx PKG`, `pipx run PKG`...
const RUNNERS: [&str; 9] = [
    "npx", "uvx", "pipx", "bunx", "pnpx", "pnpm", "yarn", "uv", "bun",
];

/// The package a command line starts (`npx -y @scope/pkg@1.2 --flag` -> `@scope/pkg`), if it
/// is a runner's.
pub fn package_of_command(line: &str) -> Option<String> {
    let words = shlex::split(line)?;
    let first = words.first()?.rsplit('/').next()?.to_string();
    if !RUNNERS.contains(&first.as_str()) {
        return None;
    }
    let mut it = words.iter().skip(1).peekable();
    while let Some(w) = it.next() {
        match w.as_str() {
            "run" | "dlx" | "exec" | "tool" | "x" => continue,
            "-p" | "--package" | "--from" | "--with" | "--python" => {
                // `--from PKG cmd`: the package is the value.
                if matches!(w.as_str(), "-p" | "--package" | "--from") {
                    return it.next().map(|p| strip_version(p));
                }
                it.next();
            }
            f if f.starts_with('-') => {
                if let Some(v) = f.strip_prefix("--package=").or(f.strip_prefix("--from=")) {
                    return Some(strip_version(v));
                }
            }
            pkg => return Some(strip_version(pkg)),
        }
    }
    None
}

/// `@scope/pkg@1.2` -> `@scope/pkg`, `pkg==1.2` -> `pkg`, `pkg[extra]` -> `pkg`.
fn strip_version(p: &str) -> String {
    let p = p.split("==").next().unwrap_or(p);
    let p = p.split('[').next().unwrap_or(p);
    match p[1.min(p.len())..].find('@') {
        Some(i) => p[..i + 1].to_string(),
        None => p.to_string(),
    }
}

/// `https://github.com/Owner/Repo.git/` -> `github.com/owner/repo` (the first two path parts).
pub fn repo_key(url: &str) -> Option<String> {
    let u = url.trim().to_ascii_lowercase();
    let u = u.strip_prefix("git+").unwrap_or(&u);
    let rest = u
        .strip_prefix("https://")
        .or_else(|| u.strip_prefix("http://"))
        .or_else(|| u.strip_prefix("git://"))
        .unwrap_or(u);
    let rest = rest.strip_prefix("www.").unwrap_or(rest);
    let parts: Vec<&str> = rest
        .split(['/', '#', '?'])
        .filter(|p| !p.is_empty())
        .take(3)
        .collect();
    if parts.len() < 3 || !parts[0].contains('.') {
        return None;
    }
    let repo = parts[2].strip_suffix(".git").unwrap_or(parts[2]);
    Some(format!("{}/{}/{repo}", parts[0], parts[1]))
}

/// The names a record's vendor goes by: its publisher, the repository's owner, npm scopes.
fn vendor_keys(e: &Entry) -> Vec<String> {
    let mut v = vec![norm(&e.listing.publisher)];
    if let Some(k) = e.listing.repository.as_deref().and_then(repo_key) {
        if let Some(owner) = k.split('/').nth(1) {
            v.push(norm(owner));
        }
    }
    for p in &e.listing.packages {
        if let Some(scope) = p.strip_prefix('@').and_then(|s| s.split('/').next()) {
            v.push(norm(scope));
        }
    }
    // "Stripe, Inc." and "Microsoft Corporation" go by their first word too.
    if let Some(first) = e.listing.publisher.split([' ', ',']).next() {
        v.push(norm(first));
    }
    v.retain(|k| k.len() >= 2);
    v
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
    // A command line that starts a package.
    if let Some(pkg) = q.contains(' ').then(|| package_of_command(q)).flatten() {
        let hits: Vec<&Entry> = catalog
            .entries
            .iter()
            .filter(|e| {
                e.listing
                    .packages
                    .iter()
                    .any(|p| p.eq_ignore_ascii_case(&pkg))
            })
            .collect();
        return match hits.len() {
            0 => find(catalog, &pkg),
            1 => Found::One(hits[0]),
            _ => Found::Several(hits),
        };
    }
    // A repository URL.
    if q.contains("://") || q.starts_with("github.com/") || q.starts_with("gitlab.com/") {
        let key = repo_key(q).or_else(|| repo_key(&format!("https://{q}")));
        if let Some(key) = key {
            let hits: Vec<&Entry> = catalog
                .entries
                .iter()
                .filter(|e| {
                    e.listing
                        .repository
                        .as_deref()
                        .and_then(repo_key)
                        .as_deref()
                        == Some(key.as_str())
                })
                .collect();
            return match hits.len() {
                0 => Found::None(Vec::new()),
                1 => Found::One(hits[0]),
                _ => Found::Several(hits),
            };
        }
    }
    // A vendor with several servers: all of them.
    let nq = norm(q);
    if nq.len() >= 2 {
        let vendor: Vec<&Entry> = catalog
            .entries
            .iter()
            .filter(|e| vendor_keys(e).contains(&nq))
            .collect();
        if vendor.len() >= 2 {
            let mut vendor = vendor;
            vendor.sort_by(|a, b| a.listing.id.cmp(&b.listing.id));
            return Found::Vendor(q.to_string(), vendor);
        }
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

/// The words of a text for search: split at anything not a letter or digit, lower case.
/// Brand names keep their humps (`GitHub` is one word).
pub fn words(text: &str) -> Vec<String> {
    split_words(text, false)
}

/// The words of a tool name: also split at camelCase humps (`getFileContents`).
pub fn tool_words(text: &str) -> Vec<String> {
    split_words(text, true)
}

fn split_words(text: &str, humps: bool) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in text.chars() {
        if c.is_alphanumeric() {
            if humps && c.is_uppercase() && prev_lower && !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = c.is_lowercase() || c.is_ascii_digit();
            cur.extend(c.to_lowercase());
        } else {
            prev_lower = false;
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// How well `field` matches the query word `q` (lower case): 1 for a word of it, 0.4 for a
/// word that starts with `q` (three letters or more), else 0.
fn field_score(field: &str, q: &str) -> f64 {
    score_in(field, false, q)
}

/// The same over a text's words without allocating them (`humps`: split at camelCase too).
fn score_in(text: &str, humps: bool, q: &str) -> f64 {
    // Words are compared as they stand in the text, ignoring ASCII case; a word with other
    // letters in it is lowered first.
    let mut best: f64 = 0.0;
    let mut start: Option<usize> = None;
    let mut prev_lower = false;
    let mut judge = |w: &str| -> bool {
        let owned;
        let w = if w.is_ascii() {
            w
        } else {
            owned = w.to_lowercase();
            owned.as_str()
        };
        if w.eq_ignore_ascii_case(q) || stem_eq(w, q) {
            return true;
        }
        if q.len() >= 3
            && w.len() > q.len()
            && w.as_bytes()[..q.len()].eq_ignore_ascii_case(q.as_bytes())
        {
            best = best.max(0.4);
        }
        false
    };
    for (i, c) in text.char_indices() {
        if c.is_alphanumeric() {
            if humps && c.is_uppercase() && prev_lower {
                if let Some(s) = start {
                    if judge(&text[s..i]) {
                        return 1.0;
                    }
                }
                start = Some(i);
            } else if start.is_none() {
                start = Some(i);
            }
            prev_lower = c.is_lowercase() || c.is_ascii_digit();
        } else {
            prev_lower = false;
            if let Some(s) = start.take() {
                if judge(&text[s..i]) {
                    return 1.0;
                }
            }
        }
    }
    if let Some(s) = start {
        if judge(&text[s..]) {
            return 1.0;
        }
    }
    best
}

/// Whether two words are the same but for a plural `s` (`payments`, `payment`), any case.
fn stem_eq(w: &str, q: &str) -> bool {
    let sw = stem_len(w);
    let sq = stem_len(q);
    sw == sq && w.as_bytes()[..sw].eq_ignore_ascii_case(&q.as_bytes()[..sq])
}

/// The length of a word without a plural `s`.
fn stem_len(w: &str) -> usize {
    let b = w.as_bytes();
    let ss = b.len() >= 2 && b[b.len() - 2].eq_ignore_ascii_case(&b's');
    if b.len() > 3 && b[b.len() - 1].eq_ignore_ascii_case(&b's') && !ss {
        b.len() - 1
    } else {
        b.len()
    }
}

/// Records matching every word of `query`, best first: a word of the name (or the id's last
/// part, or a package's name) counts most, then an alias, the summary, and last a tool name.
/// The id's namespace (`io.github.x`) says who publishes, not what, and is not searched.
pub fn search<'a>(catalog: &'a Catalog, query: &str) -> Vec<&'a Entry> {
    let qs: Vec<String> = words(query);
    if qs.is_empty() {
        return Vec::new();
    }
    let mut scored: Vec<(f64, &Entry)> = catalog
        .entries
        .iter()
        .filter_map(|e| {
            let l = &e.listing;
            let mut total = 0.0;
            for q in &qs {
                let name = field_score(&l.name, q)
                    .max(field_score(tail(&l.id), q))
                    .max(
                        l.packages
                            .iter()
                            .map(|p| field_score(p, q))
                            .fold(0.0, f64::max),
                    );
                let alias = l
                    .aliases
                    .iter()
                    .map(|a| field_score(a, q))
                    .fold(0.0, f64::max);
                let summary = field_score(&l.summary, q);
                let tools = l
                    .tools
                    .iter()
                    .map(|t| score_in(t, true, q))
                    .fold(0.0, f64::max);
                let s = (100.0 * name)
                    .max(80.0 * alias)
                    .max(50.0 * summary)
                    .max(20.0 * tools);
                if s == 0.0 {
                    return None;
                }
                total += s;
            }
            Some((total, e))
        })
        .collect();
    scored.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then_with(|| a.1.listing.id.cmp(&b.1.listing.id))
    });
    scored.into_iter().map(|(_, e)| e).collect()
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
        Found::Vendor(v, es) => {
            let list: Vec<String> = es
                .iter()
                .map(|e| format!("  {}  {}", e.listing.id, one_line(&e.listing.summary, 80)))
                .collect();
            Err(Error::new(format!(
                "{v:?} publishes several servers; name one:\n{}",
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
                 mcprisk scan --npm PACKAGE@VERSION, mcprisk scan --pypi PACKAGE==VERSION, \
                 mcprisk scan -- <command that starts it>, or mcprisk scan --url <URL>"
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_lines_name_their_package() {
        for (line, pkg) in [
            ("npx -y @scope/pkg@1.2.3 --flag", Some("@scope/pkg")),
            ("npx @playwright/mcp", Some("@playwright/mcp")),
            (
                "npx -y -p chrome-devtools-mcp@1.11.0 chrome-devtools-mcp",
                Some("chrome-devtools-mcp"),
            ),
            (
                "uvx mcp-server-git==2026.10.19 --repository .",
                Some("mcp-server-git"),
            ),
            (
                "uvx --from awslabs.x-mcp-server==1.0 awslabs.x",
                Some("awslabs.x-mcp-server"),
            ),
            ("pipx run kagimcp", Some("kagimcp")),
            ("node build/index.js", None),
        ] {
            assert_eq!(package_of_command(line).as_deref(), pkg, "{line}");
        }
    }

    #[test]
    fn repository_urls_compare_by_host_owner_and_name() {
        assert_eq!(
            repo_key("git+https://github.com/Stripe/agent-toolkit.git").as_deref(),
            Some("github.com/stripe/agent-toolkit")
        );
        assert_eq!(
            repo_key("https://github.com/modelcontextprotocol/servers/tree/main/src/git"),
            repo_key("https://github.com/modelcontextprotocol/servers")
        );
        assert_eq!(repo_key("not a url"), None);
    }

    #[test]
    fn words_keep_brands_whole_but_split_tool_humps() {
        assert_eq!(words("GitHub's API"), ["github", "s", "api"]);
        assert_eq!(tool_words("getFileContents"), ["get", "file", "contents"]);
        assert_eq!(field_score("Payments and refunds", "payment"), 1.0);
        assert_eq!(field_score("GitLab", "git"), 0.4);
        assert_eq!(field_score("io", "git"), 0.0);
    }
}
