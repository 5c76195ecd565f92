//! Bad input, end to end: every malformed tool list, rules file or flag ends with exit 2 and a
//! message on stderr that says what was wrong and where, never a panic, and never a file written
//! (or left half-written, or a temporary file left behind) when `-o FILE` was given.
//! A tool list with some malformed tools is the exception: those are reported in `errors`, the
//! rest are assessed, and the exit code is 0.
//!
//! Small inputs live in tests/data/bad/; big ones (100 MB, 10,000-deep) are made in a temp dir.

use assert_cmd::Command;
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn bad(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/bad")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

fn good() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/labels/tools/mcp-server-time.json")
        .to_string_lossy()
        .into_owned()
}

fn mcprisk() -> Command {
    let mut cmd = Command::cargo_bin("mcprisk").unwrap();
    cmd.env("NO_COLOR", "1").timeout(Duration::from_secs(60));
    cmd
}

/// The names in a directory, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Runs `mcprisk ARGS` (with `stdin`, if any) and checks it failed cleanly: exit 2, one
/// `mcprisk: error:` message holding every one of `needles`, no panic, nothing on stdout.
/// Then runs it again with `-o FILE` into an empty directory, and once more with `-o` naming a
/// file that already exists, and checks nothing was created or changed.
fn fails(args: &[&str], stdin: Option<&[u8]>, needles: &[&str]) -> String {
    let run = |extra: &[&str]| {
        let mut cmd = mcprisk();
        cmd.args(args).args(extra);
        if let Some(input) = stdin {
            cmd.write_stdin(input.to_vec());
        }
        cmd.output().unwrap()
    };

    let out = run(&[]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(
        out.status.code(),
        Some(2),
        "mcprisk {args:?}: expected exit 2; stderr: {stderr}"
    );
    assert!(
        !stderr.contains("panicked"),
        "mcprisk {args:?} panicked: {stderr}"
    );
    assert!(
        stderr.starts_with("mcprisk: error: "),
        "mcprisk {args:?}: stderr does not start with the error: {stderr}"
    );
    for needle in needles {
        assert!(
            stderr.contains(needle),
            "mcprisk {args:?}: stderr lacks {needle:?}: {stderr}"
        );
    }
    assert!(
        out.stdout.is_empty(),
        "mcprisk {args:?}: wrote to stdout: {}",
        String::from_utf8_lossy(&out.stdout)
    );

    // -o into an empty directory: nothing may appear there (no file, no temp file).
    if args.first().is_some_and(|a| *a == "scan" || *a == "policy") {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.json");
        let out = run(&["-o", target.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "mcprisk {args:?} -o");
        assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"));
        assert_eq!(
            listing(dir.path()),
            Vec::<String>::new(),
            "mcprisk {args:?} -o: left files behind"
        );

        // -o over an existing file: it keeps its old content, and nothing else appears.
        std::fs::write(&target, "previous report\n").unwrap();
        let out = run(&["-o", target.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "mcprisk {args:?} -o existing");
        assert_eq!(
            std::fs::read_to_string(&target).unwrap(),
            "previous report\n",
            "mcprisk {args:?} -o: the existing file was changed"
        );
        assert_eq!(listing(dir.path()), vec!["out.json".to_string()]);
    }
    stderr
}

/// `fails` for both `scan` (table and JSON) and `policy` with the same target arguments.
fn every_command_fails(target: &[&str], stdin: Option<&[u8]>, needles: &[&str]) {
    for head in [
        &["scan"][..],
        &["scan", "--format", "json"][..],
        &["policy"][..],
        &["policy", "--flavor", "claude-code"][..],
    ] {
        let args: Vec<&str> = head.iter().chain(target).copied().collect();
        fails(&args, stdin, needles);
    }
}

#[test]
fn invalid_json_says_line_and_column() {
    let f = bad("invalid.json");
    every_command_fails(
        &["--tools", &f],
        None,
        &["invalid.json", "invalid JSON", "line 4, column 1"],
    );
}

#[test]
fn a_string_is_not_a_tool_list() {
    let f = bad("string.json");
    every_command_fails(&["--tools", &f], None, &["string.json", "found a string"]);
}

#[test]
fn a_number_is_not_a_tool_list() {
    let f = bad("number.json");
    every_command_fails(&["--tools", &f], None, &["number.json", "found a number"]);
}

#[test]
fn tools_must_be_an_array() {
    let f = bad("tools-number.json");
    every_command_fails(
        &["--tools", &f],
        None,
        &[
            "tools-number.json",
            "\"tools\" must be an array",
            "a number",
        ],
    );
}

#[test]
fn an_object_without_tools_is_refused() {
    let f = bad("no-tools.json");
    every_command_fails(
        &["--tools", &f],
        None,
        &["no-tools.json", "without \"tools\""],
    );
}

#[test]
fn a_json_rpc_error_response_is_refused_with_its_message() {
    let f = bad("jsonrpc-error.json");
    every_command_fails(
        &["--tools", &f],
        None,
        &[
            "jsonrpc-error.json",
            "JSON-RPC",
            "error",
            "Method not found",
        ],
    );
}

#[test]
fn json_rpc_result_without_tools_is_refused() {
    fails(
        &["scan", "--tools", "-"],
        Some(br#"{"jsonrpc":"2.0","id":1,"result":{"resources":[]}}"#),
        &["standard input", "result.tools"],
    );
    fails(
        &["scan", "--tools", "-"],
        Some(br#"{"jsonrpc":"2.0","id":1,"result":{"tools":{"a":1}}}"#),
        &[
            "standard input",
            "\"result.tools\" must be an array",
            "an object",
        ],
    );
}

#[test]
fn invalid_utf8_says_where() {
    let f = bad("latin1.json");
    every_command_fails(
        &["--tools", &f],
        None,
        &["latin1.json", "not valid UTF-8", "line 2, column 16"],
    );
}

#[test]
fn an_empty_file_is_refused() {
    let f = bad("empty.json");
    every_command_fails(&["--tools", &f], None, &["empty.json", "is empty"]);
}

#[test]
fn empty_stdin_is_refused() {
    every_command_fails(
        &["--tools", "-"],
        Some(b""),
        &["standard input", "is empty"],
    );
    fails(
        &["scan", "--tools", "-"],
        Some(b" \n\t\n"),
        &["standard input", "is empty"],
    );
}

#[test]
fn truncated_stdin_says_where() {
    fails(
        &["scan", "--tools", "-"],
        Some(b"{\"tools\": [\n  {\"name\": \"a\""),
        &["standard input", "unexpected end of input", "line 2"],
    );
}

#[test]
fn a_directory_is_not_a_tool_list() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    every_command_fails(&["--tools", d], None, &[d, "is a directory"]);
}

#[test]
fn a_missing_file_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such.tools.json");
    let m = missing.to_str().unwrap();
    every_command_fails(&["--tools", m], None, &[m, "cannot open"]);
}

#[test]
fn no_target_is_an_error() {
    fails(&["scan"], None, &["--tools"]);
}

#[test]
fn a_missing_rules_file_is_named() {
    let g = good();
    every_command_fails(
        &["--tools", &g, "--rules", "/nonexistent/rules.yaml"],
        None,
        &["/nonexistent/rules.yaml", "cannot read rules"],
    );
    fails(
        &["rules", "--rules", "/nonexistent/rules.yaml"],
        None,
        &["/nonexistent/rules.yaml"],
    );
}

#[test]
fn invalid_rules_yaml_names_file_and_line() {
    let g = good();
    let syntax = bad("rules-syntax.yaml");
    every_command_fails(
        &["--tools", &g, "--rules", &syntax],
        None,
        &["rules-syntax.yaml", "invalid rules file", "line 6"],
    );
    let unknown = bad("rules-unknown-field.yaml");
    every_command_fails(
        &["--tools", &g, "--rules", &unknown],
        None,
        &["rules-unknown-field.yaml", "line 6", "categry"],
    );
    fails(
        &["rules", "--rules", &syntax],
        None,
        &["rules-syntax.yaml", "line 6"],
    );
}

#[test]
fn rules_that_parse_but_do_not_validate_name_the_rule() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v2.yaml");
    std::fs::write(&path, "version: 2\nrules: []\n").unwrap();
    let p = path.to_str().unwrap();
    let g = good();
    fails(
        &["scan", "--tools", &g, "--rules", p],
        None,
        &[p, "version 2"],
    );
    std::fs::write(
        &path,
        "version: 1\nrules:\n  - id: MR-X001\n    name: no-weight\n    kind: category\n    category: Read\n    when: {verb: [read]}\n    summary: s\n    why: w\n    example: e\n",
    )
    .unwrap();
    fails(
        &["scan", "--tools", &g, "--rules", p],
        None,
        &[p, "MR-X001", "weight"],
    );
}

#[test]
fn a_bad_limit_spec_is_explained() {
    let g = good();
    for (spec, needle) in [
        ("write", "expected CATEGORY=N"),
        ("write=", "whole number"),
        ("write=abc", "whole number"),
        ("write=0", "whole number"),
        ("write=-3", "whole number"),
        ("write=99999999999", "whole number"),
        ("delete=3", "unknown category"),
        ("=5", "unknown category"),
    ] {
        let flag = format!("--limit={spec}");
        every_command_fails(&["--tools", &g, &flag], None, &[needle, spec]);
    }
}

#[test]
fn malformed_tools_are_reported_and_the_rest_assessed() {
    let f = bad("mixed.json");
    let out = mcprisk()
        .args(["scan", "--tools", &f, "--format", "json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let server = &doc["servers"][0];
    let names: Vec<&str> = server["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["read_file", "delete_file"]);
    let errors: Vec<(&str, &str)> = server["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["location"].as_str().unwrap(),
                e["message"].as_str().unwrap(),
            )
        })
        .collect();
    let expected = [
        ("tools[1]", "\"name\" is missing"),
        ("tools[2]", "\"name\" must be a string, found a number"),
        (
            "tools[3]",
            "\"inputSchema\" must be an object, found a string",
        ),
        (
            "tools[4]",
            "\"description\" must be a string, found an object",
        ),
        ("tools[5]", "\"inputSchema\" is missing"),
        ("tools[6]", "\"name\" is empty"),
        (
            "tools[7]",
            "\"annotations\" must be an object, found an array",
        ),
        ("tools[8]", "a tool must be an object, found a string"),
    ];
    assert_eq!(errors, expected);
    // Where the tool had a usable name, the error carries it.
    assert_eq!(server["errors"][2]["tool"], "schema_is_text");
    assert!(server["errors"][0].get("tool").is_none());

    // The table lists the unreadable tools with their locations too.
    let out = mcprisk().args(["scan", "--tools", &f]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let table = String::from_utf8_lossy(&out.stdout);
    for (location, message) in expected {
        assert!(
            table.contains(&format!("{location}: {message}")),
            "table lacks {location}: {table}"
        );
    }

    // And -o writes the report whole.
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("report.json");
    mcprisk()
        .args(["scan", "--tools", &f, "--format", "json", "-o"])
        .arg(&target)
        .assert()
        .code(0);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&target).unwrap()).unwrap();
    assert_eq!(doc["servers"][0]["errors"].as_array().unwrap().len(), 8);
    assert_eq!(listing(dir.path()), ["report.json"]);
}

#[test]
fn malformed_tools_in_a_bare_array_and_json_rpc_say_where() {
    let out = mcprisk()
        .args(["scan", "--tools", "-", "--format", "json"])
        .write_stdin(r#"[{"name":"ok","inputSchema":{}},{"name":null,"inputSchema":{}}]"#)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["servers"][0]["errors"][0]["location"], "[1]");

    let out = mcprisk()
        .args(["scan", "--tools", "-", "--format", "json"])
        .write_stdin(
            r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"ok","inputSchema":{}},{"name":"x","title":7,"inputSchema":{}}]}}"#,
        )
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let e = &doc["servers"][0]["errors"][0];
    assert_eq!(e["location"], "result.tools[1]");
    assert_eq!(e["tool"], "x");
    assert!(e["message"].as_str().unwrap().contains("\"title\""));
}

/// Writes a syntactically plausible tool list of at least `bytes` bytes.
fn write_big_tool_list(path: &Path, bytes: usize) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    f.write_all(b"{\"tools\": [").unwrap();
    let filler = "x".repeat(1000);
    let mut written = 0;
    let mut i = 0;
    while written < bytes {
        let tool = format!(
            "{}{{\"name\": \"tool_{i}\", \"description\": \"{filler}\", \"inputSchema\": {{}}}}",
            if i == 0 { "" } else { "," }
        );
        f.write_all(tool.as_bytes()).unwrap();
        written += tool.len();
        i += 1;
    }
    f.write_all(b"]}\n").unwrap();
    f.flush().unwrap();
}

#[test]
fn a_100_mb_file_fails_fast() {
    let dir = tempfile::tempdir().unwrap();
    let big: PathBuf = dir.path().join("big.tools.json");
    write_big_tool_list(&big, 100 * 1024 * 1024);
    let b = big.to_str().unwrap();

    let start = Instant::now();
    let stderr = fails(&["scan", "--tools", b], None, &[b, "larger than 64 MiB"]);
    // Generous: the size is checked before reading; this only catches reading and parsing it all.
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "took {:?}: {stderr}",
        start.elapsed()
    );
    fails(&["policy", "--tools", b], None, &[b, "larger than 64 MiB"]);

    // The same file through a pipe: read up to the limit, then refused.
    let mut std_cmd = std::process::Command::new(env!("CARGO_BIN_EXE_mcprisk"));
    std_cmd
        .args(["scan", "--tools", "-"])
        .stdin(std::fs::File::open(&big).unwrap());
    // std's Command, not assert_cmd's: assert_cmd replaces stdin with its own buffer.
    let out = std_cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("standard input"), "{stderr}");
    assert!(stderr.contains("larger than 64 MiB"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(out.stdout.is_empty());
}

#[test]
fn a_schema_nested_10000_deep_is_refused_with_where() {
    let dir = tempfile::tempdir().unwrap();
    let depth = 10_000;

    // Nested objects inside one tool's inputSchema.
    let path = dir.path().join("deep-schema.json");
    let doc = format!(
        "{{\"tools\": [{{\"name\": \"deep\", \"inputSchema\": {}{}{}}}]}}",
        "{\"type\": \"object\", \"properties\": {\"x\": ".repeat(depth),
        "{}",
        "}}".repeat(depth)
    );
    std::fs::write(&path, doc).unwrap();
    let p = path.to_str().unwrap();
    every_command_fails(
        &["--tools", p],
        None,
        &[p, "nested too deeply", "line 1, column"],
    );

    // Nested arrays as the whole document, through stdin.
    let doc = "[".repeat(depth) + &"]".repeat(depth);
    fails(
        &["scan", "--tools", "-"],
        Some(doc.as_bytes()),
        &["standard input", "nested too deeply", "line 1, column"],
    );
}

/// A tool list whose one schema is nested `depth` levels deep (60 is under serde_json's 128).
fn deep_but_accepted() -> String {
    let depth = 60;
    let schema = format!(
        "{}{}{}",
        "{\"type\": \"object\", \"properties\": {\"command\": ".repeat(depth),
        "{\"type\": \"string\"}",
        "}}".repeat(depth)
    );
    format!(
        "{{\"tools\": [{{\"name\": \"run_deep\", \"description\": \"Run it.\", \"inputSchema\": {schema}}}]}}"
    )
}

#[test]
fn a_schema_nested_just_under_the_limit_is_assessed() {
    // Deep but accepted: the classifier's bounded walk must cope.
    assert_assessed(&[
        &["scan"][..],
        &["scan", "--format", "json"][..],
        &["policy"][..],
        &["policy", "--flavor", "claude-code"][..],
    ]);
}

#[test]
fn a_schema_nested_just_under_the_limit_renders_md_and_html() {
    assert_assessed(&[
        &["scan", "--format", "md"][..],
        &["scan", "--format", "html"][..],
    ]);
}

fn assert_assessed(commands: &[&[&str]]) {
    let doc = deep_but_accepted();
    for &args in commands {
        let out = mcprisk()
            .args(args)
            .args(["--tools", "-"])
            .write_stdin(doc.clone())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(!out.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn invalid_utf8_and_control_bytes_on_stdin() {
    fails(
        &["scan", "--tools", "-"],
        Some(b"{\"tools\": []}\n\xc3\x28"),
        &["standard input", "not valid UTF-8", "line 2, column 1"],
    );
    fails(
        &["scan", "--tools", "-"],
        Some(b"\x00\x01\x02"),
        &["standard input", "invalid JSON", "line 1, column 1"],
    );
    // A UTF-8 byte-order mark is not JSON either; the message must still say where.
    fails(
        &["scan", "--tools", "-"],
        Some(b"\xef\xbb\xbf{\"tools\": []}"),
        &["standard input", "line 1"],
    );
}

// ---- Secrets and consent (issue 12, items 4, 5, 6) ----

fn misbehave_py() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/servers/misbehave.py")
        .to_string_lossy()
        .into_owned()
}

/// A server command line with a secret in every shape a command line carries one.
fn secret_command() -> Vec<String> {
    [
        "python3",
        "-S",
        &misbehave_py(),
        "ok",
        "--api-key=SEKRET1",
        "--token",
        "SEKRET2",
        "postgres://user:SEKRET3@db.invalid/x",
        "-e",
        "API_KEY=SEKRET4abcdef",
        "--header",
        "Authorization: Bearer SEKRET5",
        "ghp_SEKRET6abcdefgh",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

fn assert_no_secret(what: &str, text: &str) {
    assert!(!text.contains("SEKRET"), "{what} shows a secret:\n{text}");
}

#[test]
fn secrets_in_a_servers_arguments_are_never_shown() {
    let dir = tempfile::tempdir().unwrap();
    for format in ["table", "json", "md", "html", "sarif", "github", "junit"] {
        let lock = dir.path().join(format!("{format}.lock"));
        let out = mcprisk()
            .args(["scan", "--format", format, "--lock", lock.to_str().unwrap()])
            .arg("--")
            .args(secret_command())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{format}: {stderr}");
        if !matches!(format, "sarif" | "github") {
            // (SARIF and annotations list only what is High or above.)
            assert!(stdout.contains("alpha"), "{format}: no tools in\n{stdout}");
        }
        assert_no_secret(format, &stdout);
        assert_no_secret(&format!("{format} (stderr)"), &stderr);
        let locked = std::fs::read_to_string(&lock).unwrap();
        assert_no_secret("the lock file", &locked);
        assert!(locked.contains("<redacted>"), "{locked}");
    }
    // A server that fails: its command line is in the error.
    let mut cmd = secret_command();
    cmd[3] = "crash".into();
    let out = mcprisk().arg("scan").arg("--").args(&cmd).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("out of cheese"), "{stderr}");
    assert_no_secret("the error", &stderr);

    // The consent listing of a config's server.
    let config = dir.path().join(".mcp.json");
    let entry = serde_json::json!({"mcpServers": {"db": {"command": "python3", "args": secret_command()[1..]}}});
    std::fs::write(&config, entry.to_string()).unwrap();
    let stderr = fails(
        &["scan", "--config", config.to_str().unwrap()],
        None,
        &[
            "rerun with --yes",
            "--api-key=<redacted>",
            "<redacted>@db.invalid",
        ],
    );
    assert_no_secret("the consent listing", &stderr);
}

#[test]
fn environment_values_sent_to_a_remote_server_need_consent() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join(".mcp.json");
    std::fs::write(
        &config,
        r#"{"mcpServers": {"remote": {"type": "http", "url": "https://mcp.example.invalid/mcp",
            "headers": {"Authorization": "Bearer ${MCPRISK_TEST_SECRET}"}}}}"#,
    )
    .unwrap();
    let c = config.to_str().unwrap();
    let lock = dir.path().join("mcprisk.lock");
    std::fs::write(&lock, "{\"version\": 1, \"servers\": {}}\n").unwrap();
    let check = ["check", "--lock", lock.to_str().unwrap()];
    for head in [&["scan"][..], &["policy"][..], &check[..]] {
        let mut args = head.to_vec();
        args.extend(["--config", c]);
        let mut cmd = mcprisk();
        cmd.args(&args).env("MCPRISK_TEST_SECRET", "SEKRET7");
        let out = cmd.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        for needle in [
            "rerun with --yes",
            "$MCPRISK_TEST_SECRET",
            "https://mcp.example.invalid/mcp",
            "remote",
        ] {
            assert!(
                stderr.contains(needle),
                "{args:?}: lacks {needle:?}: {stderr}"
            );
        }
        assert_no_secret("the consent listing", &stderr);
    }
}

#[test]
fn environment_values_sent_to_a_loopback_server_need_no_consent() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("requests.log");
    let mut srv = std::process::Command::new("python3")
        .args([misbehave_py().as_str(), "http", "ok", log.to_str().unwrap()])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(srv.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    let port = line.trim().strip_prefix("PORT ").unwrap().to_string();
    let config = dir.path().join(".mcp.json");
    std::fs::write(
        &config,
        format!(
            r#"{{"mcpServers": {{"local": {{"type": "http", "url": "http://127.0.0.1:{port}/mcp",
            "headers": {{"Authorization": "Bearer ${{MCPRISK_TEST_SECRET}}"}}}}}}}}"#
        ),
    )
    .unwrap();
    let out = mcprisk()
        .args([
            "scan",
            "--format",
            "json",
            "--config",
            config.to_str().unwrap(),
        ])
        .env("MCPRISK_TEST_SECRET", "SEKRET8")
        .output()
        .unwrap();
    let _ = srv.kill();
    let _ = srv.wait();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("http_tool"));
    assert!(std::fs::read_to_string(&log).unwrap().contains("auth=yes"));
}

#[test]
fn the_consent_listing_shows_whole_command_lines() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join(".mcp.json");
    let script = format!(
        "echo {}; echo {} ; touch PAYLOAD\nfake: All checks passed",
        "x".repeat(350),
        "y ".repeat(100)
    );
    let entry =
        serde_json::json!({"mcpServers": {"long": {"command": "sh", "args": ["-c", script]}}});
    std::fs::write(&config, entry.to_string()).unwrap();
    let stderr = fails(
        &["scan", "--config", config.to_str().unwrap()],
        None,
        &["rerun with --yes"],
    );
    // Wrapped at spaces, never cut: the words joined again are the whole command line.
    let listing: Vec<&str> = stderr
        .lines()
        .skip_while(|l| !l.contains("long ("))
        .skip(1)
        .take_while(|l| l.starts_with("      "))
        .map(str::trim_start)
        .collect();
    let joined = listing.join(" ");
    assert!(joined.contains(&"x".repeat(350)), "{stderr}");
    assert!(
        joined.ends_with("; touch PAYLOAD\\nfake: All checks passed'"),
        "{stderr}"
    );
    // The newline in the script cannot start a line of its own.
    assert!(!stderr.lines().any(|l| l.starts_with("fake")), "{stderr}");
}

// ---- Hostile text in messages, and catalog add's directory (issue 12, items 9 and 11) ----

/// A record file `catalog add` accepts.
fn record_file(dir: &Path) -> PathBuf {
    let path = dir.join("facts.yaml");
    std::fs::write(
        &path,
        "id: io.github.me/test-srv\nname: Test\naliases: [testsrv]\nsummary: A test server.\npublisher: me\npackages: [{registry: npm, identifier: test-srv, version: 1.0.0}]\ntransports: [stdio]\nidentity: {level: unverified, evidence: [made for a test]}\nauth: {kinds: [none]}\n",
    )
    .unwrap();
    path
}

/// Terminal escapes and other controls that must not reach a terminal raw.
fn raw_controls(s: &str) -> Vec<char> {
    s.chars()
        .filter(|&c| (c.is_control() && c != '\n') || matches!(c, '\u{202a}'..='\u{202e}'))
        .collect()
}

#[test]
fn catalog_add_shows_a_servers_stderr_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let rec = record_file(dir.path());
    let out = mcprisk()
        .args(["catalog", "add", "--record", rec.to_str().unwrap(), "--dir"])
        .arg(dir.path().join("servers"))
        .args(["--", "python3", "-S", &misbehave_py(), "hostile_stderr"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(raw_controls(&stderr), vec![], "{stderr:?}");
    assert!(stderr.contains("\\u{001B}]0;PWNED"), "{stderr}");
    // The fake line stays inside the stderr excerpt, not a line of its own.
    assert!(
        !stderr.lines().any(|l| l.starts_with("All checks passed")),
        "{stderr}"
    );
    assert!(!dir.path().join("servers").exists());
}

#[test]
fn config_file_errors_show_the_files_text_escaped_and_capped() {
    let dir = tempfile::tempdir().unwrap();
    let toml = dir.path().join("config.toml");
    std::fs::write(
        &toml,
        "[mcp_servers.x]\ncommand = \"a\u{1b}]0;PWNED\u{7}\u{1b}[2J\" junk\n",
    )
    .unwrap();
    let stderr = fails(
        &["scan", "--config", toml.to_str().unwrap()],
        None,
        &["config.toml", "invalid TOML", "line 2"],
    );
    assert_eq!(raw_controls(&stderr), vec![], "{stderr:?}");
    assert!(stderr.contains("\\u{001B}]0;PWNED"), "{stderr}");

    let deep = dir.path().join("deep.toml");
    std::fs::write(
        &deep,
        format!("a = {}{}\n", "[".repeat(300_000), "]".repeat(300_000)),
    )
    .unwrap();
    let stderr = fails(
        &["scan", "--config", deep.to_str().unwrap()],
        None,
        &["deep.toml", "invalid TOML"],
    );
    assert!(stderr.len() < 4000, "{} bytes of message", stderr.len());

    let json = dir.path().join(".mcp.json");
    std::fs::write(
        &json,
        format!(
            "{{\"mcpServers\": {{\"x\u{1b}[2J\": {} }}",
            "[".repeat(200_000)
        ),
    )
    .unwrap();
    let stderr = fails(
        &["scan", "--config", json.to_str().unwrap()],
        None,
        &[".mcp.json", "invalid JSON"],
    );
    assert_eq!(raw_controls(&stderr), vec![], "{stderr:?}");
    assert!(stderr.len() < 4000, "{} bytes of message", stderr.len());
}

#[test]
fn catalog_add_does_not_write_through_a_symlink_in_its_directory() {
    let dir = tempfile::tempdir().unwrap();
    let rec = record_file(dir.path());
    let servers = dir.path().join("servers");
    std::fs::create_dir(&servers).unwrap();
    let outside = dir.path().join("outside.txt");
    // A dangling link where the record would go, pointing out of the directory.
    std::os::unix::fs::symlink(&outside, servers.join("io.github.me--test-srv.yaml")).unwrap();
    let tools =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/labels/tools/server-memory.json");
    let add = |force: bool| {
        let mut cmd = mcprisk();
        cmd.args(["catalog", "add", "--record", rec.to_str().unwrap(), "--dir"])
            .arg(&servers)
            .arg("--tools")
            .arg(&tools);
        if force {
            cmd.arg("--force");
        }
        cmd.output().unwrap()
    };
    let out = add(false);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("symbolic link"), "{stderr}");
    assert!(!outside.exists(), "wrote through the link");
    // Even with --force, the record is written in the directory, never through the link.
    let out = add(true);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!outside.exists(), "wrote through the link with --force");
    let written = servers.join("io.github.me--test-srv.yaml");
    assert!(!std::fs::symlink_metadata(&written)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(std::fs::read_to_string(&written)
        .unwrap()
        .contains("fingerprint: sha256:"));
}

// ---- The lock file and failed servers (issue 12, item 10) ----

#[test]
fn a_failed_scan_keeps_the_servers_lock_entry() {
    let dir = tempfile::tempdir().unwrap();
    let tools = dir.path().join("weather-tools.json");
    std::fs::write(
        &tools,
        r#"[{"name": "get_weather", "description": "Get the weather.", "inputSchema": {"type": "object"}}]"#,
    )
    .unwrap();
    let mutable = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/servers/mutable.py");
    let cfg = dir.path().join(".mcp.json");
    std::fs::write(
        &cfg,
        serde_json::json!({"mcpServers": {
            "weather": {"command": "python3", "args": [mutable, tools]},
        }})
        .to_string(),
    )
    .unwrap();
    let lock = dir.path().join("mcprisk.lock");
    let scan = |extra_cfg: Option<&Path>| {
        let mut cmd = mcprisk();
        cmd.args(["scan", "--yes", "--format", "json", "--lock"])
            .arg(&lock)
            .arg("--config")
            .arg(&cfg);
        if let Some(c) = extra_cfg {
            cmd.arg("--config").arg(c);
        }
        cmd.output().unwrap()
    };
    let out = scan(None);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let locked = std::fs::read_to_string(&lock).unwrap();
    assert!(locked.contains("get_weather"), "{locked}");

    // The server now fails (its tool list is gone), and a new server fails too.
    std::fs::remove_file(&tools).unwrap();
    let other = dir.path().join("other.json");
    std::fs::write(
        &other,
        serde_json::json!({"mcpServers": {"broken": {"command": "/nonexistent/server"}}})
            .to_string(),
    )
    .unwrap();
    let out = scan(Some(&other));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("is kept as it was"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(&lock).unwrap(),
        locked,
        "the lock entry of a server that failed was overwritten"
    );
}

// ---- Hostile characters in JSON, policies and Markdown; a closed pipe (issue 12, item 13) ----

/// A tool list with C1 controls, bidi overrides and invisible characters in names, descriptions
/// and schemas, and text GitHub would autolink.
fn hostile_chars_list(dir: &Path) -> PathBuf {
    let path = dir.join("hostile-chars.json");
    let doc = serde_json::json!({"tools": [
        {"name": "get_x\u{9b}31m\u{202e}evil", "description": "Reads \u{202e}txt.exe \u{85} \u{200b}. See www.evil.example or WWW.x.y; mail admin@evil.example, ping @octocat.",
         "inputSchema": {"type": "object", "properties": {"q\u{202e}": {"type": "string", "description": "x\u{9b}y"}}}},
        {"name": "delete_\u{202e}all", "description": "Deletes everything.", "inputSchema": {"type": "object"}},
        {"name": "get_www.evil.example_admin@evil.example", "title": "See WWW.evil.example, ping @octocat",
         "description": "Gets a page.", "inputSchema": {"type": "object"}},
        {"name": "run_\u{2066}command", "description": "Runs a shell command.",
         "inputSchema": {"type": "object", "properties": {"method": {"type": "string", "enum": ["GET", "DEL\u{202e}ETE"]}, "command": {"type": "string"}}}}
    ]});
    std::fs::write(&path, doc.to_string()).unwrap();
    path
}

/// Characters that must be escaped in every document mcprisk writes.
fn hidden_in(s: &str) -> Vec<char> {
    s.chars()
        .filter(|&c| {
            (c.is_control() && c != '\n')
                || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
        })
        .collect()
}

#[test]
fn json_and_policies_escape_controls_and_bidi_characters() {
    let dir = tempfile::tempdir().unwrap();
    let list = hostile_chars_list(dir.path());
    let l = list.to_str().unwrap();
    let lock = dir.path().join("mcprisk.lock");
    let runs: Vec<Vec<&str>> = vec![
        vec![
            "scan",
            "--format",
            "json",
            "--tools",
            l,
            "--lock",
            lock.to_str().unwrap(),
        ],
        vec!["policy", "--tools", l],
        vec!["policy", "--flavor", "claude-code", "--tools", l],
        vec!["policy", "--flavor", "intercept", "--tools", l],
        vec!["policy", "--flavor", "agentgateway", "--tools", l],
    ];
    for args in runs {
        let out = mcprisk().args(&args).output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(hidden_in(&stdout), vec![], "{args:?}:\n{stdout}");
        // Escaped, not dropped: the documents still name the tools the server sent.
        let back: Value = if args.contains(&"intercept") || args.contains(&"agentgateway") {
            serde_saphyr::from_str(&stdout).unwrap()
        } else {
            serde_json::from_str(&stdout).unwrap()
        };
        if args[0] == "scan" {
            assert_eq!(
                back["servers"][0]["tools"][0]["name"],
                "get_x\u{9b}31m\u{202e}evil"
            );
        }
        if args.contains(&"intercept") || args == ["policy", "--tools", l] {
            assert!(back.to_string().contains("delete_\u{202e}all"), "{back}");
        }
    }
    let locked = std::fs::read_to_string(&lock).unwrap();
    assert_eq!(hidden_in(&locked), vec![], "{locked}");
}

#[test]
fn markdown_has_no_autolinks_or_mentions() {
    let dir = tempfile::tempdir().unwrap();
    let list = hostile_chars_list(dir.path());
    let out = mcprisk()
        .args(["scan", "--format", "md", "--tools", list.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let full = String::from_utf8(out.stdout).unwrap();
    // Outside fenced code blocks (where nothing is linked).
    let md: String = full
        .split("\n```")
        .step_by(2)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(md.contains("evil.example"), "{md}");
    assert!(!md.to_ascii_lowercase().contains("www."), "{md}");
    for (i, _) in md.match_indices('@') {
        assert!(
            md[i..].starts_with("@<sub></sub>"),
            "a bare @ in: {}",
            &md[i.saturating_sub(20)..]
        );
    }
}

#[test]
fn a_closed_stdout_ends_quietly() {
    // Reports far larger than a pipe holds, so mcprisk is still writing when the pipe closes.
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.json");
    write_big_tool_list(&big, 4 * 1024 * 1024);
    for format in ["json", "md", "table"] {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_mcprisk"))
            .args(["scan", "--format", format, "--tools"])
            .arg(&big)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Like `| head -1`: read one line, then close the pipe.
        let mut first = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(child.stdout.take().unwrap()),
            &mut first,
        )
        .unwrap();
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!first.is_empty());
        assert_eq!(out.status.code(), Some(0), "{format}: {stderr}");
        assert!(stderr.is_empty(), "{format}: {stderr}");
    }
}

// ---- Tokens out of the command line (issue 12, item 13) ----

#[test]
fn header_env_sends_a_token_that_is_not_on_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("requests.log");
    let mut srv = std::process::Command::new("python3")
        .args([misbehave_py().as_str(), "http", "ok", log.to_str().unwrap()])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(srv.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    let url = format!(
        "http://127.0.0.1:{}/mcp",
        line.trim().strip_prefix("PORT ").unwrap()
    );
    let out = mcprisk()
        .args(["scan", "--format", "json", "--url", &url])
        .args(["--header-env", "Authorization=MCPRISK_TEST_AUTH"])
        .env("MCPRISK_TEST_AUTH", "Bearer SEKRET9")
        .output()
        .unwrap();
    let missing = mcprisk()
        .args([
            "scan",
            "--url",
            &url,
            "--header-env",
            "Authorization=MCPRISK_UNSET_VAR",
        ])
        .env_remove("MCPRISK_UNSET_VAR")
        .output()
        .unwrap();
    let _ = srv.kill();
    let _ = srv.wait();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stdout.contains("http_tool"), "{stdout}");
    assert_no_secret("the report", &stdout);
    assert_no_secret("stderr", &stderr);
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    assert!(
        doc["servers"][0]["auth"]
            .to_string()
            .contains("Authorization"),
        "{doc}"
    );
    assert!(std::fs::read_to_string(&log).unwrap().contains("auth=yes"));
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert_eq!(missing.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("MCPRISK_UNSET_VAR is not set"), "{stderr}");
}

/// The first server of `scan --format json` on a tool list in `tests/data/hostile/`.
fn scanned_hostile(file: &str) -> Value {
    let list = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/hostile")
        .join(file);
    let out = mcprisk()
        .args(["scan", "--format", "json", "--tools"])
        .arg(&list)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    doc["servers"][0].take()
}

/// The category of the tool `name` in a scanned server.
fn category_in(s: &Value, name: &str) -> String {
    s["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap()["category"]
        .as_str()
        .unwrap()
        .to_string()
}

/// The findings of `rule` in a scanned server, in report order.
fn findings_of<'a>(s: &'a Value, rule: &'a str) -> impl Iterator<Item = &'a Value> {
    s["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(move |f| f["rule"] == rule)
}

/// The tools of a scanned server that carry a finding of `rule`, in report order.
fn tools_with_finding<'a>(s: &'a Value, rule: &'a str) -> Vec<&'a str> {
    findings_of(s, rule)
        .map(|f| f["tool"].as_str().unwrap())
        .collect()
}

/// Asserts that exactly `tools` carry a finding of `rule`, in report order; on failure it shows
/// every finding of the server.
fn assert_finding_on(s: &Value, rule: &str, tools: &[&str]) {
    assert_eq!(tools_with_finding(s, rule), tools, "{}", s["findings"]);
}

/// Issue 12, item 1: a read word in the name must not hide what the description says the tool
/// does. Each of these read-named tools deletes, runs a shell, or moves money.
#[test]
fn a_read_word_in_the_name_does_not_hide_what_the_tool_does() {
    let s = scanned_hostile("deceptive-names.json");
    assert_eq!(category_in(&s, "get_status"), "Destructive");
    assert_eq!(category_in(&s, "list_files"), "Execute");
    assert_eq!(category_in(&s, "view_balance"), "Financial");
    assert_eq!(category_in(&s, "search"), "Execute");
    let deceptive = tools_with_finding(&s, "MR-F107");
    for name in ["get_status", "list_files", "view_balance", "search"] {
        assert!(
            deceptive.contains(&name),
            "no deceptive-name finding for {name}: {deceptive:?}"
        );
    }
    assert_ne!(s["grade"], "A");
}

/// A tool that sends, uploads or posts a local file named by its path is reported (MR-F110),
/// without changing its verdict. A path that is a place in remote storage (the content comes in
/// its own argument) or an API's path, a read of a local file, and a message with no file are not.
#[test]
fn a_tool_that_sends_a_local_file_by_its_path_is_a_finding() {
    let s = scanned_hostile("sends-local-files.json");
    assert_finding_on(&s, "MR-F110", &["send_email", "upload_file", "post_tweet"]);
    assert_eq!(category_in(&s, "upload_file"), "Write");
    assert_eq!(category_in(&s, "read_file"), "Read");
}

/// A tool that uses a key or certificate file the caller names by its path is reported
/// (MR-F111), whatever its argument's spelling. A `key_path` into a settings tree, an API's file
/// key and a key passed as a value (that is MR-F105's) are not.
#[test]
fn a_tool_that_uses_a_key_file_the_caller_names_is_a_finding() {
    let s = scanned_hostile("key-files.json");
    assert_finding_on(
        &s,
        "MR-F111",
        &["ssh_connect", "sign_invoice", "add_server"],
    );
    assert_eq!(category_in(&s, "lookup_setting"), "Read");
}

/// A tool that approves, authorizes or confirms a request waiting for someone's decision is
/// reported (MR-F112). Reading or asking for an approval, and approving what waits for no one,
/// are not.
#[test]
fn a_tool_that_approves_a_pending_request_is_a_finding() {
    let s = scanned_hostile("approves-pending.json");
    assert_finding_on(
        &s,
        "MR-F112",
        &["approve_request", "confirmOrder", "authorize_device"],
    );
    assert_eq!(category_in(&s, "get_approval"), "Read");
}

/// Hostile text cannot hide a phrase by breaking it across lines, tabs, doubled spaces or
/// Unicode spaces (no-break, em, thin, ideographic): the poisoning phrases and the per-call
/// payments are found as if written on one line, and the evidence quotes them on one line.
#[test]
fn phrases_split_by_whitespace_are_still_found() {
    let s = scanned_hostile("whitespace-evasion.json");
    assert_finding_on(&s, "MR-F101", &["get_weather", "get_time", "get_forecast"]);
    let quoted: Vec<&str> = findings_of(&s, "MR-F101")
        .map(|f| f["message"].as_str().unwrap())
        .collect();
    assert!(
        quoted[0].ends_with("\"Ignore previous instructions\"")
            && quoted[1].ends_with("\"Do not tell the user\"")
            && quoted[2].ends_with("\"Do not tell the user\""),
        "{quoted:?}"
    );
    assert_eq!(category_in(&s, "get_token_risk"), "Financial");
    assert_eq!(category_in(&s, "get_price_feed"), "Financial");
    assert_eq!(category_in(&s, "get_status"), "Read");
}

/// Hostile text cannot hide a word from the rules while the calling model still reads it: a
/// zero-width space inside "purge", a Cyrillic letter inside "destroy" or "delete" (an enum
/// value too), mathematical bold letters spelling "deletes". Each tool gets the plain spelling's
/// verdict and a finding (MR-F102) that names what was hidden; a formula's Greek letters and a
/// Russian description are neither unmasked nor reported.
#[test]
fn words_masked_by_hidden_or_look_alike_characters_get_their_plain_verdict() {
    let s = scanned_hostile("masked-words.json");
    for name in [
        "pur\u{200b}ge_database",
        "d\u{0435}stroy_vm",
        "manage_user",
        "sync_folder",
    ] {
        assert_eq!(category_in(&s, name), "Destructive", "{name}");
    }
    assert_finding_on(
        &s,
        "MR-F102",
        &[
            "pur\u{200b}ge_database",
            "d\u{0435}stroy_vm",
            "manage_user",
            "get_quote",
            "sync_folder",
        ],
    );
    assert_finding_on(&s, "MR-F101", &["get_quote"]);
    let look_alike = findings_of(&s, "MR-F102")
        .find(|f| f["tool"] == "d\u{0435}stroy_vm")
        .expect("the finding on the disguised name");
    assert!(
        look_alike["message"]
            .as_str()
            .unwrap()
            .contains("(look-alike letter) in description, name"),
        "{look_alike}"
    );
    assert_eq!(category_in(&s, "calc_reynolds"), "Read");
    assert_eq!(category_in(&s, "get_article"), "Read");
    // The terminal shows the disguise as it shows hidden characters.
    let list = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/hostile/masked-words.json");
    let out = mcprisk()
        .args(["scan", "--tools"])
        .arg(&list)
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains("d\\u{0435}stroy_vm") && !table.contains("d\u{0435}stroy"),
        "{table}"
    );
}

/// A description that claims the tool is read-only while its action word creates, sends, runs or
/// deletes is reported (MR-F109), and the claim lowers no verdict. A read that says so, and a
/// read-only mode or query named in a description, are not claims of that kind.
#[test]
fn a_claim_of_read_only_beside_an_acting_name_is_a_finding() {
    let s = scanned_hostile("claims-read-only.json");
    assert_finding_on(
        &s,
        "MR-F109",
        &["assign_task", "execute_code", "create_agent"],
    );
    assert_eq!(category_in(&s, "execute_code"), "Execute");
    assert_eq!(category_in(&s, "delete_rule"), "Destructive");
}
