//! The command line against real servers: stdio (`--`, `--stdio`), streamable HTTP (`--url`),
//! client configs with consent, `--save-tools`, `--discover`, and failures that do not stop the
//! other servers. Every server is a pinned package installed by scripts/install-test-servers.sh.

mod common;

use assert_cmd::Command;
use common::{misbehave, node_bin, venv_bin, verdicts, ServerProcess};
use serde_json::{json, Value};
use std::path::Path;

fn mcprisk() -> Command {
    Command::cargo_bin("mcprisk").unwrap()
}

fn json_of(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}); stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn tool<'a>(server: &'a Value, name: &str) -> &'a Value {
    server["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no tool {name}"))
}

#[test]
fn scan_after_double_dash_starts_a_stdio_server() {
    let bin = node_bin("mcp-server-everything");
    let out = mcprisk()
        .args(["scan", "--format", "json", "--"])
        .arg(&bin)
        .arg("stdio")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc = json_of(&out);
    let s = &doc["servers"][0];
    assert_eq!(s["tools"].as_array().unwrap().len(), 13);
    assert_eq!(s["identity"]["transport"], "stdio");
    assert_eq!(
        s["identity"]["server_info"]["name"],
        "mcp-servers/everything"
    );
    assert_eq!(s["auth"]["method"], "none");
    assert_eq!(tool(s, "get-env")["severity"], "Medium");
}

#[test]
fn stdio_flag_runs_a_python_server() {
    let repo = tempfile::tempdir().unwrap();
    std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(repo.path())
        .status()
        .unwrap();
    let line = format!(
        "{} --repository {}",
        venv_bin("mcp-server-git").display(),
        repo.path().display()
    );
    let out = mcprisk()
        .args(["scan", "--format", "json", "--stdio", &line])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc = json_of(&out);
    let s = &doc["servers"][0];
    assert_eq!(s["name"], "mcp-server-git");
    // git_reset only unstages (the shared labels' revision for the hard cases): Write.
    assert_eq!(tool(s, "git_reset")["category"], "Write");
    assert_eq!(tool(s, "git_commit")["category"], "Write");
    assert_eq!(tool(s, "git_status")["category"], "Read");
}

#[test]
fn url_with_header_keeps_the_header_value_secret() {
    let srv = ServerProcess::node(&node_bin("mcp-server-everything"), &["streamableHttp"]);
    let secret = "s3cr3t-token-value-1234";
    let out = mcprisk()
        .args([
            "scan",
            "--format",
            "json",
            "--url",
            &srv.url("/mcp"),
            "--header",
        ])
        .arg(format!("Authorization: Bearer {secret}"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!all.contains(secret), "the header value leaked");
    let doc = json_of(&out);
    let s = &doc["servers"][0];
    assert_eq!(s["identity"]["transport"], "streamable-http");
    assert_eq!(s["auth"]["channel"], "plain-http-loopback");
    assert_eq!(s["auth"]["method"], "header");
    assert_eq!(s["tools"].as_array().unwrap().len(), 13);
}

/// A Claude Desktop config with five real servers, one literal token and one broken server.
fn write_config(dir: &Path) -> std::path::PathBuf {
    let root = dir.join("files");
    std::fs::create_dir_all(&root).unwrap();
    let cfg = json!({"mcpServers": {
        "filesystem": {"command": node_bin("mcp-server-filesystem"), "args": [root]},
        "memory": {"command": node_bin("mcp-server-memory")},
        "github": {"command": node_bin("mcp-server-github"),
                   "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_literalTokenInConfig1234"}},
        "time": {"command": venv_bin("mcp-server-time")},
        "broken": {"command": "python3", "args": [misbehave(), "crash"]},
        "off": {"command": "false", "disabled": true}
    }});
    let path = dir.join("claude_desktop_config.json");
    std::fs::write(&path, serde_json::to_string_pretty(&cfg).unwrap()).unwrap();
    path
}

#[test]
fn config_servers_are_scanned_together_and_one_failure_does_not_stop_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_config(dir.path());
    let out = mcprisk()
        .args([
            "scan",
            "--format",
            "json",
            "--yes",
            "--timeout",
            "20",
            "--config",
        ])
        .arg(&cfg)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "a failed server makes the exit code 2"
    );
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !all.contains("ghp_literalTokenInConfig1234"),
        "the literal token leaked"
    );
    let doc = json_of(&out);
    let servers = doc["servers"].as_array().unwrap();
    let names: Vec<&str> = servers
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 5, "{names:?} (the disabled server is skipped)");
    let by = |n: &str| servers.iter().find(|s| s["name"] == n).unwrap();
    assert_eq!(by("filesystem")["tools"].as_array().unwrap().len(), 14);
    assert_eq!(by("memory")["tools"].as_array().unwrap().len(), 9);
    assert_eq!(by("time")["tools"].as_array().unwrap().len(), 2);
    let github = by("github");
    assert_eq!(github["tools"].as_array().unwrap().len(), 26);
    assert_eq!(github["auth"]["method"], "env-token");
    assert!(github["findings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["rule"] == "MR-F201"
            && f["message"]
                .as_str()
                .unwrap()
                .contains("GITHUB_PERSONAL_ACCESS_TOKEN")));
    let broken = by("broken");
    assert_eq!(broken["grade"], "F");
    assert!(broken["errors"][0]["message"].as_str().unwrap().len() > 10);
    // Both memory and github offer tools named like each other's? No; filesystem and github
    // both offer search tools with distinct names, so no collision is claimed.
    assert!(!servers
        .iter()
        .flat_map(|s| s["findings"].as_array().unwrap())
        .any(|f| f["rule"] == "MR-F204" && f["tool"] == "read_file"));
}

#[test]
fn config_servers_need_consent_without_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_config(dir.path());
    let out = mcprisk()
        .args(["scan", "--config"])
        .arg(&cfg)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--yes"), "{err}");
    assert!(
        err.contains("mcp-server-memory"),
        "the command lines are listed: {err}"
    );
    assert!(!err.contains("ghp_literal"), "{err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn policy_for_a_config_covers_every_server() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join(".mcp.json");
    std::fs::write(
        &cfg,
        json!({"mcpServers": {
            "memory": {"command": node_bin("mcp-server-memory")},
            "time": {"type": "stdio", "command": venv_bin("mcp-server-time")}
        }})
        .to_string(),
    )
    .unwrap();
    let out = mcprisk()
        .args(["policy", "--yes", "--config"])
        .arg(&cfg)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let p = json_of(&out);
    assert_eq!(p["tools"]["get_current_time"], json!({}));
    assert_eq!(p["tools"]["read_graph"], json!({}));
    assert!(p["hide"]
        .as_array()
        .unwrap()
        .iter()
        .any(|h| h == "delete_entities"));
}

#[test]
fn saved_tools_are_exactly_what_the_server_sent() {
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("memory.json");
    let live = mcprisk()
        .args(["scan", "--format", "json", "--save-tools"])
        .arg(&saved)
        .arg("--")
        .arg(node_bin("mcp-server-memory"))
        .output()
        .unwrap();
    assert!(
        live.status.success(),
        "{}",
        String::from_utf8_lossy(&live.stderr)
    );
    let raw: Value = serde_json::from_slice(&std::fs::read(&saved).unwrap()).unwrap();
    assert_eq!(raw["tools"].as_array().unwrap().len(), 9);
    assert!(raw["tools"][0]["inputSchema"].is_object());
    let offline = mcprisk()
        .args(["scan", "--format", "json", "--tools"])
        .arg(&saved)
        .output()
        .unwrap();
    let a = json_of(&live);
    let b = json_of(&offline);
    assert_eq!(verdicts(&a), verdicts(&b));
}

#[test]
fn discover_finds_the_users_client_configs() {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join(".cursor")).unwrap();
    std::fs::write(
        home.path().join(".cursor/mcp.json"),
        json!({"mcpServers": {"time": {"command": venv_bin("mcp-server-time")}}}).to_string(),
    )
    .unwrap();
    let out = mcprisk()
        .current_dir(home.path())
        .env("HOME", home.path())
        .env_remove("XDG_CONFIG_HOME")
        .args(["scan", "--discover", "--yes", "--format", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("Cursor"));
    assert_eq!(json_of(&out)["servers"][0]["name"], "time");
    let empty = tempfile::tempdir().unwrap();
    mcprisk()
        .current_dir(empty.path())
        .env("HOME", empty.path())
        .args(["scan", "--discover"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("no MCP client config found"));
}

#[test]
fn a_hanging_server_ends_at_the_timeout_with_a_clear_error() {
    let out = mcprisk()
        .args(["scan", "--timeout", "2", "--stdio"])
        .arg(format!("python3 {} hang_list", misbehave().display()))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("tools/list") && err.to_lowercase().contains("timeout")
            || err.contains("limit"),
        "{err}"
    );
}

#[test]
fn a_401_is_recorded_as_the_servers_auth_posture() {
    let log = tempfile::NamedTempFile::new().unwrap();
    let srv = ServerProcess::misbehave_http("401", log.path());
    let out = mcprisk()
        .args(["scan", "--format", "json", "--url", &srv.url("/mcp")])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "no tools could be listed");
    let doc = json_of(&out);
    let s = &doc["servers"][0];
    assert_eq!(s["auth"]["challenge"]["status"], 401);
    assert_eq!(s["auth"]["method"], "oauth");
    assert!(
        s["errors"][0]["message"].as_str().unwrap().contains("401")
            || s["errors"][0]["message"]
                .as_str()
                .unwrap()
                .to_lowercase()
                .contains("auth")
    );
}
