//! A record's facts from an installed package's own files (package.json; a wheel's METADATA),
//! with no other look-ups, for `catalog add --npm/--pypi`.
//!
//! Identity is `official-vendor` only with evidence a registry enforces: an npm scope
//! (`@stripe/...`, which only its owner can publish under) named like the organisation that
//! owns the repository the package names. A PyPI name carries no owner, so a PyPI package is
//! `community` (with a repository) or `unverified` (without), never more without a registry.

use super::record::{
    Auth, AuthKind, AuthVariable, Identity, IdentityLevel, Package, Record, Unscanned,
};
use super::registry::{clean, some_clean};
use crate::output::sanitize::cut_middle;
use crate::targets::package::{pypi_normalize, repo_owner, Installed, Launch, Registry};

/// How long a reason may be in a record.
pub const MAX_REASON: usize = 400;

/// The record id of a package: `npm/<name>` or `pypi/<normalized name>`.
pub fn package_id(registry: Registry, name: &str) -> String {
    match registry {
        Registry::Npm => format!("npm/{name}"),
        Registry::Pypi => format!("pypi/{}", pypi_normalize(name)),
    }
}

/// The file name of a package record: `npm/@scope/name` -> `npm--scope--name.yaml`.
pub fn package_file_name(id: &str) -> String {
    let safe: String = id
        .replace('@', "")
        .replace('/', "--")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '-'
            }
        })
        .collect();
    format!("{}.yaml", safe.trim_matches(['.', '-']))
}

/// Whether a record's package entry is this package (PyPI names compare normalized).
pub fn same_package(p: &Package, registry: Registry, name: &str) -> bool {
    match registry {
        Registry::Npm => p.registry == "npm" && p.identifier == name,
        Registry::Pypi => {
            p.registry == "pypi" && pypi_normalize(&p.identifier) == pypi_normalize(name)
        }
    }
}

fn norm(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .flat_map(|c| c.to_lowercase())
        .collect()
}

/// Who publishes the package and how far that can be vouched for, from its own files.
pub fn identity(i: &Installed) -> (String, Identity) {
    let m = &i.meta;
    let reg = i.spec.registry.as_str();
    let owner = m.repository.as_deref().and_then(repo_owner);
    let scope = (i.spec.registry == Registry::Npm)
        .then(|| i.spec.name.strip_prefix('@'))
        .flatten()
        .and_then(|s| s.split('/').next());
    let mut evidence = Vec::new();
    match &m.repository {
        Some(r) => evidence.push(format!(
            "{reg} package {}: its {} names the repository {r}",
            i.pinned(),
            if reg == "npm" {
                "package.json"
            } else {
                "METADATA"
            }
        )),
        None => evidence.push(format!(
            "{reg} package {}: its {} names no repository",
            i.pinned(),
            if reg == "npm" {
                "package.json"
            } else {
                "METADATA"
            }
        )),
    }
    if let (Some(scope), Some(owner)) = (scope, owner.as_deref()) {
        if norm(scope) == norm(owner) {
            evidence.push(format!(
                "the npm scope @{scope}, which only its owner can publish under, is named like \
                 the repository's owner {owner}"
            ));
            let publisher = m
                .author
                .as_deref()
                .map(|a| clean(a, 80))
                .filter(|a| norm(a).contains(&norm(scope)))
                .unwrap_or_else(|| owner.to_string());
            return (
                publisher,
                Identity {
                    level: IdentityLevel::OfficialVendor,
                    evidence,
                },
            );
        }
    }
    if i.spec.registry == Registry::Pypi {
        evidence.push(
            "a PyPI name says nothing about its owner, so the publisher is not verified".into(),
        );
    } else if scope.is_some() {
        evidence.push("the npm scope is not named like the repository's owner".into());
    }
    let publisher = m
        .author
        .as_deref()
        .map(|a| clean(a, 80))
        .filter(|a| !a.is_empty())
        .or_else(|| owner.clone())
        .or_else(|| scope.map(|s| format!("@{s}")))
        .unwrap_or_else(|| "unknown".into());
    let level = if m.repository.is_some() {
        IdentityLevel::Community
    } else {
        IdentityLevel::Unverified
    };
    (publisher, Identity { level, evidence })
}

/// Whether an environment variable's name says it holds a secret.
pub fn secret_name(name: &str) -> bool {
    // The one judgement every part of mcprisk uses: `MEMORY_FILE_PATH` is a place, not a
    // personal access token (issue 12, item 16).
    crate::targets::clients::secret::credential_name(name)
}

/// The auth posture a package showed: the variables it was given (placeholders), the kinds
/// their names suggest, and what a refusal said.
pub fn auth(launch: &Launch, refusal: Option<&str>) -> Auth {
    let mut kinds: Vec<AuthKind> = Vec::new();
    let mut variables = Vec::new();
    fn push(kinds: &mut Vec<AuthKind>, k: AuthKind) {
        if !kinds.contains(&k) {
            kinds.push(k)
        }
    }
    for (name, _) in &launch.env {
        let secret = secret_name(name);
        if secret {
            let up = name.to_ascii_uppercase();
            if up.contains("PASSWORD") || up.contains("PASSWD") {
                push(&mut kinds, AuthKind::UserPassword)
            } else if up.contains("TOKEN") || up.contains("PAT") {
                push(&mut kinds, AuthKind::Token)
            } else {
                push(&mut kinds, AuthKind::ApiKey)
            }
        }
        variables.push(AuthVariable {
            name: clean(name, 80),
            secret,
            required: false,
            meaning: None,
        });
    }
    let said = refusal.unwrap_or("").to_ascii_lowercase();
    if [
        "oauth",
        "log in",
        "login",
        "authorize this app",
        "auth login",
    ]
    .iter()
    .any(|w| said.contains(w))
    {
        push(&mut kinds, AuthKind::Oauth);
    }
    let notes = if variables.is_empty() && refusal.is_none() {
        Some(
            "it listed its tools with no credential given; whether its calls need one is not \
             known from the package"
                .to_string(),
        )
    } else if !variables.is_empty() {
        Some(
            "the variables are the ones it was given placeholder values for when it was \
             scanned; the kinds follow their names"
                .to_string(),
        )
    } else {
        None
    };
    if kinds.is_empty() {
        if refusal.is_some() {
            push(&mut kinds, AuthKind::ApiKey);
        } else {
            push(&mut kinds, AuthKind::None);
        }
    }
    Auth {
        kinds,
        variables,
        notes,
    }
}

/// A new record's facts from the installed package.
pub fn new_record(
    i: &Installed,
    command: Option<String>,
    launch: &Launch,
    refusal: Option<&str>,
) -> Record {
    let m = &i.meta;
    let (publisher, identity) = identity(i);
    let reg = i.spec.registry.as_str();
    let summary = some_clean(m.summary.as_deref(), 300)
        .unwrap_or_else(|| format!("The {reg} package {}.", i.spec.name));
    Record {
        id: package_id(i.spec.registry, &i.spec.name),
        name: clean(&i.spec.name, 120),
        aliases: Vec::new(),
        summary,
        repository: m.repository.clone(),
        publisher,
        license: some_clean(m.license.as_deref(), 60),
        packages: vec![Package {
            registry: reg.into(),
            identifier: i.spec.name.clone(),
            version: Some(m.version.clone()),
        }],
        command,
        remotes: Vec::new(),
        transports: vec!["stdio".into()],
        identity,
        auth: auth(launch, refusal),
        snapshot: None,
        unscanned: None,
        overrides: Vec::new(),
    }
}

/// Sets the record's entry for this package to the installed version (adding it if missing).
pub fn pin_package(r: &mut Record, i: &Installed) {
    let version = Some(i.meta.version.clone());
    match r
        .packages
        .iter_mut()
        .find(|p| same_package(p, i.spec.registry, &i.spec.name))
    {
        Some(p) => p.version = version,
        None => r.packages.insert(
            0,
            Package {
                registry: i.spec.registry.as_str().into(),
                identifier: i.spec.name.clone(),
                version,
            },
        ),
    }
}

/// `mcprisk scan --npm NAME@VERSION ...`: the exact scan, with each variable taken from the
/// user's environment (`--env=KEY=$KEY`).
pub fn scan_command(i: &Installed, launch: &Launch) -> String {
    let mut words = vec![
        "mcprisk".to_string(),
        "scan".into(),
        format!("--{}", i.spec.registry.as_str()),
        i.pinned(),
    ];
    if let Some(b) = &launch.bin {
        words.push(format!("--bin={b}"));
    }
    if let Some(p) = &launch.python {
        words.push(format!("--python={p}"));
    }
    for w in &i.with {
        words.push(format!("--with={w}"));
    }
    for a in &launch.args {
        words.push(format!("--arg={a}"));
    }
    let mut line = crate::targets::package::shell_join(&words);
    for (k, _) in &launch.env {
        line.push_str(&format!(" --env={k}=\"${k}\""));
    }
    line
}

/// Whether a server's refusal is about credentials or an account (rather than anything else
/// that keeps it from listing its tools).
pub fn needs_credentials(reason: &str) -> bool {
    let r = reason
        .to_ascii_lowercase()
        .replace("unexpected token", "")
        .replace("invalid or unexpected token", "");
    [
        "api key",
        "api_key",
        "apikey",
        "access key",
        "token",
        "credential",
        "unauthori",
        "authenticat",
        "not authorized",
        "oauth",
        "log in",
        "login",
        "password",
        "forbidden",
        "status 401",
        "status 403",
        " 401 ",
        " 403 ",
        "keys file",
        "kubeconfig",
    ]
    .iter()
    .any(|w| r.contains(w))
}

/// A failure message fit for a record: no ANSI colours, no local paths, one line, capped.
pub fn clean_reason(msg: &str, i: &Installed) -> String {
    let mut s = strip_ansi(msg);
    // "stdio server `<the command>`: ..." says nothing the record does not.
    if let Some(rest) = s.strip_prefix("stdio server `") {
        if let Some(i) = rest.find("`: ") {
            s = rest[i + 3..].to_string();
        }
    }
    let dir = i.dir.display().to_string();
    s = s.replace(
        &dir,
        &format!("<{} {}>", i.spec.registry.as_str(), i.pinned()),
    );
    if let Some(base) = crate::targets::package::cache_base() {
        s = s.replace(&base.display().to_string(), "<cache>");
    }
    if let Some(home) = std::env::var_os("HOME").filter(|h| h.len() > 1) {
        s = s.replace(&home.to_string_lossy().into_owned(), "~");
    }
    // Cut in the middle: a traceback's last line says why it failed.
    cut_middle(&clean(&s, usize::MAX), MAX_REASON)
}

fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.peek() == Some(&'[') {
                chars.next();
                for d in chars.by_ref() {
                    if d.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

/// Records a failed attempt: no snapshot, the outcome and the server's own words.
pub fn unscanned(reason: String, i: &Installed, launch: &Launch) -> Unscanned {
    let outcome = if needs_credentials(&reason) {
        "needs-credentials"
    } else {
        "failed-to-start"
    };
    Unscanned {
        outcome: outcome.into(),
        reason,
        tried: crate::assess::project::today(),
        scan: scan_command(i, launch),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_keep_scopes_apart() {
        assert_eq!(package_file_name("npm/@azure/mcp"), "npm--azure--mcp.yaml");
        assert_eq!(package_file_name("npm/tavily-mcp"), "npm--tavily-mcp.yaml");
        assert_eq!(
            package_file_name("pypi/mcp-server-git"),
            "pypi--mcp-server-git.yaml"
        );
        assert_eq!(
            package_id(Registry::Pypi, "awslabs.Foo_bar"),
            "pypi/awslabs-foo-bar"
        );
    }

    #[test]
    fn reasons_are_sorted_by_what_they_ask_for() {
        assert!(needs_credentials("Error: OAuth keys file not found"));
        assert!(needs_credentials(
            "Authentication failed - check your Slack tokens"
        ));
        assert!(!needs_credentials("Cannot find module 'keytar.node'"));
        assert_eq!(strip_ansi("\u{1b}[31mred\u{1b}[0m"), "red");
        assert!(secret_name("GITHUB_PERSONAL_ACCESS_TOKEN"));
        assert!(secret_name("OPENAI_API_KEY"));
        assert!(!secret_name("LOG_LEVEL"));
        assert!(!secret_name("GDRIVE_CREDENTIALS_PATH"));
        assert!(!secret_name("MEMORY_FILE_PATH"));
    }
}
