//! The `--long` rows of task listings, from the crate's task records
//! (`pidmap_info(2)`, or /proc): the ids and their columns are
//! one snapshot. Without records (no /proc and no `pidmap_info(2)`), every id
//! still gets its row, with unknown columns.
//!
//! TIME follows `ps -L` (procps 4): a thread's row shows the thread's own
//! CPU time, but a thread-group leader's row shows its whole process's,
//! the process record's (as `/proc/PID/stat` has it: every thread's,
//! exited ones included), read right after the task records.

use std::collections::BTreeMap;
use std::time::Duration;

use pidmap::{ActiveBackend, Error as PmError, InfoFields, Listing, Pidmap, Query, TaskInfo};

use crate::columns::Status;

/// The fields `--long` shows.
pub const LONG_FIELDS: InfoFields = InfoFields::ALL;

/// One task's row.
#[derive(Debug, Clone)]
pub struct TaskRow {
    pub id: i32,
    /// `None` when the columns could not be read.
    pub info: Option<TaskInfo>,
    pub status: Status,
    /// With `--args`: the command line, or why it is missing.
    pub args: Option<Result<Vec<u8>, Status>>,
    /// A thread-group leader's row in a listing of tasks or threads: its
    /// process's CPU time, which TIME shows (`Some(None)`: the process
    /// record could not be read, it exited meanwhile). `None` elsewhere:
    /// TIME is the task's own.
    #[allow(
        clippy::option_option,
        reason = "the three cases above; `time()` is the one place that reads them"
    )]
    pub process_time: Option<Option<Duration>>,
}

impl TaskRow {
    /// What TIME shows, as `ps` (with `-L` for task listings) does.
    pub fn time(&self) -> Option<Duration> {
        match self.process_time {
            Some(t) => t,
            None => self.info.as_ref().and_then(TaskInfo::cpu_time),
        }
    }
}

/// The rows of a listing, and where their columns came from (`None`: they
/// could not be read).
#[derive(Debug)]
pub struct TaskRows {
    pub rows: Vec<TaskRow>,
    pub info_backend: Option<ActiveBackend>,
}

impl TaskRows {
    /// The ids, in order.
    pub fn ids(&self) -> Vec<i32> {
        self.rows.iter().map(|r| r.id).collect()
    }

    /// How many rows have unknown columns.
    pub fn unknown(&self) -> usize {
        self.rows
            .iter()
            .filter(|r| r.status == Status::Unknown)
            .count()
    }
}

/// The records of `q`. When /proc would be needed for them but is not
/// mounted, the ids alone (through the syscall, which needs no /proc),
/// each with unknown columns.
pub fn read(pm: &mut Pidmap, q: Query<'_>) -> Result<TaskRows, PmError> {
    let mut infos = Vec::new();
    match pm.fill_info(q, LONG_FIELDS, &mut infos) {
        Ok(()) => {
            let mut rows: Vec<TaskRow> = infos.into_iter().map(row).collect();
            if matches!(q.listing(), Listing::AllTasks | Listing::Threads) {
                leader_times(pm, &mut rows)?;
            }
            Ok(TaskRows {
                info_backend: pm.info_backend().ok(),
                rows,
            })
        }
        Err(PmError::ProcNotMounted(_)) => {
            let mut ids = Vec::new();
            pm.fill(q, &mut ids)?;
            Ok(TaskRows {
                info_backend: None,
                rows: ids
                    .into_iter()
                    .map(|id| TaskRow {
                        id: id.as_raw(),
                        info: None,
                        status: Status::Unknown,
                        args: None,
                        process_time: None,
                    })
                    .collect(),
            })
        }
        Err(e) => Err(e),
    }
}

/// A record as a row: a record with no field (a view that shows the task
/// but not its files) has unknown columns.
fn row(info: TaskInfo) -> TaskRow {
    let status = if info.fields().is_empty() {
        Status::Unknown
    } else {
        Status::Ok
    };
    TaskRow {
        id: info.tid.as_raw(),
        info: Some(info),
        status,
        args: None,
        process_time: None,
    }
}

/// Above this many leaders, one record of every process is read; else one
/// record per leader.
const FEW_LEADERS: usize = 8;

/// Give every thread-group leader's row (tid == tgid) its process's CPU
/// time, from process records (the listing's records are per task).
fn leader_times(pm: &mut Pidmap, rows: &mut [TaskRow]) -> Result<(), PmError> {
    let leaders: Vec<i32> = rows
        .iter()
        .filter_map(|r| {
            let i = r.info.as_ref()?;
            (i.tgid?.as_raw() == r.id).then_some(r.id)
        })
        .collect();
    if leaders.is_empty() {
        return Ok(());
    }
    let mut procs = Vec::new();
    let mut times = BTreeMap::new();
    if leaders.len() > FEW_LEADERS {
        pm.fill_info(Query::processes(), InfoFields::CPU_TIME, &mut procs)?;
        times.extend(procs.iter().map(|p| (p.tid.as_raw(), p.cpu_time())));
    } else {
        for &pid in &leaders {
            pm.read_info_chunk(Query::processes(), InfoFields::CPU_TIME, pid, 1, &mut procs)?;
            if let Some(p) = procs.first().filter(|p| p.tid.as_raw() == pid) {
                times.insert(pid, p.cpu_time());
            }
        }
    }
    apply_leader_times(rows, &times);
    Ok(())
}

/// Leaders' rows get the time of their process in `times` (`Some(None)`
/// when it is not there: exited meanwhile).
fn apply_leader_times(rows: &mut [TaskRow], times: &BTreeMap<i32, Option<Duration>>) {
    for r in rows {
        let leader = r
            .info
            .as_ref()
            .and_then(|i| i.tgid)
            .is_some_and(|g| g.as_raw() == r.id);
        if leader {
            r.process_time = Some(times.get(&r.id).copied().flatten());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pidmap::{Pid, Target};

    /// A record to edit: the crate builds them, so this is the calling
    /// thread's.
    #[allow(clippy::similar_names, reason = "tid and tgid are the kernel's names")]
    fn task(tid: i32, tgid: i32, cpu_ms: u64) -> TaskRow {
        let mut pm = Pidmap::new().unwrap();
        let mut v = Vec::new();
        pm.fill_info(Query::threads(Target::Caller), InfoFields::TGID, &mut v)
            .unwrap();
        let mut i = v[0];
        i.tid = Pid::from_raw(tid);
        i.tgid = Some(Pid::from_raw(tgid));
        i.utime = Some(Duration::from_millis(cpu_ms));
        i.stime = Some(Duration::ZERO);
        row(i)
    }

    #[test]
    fn a_leader_row_shows_its_process_time_a_thread_its_own() {
        let mut rows = vec![task(10, 10, 100), task(11, 10, 2000), task(20, 20, 5)];
        let times = BTreeMap::from([(10, Some(Duration::from_millis(3100)))]);
        apply_leader_times(&mut rows, &times);
        assert_eq!(rows[0].time(), Some(Duration::from_millis(3100)));
        assert_eq!(rows[1].time(), Some(Duration::from_secs(2)));
        // Process 20 exited between the two reads: unknown, not its own.
        assert_eq!(rows[2].process_time, Some(None));
        assert_eq!(rows[2].time(), None);
    }
}
