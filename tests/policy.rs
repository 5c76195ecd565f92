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
    // The exact rate limit shown on the pve_api_request reference page, and beside it
    // (issue 12, item 14) argument validation in Intercept's condition format (`path`, `op`,
    // `value`): "Call any Proxmox API path" with a free-text method could otherwise DELETE a
    // VM while pve_delete_vm is hidden.
    assert_eq!(
        policy["tools"]["pve_api_request"]["limits"],
        json!([{"counter": "pve_api_request_rate", "window": "minute", "max": 10, "scope": "grant"}])
    );
    assert_eq!(
        policy["tools"]["pve_api_request"]["deny_if"],
        json!([{"conditions": [{"path": "args.method", "op": "not_in", "value": ["GET", "HEAD"]}],
                "on_deny": "Requires human approval."}])
    );
    assert_eq!(
        policy["tools"]["pve_api_request"]
            .as_object()
            .unwrap()
            .len(),
        2,
        "nothing else: {}",
        policy["tools"]["pve_api_request"]
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
    assert_eq!(
        rule["deny_if"][0]["conditions"][0],
        json!({"path": "args.method", "op": "not_in", "value": ["GET"]}),
        "Intercept's condition format, not the guessed field/operator"
    );
    assert_eq!(rule["limits"][0]["max"], 10);
}

/// Issue 12, item 14: the passthrough could still do what hidden tools do. Every Execute tool
/// whose schema names a method or action (an enum or free text, also nested) is validated.
#[test]
fn free_text_methods_and_actions_are_validated_in_every_flavour() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("api.json");
    std::fs::write(
        &file,
        json!({"tools": [
            {"name": "raw_request", "description": "Send any request to the service API.",
             "inputSchema": {"type": "object", "properties": {
                 "method": {"type": "string"}, "path": {"type": "string"}}}},
            {"name": "run_job", "description": "Run a job action on the cluster.",
             "inputSchema": {"type": "object", "properties": {
                 "options": {"type": "object", "properties": {
                     "action": {"type": "string", "description": "list, status, start or stop"}}}}}}
        ]})
        .to_string(),
    )
    .unwrap();
    let f = file.to_str().unwrap();
    let p = run_json(&["policy", "--tools", f]);
    assert_eq!(
        p["tools"]["raw_request"]["deny_if"][0]["conditions"][0],
        json!({"path": "args.method", "op": "not_in", "value": ["GET", "HEAD"]})
    );
    let nested = &p["tools"]["run_job"]["deny_if"][0]["conditions"][0];
    assert_eq!(nested["path"], "args.options.action", "{p}");
    assert!(nested["value"]
        .as_array()
        .unwrap()
        .iter()
        .any(|v| v == "list"));
    assert!(!nested["value"]
        .as_array()
        .unwrap()
        .iter()
        .any(|v| v == "stop"));
    // The scan says so too.
    let doc = run_json(&["scan", "--tools", f, "--format", "json"]);
    let raw = &doc["servers"][0]["tools"][0];
    assert_eq!(raw["recommended"]["action"], "validate");
    assert_eq!(raw["recommended"]["validate"][0]["argument"], "method");
}

/// A policy.json written before the condition format changed is recognised as mcprisk's own
/// and rewritten, not kept as a hand edit.
#[test]
fn an_older_condition_format_is_upgraded_on_merge() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("policy.json");
    let old_rule = json!({
        "deny_if": [{"conditions": [{"field": "args.method", "operator": "not_in", "value": ["GET", "HEAD"]}],
                     "on_deny": "Requires human approval."}],
        "limits": [{"counter": "pve_api_request_rate", "window": "minute", "max": 10, "scope": "grant"}]
    });
    let fresh = run_json(&["policy", "--tools", PROXMOX]);
    let mut old = fresh.clone();
    old["tools"]["pve_api_request"] = old_rule;
    std::fs::write(&out, serde_json::to_string_pretty(&old).unwrap()).unwrap();
    let o = out.to_str().unwrap();
    let run = Command::cargo_bin("mcprisk")
        .unwrap()
        .args(["policy", "--tools", PROXMOX, "-o", o])
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let merged: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(
        merged["tools"]["pve_api_request"],
        fresh["tools"]["pve_api_request"]
    );
    assert!(
        !String::from_utf8_lossy(&run.stderr).contains("pve_api_request"),
        "not reported as a kept hand edit: {}",
        String::from_utf8_lossy(&run.stderr)
    );
}

/// Issue 12, item 15: a server whose only tool is `delete_all` graded A (91/100).
#[test]
fn a_critical_tool_caps_the_grade() {
    let dir = tempfile::tempdir().unwrap();
    let one = dir.path().join("one.json");
    std::fs::write(
        &one,
        json!({"tools": [{"name": "delete_all", "description": "Deletes the entire database and all backups.",
                          "inputSchema": {"type": "object"}}]})
        .to_string(),
    )
    .unwrap();
    let doc = run_json(&["scan", "--tools", one.to_str().unwrap(), "--format", "json"]);
    let server = &doc["servers"][0];
    assert_eq!(server["tools"][0]["severity"], "Critical");
    assert_eq!(server["grade"], "C", "{server}");
    assert!(
        server["score"].as_u64().unwrap() >= 85,
        "the points stay: {server}"
    );
    assert!(server["grade_reasons"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["reason"].as_str().unwrap().starts_with("MR-G012")));

    let two = dir.path().join("two.json");
    std::fs::write(
        &two,
        json!({"tools": [
            {"name": "delete_all", "description": "Deletes the entire database and all backups.",
             "inputSchema": {"type": "object"}},
            {"name": "drop_table", "description": "Drops a table.",
             "inputSchema": {"type": "object", "properties": {"table": {"type": "string"}}}}]})
        .to_string(),
    )
    .unwrap();
    let doc = run_json(&["scan", "--tools", two.to_str().unwrap(), "--format", "json"]);
    assert_eq!(doc["servers"][0]["grade"], "D", "{}", doc["servers"][0]);

    // The formula is documented where a reviewer looks: `mcprisk rules` and every report.
    let out = Command::cargo_bin("mcprisk")
        .unwrap()
        .args(["rules", "MR-G012"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success() && text.contains("caps the grade at C"),
        "{text}"
    );
    assert!(text.contains("How the grade is computed"), "{text}");
    for format in ["md", "html", "table"] {
        let out = Command::cargo_bin("mcprisk")
            .unwrap()
            .args(["scan", "--tools", one.to_str().unwrap(), "--format", format])
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains("MR-G012"), "{format}: {text}");
    }
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
    assert_eq!(api["recommended"]["action"], "validate");
    assert_eq!(api["recommended"]["max_per_minute"], 10);
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
