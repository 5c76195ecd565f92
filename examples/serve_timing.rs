//! How fast `mcprisk serve` answers, measured from outside as a client sees it:
//!
//! * spawn to `tools/list` answered: the process is started, `initialize`, `notifications/
//!   initialized` and `tools/list` are written at once, and the clock stops when the
//!   `tools/list` answer has been read (best and median of RUNS fresh processes);
//! * `lookup_server` in a running server: the round trip of one `tools/call` for several kinds
//!   of name (an exact id, a package, a close spelling, a vendor), median and 95th percentile;
//! * memory: the server's peak resident set (`VmHWM` in /proc) after all of that.
//!
//! ```sh
//! cargo build --release && cargo run --release --example serve_timing -- [BINARY] [RUNS]
//! ```
//!
//! `scripts/bench-serve.sh` runs it. Nothing here asserts a time: a shared machine makes any
//! fixed bound flaky, so the numbers are printed for a person to judge.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Server {
    fn spawn(bin: &str) -> Server {
        let mut child = Command::new(bin)
            .arg("serve")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start mcprisk serve");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Server {
            child,
            stdin,
            stdout,
        }
    }

    fn send(&mut self, line: &str) {
        self.stdin.write_all(line.as_bytes()).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
    }

    fn read(&mut self) -> String {
        let mut line = String::new();
        let n = self.stdout.read_line(&mut line).unwrap();
        assert!(n > 0, "the server closed its output");
        line
    }

    /// Peak resident set in KiB.
    fn peak_kib(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).ok()?;
        status
            .lines()
            .find(|l| l.starts_with("VmHWM:"))?
            .split_whitespace()
            .nth(1)?
            .parse()
            .ok()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const LIST: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let bin = args
        .next()
        .unwrap_or_else(|| "target/release/mcprisk".to_string());
    let runs: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(30);

    // Spawn to tools/list answered, on fresh processes.
    let mut spawn = Vec::with_capacity(runs);
    for _ in 0..runs + 3 {
        let start = Instant::now();
        let mut s = Server::spawn(&bin);
        s.send(INIT);
        s.send(INITIALIZED);
        s.send(LIST);
        let init = s.read();
        let list = s.read();
        let took = start.elapsed();
        assert!(init.contains("\"protocolVersion\""), "{init}");
        assert!(list.contains("lookup_server"), "{list}");
        spawn.push(took);
    }
    let mut spawn = spawn.split_off(3); // the first runs warm the page cache
    spawn.sort();
    println!(
        "spawn to tools/list answered ({runs} processes): best {:.2} ms, median {:.2} ms, p95 {:.2} ms",
        ms(spawn[0]),
        ms(percentile(&spawn, 0.5)),
        ms(percentile(&spawn, 0.95))
    );

    // lookup_server round trips in one running server.
    let mut s = Server::spawn(&bin);
    s.send(INIT);
    s.send(INITIALIZED);
    s.read();
    let names = [
        "io.github.plgonzalezrx8/proxmox-mcp",
        "@modelcontextprotocol/server-filesystem",
        "proxmx-mcp",
        "stripe",
        "github",
    ];
    let mut id = 10u64;
    for name in names {
        let mut times = Vec::new();
        for _ in 0..(runs * 4).max(50) {
            id += 1;
            let call = format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"lookup_server","arguments":{{"name":"{name}"}}}}}}"#
            );
            let start = Instant::now();
            s.send(&call);
            let answer = s.read();
            times.push(start.elapsed());
            assert!(answer.contains("\"match\""), "{answer}");
        }
        times.sort();
        println!(
            "lookup_server {name:<42} median {:.3} ms, p95 {:.3} ms",
            ms(percentile(&times, 0.5)),
            ms(percentile(&times, 0.95))
        );
    }
    match s.peak_kib() {
        Some(kib) => println!(
            "peak memory of the server after those calls: {:.1} MiB (VmHWM)",
            kib as f64 / 1024.0
        ),
        None => println!("peak memory: /proc is not available here"),
    }
}
