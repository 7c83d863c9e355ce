//! Task records: [`TaskInfo`], and the [`InfoFields`] a caller asks for.
//!
//! The syscall backend gets them from pidmap_info(2) (`struct
//! pidmap_info`); the /proc fallback fills the same struct from
//! `/proc/TGID/task/TID/stat` (and `statm`, or `status` for the uids and
//! the context switches), with the same values: the kernel's nanoseconds
//! and bytes are converted to `stat`'s clock ticks and pages exactly as
//! /proc converts them.

use std::fmt;
use std::ops::{BitOr, BitOrAssign};
use std::sync::OnceLock;
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
    /// [`TaskInfo::tgid`] (`PIDMAP_INFO_ID`, which the kernel fills
    /// always, with [`TaskInfo::pidfs_id`]).
    pub const TGID: InfoFields = InfoFields(sys::PIDMAP_INFO_ID);
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
    pub const UIDS: InfoFields = InfoFields(sys::PIDMAP_INFO_CREDS);
    /// [`TaskInfo::flags`] ([`TaskFlags`]).
    pub const FLAGS: InfoFields = InfoFields(sys::PIDMAP_INFO_TASK_FLAGS);
    /// [`TaskInfo::nice`], [`TaskInfo::priority`] and
    /// [`TaskInfo::policy`] (`PIDMAP_INFO_SCHED`); the same bit as
    /// [`InfoFields::SCHED`].
    pub const NICE: InfoFields = InfoFields(sys::PIDMAP_INFO_SCHED);
    /// The scheduling fields: the same bit as [`InfoFields::NICE`].
    pub const SCHED: InfoFields = InfoFields(sys::PIDMAP_INFO_SCHED);
    /// [`TaskInfo::num_threads`].
    pub const NUM_THREADS: InfoFields = InfoFields(sys::PIDMAP_INFO_NUM_THREADS);
    /// [`TaskInfo::min_flt`] and [`TaskInfo::maj_flt`] (`stat` fields 10
    /// and 12).
    pub const FAULTS: InfoFields = InfoFields(sys::PIDMAP_INFO_FAULTS);
    /// [`TaskInfo::nvcsw`] and [`TaskInfo::nivcsw`] (the fallback reads
    /// `status` for them).
    pub const CTX_SWITCHES: InfoFields = InfoFields(sys::PIDMAP_INFO_CTXSW);
    /// Every field above.
    pub const ALL: InfoFields = InfoFields(sys::PIDMAP_INFO_FIELDS);

    /// Whether every field of `other` is in `self`.
    #[must_use]
    pub const fn contains(self, other: InfoFields) -> bool {
        self.0 & other.0 == other.0
    }

    /// Whether no field is in the set.
    #[must_use]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The fields of either set (`|` in a `const`).
    #[must_use]
    pub const fn union(self, other: InfoFields) -> InfoFields {
        InfoFields(self.0 | other.0)
    }

    /// The fields of both sets.
    #[must_use]
    pub const fn intersection(self, other: InfoFields) -> InfoFields {
        InfoFields(self.0 & other.0)
    }

    /// The fields of this set that are not in `other`.
    ///
    /// ```
    /// use pidmap::InfoFields;
    /// let f = InfoFields::PPID | InfoFields::COMM;
    /// assert_eq!(f.difference(InfoFields::PPID), InfoFields::COMM);
    /// ```
    #[must_use]
    pub const fn difference(self, other: InfoFields) -> InfoFields {
        InfoFields(self.0 & !other.0)
    }

    /// Whether the /proc fallback reads `status` for these fields: the
    /// uids and the context switches are only there.
    #[cfg_attr(not(feature = "fallback"), allow(dead_code))]
    pub(crate) const fn reads_status(self) -> bool {
        self.0 & (sys::PIDMAP_INFO_CREDS | sys::PIDMAP_INFO_CTXSW) != 0
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
        const NAMES: [(InfoFields, &str); 13] = [
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
            (InfoFields::FAULTS, "FAULTS"),
            (InfoFields::CTX_SWITCHES, "CTX_SWITCHES"),
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
/// longer (`rcu_exp_gp_kthread_worker`): both backends give the name
/// `stat` shows, the full name (and a workqueue worker's `-desc`/`+desc`
/// suffix, `kworker/u8:0-ext4-rsv-conversion`), as `ps` does.
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
    #[must_use]
    pub fn new(name: &[u8]) -> Comm {
        let len = name.iter().position(|&b| b == 0).unwrap_or(name.len());
        Comm::cut(&name[..len], Comm::MAX_LEN)
    }

    /// The NUL-padded kernel field, up to its first NUL, read a word at a
    /// time: a record's name costs a few instructions per 8 bytes, not a
    /// search and a copy of variable length per name.
    #[inline]
    pub(crate) fn from_padded(field: &[u8; 64]) -> Comm {
        // In `(w - 0x01..) & !w & 0x80..` the lowest flagged byte is the
        // word's first zero byte (a byte above it may be flagged too, as
        // the borrow runs upwards; none below it).
        const LOW: u64 = 0x0101_0101_0101_0101;
        const HIGH: u64 = 0x8080_8080_8080_8080;
        let mut name = [0u8; 64];
        let mut len = field.len();
        for (i, (word, out)) in field
            .chunks_exact(8)
            .zip(name.chunks_exact_mut(8))
            .enumerate()
        {
            let mut b = [0u8; 8];
            b.copy_from_slice(word);
            let w = u64::from_le_bytes(b);
            let zero = w.wrapping_sub(LOW) & !w & HIGH;
            if zero != 0 {
                // The bytes before the NUL, in the word's low bytes.
                let before = zero.trailing_zeros() / 8;
                let keep = u64::MAX.checked_shr(64 - 8 * before).unwrap_or(0);
                out.copy_from_slice(&(w & keep).to_le_bytes());
                len = i * 8 + usize::try_from(before).unwrap_or(0);
                break;
            }
            out.copy_from_slice(word);
        }
        let mut bytes = [0u8; Comm::MAX_LEN];
        bytes.copy_from_slice(&name[..Comm::MAX_LEN]);
        Comm {
            bytes,
            len: u8::try_from(len.min(Comm::MAX_LEN)).unwrap_or(u8::MAX),
        }
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
    #[must_use]
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

/// Serialized as its letter, a one-character string.
#[cfg(feature = "serde")]
impl serde::Serialize for TaskState {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let letter = [self.letter()];
        s.serialize_str(&String::from_utf8_lossy(&letter))
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for TaskState {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<TaskState, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        match s.as_bytes() {
            [b] if b.is_ascii_graphic() => Ok(TaskState::from_letter(*b)),
            _ => Err(serde::de::Error::custom(
                "a task state is one ASCII letter, as stat shows it",
            )),
        }
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
///
/// With `serde`, a state is its letter as a one-character string
/// (`"R"`, `"S"`), as in the `pidmap` CLI's JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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
    #[must_use]
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
    #[must_use]
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

/// A task's flags (`PIDMAP_TASK_*`): the few of the kernel's internal
/// `PF_*` bits the ABI names, with bits of their own. The /proc fallback
/// maps `stat` field 9 (`PF_*`) to the same bits, so both backends agree.
///
/// ```
/// use pidmap::TaskFlags;
/// let f = TaskFlags::KTHREAD | TaskFlags::EXITING;
/// assert!(f.contains(TaskFlags::KTHREAD) && !f.contains(TaskFlags::FORKNOEXEC));
/// assert_eq!(TaskFlags::from_bits_retain(f.bits()), f);
/// assert_eq!(format!("{f:?}"), "{KTHREAD, EXITING}");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(transparent))]
pub struct TaskFlags(u32);

impl TaskFlags {
    /// No flag.
    pub const NONE: TaskFlags = TaskFlags(0);
    /// A kernel thread (`PF_KTHREAD`).
    pub const KTHREAD: TaskFlags = TaskFlags(sys::PIDMAP_TASK_KTHREAD);
    /// A kernel worker of a user task, such as io_uring's (`PF_USER_WORKER`).
    pub const USER_WORKER: TaskFlags = TaskFlags(sys::PIDMAP_TASK_USER_WORKER);
    /// Exiting (`PF_EXITING`).
    pub const EXITING: TaskFlags = TaskFlags(sys::PIDMAP_TASK_EXITING);
    /// Forked but did not exec (`PF_FORKNOEXEC`).
    pub const FORKNOEXEC: TaskFlags = TaskFlags(sys::PIDMAP_TASK_FORKNOEXEC);
    /// Every flag above.
    pub const ALL: TaskFlags = TaskFlags(sys::PIDMAP_TASK_FLAGS);

    /// The `PIDMAP_TASK_*` bits.
    #[must_use]
    pub const fn bits(self) -> u32 {
        self.0
    }

    /// Flags from `PIDMAP_TASK_*` bits, unknown ones kept.
    #[must_use]
    pub const fn from_bits_retain(bits: u32) -> TaskFlags {
        TaskFlags(bits)
    }

    /// Whether every flag of `other` is set.
    #[must_use]
    pub const fn contains(self, other: TaskFlags) -> bool {
        self.0 & other.0 == other.0
    }

    /// The flags of the kernel's `PF_*` bits (`stat` field 9).
    #[must_use]
    pub fn from_pf_flags(pf: u64) -> TaskFlags {
        // include/linux/sched.h; libc has the same values.
        const PAIRS: [(u64, u32); 4] = [
            (0x0020_0000, sys::PIDMAP_TASK_KTHREAD),
            (0x0000_4000, sys::PIDMAP_TASK_USER_WORKER),
            (0x0000_0004, sys::PIDMAP_TASK_EXITING),
            (0x0000_0040, sys::PIDMAP_TASK_FORKNOEXEC),
        ];
        TaskFlags(
            PAIRS
                .iter()
                .filter(|(pf_bit, _)| pf & pf_bit != 0)
                .fold(0, |acc, (_, bit)| acc | bit),
        )
    }
}

impl BitOr for TaskFlags {
    type Output = TaskFlags;
    fn bitor(self, rhs: TaskFlags) -> TaskFlags {
        TaskFlags(self.0 | rhs.0)
    }
}

impl fmt::Debug for TaskFlags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const NAMES: [(TaskFlags, &str); 4] = [
            (TaskFlags::KTHREAD, "KTHREAD"),
            (TaskFlags::USER_WORKER, "USER_WORKER"),
            (TaskFlags::EXITING, "EXITING"),
            (TaskFlags::FORKNOEXEC, "FORKNOEXEC"),
        ];
        let mut set = f.debug_set();
        for (flag, name) in NAMES {
            if self.contains(flag) {
                set.entry(&format_args!("{name}"));
            }
        }
        let unknown = self.0 & !TaskFlags::ALL.0;
        if unknown != 0 {
            set.entry(&format_args!("{unknown:#x}"));
        }
        set.finish()
    }
}

/// Clock ticks (`USER_HZ`, `sysconf(_SC_CLK_TCK)`) as a duration: the one
/// conversion both backends use, so their times are equal.
pub(crate) fn ticks(n: u64) -> Duration {
    if let Some(nanos) = nanos_per_tick().and_then(|t| n.checked_mul(t)) {
        return Duration::from_nanos(nanos);
    }
    let hz = clock_ticks_per_second();
    Duration::from_secs(n / hz) + Duration::from_nanos((n % hz) * NANOS_PER_SEC / hz)
}

const NANOS_PER_SEC: u64 = 1_000_000_000;

/// A kernel record's nanoseconds in clock ticks, as /proc converts them
/// for `stat` (`nsec_to_clock_t()`: rounded down, exact where `USER_HZ`
/// divides a second, and `ns * USER_HZ / NSEC_PER_SEC` elsewhere), so
/// that the ticks are `stat`'s. The reference the tests hold
/// `RecordUnits::whole_ticks()` to.
#[cfg(test)]
pub(crate) fn ns_to_ticks(ns: u64) -> u64 {
    match nanos_per_tick() {
        Some(t) => ns / t,
        None => {
            let t =
                u128::from(ns) * u128::from(clock_ticks_per_second()) / u128::from(NANOS_PER_SEC);
            u64::try_from(t).unwrap_or(u64::MAX)
        }
    }
}

/// The page size in bytes: `VmRSS` and `statm` count pages of it.
pub(crate) fn page_size() -> u64 {
    RecordUnits::get().page
}

fn clock_ticks_per_second() -> u64 {
    RecordUnits::get().hz
}

/// A tick in nanoseconds where `USER_HZ` divides a second (100 on every
/// architecture but Alpha's 1024), worked out once: then a conversion,
/// which a monitor makes three times per task, is one multiplication.
fn nanos_per_tick() -> Option<u64> {
    let t = RecordUnits::get().nanos_per_tick;
    (t != 0).then_some(t)
}

/// The units a kernel record is converted with (the clock tick, the
/// page), read from the kernel once per process: converting a record then
/// reads no `OnceLock` and calls nothing per field.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RecordUnits {
    /// `USER_HZ`, at least 1.
    hz: u64,
    /// A tick in nanoseconds where `USER_HZ` divides a second, else 0.
    nanos_per_tick: u64,
    /// The page size in bytes, at least 1.
    page: u64,
    /// Its log2 where it is a power of two (every Linux page size), else
    /// `u32::MAX`.
    page_shift: u32,
}

impl RecordUnits {
    /// This process's units, read once.
    pub(crate) fn get() -> RecordUnits {
        static UNITS: OnceLock<RecordUnits> = OnceLock::new();
        *UNITS.get_or_init(|| {
            let page = u64::try_from(rustix::param::page_size())
                .unwrap_or(4096)
                .max(1);
            RecordUnits::new(rustix::param::clock_ticks_per_second(), page)
        })
    }

    fn new(hz: u64, page: u64) -> RecordUnits {
        let hz = hz.max(1);
        let page = page.max(1);
        RecordUnits {
            hz,
            nanos_per_tick: if NANOS_PER_SEC % hz == 0 {
                NANOS_PER_SEC / hz
            } else {
                0
            },
            page,
            page_shift: if page.is_power_of_two() {
                page.trailing_zeros()
            } else {
                u32::MAX
            },
        }
    }

    /// A record's nanoseconds as the duration of the whole clock ticks
    /// `stat` shows for them: `ticks(ns_to_ticks(ns))`, with one division.
    #[inline(always)]
    pub(crate) fn whole_ticks(self, ns: u64) -> Duration {
        match ns.checked_div(self.nanos_per_tick) {
            // ns / t * t <= ns: no overflow.
            Some(whole) => Duration::from_nanos(whole * self.nanos_per_tick),
            // As `ns_to_ticks()` and `ticks()` where USER_HZ does not
            // divide a second.
            None => {
                let n = u128::from(ns) * u128::from(self.hz) / u128::from(NANOS_PER_SEC);
                let n = u64::try_from(n).unwrap_or(u64::MAX);
                Duration::from_secs(n / self.hz)
                    + Duration::from_nanos((n % self.hz) * NANOS_PER_SEC / self.hz)
            }
        }
    }

    /// A record's bytes in whole pages.
    #[inline]
    pub(crate) fn pages(self, bytes: u64) -> u64 {
        if self.page_shift != u32::MAX {
            return bytes >> self.page_shift;
        }
        bytes / self.page
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
/// fallback reads exactly those files.)
///
/// **Units.** Both backends give the CPU and start times in clock ticks
/// (`USER_HZ`, `sysconf(_SC_CLK_TCK)`, usually 100 per second), as `stat`
/// does, and convert them the same way: they are multiples of 10 ms,
/// rounded down, and equal from either backend. pidmap_info(2) reports
/// nanoseconds and bytes; the syscall backend divides them exactly as
/// /proc does (`nsec_to_clock_t()`, pages from bytes), so the values are
/// the ones `ps` prints.
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
    #[cfg_attr(
        feature = "serde",
        serde(rename = "utime_ns", with = "crate::serde_forms::option_nanos")
    )]
    pub utime: Option<Duration>,
    /// System CPU time, summed as [`TaskInfo::utime`] is.
    #[cfg_attr(
        feature = "serde",
        serde(rename = "stime_ns", with = "crate::serde_forms::option_nanos")
    )]
    pub stime: Option<Duration>,
    /// When the task started, since boot (in the caller's time namespace).
    #[cfg_attr(
        feature = "serde",
        serde(rename = "start_time_ns", with = "crate::serde_forms::option_nanos")
    )]
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
    /// The task flags ([`TaskFlags`]); see [`TaskInfo::is_kernel_thread`].
    pub flags: Option<TaskFlags>,
    /// The nice value (-20..=19, `stat` field 19). It applies only under
    /// `SCHED_OTHER` and `SCHED_BATCH`: see [`TaskInfo::nice_applies`]
    /// (`ps` shows `-` under the other policies).
    pub nice: Option<i32>,
    /// The priority as `stat` field 18 shows it.
    pub priority: Option<i32>,
    /// The scheduling policy (`SCHED_*`, `stat` field 41).
    pub policy: Option<u32>,
    /// The number of threads of the task's thread group.
    pub num_threads: Option<u32>,
    /// Minor page faults (`stat` field 10): the thread group's total,
    /// threads that have exited included, in a process listing; the
    /// thread's own in a task listing.
    pub min_flt: Option<u64>,
    /// Major page faults (`stat` field 12), summed as
    /// [`TaskInfo::min_flt`] is.
    pub maj_flt: Option<u64>,
    /// Voluntary context switches (`status`'s `voluntary_ctxt_switches`):
    /// the task's own; a process record's are its leader's, as
    /// `/proc/PID/status` shows them.
    pub nvcsw: Option<u64>,
    /// Involuntary context switches (`nonvoluntary_ctxt_switches`), as
    /// [`TaskInfo::nvcsw`].
    pub nivcsw: Option<u64>,
    /// The pidfs id of the task's `struct pid`, never reused while the
    /// system runs: the inode number (`st_ino`) of a pidfd of this task
    /// (`pidfd_open(tid, PIDFD_THREAD` if it is not the thread-group
    /// leader`)`), so a pidfd opened after the listing can be checked to
    /// name this very task. Given by the syscall backend with every record
    /// (`PIDMAP_INFO_ID`); always `None` from the /proc fallback, which
    /// would need a pidfd per task to learn it.
    pub pidfs_id: Option<u64>,
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
    #[must_use]
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
            priority: None,
            policy: None,
            num_threads: None,
            min_flt: None,
            maj_flt: None,
            nvcsw: None,
            nivcsw: None,
            pidfs_id: None,
        }
    }

    /// A kernel record, keeping the fields its `mask` says are filled and
    /// `wanted` asked for: a field whose bit is not in the record's mask
    /// (a kernel that does not know it) is `None`.
    pub(crate) fn from_record(r: &sys::PidmapInfo, wanted: InfoFields) -> TaskInfo {
        TaskInfo::from_record_in(r, wanted, RecordUnits::get())
    }

    /// [`TaskInfo::from_record`] with the units read once per listing: a
    /// listing converts every record with the same ones.
    #[inline(always)]
    pub(crate) fn from_record_in(
        r: &sys::PidmapInfo,
        wanted: InfoFields,
        units: RecordUnits,
    ) -> TaskInfo {
        let mut t = TaskInfo::new(Pid::from_raw(r.tid()));
        t.set_from_record(r, wanted, units);
        t
    }

    /// Append the record of every one of `records` to `out`, with the
    /// fields both asked for and filled. Each is made in its place in
    /// `out` (every field `None`, then those fields set), not built
    /// aside and copied there: a `TaskInfo` is 288 bytes, and its copy
    /// cost more than an id-only record's fields.
    #[inline]
    pub(crate) fn extend_from_records(
        out: &mut Vec<TaskInfo>,
        records: &[sys::PidmapInfo],
        wanted: InfoFields,
        units: RecordUnits,
    ) {
        out.reserve(records.len());
        for r in records {
            out.push(TaskInfo::new(Pid::from_raw(r.tid())));
            if let Some(t) = out.last_mut() {
                t.set_from_record(r, wanted, units);
            }
        }
    }

    /// Set, on a record whose fields are all `None`, those of `r` both
    /// asked for and filled: one test per field, and work only for those.
    #[inline(always)]
    fn set_from_record(&mut self, r: &sys::PidmapInfo, wanted: InfoFields, units: RecordUnits) {
        let has = InfoFields::from_mask(r.mask).intersection(wanted).bits();
        let when = |bit: u64| has & bit != 0;
        if r.mask & sys::PIDMAP_INFO_ID != 0 && r.pidfs_id != 0 {
            self.pidfs_id = Some(r.pidfs_id);
        }
        if when(sys::PIDMAP_INFO_ID) {
            self.tgid = Some(Pid::from_raw(r.tgid()));
        }
        if when(sys::PIDMAP_INFO_PPID) {
            self.ppid = Some(Pid::from_raw(r.ppid()));
        }
        if when(sys::PIDMAP_INFO_STATE) {
            self.state = Some(TaskState::from_letter(r.state));
        }
        if when(sys::PIDMAP_INFO_CPUTIME) {
            self.utime = Some(units.whole_ticks(r.utime_ns));
            self.stime = Some(units.whole_ticks(r.stime_ns));
        }
        if when(sys::PIDMAP_INFO_START_TIME) {
            self.start_time = Some(units.whole_ticks(r.start_time_ns));
        }
        if when(sys::PIDMAP_INFO_RSS) {
            self.rss_pages = Some(units.pages(r.rss_bytes));
        }
        if when(sys::PIDMAP_INFO_COMM) {
            self.comm = Some(Comm::from_padded(&r.comm));
        }
        if when(sys::PIDMAP_INFO_CREDS) {
            self.ruid = Some(r.ruid);
            self.euid = Some(r.euid);
        }
        if when(sys::PIDMAP_INFO_TASK_FLAGS) {
            self.flags = Some(TaskFlags(r.task_flags));
        }
        if when(sys::PIDMAP_INFO_SCHED) {
            self.nice = Some(r.nice);
            self.priority = Some(r.priority);
            self.policy = Some(r.policy);
        }
        if when(sys::PIDMAP_INFO_NUM_THREADS) {
            self.num_threads = Some(r.num_threads);
        }
        if when(sys::PIDMAP_INFO_FAULTS) {
            self.min_flt = Some(r.min_flt);
            self.maj_flt = Some(r.maj_flt);
        }
        if when(sys::PIDMAP_INFO_CTXSW) {
            self.nvcsw = Some(r.nvcsw);
            self.nivcsw = Some(r.nivcsw);
        }
    }

    /// Whether it is a kernel thread ([`TaskFlags::KTHREAD`]), when the
    /// flags are known.
    #[must_use]
    pub fn is_kernel_thread(&self) -> Option<bool> {
        self.flags.map(|f| f.contains(TaskFlags::KTHREAD))
    }

    /// Whether the nice value means something: the policy is
    /// `SCHED_OTHER` or `SCHED_BATCH`, the only ones `ps` shows a nice
    /// value for (`-` under `SCHED_FIFO`, `SCHED_RR`, `SCHED_IDLE` and
    /// `SCHED_DEADLINE`); `None` when the policy is not known.
    #[must_use]
    pub fn nice_applies(&self) -> Option<bool> {
        self.policy.map(|p| {
            i32::try_from(p).is_ok_and(|p| p == libc::SCHED_OTHER || p == libc::SCHED_BATCH)
        })
    }

    /// The parent process: `None` when the record has no parent in the
    /// view (pid 1, kthreadd, a namespace's init, whose
    /// [`TaskInfo::ppid`] is 0) or when the ppid was not read.
    ///
    /// ```
    /// use pidmap::{Pid, TaskInfo};
    /// let mut t = TaskInfo::new(Pid::new(1).unwrap());
    /// assert_eq!(t.parent(), None);
    /// t.ppid = Some(Pid::from_raw(0));
    /// assert_eq!(t.parent(), None);
    /// t.ppid = Some(Pid::from_raw(42));
    /// assert_eq!(t.parent(), Pid::new(42));
    /// ```
    #[must_use]
    pub fn parent(&self) -> Option<Pid> {
        self.ppid.and_then(|p| Pid::new(p.as_raw()))
    }

    /// User plus system CPU time, when known.
    #[must_use]
    pub fn cpu_time(&self) -> Option<Duration> {
        Some(self.utime? + self.stime?)
    }

    /// The resident set size in bytes (pages times the page size).
    #[must_use]
    pub fn rss_bytes(&self) -> Option<u64> {
        self.rss_pages.map(|p| p.saturating_mul(page_size()))
    }

    /// The fields that are set (besides the tid).
    #[must_use]
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
        add(
            self.nice.is_some() && self.priority.is_some() && self.policy.is_some(),
            InfoFields::SCHED,
        );
        add(self.num_threads.is_some(), InfoFields::NUM_THREADS);
        add(
            self.min_flt.is_some() && self.maj_flt.is_some(),
            InfoFields::FAULTS,
        );
        add(
            self.nvcsw.is_some() && self.nivcsw.is_some(),
            InfoFields::CTX_SWITCHES,
        );
        f
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ALL` (the uapi's bits, checked against the header in `sys`) is
    /// every field and every flag this crate names.
    #[test]
    fn all_is_every_named_field_and_flag() {
        let fields = [
            InfoFields::TGID,
            InfoFields::PPID,
            InfoFields::STATE,
            InfoFields::CPU_TIME,
            InfoFields::START_TIME,
            InfoFields::RSS,
            InfoFields::COMM,
            InfoFields::UIDS,
            InfoFields::FLAGS,
            InfoFields::NICE,
            InfoFields::SCHED,
            InfoFields::NUM_THREADS,
            InfoFields::FAULTS,
            InfoFields::CTX_SWITCHES,
        ];
        let named = fields.into_iter().fold(InfoFields::NONE, InfoFields::union);
        assert_eq!(named, InfoFields::ALL);
        let flags = [
            TaskFlags::KTHREAD,
            TaskFlags::USER_WORKER,
            TaskFlags::EXITING,
            TaskFlags::FORKNOEXEC,
        ];
        let named = flags.into_iter().fold(0, |all, f| all | f.bits());
        assert_eq!(named, TaskFlags::ALL.bits());
    }

    #[test]
    fn a_record_keeps_what_its_mask_and_the_request_say() {
        let hz = rustix::param::clock_ticks_per_second();
        let mut r = sys::PidmapInfo {
            mask: sys::PIDMAP_INFO_ID
                | sys::PIDMAP_INFO_PPID
                | sys::PIDMAP_INFO_COMM
                | sys::PIDMAP_INFO_CPUTIME
                | 1 << 40,
            pidfs_id: 9_000_001,
            tid: 42,
            tgid: 40,
            ppid: 7,
            // Nanoseconds: 3 s and a bit, 2 ticks and a bit.
            utime_ns: 3_000_000_123,
            stime_ns: 2 * 1_000_000_000 / hz + 999,
            rss_bytes: 5 * page_size(),
            min_flt: 11,
            maj_flt: 2,
            nvcsw: 300,
            nivcsw: 4,
            nice: -5,
            policy: 1,
            ..sys::PidmapInfo::default()
        };
        r.comm[..3].copy_from_slice(b"abc");
        let all = TaskInfo::from_record(&r, InfoFields::ALL);
        assert_eq!(all.tid, Pid::from_raw(42));
        assert_eq!(all.tgid, Some(Pid::from_raw(40)));
        assert_eq!(all.pidfs_id, Some(9_000_001));
        assert_eq!(all.ppid, Some(Pid::from_raw(7)));
        assert_eq!(
            all.comm.map(|c| c.as_bytes().to_vec()),
            Some(b"abc".to_vec())
        );
        // Nanoseconds to stat's clock ticks, rounded down as /proc does;
        // then converted as the fallback converts stat's.
        assert_eq!(all.utime, Some(Duration::from_secs(3)));
        assert_eq!(all.stime, Some(ticks(2)));
        assert_eq!(all.cpu_time(), Some(Duration::from_secs(3) + ticks(2)));
        // Not in the mask: unset, even though the kernel's fields are set.
        assert_eq!((all.nice, all.policy), (None, None));
        assert_eq!((all.rss_pages, all.min_flt, all.nvcsw), (None, None, None));
        assert_eq!(all.nice_applies(), None);
        assert_eq!(
            all.fields(),
            InfoFields::TGID | InfoFields::PPID | InfoFields::COMM | InfoFields::CPU_TIME
        );
        // Not asked for: unset, even though the mask says filled.
        let some = TaskInfo::from_record(&r, InfoFields::PPID);
        assert_eq!(
            (some.ppid, some.comm, some.utime, some.tgid),
            (Some(Pid::from_raw(7)), None, None, None)
        );
        assert_eq!(format!("{:?}", some.fields()), "{PPID}");
        // The scheduling fields come together.
        r.mask |= sys::PIDMAP_INFO_SCHED;
        r.priority = 20;
        let sched = TaskInfo::from_record(&r, InfoFields::SCHED);
        assert_eq!(
            (sched.nice, sched.priority, sched.policy),
            (Some(-5), Some(20), Some(1))
        );
        // SCHED_FIFO: ps shows "-".
        assert_eq!(sched.nice_applies(), Some(false));
        r.policy = 3;
        assert_eq!(
            TaskInfo::from_record(&r, InfoFields::SCHED).nice_applies(),
            Some(true)
        );
        // Bytes to pages; the counters as they are.
        r.mask |= sys::PIDMAP_INFO_RSS | sys::PIDMAP_INFO_FAULTS | sys::PIDMAP_INFO_CTXSW;
        let counters = TaskInfo::from_record(&r, InfoFields::ALL);
        assert_eq!(counters.rss_pages, Some(5));
        assert_eq!(counters.rss_bytes(), Some(5 * page_size()));
        assert_eq!((counters.min_flt, counters.maj_flt), (Some(11), Some(2)));
        assert_eq!((counters.nvcsw, counters.nivcsw), (Some(300), Some(4)));
        assert!(counters
            .fields()
            .contains(InfoFields::FAULTS | InfoFields::CTX_SWITCHES | InfoFields::RSS));
        let only = TaskInfo::from_record(&r, InfoFields::FAULTS);
        assert_eq!((only.min_flt, only.nvcsw), (Some(11), None));
        // Without the ID bit (no kernel does that), no pidfs id.
        r.mask &= !sys::PIDMAP_INFO_ID;
        assert_eq!(TaskInfo::from_record(&r, InfoFields::ALL).pidfs_id, None);
    }

    #[test]
    fn nanoseconds_become_stat_ticks_as_proc_divides_them() {
        let hz = rustix::param::clock_ticks_per_second();
        let tick = 1_000_000_000 / hz;
        assert_eq!(ns_to_ticks(0), 0);
        assert_eq!(ns_to_ticks(tick - 1), 0);
        assert_eq!(ns_to_ticks(tick), 1);
        assert_eq!(ns_to_ticks(7 * tick + tick / 2), 7);
        assert_eq!(ns_to_ticks(u64::MAX), u64::MAX / tick);
    }

    #[test]
    fn ticks_convert_exactly() {
        let hz = rustix::param::clock_ticks_per_second();
        assert_eq!(ticks(0), Duration::ZERO);
        assert_eq!(ticks(hz), Duration::from_secs(1));
        assert_eq!(ticks(hz * 7 + 1) - ticks(hz * 7), ticks(1));
        assert_eq!(ticks(1).as_nanos(), 1_000_000_000 / u128::from(hz));
        // Beyond u64 nanoseconds: the division path, still exact.
        let big = u64::MAX / hz * hz;
        assert_eq!(ticks(big), Duration::from_secs(big / hz));
        assert_eq!(ticks(big + 1) - ticks(big), ticks(1));
    }

    #[test]
    fn a_padded_name_ends_at_its_first_nul_wherever_it_is() {
        for end in 0..=64 {
            // Bytes of every value, 0x80 and 0xff included, and whatever
            // follows the NUL (which is not part of the name).
            let mut field = [0u8; 64];
            for (i, b) in field.iter_mut().enumerate() {
                *b = [b'a', 0x80, 0xff, 0x01, b'~'][i % 5];
            }
            if end < 64 {
                field[end] = 0;
            }
            let c = Comm::from_padded(&field);
            assert_eq!(
                c.as_bytes(),
                &field[..end.min(Comm::MAX_LEN)],
                "NUL at {end}"
            );
            assert_eq!(c, Comm::new(&field), "NUL at {end}: as Comm::new");
        }
    }

    #[test]
    fn record_units_convert_as_the_tick_and_page_functions() {
        let units = RecordUnits::get();
        for ns in [0, 1, 9_999_999, 10_000_000, 3_000_000_123, u64::MAX] {
            assert_eq!(units.whole_ticks(ns), ticks(ns_to_ticks(ns)), "{ns} ns");
        }
        for bytes in [0, 1, 4095, 4096, 5 * page_size() + 1, u64::MAX] {
            assert_eq!(units.pages(bytes), bytes / page_size(), "{bytes} bytes");
        }
        // USER_HZ that does not divide a second (Alpha's 1024), a page
        // size that is not a power of two: the general paths.
        let odd = RecordUnits::new(1024, 3000);
        assert_eq!(odd.pages(9001), 3);
        assert_eq!(odd.whole_ticks(1_000_000_000), Duration::from_secs(1));
        // 1.5 s is 1,536 ticks of 1/1024 s; a nanosecond less, 1,535.
        assert_eq!(odd.whole_ticks(1_500_000_000), Duration::from_millis(1500));
        assert_eq!(
            odd.whole_ticks(1_499_999_999),
            Duration::from_secs(1) + Duration::from_nanos(511 * NANOS_PER_SEC / 1024)
        );
        let hz = rustix::param::clock_ticks_per_second();
        if NANOS_PER_SEC % hz == 0 {
            let tick = NANOS_PER_SEC / hz;
            assert_eq!(
                units.whole_ticks(7 * tick + tick - 1),
                Duration::from_nanos(7 * tick)
            );
        }
    }

    #[test]
    fn comm_is_cut_at_the_first_nul_or_its_length() {
        assert_eq!(Comm::from_padded(&[b'x'; 64]).as_bytes(), &[b'x'; 63]);
        let mut f = [0u8; 64];
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
        t.flags = Some(TaskFlags::from_pf_flags(0x0020_8040));
        assert_eq!(t.is_kernel_thread(), Some(true));
        assert_eq!(t.flags, Some(TaskFlags::KTHREAD | TaskFlags::FORKNOEXEC));
        t.flags = Some(TaskFlags::from_pf_flags(0x0040_4104));
        assert_eq!(t.is_kernel_thread(), Some(false));
        assert_eq!(t.flags, Some(TaskFlags::USER_WORKER | TaskFlags::EXITING));
        // The PF_* values are the kernel's, which libc also has.
        let pf = |v: i32| u64::from(v.unsigned_abs());
        assert_eq!(
            TaskFlags::from_pf_flags(
                pf(libc::PF_KTHREAD)
                    | pf(libc::PF_USER_WORKER)
                    | pf(libc::PF_EXITING)
                    | pf(libc::PF_FORKNOEXEC)
            ),
            TaskFlags::ALL
        );
        assert_eq!(
            format!("{:?}", TaskFlags::from_bits_retain(1 << 9)),
            "{0x200}"
        );
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
        t.flags = Some(TaskFlags::KTHREAD);
        t.pidfs_id = Some(77);
        let json = serde_json::to_string(&t).unwrap();
        assert!(
            json.contains(r#""comm":"rcu_exp_gp_kthread_worker""#),
            "{json}"
        );
        // The CLI's forms: a state letter, durations in nanoseconds.
        assert!(json.contains(r#""state":"K""#), "{json}");
        assert!(json.contains(r#""utime_ns":1230000000"#), "{json}");
        assert!(json.contains(r#""stime_ns":null"#), "{json}");
        t.state = Some(TaskState::Running);
        let json = serde_json::to_string(&t).unwrap();
        assert!(json.contains(r#""state":"R""#), "{json}");
        assert!(serde_json::from_str::<TaskState>(r#""RS""#).is_err());
        assert!(json.contains(r#""ppid":0"#), "{json}");
        assert!(json.contains(r#""flags":1"#), "{json}");
        let back: TaskInfo = serde_json::from_str(&json).unwrap();
        assert_eq!(back, t);
        let json = serde_json::to_string(&t).unwrap();
        let long = json.replace("rcu_exp_gp_kthread_worker", &"x".repeat(64));
        assert!(serde_json::from_str::<TaskInfo>(&long).is_err());
    }
}
