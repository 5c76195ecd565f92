//! Helpers shared by the integration tests: a JSON report's verdicts, where the pinned servers
//! live, pid files, process-group checks, and HTTP servers on 127.0.0.1 that are killed when
//! the test ends.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use mcprisk::targets::mcp::{Options, StdioCommand};

pub fn servers_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/servers")
}

/// Fails (does not skip) when scripts/install-test-servers.sh has not been run.
pub fn require(path: PathBuf) -> PathBuf {
    assert!(
        path.exists(),
        "{} is missing: run scripts/install-test-servers.sh first (it installs the pinned test \
         servers into tests/servers/node_modules and tests/servers/.venv)",
        path.display()
    );
    path
}

pub fn node_bin(name: &str) -> PathBuf {
    require(servers_dir().join("node_modules/.bin").join(name))
}

pub fn venv_bin(name: &str) -> PathBuf {
    require(servers_dir().join(".venv/bin").join(name))
}

pub fn misbehave() -> PathBuf {
    servers_dir().join("misbehave.py")
}

pub fn opts(timeout_s: f64) -> Options {
    let t = Duration::from_secs_f64(timeout_s);
    Options {
        timeout: t,
        startup_timeout: t,
        request_timeout: t,
        kill_grace: Duration::from_millis(300),
        ..Options::default()
    }
}

/// Runs `program args` through `sh`, which writes its pid (= the process group id, the child
/// being the group leader) to a file and then execs the program in place.
pub struct Tracked {
    pub cmd: StdioCommand,
    dir: tempfile::TempDir,
}

impl Tracked {
    pub fn new(program: &Path, args: &[&str]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pid");
        let mut a = vec![
            "-c".to_string(),
            "echo $$ > \"$0\"; exec \"$@\"".to_string(),
            pidfile.display().to_string(),
            program.display().to_string(),
        ];
        a.extend(args.iter().map(|s| s.to_string()));
        Tracked {
            cmd: StdioCommand {
                program: "sh".into(),
                args: a,
                env: Vec::new(),
                cwd: None,
            },
            dir,
        }
    }

    /// The misbehaving server (python3 -S: no site import, faster start). `sh` records the group
    /// leader's pid before Python starts; Python appends its grandchild's pid, if it makes one.
    pub fn misbehave(mode: &str) -> Self {
        let mut t = Tracked::new(Path::new("python3"), &[]);
        let pidfile = t.dir.path().join("pid").display().to_string();
        t.cmd.args.extend([
            "-S".to_string(),
            misbehave().display().to_string(),
            mode.to_string(),
            pidfile,
        ]);
        t
    }

    /// Where the server's pids are recorded.
    pub fn pid_file(&self) -> PathBuf {
        self.dir.path().join("pid")
    }

    pub fn pids(&self) -> Vec<i32> {
        let s = std::fs::read_to_string(self.dir.path().join("pid"))
            .expect("the server wrote no pid file");
        s.split_whitespace().map(|p| p.parse().unwrap()).collect()
    }

    /// Asserts the server's process group and every recorded pid are gone. SIGKILL is delivered
    /// asynchronously and an orphaned grandchild is reaped by init, so this allows a moment for
    /// that; a zombie counts as gone (it runs nothing). Five seconds: on a loaded machine (a CI
    /// run beside two trainings and a harvest on two cores) one was once not enough; a process
    /// really left behind sleeps 300 s, so the wait cannot hide one.
    pub fn assert_gone(&self) {
        let pids = self.pids();
        let pgid = pids[0];
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let left = live_group_members(pgid);
            let stray: Vec<i32> = pids.iter().copied().filter(|&p| is_running(p)).collect();
            if left.is_empty() && stray.is_empty() {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "left behind: group {pgid} members {left:?}, recorded pids {stray:?}"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// (state, pgrp) of a process from /proc, if it exists.
fn proc_stat(pid: i32) -> Option<(char, i32)> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = s.rsplit_once(')')?.1;
    let mut f = rest.split_whitespace();
    let state = f.next()?.chars().next()?;
    let _ppid = f.next()?;
    let pgrp = f.next()?.parse().ok()?;
    Some((state, pgrp))
}

fn is_running(pid: i32) -> bool {
    matches!(proc_stat(pid), Some((st, _)) if st != 'Z' && st != 'X')
}

/// Non-zombie processes whose process group is `pgid`.
pub fn live_group_members(pgid: i32) -> Vec<i32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        if let Some((st, pg)) = proc_stat(pid) {
            if pg == pgid && st != 'Z' && st != 'X' {
                out.push(pid);
            }
        }
    }
    out
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A server process in its own group, killed (whole group) and reaped on drop.
pub struct ServerProcess {
    child: Child,
    pub port: u16,
    pub started: Instant,
    pub listening_after: Duration,
}

impl ServerProcess {
    /// Starts a Node server that takes its port from $PORT, bound to 127.0.0.1 only, and waits
    /// until it accepts connections.
    pub fn node(bin: &Path, args: &[&str]) -> Self {
        let port = free_port();
        let preload = servers_dir().join("loopback-only.cjs");
        let mut c = Command::new(bin);
        c.args(args)
            .env("PORT", port.to_string())
            .env("NODE_OPTIONS", format!("--require {}", preload.display()))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0);
        let started = Instant::now();
        let child = c.spawn().unwrap();
        let mut s = ServerProcess {
            child,
            port,
            started,
            listening_after: Duration::ZERO,
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "server did not listen on {port}");
            if let Ok(Some(st)) = s.child.try_wait() {
                panic!("server exited before listening: {st}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        s.listening_after = started.elapsed();
        s
    }

    /// The misbehaving server in an HTTP mode; it prints its port.
    pub fn misbehave_http(mode: &str, log: &Path) -> Self {
        let mut c = Command::new("python3");
        c.arg(misbehave())
            .args(["http", mode])
            .arg(log)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .process_group(0);
        let started = Instant::now();
        let mut child = c.spawn().unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .trim()
            .strip_prefix("PORT ")
            .expect("misbehave.py printed no port")
            .parse()
            .unwrap();
        ServerProcess {
            child,
            port,
            started,
            listening_after: started.elapsed(),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{}", self.port, path)
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let pgid = self.child.id() as i32;
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
        let _ = self.child.wait();
    }
}

/// Each tool's name and category in a one-server JSON report (`scan --format json`), in
/// order, to compare two scans' verdicts.
pub fn verdicts(report: &serde_json::Value) -> Vec<(String, String)> {
    report["servers"][0]["tools"]
        .as_array()
        .expect("a JSON report's tools")
        .iter()
        .map(|t| (t["name"].to_string(), t["category"].to_string()))
        .collect()
}

/// The names of raw tools, for assertions.
pub fn names(tools: &[serde_json::Value]) -> Vec<String> {
    tools
        .iter()
        .map(|t| {
            t.get("name")
                .and_then(|n| n.as_str())
                .unwrap_or("?")
                .to_string()
        })
        .collect()
}

/// How a run of the mcprisk binary ended: exit code (None when killed by a signal), the signal,
/// its output, and its peak resident memory.
#[derive(Debug)]
pub struct Measured {
    pub code: Option<i32>,
    pub signal: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    /// The peak resident memory (VmHWM) last read while it ran. (Not wait4's ru_maxrss: a child
    /// starts with the peak of the test process that spawned it.)
    pub max_rss_kib: u64,
    pub took: Duration,
}

fn vm_hwm_kib(pid: i32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Runs the mcprisk binary with `args`, sampling its peak memory while it runs. `outer` only
/// keeps a broken build from hanging the suite: past it the process is killed (and the test
/// fails on the result). `during` is called with the pid once it runs (to signal it, say).
pub fn run_mcprisk(args: &[String], outer: Duration, during: impl FnOnce(i32)) -> Measured {
    use std::io::Read;
    use std::os::unix::process::CommandExt;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::Arc;
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mcprisk"));
    cmd.args(args)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // A suite started in the background (`nohup`, `cmd &`) passes SIGHUP and SIGINT on as
    // ignored, and mcprisk rightly keeps an ignored signal ignored: start it with the default
    // actions, as from a terminal, so the signal tests test the handler wherever they run.
    // SAFETY: signal(2) only, between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
                libc::signal(sig, libc::SIG_DFL);
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().unwrap();
    let pid = child.id() as i32;
    let started = Instant::now();
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out_t = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = out.read_to_end(&mut s);
        s
    });
    let err_t = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = err.read_to_end(&mut s);
        s
    });
    let done = Arc::new(AtomicBool::new(false));
    let peak = Arc::new(AtomicU64::new(0));
    let watcher = {
        let done = done.clone();
        let peak = peak.clone();
        std::thread::spawn(move || {
            let until = Instant::now() + outer;
            while !done.load(Ordering::Acquire) {
                if let Some(kib) = vm_hwm_kib(pid) {
                    peak.fetch_max(kib, Ordering::AcqRel);
                }
                if Instant::now() >= until {
                    // SAFETY: the child is not reaped until `done` is set.
                    unsafe {
                        libc::kill(pid, libc::SIGKILL);
                    }
                    return;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        })
    };
    during(pid);
    // Wait for the exit without reaping, so the watcher never samples a reused pid.
    // SAFETY: waitid fills the zeroed siginfo_t.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOWAIT,
        );
    }
    done.store(true, Ordering::Release);
    watcher.join().unwrap();
    let status = child.wait().unwrap();
    let took = started.elapsed();
    let stdout = String::from_utf8_lossy(&out_t.join().unwrap()).into_owned();
    let stderr = String::from_utf8_lossy(&err_t.join().unwrap()).into_owned();
    use std::os::unix::process::ExitStatusExt;
    Measured {
        code: status.code(),
        signal: status.signal(),
        stdout,
        stderr,
        max_rss_kib: peak.load(Ordering::Acquire),
        took,
    }
}

/// The misbehaving server's command line for `mcprisk scan -- ...`, through `sh` recording pids.
pub fn cli_args(t: &Tracked) -> Vec<String> {
    let mut v = vec![t.cmd.program.clone()];
    v.extend(t.cmd.args.iter().cloned());
    v
}
pub mod serve;
