//! A tmux server of the test's own, to run the interactive `pidmap top`
//! in a real terminal: tmux runs it in a detached session, the tests read
//! the screen with `capture-pane` and type with `send-keys`. tmux is
//! required: CI installs it, and without it these tests fail.

use std::process::{Command, Output};
use std::time::{Duration, Instant};

pub const WIDTH: usize = 120;
pub const HEIGHT: usize = 40;

/// A tmux server of our own (its own socket), killed on drop.
pub struct Tmux {
    socket: String,
}

impl Tmux {
    pub fn new(name: &str) -> Tmux {
        let version = Command::new("tmux").arg("-V").output();
        assert!(
            version.as_ref().is_ok_and(|o| o.status.success()),
            "tmux is required for this test (apt-get install tmux): {version:?}"
        );
        Tmux {
            socket: format!("pidmap-test-{}-{name}", std::process::id()),
        }
    }

    pub fn run(&self, args: &[&str]) -> Output {
        let out = Command::new("tmux")
            .args(["-L", &self.socket, "-f", "/dev/null"])
            .args(args)
            .output()
            .expect("running tmux");
        assert!(
            out.status.success(),
            "tmux {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// Start `pidmap ARGS` in a fixed-size session whose pane stays after
    /// the program exits, so that its exit status can be read.
    pub fn start(&self, args: &[&str]) {
        let mut cmd = format!("exec {}", super::bin().display());
        for a in args {
            cmd.push(' ');
            cmd.push_str(a);
        }
        self.new_session(&[&cmd]);
    }

    /// Start `sh -c SCRIPT` in a session like [`Tmux::start`]'s.
    pub fn start_shell(&self, script: &str) {
        self.new_session(&["sh", "-c", script]);
    }

    /// A detached WIDTH x HEIGHT session named `top` running `command`,
    /// whose pane remains on exit.
    pub fn new_session(&self, command: &[&str]) {
        let (w, h) = (WIDTH.to_string(), HEIGHT.to_string());
        let mut args = vec!["new-session", "-d", "-x", &w, "-y", &h, "-s", "top"];
        args.extend_from_slice(command);
        args.extend_from_slice(&[";", "set-option", "-t", "top", "remain-on-exit", "on"]);
        self.run(&args);
    }

    pub fn screen(&self) -> String {
        String::from_utf8(self.run(&["capture-pane", "-p", "-t", "top"]).stdout).unwrap()
    }

    pub fn format(&self, f: &str) -> String {
        let out = self.run(&["display-message", "-p", "-t", "top", f]);
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    }

    /// Whether the pane is on the alternate screen, once tmux has parsed
    /// all the output it has: a pane can be dead before tmux has read
    /// the last bytes its program wrote, so this waits up to 5 s for the
    /// value to be `want`, and returns what it last was.
    pub fn alternate_on(&self, want: bool) -> bool {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let on = self.format("#{alternate_on}") == "1";
            if on == want || Instant::now() > deadline {
                return on;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn keys(&self, keys: &str) {
        self.run(&["send-keys", "-t", "top", keys]);
    }

    /// Type `text` literally.
    pub fn type_text(&self, text: &str) {
        self.run(&["send-keys", "-t", "top", "-l", text]);
    }

    /// The cells of the table row under the selection bar (the one row
    /// drawn in reverse video between the headings and the bottom line),
    /// from a capture with the escapes kept.
    pub fn selected(&self) -> Option<Vec<String>> {
        let raw =
            String::from_utf8(self.run(&["capture-pane", "-p", "-e", "-t", "top"]).stdout).unwrap();
        let lines: Vec<&str> = raw.lines().collect();
        let plain: Vec<String> = lines.iter().map(|l| strip_escapes(l)).collect();
        let at = plain
            .iter()
            .position(|l| l.split_whitespace().eq(HEADINGS.iter().copied()))?;
        let mut hits = (at + 1..lines.len().saturating_sub(1)).filter(|&i| {
            // SGR 7 (reverse), alone or among other attributes.
            lines[i].contains("\x1b[7m") || lines[i].contains(";7m") || lines[i].contains("[7;")
        });
        let i = hits.next()?;
        assert!(hits.next().is_none(), "two selected rows:\n{raw}");
        Some(plain[i].split_whitespace().map(str::to_string).collect())
    }

    /// Resize the window (and so the pane) to `w` x `h`.
    pub fn resize(&self, w: usize, h: usize) {
        let (w, h) = (w.to_string(), h.to_string());
        self.run(&["resize-window", "-t", "top", "-x", &w, "-y", &h]);
    }

    /// The screen once `ready` holds for it and it is settled (the same
    /// in two captures, so not a frame half drawn); panics with the last
    /// screen after 15 s.
    pub fn wait_for(&self, what: &str, ready: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let s = self.screen();
            if ready(&s) {
                std::thread::sleep(Duration::from_millis(30));
                if self.screen() == s {
                    return s;
                }
                continue;
            }
            assert!(Instant::now() < deadline, "never {what}; screen:\n{s}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Wait for the program to exit; its exit status, or `signal N`.
    pub fn wait_exit(&self) -> String {
        let pid = self.format("#{pane_pid}");
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if self.format("#{pane_dead}") == "1" {
                let status = self.format("#{pane_dead_status}");
                if !status.is_empty() {
                    return status;
                }
                // tmux 3.3a sometimes leaves its dead pane's process
                // unreaped (a zombie, no status): read the status the
                // kernel keeps for it.
                if let Some(status) = zombie_status(&pid) {
                    return status;
                }
            }
            assert!(
                Instant::now() < deadline,
                "pidmap top did not exit (pid {pid}); screen:\n{}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// `line` without its escape sequences (CSI ... final byte).
pub fn strip_escapes(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            if chars.next() == Some('[') {
                for d in chars.by_ref() {
                    if ('@'..='~').contains(&d) {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

/// A zombie's exit status from `/proc/PID/stat`'s last field (`exit_code`,
/// in waitpid's encoding): `N` for an exit, `signal N` for a signal.
pub fn zombie_status(pid: &str) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_comm = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = after_comm.split_whitespace().collect();
    if fields.first() != Some(&"Z") {
        return None;
    }
    let code: i32 = fields.last()?.parse().ok()?;
    Some(if libc::WIFEXITED(code) {
        libc::WEXITSTATUS(code).to_string()
    } else {
        format!("signal {}", libc::WTERMSIG(code))
    })
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .output();
    }
}

pub const HEADINGS: [&str; 9] = [
    "PID", "USER", "NI", "S", "RES", "%CPU", "%MEM", "TIME+", "COMMAND",
];

/// The table's rows, split into cells: the lines between the headings
/// line and the bottom line (the key bar or a prompt).
pub fn table(screen: &str) -> Vec<Vec<String>> {
    table_rows(screen).unwrap_or_else(|| panic!("no headings line in:\n{screen}"))
}

/// [`table`], or `None` when the screen has no headings line (a frame
/// not drawn yet, the help screen).
pub fn table_rows(screen: &str) -> Option<Vec<Vec<String>>> {
    let lines: Vec<&str> = screen.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.split_whitespace().eq(HEADINGS.iter().copied()))?;
    Some(
        lines[at + 1..lines.len() - 1]
            .iter()
            .map(|l| l.split_whitespace().map(str::to_string).collect::<Vec<_>>())
            .filter(|cells| !cells.is_empty())
            .collect(),
    )
}

/// The last line: htop's function-key bar, a prompt, or a message.
pub fn bottom(screen: &str) -> &str {
    screen.lines().last().unwrap_or("")
}

pub fn column(screen: &str, heading: &str) -> Vec<f64> {
    let i = HEADINGS.iter().position(|h| *h == heading).unwrap();
    table(screen)
        .iter()
        .map(|r| {
            r[i].parse()
                .unwrap_or_else(|_| panic!("{heading} cell {:?} in {r:?}", r[i]))
        })
        .collect()
}

/// The refresh count of the status line.
pub fn refreshes(screen: &str) -> Option<u32> {
    let after = screen.split(" refresh ").nth(1)?;
    after.split_whitespace().next()?.parse().ok()
}

pub fn started(s: &str) -> bool {
    s.starts_with("pidmap top - ")
        && s.contains("load average:")
        && s.lines().any(|l| l.starts_with("Tasks:"))
        && s.contains("%Cpu(s):")
        && s.contains("MiB Mem :")
        && refreshes(s).is_some_and(|n| n >= 1)
        && s.lines()
            .any(|l| l.split_whitespace().eq(HEADINGS.iter().copied()))
}
