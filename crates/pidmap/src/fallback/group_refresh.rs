//! A refresh of every task's record (`Query::all_tasks()`, no cursor, no
//! limit), one thread group at a time: the group's `task` directory is
//! listed and each task's `stat` opened below it (`TID/stat`, two path
//! components to walk instead of four), then the group's `statm` once
//! for the exact RSS (or each task's `status` with the uids).
//!
//! On a handle that keeps files ([`super::kept`]), a group whose tasks
//! the last refresh kept is not listed at all when its own `stat` lines
//! prove that no task joined it. Each task's kept `stat` is read again
//! (the record needs it anyway); the first one read gives the group's
//! number of threads at that instant (`num_threads`,
//! `signal->nr_threads`, which `copy_process()` and `__exit_signal()`
//! change under `tasklist_lock` together with the pid hash that `/proc`
//! lists). A kept file names its task for good (it reads `ESRCH` once
//! the task is gone, never another task's line), so when every kept file
//! of the group reads, those tasks were all alive at that instant; if
//! they are as many as the group had threads then, no other task was in
//! it, and a task that lived through the whole refresh cannot be missed.
//! Any other case (a kept file gone or denied, a count that differs, a
//! group the last refresh did not keep in full) lists the directory and
//! reads the tasks not read yet.
//!
//! The records are made in group order and handed out in tid order.

use std::mem::MaybeUninit;
use std::os::fd::{AsFd, OwnedFd};

use super::dirent::{parse_id, read_ids};
use super::kept::{FileKey, TaskFile};
use super::listed::TaskRef;
use super::path::{Base, ProcPath};
use super::record_buffers::GroupScratch;
use super::records::{apply_status, parse_statm, stat_record};
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
        let keep = self.keep_files;
        // Begun before the listing: on a full fd table it closes every
        // kept file (and keeps none for the rest of the refresh).
        self.records.kept_for_tasks.begin(keep);
        let pids = self.take_scratch_ids(|fb, ids| fb.read_root_ids(root, 1, |id| ids.push(id)));
        let pids = match pids {
            Ok(pids) => pids,
            Err(e) => {
                self.records.kept_for_tasks.finish(keep);
                return Err(e);
            }
        };
        let mut file = std::mem::take(&mut self.records.file);
        file.resize(super::records::FILE_BUF, 0);
        let mut scratch = std::mem::take(&mut self.records.groups);
        scratch.recs.clear();
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
            s: &mut scratch,
        };
        let res = pids.iter().try_for_each(|&pid| groups.group(pid));
        rb.kept_for_tasks.finish(keep);
        if res.is_ok() {
            scratch.hand_out(out);
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
    s: &'a mut GroupScratch,
}

impl Groups<'_, '_> {
    /// The records of thread group `pid`, appended.
    fn group(&mut self, pid: i32) -> Result<()> {
        let first_rec = self.s.recs.len();
        let mark = self.files.kept.mark();
        self.s.read.clear();
        self.s.denied.clear();
        let range = self.files.kept.group(pid);
        // The last refresh's `stat` files of the group, ascending.
        let (mut known, mut all_read, mut threads) = (0u32, true, None);
        for i in range.clone() {
            let Some(key) = self.files.kept.key_at(i) else {
                break;
            };
            if key.file != TaskFile::Stat {
                continue;
            }
            known += 1;
            let Some(fd) = self.files.kept.take_at(i) else {
                all_read = false;
                continue;
            };
            match self.files.read_kept(key, fd)? {
                Read::Bytes(n) => {
                    let t = self.stat(key, n)?;
                    threads = threads.or(Some(t));
                }
                Read::Denied => {
                    all_read = false;
                    self.denied(key.tid);
                }
                Read::Gone => all_read = false,
            }
        }
        let complete = all_read && known > 0 && threads == Some(Some(known));
        let dir = if complete {
            None
        } else {
            self.list_and_read(pid)?
        };
        self.extras(pid, first_rec, range, dir.as_ref())?;
        self.files.kept.sort_since(mark);
        Ok(())
    }

    /// List the group's `task` directory and read the `stat` of each task
    /// not read from a kept file; the directory, open (`None` if the
    /// group is gone or the view denies it).
    fn list_and_read(&mut self, pid: i32) -> Result<Option<OwnedFd>> {
        let context = || format!("listing the tasks of process {pid}");
        let dir = match open_task_dir(self.files.root, pid) {
            Err(e) if is_fd_table_full(&e) && self.files.release_kept() => {
                open_task_dir(self.files.root, pid)
            }
            res => res,
        };
        let dir = match dir {
            Ok(Some(dir)) => dir,
            Ok(None) => return Ok(None),
            Err(e) => return Err(Error::io(context(), e)),
        };
        #[cfg(test)]
        super::read_counter::count_listing(pid);
        self.s.listed.clear();
        let listed = &mut self.s.listed;
        match read_ids(self.dirents, dir.as_fd(), 1, parse_id, |id| listed.push(id)) {
            Ok(()) => {}
            // Exited while its directory was read: what was read stays,
            // as a snapshot.
            Err(e) if is_gone_errno(&e) => {}
            Err(e) => return Err(Error::io(context(), e)),
        }
        if !self.s.listed.windows(2).all(|w| w[0] < w[1]) {
            self.s.listed.sort_unstable();
        }
        // `read` is ascending (the kept files are in key order).
        let mut r = 0;
        for l in 0..self.s.listed.len() {
            let tid = self.s.listed[l];
            while self.s.read.get(r).is_some_and(|&t| t < tid) {
                r += 1;
            }
            if self.s.read.get(r) == Some(&tid) {
                continue;
            }
            let key = FileKey {
                tgid: pid,
                tid,
                file: TaskFile::Stat,
            };
            match self
                .files
                .read_file(key, None, OpenAt::TaskDir(dir.as_fd()))?
            {
                Read::Bytes(n) => {
                    self.stat(key, n)?;
                }
                Read::Denied => self.denied(tid),
                Read::Gone => {}
            }
        }
        Ok(Some(dir))
    }

    /// A record from the `stat` line in the buffer (left out if it is a
    /// kernel thread's and those are not wanted); the group's number of
    /// threads it shows.
    fn stat(&mut self, key: FileKey, n: usize) -> Result<Option<u32>> {
        let task = TaskRef {
            tid: key.tid,
            tgid: key.tgid,
        };
        let (info, kthread, threads) = stat_record(task, self.fields, &self.files.buf[..n])?;
        self.s.read.push(key.tid);
        if !(self.skip_k && kthread) {
            self.s.recs.push(info);
        }
        Ok(threads)
    }

    /// A task whose `stat` the view denies: its tid alone.
    fn denied(&mut self, tid: i32) {
        self.s.read.push(tid);
        self.s.denied.push(tid);
        self.s.recs.push(TaskInfo::new(Pid::from_raw(tid)));
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
        let pid = family.pid();
        let root = crate::proc_root::ProcRoot::open("/proc".as_ref()).unwrap();
        let mut fb = super::Fallback::keeping_files(true);
        let refresh = |fb: &mut super::Fallback| {
            let mut out: Vec<TaskInfo> = Vec::new();
            let before = listings_of(pid);
            fb.task_infos(
                &root,
                Query::all_tasks(),
                InfoFields::TGID,
                0,
                usize::MAX,
                &mut out,
            )
            .unwrap();
            assert!(out.windows(2).all(|w| w[0].tid < w[1].tid), "ascending");
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
}
