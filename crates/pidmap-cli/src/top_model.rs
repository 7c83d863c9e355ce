//! What the interactive `pidmap top` shows, without a terminal: the rows
//! of one refresh (CPU % from the previous sample, told apart by start
//! time), the filters, the sort order and the task counts by state.

use std::collections::HashMap;
use std::time::Duration;

use pidmap::{Pid, TaskInfo};

use crate::output::escape;

/// A sortable column, in the order the table shows them (`<` and `>`
/// move along it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortKey {
    Pid,
    Cpu,
    Mem,
    Time,
}

impl SortKey {
    const ORDER: [SortKey; 4] = [SortKey::Pid, SortKey::Cpu, SortKey::Mem, SortKey::Time];

    /// The column heading the key sorts by.
    pub fn heading(self) -> &'static str {
        match self {
            SortKey::Pid => "PID",
            SortKey::Cpu => "%CPU",
            SortKey::Mem => "%MEM",
            SortKey::Time => "TIME+",
        }
    }

    /// The key of procps top's letter: `P` cpu, `M` mem, `T` time, `N` pid.
    pub fn from_letter(c: char) -> Option<SortKey> {
        match c {
            'P' => Some(SortKey::Cpu),
            'M' => Some(SortKey::Mem),
            'T' => Some(SortKey::Time),
            'N' => Some(SortKey::Pid),
            _ => None,
        }
    }

    /// The next sortable column to the left (`-1`) or right (`+1`).
    pub fn moved(self, right: bool) -> SortKey {
        let i = Self::ORDER.iter().position(|k| *k == self).unwrap_or(0);
        let j = if right {
            (i + 1).min(Self::ORDER.len() - 1)
        } else {
            i.saturating_sub(1)
        };
        Self::ORDER[j]
    }
}

/// How rows are ordered: PID ascending, the others largest first (as top
/// does); `reversed` flips it (top's `R`). Ties go by id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Order {
    pub key: SortKey,
    pub reversed: bool,
}

/// Which tasks to show: `-p` (a task is kept when its process or its
/// own id is listed) and `-u` (effective uid, as top's `-u`).
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub pids: Vec<Pid>,
    pub euid: Option<u32>,
}

impl Filter {
    pub fn keeps(&self, info: &TaskInfo) -> bool {
        let pid_ok = self.pids.is_empty()
            || self
                .pids
                .iter()
                .any(|p| *p == info.tid || Some(*p) == info.tgid);
        let user_ok = self.euid.is_none_or(|u| info.euid == Some(u));
        pid_ok && user_ok
    }
}

/// The state letter of a record (`?` when unknown).
pub fn state_letter(info: &TaskInfo) -> char {
    info.state.map_or('?', char::from)
}

/// One row of the table.
#[derive(Debug, Clone, PartialEq)]
pub struct TopRow {
    pub id: i32,
    pub euid: Option<u32>,
    pub nice: Option<i32>,
    /// Whether the nice value applies (the policy is SCHED_OTHER or
    /// SCHED_BATCH); `None` when the policy is unknown.
    pub nice_applies: Option<bool>,
    pub state: char,
    pub rss_kib: Option<u64>,
    /// Percent of one CPU over the interval, as top's Irix mode.
    pub cpu: f64,
    pub mem: f64,
    pub time: Option<Duration>,
    pub comm: String,
}

/// Each task's CPU time at a sample, keyed by id and start time, so that
/// a reused id is a new task.
#[derive(Debug, Default)]
pub struct Sample(HashMap<(i32, Option<Duration>), Duration>);

impl Sample {
    pub fn of(infos: &[TaskInfo]) -> Sample {
        Sample(
            infos
                .iter()
                .filter_map(|i| Some(((i.tid.as_raw(), i.start_time), i.cpu_time()?)))
                .collect(),
        )
    }

    /// CPU time used since this sample: all of it for a task that is new
    /// since then; none at all against an empty sample (there was no
    /// earlier refresh to compare with).
    fn used(&self, info: &TaskInfo) -> Duration {
        let now = info.cpu_time().unwrap_or_default();
        match self.0.get(&(info.tid.as_raw(), info.start_time)) {
            Some(before) => now.saturating_sub(*before),
            None if self.0.is_empty() => Duration::ZERO,
            None => now,
        }
    }
}

/// The rows of `infos` that `filter` keeps, CPU % against `prev` over
/// `elapsed`, memory % of `mem_total_kib`, in `order`.
pub fn rows(
    infos: &[TaskInfo],
    prev: &Sample,
    elapsed: Duration,
    mem_total_kib: u64,
    filter: &Filter,
    order: Order,
) -> Vec<TopRow> {
    let secs = elapsed.as_secs_f64();
    let mut rows: Vec<TopRow> = infos
        .iter()
        .filter(|i| filter.keeps(i))
        .map(|i| {
            let rss_kib = i.rss_bytes().map(|b| b / 1024);
            let cpu = if secs > 0.0 {
                prev.used(i).as_secs_f64() * 100.0 / secs
            } else {
                0.0
            };
            let mem = match (rss_kib, mem_total_kib) {
                (Some(r), t) if t > 0 => r as f64 * 100.0 / t as f64,
                _ => 0.0,
            };
            TopRow {
                id: i.tid.as_raw(),
                euid: i.euid,
                // ps and top show no nice value where it does not apply.
                nice: i.nice.filter(|_| i.nice_applies() != Some(false)),
                nice_applies: i.nice_applies(),
                state: state_letter(i),
                rss_kib,
                cpu,
                mem,
                time: i.cpu_time(),
                comm: i.comm.map_or_else(|| "?".into(), |c| escape(c.as_bytes())),
            }
        })
        .collect();
    sort(&mut rows, order);
    rows
}

/// Sort rows in place.
pub fn sort(rows: &mut [TopRow], order: Order) {
    rows.sort_by(|a, b| {
        let by_key = match order.key {
            SortKey::Pid => a.id.cmp(&b.id),
            SortKey::Cpu => b.cpu.total_cmp(&a.cpu),
            SortKey::Mem => b.rss_kib.cmp(&a.rss_kib),
            SortKey::Time => b.time.cmp(&a.time),
        };
        let by_key = if order.reversed {
            by_key.reverse()
        } else {
            by_key
        };
        by_key.then(a.id.cmp(&b.id))
    });
}

/// Tasks by state as top's `Tasks:` line counts them: D and I count as
/// sleeping, t (traced) as stopped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StateCounts {
    pub total: usize,
    pub running: usize,
    pub sleeping: usize,
    pub stopped: usize,
    pub zombie: usize,
}

impl StateCounts {
    pub fn of(rows: &[TopRow]) -> StateCounts {
        let mut c = StateCounts {
            total: rows.len(),
            ..StateCounts::default()
        };
        for r in rows {
            match r.state {
                'R' => c.running += 1,
                'S' | 'D' | 'I' => c.sleeping += 1,
                'T' | 't' => c.stopped += 1,
                'Z' => c.zombie += 1,
                _ => {}
            }
        }
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: i32, cpu: f64, rss: u64, secs: u64, state: char) -> TopRow {
        TopRow {
            id,
            euid: Some(0),
            nice: Some(0),
            nice_applies: Some(true),
            state,
            rss_kib: Some(rss),
            cpu,
            mem: 0.0,
            time: Some(Duration::from_secs(secs)),
            comm: format!("t{id}"),
        }
    }

    fn ids(rows: &[TopRow]) -> Vec<i32> {
        rows.iter().map(|r| r.id).collect()
    }

    #[test]
    fn sort_keys() {
        let mut rows = vec![
            row(30, 1.0, 500, 9, 'S'),
            row(10, 5.0, 100, 1, 'R'),
            row(20, 5.0, 900, 3, 'Z'),
        ];
        let order = |key, reversed| Order { key, reversed };
        sort(&mut rows, order(SortKey::Pid, false));
        assert_eq!(ids(&rows), [10, 20, 30]);
        // Equal CPU: by id.
        sort(&mut rows, order(SortKey::Cpu, false));
        assert_eq!(ids(&rows), [10, 20, 30]);
        sort(&mut rows, order(SortKey::Mem, false));
        assert_eq!(ids(&rows), [20, 30, 10]);
        sort(&mut rows, order(SortKey::Time, false));
        assert_eq!(ids(&rows), [30, 20, 10]);
        sort(&mut rows, order(SortKey::Pid, true));
        assert_eq!(ids(&rows), [30, 20, 10]);
    }

    #[test]
    fn sort_letters_and_moves() {
        assert_eq!(SortKey::from_letter('N'), Some(SortKey::Pid));
        assert_eq!(SortKey::from_letter('P'), Some(SortKey::Cpu));
        assert_eq!(SortKey::from_letter('M'), Some(SortKey::Mem));
        assert_eq!(SortKey::from_letter('T'), Some(SortKey::Time));
        assert_eq!(SortKey::from_letter('x'), None);
        assert_eq!(SortKey::Pid.moved(false), SortKey::Pid);
        assert_eq!(SortKey::Pid.moved(true), SortKey::Cpu);
        assert_eq!(SortKey::Time.moved(true), SortKey::Time);
        assert_eq!(SortKey::Time.moved(false), SortKey::Mem);
    }

    #[test]
    fn state_counts() {
        let rows = [
            row(1, 0.0, 0, 0, 'R'),
            row(2, 0.0, 0, 0, 'S'),
            row(3, 0.0, 0, 0, 'D'),
            row(4, 0.0, 0, 0, 'I'),
            row(5, 0.0, 0, 0, 'T'),
            row(6, 0.0, 0, 0, 't'),
            row(7, 0.0, 0, 0, 'Z'),
            row(8, 0.0, 0, 0, '?'),
        ];
        assert_eq!(
            StateCounts::of(&rows),
            StateCounts {
                total: 8,
                running: 1,
                sleeping: 3,
                stopped: 2,
                zombie: 1
            }
        );
    }
}
