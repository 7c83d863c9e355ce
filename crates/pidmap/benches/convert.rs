//! The crate's share of a top-style refresh through the records: the
//! same tasks and fields read raw by pidmap_info(2) and through
//! [`Pidmap::fill_info`] into [`TaskInfo`]s, in one process, interleaved
//! round by round, so that the difference is what the crate adds to the
//! kernel's records (the conversion, its checks, the group fields' merge).
//!
//! Rows, each a full refresh of every task (tid, tgid, ppid, state,
//! utime, stime, rss, start time, comm, as `peers`):
//!
//! * `raw, one call set` — pidmap_info(2) with all of those fields, 512
//!   records a call, through /proc's view, as `bench/record-costs.c`'s
//!   "top refresh";
//! * `raw, group calls` — the calls the handle makes for a threaded
//!   system: a record per process with its parent, resident set and state,
//!   then a record per task with the rest;
//! * `crate: fill_info` — [`Pidmap::new`] ([`pidmap::Backend::Auto`]) and
//!   `fill_info(Query::all_tasks(), ..)` into a kept `Vec`;
//! * `crate: records` — the same through [`Pidmap::records`]:
//!   the kernel's records handed out as written ([`TaskRecord`]s), no
//!   field converted;
//! * `raw, ids only` — pidmap_info(2) with no field but the ids;
//! * `crate: fill_info, id only` — the crate with no field but the ids:
//!   beside the row above, its cost per record that no field adds.
//!
//! Before timing, the raw records and the crate's (both forms) are
//! cross-checked: the same tids, but for tasks that came or went between
//! the calls, and the same tgid, ppid, comm, start time and resident set
//! for each.
//!
//! It needs the series' calls (the patched guest and a build with
//! `series-syscalls`): elsewhere it says so and measures nothing. The
//! clock is `CLOCK_MONOTONIC` (`Instant`): on the instruction clock
//! (`cargo xtask qemu-run --instructions`) a nanosecond is an instruction.
//!
//! Build (static, for the guest) and run:
//!
//! ```text
//! RUSTFLAGS="-C target-feature=+crt-static" cargo bench -p pidmap \
//!     --bench convert --features series-syscalls --no-run \
//!     --target x86_64-unknown-linux-gnu
//! cargo xtask qemu-run --instructions --add <the bench's executable> -- \
//!     /add/convert-<hash> --bench --family 100x100 --rounds 5
//! ```
//!
//! `--family PxT` forks P processes of T threads for the run (default
//! none: the system's own tasks).

use std::collections::BTreeMap;
use std::hint::black_box;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use pidmap::{InfoFields, Pidmap, Query, TaskInfo, TaskRecord, SYSCALL_NUMBERS};

const FIELDS: InfoFields = InfoFields::TGID
    .union(InfoFields::PPID)
    .union(InfoFields::STATE)
    .union(InfoFields::CPU_TIME)
    .union(InfoFields::RSS)
    .union(InfoFields::START_TIME)
    .union(InfoFields::COMM);

// The uapi's bits (include/uapi/linux/pidmap.h).
const INFO_ID: u64 = 1 << 0;
const INFO_PPID: u64 = 1 << 1;
const INFO_CPUTIME: u64 = 1 << 5;
const INFO_START_TIME: u64 = 1 << 6;
const INFO_RSS: u64 = 1 << 7;
const INFO_STATE: u64 = 1 << 8;
const INFO_COMM: u64 = 1 << 9;
const SCOPE_PROCS: u32 = 0;
const SCOPE_TASKS: u32 = 1;
const TOP: u64 =
    INFO_ID | INFO_PPID | INFO_STATE | INFO_CPUTIME | INFO_START_TIME | INFO_RSS | INFO_COMM;
const PER_PROCESS: u64 = INFO_ID | INFO_PPID | INFO_RSS | INFO_STATE;
const PER_TASK: u64 = INFO_ID | INFO_STATE | INFO_CPUTIME | INFO_START_TIME | INFO_COMM;
const BATCH: usize = 512;

/// `struct pidmap_req`.
#[repr(C)]
#[derive(Default)]
struct Req {
    size: u32,
    scope: u32,
    last_id: u64,
    pidfd: i32,
    filter: u32,
    info_size: u32,
    reserved: u32,
    info_mask: u64,
    procfs_fd: u32,
    pidns_fd: u32,
    pidns_id: u64,
}

/// `struct pidmap_info`.
#[repr(C)]
#[derive(Clone, Copy)]
struct Info {
    mask: u64,
    supported_mask: u64,
    pidfs_id: u64,
    tid: u32,
    tgid: u32,
    ppid: u32,
    ruid: u32,
    euid: u32,
    nice: i32,
    priority: i32,
    policy: u32,
    num_threads: u32,
    task_flags: u32,
    utime_ns: u64,
    stime_ns: u64,
    start_time_ns: u64,
    rss_bytes: u64,
    state: u8,
    spare: [u8; 7],
    comm: [u8; 64],
    min_flt: u64,
    maj_flt: u64,
    nvcsw: u64,
    nivcsw: u64,
}

/// Every record of `scope` with `mask` into `out`, 512 a call; each
/// chunk handed to `take`.
fn raw_records(
    view: u32,
    scope: u32,
    mask: u64,
    room: &mut [Info],
    mut take: impl FnMut(&[Info]),
) -> usize {
    let nr = SYSCALL_NUMBERS.expect("the series' numbers").pidmap_info;
    let mut req = Req {
        size: u32::try_from(std::mem::size_of::<Req>()).unwrap(),
        scope,
        info_size: u32::try_from(std::mem::size_of::<Info>()).unwrap(),
        info_mask: mask,
        procfs_fd: view,
        ..Req::default()
    };
    let mut total = 0;
    loop {
        // SAFETY: `req` is a valid request of its size and `room` holds
        // `room.len()` records of `info_size` bytes, which the kernel
        // writes (any bytes are a valid `Info`: integers and arrays).
        let n = unsafe {
            libc::syscall(
                nr,
                std::ptr::addr_of!(req),
                room.as_mut_ptr(),
                room.len(),
                0u32,
            )
        };
        assert!(n >= 0, "pidmap_info: {}", std::io::Error::last_os_error());
        let n = usize::try_from(n).unwrap();
        if n == 0 {
            return total;
        }
        take(&room[..n]);
        total += n;
        req.last_id = u64::from(room[n - 1].tid);
    }
}

/// What the cross-check compares of a task.
#[derive(Debug, PartialEq, Eq)]
struct Check {
    tgid: i32,
    ppid: i32,
    comm: Vec<u8>,
    start_ns: u64,
    /// `None` for this process, whose resident set moves as it runs.
    rss: Option<u64>,
}

fn raw_checks(view: u32, room: &mut [Info]) -> BTreeMap<i32, Check> {
    let mut all = BTreeMap::new();
    let hz = u64::try_from(rustix_hz()).unwrap();
    raw_records(view, SCOPE_TASKS, TOP, room, |chunk| {
        for r in chunk {
            let len = r.comm.iter().position(|&b| b == 0).unwrap_or(63).min(63);
            // In ticks and back: the crate's resolution.
            let tick = 1_000_000_000 / hz;
            all.insert(
                i32::try_from(r.tid).unwrap(),
                Check {
                    tgid: i32::try_from(r.tgid).unwrap(),
                    ppid: i32::try_from(r.ppid).unwrap(),
                    comm: r.comm[..len].to_vec(),
                    start_ns: r.start_time_ns / tick * tick,
                    rss: (r.tgid != std::process::id()).then_some(r.rss_bytes),
                },
            );
        }
    });
    all
}

fn rustix_hz() -> i64 {
    // SAFETY: sysconf with a valid name.
    unsafe { libc::sysconf(libc::_SC_CLK_TCK) }
}

fn crate_checks(recs: &[TaskInfo]) -> BTreeMap<i32, Check> {
    recs.iter()
        .map(|r| {
            let start = r.start_time.expect("a start time");
            (
                r.tid.as_raw(),
                Check {
                    tgid: r.tgid.expect("a tgid").as_raw(),
                    ppid: r.ppid.expect("a ppid").as_raw(),
                    comm: r.comm.as_ref().expect("a comm").as_bytes().to_vec(),
                    start_ns: u64::try_from(start.as_nanos()).unwrap(),
                    rss: (r.tgid != Some(pidmap::Pid::this_process()))
                        .then(|| r.rss_bytes().expect("an rss")),
                },
            )
        })
        .collect()
}

/// Every task the two saw alike: the same fields for each tid both saw,
/// and few tids seen by one alone (tasks that came or went in between).
fn cross_check(raw: &BTreeMap<i32, Check>, ours: &BTreeMap<i32, Check>) {
    let mut only = 0;
    for (tid, c) in raw {
        match ours.get(tid) {
            Some(o) => assert_eq!(c, o, "tid {tid}: raw record against the crate's"),
            None => only += 1,
        }
    }
    only += ours.keys().filter(|t| !raw.contains_key(t)).count();
    assert!(
        only <= 4 + raw.len() / 100,
        "{only} of {} tids seen by one side only",
        raw.len()
    );
    println!(
        "cross-check: {} tasks, {only} seen by one side only: passed",
        raw.len()
    );
}

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
    let want = n * threads;
    let t0 = Instant::now();
    loop {
        let have: usize = kids
            .iter()
            .map(|p| std::fs::read_dir(format!("/proc/{p}/task")).map_or(0, Iterator::count))
            .sum();
        if have >= want || t0.elapsed() > Duration::from_secs(120) {
            println!("family: {n} processes, {have} of {want} tasks");
            return kids;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn median(v: &mut [f64]) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], v[0], v[v.len() - 1])
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let value = |flag: &str| {
        let i = args.iter().position(|a| a == flag)?;
        args.get(i + 1).cloned()
    };
    if !args.iter().any(|a| a == "--bench") {
        println!("convert: run with `cargo bench -p pidmap --bench convert`");
        return;
    }
    let rounds: usize = value("--rounds").map_or(11, |r| r.parse().expect("--rounds N"));
    let mut pm = Pidmap::new().expect("a handle");
    if pm.info_backend().ok() != Some(pidmap::ActiveBackend::Syscall) {
        println!("convert: needs pidmap_info(2) (the patched kernel, `series-syscalls`): nothing measured");
        return;
    }
    let kids = value("--family").map_or_else(Vec::new, |f| {
        let (p, t) = f.split_once('x').expect("--family PxT");
        spawn_family(p.parse().expect("P"), t.parse().expect("T"))
    });
    let proc_root = std::fs::File::open("/proc").expect("/proc");
    let view = u32::try_from(proc_root.as_raw_fd()).unwrap();
    let zero = Info {
        mask: 0,
        supported_mask: 0,
        pidfs_id: 0,
        tid: 0,
        tgid: 0,
        ppid: 0,
        ruid: 0,
        euid: 0,
        nice: 0,
        priority: 0,
        policy: 0,
        num_threads: 0,
        task_flags: 0,
        utime_ns: 0,
        stime_ns: 0,
        start_time_ns: 0,
        rss_bytes: 0,
        state: 0,
        spare: [0; 7],
        comm: [0; 64],
        min_flt: 0,
        maj_flt: 0,
        nvcsw: 0,
        nivcsw: 0,
    };
    let mut room = vec![zero; BATCH];
    let mut recs: Vec<TaskInfo> = Vec::new();
    let mut ids_only: Vec<TaskInfo> = Vec::new();

    // Twice: the first listing of all tasks teaches the handle the
    // system's shape (whether per-process records pay).
    for _ in 0..2 {
        pm.fill_info(Query::all_tasks(), FIELDS, &mut recs)
            .expect("fill_info");
    }
    cross_check(&raw_checks(view, &mut room), &crate_checks(&recs));
    let converted: Vec<TaskInfo> = pm
        .records(Query::all_tasks(), FIELDS)
        .expect("records")
        .iter()
        .map(TaskRecord::to_info)
        .collect();
    cross_check(&raw_checks(view, &mut room), &crate_checks(&converted));

    let names = [
        "raw, one call set",
        "raw, group calls",
        "crate: fill_info",
        "crate: records",
        "raw, ids only",
        "crate: fill_info, id only",
    ];
    let mut ns = vec![Vec::new(); names.len()];
    let mut tasks = vec![0usize; names.len()];
    for _ in 0..rounds {
        for (m, (ns, tasks)) in ns.iter_mut().zip(tasks.iter_mut()).enumerate() {
            let t0 = Instant::now();
            *tasks = match m {
                0 => raw_records(view, SCOPE_TASKS, TOP, &mut room, |c| {
                    black_box(c);
                }),
                1 => {
                    raw_records(view, SCOPE_PROCS, PER_PROCESS, &mut room, |c| {
                        black_box(c);
                    });
                    raw_records(view, SCOPE_TASKS, PER_TASK, &mut room, |c| {
                        black_box(c);
                    })
                }
                2 => {
                    pm.fill_info(Query::all_tasks(), FIELDS, &mut recs)
                        .expect("fill_info");
                    black_box(&recs);
                    recs.len()
                }
                3 => {
                    let records = pm.records(Query::all_tasks(), FIELDS).expect("records");
                    black_box(records);
                    records.len()
                }
                4 => raw_records(view, SCOPE_TASKS, INFO_ID, &mut room, |c| {
                    black_box(c);
                }),
                _ => {
                    pm.fill_info(Query::all_tasks(), InfoFields::NONE, &mut ids_only)
                        .expect("fill_info");
                    black_box(&ids_only);
                    ids_only.len()
                }
            };
            ns.push(t0.elapsed().as_secs_f64() * 1e9);
        }
    }
    for ((name, ns), tasks) in names.iter().zip(&mut ns).zip(&tasks) {
        let (med, lo, hi) = median(ns);
        let n = *tasks as f64;
        println!(
            "{name:<28} {med:>12.0} per refresh {:>9.1} per task (min {:.1}, max {:.1}), {tasks} tasks",
            med / n,
            lo / n,
            hi / n
        );
    }
    for pid in kids {
        // SAFETY: kill and waitpid of our own children.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
            libc::waitpid(pid, std::ptr::null_mut(), 0);
        }
    }
}
