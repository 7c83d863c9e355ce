//! `pidmap --long` and `pidmap top` against /proc read here: a sleeping
//! child and parked threads the test creates, compared with their
//! `/proc/PID/task/TID/stat` and `status` lines; a spinning child that
//! `top` must rank by the CPU time it used. Also built into the QEMU
//! guest (binary /bin/pidmap), where `PIDMAP_REQUIRE_SYSCALL=1` requires
//! the columns to come from the kernel's task records.

use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value;

mod support;
use support::{bin, me, Named, Parked};

fn run(args: &[&str]) -> Output {
    Command::new(bin())
        .args(args)
        .env_remove("PIDMAP_BACKEND")
        .output()
        .expect("running pidmap")
}

fn ok(args: &[&str]) -> String {
    let out = run(args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

fn required() -> bool {
    std::env::var("PIDMAP_REQUIRE_SYSCALL").is_ok_and(|v| v == "1")
}

/// The `info_backend` a document must name: in the guest the kernel's
/// records; elsewhere whichever the crate found (/proc when forced).
fn check_info_backend(doc: &Value, backend: &str) {
    let via = doc["info_backend"].as_str().unwrap_or("null");
    match backend {
        "procfs" => assert_eq!(via, "procfs"),
        _ if required() => assert_eq!(via, "syscall", "PIDMAP_INFO must serve --long"),
        _ => assert!(via == "syscall" || via == "procfs", "{via}"),
    }
}

/// A task as /proc shows it, read and split here.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Proc {
    /// stat fields from 3 (state) on, as text.
    fields: Vec<String>,
    comm: String,
    uids: Vec<String>,
    vm_rss_kib: u64,
}

impl Proc {
    #[allow(clippy::similar_names, reason = "tid and tgid are the kernel's names")]
    fn read(tgid: i32, tid: i32) -> Proc {
        let dir = format!("/proc/{tgid}/task/{tid}");
        let stat = String::from_utf8(std::fs::read(format!("{dir}/stat")).unwrap()).unwrap();
        let status = std::fs::read_to_string(format!("{dir}/status")).unwrap();
        let (head, tail) = stat.rsplit_once(") ").unwrap();
        let comm = head.split_once(" (").unwrap().1.to_string();
        let uids = status
            .lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .unwrap()
            .split_whitespace()
            .map(str::to_string)
            .collect();
        // What ps shows as RSS: status's exact VmRSS (none: no memory).
        let vm_rss_kib = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .map_or(0, |v| {
                v.trim().trim_end_matches("kB").trim().parse().unwrap()
            });
        Proc {
            fields: tail.split_whitespace().map(str::to_string).collect(),
            comm,
            uids,
            vm_rss_kib,
        }
    }

    /// stat field `n` (1-based, as proc(5) numbers them).
    fn field(&self, n: usize) -> &str {
        &self.fields[n - 3]
    }

    fn num(&self, n: usize) -> u64 {
        self.field(n).parse().unwrap()
    }

    /// The fields that stay put while a paused task exists.
    fn settled(&self) -> (String, Vec<String>, Vec<String>, u64) {
        let keep = [3, 4, 9, 19, 20, 22, 24];
        (
            self.comm.clone(),
            keep.iter().map(|&n| self.field(n).to_string()).collect(),
            self.uids.clone(),
            self.vm_rss_kib,
        )
    }
}

fn ticks_per_second() -> u64 {
    // SAFETY: sysconf has no preconditions.
    u64::try_from(unsafe { libc::sysconf(libc::_SC_CLK_TCK) }).unwrap()
}

/// Nanoseconds as /proc's clock ticks, rounded down.
fn ticks(ns: &Value) -> u64 {
    ns.as_u64().expect("a number of ns") / (1_000_000_000 / ticks_per_second())
}

/// Whether a task's memory holds still while the CLI runs: not this test
/// process's, whose other test threads allocate and free in parallel (a
/// page can come and go between the readings before and after).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Memory {
    Still,
    Moving,
}

/// A JSON entry against /proc readings before and after it.
fn entry_matches(e: &Value, p: &Proc, after: &Proc, tgid: Option<i32>, memory: Memory) {
    let what = format!("{e}");
    if let Some(tgid) = tgid {
        assert_eq!(e["tgid"], tgid, "{what}");
    }
    assert_eq!(e["status"], "ok", "{what}");
    assert_eq!(e["ppid"].as_u64(), Some(p.num(4)), "{what}");
    assert_eq!(e["state"], p.field(3), "{what}");
    assert_eq!(e["comm"], p.comm, "{what}");
    assert_eq!(e["ruid"].to_string(), p.uids[0], "{what}");
    assert_eq!(e["euid"].to_string(), p.uids[1], "{what}");
    // PIDMAP_TASK_* of the PF_* flags: PF_KTHREAD, PF_USER_WORKER,
    // PF_EXITING, PF_FORKNOEXEC (written out here).
    let task_flags = [(0x0020_0000, 1), (0x4000, 2), (0x4, 4), (0x40, 8)]
        .iter()
        .filter(|(pf, _)| p.num(9) & pf != 0)
        .fold(0, |acc, (_, f)| acc | f);
    assert_eq!(e["task_flags"].as_u64(), Some(task_flags), "{what}");
    assert_eq!(e["policy"].to_string(), p.field(41), "{what}");
    assert_eq!(e["priority"].to_string(), p.field(18), "{what}");
    assert_eq!(e["kernel_thread"], false, "{what}");
    assert_eq!(e["nice"].to_string(), p.field(19), "{what}");
    assert_eq!(e["num_threads"].as_u64(), Some(p.num(20)), "{what}");
    assert_eq!(ticks(&e["start_time_ns"]), p.num(22), "{what}");
    if memory == Memory::Still {
        assert_eq!(e["rss_kib"].as_u64(), Some(p.vm_rss_kib), "{what}");
    } else {
        assert!(e["rss_kib"].as_u64().is_some_and(|kib| kib > 0), "{what}");
    }
    let u = ticks(&e["utime_ns"]);
    let s = ticks(&e["stime_ns"]);
    assert!((p.num(14)..=after.num(14)).contains(&u), "{what}");
    assert!((p.num(15)..=after.num(15)).contains(&s), "{what}");
}

/// Reads `(tgid, tid)` around `f`, until /proc held still; `f` gets the
/// readings before and after.
fn around<T>(tasks: &[(i32, i32)], mut f: impl FnMut() -> T) -> (Vec<Proc>, T, Vec<Proc>) {
    for _ in 0..50 {
        let before: Vec<Proc> = tasks.iter().map(|&(g, t)| Proc::read(g, t)).collect();
        let got = f();
        let after: Vec<Proc> = tasks.iter().map(|&(g, t)| Proc::read(g, t)).collect();
        if before
            .iter()
            .zip(&after)
            .all(|(b, a)| b.settled() == a.settled())
        {
            return (before, got, after);
        }
    }
    panic!("/proc never held still around the listing");
}

fn find(entries: &Value, id: i32) -> &Value {
    entries
        .as_array()
        .expect("entries")
        .iter()
        .find(|e| e["pid"] == id)
        .unwrap_or_else(|| panic!("no entry for {id}"))
}

#[test]
fn long_json_matches_proc() {
    let kid = Named::spawn(b"rec-kid");
    let parked = Parked::spawn(2);
    let tasks = [(kid.0, kid.0), (me(), parked.tids[0])];
    for backend in ["auto", "procfs"] {
        let (before, (t, p), after) = around(&tasks, || {
            let t = ok(&["--backend", backend, "--json", "tasks", "--long"]);
            let p = ok(&["--backend", backend, "--json", "procs", "--long"]);
            (t, p)
        });
        let tasks_doc: Value = serde_json::from_str(&t).unwrap();
        let procs_doc: Value = serde_json::from_str(&p).unwrap();
        for doc in [&tasks_doc, &procs_doc] {
            assert_eq!(doc["schema"], 2);
            check_info_backend(doc, backend);
            let ids = doc["ids"].as_array().unwrap();
            let entries = doc["entries"].as_array().unwrap();
            assert_eq!(ids.len(), entries.len());
            assert!(entries.iter().zip(ids).all(|(e, id)| e["pid"] == *id));
        }
        let e = find(&tasks_doc["entries"], kid.0);
        entry_matches(e, &before[0], &after[0], Some(kid.0), Memory::Still);
        assert_eq!(e["ppid"], me());
        assert_eq!(
            (e["comm"].as_str(), e["state"].as_str()),
            (Some("rec-kid"), Some("S"))
        );
        let e = find(&tasks_doc["entries"], parked.tids[0]);
        entry_matches(e, &before[1], &after[1], Some(me()), Memory::Moving);
        let e = find(&procs_doc["entries"], kid.0);
        entry_matches(e, &before[0], &after[0], None, Memory::Still);
        assert!(e.get("tgid").is_none(), "procs entries have no tgid: {e}");
    }
}

#[test]
fn long_table_matches_proc() {
    let kid = Named::spawn(b"rec-row");
    for backend in ["auto", "procfs"] {
        let (before, text, _) = around(&[(kid.0, kid.0)], || {
            ok(&["--backend", backend, "tasks", "--long"])
        });
        let p = &before[0];
        let mut lines = text.lines();
        let head: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
        assert_eq!(
            head,
            ["TID", "TGID", "PPID", "S", "UID", "NI", "NLWP", "RSS", "TIME", "START", "COMMAND"]
        );
        let row: Vec<&str> = lines
            .find(|l| l.split_whitespace().next() == Some(&kid.0.to_string()))
            .expect("the child's row")
            .split_whitespace()
            .collect();
        let rss = p.vm_rss_kib.to_string();
        let want = [
            kid.0.to_string(),
            kid.0.to_string(),
            p.field(4).to_string(),
            p.field(3).to_string(),
            p.uids[1].clone(),
            p.field(19).to_string(),
            p.field(20).to_string(),
            rss,
            "00:00:00".to_string(),
        ];
        assert_eq!(&row[..9], want, "{backend}: {row:?}");
        assert_eq!(row[10..].join(" "), "rec-row", "{backend}: {row:?}");
        assert!(
            row[9].contains(':') && row[9].len() == 5,
            "START {}",
            row[9]
        );
    }
}

#[test]
fn top_ranks_tasks_by_cpu_used_since_the_last_refresh() {
    let busy = Named::spawn_spinning(b"rec-busy");
    let cpu = |p: &Proc| p.num(14) + p.num(15);
    let before = Proc::read(busy.0, busy.0);
    let out = ok(&["--json", "top", "-n", "2", "-d", "0.3"]);
    let after = Proc::read(busy.0, busy.0);
    let docs: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON document per line"))
        .collect();
    assert_eq!(docs.len(), 2, "{out}");
    let tick_ns = 1_000_000_000 / ticks_per_second();
    for (n, doc) in docs.iter().enumerate() {
        assert_eq!(
            (doc["schema"].as_u64(), doc["command"].as_str()),
            (Some(2), Some("top"))
        );
        assert_eq!(
            doc["iteration"].as_u64(),
            Some(u64::try_from(n).unwrap() + 1)
        );
        check_info_backend(doc, "auto");
        assert!(doc["elapsed_ns"].as_u64().unwrap() >= 300_000_000, "{doc}");
        let tasks = doc["tasks"].as_array().unwrap();
        assert_eq!(
            doc["count"].as_u64(),
            Some(u64::try_from(tasks.len()).unwrap())
        );
        let deltas: Vec<u64> = tasks
            .iter()
            .map(|t| t["cpu_delta_ns"].as_u64().unwrap())
            .collect();
        assert!(
            deltas.windows(2).all(|w| w[0] >= w[1]),
            "not sorted: {deltas:?}"
        );
        let mine = tasks
            .iter()
            .find(|t| t["tid"] == busy.0)
            .expect("the spinning child");
        assert_eq!(mine["comm"], "rec-busy");
        let delta = mine["cpu_delta_ns"].as_u64().unwrap();
        // It spun during the interval, and never more than /proc saw it
        // use from before the first sample to after the last.
        assert!(
            delta > 0 && mine["cpu_percent"].as_f64().unwrap() > 5.0,
            "{mine}"
        );
        assert!(
            delta <= (cpu(&after) - cpu(&before) + 2) * tick_ns,
            "{mine}"
        );
        let total = mine["utime_ns"].as_u64().unwrap() + mine["stime_ns"].as_u64().unwrap();
        assert!(total / tick_ns + 2 >= cpu(&before) && total / tick_ns <= cpu(&after) + 1);
    }
}

#[test]
fn top_prints_a_header_and_every_task_once_per_refresh() {
    let kid = Named::spawn(b"rec-top");
    let started = Instant::now();
    let text = ok(&["top", "-n", "1", "-d", "0.2"]);
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "one refresh took too long"
    );
    let lines: Vec<&str> = text.lines().collect();
    let header = lines[0];
    assert!(header.starts_with("pidmap top - "), "{header}");
    // `Tasks: N total, ...; M shown; ...`: M rows follow.
    let count: usize = header
        .split("; ")
        .find_map(|s| s.strip_suffix(" shown"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no shown count in {header:?}"));
    let cols: Vec<&str> = lines[1].split_whitespace().collect();
    assert_eq!(cols, ["TID", "TGID", "S", "%CPU", "TIME+", "COMMAND"]);
    let rows: Vec<&str> = lines[2..]
        .iter()
        .copied()
        .filter(|l| !l.is_empty())
        .collect();
    assert_eq!(rows.len(), count, "{text}");
    let tids: Vec<i32> = rows
        .iter()
        .map(|r| r.split_whitespace().next().unwrap().parse().unwrap())
        .collect();
    let mut unique = tids.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), tids.len(), "a task listed twice");
    let row = rows
        .iter()
        .find(|r| r.split_whitespace().next() == Some(&kid.0.to_string()))
        .expect("the sleeping child");
    let c: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(
        (c[1], c[2], c[3], c[5]),
        (&*kid.0.to_string(), "S", "0.0", "rec-top"),
        "{row}"
    );
}

#[test]
fn top_rejects_bad_input_with_one_clear_line() {
    for (args, names) in [
        (&["top", "-d", "x"][..], "--watch"),
        (&["top", "-d", "0"], "--watch"),
        (&["top", "-d", "-1"], "--watch"),
        (&["top", "--watch", "nan"], "--watch"),
        (&["top", "-n", "0"], "--iterations"),
        (&["top", "-n", "two"], "--iterations"),
        (&["top", "-n", "-1"], "--iterations"),
    ] {
        let out = run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        let first = err.lines().next().unwrap_or_default();
        assert!(
            first.starts_with("error: invalid value") && first.contains(names),
            "{args:?}: {err}"
        );
    }
}
