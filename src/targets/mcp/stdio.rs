//! stdio transport: the server is a child process in its own process group; newline-delimited
//! JSON-RPC on its stdin and stdout; stderr kept (last lines) for error messages.

use std::collections::{HashMap, VecDeque};
use std::io::{BufReader, Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::lines::{read_capped_line, Line};
use super::procs;
use super::session::{self, answer_server_request, classify, Channel, Incoming, Wait};
use super::{
    AuthPosture, ChannelSecurity, Introspection, Options, StdioCommand, Step, Transport, WireError,
};

/// How many stderr lines are kept for error messages, and how long each may be.
const STDERR_LINES: usize = 20;
const STDERR_LINE_CHARS: usize = 500;

/// Messages read from stdout that may wait for the session to take them. The reader stops
/// reading (and the server's writes block) while they wait, so a server that talks faster than
/// we listen cannot grow our memory.
const INBOX: usize = 2;
/// Lines that may wait for the writer thread. A server that does not read its stdin fills the
/// pipe and then this queue; replies to its requests are then dropped, and our own requests wait
/// for room only until their deadline.
const OUTBOX: usize = 16;

/// The stdio servers running now: group leader (= process group id) and the value of their mark.
static RUNNING: Mutex<Option<HashMap<i32, String>>> = Mutex::new(None);

/// Tells servers apart in their marks.
static SPAWNED: AtomicUsize = AtomicUsize::new(0);

fn running() -> std::sync::MutexGuard<'static, Option<HashMap<i32, String>>> {
    RUNNING.lock().unwrap_or_else(|e| e.into_inner())
}

/// Forgets a server that has ended; when it was the last one and this is a guarded command
/// line program ([`procs::guard`]), ends the orphans re-parented to it.
fn unregister(pgid: i32) {
    let mut set = running();
    let map = set.get_or_insert_with(HashMap::new);
    map.remove(&pgid);
    if map.is_empty() && procs::GUARDED.load(Ordering::Acquire) {
        let orphans = procs::adopted(&[]);
        procs::signal_all(&orphans, libc::SIGKILL);
        procs::reap(&orphans);
    }
}

/// Kills every stdio server this process is talking to right now: each one's process group, the
/// processes that left it ([`procs`]) and orphans re-parented to us. Meant for a signal handler
/// (see [`procs::guard`]): the servers sit in their own process groups, so the terminal's signal
/// does not reach them. Safe to call from any thread; the introspections in progress then fail
/// (the server "closed its output") and reap their children.
pub fn kill_running_servers() {
    let set = running();
    let Some(map) = set.as_ref() else {
        return;
    };
    let leaders: Vec<i32> = map.keys().copied().collect();
    for (&pgid, mark) in map {
        let others = procs::belonging_to(pgid, mark);
        // SAFETY: plain syscall; a negative pid addresses the process group.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
        procs::signal_all(&others, libc::SIGKILL);
    }
    if procs::GUARDED.load(Ordering::Acquire) {
        procs::signal_all(&procs::adopted(&leaders), libc::SIGKILL);
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
    if ch.dropped_replies > 0 {
        outcome.warnings.push(format!(
            "the server sent {} request(s) while not reading its input; they were not answered",
            ch.dropped_replies
        ));
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
        incomplete: outcome.incomplete,
        offers: outcome.offers,
        offer_errors: outcome.offer_errors,
    })
}

/// A readable name for messages: the command line, truncated, secrets masked.
fn describe(cmd: &StdioCommand) -> String {
    let mut s = crate::targets::redact::arg(&cmd.program);
    for a in crate::targets::redact::args(&cmd.args) {
        s.push(' ');
        s.push_str(&a);
    }
    let mut s = crate::output::sanitize::whole_line(&s);
    if s.chars().count() > 200 {
        s = s.chars().take(199).collect::<String>() + "…";
    }
    format!("stdio server `{s}`")
}

enum Event {
    /// A message and the length of the line that carried it.
    Message(Value, usize),
    Eof,
    TooLong,
    ReadError(String),
}

struct StdioChannel {
    server: String,
    child: Child,
    pgid: i32,
    /// The value of [`procs::MARK`] in the server's environment.
    mark: String,
    /// Lines for the writer thread, which owns the server's stdin.
    outbox: Option<SyncSender<Vec<u8>>>,
    /// Set by the writer thread when a write failed (the server closed its stdin or exited).
    write_failed: Arc<AtomicBool>,
    /// Replies to server requests dropped because the server was not reading them.
    dropped_replies: usize,
    /// The length of the line that carried the last response [`Channel::request`] returned.
    last_bytes: usize,
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
        let mark = format!(
            "{}-{}",
            std::process::id(),
            SPAWNED.fetch_add(1, Ordering::Relaxed)
        );
        let mut c = Command::new(&cmd.program);
        c.args(&cmd.args)
            .envs(cmd.env.iter().map(|(k, v)| (k, v)))
            .env(procs::MARK, &mark)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        if let Some(dir) = &cmd.cwd {
            c.current_dir(dir);
        }
        // Spawned and registered under the lock, so that the end of another server never takes
        // this one for an orphan.
        let mut child = {
            let mut set = running();
            let child = c.spawn().map_err(|source| WireError::Spawn {
                server: server.clone(),
                source,
            })?;
            set.get_or_insert_with(HashMap::new)
                .insert(child.id() as i32, mark.clone());
            child
        };
        let pgid = child.id() as i32;

        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let stderr = child.stderr.take().expect("piped stderr");
        // Writes go through a thread of their own: a server that does not read its stdin blocks
        // that thread, never the session and its deadlines. It ends when the queue is dropped or
        // a write fails (the server's group is killed at shutdown, which fails a blocked write).
        let (outbox, lines) = mpsc::sync_channel::<Vec<u8>>(OUTBOX);
        let write_failed = Arc::new(AtomicBool::new(false));
        {
            let failed = write_failed.clone();
            thread::spawn(move || {
                let mut w = stdin;
                for line in lines {
                    if w.write_all(&line).and_then(|_| w.flush()).is_err() {
                        failed.store(true, Ordering::Release);
                        return;
                    }
                }
            });
        }
        let (tx, rx) = mpsc::sync_channel(INBOX);
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
                                Ok(v @ (Value::Object(_) | Value::Array(_))) => {
                                    Event::Message(v, buf.len())
                                }
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
                                        let _ = tx.send(Event::Message(v, buf.len()));
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
            mark,
            outbox: Some(outbox),
            write_failed,
            dropped_replies: 0,
            last_bytes: 0,
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
            Event::Eof | Event::ReadError(_) | Event::Message(..) => {
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

    /// Queues our own message for the server, waiting for room in the queue until the deadline
    /// (a server that does not read its stdin fills it; then this is a timeout, not a hang).
    fn send(&mut self, msg: &Value, step: &Step, wait: Wait) -> Result<(), WireError> {
        if let Some(ev) = self.dead.take() {
            let e = self.fail_from(&ev, step);
            self.dead = Some(ev);
            return Err(e);
        }
        let mut line = serde_json::to_vec(msg).expect("a Value always serializes");
        line.push(b'\n');
        loop {
            if self.write_failed.load(Ordering::Acquire) {
                // Broken pipe: the server is gone or closed stdin. Report it as an exit.
                self.outbox = None;
                return Err(self.fail_from(&Event::Eof, step));
            }
            let Some(outbox) = self.outbox.as_ref() else {
                return Err(self.fail_from(&Event::Eof, step));
            };
            match outbox.try_send(line) {
                Ok(()) => return Ok(()),
                Err(TrySendError::Disconnected(_)) => {
                    self.outbox = None;
                    return Err(self.fail_from(&Event::Eof, step));
                }
                Err(TrySendError::Full(back)) => {
                    if Instant::now() >= wait.deadline {
                        return Err(self.not_reading(step, wait));
                    }
                    line = back;
                    thread::sleep(Duration::from_millis(2));
                }
            }
        }
    }

    /// Answers a request the server made, if the server is reading what we send; a reply that
    /// finds the queue full is dropped (and counted), so a request flood costs nothing.
    fn reply(&mut self, reply: &Value) {
        let mut line = serde_json::to_vec(reply).expect("a Value always serializes");
        line.push(b'\n');
        if let Some(outbox) = self.outbox.as_ref() {
            if outbox.try_send(line).is_err() {
                self.dropped_replies += 1;
            }
        }
    }

    fn not_reading(&self, step: &Step, wait: Wait) -> WireError {
        WireError::Timeout {
            server: self.server.clone(),
            step: step.clone(),
            limit: wait.limit,
            stderr: self.stderr_tail(),
        }
    }

    /// Ends the process group: close stdin, SIGTERM the group, wait up to the grace period for
    /// the leader, SIGKILL whatever is left in the group, reap the leader. Processes that left
    /// the group (see [`procs`]) get the same signals. Idempotent.
    fn shutdown(&mut self) {
        if self.ended {
            return;
        }
        self.ended = true;
        self.outbox = None;
        // Found while the leader lives: once it dies, its children lose their parent link.
        let mut others = procs::belonging_to(self.pgid, &self.mark);
        // SAFETY: plain syscalls on our own child's process group.
        unsafe {
            libc::kill(-self.pgid, libc::SIGTERM);
        }
        procs::signal_all(&others, libc::SIGTERM);
        let until = Instant::now() + self.kill_grace;
        while peek_exit(self.pgid).is_none() && Instant::now() < until {
            thread::sleep(Duration::from_millis(2));
        }
        // The leader is not reaped yet, so the group id cannot have been reused: any member left
        // (a grandchild ignoring SIGTERM, or a leader that did not exit in time) is killed now.
        unsafe {
            libc::kill(-self.pgid, libc::SIGKILL);
        }
        for pid in procs::belonging_to(self.pgid, &self.mark) {
            if !others.contains(&pid) {
                others.push(pid);
            }
        }
        procs::signal_all(&others, libc::SIGKILL);
        let _ = self.child.wait();
        procs::reap(&others);
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
        self.send(msg, step, wait)?;
        loop {
            // Checked before every message: a server that floods us must not keep the wait alive.
            if Instant::now() >= wait.deadline {
                return Err(self.not_reading(step, wait));
            }
            let ev = match self.rx.recv_timeout(wait.remaining()) {
                Ok(ev) => ev,
                Err(RecvTimeoutError::Timeout) => return Err(self.not_reading(step, wait)),
                Err(RecvTimeoutError::Disconnected) => Event::Eof,
            };
            let (msgs, bytes) = match ev {
                Event::Message(Value::Array(batch), n) => (batch, n),
                Event::Message(m, n) => (vec![m], n),
                other => {
                    let e = self.fail_from(&other, step);
                    self.dead = Some(other);
                    return Err(e);
                }
            };
            let mut found = None;
            for m in msgs {
                match classify(&m) {
                    Incoming::Request => {
                        let reply = answer_server_request(&m);
                        self.reply(&reply);
                    }
                    Incoming::Response(rid) if session::id_matches(Some(rid), id) => {
                        if found.is_none() {
                            found = Some(m);
                        }
                    }
                    Incoming::Response(_) | Incoming::Notification => {}
                    Incoming::Other => {
                        self.non_json.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
            if let Some(m) = found {
                self.last_bytes = bytes;
                return Ok(m);
            }
        }
    }

    fn notify(&mut self, msg: &Value, step: &Step, wait: Wait) -> Result<(), WireError> {
        self.send(msg, step, wait)
    }

    fn response_bytes(&self) -> usize {
        self.last_bytes
    }
}

impl Drop for StdioChannel {
    fn drop(&mut self) {
        self.shutdown();
    }
}
