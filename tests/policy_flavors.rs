//! The Intercept and agentgateway flavours, checked against each format's own rules rather
//! than only our expectations.
//!
//! - agentgateway: every generated rule is parsed and evaluated by `cel` from crates.io, the
//!   upstream of the CEL interpreter agentgateway runs (its workspace builds a fork of it,
//!   crates/cel-fork/cel). The snippet's shape is the documented one (schema/config.md:
//!   `policies.mcpAuthorization.rules`, `[]string`); agentgateway publishes neither its
//!   binary nor its JSON schema to a registry we can install from, so the shape is checked
//!   against the documentation, not a schema file.
//! - Intercept: a Go binary released only on GitHub (its npm wrapper's install script
//!   downloads it, and the package is not on the npm registry); nothing installable from a
//!   registry validates its policies. `intercept_validate` below is a port of
//!   `intercept validate` (internal/config/config.go and internal/config/validate.go of
//!   github.com/policylayer/intercept, the errors listed in its POLICY.md), and
//!   `intercept_allows` of its condition evaluation (internal/engine/operators.go,
//!   resolve.go).

use assert_cmd::Command;
use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::BTreeMap;

const PROXMOX: &str = "examples/proxmox-mcp.tools.json";
const PADDLE: &str = "tests/data/labels/tools/paddle-mcp.json";

fn mcprisk() -> Command {
    Command::cargo_bin("mcprisk").unwrap()
}

fn run(args: &[&str]) -> String {
    let out = mcprisk().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Recommended action per tool, from `scan --format json`.
fn recommended(tools: &str) -> BTreeMap<String, String> {
    let doc: Value =
        serde_json::from_str(&run(&["scan", "--tools", tools, "--format", "json"])).unwrap();
    doc["servers"][0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_string(),
                t["recommended"]["action"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn api_tools(dir: &std::path::Path) -> String {
    let file = dir.join("api.json");
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
    file.to_str().unwrap().to_string()
}

// ---------------------------------------------------------------------------------------
// Intercept: config.go's structs (with unknown keys refused, which Intercept's loader does
// not do, so this is stricter) and validate.go's checks.

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct InterceptConfig {
    version: String,
    #[serde(default)]
    #[allow(dead_code)] // free text; no check reads it
    description: String,
    #[serde(default)]
    default: String,
    #[serde(default)]
    hide: Vec<String>,
    tools: BTreeMap<String, InterceptTool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct InterceptTool {
    #[serde(default)]
    rules: Vec<InterceptRule>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct InterceptRule {
    #[serde(default)]
    name: String,
    #[serde(default)]
    action: String,
    #[serde(default)]
    rate_limit: String,
    #[serde(default)]
    conditions: Vec<InterceptCondition>,
    #[serde(default)]
    #[allow(dead_code)] // shown to the agent; no check reads it
    on_deny: String,
    state: Option<Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct InterceptCondition {
    path: String,
    op: String,
    value: Value,
}

/// `parseRateLimit`: `N/minute|hour|day`, N a positive integer.
fn intercept_rate(s: &str) -> Result<(u64, &str), String> {
    let (n, w) = s.split_once('/').ok_or(format!(
        "rate_limit must be in the format \"N/window\", got {s:?}"
    ))?;
    let n: u64 = n.parse().ok().filter(|n| *n > 0).ok_or(format!(
        "rate_limit count must be a positive integer, got {n:?}"
    ))?;
    if !["minute", "hour", "day"].contains(&w) {
        return Err(format!(
            "rate_limit window must be minute, hour or day, got {w:?}"
        ));
    }
    Ok((n, w))
}

/// `Load` (defaults) then `Validate`: every error, as `intercept validate` lists them.
fn intercept_validate(yaml: &str) -> Vec<String> {
    let cfg: InterceptConfig = match serde_saphyr::from_str(yaml) {
        Ok(c) => c,
        Err(e) => return vec![format!("parsing config file: {e}")],
    };
    let mut errs = Vec::new();
    if cfg.version != "1" {
        errs.push(format!("version must be \"1\", got {:?}", cfg.version));
    }
    let default = if cfg.default.is_empty() {
        "allow"
    } else {
        &cfg.default
    };
    if default != "allow" && default != "deny" {
        errs.push(format!("default must be allow or deny, got {default:?}"));
    }
    let mut seen = std::collections::HashSet::new();
    for (i, h) in cfg.hide.iter().enumerate() {
        if h.trim().is_empty() {
            errs.push(format!("hide[{i}]: entry must not be empty"));
        } else if !seen.insert(h) {
            errs.push(format!("hide: duplicate entry {h:?}"));
        }
    }
    for (tool, def) in &cfg.tools {
        let mut counters: BTreeMap<String, usize> = BTreeMap::new();
        for (i, r) in def.rules.iter().enumerate() {
            let p = format!("tools.{tool}.rules[{i}]");
            // Desugaring: a rate_limit rule becomes an evaluate rule with a `_rate_<window>`
            // counter, when it has no conditions or state and is not a deny rule.
            if !r.rate_limit.is_empty() {
                let mut bad = false;
                if let Err(e) = intercept_rate(&r.rate_limit) {
                    errs.push(format!("{p}: {e}"));
                    bad = true;
                }
                if !r.conditions.is_empty() || r.state.is_some() {
                    errs.push(format!(
                        "{p}: rate_limit cannot be combined with conditions or state"
                    ));
                    bad = true;
                }
                if r.action == "deny" {
                    errs.push(format!(
                        "{p}: rate_limit cannot be used with action \"deny\""
                    ));
                    bad = true;
                }
                if !bad {
                    let (_, w) = intercept_rate(&r.rate_limit).unwrap();
                    let counter = format!("_rate_{w}");
                    if let Some(prev) = counters.insert(counter.clone(), i) {
                        errs.push(format!(
                            "{p}: duplicate state counter {counter:?} (also used by rules[{prev}])"
                        ));
                    }
                }
                continue;
            }
            if r.name.is_empty() {
                errs.push(format!("{p}: rule must have a name"));
            }
            let action = if r.action.is_empty() {
                "evaluate"
            } else {
                &r.action
            };
            if action != "evaluate" && action != "deny" {
                errs.push(format!(
                    "{p}: action must be evaluate or deny, got {action:?}"
                ));
            }
            if action == "deny" && !r.conditions.is_empty() {
                errs.push(format!("{p}: deny rules must not have conditions"));
            }
            if action == "evaluate" && r.conditions.is_empty() {
                errs.push(format!(
                    "{p}: evaluate rules must have at least one condition"
                ));
            }
            for (j, c) in r.conditions.iter().enumerate() {
                let cp = format!("{p}.conditions[{j}]");
                if !c.path.starts_with("args.") && !c.path.starts_with("state.") {
                    errs.push(format!(
                        "{cp}: path must start with args. or state., got {:?}",
                        c.path
                    ));
                }
                let ops = [
                    "eq", "neq", "in", "not_in", "lt", "lte", "gt", "gte", "regex", "contains",
                    "exists",
                ];
                if !ops.contains(&c.op.as_str()) {
                    errs.push(format!("{cp}: unknown operator {:?}", c.op));
                }
                if (c.op == "in" || c.op == "not_in") && !c.value.is_array() {
                    errs.push(format!("{cp}: operator {:?} requires a list value", c.op));
                }
                if ["lt", "lte", "gt", "gte"].contains(&c.op.as_str()) && !c.value.is_number() {
                    errs.push(format!(
                        "{cp}: operator {:?} requires a numeric value",
                        c.op
                    ));
                }
                if c.op == "exists" && !c.value.is_boolean() {
                    errs.push(format!(
                        "{cp}: operator \"exists\" requires a boolean value"
                    ));
                }
                if c.op == "regex" && !c.value.is_string() {
                    errs.push(format!("{cp}: regex value must be a string"));
                }
                if c.path.starts_with("state.") {
                    errs.push(format!("{cp}: mcprisk writes no state conditions"));
                }
            }
            if r.state.is_some() {
                errs.push(format!("{p}: mcprisk writes no state blocks"));
            }
        }
    }
    errs
}

/// Whether Intercept lets a call through, for argument rules (`evalIn`, `evalEq`: a missing
/// argument resolves to nil, which equals no listed string) and unconditional denies;
/// rate limits are taken as not yet reached.
fn intercept_allows(yaml: &str, tool: &str, args: &Value) -> bool {
    let cfg: InterceptConfig = serde_saphyr::from_str(yaml).unwrap();
    if cfg.hide.iter().any(|h| h == tool || h == "*") {
        return false;
    }
    let Some(def) = cfg.tools.get(tool) else {
        return cfg.default != "deny";
    };
    def.rules.iter().all(|r| {
        if r.action == "deny" {
            return false;
        }
        r.conditions.iter().all(|c| {
            let actual = c
                .path
                .strip_prefix("args.")
                .and_then(|p| p.split('.').try_fold(args, |v, k| v.get(k)));
            match c.op.as_str() {
                "in" => actual.is_some_and(|a| c.value.as_array().unwrap().contains(a)),
                "not_in" => !actual.is_some_and(|a| c.value.as_array().unwrap().contains(a)),
                op => panic!("operator {op} not modelled"),
            }
        })
    })
}

#[test]
fn the_intercept_validator_port_is_not_vacuous() {
    let bad = r#"
version: "2"
default: maybe
hide: ["", x, x]
tools:
  a:
    rules:
      - rate_limit: 0/week
        action: deny
      - action: deny
        name: d
        conditions: [{path: "args.x", op: "eq", value: 1}]
      - name: e
      - name: f
        conditions: [{path: "x", op: "in", value: 3}]
"#;
    let errs = intercept_validate(bad);
    assert!(errs.len() >= 9, "{errs:#?}");
    assert!(!intercept_validate(
        "version: \"1\"\ntools:\n  a:\n    rules:\n      - {name: x, bogus: 1}\n"
    )
    .is_empty());
}

#[test]
fn intercept_policy_is_valid_and_maps_every_action() {
    let dir = tempfile::tempdir().unwrap();
    let api = api_tools(dir.path());
    for tools in [PROXMOX, PADDLE, api.as_str()] {
        for profile in ["balanced", "strict", "permissive"] {
            let yaml = run(&[
                "policy",
                "--tools",
                tools,
                "--flavor",
                "intercept",
                "--profile",
                profile,
            ]);
            let errs = intercept_validate(&yaml);
            assert!(errs.is_empty(), "{tools} {profile}: {errs:#?}\n{yaml}");
        }
    }

    let yaml = run(&["policy", "--tools", PROXMOX, "--flavor", "intercept"]);
    let doc: Value = serde_saphyr::from_str(&yaml).unwrap();
    assert_eq!(doc["version"], "1");
    assert_eq!(doc["default"], "deny");
    let rec = recommended(PROXMOX);
    for (tool, action) in &rec {
        let entry = &doc["tools"][tool];
        let hidden = doc["hide"].as_array().unwrap().iter().any(|h| h == tool);
        match action.as_str() {
            "allow" => assert_eq!(entry, &json!({"rules": []}), "{tool}"),
            "rate-limit" => {
                let rate = entry["rules"][0]["rate_limit"].as_str().unwrap();
                assert!(rate.ends_with("/minute"), "{tool}: {rate}");
            }
            "validate" => {
                let rules = entry["rules"].as_array().unwrap();
                assert!(rules.iter().any(|r| r["conditions"].is_array()), "{tool}");
                assert!(rules.iter().any(|r| r["rate_limit"].is_string()), "{tool}");
            }
            "hide" => assert!(hidden && entry.is_null(), "{tool}"),
            other => panic!("{tool}: {other} not expected for proxmox"),
        }
        assert_eq!(
            intercept_allows(&yaml, tool, &json!({})),
            matches!(action.as_str(), "allow" | "rate-limit"),
            "{tool}"
        );
    }
    // pve_api_request: the reference page's 10 a minute, and only GET or HEAD (issue 12, item 14).
    let api_rules = doc["tools"]["pve_api_request"]["rules"].as_array().unwrap();
    assert!(
        api_rules.iter().any(|r| r["rate_limit"] == "10/minute"),
        "{api_rules:?}"
    );
    assert!(
        api_rules.iter().any(|r| r["conditions"][0]
            == json!({"path": "args.method", "op": "in", "value": ["GET", "HEAD"]})),
        "{api_rules:?}"
    );
    assert!(intercept_allows(
        &yaml,
        "pve_api_request",
        &json!({"method": "GET", "path": "/nodes"})
    ));
    assert!(!intercept_allows(
        &yaml,
        "pve_api_request",
        &json!({"method": "DELETE", "path": "/nodes/pve/qemu/100"})
    ));

    // Argument validation: GET passes, other methods and a missing method are refused.
    let yaml = run(&["policy", "--tools", &api, "--flavor", "intercept"]);
    let rules = &serde_saphyr::from_str::<Value>(&yaml).unwrap()["tools"]["api_call"]["rules"];
    assert_eq!(
        rules[0]["conditions"][0],
        json!({"path": "args.method", "op": "in", "value": ["GET"]})
    );
    assert!(intercept_allows(
        &yaml,
        "api_call",
        &json!({"method": "GET", "path": "/x"})
    ));
    assert!(!intercept_allows(
        &yaml,
        "api_call",
        &json!({"method": "DELETE"})
    ));
    assert!(!intercept_allows(&yaml, "api_call", &json!({"path": "/x"})));

    // Approval: Intercept has none, so the tool is denied with a message saying why.
    let yaml = run(&["policy", "--tools", PADDLE, "--flavor", "intercept"]);
    let doc: Value = serde_saphyr::from_str(&yaml).unwrap();
    let rule = &doc["tools"]["create_transaction"]["rules"][0];
    assert_eq!(rule["action"], "deny");
    assert!(rule["on_deny"].as_str().unwrap().contains("human approval"));
    assert!(!intercept_allows(&yaml, "create_transaction", &json!({})));
}

// ---------------------------------------------------------------------------------------
// agentgateway: CEL rules, evaluated.

/// Whether any rule allows a call to `tool`, evaluated by the CEL interpreter with the
/// request-time `mcp` context agentgateway documents (schema/cel.md: `mcp.tool.name`,
/// `mcp.tool.target`).
fn cel_allows(rules: &[cel::Program], tool: &str) -> bool {
    let mut ctx = cel::Context::default();
    ctx.add_variable("mcp", json!({"tool": {"name": tool, "target": "server"}}))
        .unwrap();
    rules.iter().any(|p| match p.execute(&ctx) {
        Ok(cel::Value::Bool(b)) => b,
        other => panic!("a rule did not evaluate to a bool: {other:?}"),
    })
}

fn agentgateway_rules(yaml: &str) -> Vec<String> {
    assert!(yaml.starts_with("# agentgateway"), "{yaml}");
    let doc: Value = serde_saphyr::from_str(yaml).unwrap();
    // The documented shape: `mcpAuthorization` (object) with `rules` ([]string), nothing else.
    let top = doc.as_object().unwrap();
    assert_eq!(top.keys().collect::<Vec<_>>(), ["mcpAuthorization"]);
    let auth = top["mcpAuthorization"].as_object().unwrap();
    assert_eq!(auth.keys().collect::<Vec<_>>(), ["rules"]);
    auth["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().expect("rules are strings").to_string())
        .collect()
}

#[test]
fn agentgateway_rules_compile_and_allow_exactly_the_allowed_tools() {
    let dir = tempfile::tempdir().unwrap();
    let api = api_tools(dir.path());
    for tools in [PROXMOX, PADDLE, api.as_str()] {
        let yaml = run(&["policy", "--tools", tools, "--flavor", "agentgateway"]);
        let rules = agentgateway_rules(&yaml);
        let programs: Vec<cel::Program> = rules
            .iter()
            .map(|r| cel::Program::compile(r).unwrap_or_else(|e| panic!("{r}: {e}")))
            .collect();
        let rec = recommended(tools);
        assert!(!rec.is_empty());
        for (tool, action) in &rec {
            assert_eq!(
                cel_allows(&programs, tool),
                matches!(action.as_str(), "allow" | "rate-limit"),
                "{tools}: {tool} ({action})"
            );
        }
        assert!(!cel_allows(&programs, "a_tool_no_server_offers"));
    }
}

#[test]
fn agentgateway_rules_quote_awkward_tool_names() {
    let dir = tempfile::tempdir().unwrap();
    let names = [
        "say \"hi\"",
        "back\\slash",
        "it's",
        "ünïcödé",
        "new\nline",
        "x || true",
    ];
    let file = dir.path().join("odd.json");
    let tools: Vec<Value> = names
        .iter()
        .map(|n| json!({"name": n, "description": "Get the current status.", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}}))
        .collect();
    std::fs::write(&file, json!({ "tools": tools }).to_string()).unwrap();
    let yaml = run(&[
        "policy",
        "--tools",
        file.to_str().unwrap(),
        "--flavor",
        "agentgateway",
    ]);
    let programs: Vec<cel::Program> = agentgateway_rules(&yaml)
        .iter()
        .map(|r| cel::Program::compile(r).unwrap_or_else(|e| panic!("{r}: {e}")))
        .collect();
    let rec = recommended(file.to_str().unwrap());
    assert_eq!(
        programs.len(),
        names.len(),
        "read-only tools are all allowed: {rec:?}"
    );
    for n in names {
        let allowed = rec[n] == "allow" || rec[n] == "rate-limit";
        assert_eq!(cel_allows(&programs, n), allowed, "{n:?}");
    }
    // One rule per allowed tool, each matching that tool only.
    for p in &programs {
        let matched: Vec<&str> = names
            .iter()
            .copied()
            .filter(|n| cel_allows(std::slice::from_ref(p), n))
            .collect();
        assert_eq!(matched.len(), 1, "{matched:?}");
    }
    assert!(!cel_allows(&programs, "x"));
}

// ---------------------------------------------------------------------------------------
// Reading back: `check --policy` and merging.

fn check_json(tools: &str, policy: &std::path::Path) -> (Option<i32>, Value) {
    let out = mcprisk()
        .args(["check", "--tools", tools, "--format", "json", "--policy"])
        .arg(policy)
        .output()
        .unwrap();
    (
        out.status.code(),
        serde_json::from_slice(&out.stdout).unwrap_or(Value::Null),
    )
}

fn has(doc: &Value, rule: &str, tool: &str) -> bool {
    doc["changes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["rule"] == rule && c["tool"] == tool)
}

#[test]
fn check_reads_intercept_and_agentgateway_policies() {
    let dir = tempfile::tempdir().unwrap();
    for flavor in ["intercept", "agentgateway"] {
        let path = dir.path().join(format!("{flavor}.yaml"));
        mcprisk()
            .args(["policy", "--tools", PROXMOX, "--flavor", flavor, "-o"])
            .arg(&path)
            .assert()
            .success();
        let (code, doc) = check_json(PROXMOX, &path);
        assert_eq!(code, Some(0), "{flavor}: {doc}");
        mcprisk()
            .args([
                "policy", "--tools", PROXMOX, "--flavor", flavor, "--check", "-o",
            ])
            .arg(&path)
            .assert()
            .code(0);
    }

    // Loosened by hand: a hidden tool allowed, a rate limit dropped, a rule for a tool
    // that is gone.
    let path = dir.path().join("intercept.yaml");
    let mut doc: Value = serde_saphyr::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    doc["hide"] = json!(["pve_stop_vm"]);
    doc["tools"]["pve_delete_vm"] = json!({"rules": []});
    doc["tools"]["pve_api_request"] = json!({"rules": [{"name": "r", "rate_limit": "600/minute"}]});
    doc["tools"]["gone_tool"] = json!({"rules": []});
    std::fs::write(&path, serde_saphyr::to_string(&doc).unwrap()).unwrap();
    let (code, out) = check_json(PROXMOX, &path);
    assert_eq!(code, Some(1), "{out}");
    assert!(has(&out, "MR-P002", "pve_delete_vm"), "{out}");
    assert!(has(&out, "MR-P002", "pve_api_request"), "{out}");
    assert!(has(&out, "MR-P001", "pve_shutdown_vm"), "{out}");
    assert!(has(&out, "MR-P003", "gone_tool"), "{out}");
    // The hand edits survive a rewrite.
    let out = mcprisk()
        .args(["policy", "--tools", PROXMOX, "--flavor", "intercept", "-o"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("looser than recommended"));
    let kept: Value = serde_saphyr::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(kept["tools"]["pve_delete_vm"], json!({"rules": []}));
    assert!(kept["tools"].get("gone_tool").is_none());
    assert!(intercept_validate(&std::fs::read_to_string(&path).unwrap()).is_empty());

    let path = dir.path().join("agentgateway.yaml");
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str("  - mcp.tool.name == \"pve_delete_vm\"\n  - 'jwt.sub == \"admin\"'\n  - mcp.tool.name == \"gone_tool\"\n");
    std::fs::write(&path, &text).unwrap();
    let (code, out) = check_json(PROXMOX, &path);
    assert_eq!(code, Some(1), "{out}");
    assert!(has(&out, "MR-P002", "pve_delete_vm"), "{out}");
    assert!(has(&out, "MR-P003", "gone_tool"), "{out}");
    mcprisk()
        .args([
            "policy",
            "--tools",
            PROXMOX,
            "--flavor",
            "agentgateway",
            "-o",
        ])
        .arg(&path)
        .assert()
        .success();
    let rules = agentgateway_rules(&std::fs::read_to_string(&path).unwrap());
    assert!(
        rules
            .iter()
            .any(|r| r == "mcp.tool.name == \"pve_delete_vm\""),
        "{rules:?}"
    );
    assert!(
        rules.iter().any(|r| r == "jwt.sub == \"admin\""),
        "{rules:?}"
    );
    assert!(!rules.iter().any(|r| r.contains("gone_tool")), "{rules:?}");

    // A file of another flavour is not merged into.
    mcprisk()
        .args(["policy", "--tools", PROXMOX, "--flavor", "intercept", "-o"])
        .arg(&path)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("not a intercept policy"));
}

/// `-o` naming a FIFO (or `/dev/stdout`) is written into, never read as an old policy to merge
/// with (that would block) and never replaced by a plain file.
#[cfg(unix)]
#[test]
fn policy_into_a_fifo_writes_it_without_reading_it() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("policy.pipe");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    mcprisk()
        .args(["policy", "--tools", PROXMOX, "-o"])
        .arg(&fifo)
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .success();
    let doc: Value = serde_json::from_str(&reader.join().unwrap()).unwrap();
    assert_eq!(doc["tools"]["pve_get_cluster_status"], json!({}));
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
}
