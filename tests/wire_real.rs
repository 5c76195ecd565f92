//! The wire layer against real, pinned MCP servers (scripts/install-test-servers.sh installs them).
//! Each stdio test also checks that the server's process group is gone afterwards.

mod common;

use std::process::Command;
use std::time::Instant;

use common::*;
use mcprisk::targets::mcp::{
    introspect_http, introspect_stdio, ChannelSecurity, Introspection, Options, Transport,
};

fn stdio_run(t: &Tracked, label: &str) -> Introspection {
    let start = Instant::now();
    let got = introspect_stdio(&t.cmd, &Options::default());
    let took = start.elapsed();
    t.assert_gone();
    let got = got.unwrap_or_else(|e| panic!("{label}: {e}"));
    eprintln!(
        "{label}: {} tools, protocol {:?}, {took:.2?} (spawn to process group ended)",
        got.tools.len(),
        got.protocol_version
    );
    assert_eq!(got.transport, Transport::Stdio);
    assert_eq!(got.auth.channel, ChannelSecurity::Local);
    got
}

fn server_name(i: &Introspection) -> String {
    i.server_info
        .as_ref()
        .and_then(|s| s.get("name"))
        .and_then(|n| n.as_str())
        .unwrap_or("")
        .to_string()
}

#[test]
fn everything_over_stdio() {
    let t = Tracked::new(&node_bin("mcp-server-everything"), &["stdio"]);
    let got = stdio_run(&t, "server-everything stdio");
    assert_eq!(got.tools.len(), 13, "{:?}", names(&got.tools));
    assert!(names(&got.tools).contains(&"echo".to_string()));
    assert_eq!(got.protocol_version.as_deref(), Some("2025-11-25"));
    assert!(!server_name(&got).is_empty());
    // Raw JSON: every tool is an object with its schema as the server sent it.
    assert!(got.tools.iter().all(|t| t.get("inputSchema").is_some()));
}

#[test]
fn filesystem_over_stdio() {
    let dir = tempfile::tempdir().unwrap();
    let t = Tracked::new(
        &node_bin("mcp-server-filesystem"),
        &[dir.path().to_str().unwrap()],
    );
    let got = stdio_run(&t, "server-filesystem");
    assert_eq!(got.tools.len(), 14, "{:?}", names(&got.tools));
    assert!(names(&got.tools).contains(&"read_text_file".to_string()));
}

#[test]
fn memory_over_stdio() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = Tracked::new(&node_bin("mcp-server-memory"), &[]);
    t.cmd.env.push((
        "MEMORY_FILE_PATH".into(),
        dir.path().join("memory.jsonl").display().to_string(),
    ));
    let got = stdio_run(&t, "server-memory");
    assert_eq!(got.tools.len(), 9, "{:?}", names(&got.tools));
    assert_eq!(got.auth.credential_names, vec!["MEMORY_FILE_PATH"]);
}

#[test]
fn github_speaks_2024_11_05_and_needs_no_real_token_to_list() {
    let mut t = Tracked::new(&node_bin("mcp-server-github"), &[]);
    t.cmd.env.push((
        "GITHUB_PERSONAL_ACCESS_TOKEN".into(),
        "dummy-not-a-token".into(),
    ));
    let got = stdio_run(&t, "server-github");
    assert_eq!(got.tools.len(), 26, "{:?}", names(&got.tools));
    assert_eq!(got.protocol_version.as_deref(), Some("2024-11-05"));
    assert!(got.tools.iter().all(|t| t.get("annotations").is_none()));
    assert_eq!(
        got.auth.credential_names,
        vec!["GITHUB_PERSONAL_ACCESS_TOKEN"]
    );
    assert!(!format!("{got:?}").contains("dummy-not-a-token"));
}

#[test]
fn python_git_server() {
    let repo = tempfile::tempdir().unwrap();
    let st = Command::new("git")
        .args(["init", "-q"])
        .current_dir(repo.path())
        .status()
        .unwrap();
    assert!(st.success());
    let t = Tracked::new(
        &venv_bin("mcp-server-git"),
        &["--repository", repo.path().to_str().unwrap()],
    );
    let got = stdio_run(&t, "mcp-server-git");
    assert_eq!(got.tools.len(), 12, "{:?}", names(&got.tools));
    assert!(names(&got.tools).contains(&"git_status".to_string()));
}

#[test]
fn python_time_server() {
    let t = Tracked::new(&venv_bin("mcp-server-time"), &["--local-timezone", "UTC"]);
    let got = stdio_run(&t, "mcp-server-time");
    assert_eq!(
        names(&got.tools),
        vec!["get_current_time".to_string(), "convert_time".to_string()]
    );
}

#[test]
fn paginating_server_is_followed_to_the_end() {
    let t = Tracked::misbehave("paginate");
    let got = stdio_run(&t, "paginating server");
    assert_eq!(got.tools.len(), 12);
    assert_eq!(names(&got.tools)[0], "pagep1_0");
    assert_eq!(names(&got.tools)[11], "pagep3_3");
    assert!(got.warnings.is_empty(), "{:?}", got.warnings);
}

#[test]
fn everything_over_streamable_http() {
    let srv = ServerProcess::node(&node_bin("mcp-server-everything"), &["streamableHttp"]);
    let start = Instant::now();
    let got = introspect_http(&srv.url("/mcp"), &[], &Options::default())
        .unwrap_or_else(|e| panic!("{e}"));
    eprintln!(
        "server-everything streamable HTTP: {} tools in {:.2?} (server listened after {:.2?})",
        got.tools.len(),
        start.elapsed(),
        srv.listening_after
    );
    assert_eq!(got.transport, Transport::StreamableHttp);
    assert_eq!(got.tools.len(), 13, "{:?}", names(&got.tools));
    assert_eq!(got.protocol_version.as_deref(), Some("2025-11-25"));
    assert_eq!(
        got.auth.channel,
        ChannelSecurity::PlainHttp { loopback: true }
    );
    assert!(got.auth.challenge.is_none());
}

#[test]
fn everything_over_old_http_sse_via_fallback() {
    let srv = ServerProcess::node(&node_bin("mcp-server-everything"), &["sse"]);
    let start = Instant::now();
    let got = introspect_http(&srv.url("/sse"), &[], &Options::default())
        .unwrap_or_else(|e| panic!("{e}"));
    eprintln!(
        "server-everything HTTP+SSE: {} tools in {:.2?}",
        got.tools.len(),
        start.elapsed()
    );
    assert_eq!(got.transport, Transport::Sse);
    assert_eq!(got.tools.len(), 13, "{:?}", names(&got.tools));
}
