//! Policies end to end: the reference page's rules, flavours, profiles and limits.

use assert_cmd::Command;
use serde_json::{json, Value};

const PROXMOX: &str = "examples/proxmox-mcp.tools.json";

fn run_json(args: &[&str]) -> Value {
    let out = Command::cargo_bin("mcprisk")
        .unwrap()
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{:?}: {}",
        args,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn proxmox_policy_matches_the_reference_page() {
    let policy = run_json(&["policy", "--tools", PROXMOX]);
    assert_eq!(policy["version"], "1");
    assert_eq!(policy["default"], "deny");
    // The exact rule shown on the pve_api_request reference page.
    assert_eq!(
        policy["tools"]["pve_api_request"],
        json!({"limits": [{"counter": "pve_api_request_rate", "window": "minute", "max": 10, "scope": "grant"}]})
    );
    assert_eq!(policy["tools"]["pve_get_cluster_status"], json!({}));
    let hidden: Vec<&str> = policy["hide"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(hidden.contains(&"pve_delete_vm"), "{hidden:?}");
    assert!(policy["tools"].get("pve_delete_vm").is_none());
    assert_eq!(
        policy["tools"]["pve_create_snapshot"]["limits"][0]["max"], 30,
        "writes are limited to 30 a minute"
    );
}

#[test]
fn claude_code_flavour_sorts_tools_into_allow_ask_deny() {
    let doc = run_json(&[
        "policy",
        "--tools",
        PROXMOX,
        "--flavor",
        "claude-code",
        "--name",
        "pve",
    ]);
    let perms = &doc["permissions"];
    let has = |list: &str, name: &str| perms[list].as_array().unwrap().iter().any(|v| v == name);
    assert!(has("allow", "mcp__pve__pve_get_cluster_status"));
    assert!(has("ask", "mcp__pve__pve_api_request"));
    assert!(has("ask", "mcp__pve__pve_create_snapshot"));
    assert!(has("deny", "mcp__pve__pve_delete_vm"));
    assert!(!has("allow", "mcp__pve__pve_delete_vm"));
}

#[test]
fn profiles_shift_the_rules() {
    let strict = run_json(&["policy", "--tools", PROXMOX, "--profile", "strict"]);
    assert_eq!(
        strict["tools"]["pve_create_snapshot"]["deny_if"][0]["on_deny"],
        "Requires human approval."
    );
    let permissive = run_json(&["policy", "--tools", PROXMOX, "--profile", "permissive"]);
    assert_eq!(permissive["tools"]["pve_create_snapshot"], json!({}));
    assert!(
        permissive["tools"]["pve_delete_vm"]["deny_if"].is_array(),
        "destructive needs approval"
    );
    assert!(permissive.get("hide").is_none());
}

#[test]
fn per_category_limits_apply() {
    let p = run_json(&[
        "policy",
        "--tools",
        PROXMOX,
        "--limit",
        "write=12",
        "--limit",
        "execute=3",
    ]);
    assert_eq!(p["tools"]["pve_create_snapshot"]["limits"][0]["max"], 12);
    assert_eq!(p["tools"]["pve_api_request"]["limits"][0]["max"], 3);
}

#[test]
fn method_enum_gets_argument_validation() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("api.json");
    std::fs::write(
        &file,
        json!({"tools": [{
            "name": "api_call",
            "description": "Call the service API.",
            "inputSchema": {"type": "object", "properties": {
                "method": {"type": "string", "enum": ["GET", "POST", "DELETE"]},
                "path": {"type": "string"}
            }}
        }]})
        .to_string(),
    )
    .unwrap();
    let p = run_json(&["policy", "--tools", file.to_str().unwrap()]);
    let rule = &p["tools"]["api_call"];
    assert_eq!(rule["deny_if"][0]["conditions"][0]["field"], "args.method");
    assert_eq!(rule["deny_if"][0]["conditions"][0]["value"], json!(["GET"]));
    assert_eq!(rule["limits"][0]["max"], 10);
}

#[test]
fn financial_tools_need_approval() {
    let p = run_json(&[
        "policy",
        "--tools",
        "tests/data/labels/tools/paddle-mcp.json",
    ]);
    assert_eq!(
        p["tools"]["create_transaction"],
        json!({"deny_if": [{"conditions": [], "on_deny": "Requires human approval."}]})
    );
}

#[test]
fn fail_on_sets_the_exit_code() {
    Command::cargo_bin("mcprisk")
        .unwrap()
        .args([
            "scan",
            "--tools",
            PROXMOX,
            "--fail-on",
            "critical",
            "--format",
            "json",
        ])
        .assert()
        .code(1);
    Command::cargo_bin("mcprisk")
        .unwrap()
        .args([
            "scan",
            "--tools",
            "tests/data/labels/tools/mcp-server-time.json",
            "--fail-on",
            "high",
        ])
        .assert()
        .code(0);
}

#[test]
fn rules_are_listed_and_explained() {
    let out = Command::cargo_bin("mcprisk")
        .unwrap()
        .args(["rules"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("MR-C304") && text.contains("MR-F101"));
    let out = Command::cargo_bin("mcprisk")
        .unwrap()
        .args(["rules", "mr-c304"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("api-passthrough")
            && text.contains("Why it matters")
            && text.contains("Example")
    );
    Command::cargo_bin("mcprisk")
        .unwrap()
        .args(["rules", "MR-X999"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("no rule"));
}

#[test]
fn scan_json_follows_the_contract() {
    let doc = run_json(&["scan", "--tools", PROXMOX, "--format", "json"]);
    assert_eq!(doc["schema_version"], 1);
    let server = &doc["servers"][0];
    assert_eq!(server["name"], "proxmox-mcp");
    assert!(server["grade"].as_str().unwrap().len() == 1);
    assert!(!server["grade_reasons"].as_array().unwrap().is_empty());
    let api = server["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "pve_api_request")
        .unwrap();
    assert_eq!(api["category"], "Execute");
    assert_eq!(api["severity"], "High");
    assert_eq!(api["recommended"]["action"], "rate-limit");
    assert!(api["evidence"][0]["rule"]
        .as_str()
        .unwrap()
        .starts_with("MR-"));
    let c = api["confidence"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&c));
    let status = server["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "pve_get_cluster_status")
        .unwrap();
    assert_eq!(status["category"], "Read");
    assert_eq!(status["severity"], "Low");
    assert_eq!(status["recommended"]["action"], "allow");
}
