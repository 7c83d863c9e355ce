//! Task records: [`TaskInfo`], and the [`InfoFields`] a caller asks for.
//!
//! The syscall backend gets them from pidmap(2) with `PIDMAP_INFO`
//! (docs/ABI.md, "Task records"); the /proc fallback fills the same struct
//! from `/proc/TGID/task/TID/stat` (and `status` for the uids).

use std::fmt;
use std::ops::{BitOr, BitOrAssign};
use std::time::Duration;

use crate::pid::Pid;
use crate::sys;

/// A set of [`TaskInfo`] fields to ask for (`req->info_mask`). Combine with
/// `|`; [`InfoFields::ALL`] is every field this crate knows.
///
/// ```
/// use pidmap::InfoFields;
/// let f = InfoFields::STATE | InfoFields::CPU_TIME;
/// assert!(f.contains(InfoFields::STATE) && !f.contains(InfoFields::COMM));
/// assert!(InfoFields::ALL.contains(f));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct InfoFields(u64);

impl InfoFields {
    /// No field: records carry only the tid.
    pub const NONE: InfoFields = InfoFields(0);
    /// [`TaskInfo::tgid`].
    pub const TGID: InfoFields = InfoFields(sys::PIDMAP_INFO_TGID);
    /// [`TaskInfo::ppid`].
    pub const PPID: InfoFields = InfoFields(sys::PIDMAP_INFO_PPID);
    /// [`TaskInfo::state`].
    pub const STATE: InfoFields = InfoFields(sys::PIDMAP_INFO_STATE);
    /// [`TaskInfo::utime`] and [`TaskInfo::stime`].
    pub const CPU_TIME: InfoFields = InfoFields(sys::PIDMAP_INFO_CPUTIME);
    /// [`TaskInfo::start_time`].
    pub const START_TIME: InfoFields = InfoFields(sys::PIDMAP_INFO_START_TIME);
    /// [`TaskInfo::rss_pages`].
    pub const RSS: InfoFields = InfoFields(sys::PIDMAP_INFO_RSS);
    /// [`TaskInfo::comm`].
    pub const COMM: InfoFields = InfoFields(sys::PIDMAP_INFO_COMM);
    /// [`TaskInfo::ruid`] and [`TaskInfo::euid`] (the fallback reads
    /// `status` for them, and only for them).
    pub const UIDS: InfoFields = InfoFields(sys::PIDMAP_INFO_UID);
    /// [`TaskInfo::flags`].
    pub const FLAGS: InfoFields = InfoFields(sys::PIDMAP_INFO_FLAGS);
    /// [`TaskInfo::nice`].
    pub const NICE: InfoFields = InfoFields(sys::PIDMAP_INFO_NICE);
    /// [`TaskInfo::num_threads`].
    pub const NUM_THREADS: InfoFields = InfoFields(sys::PIDMAP_INFO_NUM_THREADS);
    /// Every field above.
    pub const ALL: InfoFields = InfoFields(
        sys::PIDMAP_INFO_TGID
            | sys::PIDMAP_INFO_PPID
            | sys::PIDMAP_INFO_STATE
            | sys::PIDMAP_INFO_CPUTIME
            | sys::PIDMAP_INFO_START_TIME
            | sys::PIDMAP_INFO_RSS
            | sys::PIDMAP_INFO_COMM
            | sys::PIDMAP_INFO_UID
            | sys::PIDMAP_INFO_FLAGS
            | sys::PIDMAP_INFO_NICE
            | sys::PIDMAP_INFO_NUM_THREADS,
    );

    /// Whether every field of `other` is in `self`.
    pub const fn contains(self, other: InfoFields) -> bool {
        self.0 & other.0 == other.0
    }

    /// Whether no field is in the set.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The fields of either set (`|` in a `const`).
    pub const fn union(self, other: InfoFields) -> InfoFields {
        InfoFields(self.0 | other.0)
    }

    /// The fields of both sets.
    pub const fn intersection(self, other: InfoFields) -> InfoFields {
        InfoFields(self.0 & other.0)
    }

    /// The `PIDMAP_INFO_*` bits.
    pub(crate) const fn bits(self) -> u64 {
        self.0
    }

    /// The known fields among `bits` (a kernel's `mask`; unknown bits are
    /// dropped).
    pub(crate) const fn from_mask(bits: u64) -> InfoFields {
        InfoFields(bits & InfoFields::ALL.0)
    }
}

impl BitOr for InfoFields {
    type Output = InfoFields;
    fn bitor(self, rhs: InfoFields) -> InfoFields {
        InfoFields(self.0 | rhs.0)
    }
}

impl BitOrAssign for InfoFields {
    fn bitor_assign(&mut self, rhs: InfoFields) {
        self.0 |= rhs.0;
    }
}

impl fmt::Debug for InfoFields {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const NAMES: [(InfoFields, &str); 11] = [
            (InfoFields::TGID, "TGID"),
            (InfoFields::PPID, "PPID"),
            (InfoFields::STATE, "STATE"),
            (InfoFields::CPU_TIME, "CPU_TIME"),
            (InfoFields::START_TIME, "START_TIME"),
            (InfoFields::RSS, "RSS"),
            (InfoFields::COMM, "COMM"),
            (InfoFields::UIDS, "UIDS"),
            (InfoFields::FLAGS, "FLAGS"),
            (InfoFields::NICE, "NICE"),
            (InfoFields::NUM_THREADS, "NUM_THREADS"),
        ];
        let mut set = f.debug_set();
        for (field, name) in NAMES {
            if self.contains(field) {
                set.entry(&format_args!("{name}"));
            }
        }
        set.finish()
    }
}

/// A task's name (`comm`), as `ps` shows it: up to [`Comm::MAX_LEN`]
/// bytes, any byte but NUL, stored inline (no allocation per record).
///
/// A user task's name has at most 15 bytes. A kernel thread's may be
/// longer (`rcu_exp_gp_kthread_worker`): the /proc fallback reads it from
/// `stat`, which shows the full name (and a workqueue worker's
/// `-desc`/`+desc` suffix, `kworker/u8:0-ext4-rsv-conversion`), as `ps`
/// does; the kernel's record has the task's own 16-byte field.
///
/// ```
/// use pidmap::Comm;
/// let c = Comm::new(b"rcu_exp_gp_kthread_worker");
/// assert_eq!(c.as_bytes(), b"rcu_exp_gp_kthread_worker");
/// assert_eq!(c.to_string(), "rcu_exp_gp_kthread_worker");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Comm {
    bytes: [u8; Comm::MAX_LEN],
    len: u8,
}

impl Default for Comm {
    fn default() -> Self {
        Comm {
            bytes: [0; Comm::MAX_LEN],
            len: 0,
        }
    }
}

impl Comm {
    /// The longest name kept: the kernel formats a kernel thread's name
    /// for `stat` into 64 bytes, NUL included (`fs/proc/array.c`).
    pub const MAX_LEN: usize = 63;

    /// A name from its bytes, cut at the first NUL and to
    /// [`Comm::MAX_LEN`] bytes.
    pub fn new(name: &[u8]) -> Comm {
        let len = name.iter().position(|&b| b == 0).unwrap_or(name.len());
        Comm::cut(&name[..len], Comm::MAX_LEN)
    }

    /// The NUL-padded kernel field, up to its first NUL.
    pub(crate) fn from_padded(field: &[u8; 16]) -> Comm {
        Comm::new(field)
    }

    /// The first `max` (at most [`Comm::MAX_LEN`]) bytes of `name`.
    fn cut(name: &[u8], max: usize) -> Comm {
        let mut bytes = [0u8; Comm::MAX_LEN];
        let len = name.len().min(max).min(bytes.len());
        bytes[..len].copy_from_slice(&name[..len]);
        Comm {
            bytes,
            len: u8::try_from(len).unwrap_or(u8::MAX),
        }
    }

    /// The raw bytes (not necessarily UTF-8).
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }
}

/// Serialized as a string (lossy for bytes that are not UTF-8).
#[cfg(feature = "serde")]
impl serde::Serialize for Comm {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(&String::from_utf8_lossy(self.as_bytes()))
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for Comm {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Comm, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        if s.len() > Comm::MAX_LEN || s.contains('\0') {
            return Err(serde::de::Error::custom(
                "a task name has at most 63 bytes and no NUL",
            ));
        }
        Ok(Comm::new(s.as_bytes()))
    }
}

/// A task's state, the letter of `stat` field 3 (and of `ps`'s `STAT`).
///
/// ```
/// use pidmap::TaskState;
/// assert_eq!(TaskState::from_letter(b'S'), TaskState::Sleeping);
/// assert_eq!(char::from(TaskState::Zombie), 'Z');
/// assert_eq!(TaskState::from_letter(b'?'), TaskState::Other(b'?'));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum TaskState {
    /// `R`: running or runnable.
    Running,
    /// `S`: interruptible sleep.
    Sleeping,
    /// `D`: uninterruptible sleep (usually I/O).
    DiskSleep,
    /// `T`: stopped by a signal.
    Stopped,
    /// `t`: stopped by a tracer.
    TracingStop,
    /// `Z`: exited, not yet reaped.
    Zombie,
    /// `X` (or `x`): dead.
    Dead,
    /// `P`: parked (a kernel thread).
    Parked,
    /// `I`: idle (a kernel thread's idle sleep).
    Idle,
    /// A letter this crate does not know (older or newer kernels: `K`,
    /// `W`, ...), kept as it is.
    Other(u8),
}

impl TaskState {
    /// The state of a `stat` letter.
    pub const fn from_letter(letter: u8) -> TaskState {
        match letter {
            b'R' => TaskState::Running,
            b'S' => TaskState::Sleeping,
            b'D' => TaskState::DiskSleep,
            b'T' => TaskState::Stopped,
            b't' => TaskState::TracingStop,
            b'Z' => TaskState::Zombie,
            b'X' | b'x' => TaskState::Dead,
            b'P' => TaskState::Parked,
            b'I' => TaskState::Idle,
            other => TaskState::Other(other),
        }
    }

    /// The letter `stat` and `ps` show.
    pub const fn letter(self) -> u8 {
        match self {
            TaskState::Running => b'R',
            TaskState::Sleeping => b'S',
            TaskState::DiskSleep => b'D',
            TaskState::Stopped => b'T',
            TaskState::TracingStop => b't',
            TaskState::Zombie => b'Z',
            TaskState::Dead => b'X',
            TaskState::Parked => b'P',
            TaskState::Idle => b'I',
            TaskState::Other(b) => b,
        }
    }
}

impl From<TaskState> for u8 {
    fn from(s: TaskState) -> u8 {
        s.letter()
    }
}

impl From<TaskState> for char {
    fn from(s: TaskState) -> char {
        char::from(s.letter())
    }
}

impl fmt::Display for TaskState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", char::from(*self))
    }
}

impl fmt::Debug for Comm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&String::from_utf8_lossy(self.as_bytes()), f)
    }
}

impl fmt::Display for Comm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&String::from_utf8_lossy(self.as_bytes()))
    }
}

/// One task's record: what `ps` shows for it.
///
/// Every field but the tid is an `Option`: `None` when it was not asked
/// for (see [`InfoFields`]), or when the kernel or the view did not fill
/// it — a `hidepid=noaccess` view gives records with only the tid. Each
/// field says when else it is `None`.
///
/// **Processes and tasks.** A record of a process listing
/// ([`Query::processes`](crate::Query::processes),
/// [`Query::children`](crate::Query::children)) holds what
/// `/proc/PID/stat` shows for the process: its CPU times are the thread
/// group's totals, threads that have exited included, as `ps` and `top`
/// show them. A record of a task listing
/// ([`Query::all_tasks`](crate::Query::all_tasks),
/// [`Query::threads`](crate::Query::threads)) holds what
/// `/proc/PID/task/TID/stat` shows: that thread's own times. (The /proc
/// fallback reads exactly those files. The kernel records of the series
/// before its v3 carry the leader's own times in process mode.)
///
/// **Precision.** The syscall backend gets the CPU and start times in
/// nanoseconds; the /proc fallback reads them from `stat` in clock ticks
/// (`sysconf(_SC_CLK_TCK)`, usually 100 per second), so there they are
/// multiples of 10 ms, rounded down.
///
/// Users can build records, for tests of their own code:
///
/// ```
/// use pidmap::{Comm, Pid, TaskInfo, TaskState};
/// let mut t = TaskInfo::new(Pid::new(42).unwrap());
/// t.state = Some(TaskState::Running);
/// t.comm = Some(Comm::new(b"worker"));
/// t.utime = Some(std::time::Duration::from_millis(30));
/// t.stime = Some(std::time::Duration::from_millis(20));
/// assert_eq!(t.cpu_time(), Some(std::time::Duration::from_millis(50)));
/// assert_eq!(t.ppid, None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct TaskInfo {
    /// The task id (always set): the record's cursor.
    pub tid: Pid,
    /// The thread group (process) id.
    pub tgid: Option<Pid>,
    /// The parent's thread-group id, as `stat` shows it: 0 (as
    /// [`Pid::from_raw(0)`](Pid::from_raw)) for a task without a parent in
    /// the view (pid 1, kthreadd, a namespace's init).
    #[cfg_attr(feature = "serde", serde(with = "raw_pid"))]
    pub ppid: Option<Pid>,
    /// The state (`stat` field 3).
    pub state: Option<TaskState>,
    /// User CPU time: the thread group's total in a process listing, the
    /// thread's own in a task listing.
    pub utime: Option<Duration>,
    /// System CPU time, summed as [`TaskInfo::utime`] is.
    pub stime: Option<Duration>,
    /// When the task started, since boot (in the caller's time namespace).
    pub start_time: Option<Duration>,
    /// Resident set size in pages, the exact count `ps` shows (the
    /// fallback reads `statm`'s resident field, or `VmRSS` from `status`
    /// when the uids are read too, not `stat`'s approximate counter); 0
    /// for a task without memory, such as a kernel thread. See
    /// [`TaskInfo::rss_bytes`].
    pub rss_pages: Option<u64>,
    /// The task's name, as `ps` shows it (see [`Comm`]).
    pub comm: Option<Comm>,
    /// Real user id, in the caller's user namespace; `None` also when the
    /// view shows the task but not its `status`.
    pub ruid: Option<u32>,
    /// Effective user id; `None` as [`TaskInfo::ruid`] is.
    pub euid: Option<u32>,
    /// The `PF_*` flags; see [`TaskInfo::is_kernel_thread`].
    pub flags: Option<u32>,
    /// The nice value (-20..=19); `None` under any policy but `SCHED_OTHER`
    /// and `SCHED_BATCH` (`SCHED_FIFO`, `SCHED_RR`, `SCHED_IDLE`,
    /// `SCHED_DEADLINE`), where `ps` shows `-`.
    pub nice: Option<i32>,
    /// The number of threads of the task's thread group.
    pub num_threads: Option<u32>,
}

/// `ppid` as a plain number: [`Pid`]'s own serde form rejects 0, which is
/// a valid ppid.
#[cfg(feature = "serde")]
mod raw_pid {
    use crate::pid::Pid;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub(super) fn serialize<S: Serializer>(p: &Option<Pid>, s: S) -> Result<S::Ok, S::Error> {
        p.map(Pid::as_raw).serialize(s)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Pid>, D::Error> {
        Ok(Option::<i32>::deserialize(d)?.map(Pid::from_raw))
    }
}

impl TaskInfo {
    /// A record with only the tid: every other field `None`.
    pub const fn new(tid: Pid) -> TaskInfo {
        TaskInfo {
            tid,
            tgid: None,
            ppid: None,
            state: None,
            utime: None,
            stime: None,
            start_time: None,
            rss_pages: None,
            comm: None,
            ruid: None,
            euid: None,
            flags: None,
            nice: None,
            num_threads: None,
        }
    }

    /// A kernel record, keeping the fields its `mask` says are filled and
    /// `wanted` asked for.
    pub(crate) fn from_record(r: &sys::PidmapInfo, wanted: InfoFields) -> TaskInfo {
        let has = InfoFields::from_mask(r.mask).intersection(wanted);
        let when = |field: InfoFields| has.contains(field);
        let ns = Duration::from_nanos;
        TaskInfo {
            tid: Pid::from_raw(r.tid),
            tgid: when(InfoFields::TGID).then(|| Pid::from_raw(r.tgid)),
            ppid: when(InfoFields::PPID).then(|| Pid::from_raw(r.ppid)),
            state: when(InfoFields::STATE).then(|| TaskState::from_letter(r.state)),
            utime: when(InfoFields::CPU_TIME).then(|| ns(r.utime_ns)),
            stime: when(InfoFields::CPU_TIME).then(|| ns(r.stime_ns)),
            start_time: when(InfoFields::START_TIME).then(|| ns(r.start_time_ns)),
            rss_pages: when(InfoFields::RSS).then_some(r.rss_pages),
            comm: when(InfoFields::COMM).then(|| Comm::from_padded(&r.comm)),
            ruid: when(InfoFields::UIDS).then_some(r.ruid),
            euid: when(InfoFields::UIDS).then_some(r.euid),
            flags: when(InfoFields::FLAGS).then_some(r.flags),
            nice: when(InfoFields::NICE).then_some(r.nice),
            num_threads: when(InfoFields::NUM_THREADS).then_some(r.num_threads),
        }
    }

    /// Whether it is a kernel thread (`PF_KTHREAD`), when the flags are
    /// known.
    pub fn is_kernel_thread(&self) -> Option<bool> {
        let kthread = libc::PF_KTHREAD.unsigned_abs();
        self.flags.map(|f| f & kthread != 0)
    }

    /// User plus system CPU time, when known.
    pub fn cpu_time(&self) -> Option<Duration> {
        Some(self.utime? + self.stime?)
    }

    /// The resident set size in bytes (pages times the page size).
    pub fn rss_bytes(&self) -> Option<u64> {
        let page = u64::try_from(rustix::param::page_size()).unwrap_or(4096);
        self.rss_pages.map(|p| p.saturating_mul(page))
    }

    /// The fields that are set (besides the tid).
    pub fn fields(&self) -> InfoFields {
        let mut f = InfoFields::NONE;
        let mut add = |set: bool, field| {
            if set {
                f |= field;
            }
        };
        add(self.tgid.is_some(), InfoFields::TGID);
        add(self.ppid.is_some(), InfoFields::PPID);
        add(self.state.is_some(), InfoFields::STATE);
        add(
            self.utime.is_some() && self.stime.is_some(),
            InfoFields::CPU_TIME,
        );
        add(self.start_time.is_some(), InfoFields::START_TIME);
        add(self.rss_pages.is_some(), InfoFields::RSS);
        add(self.comm.is_some(), InfoFields::COMM);
        add(self.ruid.is_some() && self.euid.is_some(), InfoFields::UIDS);
        add(self.flags.is_some(), InfoFields::FLAGS);
        add(self.nice.is_some(), InfoFields::NICE);
        add(self.num_threads.is_some(), InfoFields::NUM_THREADS);
        f
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_keeps_what_its_mask_and_the_request_say() {
        let mut r = sys::PidmapInfo {
            mask: sys::PIDMAP_INFO_PPID
                | sys::PIDMAP_INFO_COMM
                | sys::PIDMAP_INFO_CPUTIME
                | 1 << 40,
            tid: 42,
            ppid: 7,
            utime_ns: 1_500,
            stime_ns: 2_500,
            nice: -5,
            ..sys::PidmapInfo::default()
        };
        r.comm[..3].copy_from_slice(b"abc");
        let all = TaskInfo::from_record(&r, InfoFields::ALL);
        assert_eq!(all.tid, Pid::from_raw(42));
        assert_eq!(all.ppid, Some(Pid::from_raw(7)));
        assert_eq!(
            all.comm.map(|c| c.as_bytes().to_vec()),
            Some(b"abc".to_vec())
        );
        assert_eq!(all.cpu_time(), Some(Duration::from_nanos(4_000)));
        // Not in the mask: unset, even though the kernel's field is -5.
        assert_eq!(all.nice, None);
        assert_eq!(
            all.fields(),
            InfoFields::PPID | InfoFields::COMM | InfoFields::CPU_TIME
        );
        // Not asked for: unset, even though the mask says filled.
        let some = TaskInfo::from_record(&r, InfoFields::PPID);
        assert_eq!(
            (some.ppid, some.comm, some.utime),
            (Some(Pid::from_raw(7)), None, None)
        );
        assert_eq!(format!("{:?}", some.fields()), "{PPID}");
    }

    #[test]
    fn comm_is_cut_at_the_first_nul_or_its_length() {
        assert_eq!(Comm::from_padded(&[b'x'; 16]).as_bytes(), &[b'x'; 16]);
        let mut f = [0u8; 16];
        f[..2].copy_from_slice(b"\xffa");
        assert_eq!(Comm::from_padded(&f).as_bytes(), b"\xffa");
        assert_eq!(
            Comm::new(b"kworker/u8:0-ext4-rsv-conversion").as_bytes(),
            b"kworker/u8:0-ext4-rsv-conversion"
        );
        assert_eq!(Comm::new(&[b'y'; 80]).as_bytes(), &[b'y'; Comm::MAX_LEN]);
        assert_eq!(Comm::new(b"ab\0cd").as_bytes(), b"ab");
    }

    #[test]
    fn kernel_threads_by_flag() {
        let mut t = TaskInfo::new(Pid::from_raw(2));
        assert_eq!(t.is_kernel_thread(), None);
        t.flags = Some(0x0020_8040);
        assert_eq!(t.is_kernel_thread(), Some(true));
        t.flags = Some(0x0040_0100);
        assert_eq!(t.is_kernel_thread(), Some(false));
    }
}

#[cfg(all(test, feature = "serde"))]
mod serde_tests {
    use super::*;

    #[test]
    fn task_info_round_trips_through_json() {
        let mut t = TaskInfo::new(Pid::from_raw(42));
        t.ppid = Some(Pid::from_raw(0));
        t.state = Some(TaskState::Other(b'K'));
        t.comm = Some(Comm::new(b"rcu_exp_gp_kthread_worker"));
        t.utime = Some(Duration::from_millis(1230));
        t.rss_pages = Some(432);
        let json = serde_json::to_string(&t).unwrap();
        assert!(
            json.contains(r#""comm":"rcu_exp_gp_kthread_worker""#),
            "{json}"
        );
        assert!(json.contains(r#""ppid":0"#), "{json}");
        let back: TaskInfo = serde_json::from_str(&json).unwrap();
        assert_eq!(back, t);
        let long = json.replace("rcu_exp_gp_kthread_worker", &"x".repeat(64));
        assert!(serde_json::from_str::<TaskInfo>(&long).is_err());
    }
}
