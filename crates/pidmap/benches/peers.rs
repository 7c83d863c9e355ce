//! A full top-style refresh — every task: tid, tgid, ppid, state, utime,
//! stime, rss, start time, comm — with this crate and its peers, in one
//! process, interleaved round by round (so a shared machine's load hits
//! them alike), each method keeping what it keeps between refreshes (our
//! handle and `Vec`, sysinfo's `System`):
//!
//! * `pidmap auto` — `Pidmap::new()` ([`Backend::Auto`]): the syscall
//!   records on a kernel with the series and a build with
//!   `series-syscalls`, else the fallback;
//! * `pidmap fallback` — [`Backend::Procfs`];
//! * `pidmap fallback, kept files` — the same with
//!   `Builder::keep_files(true)`, which keeps files open between full
//!   refreshes as sysinfo does;
//! * `procfs` — `procfs::process::all_processes()` → `tasks()` → `stat()`;
//! * `sysinfo` — `System::refresh_processes_specifics` with tasks, CPU
//!   times and memory.
//!
//! Before timing, one refresh of each is cross-checked: they must have
//! seen the same tids, but for tasks that came or went between them.
//!
//! Run: `cargo bench -p pidmap --bench peers` (the host's tasks, then
//! with 100 processes × 100 parked threads forked for the run, killed and
//! reaped after it); `-- --rounds N` sets the rounds (default 30),
//! `-- --no-family` skips the second set, `-- --only-family` the first,
//! `-- --only NAME` runs the methods whose name contains NAME (for a
//! profiler).
//!
//! Notes on what each reads: the fallback reads `stat` and, for the exact
//! RSS `ps` shows, `statm` per thread group (its resident field, the sum
//! `VmRSS` shows); with kept files it keeps them and the `task`
//! directories open between full refreshes, within half the soft
//! `RLIMIT_NOFILE` for the process; `procfs`
//! reads `stat` only (its rss is stat's approximate counter); sysinfo
//! reads `stat` and `statm` and keeps files open between refreshes.

use std::collections::BTreeSet;
use std::hint::black_box;
use std::time::{Duration, Instant};

use pidmap::{Backend, InfoFields, Pidmap, Query, TaskInfo};
use sysinfo::{ProcessRefreshKind, ProcessesToUpdate, System};

const FIELDS: InfoFields = InfoFields::TGID
    .union(InfoFields::PPID)
    .union(InfoFields::STATE)
    .union(InfoFields::CPU_TIME)
    .union(InfoFields::RSS)
    .union(InfoFields::START_TIME)
    .union(InfoFields::COMM);

/// One row of a refresh, the same for every method. The name is borrowed
/// from each method's own record, so that no method pays an allocation
/// per row that another does not.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Row<'a> {
    tid: i32,
    tgid: i32,
    ppid: i32,
    state: char,
    utime: u64,
    stime: u64,
    rss: u64,
    start: u64,
    comm: &'a str,
}

type Refresh<'a> = Box<dyn FnMut(&mut Vec<i32>) -> usize + 'a>;

fn pidmap_method(backend: Option<Backend>, keep_files: bool) -> Refresh<'static> {
    let mut builder = Pidmap::builder().keep_files(keep_files);
    if let Some(b) = backend {
        builder = builder.backend(b);
    }
    let mut pm = builder.build().expect("a pidmap handle");
    if backend.is_none() {
        println!("  pidmap auto: {:?} backend", pm.active());
    }
    let mut recs: Vec<TaskInfo> = Vec::new();
    Box::new(move |tids| {
        pm.fill_info(Query::all_tasks(), FIELDS, &mut recs)
            .expect("pidmap refresh");
        tids.clear();
        let mut bytes = 0;
        for r in &recs {
            let row = Row {
                tid: r.tid.as_raw(),
                tgid: r.tgid.map_or(0, pidmap::Pid::as_raw),
                ppid: r.ppid.map_or(0, pidmap::Pid::as_raw),
                state: r.state.map_or('?', char::from),
                utime: r.utime.map_or(0, |d| d.as_millis() as u64),
                stime: r.stime.map_or(0, |d| d.as_millis() as u64),
                rss: r.rss_bytes().unwrap_or(0),
                start: r.start_time.map_or(0, |d| d.as_millis() as u64),
                comm: r
                    .comm
                    .as_ref()
                    .and_then(|c| std::str::from_utf8(c.as_bytes()).ok())
                    .unwrap_or_default(),
            };
            bytes += black_box(&row).comm.len();
            tids.push(row.tid);
        }
        bytes
    })
}

fn procfs_method() -> Refresh<'static> {
    let page = procfs::page_size();
    Box::new(move |tids| {
        tids.clear();
        let mut bytes = 0;
        for p in procfs::process::all_processes().expect("procfs").flatten() {
            let Ok(tasks) = p.tasks() else { continue };
            for t in tasks.flatten() {
                let Ok(s) = t.stat() else { continue };
                let row = Row {
                    tid: s.pid,
                    tgid: t.pid,
                    ppid: s.ppid,
                    state: s.state,
                    utime: s.utime,
                    stime: s.stime,
                    rss: s.rss * page,
                    start: s.starttime,
                    comm: &s.comm,
                };
                bytes += black_box(&row).comm.len();
                tids.push(row.tid);
            }
        }
        bytes
    })
}

fn sysinfo_method() -> Refresh<'static> {
    let mut sys = System::new();
    let kind = ProcessRefreshKind::nothing()
        .with_cpu()
        .with_memory()
        .with_tasks();
    Box::new(move |tids| {
        sys.refresh_processes_specifics(ProcessesToUpdate::All, true, kind);
        tids.clear();
        let mut bytes = 0;
        for (pid, p) in sys.processes() {
            let tid = i32::try_from(pid.as_u32()).unwrap_or(0);
            let tgid = match p.thread_kind() {
                Some(_) => p.parent().map_or(0, sysinfo::Pid::as_u32),
                None => pid.as_u32(),
            };
            let name = p.name().to_string_lossy();
            let row = Row {
                tid,
                tgid: i32::try_from(tgid).unwrap_or(0),
                ppid: p
                    .parent()
                    .map_or(0, |x| i32::try_from(x.as_u32()).unwrap_or(0)),
                state: p.status().to_string().chars().next().unwrap_or('?'),
                utime: p.accumulated_cpu_time(),
                stime: 0,
                rss: p.memory(),
                start: p.start_time(),
                comm: &name,
            };
            bytes += black_box(&row).comm.len();
            tids.push(row.tid);
        }
        bytes
    })
}

/// Fork `n` processes of `threads` threads each (the leader included),
/// parked until killed; returns their pids.
fn spawn_family(n: usize, threads: usize) -> Vec<libc::pid_t> {
    let mut kids = Vec::new();
    for _ in 0..n {
        // SAFETY: the bench has no other thread at this point, so the
        // child may allocate and spawn threads; it never returns.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork");
        if pid == 0 {
            // SAFETY: prctl with integer arguments.
            unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
            for _ in 1..threads {
                std::thread::spawn(|| loop {
                    std::thread::park();
                });
            }
            loop {
                // SAFETY: no preconditions; killed by the parent.
                unsafe { libc::pause() };
            }
        }
        kids.push(pid);
    }
    // Wait until every thread is there.
    let want = n * threads;
    let t0 = Instant::now();
    loop {
        let have: usize = kids
            .iter()
            .map(|p| {
                std::fs::read_dir(format!("/proc/{p}/task")).map_or(0, std::iter::Iterator::count)
            })
            .sum();
        if have >= want || t0.elapsed() > Duration::from_secs(60) {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    kids
}

/// The methods must see the same tasks. Every tid that the first method
/// sees both before and after the others' refreshes lived through them
/// all, so each method must have it; a tid only one method saw came or
/// went between their refreshes. Returns the number of tids the first
/// method saw.
fn cross_check(methods: &mut [(&str, Refresh<'_>)]) -> usize {
    let refresh = |f: &mut Refresh<'_>| {
        let mut v = Vec::new();
        f(&mut v);
        v.into_iter().collect::<BTreeSet<i32>>()
    };
    let before = refresh(&mut methods[0].1);
    let sets: Vec<(&str, BTreeSet<i32>)> = methods
        .iter_mut()
        .map(|(name, f)| (*name, refresh(f)))
        .collect();
    let after = refresh(&mut methods[0].1);
    let lived_through: BTreeSet<i32> = before.intersection(&after).copied().collect();
    for (name, s) in &sets {
        let missed: Vec<_> = lived_through.difference(s).take(10).collect();
        assert!(
            missed.is_empty(),
            "{name} missed tids that lived through the check: {missed:?}"
        );
        println!(
            "  cross-check: {name}: {} tids, all {} that lived through the check",
            s.len(),
            lived_through.len()
        );
    }
    sets[0].1.len()
}

fn run(label: &str, rounds: usize, only: Option<&str>) {
    let mut methods: Vec<(&str, Refresh<'_>)> = vec![
        (
            "pidmap fallback",
            pidmap_method(Some(Backend::Procfs), false),
        ),
        (
            "pidmap fallback, kept files",
            pidmap_method(Some(Backend::Procfs), true),
        ),
        ("pidmap auto", pidmap_method(None, false)),
        ("procfs", procfs_method()),
        ("sysinfo", sysinfo_method()),
    ];
    if let Some(only) = only {
        methods.retain(|(name, _)| name.contains(only));
        assert!(!methods.is_empty(), "no method named like {only:?}");
    }
    println!("{label}:");
    let tasks = cross_check(&mut methods);
    let mut samples: Vec<Vec<f64>> = vec![Vec::with_capacity(rounds); methods.len()];
    let mut tids = Vec::new();
    // Each round starts with the next method and steps through them by a
    // stride coprime to their number, the next stride each round, so that
    // no method always runs right after the same other one (cache,
    // emulator and scheduler effects of what ran before).
    let n = methods.len();
    let strides: Vec<usize> = (1..n.max(2)).filter(|&s| gcd(s, n) == 1).collect();
    for round in 0..rounds {
        let stride = strides[round % strides.len()];
        for i in (0..n).map(|k| (round + k * stride) % n) {
            let f = &mut methods[i].1;
            let t = Instant::now();
            black_box(f(&mut tids));
            samples[i].push(t.elapsed().as_secs_f64() * 1e3);
        }
    }
    let medians: Vec<f64> = samples
        .iter_mut()
        .map(|s| {
            s.sort_by(f64::total_cmp);
            s[s.len() / 2]
        })
        .collect();
    println!("  {tasks} tasks, {rounds} interleaved rounds; ms per refresh:");
    for (i, (name, _)) in methods.iter().enumerate() {
        let s = &samples[i];
        println!(
            "  {name:<16} median {:>8.2}  min–max {:>8.2}–{:<8.2}  {:>5.2}x the fallback's time",
            medians[i],
            s[0],
            s[s.len() - 1],
            medians[i] / medians[0]
        );
    }
    // The bars: each peer's median time over each of ours.
    let median_of = |name: &str| {
        let i = methods.iter().position(|(n, _)| *n == name)?;
        Some(medians[i])
    };
    for ours in [
        "pidmap fallback",
        "pidmap fallback, kept files",
        "pidmap auto",
    ] {
        let Some(ours_ms) = median_of(ours) else {
            continue;
        };
        let ratios: Vec<String> = ["procfs", "sysinfo"]
            .iter()
            .filter_map(|peer| Some(format!("{peer} {:.2}x", median_of(peer)? / ours_ms)))
            .collect();
        if !ratios.is_empty() {
            println!("  faster than peers, {ours}: {}", ratios.join(", "));
        }
    }
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let value = |flag: &str| {
        let i = args.iter().position(|a| a == flag)?;
        args.get(i + 1).map(String::as_str)
    };
    let rounds = value("--rounds").and_then(|r| r.parse().ok()).unwrap_or(30);
    let only = value("--only");
    let has = |flag: &str| args.iter().any(|a| a == flag);
    // `cargo bench` passes `--bench`; a `cargo test` run of benches only
    // checks that it starts.
    if has("--test") || !has("--bench") {
        println!("peers: run with `cargo bench -p pidmap --bench peers`");
        return;
    }
    if !has("--only-family") {
        run("host tasks", rounds, only);
    }
    if has("--no-family") {
        return;
    }
    // Forked now: the bench is still single-threaded (no method spawns
    // threads), and the children only park threads until killed.
    let kids = spawn_family(100, 100);
    run("host tasks + 100 processes x 100 threads", rounds, only);
    for k in kids {
        // SAFETY: killing and reaping our own children.
        unsafe {
            libc::kill(k, libc::SIGKILL);
            libc::waitpid(k, std::ptr::null_mut(), 0);
        }
    }
}
