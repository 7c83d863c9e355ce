//! [`TaskRecord`]: a task's record as pidmap_info(2) wrote it, handed out
//! where the call wrote it and converted only field by field, when read.
//!
//! A [`TaskInfo`] is converted from the record as it is made: every field
//! to its `Option`, the times to whole clock ticks, the name to a
//! [`Comm`]. A refresh that looks at a few fields of most tasks pays that
//! for every field of every task; a `TaskRecord` costs nothing past the
//! call, and each accessor converts exactly as [`TaskInfo`] does.

use std::time::Duration;

use crate::info::{page_size, Comm, InfoFields, RecordUnits, TaskFlags, TaskInfo, TaskState};
use crate::pid::Pid;
use crate::sys;

/// One task's record, as the kernel wrote it (`struct pidmap_info`): a
/// field is `None` when the record does not hold it (not asked for, or
/// not filled by this kernel or view), as in [`TaskInfo`].
///
/// ```
/// use pidmap::{InfoFields, Pid, Pidmap, Query, Target};
/// let mut pm = Pidmap::new()?;
/// let tasks = pm.records(Query::threads(Target::Caller), InfoFields::STATE)?;
/// let me = tasks.iter().find(|t| t.tid() == Pid::this_thread()).unwrap();
/// assert!(me.state().is_some());
/// assert_eq!(me.to_info().state, me.state());
/// # Ok::<(), pidmap::Error>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Default)]
#[repr(transparent)]
pub struct TaskRecord(sys::PidmapInfo);

// SAFETY: `TaskRecord` is `repr(transparent)` over its one field, a
// `PidmapInfo`, so the two have the same layout and the same valid bit
// patterns.
unsafe impl bytemuck::TransparentWrapper<sys::PidmapInfo> for TaskRecord {}

impl TaskRecord {
    /// The task id (always set): the record's cursor.
    #[must_use]
    pub fn tid(&self) -> Pid {
        Pid::from_raw(self.0.tid())
    }

    /// The fields the record holds (besides the tid).
    #[must_use]
    pub fn fields(&self) -> InfoFields {
        InfoFields::from_mask(self.0.mask)
    }

    fn has(&self, bit: u64) -> bool {
        self.0.mask & bit != 0
    }

    fn field<T>(&self, bit: u64, value: impl FnOnce(&sys::PidmapInfo) -> T) -> Option<T> {
        self.has(bit).then(|| value(&self.0))
    }

    /// The thread group (process) id.
    #[must_use]
    pub fn tgid(&self) -> Option<Pid> {
        self.field(sys::PIDMAP_INFO_ID, |r| Pid::from_raw(r.tgid()))
    }

    /// The parent's thread-group id, as [`TaskInfo::ppid`].
    #[must_use]
    pub fn ppid(&self) -> Option<Pid> {
        self.field(sys::PIDMAP_INFO_PPID, |r| Pid::from_raw(r.ppid()))
    }

    /// The state (`stat` field 3).
    #[must_use]
    pub fn state(&self) -> Option<TaskState> {
        self.field(sys::PIDMAP_INFO_STATE, |r| TaskState::from_letter(r.state))
    }

    /// User CPU time in whole clock ticks, as [`TaskInfo::utime`].
    #[must_use]
    pub fn utime(&self) -> Option<Duration> {
        self.field(sys::PIDMAP_INFO_CPUTIME, |r| {
            RecordUnits::get().whole_ticks(r.utime_ns)
        })
    }

    /// System CPU time, as [`TaskInfo::stime`].
    #[must_use]
    pub fn stime(&self) -> Option<Duration> {
        self.field(sys::PIDMAP_INFO_CPUTIME, |r| {
            RecordUnits::get().whole_ticks(r.stime_ns)
        })
    }

    /// When the task started, as [`TaskInfo::start_time`].
    #[must_use]
    pub fn start_time(&self) -> Option<Duration> {
        self.field(sys::PIDMAP_INFO_START_TIME, |r| {
            RecordUnits::get().whole_ticks(r.start_time_ns)
        })
    }

    /// The resident set size in pages, as [`TaskInfo::rss_pages`].
    #[must_use]
    pub fn rss_pages(&self) -> Option<u64> {
        self.field(sys::PIDMAP_INFO_RSS, |r| {
            RecordUnits::get().pages(r.rss_bytes)
        })
    }

    /// The task's name, as [`TaskInfo::comm`], without a copy: the
    /// record's bytes up to the first NUL, at most [`Comm::MAX_LEN`].
    #[must_use]
    pub fn comm(&self) -> Option<&[u8]> {
        self.has(sys::PIDMAP_INFO_COMM).then(|| {
            let name = &self.0.comm[..Comm::MAX_LEN];
            let len = name.iter().position(|&b| b == 0).unwrap_or(name.len());
            &name[..len]
        })
    }

    /// The real user id, as [`TaskInfo::ruid`].
    #[must_use]
    pub fn ruid(&self) -> Option<u32> {
        self.field(sys::PIDMAP_INFO_CREDS, |r| r.ruid)
    }

    /// The effective user id, as [`TaskInfo::euid`].
    #[must_use]
    pub fn euid(&self) -> Option<u32> {
        self.field(sys::PIDMAP_INFO_CREDS, |r| r.euid)
    }

    /// The task flags, as [`TaskInfo::flags`].
    #[must_use]
    pub fn flags(&self) -> Option<TaskFlags> {
        self.field(sys::PIDMAP_INFO_TASK_FLAGS, |r| {
            TaskFlags::from_bits_retain(r.task_flags)
        })
    }

    /// Whether it is a kernel thread, when the flags are known.
    #[must_use]
    pub fn is_kernel_thread(&self) -> Option<bool> {
        self.flags().map(|f| f.contains(TaskFlags::KTHREAD))
    }

    /// The nice value, as [`TaskInfo::nice`].
    #[must_use]
    pub fn nice(&self) -> Option<i32> {
        self.field(sys::PIDMAP_INFO_SCHED, |r| r.nice)
    }

    /// The priority, as [`TaskInfo::priority`].
    #[must_use]
    pub fn priority(&self) -> Option<i32> {
        self.field(sys::PIDMAP_INFO_SCHED, |r| r.priority)
    }

    /// The scheduling policy, as [`TaskInfo::policy`].
    #[must_use]
    pub fn policy(&self) -> Option<u32> {
        self.field(sys::PIDMAP_INFO_SCHED, |r| r.policy)
    }

    /// The number of threads of the task's group.
    #[must_use]
    pub fn num_threads(&self) -> Option<u32> {
        self.field(sys::PIDMAP_INFO_NUM_THREADS, |r| r.num_threads)
    }

    /// Minor and major page faults, as [`TaskInfo::min_flt`] and
    /// [`TaskInfo::maj_flt`].
    #[must_use]
    pub fn faults(&self) -> Option<(u64, u64)> {
        self.field(sys::PIDMAP_INFO_FAULTS, |r| (r.min_flt, r.maj_flt))
    }

    /// Voluntary and involuntary context switches, as [`TaskInfo::nvcsw`]
    /// and [`TaskInfo::nivcsw`].
    #[must_use]
    pub fn context_switches(&self) -> Option<(u64, u64)> {
        self.field(sys::PIDMAP_INFO_CTXSW, |r| (r.nvcsw, r.nivcsw))
    }

    /// The pidfs id of the task, as [`TaskInfo::pidfs_id`] (the syscall
    /// backend only).
    #[must_use]
    pub fn pidfs_id(&self) -> Option<u64> {
        (self.has(sys::PIDMAP_INFO_ID) && self.0.pidfs_id != 0).then_some(self.0.pidfs_id)
    }

    /// The record as a [`TaskInfo`], every field converted.
    #[must_use]
    pub fn to_info(&self) -> TaskInfo {
        TaskInfo::from_record(&self.0, InfoFields::ALL)
    }

    /// The record of a [`TaskInfo`] (the fallback's): its fields in the
    /// kernel's units, which [`TaskRecord::to_info`] converts back to the
    /// same values.
    pub(crate) fn from_info(t: &TaskInfo) -> TaskRecord {
        let mut r = sys::PidmapInfo {
            tid: t.tid.as_raw().unsigned_abs(),
            ..sys::PidmapInfo::default()
        };
        let mut mask = 0;
        let mut set = |bit: u64, present: bool| {
            if present {
                mask |= bit;
            }
        };
        let nanos =
            |d: Option<Duration>| d.map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
        set(sys::PIDMAP_INFO_ID, t.tgid.is_some());
        r.tgid = t.tgid.map_or(0, |p| p.as_raw().unsigned_abs());
        r.pidfs_id = t.pidfs_id.unwrap_or(0);
        set(sys::PIDMAP_INFO_PPID, t.ppid.is_some());
        r.ppid = t.ppid.map_or(0, |p| p.as_raw().unsigned_abs());
        set(sys::PIDMAP_INFO_STATE, t.state.is_some());
        r.state = t.state.map_or(0, TaskState::letter);
        set(
            sys::PIDMAP_INFO_CPUTIME,
            t.utime.is_some() && t.stime.is_some(),
        );
        r.utime_ns = nanos(t.utime);
        r.stime_ns = nanos(t.stime);
        set(sys::PIDMAP_INFO_START_TIME, t.start_time.is_some());
        r.start_time_ns = nanos(t.start_time);
        set(sys::PIDMAP_INFO_RSS, t.rss_pages.is_some());
        r.rss_bytes = t.rss_pages.map_or(0, |p| p.saturating_mul(page_size()));
        set(sys::PIDMAP_INFO_COMM, t.comm.is_some());
        if let Some(c) = &t.comm {
            r.comm[..c.as_bytes().len()].copy_from_slice(c.as_bytes());
        }
        set(sys::PIDMAP_INFO_CREDS, t.ruid.is_some() && t.euid.is_some());
        r.ruid = t.ruid.unwrap_or(0);
        r.euid = t.euid.unwrap_or(0);
        set(sys::PIDMAP_INFO_TASK_FLAGS, t.flags.is_some());
        r.task_flags = t.flags.map_or(0, TaskFlags::bits);
        let sched = t.nice.zip(t.priority).zip(t.policy);
        set(sys::PIDMAP_INFO_SCHED, sched.is_some());
        if let Some(((nice, priority), policy)) = sched {
            (r.nice, r.priority, r.policy) = (nice, priority, policy);
        }
        set(sys::PIDMAP_INFO_NUM_THREADS, t.num_threads.is_some());
        r.num_threads = t.num_threads.unwrap_or(0);
        let faults = t.min_flt.zip(t.maj_flt);
        set(sys::PIDMAP_INFO_FAULTS, faults.is_some());
        (r.min_flt, r.maj_flt) = faults.unwrap_or_default();
        let switches = t.nvcsw.zip(t.nivcsw);
        set(sys::PIDMAP_INFO_CTXSW, switches.is_some());
        (r.nvcsw, r.nivcsw) = switches.unwrap_or_default();
        r.mask = mask;
        TaskRecord(r)
    }

    /// The kernel's record, for the handle's group fields.
    pub(crate) fn raw(&self) -> &sys::PidmapInfo {
        &self.0
    }

    /// The kernel's record, for the handle's group fields.
    pub(crate) fn raw_mut(&mut self) -> &mut sys::PidmapInfo {
        &mut self.0
    }
}

impl std::fmt::Debug for TaskRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&self.to_info(), f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn every_field() -> TaskInfo {
        let mut t = TaskInfo::new(Pid::from_raw(42));
        t.tgid = Some(Pid::from_raw(40));
        t.ppid = Some(Pid::from_raw(1));
        t.state = Some(TaskState::Sleeping);
        let tick = RecordUnits::get().whole_ticks(1_000_000_000);
        t.utime = Some(tick * 3);
        t.stime = Some(tick * 2);
        t.start_time = Some(tick * 1_000);
        t.rss_pages = Some(77);
        t.comm = Some(Comm::new(b"kworker/u8:0-ext4-rsv-conversion"));
        t.ruid = Some(1000);
        t.euid = Some(0);
        t.flags = Some(TaskFlags::KTHREAD);
        (t.nice, t.priority, t.policy) = (Some(-5), Some(15), Some(0));
        t.num_threads = Some(3);
        (t.min_flt, t.maj_flt) = (Some(10), Some(2));
        (t.nvcsw, t.nivcsw) = (Some(5), Some(6));
        t.pidfs_id = Some(0x1_0000_0007);
        t
    }

    #[test]
    fn a_record_of_an_info_converts_back_to_it() {
        let full = every_field();
        assert_eq!(full.fields(), InfoFields::ALL, "the test sets every field");
        let r = TaskRecord::from_info(&full);
        assert_eq!(r.to_info(), full);
        assert_eq!(r.fields(), InfoFields::ALL);
        assert_eq!(r.comm(), Some(&b"kworker/u8:0-ext4-rsv-conversion"[..]));
        assert_eq!(r.is_kernel_thread(), Some(true));
        let only_tid = TaskInfo::new(Pid::from_raw(9));
        let r = TaskRecord::from_info(&only_tid);
        assert_eq!(r.to_info(), only_tid);
        assert_eq!((r.tgid(), r.comm(), r.pidfs_id()), (None, None, None));
    }

    #[test]
    fn accessors_agree_with_the_conversion() {
        let r = TaskRecord::from_info(&every_field());
        let t = r.to_info();
        assert_eq!((r.tid(), r.tgid(), r.ppid()), (t.tid, t.tgid, t.ppid));
        assert_eq!((r.state(), r.rss_pages()), (t.state, t.rss_pages));
        assert_eq!(
            (r.utime(), r.stime(), r.start_time()),
            (t.utime, t.stime, t.start_time)
        );
        assert_eq!(r.comm(), t.comm.as_ref().map(Comm::as_bytes));
        assert_eq!((r.ruid(), r.euid(), r.flags()), (t.ruid, t.euid, t.flags));
        assert_eq!(
            (r.nice(), r.priority(), r.policy()),
            (t.nice, t.priority, t.policy)
        );
        assert_eq!(r.num_threads(), t.num_threads);
        assert_eq!(r.faults(), t.min_flt.zip(t.maj_flt));
        assert_eq!(r.context_switches(), t.nvcsw.zip(t.nivcsw));
        assert_eq!(r.pidfs_id(), t.pidfs_id);
    }

    #[test]
    fn a_name_of_64_bytes_is_cut_as_comm_cuts_it() {
        let mut raw = sys::PidmapInfo {
            mask: sys::PIDMAP_INFO_COMM,
            ..sys::PidmapInfo::default()
        };
        raw.comm = [b'k'; 64];
        let r = TaskRecord(raw);
        assert_eq!(r.comm().map(<[u8]>::len), Some(Comm::MAX_LEN));
        assert_eq!(r.comm(), r.to_info().comm.as_ref().map(Comm::as_bytes));
    }
}
