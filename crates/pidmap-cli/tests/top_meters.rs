//! htop's CPU meters in the interactive `pidmap top` (after `1`), in a
//! real terminal (tmux): one bar per CPU of `/proc/stat`'s `cpuN` lines,
//! labelled with its number, filled as far as its percentage says in
//! htop's colours, side by side when the width holds them and one a line
//! when it does not; and they follow the load: kernel-time busy loops
//! pinned to one CPU turn that CPU's bar red, and moved to another CPU,
//! that one's. tmux is required: CI installs it.

use std::collections::BTreeSet;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod support;
use support::tmux::*;

/// One meter as the terminal shows it.
#[derive(Debug)]
struct Meter {
    cpu: u32,
    percent: f64,
    /// The cells between the brackets.
    inner: usize,
    /// The cells drawn in each colour (SGR colour number, 0-15).
    colored: Vec<(u8, usize)>,
}

impl Meter {
    /// Cells in the bar's colours: every colour but the shadow's grey
    /// (8) and the default.
    fn filled(&self) -> usize {
        self.colored
            .iter()
            .filter(|(c, _)| *c != 8)
            .map(|(_, n)| n)
            .sum()
    }

    fn cells_of(&self, color: u8) -> usize {
        self.colored
            .iter()
            .filter(|(c, _)| *c == color)
            .map(|(_, n)| n)
            .sum()
    }
}

/// SGR red, as ratatui and tmux write it.
const RED: u8 = 1;

/// A line of `capture-pane -e` as cells: each character with the
/// foreground colour it was drawn in (`None`: the default).
fn cells(line: &str) -> Vec<(char, Option<u8>)> {
    let mut out = Vec::new();
    let mut fg = None;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\x1b' {
            out.push((c, fg));
            continue;
        }
        if chars.next() != Some('[') {
            continue;
        }
        let mut params = String::new();
        let mut end = ' ';
        for d in chars.by_ref() {
            if ('@'..='~').contains(&d) {
                end = d;
                break;
            }
            params.push(d);
        }
        if end != 'm' {
            continue;
        }
        let mut p = params.split(';').map(|v| v.parse::<u16>().unwrap_or(0));
        while let Some(code) = p.next() {
            match code {
                0 | 39 => fg = None,
                30..=37 => fg = u8::try_from(code - 30).ok(),
                90..=97 => fg = u8::try_from(code - 90 + 8).ok(),
                38 if p.next() == Some(5) => {
                    fg = p.next().and_then(|n| u8::try_from(n).ok());
                }
                _ => {}
            }
        }
    }
    out
}

/// The meters of a screen captured with its escapes: `N[...NN.N%]`.
fn meters(raw: &str) -> Vec<Meter> {
    let mut found = Vec::new();
    for line in raw.lines() {
        let cells = cells(line);
        let mut i = 0;
        while i < cells.len() {
            // A label: digits right before a '['.
            let start = i;
            while i < cells.len() && cells[i].0.is_ascii_digit() {
                i += 1;
            }
            if i == start || i >= cells.len() || cells[i].0 != '[' {
                i = i.max(start + 1);
                continue;
            }
            let label: String = cells[start..i].iter().map(|c| c.0).collect();
            let Some(close) = cells[i..].iter().position(|c| c.0 == ']') else {
                break;
            };
            let inside = &cells[i + 1..i + close];
            let text: String = inside.iter().map(|c| c.0).collect();
            i += close + 1;
            let Some(number) = text.trim_end().strip_suffix('%') else {
                continue;
            };
            let Some(percent) = number
                .rsplit([' ', '|'])
                .next()
                .and_then(|n| n.parse().ok())
            else {
                continue;
            };
            let mut colored: Vec<(u8, usize)> = Vec::new();
            for (_, fg) in inside {
                if let Some(fg) = fg {
                    match colored.iter_mut().find(|(c, _)| c == fg) {
                        Some((_, n)) => *n += 1,
                        None => colored.push((*fg, 1)),
                    }
                }
            }
            found.push(Meter {
                cpu: label.parse().unwrap(),
                percent,
                inner: inside.len(),
                colored,
            });
        }
    }
    found
}

/// The CPU numbers of `/proc/stat`'s `cpuN` lines.
fn stat_cpus() -> BTreeSet<u32> {
    std::fs::read_to_string("/proc/stat")
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix("cpu")?.split(' ').next()?.parse().ok())
        .collect()
}

fn raw_screen(tmux: &Tmux) -> String {
    String::from_utf8(tmux.run(&["capture-pane", "-p", "-e", "-t", "top"]).stdout).unwrap()
}

/// The meters once `ready` holds for them (the screen captured with its
/// escapes); panics with the last screen after `within`.
fn wait_meters(
    tmux: &Tmux,
    what: &str,
    within: Duration,
    ready: impl Fn(&[Meter]) -> bool,
) -> (String, Vec<Meter>) {
    let deadline = Instant::now() + within;
    loop {
        let raw = raw_screen(tmux);
        let m = meters(&raw);
        if ready(&m) {
            return (raw, m);
        }
        assert!(
            Instant::now() < deadline,
            "never {what}; meters {m:?}; screen:\n{}",
            tmux.screen()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Busy loops in the kernel (reading /dev/zero), killed on drop.
struct Loops(Vec<Child>);

impl Loops {
    fn start(n: usize) -> Loops {
        Loops(
            (0..n)
                .map(|_| {
                    Command::new("sh")
                        .args(["-c", "exec cat /dev/zero > /dev/null"])
                        .stdin(Stdio::null())
                        .spawn()
                        .unwrap()
                })
                .collect(),
        )
    }

    /// Let them run on CPU `cpu` only.
    fn pin(&self, cpu: u32) {
        for child in &self.0 {
            // SAFETY: an all-zero cpu_set_t is the empty set.
            let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
            // SAFETY: `cpu` is a CPU number /proc/stat lists, below
            // CPU_SETSIZE, and `set` is a valid cpu_set_t.
            unsafe { libc::CPU_SET(usize::try_from(cpu).unwrap(), &mut set) };
            let pid = libc::pid_t::try_from(child.id()).unwrap();
            // SAFETY: `set` is a valid cpu_set_t of the size passed.
            let rc = unsafe {
                libc::sched_setaffinity(pid, std::mem::size_of::<libc::cpu_set_t>(), &raw const set)
            };
            assert_eq!(
                rc,
                0,
                "sched_setaffinity to CPU {cpu}: {}",
                std::io::Error::last_os_error()
            );
        }
    }
}

impl Drop for Loops {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

#[test]
fn a_bar_per_cpu_in_columns_that_follow_the_load() {
    let cpus = stat_cpus();
    assert!(!cpus.is_empty(), "no cpuN line in /proc/stat");
    let tmux = Tmux::new("meters");
    tmux.start(&["top", "-d", "0.5"]);
    tmux.wait_for("started", started);
    assert!(meters(&raw_screen(&tmux)).is_empty(), "meters before `1`");
    tmux.keys("1");
    let (raw, shown) = wait_meters(&tmux, "showed the meters", Duration::from_secs(15), |m| {
        !m.is_empty()
    });
    let screen = tmux.screen();
    assert!(
        !screen.contains("%Cpu(s):"),
        "the summary line stays:\n{screen}"
    );
    // One bar per CPU, labelled with its number.
    let labels: Vec<u32> = shown.iter().map(|m| m.cpu).collect();
    let unique: BTreeSet<u32> = labels.iter().copied().collect();
    assert_eq!(labels.len(), unique.len(), "{labels:?}");
    assert_eq!(unique, cpus, "{screen}");
    for m in &shown {
        // Filled as far as the percentage says (rounded to a cell).
        let cells = |n: usize| f64::from(u32::try_from(n).unwrap());
        let want = m.percent / 100.0 * cells(m.inner);
        assert!(
            (cells(m.filled()) - want).abs() <= 1.0,
            "{m:?}: {} cells for {}%",
            m.filled(),
            m.percent
        );
        assert!((0.0..=100.0).contains(&m.percent), "{m:?}");
    }
    // Side by side where the width holds them: fewer lines than bars,
    // each within the terminal's width.
    let bar_lines: Vec<&str> = raw.lines().filter(|l| !meters(l).is_empty()).collect();
    for l in &bar_lines {
        assert!(strip_escapes(l).chars().count() <= WIDTH, "{l}");
    }
    if cpus.len() > 1 {
        assert!(bar_lines.len() < cpus.len(), "{screen}");
        // Too narrow for two: one a line.
        tmux.resize(40, HEIGHT);
        let (raw, _) = wait_meters(&tmux, "one meter a line", Duration::from_secs(15), |m| {
            m.len() == cpus.len()
        });
        let lines: Vec<usize> = raw.lines().map(|l| meters(l).len()).collect();
        assert!(lines.iter().all(|&n| n <= 1), "{lines:?}\n{raw}");
        assert_eq!(lines.iter().sum::<usize>(), cpus.len());
        tmux.resize(WIDTH, HEIGHT);

        // The load: kernel-time loops pinned to one CPU redden its bar
        // beyond the other's, then, moved, the other's.
        let (a, b) = {
            let mut it = cpus.iter().copied();
            (it.next().unwrap(), it.next().unwrap())
        };
        let loops = Loops::start(2);
        let redder = |m: &[Meter], hot: u32, cold: u32| {
            let of = |n: u32| m.iter().find(|x| x.cpu == n);
            match (of(hot), of(cold)) {
                (Some(h), Some(c)) => h.cells_of(RED) >= c.cells_of(RED) + h.inner / 5,
                _ => false,
            }
        };
        for (hot, cold) in [(a, b), (b, a)] {
            loops.pin(hot);
            wait_meters(
                &tmux,
                &format!("CPU {hot}'s bar redder than CPU {cold}'s"),
                Duration::from_secs(20),
                |m| redder(m, hot, cold),
            );
        }
    }
    tmux.keys("1");
    tmux.wait_for("the summary line back", |s| s.contains("%Cpu(s):"));
    tmux.keys("q");
    assert_eq!(tmux.wait_exit(), "0");
}
