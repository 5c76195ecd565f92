//! `mcprisk serve` as the tests start it: over stdio with a line reader that gives up instead
//! of hanging, and over HTTP on 127.0.0.1 port 0 with the address read from its stderr. Both
//! are killed when dropped.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;

/// How long a test waits for one answer before it calls the server hung.
pub const ANSWER_WAIT: Duration = Duration::from_secs(60);

pub fn binary() -> &'static str {
    env!("CARGO_BIN_EXE_mcprisk")
}

/// `mcprisk serve` over stdio.
pub struct StdioServer {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    next_id: u64,
}

impl StdioServer {
    pub fn start(args: &[&str]) -> Self {
        let mut child = Command::new(binary())
            .arg("serve")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start mcprisk serve");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        StdioServer {
            stdin: child.stdin.take(),
            child,
            lines: rx,
            next_id: 100,
        }
    }

    /// Started and initialized at `version`.
    pub fn initialized(version: &str) -> Self {
        let mut s = Self::start(&[]);
        let r = s.call("initialize", json!({"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}));
        assert!(r.get("result").is_some(), "{r}");
        s.send_raw(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        s
    }

    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(bytes).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// The next line the server writes, raw.
    pub fn next_line(&mut self) -> String {
        self.lines
            .recv_timeout(ANSWER_WAIT)
            .expect("mcprisk serve did not answer (hung or exited)")
    }

    pub fn next(&mut self) -> Value {
        serde_json::from_str(&self.next_line()).expect("an answer that is JSON")
    }

    /// Sends a request and returns the whole response message.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send_raw(serde_json::to_string(&msg).unwrap().as_bytes());
        let r = self.next();
        assert_eq!(r["id"], json!(id), "{r}");
        r
    }

    /// `tools/call` and its result (panics on a JSON-RPC error).
    pub fn tool(&mut self, name: &str, args: Value) -> Value {
        let r = self.call("tools/call", json!({"name": name, "arguments": args}));
        r.get("result").cloned().unwrap_or_else(|| panic!("{r}"))
    }

    /// Closes stdin and returns the exit status (the server must end by itself).
    pub fn close(mut self) -> std::process::ExitStatus {
        drop(self.stdin.take());
        let deadline = std::time::Instant::now() + ANSWER_WAIT;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "mcprisk serve did not exit when its input ended"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for StdioServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `mcprisk serve --http 127.0.0.1:0`.
pub struct HttpServer {
    child: Child,
    /// `http://127.0.0.1:PORT/mcp`.
    pub url: String,
}

impl HttpServer {
    pub fn start() -> Self {
        let mut child = Command::new(binary())
            .args(["serve", "--http", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start mcprisk serve --http");
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                let _ = tx.send(line);
            }
        });
        let line = rx
            .recv_timeout(ANSWER_WAIT)
            .expect("mcprisk serve --http said nothing");
        let url = line
            .split_whitespace()
            .find(|w| w.starts_with("http://127.0.0.1:"))
            .unwrap_or_else(|| panic!("no address in {line:?}"))
            .to_string();
        HttpServer { child, url }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
