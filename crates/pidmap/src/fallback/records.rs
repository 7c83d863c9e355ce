//! Task records from /proc: the listing's ids with their thread groups,
//! then per task the `stat` that `ps` reads — `/proc/PID/stat` for a
//! process listing (the group's CPU totals), `/proc/TGID/task/TID/stat`
//! for a task listing — then, for the exact RSS `ps` shows, its `statm`
//! (the resident field, the same exact sum as `status`'s `VmRSS`, from a
//! far smaller file), or its `status` when the uids or the context
//! switches are asked for (all from that one file). Each file is read once into a reused buffer (a
//! full refresh through the files the last one kept open, see
//! [`super::kept`]) and parsed in place.

use std::collections::HashMap;
use std::io;

use super::kept::TaskFile;
use super::listed::TaskRef;
use super::path::{Base, ProcPath};
use super::task_files::{Read, TaskFiles};
use super::Fallback;
use crate::error::{Error, Result};
use crate::info::{ticks, Comm, InfoFields, TaskFlags, TaskInfo, TaskState};
use crate::pid::Pid;
use crate::proc_root::ProcRoot;
use crate::query::{Enumeration, Listing, Query};
use crate::stat::{status_ctxt_switches, status_uids, status_vm_rss_kib, Stat, StatCounters};

/// The largest read of `stat`, `statm` or `status`: a stat or statm line
/// is well below it, and `status` has its `Uid:` and `VmRSS:` lines in its
/// first 2 KiB unless a task is in thousands of supplementary groups.
pub(super) const FILE_BUF: usize = 8192;

impl Fallback {
    /// The records of `q`'s tasks `>= start` into `out` (cleared first),
    /// ascending, at most `max`, with `fields` filled where /proc shows
    /// them. A task that exits meanwhile has no record, as with the
    /// syscall; one whose files the view denies has only its tid. Only the
    /// files of the records returned are read, so reading a listing chunk
    /// by chunk reads each task's files once.
    pub(crate) fn task_infos(
        &mut self,
        root: &ProcRoot,
        q: Query<'_>,
        fields: InfoFields,
        start: i32,
        max: usize,
        out: &mut Vec<TaskInfo>,
    ) -> Result<()> {
        out.clear();
        // Every task, no cursor, no limit: group by group (which reads
        // `status` only for the uids: the context switches are read per
        // task, below).
        if q.listing() == Listing::AllTasks
            && start <= 1
            && max == usize::MAX
            && !fields.contains(InfoFields::CTX_SWITCHES)
        {
            return self.all_task_infos(root, fields, q.ignores_kthreads(), out);
        }
        let mut tasks = std::mem::take(&mut self.records.tasks);
        // Kernel threads are left out below, by the flags read anyway.
        // Only a refresh of every process (or task, above) keeps its
        // files for the next, and only on a handle built with
        // `keep_files`: a partial one (a process's threads, a chunk) would
        // drop the others'.
        let full =
            self.keep_files && start <= 1 && max == usize::MAX && q.listing() == Listing::Processes;
        let mode = match q.listing() {
            Listing::Processes | Listing::Children => Mode::Process,
            Listing::AllTasks | Listing::Threads => Mode::Task,
        };
        // Begun before the listing, which closes every kept file (and
        // keeps none for the rest of the refresh) if the fd table is full.
        match mode {
            Mode::Process => self.records.kept_for_processes.begin(full, full),
            Mode::Task => self.records.kept_for_tasks.begin(full, full),
        }
        let listed = self.list(root, Enumeration::Ids(q.with_kthreads()), start, &mut tasks);
        let mut file = std::mem::take(&mut self.records.file);
        file.resize(FILE_BUF, 0);
        let mut group_rss = std::mem::take(&mut self.records.group_rss);
        group_rss.clear();
        let (kept, other_kept) = match mode {
            Mode::Process => (
                &mut self.records.kept_for_processes,
                &mut self.records.kept_for_tasks,
            ),
            Mode::Task => (
                &mut self.records.kept_for_tasks,
                &mut self.records.kept_for_processes,
            ),
        };
        let res = listed.and_then(|()| {
            let mut files = TaskFiles {
                root,
                kept: &mut *kept,
                others: [other_kept],
                buf: &mut file,
            };
            for &task in &tasks {
                if out.len() >= max {
                    break;
                }
                match read_task(&mut files, task, mode, fields, &mut group_rss)? {
                    Some((_, true)) if q.ignores_kthreads() => {}
                    Some((info, _)) => out.push(info),
                    None => {}
                }
            }
            Ok(())
        });
        kept.finish(full);
        self.records.tasks = tasks;
        self.records.group_rss = group_rss;
        self.records.file = file;
        if res.is_err() {
            out.clear();
        }
        res
    }
}

/// Which `stat` a record holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// `/proc/PID/stat`: the process, its CPU times the group's totals
    /// (threads that exited included).
    Process,
    /// `/proc/TGID/task/TID/stat`: the thread alone.
    Task,
}

/// One task's record and whether it is a kernel thread; `None` if it is
/// gone. Its flags are always read, to tell kernel threads; they are kept
/// in the record only when asked for.
fn read_task(
    files: &mut TaskFiles<'_>,
    task: TaskRef,
    mode: Mode,
    fields: InfoFields,
    group_rss: &mut HashMap<i32, u64>,
) -> Result<Option<(TaskInfo, bool)>> {
    let tid = task.tid;
    let dir = match mode {
        Mode::Process => (Base::Pid(task.tid), None),
        Mode::Task => (Base::Pid(task.tgid), Some(task.tid)),
    };
    let stat_path = ProcPath::new(dir.0, dir.1, b"/stat");
    let n = match files.read(tid, TaskFile::Stat, &stat_path)? {
        Read::Bytes(n) => n,
        Read::Denied => return Ok(Some((TaskInfo::new(Pid::from_raw(tid)), false))),
        Read::Gone => return Ok(None),
    };
    let (mut info, facts) = stat_record(task, fields, &files.buf[..n])?;
    let kthread = facts.kthread;
    let want = |f: InfoFields| fields.contains(f);
    // A thread whose group's RSS is known needs no file for it.
    let known_rss = match mode {
        Mode::Task if !fields.reads_status() => group_rss.get(&task.tgid).copied(),
        _ => None,
    };
    if want(InfoFields::RSS) && known_rss.is_some() {
        info.rss_pages = known_rss;
    } else if fields.reads_status() {
        // `status` for the uids or the context switches, and for the RSS
        // as well when wanted: one file for all. A denied `status` leaves
        // them unset.
        let status_path = ProcPath::new(dir.0, dir.1, b"/status");
        match files.read(tid, TaskFile::Status, &status_path)? {
            Read::Bytes(n) => apply_status(&mut info, &files.buf[..n], fields),
            Read::Denied => info.rss_pages = None,
            Read::Gone => return Ok(None),
        }
    } else if want(InfoFields::RSS) {
        // `stat`'s rss (read above) is the approximate counter; `ps`
        // shows VmRSS, exact, and `statm`'s resident field is the same
        // exact sum, from a much smaller file. A denied `statm` leaves it
        // unset.
        info.rss_pages = None;
        let statm_path = ProcPath::new(dir.0, dir.1, b"/statm");
        match files.read(tid, TaskFile::Statm, &statm_path)? {
            Read::Bytes(n) => {
                let (size, resident) = parse_statm(&files.buf[..n], tid)?;
                // A task without memory (a kernel thread, a zombie) shows
                // all zeros; a zombie leader's threads may still have
                // memory, so only a task with an mm (size > 0) tells its
                // group's.
                if size > 0 && mode == Mode::Task {
                    group_rss.insert(task.tgid, resident);
                }
                info.rss_pages = Some(resident);
            }
            Read::Denied => {}
            Read::Gone => return Ok(None),
        }
    }
    Ok(Some((info, kthread)))
}

/// What a stat line says beside the record.
#[derive(Debug, Clone, Copy)]
pub(super) struct StatFacts {
    /// A kernel thread (`PF_KTHREAD`).
    pub(super) kthread: bool,
    /// Its group's number of threads (field 20).
    pub(super) threads: Option<u32>,
    /// Its start time (field 22), in clock ticks since boot.
    pub(super) start_ticks: Option<u64>,
    /// State `X` (`EXIT_DEAD`): the task is being released. A file of a
    /// thread that `execve()`d shows, between `de_thread()`'s exchange of
    /// the two numbers and the old leader's release, that old leader under
    /// the thread's former number: it is read as gone.
    pub(super) dead: bool,
}

/// A task's record from its stat line (`stat`'s rss, the approximate
/// counter, in `rss_pages` if asked for: the caller replaces it with the
/// exact count), and what else the line says ([`StatFacts`]). The flags
/// are read to tell kernel threads, and kept in the record only when
/// asked for.
pub(super) fn stat_record(
    task: TaskRef,
    fields: InfoFields,
    line: &[u8],
) -> Result<(TaskInfo, StatFacts)> {
    let mut info = TaskInfo::new(Pid::from_raw(task.tid));
    let facts = fill_from_stat(&mut info, task, fields, line)?;
    Ok((info, facts))
}

/// [`stat_record`] into `info`, a record of the tid alone: in place, where
/// a refresh of many records keeps them.
pub(super) fn fill_from_stat(
    info: &mut TaskInfo,
    task: TaskRef,
    fields: InfoFields,
    line: &[u8],
) -> Result<StatFacts> {
    // The line is scanned up to the last field asked for: the policy
    // (field 41) only with the scheduling fields.
    let parsed = if fields.contains(InfoFields::SCHED) {
        Stat::parse(line)
    } else {
        Stat::parse_without_policy(line)
    };
    let stat = parsed.ok_or_else(|| {
        Error::io(
            format!("parsing the stat line of task {}", task.tid),
            io::Error::from(io::ErrorKind::InvalidData),
        )
    })?;
    let want = |f: InfoFields| fields.contains(f);
    if want(InfoFields::TGID) {
        info.tgid = Some(Pid::from_raw(task.tgid));
    }
    if want(InfoFields::PPID) {
        info.ppid = Some(Pid::from_raw(stat.ppid));
    }
    if want(InfoFields::STATE) {
        info.state = Some(TaskState::from_letter(stat.state));
    }
    if want(InfoFields::COMM) {
        info.comm = Some(Comm::new(stat.comm));
    }
    let flags = TaskFlags::from_pf_flags(stat.flags);
    if want(InfoFields::FLAGS) {
        info.flags = Some(flags);
    }
    if let Some(c) = stat.counters {
        fill_counters(info, &c, fields);
    }
    Ok(StatFacts {
        kthread: flags.contains(TaskFlags::KTHREAD),
        threads: stat.counters.map(|c| c.num_threads),
        start_ticks: stat.counters.map(|c| c.start_time_ticks),
        dead: stat.state == b'X',
    })
}

/// The uids and the context switches of a `status` file, each if asked
/// for, and its `VmRSS` if the RSS is.
pub(super) fn apply_status(info: &mut TaskInfo, status: &[u8], fields: InfoFields) {
    if fields.contains(InfoFields::UIDS) {
        if let Some((ruid, euid)) = status_uids(status) {
            info.ruid = Some(ruid);
            info.euid = Some(euid);
        }
    }
    if fields.contains(InfoFields::CTX_SWITCHES) {
        if let Some((voluntary, involuntary)) = status_ctxt_switches(status) {
            info.nvcsw = Some(voluntary);
            info.nivcsw = Some(involuntary);
        }
    }
    if fields.contains(InfoFields::RSS) {
        // No VmRSS line: no memory (a kernel thread, a zombie).
        let kib = status_vm_rss_kib(status);
        info.rss_pages = Some(kib_to_pages(kib.unwrap_or(0)));
    }
}

/// A `statm` line's size and resident set, in pages; a line that does
/// not parse is an error.
pub(super) fn parse_statm(line: &[u8], tid: i32) -> Result<(u64, u64)> {
    statm_size_resident(line).ok_or_else(|| {
        Error::io(
            format!("parsing the statm line of task {tid}"),
            io::Error::from(io::ErrorKind::InvalidData),
        )
    })
}

/// The counters of a stat line, converted to the record's units.
fn fill_counters(info: &mut TaskInfo, c: &StatCounters, fields: InfoFields) {
    let want = |f: InfoFields| fields.contains(f);
    if want(InfoFields::CPU_TIME) {
        info.utime = Some(ticks(c.utime_ticks));
        info.stime = Some(ticks(c.stime_ticks));
    }
    if want(InfoFields::START_TIME) {
        info.start_time = Some(ticks(c.start_time_ticks));
    }
    if want(InfoFields::RSS) {
        info.rss_pages = Some(c.rss_pages);
    }
    if want(InfoFields::SCHED) {
        info.nice = Some(c.nice);
        info.priority = Some(c.priority);
        info.policy = c.policy;
    }
    if want(InfoFields::NUM_THREADS) {
        info.num_threads = Some(c.num_threads);
    }
    if want(InfoFields::FAULTS) {
        info.min_flt = Some(c.min_flt);
        info.maj_flt = Some(c.maj_flt);
    }
}

/// The first two fields of a `statm` line, in pages: the total size of the
/// mm (0 without one) and its resident set (`get_mm_counter_sum()`, the
/// exact sum `VmRSS` shows).
fn statm_size_resident(line: &[u8]) -> Option<(u64, u64)> {
    let mut f = line
        .split(u8::is_ascii_whitespace)
        .filter(|f| !f.is_empty());
    let num = |f: &[u8]| std::str::from_utf8(f).ok()?.parse().ok();
    Some((num(f.next()?)?, num(f.next()?)?))
}

/// `VmRSS` (KiB, `pages << (PAGE_SHIFT - 10)`) in pages: exact.
fn kib_to_pages(kib: u64) -> u64 {
    kib / (crate::info::page_size() / 1024).max(1)
}

#[cfg(test)]
mod tests {
    use super::super::read_counter::{files_read, status_statm_read};
    use crate::info::InfoFields;
    use crate::query::Query;
    use crate::target::Target;

    #[test]
    fn statm_fields() {
        use super::statm_size_resident;
        assert_eq!(
            statm_size_resident(b"2744 432 380 6 0 140 0\n"),
            Some((2744, 432))
        );
        assert_eq!(statm_size_resident(b"0 0 0 0 0 0 0\n"), Some((0, 0)));
        assert_eq!(statm_size_resident(b"12\n"), None);
        assert_eq!(statm_size_resident(b"x 1 2\n"), None);
    }

    /// Threads of this process that sleep until the value is dropped, which
    /// wakes and joins them.
    struct ParkedThreads {
        stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
        threads: Vec<std::thread::JoinHandle<()>>,
        tids: Vec<crate::pid::Pid>,
    }

    impl ParkedThreads {
        fn spawn(n: usize) -> ParkedThreads {
            let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
            let (tid_tx, tid_rx) = std::sync::mpsc::channel();
            let threads = (0..n)
                .map(|_| {
                    let stop = stop.clone();
                    let tid_tx = tid_tx.clone();
                    std::thread::spawn(move || {
                        tid_tx.send(crate::pid::Pid::this_thread()).unwrap();
                        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                            std::thread::park_timeout(std::time::Duration::from_millis(50));
                        }
                    })
                })
                .collect();
            let tids = (0..n).map(|_| tid_rx.recv().unwrap()).collect();
            ParkedThreads {
                stop,
                threads,
                tids,
            }
        }

        /// Stops the threads and waits until /proc no longer lists them:
        /// `join()` returns when the kernel clears the thread's tid, a
        /// little before the thread is released from the pid table.
        fn stop_and_wait_for_release(self) -> Vec<crate::pid::Pid> {
            let tids = self.tids.clone();
            drop(self);
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
            for tid in &tids {
                let path = format!("/proc/self/task/{tid}");
                while std::path::Path::new(&path).exists() {
                    assert!(std::time::Instant::now() < deadline, "{tid} still listed");
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
            }
            tids
        }
    }

    impl Drop for ParkedThreads {
        fn drop(&mut self) {
            self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
            for t in self.threads.drain(..) {
                t.thread().unpark();
                t.join().unwrap();
            }
        }
    }

    /// The RSS alone is read from `statm`, once per thread group in a task
    /// listing; with the uids, from the `status` read for them, once per
    /// task, and no `statm`.
    #[test]
    fn rss_alone_reads_statm_not_status() {
        let parked = ParkedThreads::spawn(3);
        let root = crate::proc_root::ProcRoot::open("/proc".as_ref()).unwrap();
        let mut fb = super::Fallback::new();
        let mut infos = Vec::new();
        for q in [Query::threads(Target::Caller), Query::processes()] {
            let before = status_statm_read();
            fb.task_infos(&root, q, InfoFields::RSS, 0, usize::MAX, &mut infos)
                .unwrap();
            let (status, statm) = status_statm_read();
            let (status, statm) = (status - before.0, statm - before.1);
            assert_eq!(status, 0, "{q:?}: {status} status files read");
            assert!(statm >= 1, "{q:?}: {statm} statm files read");
            let me = infos
                .iter()
                .find(|i| i.tid == crate::pid::Pid::this_process())
                .expect("our own record");
            assert!(me.rss_pages.is_some_and(|p| p > 0), "{me:?}");
            if q.listing() == crate::query::Listing::Threads {
                // Our threads share one mm: one statm for the group.
                assert_eq!(statm, 1, "{q:?}: {} records", infos.len());
                assert!(infos.len() >= 4, "{} records", infos.len());
                assert!(infos.iter().all(|i| i.rss_pages == me.rss_pages));
            }
            let before = status_statm_read();
            let rss_uids = InfoFields::RSS | InfoFields::UIDS;
            fb.task_infos(&root, q, rss_uids, 0, usize::MAX, &mut infos)
                .unwrap();
            let (status, statm) = status_statm_read();
            let (status, statm) = (status - before.0, statm - before.1);
            assert_eq!(statm, 0, "{q:?}: {statm} statm files read with the uids");
            assert!(status >= 1, "{q:?}: {status} status files read");
            if q.listing() == crate::query::Listing::Threads {
                // One per thread (a little slack for other tests' threads
                // exiting between the listing and the read).
                let n = infos.len();
                assert!((n..=n + 3).contains(&status), "{status} reads, {n} tasks");
            }
        }
        drop(parked);
    }

    /// A full refresh of the task rows keeps its files; the next one
    /// reads them again and shows what a fresh open shows, and a thread
    /// that exited in between has no record (its kept file says `ESRCH`).
    #[test]
    fn full_refreshes_reuse_their_files() {
        use crate::pid::Pid;
        let root = crate::proc_root::ProcRoot::open("/proc".as_ref()).unwrap();
        let mut fb = super::Fallback::keeping_files(true);
        let fields = InfoFields::TGID | InfoFields::STATE | InfoFields::RSS | InfoFields::COMM;
        let refresh = |fb: &mut super::Fallback, q: Query<'_>| {
            let mut out = Vec::new();
            fb.task_infos(&root, q, fields, 0, usize::MAX, &mut out)
                .unwrap();
            out
        };
        let parked = ParkedThreads::spawn(3);
        let extra = ParkedThreads::spawn(1);
        {
            let all = refresh(&mut fb, Query::all_tasks());
            let me = Pid::this_process();
            let mine: Vec<_> = all.iter().filter(|i| i.tgid == Some(me)).collect();
            assert!(mine.len() >= 5, "{} of our tasks", mine.len());
            assert!(mine.iter().any(|i| i.tid == extra.tids[0]));
        }
        assert!(fb.records.kept_for_tasks.len() >= 5);
        let gone = extra.stop_and_wait_for_release()[0];
        let again = refresh(&mut fb, Query::all_tasks());
        let fresh = refresh(&mut fb, Query::threads(Target::Caller));
        drop(parked);
        assert!(again.iter().all(|i| i.tid != gone), "{gone} exited");
        for f in &fresh {
            if let Some(a) = again.iter().find(|a| a.tid == f.tid) {
                assert_eq!((a.tgid, &a.comm), (f.tgid, &f.comm));
                // Both read, if not equal (memory moves).
                assert_eq!(a.rss_pages.is_some(), f.rss_pages.is_some());
            }
        }
        assert!(fresh.len() >= 4 && again.len() > fresh.len());
    }

    /// Without `keep_files` (the default handle) a full refresh closes
    /// every file it opened.
    #[test]
    fn a_default_reader_keeps_no_files() {
        let root = crate::proc_root::ProcRoot::open("/proc".as_ref()).unwrap();
        let mut fb = super::Fallback::new();
        let mut out = Vec::new();
        for q in [Query::all_tasks(), Query::processes()] {
            fb.task_infos(&root, q, InfoFields::RSS, 0, usize::MAX, &mut out)
                .unwrap();
            assert!(out.len() > 1);
        }
        assert_eq!(fb.records.kept_for_tasks.len(), 0);
        assert_eq!(fb.records.kept_for_processes.len(), 0);
    }

    /// With the fd table full while the handle keeps files, a refresh that
    /// must open one closes the handle's own and goes on (the table was
    /// full of its making); with none kept, `EMFILE` reaches the caller.
    /// Run in a child of its own (a re-run of this test binary), as it
    /// fills the fd table.
    #[test]
    fn a_full_fd_table_closes_the_kept_files_first() {
        const CHILD: &str = "PIDMAP_TEST_FULL_FD_TABLE_CHILD";
        const NAME: &str = "fallback::records::tests::a_full_fd_table_closes_the_kept_files_first";
        if std::env::var_os(CHILD).is_none() {
            let out = std::process::Command::new(std::env::current_exe().unwrap())
                .args(["--exact", NAME, "--test-threads=1"])
                .env(CHILD, "1")
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout).into_owned()
                + &String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success() && text.contains("1 passed"), "{text}");
            return;
        }
        let root = crate::proc_root::ProcRoot::open("/proc".as_ref()).unwrap();
        let mut fb = super::Fallback::keeping_files(true);
        let me = crate::pid::Pid::this_process();
        let refresh = |fb: &mut super::Fallback| {
            let mut out = Vec::new();
            fb.task_infos(
                &root,
                Query::all_tasks(),
                InfoFields::TGID,
                0,
                usize::MAX,
                &mut out,
            )
            .map(|()| out.iter().filter(|i| i.tgid == Some(me)).count())
        };
        let before = refresh(&mut fb).unwrap();
        assert!(fb.records.kept_for_tasks.len() > 0);
        // New threads: their stat files are not kept, so the refresh opens
        // them; so many that kept files of tasks exiting meanwhile
        // elsewhere (closed when they say ESRCH) cannot free enough slots.
        let parked = ParkedThreads::spawn(200);
        let fill_fd_table = || {
            let lim = libc::rlimit {
                rlim_cur: 512,
                rlim_max: libc::RLIM_INFINITY,
            };
            // SAFETY: setrlimit and dup on this child process, which runs
            // this test alone.
            unsafe {
                let mut hard = lim;
                assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut hard), 0);
                let lim = libc::rlimit {
                    rlim_max: hard.rlim_max,
                    ..lim
                };
                assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &lim), 0);
                while libc::dup(2) >= 0 {}
            }
        };
        fill_fd_table();
        let after = refresh(&mut fb).expect("the handle's kept files closed, then opened");
        assert!(
            after >= before + 200,
            "{after} of our tasks, {before} before"
        );
        assert_eq!(fb.records.kept_for_tasks.len(), 0);
        fill_fd_table();
        let err = refresh(&mut fb).expect_err("no kept file to close");
        assert_eq!(err.raw_os_error(), Some(libc::EMFILE), "{err:?}");
        drop(parked);
    }

    /// Under a low `RLIMIT_NOFILE` (1,024: a reserve of 512) a kept
    /// refresh of more tasks than fit keeps files only below the ceiling,
    /// loses no task, and leaves the application its reserve; once the
    /// application's own fds pass the ceiling, a refresh keeps no new file
    /// and still loses no task. Run in a child of its own (a re-run of
    /// this test binary), as it sets the limit and fills the fd table.
    #[test]
    fn a_low_fd_limit_leaves_the_reserve_and_loses_no_task() {
        const CHILD: &str = "PIDMAP_TEST_LOW_FD_LIMIT_CHILD";
        const NAME: &str =
            "fallback::records::tests::a_low_fd_limit_leaves_the_reserve_and_loses_no_task";
        if std::env::var_os(CHILD).is_none() {
            let out = std::process::Command::new(std::env::current_exe().unwrap())
                .args(["--exact", NAME, "--test-threads=1"])
                .env(CHILD, "1")
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout).into_owned()
                + &String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success() && text.contains("1 passed"), "{text}");
            return;
        }
        let mut hard = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit/setrlimit on this child process, which runs
        // this test alone.
        unsafe {
            assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut hard), 0);
            let lim = libc::rlimit {
                rlim_cur: 1024,
                rlim_max: hard.rlim_max,
            };
            assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &lim), 0);
        }
        assert_eq!(super::super::kept::ceiling(), 512);
        let open_fds = || std::fs::read_dir("/proc/self/fd").unwrap().count();
        let highest_fd = || {
            std::fs::read_dir("/proc/self/fd")
                .unwrap()
                .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
                .max()
                .unwrap()
        };
        let root = crate::proc_root::ProcRoot::open("/proc".as_ref()).unwrap();
        let mut fb = super::Fallback::keeping_files(true);
        let me = crate::pid::Pid::this_process();
        let refresh = |fb: &mut super::Fallback| {
            let mut out = Vec::new();
            fb.task_infos(
                &root,
                Query::all_tasks(),
                InfoFields::TGID,
                0,
                usize::MAX,
                &mut out,
            )
            .unwrap();
            out.iter()
                .filter(|i| i.tgid == Some(me))
                .map(|i| i.tid)
                .collect::<Vec<_>>()
        };
        let parked = ParkedThreads::spawn(600);
        let mine = refresh(&mut fb);
        for t in &parked.tids {
            assert!(mine.contains(t), "{t} lost");
        }
        let kept = fb.records.kept_for_tasks.len();
        assert!((300..=512).contains(&kept), "{kept} files kept");
        assert!(highest_fd() <= 512, "an fd above the ceiling");
        // The reserve is the application's: it opens 512 files.
        let reserve: Vec<std::fs::File> = (0..512)
            .map(|i| std::fs::File::open("/dev/null").unwrap_or_else(|e| panic!("file {i}: {e}")))
            .collect();
        drop(reserve);
        // The application's own fds up to 700: past the ceiling.
        let mut own = Vec::new();
        while highest_fd() < 700 {
            // SAFETY: dup of stderr; closed below.
            let fd = unsafe { libc::dup(2) };
            assert!(fd >= 0);
            own.push(fd);
        }
        let more = ParkedThreads::spawn(100);
        let before = open_fds();
        let mine = refresh(&mut fb);
        assert!(
            open_fds() <= before,
            "{} fds open, {before} before",
            open_fds()
        );
        for t in parked.tids.iter().chain(&more.tids) {
            assert!(mine.contains(t), "{t} lost");
        }
        for fd in own {
            // SAFETY: closing the fds dup'ed above.
            unsafe { libc::close(fd) };
        }
        drop((parked, more));
    }

    /// Reading the records chunk by chunk reads each task's file once:
    /// a chunk reads the files of its own records only, not of every task
    /// from its cursor on.
    #[test]
    fn chunks_read_each_task_once() {
        let parked = ParkedThreads::spawn(9);
        let root = crate::proc_root::ProcRoot::open("/proc".as_ref()).unwrap();
        let mut fb = super::Fallback::new();
        let q = Query::threads(Target::Caller);
        let fields = InfoFields::STATE;
        let mut all = Vec::new();
        let before = files_read();
        fb.task_infos(&root, q, fields, 0, usize::MAX, &mut all)
            .unwrap();
        let whole = files_read() - before;
        // Other tests' threads may exit between the listing and the read
        // (a file read, no record): a little slack, far below the
        // quadratic count (about n * n / 4 for n tasks in chunks of 2).
        let n = all.len();
        assert!((n..=n + 3).contains(&whole), "{whole} reads, {n} tasks");
        let mut chunk = Vec::new();
        let mut seen = 0;
        let mut start = 0;
        let before = files_read();
        loop {
            fb.task_infos(&root, q, fields, start, 2, &mut chunk)
                .unwrap();
            if chunk.is_empty() {
                break;
            }
            start = chunk[chunk.len() - 1].tid.as_raw() + 1;
            seen += chunk.len();
        }
        let chunked = files_read() - before;
        drop(parked);
        assert!(seen >= 10, "{seen} records");
        assert!(
            (seen..=seen + 3).contains(&chunked),
            "{chunked} reads for {seen} records in chunks of 2"
        );
    }
}
