//! stdio transport: the server is a child process in its own process group; newline-delimited
//! JSON-RPC on its stdin and stdout; stderr kept (last lines) for error messages.

use std::collections::{HashSet, VecDeque};
use std::io::{BufReader, Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::lines::{read_capped_line, Line};
use super::session::{self, answer_server_request, classify, Channel, Incoming, Wait};
use super::{
    redact_arg, AuthPosture, ChannelSecurity, Introspection, Options, StdioCommand, Step,
    Transport, WireError,
};

/// How many stderr lines are kept for error messages, and how long each may be.
const STDERR_LINES: usize = 20;
const STDERR_LINE_CHARS: usize = 500;

/// Process groups of the stdio servers running now, for [`kill_running_servers`].
static RUNNING: Mutex<Option<HashSet<i32>>> = Mutex::new(None);

fn register(pgid: i32) {
    RUNNING
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashSet::new)
        .insert(pgid);
}

fn unregister(pgid: i32) {
    if let Some(set) = RUNNING.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
        set.remove(&pgid);
    }
}

/// Sends SIGKILL to the process group of every stdio server this process is talking to right now.
/// Meant for a Ctrl-C / SIGTERM handler: the servers sit in their own process groups, so the
/// terminal's signal does not reach them. Safe to call from any thread; the introspections in
/// progress then fail (the server "closed its output") and reap their children.
pub fn kill_running_servers() {
    if let Some(set) = RUNNING.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
        for &pgid in set {
            // SAFETY: plain syscall; a negative pid addresses the process group.
            unsafe {
                libc::kill(-pgid, libc::SIGKILL);
            }
        }
    }
}

/// Launch `cmd`, handshake, list its tools, end its process group.
///
/// The environment is inherited, with `cmd.env` added on top. The child is always ended before
/// this returns (SIGTERM to its process group, SIGKILL after [`Options::kill_grace`]), and reaped.
pub fn introspect_stdio(cmd: &StdioCommand, opts: &Options) -> Result<Introspection, WireError> {
    let started = Instant::now();
    let mut ch = StdioChannel::spawn(cmd, opts)?;
    let outcome = session::run(&mut ch, opts, started);
    let tail = ch.stderr_tail();
    ch.shutdown();
    let mut outcome = outcome.map_err(|e| e.with_stderr(tail))?;
    let skipped = ch.non_json.load(Ordering::Relaxed);
    if skipped > 0 {
        outcome.warnings.insert(
            0,
            format!("skipped {skipped} non-JSON-RPC line(s) on the server's stdout"),
        );
    }
    Ok(Introspection {
        tools: outcome.tools,
        server_info: outcome.server_info,
        protocol_version: outcome.protocol_version,
        transport: Transport::Stdio,
        auth: AuthPosture {
            channel: ChannelSecurity::Local,
            credential_names: cmd.env.iter().map(|(k, _)| k.clone()).collect(),
            challenge: None,
        },
        warnings: outcome.warnings,
    })
}

/// A readable name for messages: the command line, truncated, URL user-info masked.
fn describe(cmd: &StdioCommand) -> String {
    let mut s = redact_arg(&cmd.program);
    for a in &cmd.args {
        s.push(' ');
        s.push_str(&redact_arg(a));
    }
    if s.chars().count() > 200 {
        s = s.chars().take(199).collect::<String>() + "…";
    }
    format!("stdio server `{s}`")
}

enum Event {
    Message(Value),
    Eof,
    TooLong,
    ReadError(String),
}

struct StdioChannel {
    server: String,
    child: Child,
    pgid: i32,
    stdin: Option<ChildStdin>,
    rx: Receiver<Event>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    stderr_done: Arc<AtomicUsize>,
    non_json: Arc<AtomicUsize>,
    max_bytes: usize,
    kill_grace: Duration,
    ended: bool,
    /// Set when stdout ended or was given up on: later waits fail at once.
    dead: Option<Event>,
}

impl StdioChannel {
    fn spawn(cmd: &StdioCommand, opts: &Options) -> Result<Self, WireError> {
        let server = describe(cmd);
        let mut c = Command::new(&cmd.program);
        c.args(&cmd.args)
            .envs(cmd.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        if let Some(dir) = &cmd.cwd {
            c.current_dir(dir);
        }
        let mut child = c.spawn().map_err(|source| WireError::Spawn {
            server: server.clone(),
            source,
        })?;
        let pgid = child.id() as i32;
        register(pgid);

        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("piped stdout");
        let stderr = child.stderr.take().expect("piped stderr");
        let (tx, rx) = mpsc::channel();
        let non_json = Arc::new(AtomicUsize::new(0));
        let cap = opts.max_message_bytes;
        {
            let non_json = non_json.clone();
            thread::spawn(move || {
                let mut r = BufReader::with_capacity(1 << 16, stdout);
                let mut buf = Vec::new();
                loop {
                    let ev = match read_capped_line(&mut r, &mut buf, cap) {
                        Ok(Line::Complete) => {
                            if buf.iter().all(u8::is_ascii_whitespace) {
                                continue;
                            }
                            match serde_json::from_slice::<Value>(&buf) {
                                Ok(v @ (Value::Object(_) | Value::Array(_))) => Event::Message(v),
                                _ => {
                                    non_json.fetch_add(1, Ordering::Relaxed);
                                    continue;
                                }
                            }
                        }
                        Ok(Line::Eof) => {
                            if !buf.iter().all(u8::is_ascii_whitespace) {
                                match serde_json::from_slice::<Value>(&buf) {
                                    Ok(v @ Value::Object(_)) => {
                                        let _ = tx.send(Event::Message(v));
                                    }
                                    _ => {
                                        non_json.fetch_add(1, Ordering::Relaxed);
                                    }
                                }
                            }
                            let _ = tx.send(Event::Eof);
                            return;
                        }
                        Ok(Line::TooLong) => {
                            let _ = tx.send(Event::TooLong);
                            return; // dropping the pipe: the server gets EPIPE if it goes on
                        }
                        Err(e) => {
                            let _ = tx.send(Event::ReadError(e.to_string()));
                            return;
                        }
                    };
                    // Keep the big buffer from one huge message from lingering.
                    if buf.capacity() > 1 << 20 {
                        buf = Vec::new();
                    }
                    if tx.send(ev).is_err() {
                        return;
                    }
                }
            });
        }
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let stderr_done = Arc::new(AtomicUsize::new(0));
        {
            let tail = tail.clone();
            let done = stderr_done.clone();
            thread::spawn(move || {
                keep_stderr_tail(stderr, &tail);
                done.store(1, Ordering::Release);
            });
        }
        Ok(StdioChannel {
            server,
            child,
            pgid,
            stdin,
            rx,
            stderr: tail,
            stderr_done,
            non_json,
            max_bytes: cap,
            kill_grace: opts.kill_grace,
            ended: false,
            dead: None,
        })
    }

    fn stderr_tail(&self) -> Vec<String> {
        self.stderr
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .cloned()
            .collect()
    }

    /// The exit status if the leader has exited (without reaping it), waiting up to `within`.
    fn exit_status(&self, within: Duration) -> Option<String> {
        let until = Instant::now() + within;
        loop {
            if let Some(s) = peek_exit(self.pgid) {
                return Some(s);
            }
            if Instant::now() >= until {
                return None;
            }
            thread::sleep(Duration::from_millis(5));
        }
    }

    /// Gives stderr a moment to drain so its last lines make it into the message.
    fn settle_stderr(&self) {
        let until = Instant::now() + Duration::from_millis(200);
        while self.stderr_done.load(Ordering::Acquire) == 0 && Instant::now() < until {
            thread::sleep(Duration::from_millis(5));
        }
    }

    fn fail_from(&mut self, ev: &Event, step: &Step) -> WireError {
        match ev {
            Event::TooLong => WireError::MessageTooLarge {
                server: self.server.clone(),
                step: step.clone(),
                limit: self.max_bytes,
                stderr: self.stderr_tail(),
            },
            Event::Eof | Event::ReadError(_) | Event::Message(_) => {
                let status = self.exit_status(Duration::from_millis(300));
                self.settle_stderr();
                let status = match (status, ev) {
                    (s, Event::ReadError(e)) => Some(format!(
                        "reading stdout failed: {e}{}",
                        s.map(|s| format!(", {s}")).unwrap_or_default()
                    )),
                    (Some(s), _) => Some(s),
                    (None, _) => Some("stdout closed, process still running".to_string()),
                };
                WireError::Exited {
                    server: self.server.clone(),
                    step: step.clone(),
                    status,
                    stderr: self.stderr_tail(),
                }
            }
        }
    }

    fn send(&mut self, msg: &Value, step: &Step) -> Result<(), WireError> {
        if let Some(ev) = self.dead.take() {
            let e = self.fail_from(&ev, step);
            self.dead = Some(ev);
            return Err(e);
        }
        let mut line = serde_json::to_vec(msg).expect("a Value always serializes");
        line.push(b'\n');
        let ok = match self.stdin.as_mut() {
            Some(w) => w.write_all(&line).and_then(|_| w.flush()).is_ok(),
            None => false,
        };
        if ok {
            return Ok(());
        }
        // Broken pipe: the server is gone or closed stdin. Report it as an exit.
        self.stdin = None;
        Err(self.fail_from(&Event::Eof, step))
    }

    /// Ends the process group: close stdin, SIGTERM the group, wait up to the grace period for
    /// the leader, SIGKILL whatever is left in the group, reap the leader. Idempotent.
    fn shutdown(&mut self) {
        if self.ended {
            return;
        }
        self.ended = true;
        self.stdin = None;
        // SAFETY: plain syscalls on our own child's process group.
        unsafe {
            libc::kill(-self.pgid, libc::SIGTERM);
        }
        let until = Instant::now() + self.kill_grace;
        while peek_exit(self.pgid).is_none() && Instant::now() < until {
            thread::sleep(Duration::from_millis(2));
        }
        // The leader is not reaped yet, so the group id cannot have been reused: any member left
        // (a grandchild ignoring SIGTERM, or a leader that did not exit in time) is killed now.
        unsafe {
            libc::kill(-self.pgid, libc::SIGKILL);
        }
        let _ = self.child.wait();
        unregister(self.pgid);
    }
}

/// The leader's exit status if it has exited, leaving it a zombie (WNOWAIT) so the process group
/// id stays reserved until [`StdioChannel::shutdown`] reaps it.
fn peek_exit(pid: i32) -> Option<String> {
    // SAFETY: waitid fills the zeroed siginfo_t; WNOHANG|WNOWAIT neither blocks nor reaps.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        let rc = libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        );
        if rc != 0 || info.si_pid() == 0 {
            return None;
        }
        let status = info.si_status();
        Some(match info.si_code {
            libc::CLD_EXITED => format!("exited with status {status}"),
            libc::CLD_KILLED | libc::CLD_DUMPED => format!("killed by signal {status}"),
            _ => "ended".to_string(),
        })
    }
}

fn keep_stderr_tail(stderr: impl Read, tail: &Mutex<VecDeque<String>>) {
    let mut r = BufReader::new(stderr);
    let mut buf = Vec::new();
    loop {
        // Lines are capped; a longer one is cut and the rest of it read as further "lines".
        let status = read_capped_line(&mut r, &mut buf, 64 << 10);
        let text: String = String::from_utf8_lossy(&buf)
            .chars()
            .take(STDERR_LINE_CHARS)
            .collect();
        let keep = !text.trim().is_empty();
        if keep {
            let mut t = tail.lock().unwrap_or_else(|e| e.into_inner());
            if t.len() == STDERR_LINES {
                t.pop_front();
            }
            t.push_back(text);
        }
        match status {
            Ok(Line::Complete) | Ok(Line::TooLong) => {}
            Ok(Line::Eof) | Err(_) => return,
        }
    }
}

impl Channel for StdioChannel {
    fn server(&self) -> &str {
        &self.server
    }

    fn request(
        &mut self,
        id: u64,
        msg: &Value,
        step: &Step,
        wait: Wait,
    ) -> Result<Value, WireError> {
        self.send(msg, step)?;
        loop {
            let ev = match self.rx.recv_timeout(wait.remaining()) {
                Ok(ev) => ev,
                Err(RecvTimeoutError::Timeout) => {
                    return Err(WireError::Timeout {
                        server: self.server.clone(),
                        step: step.clone(),
                        limit: wait.limit,
                        stderr: self.stderr_tail(),
                    })
                }
                Err(RecvTimeoutError::Disconnected) => Event::Eof,
            };
            let msgs = match ev {
                Event::Message(Value::Array(batch)) => batch,
                Event::Message(m) => vec![m],
                other => {
                    let e = self.fail_from(&other, step);
                    self.dead = Some(other);
                    return Err(e);
                }
            };
            for m in msgs {
                match classify(&m) {
                    Incoming::Request => {
                        let reply = answer_server_request(&m);
                        self.send(&reply, step)?;
                    }
                    Incoming::Response(rid) if session::id_matches(Some(rid), id) => return Ok(m),
                    Incoming::Response(_) | Incoming::Notification => {}
                    Incoming::Other => {
                        self.non_json.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
        }
    }

    fn notify(&mut self, msg: &Value, step: &Step, _wait: Wait) -> Result<(), WireError> {
        self.send(msg, step)
    }
}

impl Drop for StdioChannel {
    fn drop(&mut self) {
        self.shutdown();
    }
}
