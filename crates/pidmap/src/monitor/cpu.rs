//! CPU use between two refreshes, as `top` computes it: the growth of a
//! task's `utime + stime` over the wall time between the two samples, in
//! percent of one CPU (`top`'s default "Irix mode": a process using two
//! CPUs fully shows 200 %).
//!
//! A tid may be reused between refreshes, so a task is known by its
//! [`TaskKey`]: the tid *and* its start time. A reused tid is a new task.
//!
//! ```
//! use std::time::Duration;
//! use pidmap::{InfoFields, Pidmap, Query};
//! use pidmap::monitor::CpuSample;
//!
//! // A monitor refreshes every task in a loop: let the /proc fallback keep
//! // the task files open from one refresh to the next (see
//! // `Builder::keep_files`).
//! let mut pm = Pidmap::builder().keep_files(true).build()?;
//! let fields = InfoFields::TGID | InfoFields::CPU_TIME | InfoFields::START_TIME;
//! let mut records = Vec::new();
//! pm.fill_info(Query::all_tasks(), fields, &mut records)?;
//! let mut before = CpuSample::now(&records);
//! for _ in 0..2 {
//!     std::thread::sleep(Duration::from_millis(50));
//!     pm.fill_info(Query::all_tasks(), fields, &mut records)?;
//!     let now = CpuSample::now(&records);
//!     for t in now.tasks_since(&before) {
//!         if let Some(pct) = t.percent {
//!             assert!(pct >= 0.0);
//!         }
//!     }
//!     let per_process = now.processes_since(&before);
//!     assert!(per_process.contains_key(&pidmap::Pid::this_process()));
//!     before = now;
//! }
//! # Ok::<(), pidmap::Error>(())
//! ```

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use crate::info::TaskInfo;
use crate::pid::Pid;

/// A task across refreshes: its id and when it started (a reused tid has
/// a later start time, so it is another task).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct TaskKey {
    /// The task (or, in a process listing, process) id.
    pub tid: Pid,
    /// When it started, since boot ([`TaskInfo::start_time`]); serde:
    /// `start_time_ns`.
    #[cfg_attr(
        feature = "serde",
        serde(rename = "start_time_ns", with = "crate::serde_forms::nanos")
    )]
    pub start_time: Duration,
}

/// One task's CPU use between two samples.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct TaskCpu {
    /// Which task.
    pub key: TaskKey,
    /// Its thread group, when the records have it.
    pub tgid: Option<Pid>,
    /// CPU time used between the samples; serde: `used_ns`.
    #[cfg_attr(
        feature = "serde",
        serde(
            rename = "used_ns",
            serialize_with = "crate::serde_forms::nanos::serialize"
        )
    )]
    pub used: Duration,
    /// `used` over the wall time between the samples, in percent of one
    /// CPU. `None` when it cannot be known: the samples are not at least
    /// a nanosecond apart in the right order, or the task was not in the
    /// earlier sample although it had started by then (it was outside the
    /// earlier listing).
    pub percent: Option<f64>,
}

#[derive(Debug, Clone, Copy)]
struct Seen {
    cpu: Duration,
    tgid: Option<Pid>,
}

/// The CPU times of a refresh's records and when they were read.
///
/// Records without [`TaskInfo::utime`], [`TaskInfo::stime`] or
/// [`TaskInfo::start_time`] (not asked for, or denied by the view) are
/// left out. Ask for [`InfoFields::CPU_TIME`](crate::InfoFields::CPU_TIME)
/// and [`InfoFields::START_TIME`](crate::InfoFields::START_TIME), and
/// [`InfoFields::TGID`](crate::InfoFields::TGID) for
/// [`processes_since`](CpuSample::processes_since).
///
/// Process records ([`Query::processes`](crate::Query::processes)) carry
/// each process's group totals, so [`tasks_since`](CpuSample::tasks_since)
/// gives per-process figures directly, as `top` shows them; task records
/// ([`Query::all_tasks`](crate::Query::all_tasks)) give per-thread
/// figures, which [`processes_since`](CpuSample::processes_since) sums per
/// thread group (`top -H` and the sum of its rows).
#[derive(Debug, Clone, Default)]
pub struct CpuSample {
    at: Duration,
    tasks: HashMap<TaskKey, Seen>,
}

impl CpuSample {
    /// A sample of `records` read at `at`, a time since boot in the clock
    /// the start times use (`CLOCK_BOOTTIME`, as [`CpuSample::now`] reads
    /// it). For tests and replays; a monitor uses [`CpuSample::now`].
    ///
    /// ```
    /// use std::time::Duration;
    /// use pidmap::{Pid, TaskInfo};
    /// use pidmap::monitor::CpuSample;
    /// let record = |cpu_ms| {
    ///     let mut t = TaskInfo::new(Pid::new(7).unwrap());
    ///     t.start_time = Some(Duration::from_secs(5));
    ///     t.utime = Some(Duration::from_millis(cpu_ms));
    ///     t.stime = Some(Duration::ZERO);
    ///     t
    /// };
    /// let a = CpuSample::at(&[record(100)], Duration::from_secs(10));
    /// let b = CpuSample::at(&[record(600)], Duration::from_secs(11));
    /// let used = b.tasks_since(&a);
    /// assert_eq!(used[0].percent, Some(50.0));
    /// ```
    #[must_use]
    pub fn at(records: &[TaskInfo], at: Duration) -> CpuSample {
        let tasks = records
            .iter()
            .filter_map(|r| {
                let key = TaskKey {
                    tid: r.tid,
                    start_time: r.start_time?,
                };
                let seen = Seen {
                    cpu: r.cpu_time()?,
                    tgid: r.tgid,
                };
                Some((key, seen))
            })
            .collect();
        CpuSample { at, tasks }
    }

    /// A sample of `records`, read just now (`CLOCK_BOOTTIME`, the clock of
    /// [`TaskInfo::start_time`]).
    #[must_use]
    pub fn now(records: &[TaskInfo]) -> CpuSample {
        CpuSample::at(records, since_boot())
    }

    /// When the sample was taken, since boot.
    #[must_use]
    pub fn taken_at(&self) -> Duration {
        self.at
    }

    /// How many tasks it holds.
    #[must_use]
    pub fn len(&self) -> usize {
        self.tasks.len()
    }

    /// Whether it holds no task.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }

    /// The CPU use of each task of this sample since `earlier`, ordered by
    /// key. A task that started after `earlier` was taken used all its CPU
    /// time in between (as `top` counts it).
    #[must_use]
    pub fn tasks_since(&self, earlier: &CpuSample) -> Vec<TaskCpu> {
        let wall = self.at.checked_sub(earlier.at).filter(|w| !w.is_zero());
        let mut out: Vec<TaskCpu> = self
            .tasks
            .iter()
            .map(|(key, now)| {
                let used = match earlier.tasks.get(key) {
                    Some(then) => Some(now.cpu.saturating_sub(then.cpu)),
                    None if key.start_time >= earlier.at => Some(now.cpu),
                    None => None,
                };
                TaskCpu {
                    key: *key,
                    tgid: now.tgid,
                    used: used.unwrap_or_default(),
                    percent: used.zip(wall).map(|(u, w)| percent(u, w)),
                }
            })
            .collect();
        out.sort_by_key(|t| t.key);
        out
    }

    /// Each of `records` (the refresh this sample was taken of) beside
    /// its CPU use since `earlier`, in the records' order, so that a
    /// monitor shows the use with the record's other fields without
    /// joining by tid. `None` for a record the sample left out (no CPU or
    /// start time).
    ///
    /// ```
    /// use std::time::Duration;
    /// use pidmap::{Pid, TaskInfo};
    /// use pidmap::monitor::CpuSample;
    /// let record = |cpu_ms| {
    ///     let mut t = TaskInfo::new(Pid::new(7).unwrap());
    ///     t.start_time = Some(Duration::from_secs(5));
    ///     t.utime = Some(Duration::from_millis(cpu_ms));
    ///     t.stime = Some(Duration::ZERO);
    ///     t
    /// };
    /// let a = CpuSample::at(&[record(100)], Duration::from_secs(10));
    /// let now = [record(350), TaskInfo::new(Pid::new(8).unwrap())];
    /// let b = CpuSample::at(&now, Duration::from_secs(11));
    /// let joined: Vec<_> = b.records_since(&a, &now).collect();
    /// assert_eq!(joined[0].1.and_then(|c| c.percent), Some(25.0));
    /// assert!(joined[1].1.is_none());
    /// ```
    pub fn records_since<'r>(
        &self,
        earlier: &CpuSample,
        records: &'r [TaskInfo],
    ) -> impl Iterator<Item = (&'r TaskInfo, Option<TaskCpu>)> {
        let by_key: HashMap<TaskKey, TaskCpu> = self
            .tasks_since(earlier)
            .into_iter()
            .map(|t| (t.key, t))
            .collect();
        records.iter().map(move |r| {
            let cpu = r.start_time.and_then(|start_time| {
                by_key
                    .get(&TaskKey {
                        tid: r.tid,
                        start_time,
                    })
                    .copied()
            });
            (r, cpu)
        })
    }

    /// The CPU use since `earlier` summed per thread group (tasks without
    /// a tgid count as their own group), in percent of one CPU; tasks whose
    /// use is unknown (see [`TaskCpu::percent`]) add nothing.
    #[must_use]
    pub fn processes_since(&self, earlier: &CpuSample) -> BTreeMap<Pid, f64> {
        let mut out = BTreeMap::new();
        for t in self.tasks_since(earlier) {
            let group = out.entry(t.tgid.unwrap_or(t.key.tid)).or_insert(0.0);
            *group += t.percent.unwrap_or(0.0);
        }
        out
    }
}

/// `used / wall * 100`.
fn percent(used: Duration, wall: Duration) -> f64 {
    used.as_secs_f64() / wall.as_secs_f64() * 100.0
}

/// `CLOCK_BOOTTIME` as a duration.
fn since_boot() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Boottime);
    let secs = u64::try_from(t.tv_sec).unwrap_or(0);
    let nanos = u32::try_from(t.tv_nsec).unwrap_or(0);
    Duration::new(secs, nanos)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(tid: i32, tgid: i32, start_s: u64, user_ms: u64, sys_ms: u64) -> TaskInfo {
        let mut t = TaskInfo::new(Pid::from_raw(tid));
        t.tgid = Some(Pid::from_raw(tgid));
        t.start_time = Some(Duration::from_secs(start_s));
        t.utime = Some(Duration::from_millis(user_ms));
        t.stime = Some(Duration::from_millis(sys_ms));
        t
    }

    #[test]
    fn deltas_over_wall_time_keyed_by_tid_and_start() {
        let s = Duration::from_secs;
        let a = CpuSample::at(
            &[
                rec(10, 10, 1, 100, 100),
                rec(11, 10, 2, 0, 0),
                rec(20, 20, 3, 50, 0),
            ],
            s(100),
        );
        let b = CpuSample::at(
            &[
                // 10: 1 s of CPU over 2 s.
                rec(10, 10, 1, 900, 300),
                // 11: 0.5 s.
                rec(11, 10, 2, 250, 250),
                // 20 was reused (a later start): a new task, started after
                // sample a, so all its 0.2 s count.
                rec(20, 20, 101, 200, 0),
                // 30 started before sample a but was not in it: unknown.
                rec(30, 30, 50, 400, 0),
            ],
            s(102),
        );
        let got: Vec<(i32, Option<f64>)> = b
            .tasks_since(&a)
            .iter()
            .map(|t| (t.key.tid.as_raw(), t.percent))
            .collect();
        assert_eq!(
            got,
            [
                (10, Some(50.0)),
                (11, Some(25.0)),
                (20, Some(10.0)),
                (30, None)
            ]
        );
        let per = b.processes_since(&a);
        assert_eq!(per[&Pid::from_raw(10)], 75.0);
        assert_eq!(per[&Pid::from_raw(20)], 10.0);
        assert_eq!(per[&Pid::from_raw(30)], 0.0);
    }

    #[test]
    fn no_interval_or_missing_fields_never_panic() {
        let r = [rec(1, 1, 1, 10, 10)];
        let a = CpuSample::at(&r, Duration::from_secs(5));
        // Same time, and reversed order: no percent, no panic.
        assert!(a.tasks_since(&a).iter().all(|t| t.percent.is_none()));
        let earlier = CpuSample::at(&r, Duration::from_secs(9));
        assert!(a.tasks_since(&earlier).iter().all(|t| t.percent.is_none()));
        // Records without the times are left out.
        let bare = CpuSample::at(&[TaskInfo::new(Pid::from_raw(3))], Duration::ZERO);
        assert!(bare.is_empty());
    }

    #[test]
    fn now_is_the_clock_of_start_times() {
        // Our own start time (from /proc/self/stat, ticks) is before now.
        let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
        let rest = &stat[stat.rfind(')').unwrap() + 2..];
        let start_ticks: u64 = rest.split_whitespace().nth(19).unwrap().parse().unwrap();
        let hz = rustix::param::clock_ticks_per_second();
        let started = Duration::from_millis(start_ticks * 1000 / hz);
        let now = since_boot();
        assert!(started <= now, "{started:?} > {now:?}");
        // And the uptime of /proc/uptime agrees within a second.
        let up: f64 = std::fs::read_to_string("/proc/uptime")
            .unwrap()
            .split_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!((up - now.as_secs_f64()).abs() < 1.0, "{up} vs {now:?}");
    }
}
