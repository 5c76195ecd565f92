//! Packages as targets: `scan --npm/--pypi` and `catalog add --npm/--pypi`, with real packages
//! installed without network: npm resolves from its own cache (`npm_config_offline`), which
//! scripts/install-test-servers.sh fills, and pip from the wheels that script keeps
//! (`--no-index --find-links`). A package found in the cache is reused without any installer.

mod common;

use assert_cmd::Command;
use mcprisk::catalog::record::Record;
use mcprisk::catalog::store::parse_record;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

const MEMORY: &str = "@modelcontextprotocol/server-memory@2026.8.31";

/// mcprisk with its own package cache, and installers that cannot reach a registry.
fn mcprisk(cache: &Path) -> Command {
    let mut c = Command::cargo_bin("mcprisk").unwrap();
    c.env_remove("MCPRISK_CATALOG")
        .env("MCPRISK_CACHE_DIR", cache)
        .env("npm_config_offline", "true")
        .env("npm_config_audit", "false")
        .env("PIP_NO_INDEX", "1")
        .env("PIP_FIND_LINKS", common::servers_dir().join("wheels"));
    c
}

fn npm_install_dir(cache: &Path) -> PathBuf {
    cache.join("packages/npm/@modelcontextprotocol+server-memory@2026.8.31")
}

/// The npm test servers are installed (so npm's cache holds the package).
fn require_npm() {
    common::node_bin("mcp-server-memory");
}

fn json(out: &std::process::Output) -> Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn scan_npm_installs_once_reuses_and_no_keep_removes() {
    require_npm();
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let doc = json(
        &mcprisk(&cache)
            .args(["scan", "--npm", MEMORY, "--format", "json", "-q"])
            .current_dir(tmp.path())
            .output()
            .unwrap(),
    );
    let tools = doc["servers"][0]["tools"].as_array().unwrap();
    assert!(tools.len() >= 5, "{doc}");
    assert!(tools.iter().any(|t| t["name"] == "create_entities"));
    assert!(tools.iter().all(|t| t["category"].is_string()));
    let dir = npm_install_dir(&cache);
    assert!(dir.join("node_modules/.bin/mcp-server-memory").exists());

    // Reused: no installer is run (one that always fails stands in for npm).
    let again = json(
        &mcprisk(&cache)
            .env("MCPRISK_NPM", "false")
            .args([
                "scan",
                "--npm",
                MEMORY,
                "--format",
                "json",
                "-q",
                "--no-keep",
            ])
            .current_dir(tmp.path())
            .output()
            .unwrap(),
    );
    assert_eq!(again["servers"][0]["tools"], doc["servers"][0]["tools"]);
    assert!(!dir.exists(), "--no-keep leaves {}", dir.display());
}

#[test]
fn flags_for_packages_are_checked() {
    let tmp = tempfile::tempdir().unwrap();
    for (args, says) in [
        (vec!["scan", "--npm", "x@^1.0"], "exact version"),
        (vec!["scan", "--npm", "../evil"], "not a package name"),
        (
            vec!["scan", "--tools", "x.json", "--arg=1"],
            "--arg applies to --npm",
        ),
        (
            vec!["scan", "--npm", "a@1.0.0", "--env", "NOEQUALS"],
            "KEY=VALUE",
        ),
    ] {
        mcprisk(tmp.path())
            .args(&args)
            .assert()
            .code(2)
            .stderr(predicates::str::contains(says));
    }
}

#[test]
fn catalog_add_npm_writes_facts_from_the_package_and_reproduces_the_fingerprint() {
    require_npm();
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let out = tmp.path().join("records");
    mcprisk(&cache)
        .args(["catalog", "add", "--npm", MEMORY, "--dir"])
        .arg(&out)
        .current_dir(tmp.path())
        .assert()
        .code(0);
    let path = out.join("npm--modelcontextprotocol--server-memory.yaml");
    let r: Record = parse_record(&path).unwrap();
    assert_eq!(r.id, "npm/@modelcontextprotocol/server-memory");
    assert_eq!(r.packages[0].version.as_deref(), Some("2026.8.31"));
    assert!(r
        .repository
        .as_deref()
        .is_some_and(|u| u.starts_with("https://github.com/modelcontextprotocol/")));
    // The scope @modelcontextprotocol is the repository owner's name: official, with evidence.
    assert_eq!(
        serde_json::to_value(r.identity.level).unwrap(),
        "official-vendor"
    );
    assert!(r.identity.evidence.iter().any(|e| e.contains("scope")));
    assert_eq!(
        r.command.as_deref(),
        Some("npx -y @modelcontextprotocol/server-memory@2026.8.31")
    );
    let snap = r.snapshot.as_ref().unwrap();
    assert_eq!(snap.source, format!("npm {MEMORY}"));

    // The shipped record of the same package@version has the same fingerprint.
    let shipped = json(
        &mcprisk(&cache)
            .args([
                "lookup",
                "npx -y @modelcontextprotocol/server-memory@2026.8.31",
                "--format",
                "json",
            ])
            .output()
            .unwrap(),
    );
    let shipped_fp = &shipped["servers"][0]["identity"]["snapshot"]["fingerprint"];
    assert_eq!(
        shipped_fp.as_str(),
        Some(snap.fingerprint.as_str()),
        "{shipped}"
    );
    mcprisk(&cache)
        .args(["catalog", "lint"])
        .arg(&out)
        .assert()
        .success();

    // A directory that already has a record of the package: that record is updated in place.
    let other = tmp.path().join("existing");
    std::fs::create_dir_all(&other).unwrap();
    let shown = mcprisk(&cache)
        .args([
            "catalog",
            "show",
            "io.github.modelcontextprotocol/server-memory",
        ])
        .output()
        .unwrap();
    std::fs::write(other.join("server-memory.yaml"), &shown.stdout).unwrap();
    mcprisk(&cache)
        .env("MCPRISK_NPM", "false")
        .args(["catalog", "add", "--npm", MEMORY, "--dir"])
        .arg(&other)
        .current_dir(tmp.path())
        .assert()
        .code(0);
    let files: Vec<_> = std::fs::read_dir(&other).unwrap().collect();
    assert_eq!(files.len(), 1, "no second record");
    let updated = parse_record(&other.join("server-memory.yaml")).unwrap();
    assert_eq!(updated.id, "io.github.modelcontextprotocol/server-memory");
    assert_eq!(
        updated.snapshot.unwrap().fingerprint,
        snap.fingerprint,
        "same package@version, same tools"
    );
}

/// A package laid out in the cache as an install leaves it (so no installer runs).
fn fake_npm_package(cache: &Path, name: &str, version: &str, package_json: &str, script: &str) {
    let dir = cache.join(format!("packages/npm/{name}@{version}/node_modules"));
    std::fs::create_dir_all(dir.join(name)).unwrap();
    std::fs::create_dir_all(dir.join(".bin")).unwrap();
    std::fs::write(dir.join(name).join("package.json"), package_json).unwrap();
    if !script.is_empty() {
        let bin = dir.join(".bin").join(name);
        std::fs::write(&bin, script).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

#[test]
fn a_server_that_wants_credentials_gets_a_record_without_snapshot() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    fake_npm_package(
        &cache,
        "demo-needs-key",
        "1.0.0",
        r#"{"name": "demo-needs-key", "version": "1.0.0", "description": "Demo: reads a paid API",
            "repository": "github:someone/demo-needs-key", "license": "MIT", "author": "Some One",
            "bin": "cli.js"}"#,
        "#!/bin/sh\necho 'Error: DEMO_API_KEY is invalid: check your API key' >&2\nexit 1\n",
    );
    let out = tmp.path().join("records");
    mcprisk(&cache)
        .env("MCPRISK_NPM", "false")
        .args([
            "catalog",
            "add",
            "--npm",
            "demo-needs-key@1.0.0",
            "--env=DEMO_API_KEY=dummy-value-123",
            "--dir",
        ])
        .arg(&out)
        .assert()
        .code(1)
        .stderr(predicates::str::contains("needs-credentials"));
    let r = parse_record(&out.join("npm--demo-needs-key.yaml")).unwrap();
    assert!(r.snapshot.is_none());
    let u = r.unscanned.as_ref().unwrap();
    assert_eq!(u.outcome, "needs-credentials");
    assert!(u.reason.contains("DEMO_API_KEY is invalid"), "{}", u.reason);
    assert_eq!(
        u.scan,
        "mcprisk scan --npm demo-needs-key@1.0.0 --env=DEMO_API_KEY=\"$DEMO_API_KEY\""
    );
    assert!(
        !u.reason.contains(&cache.display().to_string()),
        "no local paths"
    );
    assert_eq!(serde_json::to_value(r.identity.level).unwrap(), "community");
    assert_eq!(r.auth.variables[0].name, "DEMO_API_KEY");
    assert!(r.auth.variables[0].secret);
    // The placeholder value is nowhere in the record.
    let text = std::fs::read_to_string(out.join("npm--demo-needs-key.yaml")).unwrap();
    assert!(!text.contains("dummy-value-123"));

    let page = mcprisk(&cache)
        .args(["lookup", "demo-needs-key", "--catalog"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(page.status.success());
    let page = String::from_utf8(page.stdout).unwrap();
    assert!(
        page.contains("No tool snapshot: needs-credentials"),
        "{page}"
    );
    assert!(
        page.contains("mcprisk scan --npm demo-needs-key@1.0.0"),
        "{page}"
    );
    mcprisk(&cache)
        .args(["catalog", "lint"])
        .arg(&out)
        .assert()
        .success();
}

#[test]
fn a_package_with_nothing_to_start_is_not_a_server() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    fake_npm_package(
        &cache,
        "demo-library",
        "2.0.0",
        r#"{"name": "demo-library", "version": "2.0.0", "main": "index.js"}"#,
        "",
    );
    let out = tmp.path().join("records");
    mcprisk(&cache)
        .env("MCPRISK_NPM", "false")
        .args(["catalog", "add", "--npm", "demo-library@2.0.0", "--dir"])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("not an MCP server"));
    assert!(!out.exists() || std::fs::read_dir(&out).unwrap().next().is_none());
}

#[test]
fn scan_pypi_installs_from_local_wheels_into_a_venv() {
    let wheels = common::require(common::servers_dir().join("wheels"));
    assert!(std::fs::read_dir(&wheels).unwrap().next().is_some());
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let doc = json(
        &mcprisk(&cache)
            .args([
                "scan",
                "--pypi",
                "mcp-server-time==2026.10.19",
                "--arg=--local-timezone",
                "--arg=UTC",
                "--format",
                "json",
                "-q",
            ])
            .output()
            .unwrap(),
    );
    let names: Vec<&str> = doc["servers"][0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(names.contains(&"get_current_time"), "{names:?}");
    let script = cache.join("packages/pypi/mcp-server-time==2026.10.19/bin/mcp-server-time");
    assert!(script.exists());
    // Its #! line names the venv where it is, not where it was built: a server that starts
    // another of its scripts by name finds it runnable.
    let text = std::fs::read_to_string(&script).unwrap();
    let venv = cache.join("packages/pypi/mcp-server-time==2026.10.19");
    assert!(
        text.lines()
            .next()
            .is_some_and(|l| l.contains(&venv.display().to_string())),
        "{text}"
    );
    assert!(!text.contains(".installing-"), "{text}");

    // Another interpreter is another install: the one above is not reused for it (here the
    // interpreter does not exist, so the new install fails and says which one it tried).
    let out = mcprisk(&cache)
        .args([
            "scan",
            "--pypi",
            "mcp-server-time==2026.10.19",
            "--python",
            "/nonexistent/python3.99",
            "-q",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/nonexistent/python3.99"), "{err}");

    // The record's facts come from the wheel's METADATA; a PyPI name proves no owner.
    let out = tmp.path().join("records");
    mcprisk(&cache)
        .args([
            "catalog",
            "add",
            "--pypi",
            "mcp-server-time==2026.10.19",
            "--arg=--local-timezone",
            "--arg=UTC",
            "--dir",
        ])
        .arg(&out)
        .assert()
        .code(0);
    let r = parse_record(&out.join("pypi--mcp-server-time.yaml")).unwrap();
    assert_eq!(r.id, "pypi/mcp-server-time");
    assert_eq!(serde_json::to_value(r.identity.level).unwrap(), "community");
    assert!(r.identity.evidence.iter().any(|e| e.contains("PyPI name")));
    assert_eq!(
        r.command.as_deref(),
        Some("uvx mcp-server-time==2026.10.19 --local-timezone UTC")
    );
    assert!(!r.summary.is_empty());
}

#[test]
fn pypi_with_installs_a_requirement_alongside_as_its_own_install_and_records_it() {
    let wheels = common::require(common::servers_dir().join("wheels"));
    assert!(std::fs::read_dir(&wheels).unwrap().next().is_some());
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let out = tmp.path().join("records");
    let add = |with: &str, find_links: &Path| {
        mcprisk(&cache)
            .env("PIP_FIND_LINKS", find_links)
            .args([
                "catalog",
                "add",
                "--pypi",
                "mcp-server-time==2026.10.19",
                "--with",
                with,
                "--arg=--local-timezone",
                "--arg=UTC",
                "--force",
                "--dir",
            ])
            .arg(&out)
            .assert()
            .code(0);
    };
    add("tzdata>=2026", &wheels);
    let pypi = cache.join("packages/pypi");
    let dirs: Vec<String> = std::fs::read_dir(&pypi)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .collect();
    // Its own install, never the plain one: the requirement is part of the identity.
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    assert!(
        dirs[0].starts_with("mcp-server-time==2026.10.19+with-"),
        "{dirs:?}"
    );
    let venv = pypi.join(&dirs[0]);
    let site = std::fs::read_dir(venv.join("lib"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path()
        .join("site-packages");
    assert!(
        std::fs::read_dir(&site)
            .unwrap()
            .flatten()
            .any(|e| e.file_name().to_string_lossy().starts_with("tzdata-")),
        "tzdata is installed"
    );

    // The record says exactly what was run: the start command and the snapshot's source.
    let r = parse_record(&out.join("pypi--mcp-server-time.yaml")).unwrap();
    assert_eq!(
        r.command.as_deref(),
        Some("uvx --with 'tzdata>=2026' mcp-server-time==2026.10.19 --local-timezone UTC")
    );
    let snap = r.snapshot.as_ref().unwrap();
    assert_eq!(
        snap.source,
        "pypi mcp-server-time@2026.10.19 --with tzdata>=2026"
    );
    let fp = snap.fingerprint.clone();
    mcprisk(&cache)
        .args(["catalog", "lint"])
        .arg(&out)
        .assert()
        .success();

    // The same requirement, spelled with spaces: the same install, reused with nothing to
    // install from, and the same snapshot.
    let empty = tmp.path().join("no-wheels");
    std::fs::create_dir_all(&empty).unwrap();
    add("tzdata >= 2026", &empty);
    let again = parse_record(&out.join("pypi--mcp-server-time.yaml")).unwrap();
    assert_eq!(again.snapshot.unwrap().fingerprint, fp);

    // Anything but a requirement, or --with for npm, is refused before anything is installed.
    for (args, says) in [
        (
            vec!["scan", "--pypi", "x==1.0", "--with=-r/etc/passwd"],
            "not a requirement",
        ),
        (
            vec![
                "scan",
                "--pypi",
                "x==1.0",
                "--with",
                "x @ file:///tmp/x.whl",
            ],
            "not a requirement",
        ),
        (
            vec!["scan", "--npm", "x@1.0.0", "--with", "y"],
            "--with applies to --pypi",
        ),
        (
            vec!["scan", "--tools", "x.json", "--with", "y"],
            "--with applies",
        ),
    ] {
        mcprisk(&cache)
            .args(&args)
            .assert()
            .code(2)
            .stderr(predicates::str::contains(says));
    }
}

#[test]
fn a_record_that_failed_then_lists_its_tools_drops_the_auth_it_inferred_from_the_failure() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let out = tmp.path().join("records");
    let json = r#"{"name": "demo-flaky", "version": "1.0.0", "description": "Demo: starts on the second try",
        "repository": "github:someone/demo-flaky", "bin": "cli.js"}"#;
    fake_npm_package(
        &cache,
        "demo-flaky",
        "1.0.0",
        json,
        "#!/bin/sh\necho 'Error: cannot open the display' >&2\nexit 1\n",
    );
    let add = || {
        mcprisk(&cache)
            .env("MCPRISK_NPM", "false")
            .args(["catalog", "add", "--npm", "demo-flaky@1.0.0", "--dir"])
            .arg(&out)
            .assert()
    };
    add().code(1);
    let path = out.join("npm--demo-flaky.yaml");
    let first = parse_record(&path).unwrap();
    assert_eq!(first.unscanned.as_ref().unwrap().outcome, "failed-to-start");
    assert_eq!(
        serde_json::to_value(&first.auth.kinds).unwrap(),
        json!(["api-key"])
    );

    // Fixed (here: the same package, now a server that answers): a snapshot, and the posture
    // of a server that listed its tools with no credential given.
    let tools = tmp.path().join("tools.json");
    std::fs::write(
        &tools,
        r#"[{"name": "echo", "description": "Echoes its text", "inputSchema": {"type": "object"}}]"#,
    )
    .unwrap();
    fake_npm_package(
        &cache,
        "demo-flaky",
        "1.0.0",
        json,
        &format!(
            "#!/bin/sh\nexec python3 {} {}\n",
            common::servers_dir().join("mutable.py").display(),
            tools.display()
        ),
    );
    add().code(0);
    let second = parse_record(&path).unwrap();
    assert!(second.snapshot.is_some() && second.unscanned.is_none());
    assert_eq!(
        serde_json::to_value(&second.auth.kinds).unwrap(),
        json!(["none"])
    );
    assert!(second
        .auth
        .notes
        .as_deref()
        .is_some_and(|n| n.contains("no credential given")));
}
