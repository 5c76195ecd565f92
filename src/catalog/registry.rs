//! `catalog import-registry`: creates or updates catalog records from an MCP registry
//! (`GET {url}/v0/servers`, cursor paging), the official one or any registry with its API.
//!
//! Two response shapes are read:
//! - current (API 2025-09-29 and later): `servers: [{ "server": {server.json}, "_meta":
//!   {"io.modelcontextprotocol.registry/official": {status, publishedAt, isLatest, ...}} }]`;
//! - older: the server.json fields at the top of each item, `status` beside them and the
//!   official metadata in the item's own `_meta` (camelCase, or snake_case before 2025-09-16).
//!
//! Everything the registry sends is treated as hostile: ids must have the registry's name form
//! (so a file name made from one stays inside the directory), text loses control and invisible
//! characters and is capped, and a command is derived only from plain package names.

use super::record::{Auth, AuthKind, AuthVariable, Identity, IdentityLevel, Package, Record};
use super::store::{parse_record, record_files};
use crate::error::{Error, Result};
use crate::output::sanitize::{is_hidden, one_line};
use serde::Deserialize;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What to import and where to.
#[derive(Debug, Clone)]
pub struct ImportOptions {
    /// The registry's base URL (`https://registry.modelcontextprotocol.io`), or the full
    /// `.../v0/servers` endpoint.
    pub url: String,
    /// The directory of record files (`catalog/servers`).
    pub dir: PathBuf,
    /// At most this many pages are read (100 servers a page).
    pub max_pages: usize,
    /// The limit for each HTTP request, from connecting to the last byte of the body.
    pub timeout: Duration,
}

/// What an import did, by record id.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct ImportReport {
    pub created: Vec<String>,
    pub updated: Vec<String>,
    pub unchanged: Vec<String>,
    /// Id (made safe to print) and why it was not written.
    pub skipped: Vec<(String, String)>,
    /// Pages read.
    pub pages: usize,
}

impl fmt::Display for ImportReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} page{} read: {} created, {} updated, {} unchanged, {} skipped",
            self.pages,
            if self.pages == 1 { "" } else { "s" },
            self.created.len(),
            self.updated.len(),
            self.unchanged.len(),
            self.skipped.len()
        )?;
        for id in &self.created {
            writeln!(f, "  created   {id}")?;
        }
        for id in &self.updated {
            writeln!(f, "  updated   {id}")?;
        }
        for (id, why) in &self.skipped {
            writeln!(f, "  skipped   {id}: {why}")?;
        }
        Ok(())
    }
}

/// Longest page body read, so a hostile registry cannot exhaust memory.
const MAX_PAGE_BYTES: u64 = 32 * 1024 * 1024;
/// Servers asked for per page (the registry's maximum).
const PAGE_LIMIT: &str = "100";
const MAX_ID: usize = 200;
const MAX_NAME: usize = 100;
const MAX_SUMMARY: usize = 300;
const MAX_MEANING: usize = 300;
const MAX_URL: usize = 2000;
const MAX_IDENT: usize = 300;
const MAX_VAR: usize = 200;

/// Reads every page of the registry at `opts.url` and writes one record per server to `opts.dir`.
pub fn import(opts: &ImportOptions) -> Result<ImportReport> {
    let endpoint = endpoint(&opts.url)?;
    let shown = shown_url(&endpoint);
    let mut report = ImportReport::default();
    let items = fetch_all(opts, &endpoint, &shown, &mut report)?;

    let mut chosen = choose_latest(items, &mut report.skipped);

    std::fs::create_dir_all(&opts.dir).map_err(|e| {
        Error::new(format!(
            "{}: cannot create the catalog directory: {e}",
            opts.dir.display()
        ))
    })?;
    let existing = index_dir(&opts.dir)?;

    // Build every record first, so aliases shared by several servers can be left out.
    let mut planned: Vec<(Record, PathBuf, Option<Record>)> = Vec::new();
    // Lower-cased: ids that differ only in case share a file on case-insensitive file systems.
    let mut planned_paths: HashSet<String> = HashSet::new();
    for cand in chosen.drain(..) {
        let id = cand.server.name.clone().unwrap_or_default();
        let mut rec = to_record(&id, &cand.server);
        let path = match existing.by_id.get(&id) {
            Some(p) => p.clone(),
            None => opts.dir.join(file_name(&id)),
        };
        if !path.starts_with(&opts.dir) || path.parent() != Some(opts.dir.as_path()) {
            report.skipped.push((
                safe_id(&id),
                "its file name would leave the directory".into(),
            ));
            continue;
        }
        if !planned_paths.insert(path.to_string_lossy().to_lowercase()) {
            report.skipped.push((
                safe_id(&id),
                format!(
                    "another server in this import has the file {}",
                    path.display()
                ),
            ));
            continue;
        }
        let old = if path.exists() {
            match parse_record(&path) {
                Ok(old) if old.id == id => Some(old),
                Ok(old) => {
                    report.skipped.push((
                        safe_id(&id),
                        format!(
                            "{} already holds another record ({})",
                            path.display(),
                            safe_id(&old.id)
                        ),
                    ));
                    continue;
                }
                Err(e) => {
                    report.skipped.push((
                        safe_id(&id),
                        format!(
                            "{} exists but is not a readable record: {e}",
                            path.display()
                        ),
                    ));
                    continue;
                }
            }
        } else {
            None
        };
        if let Some(old) = &old {
            merge_kept(&mut rec, old);
        }
        planned.push((rec, path, old));
    }
    drop_shared_aliases(&mut planned, &existing.aliases);

    for (rec, path, old) in planned {
        match &old {
            Some(old) if *old == rec => report.unchanged.push(rec.id.clone()),
            _ => {
                write_record(&path, &rec)?;
                if old.is_some() {
                    report.updated.push(rec.id.clone());
                } else {
                    report.created.push(rec.id.clone());
                }
            }
        }
    }
    Ok(report)
}

// ----------------------------------------------------------------------------------------------
// Fetching

/// `{url}/v0/servers`, unless the URL already names a `servers` endpoint.
fn endpoint(url: &str) -> Result<url::Url> {
    let mut u = url::Url::parse(url.trim())
        .map_err(|e| Error::new(format!("{}: not a registry URL: {e}", one_line(url, 200))))?;
    if u.scheme() != "http" && u.scheme() != "https" {
        return Err(Error::new(format!(
            "{}: the registry URL must start with http:// or https://",
            one_line(url, 200)
        )));
    }
    u.set_query(None);
    u.set_fragment(None);
    let path = u.path().trim_end_matches('/').to_string();
    if !path.ends_with("/servers") {
        u.set_path(&format!("{path}/v0/servers"));
    }
    Ok(u)
}

/// The endpoint for messages: no query, no credentials.
fn shown_url(u: &url::Url) -> String {
    let mut s = u.clone();
    let _ = s.set_username("");
    let _ = s.set_password(None);
    s.set_query(None);
    s.to_string()
}

/// One server version as listed, with the registry's metadata for it.
struct Candidate {
    server: ServerJson,
    official: Official,
    /// Position in the listing, the last tie-breaker.
    seq: usize,
}

fn fetch_all(
    opts: &ImportOptions,
    endpoint: &url::Url,
    shown: &str,
    report: &mut ImportReport,
) -> Result<Vec<Candidate>> {
    let loopback = matches!(endpoint.host(), Some(url::Host::Ipv4(a)) if a.is_loopback())
        || matches!(endpoint.host(), Some(url::Host::Ipv6(a)) if a.is_loopback())
        || endpoint.host_str() == Some("localhost");
    let mut builder = reqwest::blocking::Client::builder()
        .user_agent(concat!("mcprisk/", env!("CARGO_PKG_VERSION")))
        .timeout(opts.timeout)
        .connect_timeout(opts.timeout)
        .redirect(reqwest::redirect::Policy::limited(5));
    if loopback {
        // A proxy cannot reach this machine's loopback anyway.
        builder = builder.no_proxy();
    }
    let client = builder
        .build()
        .map_err(|e| Error::new(format!("{shown}: cannot set up an HTTP client: {e}")))?;

    let mut items = Vec::new();
    let mut seen_cursors: HashSet<String> = HashSet::new();
    let mut cursor: Option<String> = None;
    let mut seq = 0;
    loop {
        if report.pages >= opts.max_pages {
            if cursor.is_some() {
                report.skipped.push((
                    "(registry)".into(),
                    format!(
                        "stopped after {} pages (--max-pages); later pages were not read",
                        opts.max_pages
                    ),
                ));
            }
            break;
        }
        let page_no = report.pages + 1;
        let mut u = endpoint.clone();
        {
            let mut q = u.query_pairs_mut();
            q.append_pair("limit", PAGE_LIMIT);
            if let Some(c) = &cursor {
                q.append_pair("cursor", c);
            }
        }
        let body = get_page(&client, &u, shown, page_no, opts.timeout)?;
        report.pages = page_no;
        let (servers, next) = parse_page(&body, shown, page_no)?;
        for item in servers {
            match candidate(item, seq) {
                Ok(c) => items.push(c),
                Err((id, why)) => report.skipped.push((id, why)),
            }
            seq += 1;
        }
        match next {
            None => break,
            Some(next) => {
                if !seen_cursors.insert(next.clone()) {
                    return Err(Error::new(format!(
                        "{shown}: page {page_no}: the registry sent the cursor {} again; \
                         stopping instead of reading the same pages forever",
                        one_line(&next, 80)
                    )));
                }
                cursor = Some(next);
            }
        }
    }
    Ok(items)
}

/// A body reader that fails once its deadline has passed.
struct UntilDeadline<R> {
    inner: R,
    deadline: Instant,
}

impl<R: Read> Read for UntilDeadline<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if Instant::now() >= self.deadline {
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "the --timeout passed",
            ));
        }
        self.inner.read(buf)
    }
}

/// One page's body, all of it within `timeout` from the request's start.
fn get_page(
    client: &reqwest::blocking::Client,
    u: &url::Url,
    shown: &str,
    page: usize,
    timeout: Duration,
) -> Result<Vec<u8>> {
    let deadline = Instant::now() + timeout;
    let resp = client
        .get(u.clone())
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .map_err(|e| Error::new(format!("{shown}: page {page}: {}", http_error(&e))))?;
    let status = resp.status();
    // reqwest bounds each read of a blocking body, not the whole body: a registry that sends a
    // byte now and then would never time out. The body is read on a thread of its own that
    // gives up at the deadline, and waited for only until then.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut body = Vec::new();
        let reader = UntilDeadline {
            inner: resp,
            deadline,
        };
        let read = reader.take(MAX_PAGE_BYTES + 1).read_to_end(&mut body);
        let _ = tx.send((read, body));
    });
    let left = deadline.saturating_duration_since(Instant::now());
    let Ok((read, body)) = rx.recv_timeout(left) else {
        return Err(Error::new(format!(
            "{shown}: page {page}: no answer in time (--timeout): the body was not complete after {:.1} s",
            timeout.as_secs_f64()
        )));
    };
    if !status.is_success() {
        let text = String::from_utf8_lossy(&body);
        let detail = if text.trim().is_empty() {
            String::new()
        } else {
            format!(": {}", one_line(&text, 200))
        };
        return Err(Error::new(format!(
            "{shown}: page {page}: the registry answered HTTP {status}{detail}"
        )));
    }
    read.map_err(|e| Error::new(format!("{shown}: page {page}: cannot read the answer: {e}")))?;
    if body.len() as u64 > MAX_PAGE_BYTES {
        return Err(Error::new(format!(
            "{shown}: page {page}: the answer is larger than {} MB",
            MAX_PAGE_BYTES / (1024 * 1024)
        )));
    }
    Ok(body)
}

fn http_error(e: &reqwest::Error) -> String {
    if e.is_timeout() {
        return "no answer in time (--timeout)".into();
    }
    let mut s = e.to_string();
    let mut src = std::error::Error::source(e);
    while let Some(inner) = src {
        s.push_str(": ");
        s.push_str(&inner.to_string());
        src = inner.source();
    }
    // reqwest names the URL with its query; the message already names it without.
    one_line(&s, 400)
}

/// The page's `servers` items and its next cursor (absent, null or empty: the last page).
fn parse_page(body: &[u8], shown: &str, page: usize) -> Result<(Vec<Value>, Option<String>)> {
    let v: Value = serde_json::from_slice(body).map_err(|e| {
        Error::new(format!(
            "{shown}: page {page}: the answer is not valid JSON ({e})"
        ))
    })?;
    let Value::Object(mut top) = v else {
        return Err(not_registry(shown, page, "the answer is not a JSON object"));
    };
    let servers = match top.remove("servers") {
        Some(Value::Array(a)) => a,
        Some(Value::Null) => Vec::new(),
        Some(_) => return Err(not_registry(shown, page, "`servers` is not an array")),
        None => return Err(not_registry(shown, page, "it has no `servers` list")),
    };
    let next = top
        .get("metadata")
        .and_then(|m| m.get("nextCursor").or_else(|| m.get("next_cursor")))
        .and_then(Value::as_str)
        .filter(|c| !c.is_empty())
        .map(String::from);
    Ok((servers, next))
}

fn not_registry(shown: &str, page: usize, why: &str) -> Error {
    Error::new(format!(
        "{shown}: page {page}: not an MCP registry answer: {why} (expected {{\"servers\": [...], \
         \"metadata\": {{\"nextCursor\": ...}}}})"
    ))
}

// ----------------------------------------------------------------------------------------------
// The registry's format (server.json, camelCase with the older snake_case names as aliases)

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ServerJson {
    name: Option<String>,
    description: Option<String>,
    title: Option<String>,
    version: Option<String>,
    /// Before 2025-09: `{version, release_date, is_latest}`.
    version_detail: Option<VersionDetail>,
    repository: Option<Repository>,
    packages: Vec<PackageJson>,
    remotes: Vec<RemoteJson>,
    /// Before 2025-09-29 the status sat beside the server fields.
    status: Option<String>,
    #[serde(rename = "_meta")]
    meta: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct VersionDetail {
    version: Option<String>,
    release_date: Option<String>,
    is_latest: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Repository {
    url: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct PackageJson {
    #[serde(
        rename = "registryType",
        alias = "registry_type",
        alias = "registry_name"
    )]
    registry_type: Option<String>,
    #[serde(alias = "name")]
    identifier: Option<String>,
    version: Option<String>,
    transport: Option<TransportJson>,
    #[serde(rename = "environmentVariables", alias = "environment_variables")]
    environment_variables: Vec<InputJson>,
    #[serde(rename = "runtimeArguments", alias = "runtime_arguments")]
    runtime_arguments: Vec<InputJson>,
    #[serde(rename = "packageArguments", alias = "package_arguments")]
    package_arguments: Vec<InputJson>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct TransportJson {
    #[serde(rename = "type")]
    kind: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RemoteJson {
    #[serde(rename = "type", alias = "transport_type")]
    kind: Option<String>,
    url: Option<String>,
    headers: Vec<InputJson>,
}

/// An environment variable, header or argument.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct InputJson {
    name: Option<String>,
    #[serde(rename = "valueHint", alias = "value_hint")]
    value_hint: Option<String>,
    description: Option<String>,
    #[serde(rename = "isRequired", alias = "is_required")]
    is_required: Option<bool>,
    #[serde(rename = "isSecret", alias = "is_secret")]
    is_secret: Option<bool>,
    value: Option<String>,
}

/// `_meta["io.modelcontextprotocol.registry/official"]`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Official {
    status: Option<String>,
    #[serde(rename = "publishedAt", alias = "published_at")]
    published_at: Option<String>,
    #[serde(rename = "isLatest", alias = "is_latest")]
    is_latest: Option<bool>,
}

const OFFICIAL: &str = "io.modelcontextprotocol.registry/official";

/// One listed item, in either shape.
fn candidate(item: Value, seq: usize) -> std::result::Result<Candidate, (String, String)> {
    let label = |v: &Value| {
        v.get("server")
            .and_then(|s| s.get("name"))
            .or_else(|| v.get("name"))
            .and_then(Value::as_str)
            .map(safe_id)
            .unwrap_or_else(|| format!("(item {})", seq + 1))
    };
    let id = label(&item);
    let Value::Object(mut obj) = item else {
        return Err((id, "the listed item is not a JSON object".into()));
    };
    let outer_meta = obj.remove("_meta");
    let (server_value, meta) = match obj.remove("server") {
        Some(s @ Value::Object(_)) => (s, outer_meta),
        Some(_) => return Err((id, "`server` is not an object".into())),
        None => {
            // The older shape: server.json fields at the top, `_meta` among them.
            (Value::Object(obj), outer_meta)
        }
    };
    let mut server: ServerJson = serde_json::from_value(server_value)
        .map_err(|e| (id.clone(), format!("not a server.json entry: {e}")))?;
    let official_value = meta
        .as_ref()
        .and_then(|m| m.get(OFFICIAL))
        .or_else(|| server.meta.as_ref().and_then(|m| m.get(OFFICIAL)))
        .cloned();
    let mut official: Official = match official_value {
        Some(v) => serde_json::from_value(v).unwrap_or_default(),
        None => Official::default(),
    };
    if official.status.is_none() {
        official.status = server.status.clone();
    }
    if let Some(vd) = &server.version_detail {
        official.is_latest = official.is_latest.or(vd.is_latest);
        if official.published_at.is_none() {
            official.published_at = vd.release_date.clone();
        }
        if server.version.is_none() {
            server.version = vd.version.clone();
        }
    }
    let Some(name) = server.name.clone() else {
        return Err((id, "the entry has no `name`".into()));
    };
    if let Err(why) = check_id(&name) {
        return Err((safe_id(&name), why));
    }
    Ok(Candidate {
        server,
        official,
        seq,
    })
}

/// Keeps one version per server: the one marked latest, else the most recently published, else
/// the last listed; a server whose latest version is deleted or deprecated is skipped.
fn choose_latest(items: Vec<Candidate>, skipped: &mut Vec<(String, String)>) -> Vec<Candidate> {
    let mut best: BTreeMap<String, Candidate> = BTreeMap::new();
    for c in items {
        let id = c.server.name.clone().unwrap_or_default();
        match best.get(&id) {
            Some(cur) if !newer(&c, cur) => {}
            _ => {
                best.insert(id, c);
            }
        }
    }
    let mut out = Vec::new();
    for (id, c) in best {
        match c.official.status.as_deref().map(str::to_ascii_lowercase) {
            Some(s) if s == "deleted" || s == "deprecated" => {
                let version = c.server.version.as_deref().unwrap_or("?");
                skipped.push((
                    safe_id(&id),
                    format!(
                        "its latest version ({}) is {s} in the registry",
                        clean(version, 60)
                    ),
                ));
            }
            _ => out.push(c),
        }
    }
    out
}

fn newer(a: &Candidate, b: &Candidate) -> bool {
    let la = a.official.is_latest == Some(true);
    let lb = b.official.is_latest == Some(true);
    if la != lb {
        return la;
    }
    // RFC 3339 timestamps from one registry compare as text.
    match (&a.official.published_at, &b.official.published_at) {
        (Some(x), Some(y)) if x != y => x > y,
        (Some(_), None) => true,
        (None, Some(_)) => false,
        _ => a.seq > b.seq,
    }
}

// ----------------------------------------------------------------------------------------------
// Ids and file names

/// The registry's name form: `namespace/name`, namespace `[A-Za-z0-9.-]`, name `[A-Za-z0-9._-]`,
/// each starting with a letter or digit, at most 200 characters, no `..`.
fn check_id(id: &str) -> std::result::Result<(), String> {
    if id.len() > MAX_ID {
        return Err(format!("the name is longer than {MAX_ID} characters"));
    }
    let Some((ns, name)) = id.split_once('/') else {
        return Err("the name is not of the form namespace/name".into());
    };
    let ok_ns = ns
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-');
    let ok_name = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-' || c == '_');
    let starts = |s: &str| s.chars().next().is_some_and(|c| c.is_ascii_alphanumeric());
    if !ok_ns || !ok_name || !starts(ns) || !starts(name) || id.contains("..") {
        return Err(
            "the name is not a registry name (namespace/name of letters, digits, `.`, `-`, `_`); \
             not written"
                .into(),
        );
    }
    Ok(())
}

/// `io.github.owner/repo` -> `io.github.owner--repo.yaml` (ids are checked by [`check_id`]).
pub fn file_name(id: &str) -> String {
    format!("{}.yaml", id.replace('/', "--"))
}

/// An id as it may be printed: escapes for anything hidden, at most 120 characters.
fn safe_id(id: &str) -> String {
    one_line(id, 120)
}

// ----------------------------------------------------------------------------------------------
// Mapping

/// Text without control or invisible characters, whitespace folded, at most `max` characters.
pub(crate) fn clean(s: &str, max: usize) -> String {
    let mut out = String::new();
    let mut count = 0;
    let mut space = false;
    for c in s.chars() {
        let c = if c.is_whitespace() { ' ' } else { c };
        if c != ' ' && is_hidden(c) {
            continue;
        }
        if c == ' ' {
            if count == 0 || space {
                continue;
            }
            space = true;
        } else {
            space = false;
        }
        if count == max {
            let mut t = out.trim_end().to_string();
            t.push('…');
            return t;
        }
        out.push(c);
        count += 1;
    }
    out.trim_end().to_string()
}

/// A cleaned, non-empty string.
pub(crate) fn some_clean(s: Option<&str>, max: usize) -> Option<String> {
    s.map(|s| clean(s, max)).filter(|s| !s.is_empty())
}

/// An http(s) URL without whitespace or hidden characters (templates like `{tenant}` allowed).
pub(crate) fn clean_url(s: Option<&str>) -> Option<String> {
    let s = s?.trim();
    let lower = s.to_ascii_lowercase();
    let ok = (lower.starts_with("https://") || lower.starts_with("http://"))
        && s.len() <= MAX_URL
        && !s.chars().any(|c| c.is_whitespace() || is_hidden(c));
    ok.then(|| s.to_string())
}

/// A package name or version that is safe to put in a command line.
fn plain(s: &str, extra: &str) -> bool {
    !s.is_empty()
        && s.len() <= MAX_IDENT
        && !s.starts_with('-')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c) || extra.contains(c))
}

/// The namespace owner: the GitHub user for `io.github.X`, else the domain (`com.stripe` ->
/// `stripe.com`). The second value says which.
fn publisher(id: &str) -> (String, bool) {
    let ns = id.split_once('/').map(|(n, _)| n).unwrap_or(id);
    let lower = ns.to_ascii_lowercase();
    if lower.starts_with("io.github.") && ns.len() > "io.github.".len() {
        return (ns["io.github.".len()..].to_string(), true);
    }
    let mut parts: Vec<&str> = ns.split('.').filter(|p| !p.is_empty()).collect();
    parts.reverse();
    (parts.join("."), false)
}

fn to_record(id: &str, s: &ServerJson) -> Record {
    let last = id.rsplit('/').next().unwrap_or(id).to_string();
    let name = some_clean(s.title.as_deref(), MAX_NAME).unwrap_or_else(|| last.clone());
    let summary = s
        .description
        .as_deref()
        .map(|d| clean(d, MAX_SUMMARY))
        .unwrap_or_default();
    let repository = clean_url(s.repository.as_ref().and_then(|r| r.url.as_deref()));
    let (owner, github) = publisher(id);

    let mut packages = Vec::new();
    let mut aliases = vec![last.clone()];
    let mut transports: Vec<&'static str> = Vec::new();
    let mut command = None;
    for p in &s.packages {
        let Some(ident) = some_clean(p.identifier.as_deref(), MAX_IDENT) else {
            continue;
        };
        let registry = some_clean(p.registry_type.as_deref(), 40)
            .map(|r| r.to_ascii_lowercase())
            .unwrap_or_else(|| "unknown".into());
        let version = some_clean(p.version.as_deref(), 100);
        let transport = p
            .transport
            .as_ref()
            .and_then(|t| t.kind.as_deref())
            .unwrap_or("stdio");
        if let Some(t) = known_transport(transport) {
            if !transports.contains(&t) {
                transports.push(t);
            }
        }
        if command.is_none() && transport == "stdio" {
            command = derive_command(&registry, &ident, version.as_deref());
        }
        if registry != "mcpb" && plain(&ident, "@/~:") {
            aliases.push(alias_of(&registry, &ident));
        }
        packages.push(Package {
            registry,
            identifier: ident,
            version,
        });
    }
    let mut remotes = Vec::new();
    for r in &s.remotes {
        if let Some(t) = r.kind.as_deref().and_then(known_transport) {
            if !transports.contains(&t) {
                transports.push(t);
            }
        }
        if let Some(u) = clean_url(r.url.as_deref()) {
            if !remotes.contains(&u) {
                remotes.push(u);
            }
        }
    }
    transports.sort_by_key(|t| {
        ["stdio", "streamable-http", "sse"]
            .iter()
            .position(|x| x == t)
    });

    let mut seen = HashSet::new();
    aliases.retain(|a| !a.is_empty() && a != id && a != &name && seen.insert(a.clone()));

    let evidence = if github {
        format!("the registry verified GitHub ownership of {owner}")
    } else {
        format!("the registry verified the domain {owner}")
    };
    Record {
        id: id.to_string(),
        name,
        aliases,
        summary,
        repository,
        publisher: owner,
        license: None,
        packages,
        command,
        remotes,
        transports: transports.into_iter().map(String::from).collect(),
        identity: Identity {
            level: IdentityLevel::RegistryVerified,
            evidence: vec![evidence],
        },
        auth: auth(s),
        snapshot: None,
        unscanned: None,
        overrides: Vec::new(),
    }
}

fn known_transport(t: &str) -> Option<&'static str> {
    match t {
        "stdio" => Some("stdio"),
        "streamable-http" | "streamable" | "http" => Some("streamable-http"),
        "sse" => Some("sse"),
        _ => None,
    }
}

/// The package name without an OCI tag or digest.
fn alias_of(registry: &str, ident: &str) -> String {
    if registry == "oci" {
        let base = ident.split('@').next().unwrap_or(ident);
        let slash = base.rfind('/').map(|i| i + 1).unwrap_or(0);
        match base[slash..].find(':') {
            Some(i) => base[..slash + i].to_string(),
            None => base.to_string(),
        }
    } else {
        ident.to_string()
    }
}

/// `npx -y ID@VER`, `uvx ID==VER`, `docker run -i --rm ID:VER`, from plain names only.
fn derive_command(registry: &str, ident: &str, version: Option<&str>) -> Option<String> {
    let version = match version {
        Some(v) if plain(v, "+") => Some(v),
        Some(_) => return None,
        None => None,
    };
    match registry {
        "npm" if plain(ident, "@/~") => Some(match version {
            Some(v) => format!("npx -y {ident}@{v}"),
            None => format!("npx -y {ident}"),
        }),
        "pypi" if plain(ident, "") => Some(match version {
            Some(v) => format!("uvx {ident}=={v}"),
            None => format!("uvx {ident}"),
        }),
        "oci" if plain(ident, "/:@") => {
            let name_part = &ident[ident.rfind('/').map(|i| i + 1).unwrap_or(0)..];
            let tagged = name_part.contains(':') || ident.contains('@');
            Some(match version {
                Some(v) if !tagged => format!("docker run -i --rm {ident}:{v}"),
                _ => format!("docker run -i --rm {ident}"),
            })
        }
        _ => None,
    }
}

fn auth(s: &ServerJson) -> Auth {
    let mut variables: Vec<AuthVariable> = Vec::new();
    let mut kinds: Vec<AuthKind> = Vec::new();
    let mut add = |input: &InputJson, header: bool, arg: bool| {
        let raw = input.name.as_deref().or(input.value_hint.as_deref());
        let Some(name) = some_clean(raw, MAX_VAR) else {
            return;
        };
        let secret = input.is_secret.unwrap_or(false);
        if arg && !secret {
            return; // arguments count only when they carry a secret
        }
        if secret {
            let bearer = header
                && input
                    .value
                    .as_deref()
                    .is_some_and(|v| v.trim_start().to_ascii_lowercase().starts_with("bearer"));
            let kind = if name.to_ascii_uppercase().contains("TOKEN") || bearer {
                AuthKind::Token
            } else {
                AuthKind::ApiKey
            };
            if !kinds.contains(&kind) {
                kinds.push(kind);
            }
        }
        if variables.iter().any(|v| v.name == name) {
            return;
        }
        variables.push(AuthVariable {
            name,
            secret,
            required: input.is_required.unwrap_or(false),
            meaning: some_clean(input.description.as_deref(), MAX_MEANING),
        });
    };
    for p in &s.packages {
        for e in &p.environment_variables {
            add(e, false, false);
        }
        for a in p.runtime_arguments.iter().chain(&p.package_arguments) {
            add(a, false, true);
        }
    }
    let mut oauth_remote = false;
    for r in &s.remotes {
        for h in &r.headers {
            add(h, true, false);
        }
        if !r.headers.iter().any(|h| h.is_secret == Some(true)) {
            oauth_remote = true;
        }
    }
    let mut notes = None;
    if oauth_remote {
        kinds.push(AuthKind::Oauth);
        notes = Some(
            "likely OAuth: a remote endpoint declares no secret header, so it either needs no \
             credentials or authorizes with OAuth (check with a scan)"
                .to_string(),
        );
    }
    if kinds.is_empty() {
        kinds.push(AuthKind::None);
    }
    Auth {
        kinds,
        variables,
        notes,
    }
}

// ----------------------------------------------------------------------------------------------
// Merging and writing

/// What the directory already holds: record id -> file, and every alias in use.
struct DirIndex {
    by_id: HashMap<String, PathBuf>,
    aliases: HashMap<String, String>,
}

fn index_dir(dir: &Path) -> Result<DirIndex> {
    let mut idx = DirIndex {
        by_id: HashMap::new(),
        aliases: HashMap::new(),
    };
    for path in record_files(dir)? {
        // A file that does not parse is left alone; it is reported if an import targets it.
        if let Ok(rec) = parse_record(&path) {
            for a in &rec.aliases {
                idx.aliases.insert(a.to_ascii_lowercase(), rec.id.clone());
            }
            idx.by_id.entry(rec.id).or_insert(path);
        }
    }
    Ok(idx)
}

/// Keeps what the registry does not know: the snapshot, overrides, license, the aliases the
/// record had, and a stronger identity someone established.
fn merge_kept(new: &mut Record, old: &Record) {
    new.snapshot = old.snapshot.clone();
    new.unscanned = old.unscanned.clone();
    new.overrides = old.overrides.clone();
    if new.license.is_none() {
        new.license = old.license.clone();
    }
    let mut aliases = old.aliases.clone();
    for a in new.aliases.drain(..) {
        if !aliases.contains(&a) {
            aliases.push(a);
        }
    }
    new.aliases = aliases;
    if old.identity.level < new.identity.level {
        let mut identity = old.identity.clone();
        for e in &new.identity.evidence {
            if !identity.evidence.contains(e) {
                identity.evidence.push(e.clone());
            }
        }
        new.identity = identity;
    }
}

/// Aliases must be unique across the catalog: a new alias that another record (in the
/// directory or in this import) also has, or that is another record's id, is left out.
/// Aliases a record already had are kept.
fn drop_shared_aliases(
    planned: &mut [(Record, PathBuf, Option<Record>)],
    existing: &HashMap<String, String>,
) {
    let mut owners: HashMap<String, HashSet<String>> = HashMap::new();
    for (a, id) in existing {
        owners
            .entry(a.clone())
            .or_default()
            .insert(id.to_ascii_lowercase());
    }
    let ids: HashSet<String> = planned
        .iter()
        .map(|(r, _, _)| r.id.to_ascii_lowercase())
        .collect();
    for (r, _, _) in planned.iter() {
        for a in &r.aliases {
            owners
                .entry(a.to_ascii_lowercase())
                .or_default()
                .insert(r.id.to_ascii_lowercase());
        }
    }
    for (r, _, old) in planned.iter_mut() {
        let had: HashSet<&String> = old.iter().flat_map(|o| o.aliases.iter()).collect();
        let me = r.id.to_ascii_lowercase();
        r.aliases.retain(|a| {
            if had.contains(a) {
                return true;
            }
            let key = a.to_ascii_lowercase();
            let shared = owners.get(&key).is_some_and(|o| o.iter().any(|x| *x != me));
            !shared && !ids.contains(&key)
        });
    }
}

/// Writes the record as YAML to a temporary file in the same directory, then renames it.
fn write_record(path: &Path, rec: &Record) -> Result<()> {
    let yaml = serde_saphyr::to_string(rec)
        .map_err(|e| Error::new(format!("{}: cannot write the record: {e}", path.display())))?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| {
        Error::new(format!(
            "{}: cannot create a file in {}: {e}",
            path.display(),
            dir.display()
        ))
    })?;
    tmp.write_all(yaml.as_bytes())
        .and_then(|_| tmp.flush())
        .map_err(|e| Error::new(format!("{}: cannot write: {e}", path.display())))?;
    tmp.persist(path)
        .map_err(|e| Error::new(format!("{}: cannot write: {}", path.display(), e.error)))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_of_the_registry_form_only() {
        assert!(check_id("io.github.owner/repo").is_ok());
        assert!(check_id("com.stripe/mcp_server-2.0").is_ok());
        for bad in [
            "../../etc/passwd",
            "io.github.x/..",
            "io.github.x/../y",
            "/etc/passwd",
            "noslash",
            "a/b/c",
            "a/\u{1b}[31m",
            ".hidden/x",
            "-rf/x",
            "a/",
        ] {
            assert!(check_id(bad).is_err(), "{bad:?} accepted");
        }
        assert!(check_id(&format!("a/{}", "x".repeat(MAX_ID))).is_err());
    }

    #[test]
    fn publishers_from_namespaces() {
        assert_eq!(publisher("io.github.alice/weather"), ("alice".into(), true));
        assert_eq!(publisher("com.stripe/mcp"), ("stripe.com".into(), false));
        assert_eq!(
            publisher("org.nonprofit.research/x"),
            ("research.nonprofit.org".into(), false)
        );
    }

    #[test]
    fn commands_only_from_plain_names() {
        assert_eq!(
            derive_command("npm", "@scope/pkg", Some("1.2.3")).as_deref(),
            Some("npx -y @scope/pkg@1.2.3")
        );
        assert_eq!(
            derive_command("pypi", "mcp-server-time", Some("0.6.2")).as_deref(),
            Some("uvx mcp-server-time==0.6.2")
        );
        assert_eq!(
            derive_command("oci", "ghcr.io/o/r:1.0", None).as_deref(),
            Some("docker run -i --rm ghcr.io/o/r:1.0")
        );
        assert_eq!(
            derive_command("oci", "localhost:5000/o/r", Some("2")).as_deref(),
            Some("docker run -i --rm localhost:5000/o/r:2")
        );
        assert_eq!(derive_command("npm", "pkg; rm -rf ~", None), None);
        assert_eq!(derive_command("npm", "--eval=x", None), None);
        assert_eq!(derive_command("npm", "pkg", Some("1 && x")), None);
        assert_eq!(derive_command("nuget", "Pkg", Some("1")), None);
    }

    #[test]
    fn cleaning_strips_hidden_and_caps() {
        assert_eq!(clean("a\u{1b}[31mb\u{202e}c\n  d", 100), "a[31mbc d");
        assert_eq!(clean("abcdef", 3), "abc…");
    }

    #[test]
    fn endpoints() {
        let e = |u: &str| endpoint(u).unwrap().to_string();
        assert_eq!(e("https://r.example"), "https://r.example/v0/servers");
        assert_eq!(e("https://r.example/"), "https://r.example/v0/servers");
        assert_eq!(
            e("https://r.example/v0.1/servers?x=1"),
            "https://r.example/v0.1/servers"
        );
        assert!(endpoint("file:///etc").is_err());
    }
}
