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
//! Two more rows are not readers but the kernel's own cost of producing
//! the files and listings, which no /proc reader goes below (no parsing,
//! no records):
//!
//! * `floor: pread kept stat` — one `pread` from offset 0 of every task's
//!   `/proc/TGID/task/TID/stat`, kept open from the first refresh: what a
//!   reader that keeps its files pays at the least;
//! * `floor: list+open+read+close` — each process's `task` directory
//!   listed (`getdents64`) and each task's `stat` opened below it
//!   (`TID/stat`), read and closed: what a reader that keeps nothing pays
//!   at the least.
//!
//! What is timed is each reader's refresh up to its own records in the
//! caller's hands, every record touched (`black_box`) and its tid taken:
//! our `TaskRecord`s (`Pidmap::records`: the kernel's records as written,
//! or the fallback's in the kernel's units), the `procfs` crate's `Stat`
//! of each task (read and parsed by `stat()`), sysinfo's `Process`es.
//! Converting them to common units is the cross-check's work, and not
//! timed.
//!
//! Before timing, one refresh of each is cross-checked: they must have
//! seen the same tids, but for tasks that came or went between them, and
//! the readers' rows of those tids must agree (tgid, ppid, comm, start
//! time; the state and CPU times move).
//!
//! The clock is the CPU time of this process (`CLOCK_PROCESS_CPUTIME_ID`,
//! user + system: the kernel's work in the readers' system calls counts,
//! other processes' load does not, but for what they do to the caches);
//! the wall clock is shown beside it. No method runs a thread of its own
//! (sysinfo is built without `multithread`).
//!
//! The kept files of `pidmap` and sysinfo count against `RLIMIT_NOFILE`
//! (sysinfo keeps up to half the hard limit, `pidmap` up to the soft limit
//! less a reserve of 1,024) and so do the floor's: the bench raises the
//! limit to `--nofile N` (default 65536) when it may, else its soft limit
//! to the hard one, and prints what it got. When sysinfo's files and the
//! kept handle's would not both fit, sysinfo runs in a child process of
//! its own (timed there, as the floors are), so that each has the table it
//! would have alone.
//!
//! Run: `cargo bench -p pidmap --bench peers` (the host's tasks, then
//! with 100 processes × 100 parked threads forked for the run, killed and
//! reaped after it); `-- --rounds N` sets the rounds (default 30),
//! `-- --family PxT` forks P processes of T threads instead,
//! `-- --no-family` skips the second set, `-- --only-family` the first,
//! `-- --only NAME` runs the method so named, or those whose name
//! contains NAME (for a profiler or `strace -c`).
//!
//! Notes on what each reads: the fallback reads `stat` and, for the exact
//! RSS `ps` shows, `statm` per thread group (its resident field, the sum
//! `VmRSS` shows); with kept files it keeps them open between full
//! refreshes, below the soft `RLIMIT_NOFILE` less a reserve; `procfs`
//! reads `stat` only (its rss is stat's approximate counter); sysinfo
//! reads `stat` and `statm` and keeps files open between refreshes.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};

use pidmap::{Backend, InfoFields, Pidmap, Query};
use rustix::fs::{Mode, OFlags};
use sysinfo::{ProcessRefreshKind, ProcessesToUpdate, System};

const FIELDS: InfoFields = InfoFields::TGID
    .union(InfoFields::PPID)
    .union(InfoFields::STATE)
    .union(InfoFields::CPU_TIME)
    .union(InfoFields::RSS)
    .union(InfoFields::START_TIME)
    .union(InfoFields::COMM);

/// What the cross-check compares of a task, in common units; `None` where
/// a method does not give the field in a comparable form.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Check {
    tgid: Option<i32>,
    ppid: Option<i32>,
    comm: Option<String>,
    /// Clock ticks since boot.
    start_ticks: Option<u64>,
}

/// A refresh: the tids seen into the first `Vec`, and, for the
/// cross-check only (never while timed), each row's [`Check`]. It returns
/// the CPU time it took when that was measured in another process (the
/// floors), else `None` (measured around the call).
type Refresh<'a> =
    Box<dyn FnMut(&mut Vec<i32>, Option<&mut BTreeMap<i32, Check>>) -> Option<Duration> + 'a>;

fn clock_ticks_per_sec() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    u64::try_from(hz).unwrap_or(100)
}

fn pidmap_method(backend: Option<Backend>, keep_files: bool) -> Refresh<'static> {
    let mut builder = Pidmap::builder().keep_files(keep_files);
    if let Some(b) = backend {
        builder = builder.backend(b);
    }
    let mut pm = builder.build().expect("a pidmap handle");
    if backend.is_none() {
        println!("  pidmap auto: {:?} backend", pm.active());
    }
    let hz = clock_ticks_per_sec();
    Box::new(move |tids, check| {
        let recs = pm
            .records(Query::all_tasks(), FIELDS)
            .expect("pidmap refresh");
        tids.clear();
        let Some(check) = check else {
            for r in recs {
                tids.push(black_box(r).tid().as_raw());
            }
            return None;
        };
        for r in recs {
            let tid = r.tid().as_raw();
            tids.push(tid);
            let start = r.start_time().expect("a start time");
            let ticks = start.as_secs() * hz + u64::from(start.subsec_nanos()) * hz / 1_000_000_000;
            check.insert(
                tid,
                Check {
                    tgid: Some(r.tgid().map_or(0, pidmap::Pid::as_raw)),
                    ppid: Some(r.ppid().map_or(0, pidmap::Pid::as_raw)),
                    comm: r.comm().map(|c| String::from_utf8_lossy(c).into_owned()),
                    start_ticks: Some(ticks),
                },
            );
        }
        None
    })
}

fn procfs_method() -> Refresh<'static> {
    Box::new(move |tids, mut check| {
        tids.clear();
        for p in procfs::process::all_processes().expect("procfs").flatten() {
            let Ok(tasks) = p.tasks() else { continue };
            for t in tasks.flatten() {
                let Ok(s) = t.stat() else { continue };
                tids.push(black_box(&s).pid);
                if let Some(check) = check.as_deref_mut() {
                    check.insert(
                        s.pid,
                        Check {
                            tgid: Some(t.pid),
                            ppid: Some(s.ppid),
                            comm: Some(s.comm.clone()),
                            start_ticks: Some(s.starttime),
                        },
                    );
                }
            }
        }
        None
    })
}

fn sysinfo_method() -> Refresh<'static> {
    let mut sys = System::new();
    let kind = ProcessRefreshKind::nothing()
        .with_cpu()
        .with_memory()
        .with_tasks();
    Box::new(move |tids, check| {
        sys.refresh_processes_specifics(ProcessesToUpdate::All, true, kind);
        tids.clear();
        let tid_of = |pid: sysinfo::Pid| i32::try_from(pid.as_u32()).unwrap_or(0);
        let Some(check) = check else {
            for (&pid, p) in sys.processes() {
                black_box(p);
                tids.push(tid_of(pid));
            }
            return None;
        };
        for (&pid, p) in sys.processes() {
            let tid = tid_of(pid);
            tids.push(tid);
            let thread = p.thread_kind() == Some(sysinfo::ThreadKind::Userland);
            let tgid = match thread {
                true => p.parent().map_or(0, tid_of),
                false => tid,
            };
            // A thread's parent is its process here, not the ppid; the
            // name and the start time (seconds since the epoch) are
            // sysinfo's own.
            check.insert(
                tid,
                Check {
                    tgid: Some(tgid),
                    ppid: (!thread).then(|| p.parent().map_or(0, tid_of)),
                    comm: None,
                    start_ticks: None,
                },
            );
        }
        None
    })
}

/// `TGID/task/TID/stat` of every task, below the proc root (set-up, not
/// timed).
fn task_stat_paths() -> Vec<(i32, i32, std::ffi::CString)> {
    let ids = |dir: &str| -> Vec<i32> {
        std::fs::read_dir(dir).map_or_else(
            |_| Vec::new(),
            |d| {
                d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                    .collect()
            },
        )
    };
    let mut paths = Vec::new();
    for tgid in ids("/proc") {
        for tid in ids(&format!("/proc/{tgid}/task")) {
            let path = format!("{tgid}/task/{tid}/stat");
            paths.push((tid, tgid, std::ffi::CString::new(path).expect("no NUL")));
        }
    }
    paths
}

fn open_proc_root() -> OwnedFd {
    rustix::fs::open(
        "/proc",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .expect("/proc")
}

/// A floor, measured in a child process of its own: the kept files of
/// `pidmap` and sysinfo take most of the fd table this process may have,
/// and the kept floor needs one fd per task. The child is forked while the bench has one thread, does one
/// refresh per request and answers with its own CPU time for it and how
/// many files it read.
struct FloorChild {
    pid: libc::pid_t,
    link: std::os::unix::net::UnixStream,
}

impl FloorChild {
    fn spawn(which: u8) -> FloorChild {
        let (parent, child) = std::os::unix::net::UnixStream::pair().expect("socketpair");
        // SAFETY: the bench has no other thread, so the child may
        // allocate; it never returns, it exits.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork");
        if pid == 0 {
            drop(parent);
            floor_child_main(child, which);
        }
        FloorChild { pid, link: parent }
    }

    /// One refresh: the child's CPU time for it and the files it read.
    fn refresh(&mut self) -> (Duration, u64) {
        use std::io::{Read, Write};
        self.link.write_all(b"r").expect("to the floor child");
        let mut answer = [0u8; 16];
        self.link
            .read_exact(&mut answer)
            .expect("from the floor child");
        let [ns, files] = [&answer[..8], &answer[8..]]
            .map(|b| u64::from_ne_bytes(b.try_into().expect("8 bytes")));
        (Duration::from_nanos(ns), files)
    }
}

impl Drop for FloorChild {
    fn drop(&mut self) {
        // SAFETY: killing and reaping our own child.
        unsafe {
            libc::kill(self.pid, libc::SIGKILL);
            libc::waitpid(self.pid, std::ptr::null_mut(), 0);
        }
    }
}

const FLOOR_PREAD: u8 = b'p';
const FLOOR_OPEN: u8 = b'o';

/// A floor child: [`FLOOR_PREAD`], one `pread` from offset 0 of every
/// task's `stat`, opened at the start and kept (procfs formats it anew for
/// each read), no listing; [`FLOOR_OPEN`], each `task` directory of the
/// processes there were at the start listed and each task's `stat`
/// opened below it, read once and closed. No parsing. A task gone since
/// is not counted.
fn floor_child_main(mut link: std::os::unix::net::UnixStream, which: u8) -> ! {
    use std::io::{Read, Write};
    // SAFETY: prctl with integer arguments.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
    let root = open_proc_root();
    let paths = task_stat_paths();
    let kept: Vec<OwnedFd> = paths
        .iter()
        .filter(|_| which == FLOOR_PREAD)
        .filter_map(|(_, _, path)| {
            rustix::fs::openat(
                &root,
                path.as_c_str(),
                OFlags::RDONLY | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .ok()
        })
        .collect();
    // The `task` directories of the processes there are now (the floor
    // does not list /proc again).
    let mut dirs: Vec<std::ffi::CString> = paths
        .iter()
        .map(|(_, tgid, _)| std::ffi::CString::new(format!("{tgid}/task")).expect("no NUL"))
        .collect();
    dirs.dedup();
    let mut dirents = vec![std::mem::MaybeUninit::<u8>::uninit(); 64 * 1024];
    let mut buf = [0u8; 1024];
    let mut request = [0u8; 1];
    while link.read_exact(&mut request).is_ok() {
        let start = cpu_time();
        let mut files = 0u64;
        match which {
            FLOOR_PREAD => {
                for fd in &kept {
                    if rustix::io::pread(fd, &mut buf, 0).is_ok() {
                        files += 1;
                    }
                }
            }
            _ => {
                // Every process's `task` directory listed, and each
                // task's `stat` opened below it, read and closed.
                for path in &dirs {
                    let Ok(dir) = rustix::fs::openat(
                        &root,
                        path.as_c_str(),
                        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
                        Mode::empty(),
                    ) else {
                        continue;
                    };
                    let mut tids = rustix::fs::RawDir::new(&dir, &mut dirents);
                    while let Some(Ok(e)) = tids.next() {
                        let name = e.file_name().to_bytes();
                        if !name.first().is_some_and(u8::is_ascii_digit) || name.len() > 10 {
                            continue;
                        }
                        let mut rel = [0u8; 17];
                        rel[..name.len()].copy_from_slice(name);
                        rel[name.len()..name.len() + 5].copy_from_slice(b"/stat");
                        let rel = std::ffi::CStr::from_bytes_until_nul(&rel).expect("a NUL");
                        let Ok(fd) = rustix::fs::openat(
                            &dir,
                            rel,
                            OFlags::RDONLY | OFlags::CLOEXEC,
                            Mode::empty(),
                        ) else {
                            continue;
                        };
                        if rustix::io::read(&fd, &mut buf).is_ok() {
                            files += 1;
                        }
                    }
                }
            }
        }
        black_box(&buf);
        let ns = u64::try_from((cpu_time() - start).as_nanos()).unwrap_or(u64::MAX);
        let mut answer = [0u8; 16];
        answer[..8].copy_from_slice(&ns.to_ne_bytes());
        answer[8..].copy_from_slice(&files.to_ne_bytes());
        if link.write_all(&answer).is_err() {
            break;
        }
    }
    std::process::exit(0)
}

/// A floor as a method: its CPU time is the child's; the tids it fills
/// are none (it lists nothing), its files read are printed once.
fn floor_method(which: u8) -> Refresh<'static> {
    let mut child = FloorChild::spawn(which);
    let mut told = false;
    Box::new(move |tids, _| {
        tids.clear();
        let (cpu, files) = child.refresh();
        if !told {
            println!("  floor {}: {files} stat files read", which as char);
            told = true;
        }
        Some(cpu)
    })
}

/// A method run in a child process of its own, for when its kept files
/// and those of the kept `pidmap` handle would not both fit this process's
/// fd table (sysinfo keeps up to half the hard `RLIMIT_NOFILE`, the kept
/// handle up to the soft limit less a reserve): each then has the table it
/// would have alone. The child is forked while the bench has one thread
/// and builds the method itself; per request it refreshes once and
/// answers with its CPU time, or, for the cross-check (not timed), with
/// its rows.
struct MethodChild {
    pid: libc::pid_t,
    link: std::os::unix::net::UnixStream,
}

impl MethodChild {
    fn spawn(make: fn() -> Refresh<'static>) -> MethodChild {
        let (parent, child) = std::os::unix::net::UnixStream::pair().expect("socketpair");
        // SAFETY: the bench has no other thread, so the child may
        // allocate; it never returns, it exits.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork");
        if pid == 0 {
            drop(parent);
            method_child_main(child, make);
        }
        MethodChild { pid, link: parent }
    }

    fn refresh(
        &mut self,
        tids: &mut Vec<i32>,
        check: Option<&mut BTreeMap<i32, Check>>,
    ) -> Duration {
        use std::io::{BufRead, BufReader, Write};
        let request: &[u8] = if check.is_some() { b"c" } else { b"r" };
        self.link.write_all(request).expect("to the method child");
        let mut from = BufReader::new(&self.link);
        let mut line = String::new();
        tids.clear();
        let mut check = check;
        loop {
            line.clear();
            assert!(from.read_line(&mut line).expect("from the method child") > 0);
            let mut f = line.trim_end_matches('\n').splitn(6, ' ');
            match f.next() {
                Some("t") => {
                    let int = |f: Option<&str>| f.and_then(|v| v.parse::<i32>().ok());
                    let tid = int(f.next()).expect("a tid");
                    let (tgid, ppid) = (int(f.next()), int(f.next()));
                    let start = f.next().and_then(|v| v.parse::<u64>().ok());
                    // The name last, hex-encoded (it may hold spaces).
                    let comm = f.next().filter(|h| *h != "-").and_then(|h| {
                        let b: Option<Vec<u8>> = (0..h.len() / 2)
                            .map(|i| u8::from_str_radix(h.get(2 * i..2 * i + 2)?, 16).ok())
                            .collect();
                        Some(String::from_utf8_lossy(&b?).into_owned())
                    });
                    tids.push(tid);
                    if let Some(check) = check.as_deref_mut() {
                        let row = Check {
                            tgid,
                            ppid,
                            comm,
                            start_ticks: start,
                        };
                        check.insert(tid, row);
                    }
                }
                Some("ns") => {
                    return Duration::from_nanos(num_or_zero(f.next()));
                }
                _ => panic!("the method child said {line:?}"),
            }
        }
    }
}

fn num_or_zero(f: Option<&str>) -> u64 {
    f.and_then(|v| v.parse().ok()).unwrap_or(0)
}

impl Drop for MethodChild {
    fn drop(&mut self) {
        // SAFETY: killing and reaping our own child.
        unsafe {
            libc::kill(self.pid, libc::SIGKILL);
            libc::waitpid(self.pid, std::ptr::null_mut(), 0);
        }
    }
}

fn method_child_main(link: std::os::unix::net::UnixStream, make: fn() -> Refresh<'static>) -> ! {
    use std::io::{Read, Write};
    // SAFETY: prctl with integer arguments.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
    let mut f = make();
    let mut tids = Vec::new();
    let mut request = [0u8; 1];
    let mut reader = &link;
    let mut out = std::io::BufWriter::new(&link);
    while reader.read_exact(&mut request).is_ok() {
        let mut text = String::new();
        if request[0] == b'c' {
            let mut rows = BTreeMap::new();
            f(&mut tids, Some(&mut rows));
            let opt = |v: Option<String>| v.unwrap_or_else(|| "-".into());
            for tid in &tids {
                let r = &rows[tid];
                let comm = r
                    .comm
                    .as_ref()
                    .map(|c| c.bytes().map(|b| format!("{b:02x}")).collect::<String>());
                text += &format!(
                    "t {tid} {} {} {} {}\n",
                    opt(r.tgid.map(|v| v.to_string())),
                    opt(r.ppid.map(|v| v.to_string())),
                    opt(r.start_ticks.map(|v| v.to_string())),
                    opt(comm),
                );
            }
            text += "ns 0\n";
        } else {
            let start = cpu_time();
            f(&mut tids, None);
            let ns = u64::try_from((cpu_time() - start).as_nanos()).unwrap_or(u64::MAX);
            text += &format!("ns {ns}\n");
        }
        if out
            .write_all(text.as_bytes())
            .and_then(|()| out.flush())
            .is_err()
        {
            break;
        }
    }
    std::process::exit(0)
}

/// A method as a child process of its own: its CPU time is the child's.
fn child_method(make: fn() -> Refresh<'static>) -> Refresh<'static> {
    let mut child = MethodChild::spawn(make);
    Box::new(move |tids, check| Some(child.refresh(tids, check)))
}

/// Whether sysinfo's kept files (up to half the hard limit) and the kept
/// handle's (one per task and per group, up to the soft limit less its
/// reserve of 1,024) would not both fit this process's fd table.
fn kept_readers_need_two_tables() -> bool {
    use rustix::process::{getrlimit, Resource};
    let limit = getrlimit(Resource::Nofile);
    let (Some(soft), hard) = (limit.current, limit.maximum) else {
        return false;
    };
    let tasks = task_stat_paths().len() as u64;
    let sysinfo = hard.unwrap_or(soft) / 2;
    // The kept handle: a stat per task, a statm per group (a few %).
    tasks + tasks / 16 + sysinfo + 1024 > soft
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

/// The methods must see the same tasks, and say the same of them. Every
/// tid that the first method sees both before and after the others'
/// refreshes lived through them all, so each method must have it; a tid
/// only one method saw came or went between their refreshes. Of those
/// tids, a field the first method read the same before and after (it did
/// not move meanwhile) must be the same in every method that gives it
/// (but the names of kernel threads: a worker's moves back and forth).
/// Returns the number of tids the first method saw.
fn cross_check(methods: &mut [(&str, Refresh<'_>)]) -> usize {
    let refresh = |f: &mut Refresh<'_>| {
        let mut v = Vec::new();
        let mut rows = BTreeMap::new();
        f(&mut v, Some(&mut rows));
        assert_eq!(v.len(), rows.len(), "one row per tid");
        rows
    };
    let before = refresh(&mut methods[0].1);
    let sets: Vec<(&str, BTreeMap<i32, Check>)> = methods
        .iter_mut()
        .filter(|(name, _)| !FLOORS.contains(name))
        .map(|(name, f)| (*name, refresh(f)))
        .collect();
    let after = refresh(&mut methods[0].1);
    let lived_through: Vec<i32> = before
        .keys()
        .filter(|t| after.contains_key(t))
        .copied()
        .collect();
    for (name, rows) in &sets {
        let missed: Vec<_> = lived_through
            .iter()
            .filter(|t| !rows.contains_key(t))
            .take(10)
            .collect();
        assert!(
            missed.is_empty(),
            "{name} missed tids that lived through the check: {missed:?}"
        );
        let mut compared = 0;
        let mut differ = Vec::new();
        for tid in &lived_through {
            let (b, a, r) = (&before[tid], &after[tid], &rows[tid]);
            let mut field = |what: &str, stable: bool, same: Option<bool>| {
                if let (true, Some(same)) = (stable, same) {
                    compared += 1;
                    if !same {
                        differ.push(format!("{tid} {what}: {b:?} / {r:?}"));
                    }
                }
            };
            field("tgid", b.tgid == a.tgid, same(&b.tgid, &r.tgid));
            field("ppid", b.ppid == a.ppid, same(&b.ppid, &r.ppid));
            // A kernel worker's name shows its current work item
            // (`kworker/1:2-events`): it moves back and forth.
            let kthread = *tid == 2 || b.ppid == Some(2);
            field("comm", !kthread && b.comm == a.comm, same(&b.comm, &r.comm));
            let start = same(&b.start_ticks, &r.start_ticks);
            field("start", b.start_ticks == a.start_ticks, start);
        }
        assert!(
            differ.is_empty(),
            "{name} disagrees with {}: {:?}",
            methods[0].0,
            &differ[..differ.len().min(10)]
        );
        println!(
            "  cross-check: {name}: {} tids, all {} that lived through the check, {compared} fields equal",
            rows.len(),
            lived_through.len()
        );
    }
    sets[0].1.len()
}

/// Whether both give the field and agree; `None` if either does not.
fn same<T: PartialEq>(x: &Option<T>, y: &Option<T>) -> Option<bool> {
    Some(x.as_ref()? == y.as_ref()?)
}

/// CPU time of this process so far, user + system.
fn cpu_time() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    Duration::new(
        u64::try_from(t.tv_sec).unwrap_or(0),
        u32::try_from(t.tv_nsec).unwrap_or(0),
    )
}

/// The median and the range of `samples` (sorted here).
fn median_range(samples: &mut [f64]) -> (f64, f64, f64) {
    samples.sort_by(f64::total_cmp);
    (
        samples[samples.len() / 2],
        samples[0],
        samples[samples.len() - 1],
    )
}

const OURS: [&str; 3] = [
    "pidmap fallback",
    "pidmap fallback, kept files",
    "pidmap auto",
];
const FLOORS: [&str; 2] = ["floor: pread kept stat", "floor: list+open+read+close"];

fn run(label: &str, rounds: usize, only: Option<&str>) {
    let mut methods: Vec<(&str, Refresh<'_>)> = vec![
        (OURS[0], pidmap_method(Some(Backend::Procfs), false)),
        (OURS[1], pidmap_method(Some(Backend::Procfs), true)),
        (OURS[2], pidmap_method(None, false)),
        ("procfs", procfs_method()),
    ];
    if kept_readers_need_two_tables() {
        println!("  sysinfo in a process of its own: its kept files and the kept handle's do not both fit RLIMIT_NOFILE");
        methods.push(("sysinfo", child_method(sysinfo_method)));
    } else {
        methods.push(("sysinfo", sysinfo_method()));
    }
    if only.map_or(true, |o| FLOORS.iter().any(|f| f.contains(o))) {
        methods.push((FLOORS[0], floor_method(FLOOR_PREAD)));
        methods.push((FLOORS[1], floor_method(FLOOR_OPEN)));
    }
    if let Some(only) = only {
        // The method so named, else those whose name contains it.
        let exact = methods.iter().any(|(name, _)| *name == only);
        methods.retain(|(name, _)| {
            if exact {
                *name == only
            } else {
                name.contains(only)
            }
        });
        assert!(!methods.is_empty(), "no method named like {only:?}");
    }
    println!("{label}:");
    // The floors list nothing: they are not cross-checked.
    let tasks = if FLOORS.contains(&methods[0].0) {
        0
    } else {
        cross_check(&mut methods)
    };
    for (name, f) in methods.iter_mut() {
        if FLOORS.contains(name) {
            f(&mut Vec::new(), None);
        }
    }
    let n = methods.len();
    let mut cpu: Vec<Vec<f64>> = vec![Vec::with_capacity(rounds); n];
    let mut wall: Vec<Vec<f64>> = vec![Vec::with_capacity(rounds); n];
    let mut tids = Vec::new();
    // Each round starts with the next method and steps through them by a
    // stride coprime to their number, the next stride each round, so that
    // no method always runs right after the same other one (cache,
    // emulator and scheduler effects of what ran before).
    let strides: Vec<usize> = (1..n.max(2)).filter(|&s| gcd(s, n) == 1).collect();
    // The kept handle lists nothing when no task was created (the
    // kernel's count of forks) since its previous refresh: how many of
    // its refreshes could, read outside the timing.
    let kept = methods.iter().position(|(name, _)| *name == OURS[1]);
    let (mut forks_before, mut quiet) = (None, Vec::with_capacity(rounds));
    for round in 0..rounds {
        let stride = strides[round % strides.len()];
        for i in (0..n).map(|k| (round + k * stride) % n) {
            if Some(i) == kept {
                let now = forks_since_boot();
                quiet.push(now.is_some() && now == forks_before);
                forks_before = now;
            }
            let f = &mut methods[i].1;
            let (c, t) = (cpu_time(), Instant::now());
            let elsewhere = f(&mut tids, None);
            wall[i].push(t.elapsed().as_secs_f64() * 1e3);
            let took = elsewhere.unwrap_or_else(|| cpu_time() - c);
            cpu[i].push(took.as_secs_f64() * 1e3);
        }
    }
    // The kept handle's rounds with and without a task created since its
    // previous refresh, apart.
    let kept_split = kept.map(|k| {
        let mut split: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
        for (&ms, &q) in cpu[k].iter().zip(&quiet) {
            split[usize::from(q)].push(ms);
        }
        split
    });
    let cpu: Vec<(f64, f64, f64)> = cpu.iter_mut().map(|s| median_range(s)).collect();
    let wall: Vec<(f64, f64, f64)> = wall.iter_mut().map(|s| median_range(s)).collect();
    println!(
        "  {tasks} tasks, {rounds} interleaved rounds; ms per refresh, CPU time of the process (user + system), wall clock beside:"
    );
    for (i, (name, _)) in methods.iter().enumerate() {
        let (med, lo, hi) = cpu[i];
        println!(
            "  {name:<28} cpu median {med:>8.2}  min–max {lo:>8.2}–{hi:<8.2}  wall median {:>8.2}",
            wall[i].0
        );
    }
    if let Some(mut split) = kept_split {
        let n_quiet = split[1].len();
        print!(
            "  {}: no task created since its previous refresh in {n_quiet} of {} rounds",
            OURS[1],
            rounds.saturating_sub(1)
        );
        if n_quiet > 0 && !split[0].is_empty() {
            let [busy, still] = &mut split;
            print!(
                " (cpu median {:.2} ms in those, {:.2} in the others)",
                median_range(still).0,
                median_range(busy).0
            );
        }
        println!();
    }
    // Each peer's median CPU time over each of ours, ours over the floors.
    let median_of = |name: &str| {
        let i = methods.iter().position(|(n, _)| *n == name)?;
        Some(cpu[i].0)
    };
    for ours in OURS {
        let Some(ours_ms) = median_of(ours) else {
            continue;
        };
        let ratios: Vec<String> = ["procfs", "sysinfo"]
            .iter()
            .filter_map(|peer| {
                Some(format!(
                    "{peer} takes {:.2}x its time",
                    median_of(peer)? / ours_ms
                ))
            })
            .chain(FLOORS.iter().filter_map(|floor| {
                Some(format!(
                    "it takes {:.2}x the {floor}",
                    ours_ms / median_of(floor)?
                ))
            }))
            .collect();
        if !ratios.is_empty() {
            println!("  {ours}: {}", ratios.join(", "));
        }
    }
    for peer in ["procfs", "sysinfo"] {
        let Some(peer_ms) = median_of(peer) else {
            continue;
        };
        let ratios: Vec<String> = FLOORS
            .iter()
            .filter_map(|floor| {
                Some(format!(
                    "takes {:.2}x the {floor}",
                    peer_ms / median_of(floor)?
                ))
            })
            .collect();
        if !ratios.is_empty() {
            println!("  {peer}: {}", ratios.join(", "));
        }
    }
}

/// The `processes` line of `/proc/stat`: the tasks created since boot.
fn forks_since_boot() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("processes "))?
        .trim()
        .parse()
        .ok()
}

/// Raise `RLIMIT_NOFILE` to `want`: the hard limit too if it is lower
/// and that is allowed, else the soft limit to the hard one; the soft
/// limit in force (`None`: unlimited).
fn raise_nofile(want: u64) -> Option<u64> {
    use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
    if getrlimit(Resource::Nofile)
        .maximum
        .is_some_and(|h| h < want)
    {
        let both = Rlimit {
            current: Some(want),
            maximum: Some(want),
        };
        // Needs CAP_SYS_RESOURCE; without it the hard limit stays.
        let _ = setrlimit(Resource::Nofile, both);
    }
    let now = getrlimit(Resource::Nofile);
    let soft = now.maximum.map_or(want, |h| h.min(want));
    if now.current.is_some_and(|c| c < soft) {
        let _ = setrlimit(
            Resource::Nofile,
            Rlimit {
                current: Some(soft),
                maximum: now.maximum,
            },
        );
    }
    getrlimit(Resource::Nofile).current
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
    let nofile = value("--nofile")
        .and_then(|r| r.parse().ok())
        .unwrap_or(65536);
    let has = |flag: &str| args.iter().any(|a| a == flag);
    // `cargo bench` passes `--bench`; a `cargo test` run of benches only
    // checks that it starts.
    if has("--test") || !has("--bench") {
        println!("peers: run with `cargo bench -p pidmap --bench peers`");
        return;
    }
    match raise_nofile(nofile) {
        Some(n) => println!("RLIMIT_NOFILE: {n}"),
        None => println!("RLIMIT_NOFILE: unlimited"),
    }
    if !has("--only-family") {
        run("host tasks", rounds, only);
    }
    if has("--no-family") {
        return;
    }
    // Forked now: the bench is still single-threaded (no method spawns
    // threads), and the children only park threads until killed.
    let (procs, threads) = value("--family")
        .and_then(|f| {
            let (p, t) = f.split_once('x')?;
            Some((p.parse().ok()?, t.parse().ok()?))
        })
        .unwrap_or((100, 100));
    let kids = spawn_family(procs, threads);
    let label = format!("host tasks + {procs} processes x {threads} threads");
    run(&label, rounds, only);
    for k in kids {
        // SAFETY: killing and reaping our own children.
        unsafe {
            libc::kill(k, libc::SIGKILL);
            libc::waitpid(k, std::ptr::null_mut(), 0);
        }
    }
}
