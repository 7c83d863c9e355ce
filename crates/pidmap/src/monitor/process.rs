//! [`Process`]: one row of a [`ProcessTable`](crate::monitor::ProcessTable), with
//! every field the table asked for filled in.

use std::sync::Arc;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::info::{Comm, TaskInfo, TaskState};
use crate::pid::Pid;

/// A process as the last [`ProcessTable::refresh`](crate::monitor::ProcessTable::refresh)
/// saw it.
///
/// The table asks for every field below ([`ProcessTable::FIELDS`](crate::monitor::ProcessTable::FIELDS)),
/// so none of them depends on a field choice; only what cannot be known
/// is an `Option`, and each says when.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Process {
    /// The process (thread-group) id.
    pub pid: Pid,
    /// The parent's pid as `stat` shows it: 0 for a process without a
    /// parent in the view (pid 1, kthreadd). See [`Process::parent`].
    pub ppid: Pid,
    /// Its name as `ps` shows it (`stat`'s comm).
    pub name: Comm,
    /// Its state.
    pub state: TaskState,
    /// CPU use since the table's previous refresh of the processes, in
    /// percent of one CPU (a process using two CPUs fully shows 200),
    /// as `top` computes it. `None` on the table's first refresh, which
    /// has nothing to compare with, and for a process that had started
    /// before the previous refresh but was not in it (hidden from the
    /// view then); a process that started since counts all its CPU time.
    pub cpu_percent: Option<f64>,
    /// User plus system CPU time of the whole thread group, since it
    /// started.
    pub cpu_time: Duration,
    /// Resident set size in bytes (0 for a kernel thread).
    pub memory: u64,
    /// When it started, since boot.
    pub start_time: Duration,
    /// The real user id; `None` when the view shows the process's `stat`
    /// but not its `status`.
    pub uid: Option<u32>,
    /// The effective user id; `None` as [`Process::uid`] is.
    pub euid: Option<u32>,
    /// The effective user's name (its number when the user database has
    /// none), looked up once per uid by the table; `None` as
    /// [`Process::euid`] is.
    pub user: Option<Arc<str>>,
    /// How many threads the process has.
    pub threads: u32,
    /// The nice value (-20..=19).
    pub nice: i32,
    /// The priority as `stat` field 18 shows it.
    pub priority: i32,
    /// Whether it is a kernel thread.
    pub kernel_thread: bool,
    /// Minor page faults of the whole thread group, exited threads
    /// included (`stat` field 10); `None` unless the table reads the
    /// counters ([`ProcessTable::counters`](crate::monitor::ProcessTable::counters)).
    pub min_flt: Option<u64>,
    /// Major page faults (`stat` field 12), as [`Process::min_flt`].
    pub maj_flt: Option<u64>,
    /// Voluntary context switches of the process's main thread, as
    /// `/proc/PID/status` shows them; `None` as [`Process::min_flt`] is,
    /// or when the view shows the process's `stat` but not its `status`.
    pub nvcsw: Option<u64>,
    /// Involuntary context switches, as [`Process::nvcsw`].
    pub nivcsw: Option<u64>,
}

impl Process {
    /// The parent process, `None` for a process without one in the view.
    #[must_use]
    pub fn parent(&self) -> Option<Pid> {
        Pid::new(self.ppid.as_raw())
    }

    /// How long it has run, given the system's uptime
    /// ([`ProcessTable::uptime`](crate::monitor::ProcessTable::uptime)).
    #[must_use]
    pub fn run_time(&self, uptime: Duration) -> Duration {
        uptime.saturating_sub(self.start_time)
    }

    /// A process from a record read with [`ProcessTable::FIELDS`](crate::monitor::ProcessTable::FIELDS),
    /// and [`ProcessTable::COUNTERS`](crate::monitor::ProcessTable::COUNTERS)
    /// if `counters`.
    ///
    /// # Errors
    ///
    /// [`Error::AbiViolation`] naming the first field the record lacks
    /// (a kernel whose record does not carry a field it was asked for).
    pub(crate) fn from_record(
        r: &TaskInfo,
        cpu_percent: Option<f64>,
        user: Option<Arc<str>>,
        counters: bool,
    ) -> Result<Process> {
        let lacks = |field: &str| {
            Error::AbiViolation(format!(
                "the record of task {} has no {field}, which the process table asked for",
                r.tid
            ))
        };
        Ok(Process {
            pid: r.tid,
            ppid: r.ppid.ok_or_else(|| lacks("PPID"))?,
            name: r.comm.ok_or_else(|| lacks("COMM"))?,
            state: r.state.ok_or_else(|| lacks("STATE"))?,
            cpu_percent,
            cpu_time: r.cpu_time().ok_or_else(|| lacks("CPU_TIME"))?,
            memory: r.rss_bytes().ok_or_else(|| lacks("RSS"))?,
            start_time: r.start_time.ok_or_else(|| lacks("START_TIME"))?,
            uid: r.ruid,
            euid: r.euid,
            user,
            threads: r.num_threads.ok_or_else(|| lacks("NUM_THREADS"))?,
            nice: r.nice.ok_or_else(|| lacks("SCHED"))?,
            priority: r.priority.ok_or_else(|| lacks("SCHED"))?,
            kernel_thread: r.is_kernel_thread().ok_or_else(|| lacks("FLAGS"))?,
            // `stat` gives the faults with the other fields: a record
            // without them lacks a field it was asked for. The context
            // switches come from `status`, which the view may deny.
            min_flt: counters
                .then(|| r.min_flt.ok_or_else(|| lacks("FAULTS")))
                .transpose()?,
            maj_flt: counters
                .then(|| r.maj_flt.ok_or_else(|| lacks("FAULTS")))
                .transpose()?,
            nvcsw: r.nvcsw.filter(|_| counters),
            nivcsw: r.nivcsw.filter(|_| counters),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::info::TaskFlags;

    fn full() -> TaskInfo {
        let mut t = TaskInfo::new(Pid::from_raw(40));
        t.tgid = Some(Pid::from_raw(40));
        t.ppid = Some(Pid::from_raw(1));
        t.state = Some(TaskState::Sleeping);
        t.utime = Some(Duration::from_millis(30));
        t.stime = Some(Duration::from_millis(20));
        t.start_time = Some(Duration::from_secs(3));
        t.rss_pages = Some(2);
        t.comm = Some(Comm::new(b"worker"));
        t.flags = Some(TaskFlags::KTHREAD);
        t.nice = Some(5);
        t.priority = Some(25);
        t.policy = Some(0);
        t.num_threads = Some(4);
        t
    }

    #[test]
    fn every_field_from_the_record() {
        let user: Arc<str> = Arc::from("alice");
        let p = Process::from_record(&full(), Some(12.5), Some(user.clone()), false).unwrap();
        assert_eq!(p.pid.as_raw(), 40);
        assert_eq!(p.parent(), Pid::new(1));
        assert_eq!(p.name.as_bytes(), b"worker");
        assert_eq!(p.state, TaskState::Sleeping);
        assert_eq!(p.cpu_percent, Some(12.5));
        assert_eq!(p.cpu_time, Duration::from_millis(50));
        let page = u64::try_from(rustix::param::page_size()).unwrap();
        assert_eq!(p.memory, 2 * page);
        assert_eq!((p.threads, p.nice, p.priority), (4, 5, 25));
        assert!(p.kernel_thread);
        assert_eq!(p.uid, None);
        assert_eq!(p.user, Some(user));
        assert_eq!(p.run_time(Duration::from_secs(10)), Duration::from_secs(7));
        assert_eq!((p.min_flt, p.nvcsw), (None, None));
    }

    #[test]
    fn the_counters_when_asked_for() {
        let mut r = full();
        r.min_flt = Some(100);
        r.maj_flt = Some(3);
        r.nvcsw = Some(40);
        r.nivcsw = Some(2);
        let p = Process::from_record(&r, None, None, true).unwrap();
        assert_eq!(
            (p.min_flt, p.maj_flt, p.nvcsw, p.nivcsw),
            (Some(100), Some(3), Some(40), Some(2))
        );
        // Not asked for: none, whatever the record holds.
        let p = Process::from_record(&r, None, None, false).unwrap();
        assert_eq!((p.min_flt, p.nivcsw), (None, None));
        // Asked for and missing from stat's fields: named.
        r.maj_flt = None;
        let e = Process::from_record(&r, None, None, true).unwrap_err();
        assert!(e.to_string().contains("FAULTS"), "{e}");
        // status denied: no switches, still a row.
        r.maj_flt = Some(3);
        r.nvcsw = None;
        r.nivcsw = None;
        let p = Process::from_record(&r, None, None, true).unwrap();
        assert_eq!((p.maj_flt, p.nvcsw), (Some(3), None));
    }

    #[test]
    fn a_missing_field_is_named_not_defaulted() {
        let mut r = full();
        r.start_time = None;
        let e = Process::from_record(&r, None, None, false).unwrap_err();
        assert!(e.to_string().contains("START_TIME"), "{e}");
        let mut r = full();
        r.flags = None;
        let e = Process::from_record(&r, None, None, false).unwrap_err();
        assert!(e.to_string().contains("FLAGS"), "{e}");
        // A ppid of 0 is a value, not a missing field.
        let mut r = full();
        r.ppid = Some(Pid::from_raw(0));
        let p = Process::from_record(&r, None, None, false).unwrap();
        assert_eq!(p.parent(), None);
    }
}
