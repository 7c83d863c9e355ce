//! `pidmap procs --long` and `pidmap tasks --long` against Debian's procps
//! `ps`, field by field: PPID, S (ps's state letter, the first of STAT),
//! NI, NLWP, RSS, TIME and START, as text, the way a user compares them.
//!
//! With `-L`, `ps` prints on a thread-group leader's row the whole
//! process's TIME (`/proc/PID/stat`'s), on other rows the thread's own;
//! `tasks --long` follows that rule, so the comparison stays exact.
//!
//! `ps` runs before and after pidmap. Only tasks whose whole `ps` row is
//! the same in both runs are compared (a task that used CPU time, changed
//! state or memory in between, or was replaced by another with the same
//! id, is skipped), and so is this test's own process. Any difference on
//! a task that held still is a failure. procps is required: CI installs
//! it, and without `ps` this test fails.
//!
//! The library's records follow `ps` (NI only under `SCHED_OTHER` and
//! `SCHED_BATCH`, the exact RSS, TIME as group totals for a process), so
//! every field must match.

use std::collections::BTreeMap;
use std::process::Command;

mod support;
use support::{bin, me, stdout_of};

/// The compared fields, in the order both sides are read into.
const FIELDS: [&str; 7] = ["PPID", "S", "NI", "NLWP", "RSS", "TIME", "START"];

/// One task's fields by name; `key` is what must not change for the
/// task to count as the same one (start time to the second, and name).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Task {
    tgid: i32,
    fields: BTreeMap<&'static str, String>,
    identity: String,
}

/// `ps` with a fixed format, its rows by id (tid with `-L`).
fn ps(threads: bool) -> BTreeMap<i32, Task> {
    let format = if threads {
        "pid,lwp,ppid,s,ni,rss,nlwp,time,start_time,lstart,comm"
    } else {
        "pid,pid,ppid,s,ni,rss,nlwp,time,start_time,lstart,comm"
    };
    let mut cmd = Command::new("ps");
    cmd.arg(if threads { "-eLo" } else { "-eo" })
        .arg(format)
        .arg("--no-headers")
        .env("LC_ALL", "C");
    let text = stdout_of(
        &mut cmd,
        "procps `ps` (required for this test: apt-get install procps)",
    );
    text.lines()
        .map(|line| {
            let t: Vec<&str> = line.split_whitespace().collect();
            assert!(t.len() >= 14, "ps row: {line:?}");
            let num = |s: &str| s.parse::<i32>().unwrap_or_else(|_| panic!("{line:?}"));
            let fields = BTreeMap::from([
                ("PPID", t[2].to_string()),
                ("S", t[3].to_string()),
                ("NI", t[4].to_string()),
                ("RSS", t[5].to_string()),
                ("NLWP", t[6].to_string()),
                ("TIME", t[7].to_string()),
                ("START", t[8].to_string()),
            ]);
            let identity = t[9..].join(" ");
            (
                num(t[1]),
                Task {
                    tgid: num(t[0]),
                    fields,
                    identity,
                },
            )
        })
        .collect()
}

/// pidmap's `--long` rows by id: `procs` (PID PPID S UID NI NLWP RSS TIME
/// START COMMAND) or `tasks` (TID TGID, then the same).
fn pidmap(threads: bool) -> BTreeMap<i32, BTreeMap<&'static str, String>> {
    let cmd = if threads { "tasks" } else { "procs" };
    let text = stdout_of(
        Command::new(bin())
            .args([cmd, "--long", "--no-headers"])
            .env("LC_ALL", "C"),
        "pidmap",
    );
    let skip = usize::from(threads);
    text.lines()
        .map(|line| {
            let t: Vec<&str> = line.split_whitespace().collect();
            assert!(t.len() >= 10 + skip, "pidmap row: {line:?}");
            let c = |i: usize| t[i + skip].to_string();
            let fields = BTreeMap::from([
                ("PPID", c(1)),
                ("S", c(2)),
                ("NI", c(4)),
                ("NLWP", c(5)),
                ("RSS", c(6)),
                ("TIME", c(7)),
                ("START", c(8)),
            ]);
            (t[0].parse().unwrap(), fields)
        })
        .collect()
}

/// One round: the tasks that held still, and each (task, field) that
/// differed, with its description.
fn round(threads: bool) -> (Vec<i32>, BTreeMap<(i32, &'static str), String>) {
    let before = ps(threads);
    let ours = pidmap(threads);
    let after = ps(threads);
    let mut still = Vec::new();
    let mut diffs = BTreeMap::new();
    for (id, task) in &before {
        if task.tgid == me() || after.get(id) != Some(task) {
            continue;
        }
        still.push(*id);
        let Some(mine) = ours.get(id) else {
            diffs.insert((*id, "missing"), format!("{id} ({})", task.identity));
            continue;
        };
        for f in FIELDS {
            if mine[f] != task.fields[f] {
                let d = format!(
                    "{id} {}: ps {:?}, pidmap {:?}",
                    task.identity, task.fields[f], mine[f]
                );
                diffs.insert((*id, f), d);
            }
        }
    }
    (still, diffs)
}

/// How many rounds are run. A task can hold still in both `ps` runs and
/// still run for a moment in between (a state letter of `R` where both
/// `ps` runs saw `S`), so a difference counts when it is there in every
/// round in which its task held still, and in at least three: a task on a
/// busy machine can be caught running between the `ps` runs twice.
const ROUNDS: usize = 5;

fn check(threads: bool) {
    let what = if threads { "tasks" } else { "procs" };
    let rounds: Vec<_> = (0..ROUNDS).map(|_| round(threads)).collect();
    let mut still_in: BTreeMap<i32, usize> = BTreeMap::new();
    for (still, _) in &rounds {
        for id in still {
            *still_in.entry(*id).or_default() += 1;
        }
    }
    let mut seen: BTreeMap<(i32, &str), (usize, &String)> = BTreeMap::new();
    for (_, diffs) in &rounds {
        for (k, d) in diffs {
            seen.entry(*k).or_insert((0, d)).0 += 1;
        }
    }
    let mut by_field: BTreeMap<&str, Vec<&String>> = BTreeMap::new();
    for ((id, field), (n, d)) in &seen {
        if *n >= 3 && *n == still_in[id] {
            by_field.entry(field).or_default().push(d);
        }
    }
    let compared = still_in.values().filter(|n| **n >= 3).count();
    // A comparison of nothing proves nothing: this machine has kernel
    // threads and services that hold still.
    assert!(compared >= 10, "{what}: only {compared} tasks held still");
    let report: Vec<String> = by_field
        .iter()
        .map(|(f, v)| {
            let examples: Vec<&&String> = v.iter().take(6).collect();
            format!("{f}: {} differ, e.g. {examples:#?}", v.len())
        })
        .collect();
    assert!(
        report.is_empty(),
        "{what} --long differs from ps on tasks that held still ({compared} compared):\n{}",
        report.join("\n")
    );
}

#[test]
fn procs_long_matches_ps() {
    check(false);
}

#[test]
fn tasks_long_matches_ps_per_thread() {
    check(true);
}
