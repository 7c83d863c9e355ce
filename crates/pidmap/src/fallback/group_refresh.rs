//! A refresh of every task's record (`Query::all_tasks()`, no cursor, no
//! limit), one thread group at a time: the group's `task` directory is
//! listed and each task's `stat` opened below it (`TID/stat`, two path
//! components to walk instead of four), then the group's `statm` once
//! for the exact RSS (or each task's `status` with the uids).
//!
//! Every handle keeps the keys of its last refresh ([`super::kept`]); one
//! built with `keep_files` keeps the files too. Nothing is listed when no
//! task was created since the last complete refresh (the kernel's count
//! of forks, [`super::kept::Unchanged`]): the last refresh's groups and
//! tasks are read again, kept files with one `pread`, the others by their
//! path below the group's `task` directory. Otherwise the proc root is
//! listed, and a group the last refresh knew is not listed when its own
//! `stat` lines prove that no task joined it. Each known task's `stat` is
//! read again (the record needs it anyway), the leader's first; each line
//! gives the group's number of threads at that instant (`num_threads`,
//! `signal->nr_threads`, which `copy_process()` and `__exit_signal()`
//! change under `tasklist_lock` together with the pid hash that `/proc`
//! lists). A kept file names its task for good (it reads `ESRCH` once
//! the task is gone, never another task's line); a file opened by its
//! path may find another task that took the number, and counts only if
//! that task started in a clock tick before the refresh did. So when
//! every file of the group reads, those tasks were all alive at the first
//! read; if every line shows as many threads as were read, no other task
//! was in the group then, and a task that lived through the whole refresh
//! cannot be missed. Any other case (a file gone or denied, a count that
//! differs or moved, a task too young to prove, a group the last refresh
//! did not know) lists the directory and reads the group again, until a
//! pass sees it unchanged (see [`Groups::group`] for why an exec needs
//! that).
//!
//! The records are made in group order, in the caller's `Vec`, and stay
//! there if that is tid order; else they are handed out in tid order.

use std::mem::MaybeUninit;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use super::dirent::{parse_id, read_ids};
use super::kept::{FileKey, KeptFd, TaskFile};
use super::listed::TaskRef;
use super::path::{Base, ProcPath};
use super::record_buffers::GroupScratch;
use super::records::{apply_status, fill_from_stat, parse_statm, StatFacts};
use super::task_files::{OpenAt, Read, TaskFiles};
use super::{is_fd_table_full, is_gone_errno, open_task_dir, Fallback};
use crate::error::{Error, Result};
use crate::info::{InfoFields, TaskInfo};
use crate::pid::Pid;
use crate::proc_root::ProcRoot;

impl Fallback {
    /// The records of every task into `out` (cleared by the caller),
    /// ascending; kernel threads left out if `skip_k`. A task that exits
    /// meanwhile has no record; one whose files the view denies has only
    /// its tid.
    pub(super) fn all_task_infos(
        &mut self,
        root: &ProcRoot,
        fields: InfoFields,
        skip_k: bool,
        out: &mut Vec<TaskInfo>,
    ) -> Result<()> {
        // Every handle keeps the keys of its last refresh (what lets it
        // read a group without listing it); one built with `keep_files`
        // keeps the files too. Begun before the listing: on a full fd
        // table it closes every kept file (and keeps no key for the rest
        // of the refresh).
        self.records.kept_for_tasks.begin(true, self.keep_files);
        // Read before anything else: what the next refresh compares.
        let unchanged = &mut self.records.kept_for_tasks.unchanged;
        let forks = unchanged.read_forks(root);
        let skip = unchanged.may_skip_listings(root, forks);
        let started = ticks_now();
        let pids = if skip {
            let mut ids = std::mem::take(&mut self.scratch);
            ids.clone_from(&unchanged.groups);
            Ok(ids)
        } else {
            self.take_scratch_ids(|fb, ids| fb.read_root_ids(root, 1, |id| ids.push(id)))
        };
        let pids = match pids {
            Ok(pids) => pids,
            Err(e) => {
                self.records.kept_for_tasks.finish(true);
                self.records.kept_for_tasks.unchanged.forget();
                return Err(e);
            }
        };
        let mut file = std::mem::take(&mut self.records.file);
        file.resize(super::records::FILE_BUF, 0);
        let mut scratch = std::mem::take(&mut self.records.groups);
        // The records are made in the caller's `Vec` (empty), and stay
        // there if they come in tid order (the groups' tids do not
        // interleave): no copy.
        scratch.recs.clear();
        std::mem::swap(&mut scratch.recs, out);
        let rb = &mut self.records;
        let mut groups = Groups {
            files: TaskFiles {
                root,
                kept: &mut rb.kept_for_tasks,
                others: [&mut rb.kept_for_processes],
                buf: &mut file,
            },
            dirents: &mut self.dirents,
            fields,
            skip_k,
            skip_listings: skip,
            started,
            s: &mut scratch,
        };
        let res = pids.iter().try_for_each(|&pid| groups.group(pid));
        let kept = &mut rb.kept_for_tasks;
        let complete = res.is_ok() && kept.knows_all();
        kept.finish(true);
        kept.unchanged.ended(forks, complete, &pids);
        if res.is_ok() {
            let recs = &scratch.recs;
            let in_order = recs.first().map_or(true, |r| r.tid.as_raw() != 0)
                && recs.windows(2).all(|w| w[0].tid < w[1].tid);
            if in_order {
                std::mem::swap(&mut scratch.recs, out);
            } else {
                scratch.hand_out(out);
            }
        }
        self.records.file = file;
        self.records.groups = scratch;
        self.scratch = pids;
        res
    }
}

/// One refresh by groups.
struct Groups<'a, 'f> {
    files: TaskFiles<'f>,
    dirents: &'a mut [MaybeUninit<u8>],
    fields: InfoFields,
    skip_k: bool,
    /// No task was created since the last complete refresh
    /// ([`super::kept::Unchanged`]): its tasks are read, no directory
    /// listed.
    skip_listings: bool,
    /// The clock tick (`CLOCK_BOOTTIME`, the clock of a stat line's start
    /// time) at which the refresh started.
    started: u64,
    s: &'a mut GroupScratch,
}

/// How many passes over a group whose tasks changed while it was read (a
/// task gone, a count that moved) are made before the last one is taken
/// as it is. Between two, the reader yields its CPU: a group in the middle
/// of an exec waits for its other threads to exit, which they do only
/// when they run.
const PASSES: usize = 8;

/// What one pass over a group's tasks saw.
struct Pass {
    /// Every file read, each of a task alive (and, read by its path in a
    /// group not listed, started before the refresh).
    all_read: bool,
    /// The group's number of threads, as the first line read showed it.
    threads: Option<u32>,
    /// Every line read showed that same number.
    counts_agree: bool,
    /// The leader's number names no task: the group is gone (while the
    /// group lives its leader keeps the number, as a zombie too, and an
    /// exec hands it on under `tasklist_lock`).
    leader_gone: bool,
}

impl Pass {
    fn new() -> Self {
        Pass {
            all_read: true,
            threads: None,
            counts_agree: true,
            leader_gone: false,
        }
    }

    fn see(&mut self, threads: Option<u32>) {
        match (self.threads, threads) {
            (_, None) => self.counts_agree = false,
            (None, Some(t)) => self.threads = Some(t),
            (Some(a), Some(b)) => self.counts_agree &= a == b,
        }
    }

    /// Whether the pass read one group of `tasks` tasks that did not
    /// change while it was read (see [`Groups::group`]).
    fn consistent(&self, tasks: u32) -> bool {
        self.all_read && self.counts_agree && self.threads.map_or(true, |t| t == tasks)
    }
}

impl Groups<'_, '_> {
    /// The records of thread group `pid`, appended.
    ///
    /// A pass over a group reads its leader's `stat` first, then the
    /// others'. It is taken when every file read shows a live task and
    /// every line the same number of threads, that of the tasks read:
    /// then no thread `execve()`d during the pass. Such an exec
    /// (`de_thread()`) first kills the group's other threads, then gives
    /// the exec'ing thread the leader's number and the old leader its own,
    /// and releases the old leader: a pass that read the leader before it
    /// and another thread after it finds that thread gone (or the old
    /// leader, dead, under its number), and one that read the leader after
    /// it counts fewer threads there than before. Either kind of pass is
    /// made again from a listing of the group, up to [`PASSES`] times, so
    /// that the exec'ing thread is neither missed (the old leader's line
    /// read for the leader's number, the thread's own number gone) nor read
    /// twice (under both numbers).
    fn group(&mut self, pid: i32) -> Result<()> {
        let first_rec = self.s.recs.len();
        let mark = self.files.kept.mark();
        self.s.denied.clear();
        let range = self.files.kept.group(pid);
        let is_stat_of = |k: Option<FileKey>, tid: i32| {
            k.is_some_and(|k| k.file == TaskFile::Stat && k.tid == tid)
        };
        // The last refresh's `stat` files of the group, its leader's
        // first, then ascending.
        let leader = range
            .clone()
            .find(|&i| is_stat_of(self.files.kept.key_at(i), pid));
        let (mut known, mut pass) = (0u32, Pass::new());
        // The group's `task` directory, opened (not listed) for the files
        // read by their path: two path components each instead of four.
        let (mut task_dir, mut dir_tried) = (None, false);
        for i in leader
            .into_iter()
            .chain(range.clone().filter(|&i| Some(i) != leader))
        {
            let Some(key) = self.files.kept.key_at(i) else {
                break;
            };
            if key.file != TaskFile::Stat {
                continue;
            }
            known += 1;
            // Known, not kept (over the budget, or denied): read by its
            // path, which may find another task of the number.
            let (read, by_path) = match self.files.kept.take_at(i) {
                Some(fd) => (self.files.read_kept(key, fd)?, false),
                None => {
                    if !dir_tried {
                        dir_tried = true;
                        task_dir = self.open_dir(pid)?;
                    }
                    let path = ProcPath::new(Base::Pid(pid), Some(key.tid), key.file.suffix());
                    let at = match &task_dir {
                        Some(dir) => OpenAt::TaskDir(dir.as_fd()),
                        None => OpenAt::Root(&path),
                    };
                    (self.files.read_file(key, None, at)?, true)
                }
            };
            // A task read by its path counts as one that was in the group
            // when its first file was read only if it started before the
            // refresh did (no task is created while the count of them
            // says none was).
            let prove_start = by_path && !self.skip_listings;
            self.count(&mut pass, key, read, prove_start, true)?;
        }
        let dir = if known > 0 && pass.consistent(known) {
            task_dir
        } else {
            let mut dir = task_dir;
            for again in 0..PASSES {
                let rewind = again > 0;
                if rewind {
                    std::thread::yield_now();
                }
                let (open, consistent) = self.list_and_read(pid, dir, rewind, first_rec, mark)?;
                dir = open;
                if consistent || dir.is_none() {
                    break;
                }
            }
            dir
        };
        self.extras(pid, first_rec, range, dir.as_ref())?;
        self.files.kept.sort_since(mark);
        Ok(())
    }

    /// Count what reading `key`'s `stat` gave into `pass` (and make its
    /// record); a denied file fails the pass if `denied_fails`.
    fn count(
        &mut self,
        pass: &mut Pass,
        key: FileKey,
        read: Read,
        prove_start: bool,
        denied_fails: bool,
    ) -> Result<()> {
        match read {
            Read::Bytes(n) => match self.stat(key, n)? {
                Some(facts) => {
                    if prove_start {
                        pass.all_read &= facts.start_ticks.is_some_and(|t| t < self.started);
                    }
                    pass.see(facts.threads);
                }
                // Dead: under the leader's number, the old leader of an
                // exec caught between its zombie state and its release.
                None => pass.all_read = false,
            },
            Read::Denied => {
                pass.all_read &= !denied_fails;
                self.denied(key);
            }
            Read::Gone => {
                pass.all_read = false;
                pass.leader_gone |= key.tid == key.tgid;
            }
        }
        Ok(())
    }

    /// Open the group's `task` directory (`None` if the group is gone or
    /// the view denies it); if the fd table is full, close the kept files
    /// and try once more.
    fn open_dir(&mut self, pid: i32) -> Result<Option<OwnedFd>> {
        let dir = match open_task_dir(self.files.root, pid) {
            Err(e) if is_fd_table_full(&e) && self.files.release_kept() => {
                open_task_dir(self.files.root, pid)
            }
            res => res,
        };
        dir.map_err(|e| Error::io(format!("listing the tasks of process {pid}"), e))
    }

    /// A pass over the group from a listing of its `task` directory (`dir`
    /// if it is open already, read before if `rewind`): the group's records and kept files
    /// since `first_rec` and `mark` are taken back, and each listed task's
    /// `stat` read again (through its kept file, if any), the leader's
    /// first. The directory, open (`None` if the group is gone or the view
    /// denies it), and whether the pass is consistent ([`Pass`]).
    fn list_and_read(
        &mut self,
        pid: i32,
        dir: Option<OwnedFd>,
        rewind: bool,
        first_rec: usize,
        mark: usize,
    ) -> Result<(Option<OwnedFd>, bool)> {
        let context = || format!("listing the tasks of process {pid}");
        let dir = match dir {
            Some(dir) => dir,
            None => match self.open_dir(pid)? {
                Some(dir) => dir,
                None => return Ok((None, true)),
            },
        };
        #[cfg(test)]
        super::read_counter::count_listing(pid);
        if rewind {
            rustix::fs::seek(&dir, rustix::fs::SeekFrom::Start(0))
                .map_err(|e| Error::io(context(), e.into()))?;
        }
        let mut listed = std::mem::take(&mut self.s.listed);
        listed.clear();
        match read_ids(self.dirents, dir.as_fd(), 1, parse_id, |id| listed.push(id)) {
            Ok(()) => {}
            // Exited while its directory was read: what was read stays,
            // as a snapshot.
            Err(e) if is_gone_errno(&e) => {}
            Err(e) => {
                self.s.listed = listed;
                return Err(Error::io(context(), e));
            }
        }
        if !listed.windows(2).all(|w| w[0] < w[1]) {
            listed.sort_unstable();
        }
        // A live group's listing shows its leader, a zombie one too; one
        // read during an exec may show no task at all. The leader's own
        // file tells a group in an exec (read again) from one gone.
        if let Err(at) = listed.binary_search(&pid) {
            listed.insert(at, pid);
        }
        self.s.recs.truncate(first_rec);
        self.s.denied.clear();
        let mut held = std::mem::take(&mut self.s.held);
        self.files.kept.take_since(mark, &mut held);
        let mut pass = Pass::new();
        let res = self.read_listed(pid, dir.as_fd(), &listed, &mut held, &mut pass);
        // The files of tasks no longer listed are closed.
        held.clear();
        self.s.held = held;
        let tasks = u32::try_from(listed.len()).unwrap_or(u32::MAX);
        self.s.listed = listed;
        res?;
        if pass.leader_gone {
            self.s.recs.truncate(first_rec);
            return Ok((None, true));
        }
        Ok((Some(dir), pass.consistent(tasks)))
    }

    /// Read the `stat` of each of `listed` (the leader's first) below
    /// `dir`, through its file in `held` if there is one.
    fn read_listed(
        &mut self,
        pid: i32,
        dir: BorrowedFd<'_>,
        listed: &[i32],
        held: &mut [(FileKey, Option<KeptFd>)],
        pass: &mut Pass,
    ) -> Result<()> {
        let leader = listed.iter().position(|&t| t == pid);
        for l in leader
            .into_iter()
            .chain((0..listed.len()).filter(|&l| Some(l) != leader))
        {
            let key = FileKey {
                tgid: pid,
                tid: listed[l],
                file: TaskFile::Stat,
            };
            let fd = held
                .binary_search_by_key(&key, |(k, _)| *k)
                .ok()
                .and_then(|h| held[h].1.take());
            let read = self.files.read_file(key, fd, OpenAt::TaskDir(dir))?;
            self.count(pass, key, read, false, false)?;
        }
        Ok(())
    }

    /// A record from the `stat` line in the buffer (left out if it is a
    /// kernel thread's and those are not wanted), and what else the line
    /// says; `None` if it shows a dead task (no record).
    fn stat(&mut self, key: FileKey, n: usize) -> Result<Option<StatFacts>> {
        let task = TaskRef {
            tid: key.tid,
            tgid: key.tgid,
        };
        // Made in place, at the end of the records, and taken back if it
        // is not wanted.
        let recs = &mut self.s.recs;
        let at = recs.len();
        recs.push(TaskInfo::new(Pid::from_raw(key.tid)));
        let facts = match fill_from_stat(&mut recs[at], task, self.fields, &self.files.buf[..n]) {
            Ok(facts) => facts,
            Err(e) => {
                recs.pop();
                return Err(e);
            }
        };
        if facts.dead || (self.skip_k && facts.kthread) {
            recs.pop();
        }
        Ok((!facts.dead).then_some(facts))
    }

    /// A task whose `stat` the view denies: its tid alone (and its key
    /// kept for the next refresh).
    fn denied(&mut self, key: FileKey) {
        self.files.kept.remember(key);
        self.s.denied.push(key.tid);
        self.s.recs.push(TaskInfo::new(Pid::from_raw(key.tid)));
    }

    /// The exact RSS (`statm`, once per group) or the uids (and the RSS:
    /// `status`, per task) of the group's records, in tid order: what
    /// [`super::records`] reads for a task listing.
    fn extras(
        &mut self,
        pid: i32,
        first_rec: usize,
        range: std::ops::Range<usize>,
        dir: Option<&OwnedFd>,
    ) -> Result<()> {
        let recs = &mut self.s.recs[first_rec..];
        if !recs.windows(2).all(|w| w[0].tid < w[1].tid) {
            recs.sort_unstable_by_key(|r| r.tid);
        }
        let uids = self.fields.contains(InfoFields::UIDS);
        let rss = self.fields.contains(InfoFields::RSS);
        if !uids && !rss {
            return Ok(());
        }
        let file = if uids {
            TaskFile::Status
        } else {
            TaskFile::Statm
        };
        let mut group_rss = None;
        let mut j = range.start;
        for k in first_rec..self.s.recs.len() {
            let tid = self.s.recs[k].tid.as_raw();
            if self.s.denied.contains(&tid) {
                continue;
            }
            if !uids {
                // `stat`'s rss is the approximate counter: unset unless
                // `statm` gives the exact one.
                self.s.recs[k].rss_pages = group_rss;
                if group_rss.is_some() {
                    continue;
                }
            }
            let key = FileKey {
                tgid: pid,
                tid,
                file,
            };
            while range.contains(&j) && self.files.kept.key_at(j).is_some_and(|k| k < key) {
                j += 1;
            }
            let kept = match self.files.kept.key_at(j) {
                Some(k) if k == key && range.contains(&j) => self.files.kept.take_at(j),
                _ => None,
            };
            let path;
            let at = match dir {
                Some(dir) => OpenAt::TaskDir(dir.as_fd()),
                None => {
                    path = ProcPath::new(Base::Pid(pid), Some(tid), file.suffix());
                    OpenAt::Root(&path)
                }
            };
            let read = self.files.read_file(key, kept, at)?;
            let info = &mut self.s.recs[k];
            match read {
                Read::Bytes(n) if uids => apply_status(info, &self.files.buf[..n], self.fields),
                Read::Bytes(n) => {
                    let (size, resident) = parse_statm(&self.files.buf[..n], tid)?;
                    info.rss_pages = Some(resident);
                    // A task without memory (a zombie leader) shows all
                    // zeros; only a task with an mm tells its group's.
                    if size > 0 {
                        group_rss = Some(resident);
                    }
                }
                Read::Denied => info.rss_pages = None,
                // Gone since its `stat` was read: no record.
                Read::Gone => info.tid = Pid::from_raw(0),
            }
        }
        Ok(())
    }
}

/// The `CLOCK_BOOTTIME` clock tick now (`USER_HZ`, the unit of a stat
/// line's start time: the kernel's `nsec_to_clock_t()` rounds down too).
fn ticks_now() -> u64 {
    let now = rustix::time::clock_gettime(rustix::time::ClockId::Boottime);
    let hz = rustix::param::clock_ticks_per_second();
    let secs = u64::try_from(now.tv_sec).unwrap_or(0);
    let nsecs = u64::try_from(now.tv_nsec).unwrap_or(0);
    secs.saturating_mul(hz)
        .saturating_add(nsecs.saturating_mul(hz) / 1_000_000_000)
}

#[cfg(test)]
mod tests {
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

    use super::super::read_counter::listings_of;
    use crate::info::{InfoFields, TaskInfo};
    use crate::query::Query;

    const CHILD: &str = "PIDMAP_TEST_GROUP_REFRESH_CHILD";
    const NAME: &str =
        "fallback::group_refresh::tests::a_kept_refresh_lists_only_the_groups_that_changed";

    /// The child: parked threads it adds and replaces on request, each
    /// answered (on a line starting with `CHILD`) once /proc shows it.
    fn child_main() -> ! {
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::Arc;
        let spawn = || {
            let stop = Arc::new(AtomicBool::new(false));
            let (tx, rx) = std::sync::mpsc::channel();
            let flag = stop.clone();
            let handle = std::thread::spawn(move || {
                tx.send(crate::pid::Pid::this_thread().as_raw()).unwrap();
                while !flag.load(Ordering::Relaxed) {
                    std::thread::park_timeout(std::time::Duration::from_millis(20));
                }
            });
            (rx.recv().unwrap(), stop, handle)
        };
        // Straight to fd 1: `println!` is captured by the test harness.
        let say = |what: String| {
            let mut out = std::io::stdout();
            writeln!(out, "CHILD {what}").unwrap();
            out.flush().unwrap();
        };
        let mut threads: Vec<_> = (0..3).map(|_| spawn()).collect();
        say("ready".into());
        for line in std::io::stdin().lock().lines() {
            match line.unwrap().as_str() {
                "add" => {
                    let t = spawn();
                    say(t.0.to_string());
                    threads.push(t);
                }
                "fork" => {
                    let parent = std::process::id() as libc::pid_t;
                    // SAFETY: the child only calls async-signal-safe
                    // functions (and dies with the thread that forked it).
                    let kid = unsafe { libc::fork() };
                    assert!(kid >= 0);
                    if kid == 0 {
                        // SAFETY: async-signal-safe calls only. A parent
                        // gone before prctl() sends no signal: then the
                        // reparented child ends itself.
                        unsafe {
                            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                            if libc::getppid() != parent {
                                libc::_exit(0);
                            }
                            loop {
                                libc::pause();
                            }
                        }
                    }
                    let path = format!("/proc/{kid}/task/{kid}");
                    while !std::path::Path::new(&path).exists() {
                        std::thread::sleep(std::time::Duration::from_millis(1));
                    }
                    say(kid.to_string());
                }
                "replace" => {
                    let (gone, stop, handle) = threads.remove(0);
                    stop.store(true, std::sync::atomic::Ordering::Relaxed);
                    handle.thread().unpark();
                    handle.join().unwrap();
                    let path = format!("/proc/self/task/{gone}");
                    while std::path::Path::new(&path).exists() {
                        std::thread::sleep(std::time::Duration::from_millis(1));
                    }
                    let t = spawn();
                    say(format!("{gone} {}", t.0));
                    threads.push(t);
                }
                _ => break,
            }
        }
        std::process::exit(0)
    }

    struct Family {
        child: Child,
        to: ChildStdin,
        from: BufReader<ChildStdout>,
    }

    impl Family {
        fn ask(&mut self, what: &str) -> Vec<i32> {
            if !what.is_empty() {
                writeln!(self.to, "{what}").unwrap();
            }
            let mut line = String::new();
            loop {
                line.clear();
                assert!(
                    self.from.read_line(&mut line).unwrap() > 0,
                    "the child ended"
                );
                // The harness may have begun the line ("test NAME ... ").
                if let Some(at) = line.find("CHILD ") {
                    return line[at + "CHILD ".len()..]
                        .split_whitespace()
                        .filter_map(|t| t.parse().ok())
                        .collect();
                }
            }
        }

        fn pid(&self) -> i32 {
            i32::try_from(self.child.id()).unwrap()
        }

        /// The child's tasks, as its `task` directory lists them now.
        fn tasks(&self) -> Vec<i32> {
            let mut v: Vec<i32> = std::fs::read_dir(format!("/proc/{}/task", self.pid()))
                .unwrap()
                .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect();
            v.sort_unstable();
            v
        }
    }

    /// Every task's tgid through `fb`, in ascending tid order.
    fn all_tasks(fb: &mut super::Fallback, root: &crate::proc_root::ProcRoot) -> Vec<TaskInfo> {
        let mut out = Vec::new();
        fb.task_infos(
            root,
            Query::all_tasks(),
            InfoFields::TGID,
            0,
            usize::MAX,
            &mut out,
        )
        .unwrap();
        assert!(out.windows(2).all(|w| w[0].tid < w[1].tid), "ascending");
        out
    }

    impl Family {
        /// The child, its threads started.
        fn spawn() -> Family {
            let mut child = Command::new(std::env::current_exe().unwrap())
                .args(["--exact", NAME, "--test-threads=1", "--nocapture"])
                .env(CHILD, "1")
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            let mut family = Family {
                to: child.stdin.take().unwrap(),
                from: BufReader::new(child.stdout.take().unwrap()),
                child,
            };
            family.ask("");
            family
        }
    }

    impl Drop for Family {
        fn drop(&mut self) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }

    /// A kept refresh of every task lists no group whose tasks did not
    /// change, and lists, and finds every task of, a group that gained a
    /// thread or had one replaced by another (the same count): the
    /// child's records are its `task` directory each time.
    #[test]
    fn a_kept_refresh_lists_only_the_groups_that_changed() {
        if std::env::var_os(CHILD).is_some() {
            child_main();
        }
        let mut family = Family::spawn();
        let pid = family.pid();
        let root = crate::proc_root::ProcRoot::open("/proc".as_ref()).unwrap();
        let mut fb = super::Fallback::keeping_files(true);
        let refresh = |fb: &mut super::Fallback| {
            let before = listings_of(pid);
            let out = all_tasks(fb, &root);
            let mine: Vec<i32> = out
                .iter()
                .filter(|r| r.tgid.map(crate::pid::Pid::as_raw) == Some(pid))
                .map(|r| r.tid.as_raw())
                .collect();
            (mine, listings_of(pid) - before, out.len())
        };
        let (first, listed, tasks) = refresh(&mut fb);
        assert_eq!((first, listed), (family.tasks(), 1));
        let kept_all = fb.records.kept_for_tasks.len() >= tasks;
        let (same, listed, _) = refresh(&mut fb);
        assert_eq!(same, family.tasks());
        if kept_all {
            assert_eq!(listed, 0, "an unchanged group listed again");
        } else {
            eprintln!("note: the fd budget did not keep every task: the group was listed");
        }
        let added = family.ask("add");
        let (more, listed, _) = refresh(&mut fb);
        assert_eq!((more.clone(), listed), (family.tasks(), 1));
        assert!(more.contains(&added[0]), "{added:?} in {more:?}");
        let replaced = family.ask("replace");
        let (now, listed, _) = refresh(&mut fb);
        assert_eq!((now.clone(), listed), (family.tasks(), 1));
        assert_eq!(now.len(), more.len(), "a thread replaced by another");
        assert!(
            !now.contains(&replaced[0]) && now.contains(&replaced[1]),
            "{replaced:?} {now:?}"
        );
    }

    /// The start time a stat line gives is on the clock the refresh's
    /// start is read from (`ticks_now`), in the same unit.
    #[test]
    fn the_start_time_is_on_the_refresh_clock() {
        use super::super::listed::TaskRef;
        let line = b"12 (a) b) (c) S 1 12 12 0 -1 4194560 5 0 0 0 7 8 0 0 20 0 3 0 4567 1000 50 18446744073709551615\n";
        let task = TaskRef { tid: 12, tgid: 12 };
        let (_, facts) = super::super::records::stat_record(task, InfoFields::TGID, line).unwrap();
        assert_eq!((facts.start_ticks, facts.threads), (Some(4567), Some(3)));
        let before = super::ticks_now();
        std::thread::spawn(move || {
            let own = std::fs::read("/proc/thread-self/stat").unwrap();
            let (_, facts) =
                super::super::records::stat_record(task, InfoFields::TGID, &own).unwrap();
            let t = facts.start_ticks.expect("a start time");
            assert!(before <= t && t <= super::ticks_now(), "{before} {t}");
        })
        .join()
        .unwrap();
    }

    /// A kept refresh with no task created since the last lists neither
    /// the proc root nor any `task` directory, and still gives every task
    /// (its kept files, and by their path the files it could not keep:
    /// here none, as if every file were over the budget); a
    /// thread or a process created since is found by the next refresh,
    /// which lists again.
    #[test]
    fn a_kept_refresh_lists_nothing_until_a_task_is_created_and_then_finds_it() {
        let mut family = Family::spawn();
        let pid = family.pid();
        let root = crate::proc_root::ProcRoot::open("/proc".as_ref()).unwrap();
        let mut fb = super::Fallback::keeping_files(true);
        fb.records.kept_for_tasks.keys_only = true;
        // Of the family (the child's group, and the process it forked),
        // the tids; whether this refresh skipped the listings; how many
        // times the child's group was listed.
        let refresh = |fb: &mut super::Fallback, other: i32| {
            let (listed, skips) = (listings_of(pid), fb.records.kept_for_tasks.unchanged.skips);
            let out = all_tasks(fb, &root);
            let mine: Vec<i32> = out
                .iter()
                .filter(|r| {
                    r.tgid
                        .map(crate::pid::Pid::as_raw)
                        .is_some_and(|t| t == pid || t == other)
                })
                .map(|r| r.tid.as_raw())
                .collect();
            let skipped = fb.records.kept_for_tasks.unchanged.skips > skips;
            (mine, skipped, listings_of(pid) - listed)
        };
        let (first, skipped, listed) = refresh(&mut fb, 0);
        assert_eq!((first, skipped, listed), (family.tasks(), false, 1));
        // Other tests (and the machine) create tasks too: try until a
        // refresh comes with none created since the last.
        // Whether or not one skips, the child's group is not listed: its
        // tasks, read by their path, all started before the refresh (in
        // an earlier clock tick: wait for the next).
        let ready = super::ticks_now();
        while super::ticks_now() <= ready {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        let mut quiet = false;
        for _ in 0..500 {
            let (tasks, skipped, listed) = refresh(&mut fb, 0);
            assert_eq!((tasks, listed), (family.tasks(), 0));
            if skipped {
                quiet = true;
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        assert!(quiet, "no refresh skipped the listings");
        let replaced = family.ask("replace");
        let (tasks, skipped, listed) = refresh(&mut fb, 0);
        assert_eq!((tasks.clone(), skipped, listed), (family.tasks(), false, 1));
        assert!(tasks.contains(&replaced[1]), "{replaced:?} in {tasks:?}");
        let added = family.ask("add");
        let (tasks, skipped, listed) = refresh(&mut fb, 0);
        assert_eq!((tasks.clone(), skipped, listed), (family.tasks(), false, 1));
        assert!(tasks.contains(&added[0]), "{added:?} in {tasks:?}");
        let forked = family.ask("fork")[0];
        let (tasks, skipped, _) = refresh(&mut fb, forked);
        assert!(!skipped);
        let mut want = family.tasks();
        want.push(forked);
        want.sort_unstable();
        assert_eq!(tasks, want, "the forked process {forked} too");
    }
}
