//! Keeping track of what a stdio server starts, and ending all of it.
//!
//! A server runs in its own process group, which ends with it. A process it starts may leave that
//! group, though: `setsid` (a daemon's double fork) puts it in a session of its own, where a
//! group kill does not reach. Two things find those on Linux:
//!
//! * every process a server starts inherits [`MARK`] in its environment, with a value unique to
//!   that server, so its descendants are found in `/proc` whatever group or parent they have
//!   (unless they clear their environment);
//! * [`guard`] makes mcprisk the *child subreaper* of its descendants (`PR_SET_CHILD_SUBREAPER`):
//!   an orphan is re-parented to mcprisk instead of init, and the ones left at exit are ended.
//!
//! The limit: a process that both clears its environment and is re-parented outside mcprisk's
//! tree (only another subreaper between them could do that) is not found. Elsewhere than Linux
//! only the process group is ended.
//!
//! [`guard`] also ends every server on SIGINT, SIGTERM and SIGHUP before mcprisk dies of the
//! signal, since the servers' own groups do not get the terminal's signals.

use std::collections::HashMap;

/// The environment variable that marks a server's processes.
pub(crate) const MARK: &str = "MCPRISK_SERVER";

/// What `/proc` says of one process.
struct Proc {
    ppid: i32,
    running: bool,
}

/// Every process in `/proc` by pid (empty where there is no `/proc`).
fn table() -> HashMap<i32, Proc> {
    let mut out = HashMap::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for entry in dir.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let mut f = rest.split_whitespace();
        let state = f.next().and_then(|s| s.chars().next()).unwrap_or('?');
        let Some(ppid) = f.next().and_then(|p| p.parse().ok()) else {
            continue;
        };
        out.insert(
            pid,
            Proc {
                ppid,
                running: !matches!(state, 'Z' | 'X'),
            },
        );
    }
    out
}

/// Whether the process's environment holds `MARK=value`.
fn carries_mark(pid: i32, value: &str) -> bool {
    let Ok(env) = std::fs::read(format!("/proc/{pid}/environ")) else {
        return false;
    };
    let want = format!("{MARK}={value}");
    env.split(|&b| b == 0).any(|kv| kv == want.as_bytes())
}

/// The live processes that belong to the server whose group leader is `leader`: its
/// descendants by parent links, and every process carrying its mark. Not the leader itself.
pub(crate) fn belonging_to(leader: i32, mark: &str) -> Vec<i32> {
    let procs = table();
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    for (&pid, p) in &procs {
        children.entry(p.ppid).or_default().push(pid);
    }
    let mut found = Vec::new();
    let mut stack = vec![leader];
    while let Some(p) = stack.pop() {
        for &c in children.get(&p).map(Vec::as_slice).unwrap_or(&[]) {
            if !found.contains(&c) {
                found.push(c);
                stack.push(c);
            }
        }
    }
    let me = std::process::id() as i32;
    for (&pid, p) in &procs {
        if pid != leader
            && pid != me
            && p.running
            && !found.contains(&pid)
            && carries_mark(pid, mark)
        {
            found.push(pid);
        }
    }
    found.retain(|pid| procs.get(pid).is_some_and(|p| p.running));
    found
}

/// Sends `sig` to each pid.
pub(crate) fn signal_all(pids: &[i32], sig: i32) {
    for &pid in pids {
        if pid > 1 {
            // SAFETY: plain syscall.
            unsafe {
                libc::kill(pid, sig);
            }
        }
    }
}

/// Reaps those of `pids` that are our children (re-parented orphans, with the subreaper) once
/// they have died, waiting up to half a second for each; the others are init's to reap.
pub(crate) fn reap(pids: &[i32]) {
    let me = std::process::id() as i32;
    let procs = table();
    let until = std::time::Instant::now() + std::time::Duration::from_millis(500);
    for &pid in pids {
        if procs.get(&pid).map(|p| p.ppid) != Some(me) {
            continue;
        }
        loop {
            let mut status = 0;
            // SAFETY: waits for one specific child of ours, without blocking.
            let rc = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
            if rc != 0 || std::time::Instant::now() >= until {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }
}

/// Our children that are not stdio servers' group leaders: orphans re-parented to us (we are
/// their subreaper), which nothing else will end.
pub(crate) fn adopted(leaders: &[i32]) -> Vec<i32> {
    let me = std::process::id() as i32;
    table()
        .into_iter()
        .filter(|(pid, p)| p.ppid == me && p.running && !leaders.contains(pid))
        .map(|(pid, _)| pid)
        .collect()
}

/// Set by [`guard`]: this process is a command-line program whose only children are servers.
pub(crate) static GUARDED: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// The write end of the signal pipe, for the handler.
static SIGNAL_PIPE: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(-1);

extern "C" fn on_signal(sig: libc::c_int) {
    let fd = SIGNAL_PIPE.load(std::sync::atomic::Ordering::Relaxed);
    if fd >= 0 {
        let b = sig as u8;
        // SAFETY: write(2) is async-signal-safe.
        unsafe {
            libc::write(fd, (&b as *const u8).cast(), 1);
        }
    }
}

/// For a command-line program that starts stdio servers; call once, before starting any.
///
/// On SIGINT, SIGTERM and SIGHUP every running server's process group and the processes that
/// left it are killed, `mcprisk: interrupted; servers stopped` is said on stderr, and the process
/// then dies of the same signal. On Linux mcprisk also becomes the child subreaper of its
/// descendants, and the orphans left when the last server ends are ended too.
pub fn guard() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        GUARDED.store(true, std::sync::atomic::Ordering::Release);
        #[cfg(target_os = "linux")]
        // SAFETY: plain prctl on this process.
        unsafe {
            libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
        }
        let mut fds = [0; 2];
        // SAFETY: pipe(2) fills the two descriptors.
        if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
            return;
        }
        for fd in fds {
            // SAFETY: plain fcntl on our own descriptors.
            unsafe {
                libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
            }
        }
        SIGNAL_PIPE.store(fds[1], std::sync::atomic::Ordering::Relaxed);
        let read_end = fds[0];
        std::thread::spawn(move || {
            let mut b = 0u8;
            loop {
                // SAFETY: reads one byte into `b`.
                let n = unsafe { libc::read(read_end, (&mut b as *mut u8).cast(), 1) };
                if n == 1 {
                    break;
                }
                if n < 0
                    && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
                {
                    continue;
                }
                return;
            }
            let sig = b as libc::c_int;
            super::kill_running_servers();
            eprintln!("mcprisk: interrupted; servers stopped");
            // Die of the signal itself, so the shell and CI see what happened.
            // SAFETY: restoring the default action and raising the signal on ourselves.
            unsafe {
                libc::signal(sig, libc::SIG_DFL);
                libc::raise(sig);
            }
            std::process::exit(128 + sig);
        });
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            // SAFETY: reads the current action, then installs an async-signal-safe handler (it
            // only writes one byte) unless the signal is ignored (`nohup`), which stays so.
            unsafe {
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(sig, std::ptr::null(), &mut old) == 0
                    && old.sa_sigaction == libc::SIG_IGN
                {
                    continue;
                }
                let mut sa: libc::sigaction = std::mem::zeroed();
                sa.sa_sigaction = on_signal as *const () as usize;
                sa.sa_flags = libc::SA_RESTART;
                libc::sigemptyset(&mut sa.sa_mask);
                libc::sigaction(sig, &sa, std::ptr::null_mut());
            }
        }
    });
}
