//! The /proc fallback against the usual alternatives, on the running
//! (unpatched) kernel:
//!
//! * `pidmap` — this crate's getdents64 reader ([`Backend::Procfs`], reused
//!   handle and `Vec`);
//! * `procfs_crate` — `procfs::process::all_processes()` / `tasks()`;
//! * `std_read_dir` — `std::fs::read_dir` + parse of each name;
//! * `c_readdir` — a plain C-style `opendir`/`readdir` loop via libc (what
//!   a C program does; equivalent to compiling one with `cc`).
//!
//! Groups: all pids (idle system), all tids of a 10k-thread process
//! (`/proc/self/task`), and every task of the namespace (root + per-process
//! `task` directories), the last with the 10k threads alive.
//!
//! Run: `cargo bench -p pidmap --bench fallback`.

use std::ffi::CStr;
use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use pidmap::{Backend, Pidmap, Query, Target};

const TARGET_THREADS: usize = 10_000;

/// CPU time of this process so far, user + system
/// (`CLOCK_PROCESS_CPUTIME_ID`): the kernel's work in the listings' system
/// calls counts, other processes' load does not.
fn cpu_time() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    Duration::new(
        u64::try_from(t.tv_sec).unwrap_or(0),
        u32::try_from(t.tv_nsec).unwrap_or(0),
    )
}

/// A noise-robust summary next to Criterion's (which times the wall
/// clock): the methods run round-robin (one call each per round), so load
/// changes on a shared machine hit all of them alike, each timed on the
/// process's CPU clock; prints median and min per method and each one's
/// ratio to the first (ours).
fn interleaved(group: &str, rounds: usize, methods: &mut [(&str, &mut dyn FnMut() -> usize)]) {
    let mut samples: Vec<Vec<f64>> = vec![Vec::with_capacity(rounds); methods.len()];
    for (_, f) in methods.iter_mut() {
        black_box(f()); // warm-up
    }
    for _ in 0..rounds {
        for (i, (_, f)) in methods.iter_mut().enumerate() {
            let t = cpu_time();
            black_box(f());
            samples[i].push((cpu_time() - t).as_secs_f64() * 1e6);
        }
    }
    let stats: Vec<(f64, f64)> = samples
        .iter_mut()
        .map(|s| {
            s.sort_by(f64::total_cmp);
            (s[s.len() / 2], s[0])
        })
        .collect();
    println!(
        "interleaved {group} ({rounds} rounds): median / min µs of CPU time, ratio to {}",
        methods[0].0
    );
    for (i, (name, _)) in methods.iter().enumerate() {
        let (med, min) = stats[i];
        println!(
            "  {name:<14} {med:>10.1} {min:>10.1}   x{:.2} (median)  x{:.2} (min)",
            med / stats[0].0,
            min / stats[0].1
        );
    }
}

fn parse_c(name: &CStr) -> Option<i32> {
    let b = name.to_bytes();
    if b.is_empty() || !b[0].is_ascii_digit() {
        return None;
    }
    let mut v: i32 = 0;
    for &c in b {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.wrapping_mul(10).wrapping_add(i32::from(c - b'0'));
    }
    Some(v)
}

/// `DIR *d = opendir(path); while ((e = readdir(d))) if (isdigit(...)) push(atoi(...));`
fn c_readdir(path: &CStr, out: &mut Vec<i32>) {
    out.clear();
    // SAFETY: `path` is NUL-terminated; the DIR* is used only until closedir.
    unsafe {
        let d = libc::opendir(path.as_ptr());
        if d.is_null() {
            return;
        }
        loop {
            let e = libc::readdir(d);
            if e.is_null() {
                break;
            }
            if let Some(id) = parse_c(CStr::from_ptr((*e).d_name.as_ptr())) {
                out.push(id);
            }
        }
        libc::closedir(d);
    }
}

/// The all-tasks walk in C style: /proc, then /proc/N/task for each N.
fn c_readdir_all_tasks(out: &mut Vec<i32>, pids: &mut Vec<i32>) {
    c_readdir(c"/proc", pids);
    out.clear();
    let mut tasks = Vec::new();
    let mut path = [0u8; 64];
    for &p in pids.iter() {
        let s = format!("/proc/{p}/task\0");
        path[..s.len()].copy_from_slice(s.as_bytes());
        let c = CStr::from_bytes_until_nul(&path).unwrap();
        c_readdir(c, &mut tasks);
        out.extend_from_slice(&tasks);
    }
}

fn std_read_dir(path: &str, out: &mut Vec<i32>) {
    out.clear();
    for e in std::fs::read_dir(path).unwrap() {
        let e = e.unwrap();
        if let Some(id) = e.file_name().to_str().and_then(|s| s.parse().ok()) {
            out.push(id);
        }
    }
}

fn procfs_crate_pids(out: &mut Vec<i32>) {
    out.clear();
    for p in procfs::process::all_processes().unwrap().flatten() {
        out.push(p.pid());
    }
}

fn procfs_crate_tids(out: &mut Vec<i32>) {
    out.clear();
    for t in procfs::process::Process::myself()
        .unwrap()
        .tasks()
        .unwrap()
        .flatten()
    {
        out.push(t.tid);
    }
}

fn procfs_crate_all_tasks(out: &mut Vec<i32>) {
    out.clear();
    for p in procfs::process::all_processes().unwrap().flatten() {
        if let Ok(tasks) = p.tasks() {
            out.extend(tasks.flatten().map(|t| t.tid));
        }
    }
}

fn bench_pids(c: &mut Criterion) {
    let mut pm = Pidmap::with_backend(Backend::Procfs).unwrap();
    let mut ours = Vec::with_capacity(1 << 16);
    let mut v = Vec::with_capacity(1 << 16);
    {
        let (mut w1, mut w2, mut w3) = (Vec::new(), Vec::new(), Vec::new());
        interleaved(
            "pids",
            300,
            &mut [
                ("pidmap", &mut || {
                    pm.fill(Query::processes(), &mut ours).unwrap();
                    ours.len()
                }),
                ("procfs_crate", &mut || {
                    procfs_crate_pids(&mut w1);
                    w1.len()
                }),
                ("std_read_dir", &mut || {
                    std_read_dir("/proc", &mut w2);
                    w2.len()
                }),
                ("c_readdir", &mut || {
                    c_readdir(c"/proc", &mut w3);
                    w3.len()
                }),
            ],
        );
    }
    let mut g = c.benchmark_group("pids");
    g.bench_function("pidmap", |b| {
        b.iter(|| {
            pm.fill(Query::processes(), &mut ours).unwrap();
            black_box(ours.len())
        });
    });
    g.bench_function("procfs_crate", |b| {
        b.iter(|| {
            procfs_crate_pids(&mut v);
            black_box(v.len())
        });
    });
    g.bench_function("std_read_dir", |b| {
        b.iter(|| {
            std_read_dir("/proc", &mut v);
            black_box(v.len())
        });
    });
    g.bench_function("c_readdir", |b| {
        b.iter(|| {
            c_readdir(c"/proc", &mut v);
            black_box(v.len())
        });
    });
    g.finish();
}

fn spawn_parked_threads(n: usize) {
    let (tx, rx) = std::sync::mpsc::channel();
    for _ in 0..n {
        let tx = tx.clone();
        std::thread::Builder::new()
            .stack_size(16 * 1024)
            .spawn(move || {
                tx.send(()).unwrap();
                loop {
                    std::thread::park();
                }
            })
            .expect("spawn thread");
    }
    for _ in 0..n {
        rx.recv().unwrap();
    }
}

fn bench_tids(c: &mut Criterion) {
    spawn_parked_threads(TARGET_THREADS);
    let mut pm = Pidmap::with_backend(Backend::Procfs).unwrap();
    let mut ours = Vec::with_capacity(1 << 16);
    let mut v = Vec::with_capacity(1 << 16);
    pm.fill(Query::threads(Target::Caller), &mut ours).unwrap();
    assert!(ours.len() > TARGET_THREADS, "{} threads", ours.len());
    {
        let (mut w1, mut w2, mut w3) = (Vec::new(), Vec::new(), Vec::new());
        let mut p = Vec::new();
        interleaved(
            "tids_10k",
            40,
            &mut [
                ("pidmap", &mut || {
                    pm.fill(Query::threads(Target::Caller), &mut ours).unwrap();
                    ours.len()
                }),
                ("procfs_crate", &mut || {
                    procfs_crate_tids(&mut w1);
                    w1.len()
                }),
                ("std_read_dir", &mut || {
                    std_read_dir("/proc/self/task", &mut w2);
                    w2.len()
                }),
                ("c_readdir", &mut || {
                    c_readdir(c"/proc/self/task", &mut w3);
                    w3.len()
                }),
            ],
        );
        interleaved(
            "all_tasks_10k",
            40,
            &mut [
                ("pidmap", &mut || {
                    pm.fill(Query::all_tasks(), &mut ours).unwrap();
                    ours.len()
                }),
                ("procfs_crate", &mut || {
                    procfs_crate_all_tasks(&mut w1);
                    w1.len()
                }),
                ("c_readdir", &mut || {
                    c_readdir_all_tasks(&mut w3, &mut p);
                    w3.len()
                }),
            ],
        );
    }
    let mut g = c.benchmark_group("tids_10k");
    g.bench_function("pidmap", |b| {
        b.iter(|| {
            pm.fill(Query::threads(Target::Caller), &mut ours).unwrap();
            black_box(ours.len())
        });
    });
    g.bench_function("procfs_crate", |b| {
        b.iter(|| {
            procfs_crate_tids(&mut v);
            black_box(v.len())
        });
    });
    g.bench_function("std_read_dir", |b| {
        b.iter(|| {
            std_read_dir("/proc/self/task", &mut v);
            black_box(v.len())
        });
    });
    g.bench_function("c_readdir", |b| {
        b.iter(|| {
            c_readdir(c"/proc/self/task", &mut v);
            black_box(v.len())
        });
    });
    g.finish();

    let mut pids = Vec::new();
    let mut g = c.benchmark_group("all_tasks_10k");
    g.bench_function("pidmap", |b| {
        b.iter(|| {
            pm.fill(Query::all_tasks(), &mut ours).unwrap();
            black_box(ours.len())
        });
    });
    g.bench_function("procfs_crate", |b| {
        b.iter(|| {
            procfs_crate_all_tasks(&mut v);
            black_box(v.len())
        });
    });
    g.bench_function("c_readdir", |b| {
        b.iter(|| {
            c_readdir_all_tasks(&mut v, &mut pids);
            black_box(v.len())
        });
    });
    g.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(60)
        .warm_up_time(Duration::from_millis(700))
        .measurement_time(Duration::from_secs(3))
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench_pids, bench_tids
}
criterion_main!(benches);
