//! Task records from /proc: the listing's ids with their thread groups,
//! then `/proc/TGID/task/TID/stat` per task (and its `status`, only when the
//! uids are asked for), each read once into a reused buffer and parsed in
//! place.

use std::io;
use std::os::fd::AsFd;
use std::time::Duration;

use rustix::fs::OFlags;

use super::path::{Base, ProcPath};
use super::{read_retrying, Fallback, Listed};
use crate::error::{Error, Result};
use crate::info::{Comm, InfoFields, TaskInfo};
use crate::pid::Pid;
use crate::proc_root::ProcRoot;
use crate::query::{Enumeration, Query};
use crate::stat::{status_uids, Stat, StatCounters};

/// A listed task and its thread group: where its files are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct TaskRef {
    tid: i32,
    tgid: i32,
}

impl Listed for TaskRef {
    const NEEDS_TGID: bool = true;
    fn listed(id: i32, tgid: i32) -> Self {
        TaskRef { tid: id, tgid }
    }
    fn listed_id(&self) -> i32 {
        self.tid
    }
}

/// The largest read of `stat` or `status`: a stat line is well below it,
/// and `status` has its `Uid:` line near the top.
const FILE_BUF: usize = 4096;

/// The buffers the records reuse from call to call.
#[derive(Debug, Default)]
pub(crate) struct Buffers {
    tasks: Vec<TaskRef>,
    file: Vec<u8>,
}

/// What reading a task's file gave.
enum Read {
    /// `n` bytes in the buffer.
    Bytes(usize),
    /// `EACCES`/`EPERM`: the view shows the task but not its files.
    Denied,
    /// `ENOENT`/`ESRCH`: it exited since it was listed.
    Gone,
}

impl Fallback {
    /// The records of `q`'s tasks `>= start` into `out` (cleared first),
    /// ascending, with `fields` filled where /proc shows them. A task that
    /// exits meanwhile has no record, as with the syscall; one whose files
    /// the view denies has only its tid.
    pub(crate) fn task_infos(
        &mut self,
        root: &ProcRoot,
        q: Query<'_>,
        fields: InfoFields,
        start: i32,
        out: &mut Vec<TaskInfo>,
    ) -> Result<()> {
        out.clear();
        let mut tasks = std::mem::take(&mut self.records.tasks);
        // Kernel threads are left out below, by the flags read anyway.
        let listed = self.list(root, Enumeration::Ids(q.with_kthreads()), start, &mut tasks);
        let mut file = std::mem::take(&mut self.records.file);
        file.resize(FILE_BUF, 0);
        let res = listed.and_then(|()| {
            for &task in &tasks {
                match read_task(root, task, fields, &mut file)? {
                    Some((_, true)) if q.ignores_kthreads() => {}
                    Some((info, _)) => out.push(info),
                    None => {}
                }
            }
            Ok(())
        });
        self.records.tasks = tasks;
        self.records.file = file;
        if res.is_err() {
            out.clear();
        }
        res
    }
}

/// One task's record and whether it is a kernel thread; `None` if it is
/// gone. Its flags are always read, to tell kernel threads; they are kept
/// in the record only when asked for.
fn read_task(
    root: &ProcRoot,
    task: TaskRef,
    fields: InfoFields,
    file: &mut [u8],
) -> Result<Option<(TaskInfo, bool)>> {
    let mut info = TaskInfo::empty(Pid::from_raw(task.tid));
    let stat_path = ProcPath::new(Base::Pid(task.tgid), Some(task.tid), b"/stat");
    let n = match read_once(root, &stat_path, file)? {
        Read::Bytes(n) => n,
        Read::Denied => return Ok(Some((info, false))),
        Read::Gone => return Ok(None),
    };
    let stat = Stat::parse(&file[..n]).ok_or_else(|| {
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
        info.ppid = Some(stat.ppid);
    }
    if want(InfoFields::STATE) {
        info.state = Some(stat.state);
    }
    if want(InfoFields::COMM) {
        info.comm = Some(Comm::from_bytes(stat.comm));
    }
    // Always read, for `without_kthreads`; cleared below unless wanted.
    info.flags = u32::try_from(stat.flags).ok();
    if let Some(c) = stat.counters {
        fill_counters(&mut info, &c, fields);
    }
    let kthread = info.is_kernel_thread();
    if !want(InfoFields::FLAGS) {
        info.flags = None;
    }
    if want(InfoFields::UIDS) {
        let status_path = ProcPath::new(Base::Pid(task.tgid), Some(task.tid), b"/status");
        match read_once(root, &status_path, file)? {
            Read::Bytes(n) => {
                if let Some((ruid, euid)) = status_uids(&file[..n]) {
                    info.ruid = Some(ruid);
                    info.euid = Some(euid);
                }
            }
            Read::Denied => {}
            Read::Gone => return Ok(None),
        }
    }
    Ok(Some((info, kthread == Some(true))))
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
    if want(InfoFields::NICE) {
        info.nice = Some(c.nice);
    }
    if want(InfoFields::NUM_THREADS) {
        info.num_threads = Some(c.num_threads);
    }
}

/// Clock ticks (`USER_HZ`) as a duration.
fn ticks(n: u64) -> Duration {
    let hz = rustix::param::clock_ticks_per_second().max(1);
    Duration::from_secs(n / hz) + Duration::from_nanos((n % hz) * 1_000_000_000 / hz)
}

/// Open `path` and read it once into `buf`.
fn read_once(root: &ProcRoot, path: &ProcPath, buf: &mut [u8]) -> Result<Read> {
    let context = || format!("reading {}", path.as_cstr().to_string_lossy());
    let classify = |e: io::Error| match e.raw_os_error() {
        Some(libc::ENOENT) | Some(libc::ESRCH) => Ok(Read::Gone),
        Some(libc::EACCES) | Some(libc::EPERM) => Ok(Read::Denied),
        _ => Err(Error::io(context(), e)),
    };
    let fd = match root.openat(path.as_cstr(), OFlags::empty()) {
        Ok(fd) => fd,
        Err(e) => return classify(e),
    };
    match read_retrying(fd.as_fd(), buf) {
        Ok(n) => Ok(Read::Bytes(n)),
        Err(e) => classify(e),
    }
}
