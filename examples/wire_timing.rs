//! Measures what the wire layer adds on top of a server's own start-up (a benchmark, not a test).
//!
//!     scripts/install-test-servers.sh
//!     cargo run --release --example wire_timing [ROUNDS]
//!
//! For each pinned stdio server: "raw" is the bare minimum any client must wait for (spawn, write
//! initialize, read its answer, write initialized + tools/list, read the list), measured with
//! plain std and no parsing beyond finding the ids; "introspect" is `introspect_stdio` from spawn
//! until it returns with the process group ended. Medians over ROUNDS (default 5). Then all six
//! at once on threads, against the slowest alone.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mcprisk::targets::mcp::{introspect_stdio, Options, StdioCommand};

fn servers(tmp: &Path) -> Vec<(&'static str, StdioCommand)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/servers");
    let node = |n: &str| dir.join("node_modules/.bin").join(n);
    let py = |n: &str| dir.join(".venv/bin").join(n);
    for p in [node("mcp-server-everything"), py("mcp-server-git")] {
        assert!(
            p.exists(),
            "{} missing: run scripts/install-test-servers.sh",
            p.display()
        );
    }
    let repo = tmp.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    Command::new("git")
        .args(["init", "-q"])
        .current_dir(&repo)
        .status()
        .unwrap();
    let cmd = |p: PathBuf, args: &[&str], env: &[(&str, String)]| StdioCommand {
        program: p.display().to_string(),
        args: args.iter().map(|s| s.to_string()).collect(),
        env: env
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect(),
        cwd: None,
    };
    vec![
        (
            "server-everything",
            cmd(node("mcp-server-everything"), &["stdio"], &[]),
        ),
        (
            "server-filesystem",
            cmd(node("mcp-server-filesystem"), &[tmp.to_str().unwrap()], &[]),
        ),
        (
            "server-memory",
            cmd(
                node("mcp-server-memory"),
                &[],
                &[(
                    "MEMORY_FILE_PATH",
                    tmp.join("m.jsonl").display().to_string(),
                )],
            ),
        ),
        (
            "server-github",
            cmd(
                node("mcp-server-github"),
                &[],
                &[("GITHUB_PERSONAL_ACCESS_TOKEN", "dummy".to_string())],
            ),
        ),
        (
            "mcp-server-git",
            cmd(
                py("mcp-server-git"),
                &["--repository", repo.to_str().unwrap()],
                &[],
            ),
        ),
        (
            "mcp-server-time",
            cmd(py("mcp-server-time"), &["--local-timezone", "UTC"], &[]),
        ),
    ]
}

/// The least any client waits: spawn, initialize, initialized + tools/list, list read.
fn raw(cmd: &StdioCommand) -> Duration {
    let start = Instant::now();
    let mut child = Command::new(&cmd.program)
        .args(&cmd.args)
        .envs(cmd.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let wait_for = |out: &mut BufReader<_>, id: &str| {
        let mut line = String::new();
        loop {
            line.clear();
            assert!(
                out.read_line(&mut line).unwrap() > 0,
                "server closed stdout"
            );
            if line.contains(id) && line.contains("\"result\"") {
                return;
            }
        }
    };
    stdin.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"raw\",\"version\":\"0\"}}}\n").unwrap();
    wait_for(&mut out, "\"id\":1");
    stdin.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":{}}\n").unwrap();
    wait_for(&mut out, "\"id\":2");
    let took = start.elapsed();
    unsafe {
        libc::kill(-(child.id() as i32), libc::SIGKILL);
    }
    let _ = child.wait();
    took
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    let tmp = tempfile::tempdir().unwrap();
    let list = servers(tmp.path());
    let opts = Options::default();
    println!(
        "{:<20} {:>10} {:>12} {:>10}",
        "server", "raw", "introspect", "added"
    );
    let mut alone = Vec::new();
    for (name, cmd) in &list {
        let (mut r, mut i) = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            r.push(raw(cmd));
            let s = Instant::now();
            let got = introspect_stdio(cmd, &opts).unwrap_or_else(|e| panic!("{e}"));
            i.push(s.elapsed());
            assert!(!got.tools.is_empty());
        }
        let (r, i) = (median(r), median(i));
        alone.push(i);
        println!(
            "{:<20} {:>10.1?} {:>12.1?} {:>+9.1}ms",
            name,
            r,
            i,
            (i.as_secs_f64() - r.as_secs_f64()) * 1000.0
        );
    }
    let mut together = Vec::new();
    for _ in 0..rounds {
        let s = Instant::now();
        std::thread::scope(|sc| {
            for (_, cmd) in &list {
                let opts = &opts;
                sc.spawn(move || introspect_stdio(cmd, opts).unwrap());
            }
        });
        together.push(s.elapsed());
    }
    let slowest = *alone.iter().max().unwrap();
    let together = median(together);
    println!(
        "all {} at once: {together:.1?}; slowest alone: {slowest:.1?}; ratio {:.2}",
        list.len(),
        together.as_secs_f64() / slowest.as_secs_f64()
    );
}
