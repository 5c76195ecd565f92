//! The wire layer against a misbehaving server (tests/servers/misbehave.py, standard library
//! only): each fault ends within its timeout with a clear error, or with every good tool kept,
//! and leaves no process behind. Everything binds and connects to 127.0.0.1 only.

mod common;

use std::sync::RwLock;
use std::time::{Duration, Instant};

use common::*;
use mcprisk::targets::mcp::{
    introspect_http, introspect_stdio, Limit, Options, StdioCommand, Step, Transport, WireError,
};

/// The 50 MB tests take a core each for seconds; timing-sensitive tests do not run beside them.
static HEAVY: RwLock<()> = RwLock::new(());

/// Runs a misbehave.py stdio mode; asserts it ended within `bound` (plus the kill grace and a
/// second of slack for a loaded 2-core machine) and left no process.
fn run(
    mode: &str,
    o: &Options,
    bound: Duration,
) -> Result<mcprisk::targets::mcp::Introspection, WireError> {
    let t = Tracked::misbehave(mode);
    let _guard = if mode == "huge" {
        Err(HEAVY.write().unwrap_or_else(|e| e.into_inner()))
    } else {
        Ok(HEAVY.read().unwrap_or_else(|e| e.into_inner()))
    };
    let start = Instant::now();
    let got = introspect_stdio(&t.cmd, o);
    let took = start.elapsed();
    t.assert_gone();
    if mode == "hang_init" {
        assert_eq!(t.pids().len(), 2, "the grandchild was not started");
    }
    let bound = bound + o.kill_grace + Duration::from_secs(1);
    assert!(took < bound, "{mode}: took {took:?}, more than {bound:?}");
    match &got {
        Ok(i) => eprintln!("{mode}: ok, {} tools, {took:.2?}", i.tools.len()),
        Err(e) => eprintln!("{mode}: {took:.2?}: {e}"),
    }
    got
}

#[test]
fn hang_before_initialize_times_out_and_kills_the_group_including_grandchild() {
    let mut o = opts(4.0);
    o.startup_timeout = Duration::from_secs(2);
    let e = run("hang_init", &o, Duration::from_secs(2)).unwrap_err();
    assert!(
        matches!(
            e,
            WireError::Timeout {
                step: Step::Initialize,
                limit: Limit::StartUp(_),
                ..
            }
        ),
        "{e:?}"
    );
    let msg = e.to_string();
    eprintln!("{msg}");
    assert!(msg.contains("misbehave.py hang_init"), "{msg}");
    assert!(
        msg.contains("initialize") && msg.contains("2 s start-up limit"),
        "{msg}"
    );
}

#[test]
fn hang_on_tools_list_hits_the_request_limit() {
    let mut o = opts(4.0);
    o.request_timeout = Duration::from_secs(1);
    let e = run("hang_list", &o, Duration::from_secs(3)).unwrap_err();
    assert!(
        matches!(
            e,
            WireError::Timeout {
                step: Step::ToolsList { page: 1 },
                limit: Limit::Request(_),
                ..
            }
        ),
        "{e:?}"
    );
    assert!(e.to_string().contains("tools/list page 1"), "{e}");
}

#[test]
fn overall_timeout_bounds_everything() {
    let mut o = opts(1.0);
    o.startup_timeout = Duration::from_secs(5);
    o.request_timeout = Duration::from_secs(5);
    let e = run("hang_list", &o, Duration::from_secs(1)).unwrap_err();
    assert!(
        matches!(
            e,
            WireError::Timeout {
                limit: Limit::Overall(_),
                ..
            }
        ),
        "{e:?}"
    );
}

#[test]
fn crash_midway_reports_exit_status_and_stderr() {
    let e = run("crash", &opts(3.0), Duration::from_secs(3)).unwrap_err();
    let msg = e.to_string();
    eprintln!("{msg}");
    assert!(
        matches!(
            e,
            WireError::Exited {
                step: Step::ToolsList { page: 1 },
                ..
            }
        ),
        "{e:?}"
    );
    assert!(msg.contains("exited with status 3"), "{msg}");
    assert!(msg.contains("fatal: out of cheese"), "{msg}");
}

#[test]
fn garbage_lines_are_skipped_and_counted_ping_answered_notifications_ignored() {
    let got = run("garbage", &opts(3.0), Duration::from_secs(3)).unwrap();
    assert_eq!(names(&got.tools), vec!["after_ping"]);
    assert!(
        got.warnings
            .iter()
            .any(|w| w.contains("skipped 4 non-JSON-RPC line(s)")),
        "{:?}",
        got.warnings
    );
}

#[test]
fn one_malformed_tool_among_a_hundred_keeps_all_hundred_raw() {
    let got = run("malformed", &opts(3.0), Duration::from_secs(3)).unwrap();
    assert_eq!(got.tools.len(), 100);
    assert_eq!(got.tools[42]["name"], 42);
    assert_eq!(got.tools[42]["inputSchema"], "nope");
    // Unknown fields survive as sent.
    assert_eq!(got.tools[0]["annotations"]["vendorExtra"]["keep"], "me");
    assert_eq!(got.tools[99]["name"], "tool_099");
}

#[test]
fn never_ending_cursor_stops_at_max_pages_with_a_warning() {
    let mut o = opts(3.0);
    o.max_pages = 50;
    let got = run("endless_cursor", &o, Duration::from_secs(3)).unwrap();
    assert_eq!(got.tools.len(), 50);
    assert!(
        got.warnings
            .iter()
            .any(|w| w.contains("incomplete") && w.contains("50 pages")),
        "{:?}",
        got.warnings
    );
}

#[test]
fn repeated_cursor_stops_with_the_tools_so_far() {
    let got = run("repeat_cursor", &opts(3.0), Duration::from_secs(3)).unwrap();
    assert_eq!(names(&got.tools), vec!["t1", "t2"]);
    assert!(
        got.warnings
            .iter()
            .any(|w| w.contains("repeated an earlier nextCursor")),
        "{:?}",
        got.warnings
    );
}

#[test]
fn fifty_megabyte_response_fails_clearly_over_the_cap() {
    let e = run("huge", &opts(6.0), Duration::from_secs(6)).unwrap_err();
    assert!(
        matches!(
            e,
            WireError::MessageTooLarge {
                step: Step::ToolsList { page: 1 },
                ..
            }
        ),
        "{e:?}"
    );
    assert!(e.to_string().contains("32 MiB limit"), "{e}");
}

#[test]
fn fifty_megabyte_response_is_kept_whole_under_a_larger_cap() {
    let mut o = opts(15.0);
    o.max_message_bytes = 64 << 20;
    let got = run("huge", &o, Duration::from_secs(15)).unwrap();
    assert_eq!(
        got.tools[0]["description"].as_str().unwrap().len(),
        50_000_000
    );
}

#[test]
fn slow_drip_is_cut_at_the_limit() {
    let mut o = opts(4.0);
    o.request_timeout = Duration::from_millis(1500);
    let e = run("drip", &o, Duration::from_secs(3)).unwrap_err();
    assert!(
        matches!(
            e,
            WireError::Timeout {
                step: Step::ToolsList { page: 1 },
                ..
            }
        ),
        "{e:?}"
    );
}

#[test]
fn stateless_2026_server_is_reached_through_server_discover() {
    let got = run("modern", &opts(3.0), Duration::from_secs(3)).unwrap();
    assert_eq!(got.protocol_version.as_deref(), Some("2026-07-28"));
    assert_eq!(names(&got.tools), vec!["stateless_tool"]);
    assert_eq!(got.server_info.unwrap()["name"], "modern");
}

#[test]
fn old_protocol_version_is_accepted() {
    let got = run("old", &opts(3.0), Duration::from_secs(3)).unwrap();
    assert_eq!(got.protocol_version.as_deref(), Some("2024-11-05"));
    assert_eq!(got.tools.len(), 3);
}

#[test]
fn missing_program_is_a_spawn_error_without_env_values() {
    let cmd = StdioCommand {
        program: "/nonexistent/mcp-server".into(),
        args: vec![
            "--db".into(),
            "postgres://admin:hunter2@db.invalid/x".into(),
        ],
        env: vec![("API_KEY".into(), "sk-very-secret".into())],
        cwd: None,
    };
    let e = introspect_stdio(&cmd, &opts(2.0)).unwrap_err();
    let all = format!("{e} {e:?}");
    assert!(matches!(e, WireError::Spawn { .. }), "{e:?}");
    assert!(all.contains("/nonexistent/mcp-server"), "{all}");
    assert!(
        !all.contains("sk-very-secret") && !all.contains("hunter2"),
        "{all}"
    );
}

// ---- HTTP faults ----

fn http_log() -> (tempfile::TempDir, std::path::PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("requests.log");
    (d, p)
}

#[test]
fn http_json_answers_round_trip_session_and_version_and_delete_the_session() {
    let (_d, log) = http_log();
    let srv = ServerProcess::misbehave_http("ok", &log);
    let headers = vec![(
        "Authorization".to_string(),
        "Bearer s3cr3t-token".to_string(),
    )];
    let got = introspect_http(&srv.url("/mcp?key=abc"), &headers, &opts(3.0)).unwrap();
    assert_eq!(names(&got.tools), vec!["http_tool"]);
    assert_eq!(got.transport, Transport::StreamableHttp);
    assert_eq!(got.auth.credential_names, vec!["Authorization"]);
    let log = std::fs::read_to_string(&log).unwrap();
    assert!(
        log.contains("POST /mcp?key=abc session=None version=None auth=yes initialize"),
        "{log}"
    );
    assert!(
        log.contains("session=sess-123 version=2025-06-18 auth=yes notifications/initialized"),
        "{log}"
    );
    assert!(
        log.contains("session=sess-123 version=2025-06-18 auth=yes tools/list"),
        "{log}"
    );
    assert!(
        log.contains("DELETE /mcp?key=abc session=sess-123"),
        "{log}"
    );
}

#[test]
fn http_sse_answers_with_a_ping_first() {
    let (_d, log) = http_log();
    let srv = ServerProcess::misbehave_http("sse_answers", &log);
    let got = introspect_http(&srv.url("/mcp"), &[], &opts(3.0)).unwrap();
    assert_eq!(names(&got.tools), vec!["http_tool"]);
    let log = std::fs::read_to_string(&log).unwrap();
    assert!(log.contains("response:srv-1"), "ping not answered: {log}");
}

#[test]
fn http_401_is_the_auth_posture_with_protected_resource_metadata() {
    let (_d, log) = http_log();
    let srv = ServerProcess::misbehave_http("401", &log);
    let headers = vec![(
        "Authorization".to_string(),
        "Bearer wrong-token".to_string(),
    )];
    let e = introspect_http(&srv.url("/mcp"), &headers, &opts(3.0)).unwrap_err();
    let msg = e.to_string();
    eprintln!("{msg}");
    assert!(!format!("{msg} {e:?}").contains("wrong-token"));
    let auth = e.auth_posture().expect("a 401 carries the auth posture");
    let c = auth.challenge.as_ref().unwrap();
    assert_eq!(c.status, 401);
    assert!(c.www_authenticate[0].starts_with("Bearer realm=\"mcp\""));
    let rm = format!(
        "http://127.0.0.1:{}/.well-known/oauth-protected-resource/mcp",
        srv.port
    );
    assert_eq!(c.resource_metadata_url.as_deref(), Some(rm.as_str()));
    assert_eq!(c.metadata_url.as_deref(), Some(rm.as_str()));
    assert_eq!(
        c.metadata.as_ref().unwrap()["scopes_supported"][0],
        "tools:read"
    );
    assert!(
        msg.contains("requires authorization") && msg.contains("(Authorization) were refused"),
        "{msg}"
    );
    // The metadata request carried no credentials.
    let log = std::fs::read_to_string(&log).unwrap();
    assert!(
        log.contains(
            "GET /.well-known/oauth-protected-resource/mcp session=None version=None auth=no"
        ),
        "{log}"
    );
}

#[test]
fn http_404_tries_both_transports_then_says_so() {
    let (_d, log) = http_log();
    let srv = ServerProcess::misbehave_http("404", &log);
    let e = introspect_http(&srv.url("/mcp"), &[], &opts(3.0)).unwrap_err();
    assert!(matches!(e, WireError::NoTransport { .. }), "{e:?}");
    let msg = e.to_string();
    eprintln!("{msg}");
    assert!(
        msg.contains("Streamable HTTP") && msg.contains("HTTP status 404 Not Found"),
        "{msg}"
    );
    assert!(msg.contains("Old HTTP+SSE"), "{msg}");
}

#[test]
fn http_500_is_a_clear_http_error() {
    let (_d, log) = http_log();
    let srv = ServerProcess::misbehave_http("500", &log);
    let e = introspect_http(&srv.url("/mcp"), &[], &opts(3.0)).unwrap_err();
    assert!(
        matches!(
            e,
            WireError::Http {
                status: 500,
                step: Step::Initialize,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(e.to_string().contains("nothing here for you"), "{e}");
}

#[test]
fn http_broken_sse_stream_is_a_clear_error() {
    let (_d, log) = http_log();
    let srv = ServerProcess::misbehave_http("broken_sse", &log);
    let start = Instant::now();
    let e = introspect_http(&srv.url("/mcp"), &[], &opts(3.0)).unwrap_err();
    assert!(start.elapsed() < Duration::from_secs(3));
    assert_eq!(e.step(), Some(&Step::ToolsList { page: 1 }), "{e:?}");
    let msg = e.to_string();
    eprintln!("{msg}");
    assert!(msg.contains("SSE stream"), "{msg}");
}

#[test]
fn http_sse_keepalive_drip_is_cut_at_the_limit() {
    let (_d, log) = http_log();
    let srv = ServerProcess::misbehave_http("drip", &log);
    let mut o = opts(3.0);
    o.request_timeout = Duration::from_secs(1);
    let start = Instant::now();
    let e = introspect_http(&srv.url("/mcp"), &[], &o).unwrap_err();
    let took = start.elapsed();
    assert!(took < Duration::from_millis(2500), "took {took:?}");
    assert!(
        matches!(
            e,
            WireError::Timeout {
                limit: Limit::Request(_),
                ..
            }
        ),
        "{e:?}"
    );
}

#[test]
fn nothing_listening_is_a_network_error() {
    let port = free_port();
    let e = introspect_http(&format!("http://127.0.0.1:{port}/mcp"), &[], &opts(2.0)).unwrap_err();
    assert!(matches!(e, WireError::Network { .. }), "{e:?}");
    assert!(e.to_string().contains("initialize"), "{e}");
}

// ---- Servers that do not play along with the pipes, and signals (issue 12, items 2, 3, 7) ----

/// Runs `f` on a thread and fails if it has not returned after `outer`: only a broken build
/// hangs that long; the product's own timeout is what must end it.
fn within<T: Send + 'static>(outer: Duration, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(outer)
        .unwrap_or_else(|_| panic!("still running after {outer:?}: the timeout was not honoured"))
}

fn scan_args(head: &[&str], t: &Tracked) -> Vec<String> {
    let mut v: Vec<String> = head.iter().map(|s| s.to_string()).collect();
    v.push("--".into());
    v.extend(cli_args(t));
    v
}

#[test]
fn a_server_that_floods_pings_and_never_reads_its_input_ends_at_the_timeout() {
    let _guard = HEAVY.write().unwrap_or_else(|e| e.into_inner());
    let t = Tracked::misbehave("ping_flood");
    let cmd = t.cmd.clone();
    let o = opts(2.0);
    let got = within(Duration::from_secs(60), move || introspect_stdio(&cmd, &o));
    let e = got.unwrap_err();
    eprintln!("{e}");
    assert!(
        matches!(
            e,
            WireError::Timeout {
                step: Step::Initialize,
                ..
            }
        ),
        "{e:?}"
    );
    t.assert_gone();
}

#[test]
fn ping_flood_through_the_cli_ends_at_the_timeout_with_bounded_memory() {
    let _guard = HEAVY.write().unwrap_or_else(|e| e.into_inner());
    let t = Tracked::misbehave("ping_flood");
    let m = run_mcprisk(
        &scan_args(&["scan", "--timeout", "3"], &t),
        Duration::from_secs(90),
        |_| {},
    );
    eprintln!(
        "ping flood: exit {:?} after {:.2?}, peak RSS {} MiB; {}",
        m.code,
        m.took,
        m.max_rss_kib / 1024,
        m.stderr.trim()
    );
    assert_eq!(m.code, Some(2), "{m:?}");
    assert!(
        m.stderr.contains("no answer during initialize"),
        "{}",
        m.stderr
    );
    assert!(m.max_rss_kib < 150 * 1024, "peak RSS {} KiB", m.max_rss_kib);
    t.assert_gone();
}

#[test]
fn a_tool_list_past_the_total_cap_is_an_error_that_keeps_what_was_read() {
    let _guard = HEAVY.write().unwrap_or_else(|e| e.into_inner());
    let t = Tracked::misbehave("big_pages");
    let m = run_mcprisk(
        &scan_args(&["scan", "--format", "json", "--timeout", "60"], &t),
        Duration::from_secs(120),
        |_| {},
    );
    eprintln!(
        "big pages: exit {:?} after {:.2?}, peak RSS {} MiB; {}",
        m.code,
        m.took,
        m.max_rss_kib / 1024,
        m.stderr.trim()
    );
    t.assert_gone();
    assert_eq!(m.code, Some(2), "{}", m.stderr);
    let doc: serde_json::Value = serde_json::from_str(&m.stdout).expect("a JSON report");
    let server = &doc["servers"][0];
    // Eight pages of 8 MB fit in 64 MiB; the ninth would not.
    assert_eq!(server["tools"].as_array().unwrap().len(), 8, "tools kept");
    let errors = server["errors"].to_string();
    assert!(
        errors.contains("64 MiB") && errors.contains("incomplete"),
        "{errors}"
    );
    assert!(m.stderr.contains("64 MiB"), "{}", m.stderr);
    assert!(
        m.max_rss_kib < 1024 * 1024,
        "peak RSS {} KiB",
        m.max_rss_kib
    );
}

/// Waits until the server has written its pid file with `n` pids.
fn wait_for_pids(t: &Tracked, n: usize) {
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        let got = std::fs::read_to_string(t.pid_file())
            .map(|s| s.split_whitespace().count())
            .unwrap_or(0);
        if got >= n {
            return;
        }
        assert!(Instant::now() < until, "the server did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn signal_ends_the_servers(sig: i32) {
    let _guard = HEAVY.read().unwrap_or_else(|e| e.into_inner());
    let t = Tracked::misbehave("hang_init");
    let m = run_mcprisk(
        &scan_args(&["scan", "--timeout", "60"], &t),
        Duration::from_secs(90),
        |pid| {
            wait_for_pids(&t, 2);
            // SAFETY: a plain signal to our own child.
            unsafe {
                libc::kill(pid, sig);
            }
        },
    );
    eprintln!("signal {sig}: {m:?}");
    assert!(
        m.signal == Some(sig) || m.code == Some(128 + sig),
        "mcprisk did not end by signal {sig}: {m:?}"
    );
    t.assert_gone();
}

#[test]
fn sigterm_ends_the_servers_process_groups() {
    signal_ends_the_servers(libc::SIGTERM);
}

#[test]
fn sighup_ends_the_servers_process_groups() {
    signal_ends_the_servers(libc::SIGHUP);
}

#[test]
fn sigint_ends_the_servers_process_groups() {
    signal_ends_the_servers(libc::SIGINT);
}

#[test]
fn children_that_leave_the_process_group_are_ended_too() {
    let _guard = HEAVY.read().unwrap_or_else(|e| e.into_inner());
    let t = Tracked::misbehave("escape");
    let m = run_mcprisk(
        &scan_args(&["scan", "--format", "json", "--timeout", "20"], &t),
        Duration::from_secs(60),
        |_| {},
    );
    assert_eq!(m.code, Some(0), "{}", m.stderr);
    assert_eq!(t.pids().len(), 3, "the server did not record its escapees");
    t.assert_gone();
}

#[test]
fn in_process_children_that_leave_the_process_group_are_ended_too() {
    let got = run("escape", &opts(10.0), Duration::from_secs(10)).unwrap();
    assert_eq!(got.tools.len(), 3);
}

#[test]
fn pages_past_the_total_cap_stop_the_listing_with_the_earlier_pages_kept() {
    let mut o = opts(30.0);
    o.max_list_bytes = 20 << 20;
    let got = {
        let _guard = HEAVY.write().unwrap_or_else(|e| e.into_inner());
        let t = Tracked::misbehave("big_pages");
        let got = introspect_stdio(&t.cmd, &o);
        t.assert_gone();
        got.unwrap()
    };
    // Two pages of 8 MB fit in 20 MiB; the third would not, and is not kept.
    assert_eq!(names(&got.tools), vec!["big1", "big2"]);
    let why = got.incomplete.expect("an incomplete list is reported");
    assert!(why.contains("20 MiB") && why.contains("page 3"), "{why}");
}
