//! The catalog end to end: lookups (exact, alias, fuzzy, ambiguous, missing), the reference
//! pages' verdicts, records as scan and policy targets, lint, add and user directories.

mod common;

use assert_cmd::Command;
use common::verdicts;
use serde_json::{json, Value};

fn mcprisk() -> Command {
    let mut c = Command::cargo_bin("mcprisk").unwrap();
    c.env_remove("MCPRISK_CATALOG");
    // Directory caches go to a per-run place, not the user's.
    c.env(
        "MCPRISK_CACHE_DIR",
        std::env::temp_dir().join(format!("mcprisk-test-cache-{}", std::process::id())),
    );
    c
}

fn json_of(args: &[&str]) -> Value {
    let out = mcprisk().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn proxmox_tool_records_match_the_reference_pages() {
    let api = json_of(&[
        "lookup",
        "proxmox-mcp",
        "pve_api_request",
        "--format",
        "json",
    ]);
    assert_eq!(api["tool"]["category"], "Execute");
    assert_eq!(api["tool"]["severity"], "High");
    // The reference page's rate limit, exactly, and (issue 12, item 14) argument validation
    // beside it: the free-text `method` lets only GET and HEAD through without approval.
    assert_eq!(
        api["policy"],
        json!({"version": "1", "default": "deny", "tools": {"pve_api_request": {
            "deny_if": [{"conditions": [{"path": "args.method", "op": "not_in", "value": ["GET", "HEAD"]}],
                         "on_deny": "Requires human approval."}],
            "limits": [
            {"counter": "pve_api_request_rate", "window": "minute", "max": 10, "scope": "grant"}]}}})
    );
    let status = json_of(&[
        "lookup",
        "proxmox-mcp",
        "pve_get_cluster_status",
        "--format",
        "json",
    ]);
    assert_eq!(status["tool"]["category"], "Read");
    assert_eq!(status["tool"]["severity"], "Low");
    assert_eq!(status["tool"]["recommended"]["action"], "allow");
    assert_eq!(
        status["policy"]["tools"]["pve_get_cluster_status"],
        json!({})
    );
}

#[test]
fn lookup_finds_by_id_alias_package_and_typo() {
    for name in [
        "io.github.plgonzalezrx8/proxmox-mcp",
        "proxmox",
        "PVE",
        "proxmox_mcp",
        "proxmx",
        "proxmox-mpc",
    ] {
        let doc = json_of(&["lookup", name, "--format", "json"]);
        assert_eq!(
            doc["servers"][0]["name"], "io.github.plgonzalezrx8/proxmox-mcp",
            "{name}"
        );
    }
}

#[test]
fn lookup_of_an_unknown_server_suggests_how_to_scan_it() {
    mcprisk()
        .args(["lookup", "zzqqxx-nothing"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("mcprisk scan"));
    mcprisk()
        .args(["lookup", "proxmox-mcp", "no_such_tool"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("pve_api_request"));
}

#[test]
fn server_view_shows_identity_auth_grade_and_policy() {
    let out = mcprisk()
        .args(["lookup", "proxmox", "--color", "never"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    for want in [
        "Identity: plgonzalezrx8 (community)",
        "Auth: token, user-password",
        "PVE_API_TOKEN_SECRET",
        "grade",
        "MR-G011",
        "policy.json",
        "pve_api_request_rate",
    ] {
        assert!(text.contains(want), "missing {want:?} in:\n{text}");
    }
    let doc = json_of(&["lookup", "proxmox", "--format", "json"]);
    let s = &doc["servers"][0];
    assert_eq!(s["identity"]["verification"], "community");
    assert_eq!(s["auth"]["kinds"], json!(["token", "user-password"]));
    assert!(s["identity"]["snapshot"]["fingerprint"]
        .as_str()
        .unwrap()
        .starts_with("sha256:"));
}

#[test]
fn records_are_scan_and_policy_targets() {
    let p = json_of(&["policy", "--server", "proxmox-mcp"]);
    assert_eq!(p["tools"]["pve_api_request"]["limits"][0]["max"], 10);
    assert_eq!(p["tools"]["pve_get_cluster_status"], json!({}));
    mcprisk()
        .args([
            "scan",
            "--server",
            "github-proxmox",
            "--server",
            "proxmox",
            "--fail-on",
            "high",
            "--format",
            "json",
        ])
        .assert()
        .code(predicates::ord::ne(0));
    mcprisk()
        .args([
            "scan",
            "--server",
            "proxmox",
            "--fail-on",
            "critical",
            "--format",
            "json",
        ])
        .assert()
        .code(1);
}

#[test]
fn md_and_html_tool_pages_render() {
    let out = mcprisk()
        .args(["lookup", "proxmox-mcp", "pve_api_request", "--format", "md"])
        .output()
        .unwrap();
    let md = String::from_utf8(out.stdout).unwrap();
    assert!(
        md.contains("## Recommended rule: validate")
            && md.contains("pve_api_request_rate")
            && md.contains("args.method"),
        "{md}"
    );
    let out = mcprisk()
        .args([
            "lookup",
            "proxmox-mcp",
            "pve_api_request",
            "--format",
            "html",
        ])
        .output()
        .unwrap();
    let html = String::from_utf8(out.stdout).unwrap();
    assert!(html.contains("Content-Security-Policy") && !html.contains("<script"));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("p.html");
    mcprisk()
        .args(["lookup", "proxmox", "--format", "html", "-o"])
        .arg(&file)
        .assert()
        .success();
    assert!(std::fs::read_to_string(&file)
        .unwrap()
        .contains("pve_delete_vm"));
}

fn user_record(dir: &std::path::Path, id: &str, extra: &str) -> std::path::PathBuf {
    let path = dir.join("r.yaml");
    std::fs::write(
        &path,
        format!(
            "id: {id}\nname: Test\naliases: [testsrv]\nsummary: A test server.\npublisher: me\npackages: [{{registry: npm, identifier: test-srv, version: 1.0.0}}]\ntransports: [stdio]\nidentity: {{level: unverified, evidence: [made for a test]}}\nauth: {{kinds: [none]}}\n{extra}"
        ),
    )
    .unwrap();
    path
}

#[test]
fn add_writes_a_record_with_a_fingerprinted_snapshot_and_lint_accepts_it() {
    let dir = tempfile::tempdir().unwrap();
    let rec = user_record(dir.path(), "io.github.me/test-srv", "");
    let out = dir.path().join("servers");
    mcprisk()
        .args(["catalog", "add", "--record"])
        .arg(&rec)
        .args([
            "--tools",
            "tests/data/labels/tools/server-memory.json",
            "--dir",
        ])
        .arg(&out)
        .assert()
        .success();
    let file = out.join("io.github.me--test-srv.yaml");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("fingerprint: sha256:") && text.contains("delete_entities"));
    mcprisk()
        .args(["catalog", "lint"])
        .arg(&out)
        .assert()
        .success();
    // Never overwrites without --force.
    mcprisk()
        .args(["catalog", "add", "--record"])
        .arg(&rec)
        .args([
            "--tools",
            "tests/data/labels/tools/server-memory.json",
            "--dir",
        ])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--force"));
    // The user's record is found by alias, and its tools are assessed.
    let doc = json_of(&[
        "lookup",
        "testsrv",
        "--format",
        "json",
        "--catalog",
        out.to_str().unwrap(),
    ]);
    assert_eq!(doc["servers"][0]["tools"].as_array().unwrap().len(), 9);
    // A tampered snapshot fails lint.
    std::fs::write(&file, text.replace("delete_entities", "delete_everything")).unwrap();
    mcprisk()
        .args(["catalog", "lint"])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("fingerprint"));
}

#[test]
fn lint_rejects_unknown_keys_with_file_and_line_and_duplicate_ids() {
    let dir = tempfile::tempdir().unwrap();
    user_record(dir.path(), "io.github.me/a", "colour: blue\n");
    let out = mcprisk()
        .args(["catalog", "lint"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("r.yaml") && err.contains("colour") && err.contains("line"),
        "{err}"
    );
    let dir2 = tempfile::tempdir().unwrap();
    user_record(dir2.path(), "io.github.plgonzalezrx8/proxmox-mcp", "");
    std::fs::copy(dir2.path().join("r.yaml"), dir2.path().join("s.yaml")).unwrap();
    mcprisk()
        .args(["catalog", "lint"])
        .arg(dir2.path())
        .assert()
        .code(2)
        .stderr(predicates::str::contains("also used by"));
}

#[test]
fn a_user_record_overrides_the_shipped_one() {
    let dir = tempfile::tempdir().unwrap();
    user_record(dir.path(), "io.github.plgonzalezrx8/proxmox-mcp", "");
    let out = mcprisk()
        .env("MCPRISK_CATALOG", dir.path())
        .args([
            "lookup",
            "io.github.plgonzalezrx8/proxmox-mcp",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    // The user's version has no snapshot: the lookup says so instead of using the shipped one.
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["servers"][0]["identity"]["publisher"], "me");
}

#[test]
fn the_shipped_catalog_lints_clean_and_lists() {
    mcprisk().args(["catalog", "lint"]).assert().success();
    let list =
        String::from_utf8(mcprisk().args(["catalog", "list"]).output().unwrap().stdout).unwrap();
    assert!(list.contains("io.github.plgonzalezrx8/proxmox-mcp"));
    let fin = String::from_utf8(
        mcprisk()
            .args(["catalog", "list", "--category", "Destructive"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert!(
        fin.contains("proxmox-mcp") && fin.contains("Destructive"),
        "{fin}"
    );
    let found = String::from_utf8(
        mcprisk()
            .args(["catalog", "search", "pve_api"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert!(found.contains("proxmox"));
    let shown = String::from_utf8(
        mcprisk()
            .args(["catalog", "show", "proxmox"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert!(shown.contains("fingerprint: sha256:"));
}

#[test]
fn a_catalog_directory_is_indexed_once_and_its_changes_are_seen() {
    let dir = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let cat = dir.path().join("cat");
    std::fs::create_dir(&cat).unwrap();
    let rec = user_record(&cat, "io.github.me/cached-srv", "");
    // Older than the window in which a same-size edit could go unseen.
    let aged = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    let age = |path: &std::path::Path| {
        let f = std::fs::File::options().write(true).open(path).unwrap();
        f.set_modified(aged).unwrap();
    };
    age(&rec);
    let lookup = |name: &str| {
        mcprisk()
            .env("MCPRISK_CACHE_DIR", cache.path())
            .args(["lookup", name, "--format", "json", "--catalog"])
            .arg(&cat)
            .output()
            .unwrap()
    };
    let first = lookup("testsrv");
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let caches: Vec<_> = std::fs::read_dir(cache.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(caches.len(), 1, "{caches:?}");
    let cache_file = &caches[0];
    let text = std::fs::read_to_string(cache_file).unwrap();
    assert!(text.contains("io.github.me/cached-srv"), "{text}");

    // The next run takes the index from the cache: an alias that exists only there is found.
    std::fs::write(cache_file, text.replace("\"testsrv\"", "\"fromcache\"")).unwrap();
    assert!(lookup("fromcache").status.success());

    // A changed record is parsed again, whatever the cache says.
    std::fs::write(
        &rec,
        std::fs::read_to_string(&rec)
            .unwrap()
            .replace("publisher: me", "publisher: someone-else"),
    )
    .unwrap();
    age(&rec);
    assert_eq!(lookup("fromcache").status.code(), Some(2));
    let out = lookup("testsrv");
    assert!(out.status.success());
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        doc["servers"][0]["identity"]["publisher"], "someone-else",
        "{doc}"
    );

    // A broken cache is ignored and rewritten; a broken record is still an error.
    std::fs::write(cache_file, "{not json").unwrap();
    assert!(lookup("testsrv").status.success());
    assert!(std::fs::read_to_string(cache_file)
        .unwrap()
        .starts_with('{'));
    assert!(serde_json::from_str::<Value>(&std::fs::read_to_string(cache_file).unwrap()).is_ok());
    std::fs::write(&rec, "id: [unclosed").unwrap();
    let out = lookup("testsrv");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("r.yaml"));
}

#[test]
fn lookup_takes_command_lines_repository_urls_and_vendors() {
    for (query, id) in [
        (
            "npx -y @modelcontextprotocol/server-memory@2026.8.31",
            "io.github.modelcontextprotocol/server-memory",
        ),
        (
            "uvx mcp-server-git",
            "io.github.modelcontextprotocol/server-git",
        ),
        (
            "uvx --from mcp-server-git==2026.10.19 mcp-server-git --repository .",
            "io.github.modelcontextprotocol/server-git",
        ),
        (
            "git+https://github.com/PLGonzalezrx8/proxmox-mcp.git",
            "io.github.plgonzalezrx8/proxmox-mcp",
        ),
    ] {
        let doc = json_of(&["lookup", query, "--format", "json"]);
        assert_eq!(doc["servers"][0]["name"], id, "{query}");
    }
    // A vendor: every server it publishes, by repository owner or npm scope.
    let out = mcprisk()
        .args(["lookup", "modelcontextprotocol"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let page = String::from_utf8(out.stdout).unwrap();
    for id in [
        "io.github.modelcontextprotocol/server-git",
        "io.github.modelcontextprotocol/server-memory",
    ] {
        assert!(page.contains(id), "{page}");
    }
    let doc = json_of(&["lookup", "modelcontextprotocol", "--format", "json"]);
    assert!(doc["matches"].as_array().unwrap().len() >= 2);
    // A monorepo holds several servers: they are named, not guessed between.
    mcprisk()
        .args(["lookup", "https://github.com/modelcontextprotocol/servers"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("several"));
}

#[test]
fn search_ranks_names_before_tools_and_says_when_nothing_matches() {
    let out = mcprisk()
        .args(["catalog", "search", "git", "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let rows: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    let ids: Vec<&str> = rows.iter().filter_map(|r| r["id"].as_str()).collect();
    assert_eq!(
        ids[0], "io.github.modelcontextprotocol/server-git",
        "{ids:?}"
    );
    // The io.github namespace is not a match: fewer io.github hits than io.github ids (records
    // of other namespaces that do say "git" may be hits, so only io.github hits are counted).
    let all = json_of(&["catalog", "list", "--format", "json"]);
    let namespaced = all
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| {
            r["id"]
                .as_str()
                .is_some_and(|i| i.starts_with("io.github."))
        })
        .count();
    let namespaced_hits = ids.iter().filter(|i| i.starts_with("io.github.")).count();
    assert!(
        namespaced_hits < namespaced,
        "{namespaced_hits} of {namespaced}"
    );
    assert!(!ids.contains(&"io.github.mapbox/mcp-server"));

    let out = mcprisk()
        .args(["catalog", "search", "payments", "--format", "json"])
        .output()
        .unwrap();
    let rows: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert!(rows.iter().any(|r| r["id"] == "com.stripe/mcp"));

    mcprisk()
        .args(["catalog", "search", "zzqqxx"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("no record matches"));
}

#[test]
fn a_record_scanned_by_name_saves_its_tools_as_the_record_holds_them() {
    // The record's tools move into the assessment (held once); --save-tools still writes
    // them all, as sent, and scanning the saved file gives the same verdicts.
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("tools.json");
    let by_name = json_of(&[
        "scan",
        "--server",
        "proxmox",
        "--save-tools",
        saved.to_str().unwrap(),
        "--format",
        "json",
        "-q",
    ]);
    let doc: Value = serde_json::from_slice(&std::fs::read(&saved).unwrap()).unwrap();
    let tools = doc["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 28);
    let from_file = json_of(&[
        "scan",
        "--tools",
        saved.to_str().unwrap(),
        "--format",
        "json",
        "-q",
    ]);
    assert_eq!(verdicts(&by_name), verdicts(&from_file));
    assert_eq!(verdicts(&by_name).len(), 28);
}
