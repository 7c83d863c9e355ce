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

/// A task's name (`comm`): at most 15 bytes (16 from a kernel that fills
/// its whole field), any byte but NUL, stored inline (no allocation per
/// record).
///
/// The /proc fallback reads it from `stat`, where a workqueue worker's
/// name carries a `-desc`/`+desc` suffix (`kworker/1:0-events`, cut to 15
/// bytes); the kernel's record has the task's own name only.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Comm {
    bytes: [u8; 16],
    len: u8,
}

impl Comm {
    /// The NUL-padded kernel field, up to its first NUL.
    pub(crate) fn from_padded(field: &[u8; 16]) -> Comm {
        let len = field.iter().position(|&b| b == 0).unwrap_or(field.len());
        Comm::cut(&field[..len], field.len())
    }

    /// A name as `/proc/PID/stat` shows it, cut to the 15 bytes a task
    /// name has at most (a workqueue worker's name there carries a
    /// `-desc` or `+desc` suffix, which the kernel's record leaves out).
    #[cfg_attr(not(any(test, feature = "fallback")), allow(dead_code))]
    pub(crate) fn from_bytes(name: &[u8]) -> Comm {
        Comm::cut(name, 15)
    }

    /// The first `max` (at most 16) bytes of `name`.
    fn cut(name: &[u8], max: usize) -> Comm {
        let mut bytes = [0u8; 16];
        let len = name.len().min(max).min(bytes.len());
        bytes[..len].copy_from_slice(&name[..len]);
        Comm {
            bytes,
            len: u8::try_from(len).expect("at most 16"),
        }
    }

    /// The raw bytes (not necessarily UTF-8).
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
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

/// One task's record: what `/proc/TID/stat` and `status` show for it.
///
/// A field is `None` when it was not asked for, or when the kernel (or the
/// view) did not fill it — a `hidepid=noaccess` view gives records with
/// only the tid. Times are the task's own, never a sum over its thread
/// group.
///
/// **Precision.** The syscall backend gets the CPU and start times in
/// nanoseconds; the /proc fallback reads them from `stat` in clock ticks
/// (`sysconf(_SC_CLK_TCK)`, usually 100 per second), so there they are
/// multiples of 10 ms, rounded down.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct TaskInfo {
    /// The task id (always set): the record's cursor.
    pub tid: Pid,
    /// The thread group (process) id.
    pub tgid: Option<Pid>,
    /// The parent's thread-group id (0 for pid 1 and kthreadd).
    pub ppid: Option<i32>,
    /// The state letter: one of `RSDTtXZPI`.
    pub state: Option<u8>,
    /// User CPU time of this task.
    pub utime: Option<Duration>,
    /// System CPU time of this task.
    pub stime: Option<Duration>,
    /// When the task started, since boot (in the caller's time namespace).
    pub start_time: Option<Duration>,
    /// Resident set size in pages (0 for a task without memory, such as a
    /// kernel thread); see [`TaskInfo::rss_bytes`].
    pub rss_pages: Option<u64>,
    /// The task's name.
    pub comm: Option<Comm>,
    /// Real user id, in the caller's user namespace.
    pub ruid: Option<u32>,
    /// Effective user id.
    pub euid: Option<u32>,
    /// The `PF_*` flags; see [`TaskInfo::is_kernel_thread`].
    pub flags: Option<u32>,
    /// The nice value (-20..=19).
    pub nice: Option<i32>,
    /// The number of threads of the task's thread group.
    pub num_threads: Option<u32>,
}

impl TaskInfo {
    /// A record with only the tid.
    #[cfg_attr(not(any(test, feature = "fallback")), allow(dead_code))]
    pub(crate) fn empty(tid: Pid) -> TaskInfo {
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
            ppid: when(InfoFields::PPID).then_some(r.ppid),
            state: when(InfoFields::STATE).then_some(r.state),
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
        assert_eq!(all.ppid, Some(7));
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
        assert_eq!((some.ppid, some.comm, some.utime), (Some(7), None, None));
        assert_eq!(format!("{:?}", some.fields()), "{PPID}");
    }

    #[test]
    fn comm_is_cut_at_the_first_nul_or_its_length() {
        assert_eq!(Comm::from_padded(&[b'x'; 16]).as_bytes(), &[b'x'; 16]);
        let mut f = [0u8; 16];
        f[..2].copy_from_slice(b"\xffa");
        assert_eq!(Comm::from_padded(&f).as_bytes(), b"\xffa");
        assert_eq!(
            Comm::from_bytes(b"kworker/0:1-events").as_bytes(),
            b"kworker/0:1-eve"
        );
    }

    #[test]
    fn kernel_threads_by_flag() {
        let mut t = TaskInfo::empty(Pid::from_raw(2));
        assert_eq!(t.is_kernel_thread(), None);
        t.flags = Some(0x0020_8040);
        assert_eq!(t.is_kernel_thread(), Some(true));
        t.flags = Some(0x0040_0100);
        assert_eq!(t.is_kernel_thread(), Some(false));
    }
}
