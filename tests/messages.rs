//! What mcprisk says when it tells a user something they need to act on (issue 12, items 16,
//! 17, 18 and 23): a server that could not be checked is never counted as clean, an exit 1 says
//! what crossed `--fail-on`, an empty search says so, a missing output directory is named as
//! the user wrote it, flag values and rule IDs are read in any case, a `*_PATH` variable is
//! not a secret, and a server started from `node_modules/.bin` is named after its command.

use assert_cmd::Command;
use serde_json::{json, Value};
use std::path::Path;
use std::time::Duration;

const PROXMOX: &str = "examples/proxmox-mcp.tools.json";

fn mcprisk() -> Command {
    let mut cmd = Command::cargo_bin("mcprisk").unwrap();
    cmd.env("NO_COLOR", "1")
        .env_remove("MCPRISK_CATALOG")
        .timeout(Duration::from_secs(60));
    cmd
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Writes `body` as JSON into `dir/name` and returns the path.
fn write(dir: &Path, name: &str, body: &Value) -> String {
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_string_pretty(body).unwrap()).unwrap();
    p.to_string_lossy().into_owned()
}

/// Item 18: "No drift and no policy gaps: 5 server(s) checked" was printed when one of the
/// five could not be scanned.
#[test]
fn check_never_counts_a_server_it_could_not_scan_as_checked() {
    let dir = tempfile::tempdir().unwrap();
    let lock = dir.path().join("m.lock");
    let lock = lock.to_str().unwrap();
    mcprisk()
        .args(["scan", "--tools", PROXMOX, "--lock", lock, "-q"])
        .assert()
        .success();
    let config = write(
        dir.path(),
        "mcp.json",
        &json!({"mcpServers": {"broken": {"command": "/nonexistent/mcp-server-broken"}}}),
    );
    let out = mcprisk()
        .args([
            "check", "--tools", PROXMOX, "--config", &config, "--yes", "--lock", lock,
        ])
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{stdout}{}", text(&out.stderr));
    assert!(
        !stdout.contains("No drift and no policy gaps: 2 server(s) checked"),
        "{stdout}"
    );
    assert!(
        stdout.contains("NOT CHECKED broken") && stdout.contains("1 of 2 server(s)"),
        "{stdout}"
    );
    // A server that could not be scanned did not change: it is neither added nor emptied.
    assert!(!stdout.contains("MR-D008"), "{stdout}");
}

/// Item 18: `--fail-on` exited 1 without saying what crossed it.
#[test]
fn fail_on_says_what_crossed_it() {
    for cmd in ["scan", "policy"] {
        let out = mcprisk()
            .args([cmd, "--tools", PROXMOX, "--fail-on", "critical", "-q"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        let err = text(&out.stderr);
        assert!(
            err.contains("--fail-on critical") && err.contains("pve_delete_vm"),
            "{cmd}: {err}"
        );
        assert!(err.contains("Critical"), "{cmd}: {err}");
    }
    // Nothing crossed: exit 0 and nothing said.
    let out = mcprisk()
        .args([
            "scan",
            "--tools",
            "tests/data/labels/tools/mcp-server-time.json",
            "--fail-on",
            "high",
            "-q",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(
        !text(&out.stderr).contains("fail-on"),
        "{}",
        text(&out.stderr)
    );
}

/// Item 18: `catalog search zzzz` printed nothing at all.
#[test]
fn an_empty_search_says_so() {
    let out = mcprisk()
        .args(["catalog", "search", "zzzzqqqq"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let err = text(&out.stderr);
    assert!(
        err.contains("no record matches") && err.contains("zzzzqqqq"),
        "{err}"
    );
}

/// Item 18: `-o /missing/dir/x` named the temporary file instead of the path asked for.
#[test]
fn a_missing_output_directory_is_named_as_given() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("missing/dir/report.md");
    let target = target.to_str().unwrap();
    let out = mcprisk()
        .args(["scan", "--tools", PROXMOX, "--format", "md", "-o", target])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains(target), "{err}");
    assert!(err.contains("does not exist"), "{err}");
    assert!(!err.contains("dir/.tmp"), "no temporary file named: {err}");
}

/// Item 23: `--format HTML` was rejected and `rules c304` found nothing.
#[test]
fn flag_values_and_rule_ids_are_read_in_any_case() {
    let out = mcprisk()
        .args(["scan", "--tools", PROXMOX, "--format", "HTML"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).starts_with("<!DOCTYPE html>"));
    for args in [
        &[
            "scan", "--tools", PROXMOX, "--format", "Json", "--color", "NEVER",
        ][..],
        &["policy", "--tools", PROXMOX, "--flavor", "Claude-Code"],
        &["policy", "--tools", PROXMOX, "--profile", "STRICT"],
        &["rules", "--format", "JSON"],
    ] {
        let out = mcprisk().args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
    }
    for id in ["c304", "C304", "mr-c304", "MR-C304"] {
        let out = mcprisk().args(["rules", id]).output().unwrap();
        assert!(out.status.success(), "{id}: {}", text(&out.stderr));
        assert!(text(&out.stdout).starts_with("MR-C304 "), "{id}");
    }
    mcprisk()
        .args(["rules", "x999"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("no rule"));
}

/// Item 16: `MEMORY_FILE_PATH` (`_PAT` inside `_PATH`) was reported as a literal secret.
#[test]
fn a_path_variable_is_not_a_secret() {
    let dir = tempfile::tempdir().unwrap();
    let config = write(
        dir.path(),
        "claude_desktop_config.json",
        &json!({"mcpServers": {"memory": {
            "command": "/nonexistent/mcp-server-memory",
            "env": {
                "MEMORY_FILE_PATH": "/home/someone/memory.jsonl",
                "GITHUB_PAT": "a1b2c3d4e5f6a7b8c9d0"
            }
        }}}),
    );
    let out = mcprisk()
        .args(["scan", "--config", &config, "--yes", "--format", "json"])
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).expect("a JSON document");
    let findings = doc["servers"][0]["findings"].as_array().unwrap();
    let secret = |name: &str| {
        findings
            .iter()
            .any(|f| f["rule"] == "MR-F201" && f["message"].as_str().unwrap().contains(name))
    };
    assert!(!secret("MEMORY_FILE_PATH"), "{findings:?}");
    assert!(
        secret("GITHUB_PAT"),
        "a real secret is still found: {findings:?}"
    );
}

/// Item 17: `scan -- node_modules/.bin/mcp-server-everything` named the server `.bin`, and
/// its Claude Code rules `mcp___bin__echo`.
#[test]
fn a_node_modules_bin_command_is_named_after_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("node_modules/.bin");
    std::fs::create_dir_all(&bin).unwrap();
    let cmd = bin.join("mcp-server-everything");
    let out = mcprisk()
        .args(["scan", "--timeout", "5", "--format", "json", "--"])
        .arg(&cmd)
        .arg("stdio")
        .output()
        .unwrap();
    // The command does not exist: the scan fails, under the server's name.
    let doc: Value = serde_json::from_slice(&out.stdout).expect("a JSON document");
    assert_eq!(doc["servers"][0]["name"], "mcp-server-everything");
}
