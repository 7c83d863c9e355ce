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

/// What a refresh by groups reuses from call to call.
#[derive(Debug, Default)]
pub(crate) struct GroupScratch {
    /// The records, in group order.
    recs: Vec<TaskInfo>,
    /// The tids of the group being read: listed, read, denied.
    listed: Vec<i32>,
    read: Vec<i32>,
    denied: Vec<i32>,
    /// `(tid, index in recs)`, to hand the records out in tid order.
    order: Vec<(i32, u32)>,
}

impl GroupScratch {
    /// The records into `out` in tid order, but those of tasks found gone
    /// after their `stat` was read (tid 0).
    fn hand_out(&mut self, out: &mut Vec<TaskInfo>) {
        self.order.clear();
        self.order.extend(
            self.recs
                .iter()
                .enumerate()
                .filter(|(_, r)| r.tid.as_raw() != 0)
                .map(|(i, r)| (r.tid.as_raw(), u32::try_from(i).unwrap_or(u32::MAX))),
        );
        if !self.order.windows(2).all(|w| w[0].0 < w[1].0) {
            self.order.sort_unstable();
        }
        out.reserve(self.order.len());
        out.extend(self.order.iter().map(|&(_, i)| self.recs[i as usize]));
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
