//! The `--long` rows of task listings, from the crate's task records
//! (pidmap(2) with `PIDMAP_INFO`, or /proc): the ids and their columns are
//! one snapshot. Without records (no /proc and no `PIDMAP_INFO`), every id
//! still gets its row, with unknown columns.

use pidmap::{ActiveBackend, Error as PmError, InfoFields, Pidmap, Query, TaskInfo};

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
        Ok(()) => Ok(TaskRows {
            info_backend: pm.info_backend().ok(),
            rows: infos.into_iter().map(row).collect(),
        }),
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
    }
}
