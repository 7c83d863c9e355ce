//! Fixtures shared by the CLI's integration tests: the `pidmap` binary,
//! a renamed sleeping child, parked threads.

#![allow(dead_code)]

pub mod tmux;

use std::path::PathBuf;
use std::process::Command;

/// Runs `cmd` (`what` names it in messages), asserts that it succeeded,
/// with its stderr in the failure, and returns its stdout.
pub fn stdout_of(cmd: &mut Command, what: &str) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("running {what}: {e}"));
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The pidmap binary: cargo's, or (in the QEMU guest, where the test
/// binaries run without cargo) the one on `PATH`.
pub fn bin() -> PathBuf {
    let built = PathBuf::from(env!("CARGO_BIN_EXE_pidmap"));
    if built.exists() {
        return built;
    }
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|d| d.join("pidmap"))
        .find(|p| p.exists())
        .expect("no pidmap binary: neither cargo's nor one on PATH")
}

/// Our process id.
pub fn me() -> i32 {
    i32::try_from(std::process::id()).unwrap()
}

/// A forked child that renames itself (`PR_SET_NAME`) and sleeps (or
/// spins on the CPU) until killed on drop.
pub struct Named(pub i32);

impl Named {
    /// A sleeping child.
    pub fn spawn(name: &'static [u8]) -> Named {
        Named::spawn_with(name, false)
    }

    /// A child that burns CPU time.
    pub fn spawn_spinning(name: &'static [u8]) -> Named {
        Named::spawn_with(name, true)
    }

    fn spawn_with(name: &'static [u8], spin: bool) -> Named {
        assert!(name.len() < 16 && !name.contains(&0));
        let mut buf = [0u8; 16];
        buf[..name.len()].copy_from_slice(name);
        // SAFETY: the child only calls async-signal-safe functions.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            // SAFETY: prctl with a NUL-terminated 16-byte buffer; pause.
            unsafe {
                libc::prctl(libc::PR_SET_NAME, buf.as_ptr());
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                loop {
                    if spin {
                        std::hint::spin_loop();
                    } else {
                        libc::pause();
                    }
                }
            }
        }
        // Wait until the rename is visible and, for a sleeping child,
        // until it sleeps in pause() (it uses no more CPU time).
        for _ in 0..2500 {
            let renamed =
                std::fs::read(format!("/proc/{pid}/comm")).is_ok_and(|c| c.starts_with(name));
            let settled = spin
                || std::fs::read(format!("/proc/{pid}/stat")).is_ok_and(|s| {
                    let close = s.iter().rposition(|&b| b == b')').unwrap_or(0);
                    s.get(close + 2) == Some(&b'S')
                });
            if renamed && settled {
                return Named(pid);
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        panic!("child {pid} never renamed itself and settled");
    }
}

impl Drop for Named {
    fn drop(&mut self) {
        // SAFETY: killing and reaping our own child.
        unsafe {
            libc::kill(self.0, libc::SIGKILL);
            libc::waitpid(self.0, std::ptr::null_mut(), 0);
        }
    }
}

/// Threads parked until dropped.
pub struct Parked {
    pub tids: Vec<i32>,
    stop: Vec<std::sync::mpsc::Sender<()>>,
}

impl Parked {
    pub fn spawn(n: usize) -> Parked {
        let (tx, rx) = std::sync::mpsc::channel();
        let mut stop = Vec::new();
        for _ in 0..n {
            let (stx, srx) = std::sync::mpsc::channel::<()>();
            let tx = tx.clone();
            std::thread::Builder::new()
                .stack_size(64 * 1024)
                .spawn(move || {
                    // SAFETY: gettid has no preconditions.
                    tx.send(unsafe { libc::gettid() }).unwrap();
                    let _ = srx.recv();
                })
                .unwrap();
            stop.push(stx);
        }
        let tids = (0..n).map(|_| rx.recv().unwrap()).collect();
        Parked { tids, stop }
    }
}

impl Drop for Parked {
    fn drop(&mut self) {
        self.stop.clear();
    }
}
