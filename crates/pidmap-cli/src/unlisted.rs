//! Never silent: a listing of every task leaves out the tasks of a
//! process whose `task` directory the view denies (a `hidepid=noaccess`
//! procfs, where `ls /proc` still shows the process), as pidmap(2)'s view
//! rules do. This finds those processes, so that the listing can say how
//! many it could not list instead of printing fewer tasks and exiting 0.

use std::collections::HashSet;

use pidmap::{Error as PmError, Pidmap, Query, Target};

/// Processes whose tasks a listing left out, and why (the first reason).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct LeftOut {
    pub groups: usize,
    pub of: usize,
    pub reason: Option<String>,
}

impl LeftOut {
    /// The warning line, or `None` when nothing was left out.
    pub fn warning(&self) -> Option<String> {
        (self.groups > 0).then(|| {
            format!(
                "the tasks of {} of {} processes could not be listed ({})",
                self.groups,
                self.of,
                self.reason.as_deref().unwrap_or("unknown reason")
            )
        })
    }
}

/// The processes of the view (`procs`, as listed now) that none of `tids`
/// belongs to: a process's leader is always among its tasks, so a
/// process whose id is not in `tids` was left out, unless it started or
/// exited since. Each candidate is asked for its threads: listed now (it
/// started after `tids` was read) or gone, it is not counted; refused
/// (or any other error), it is.
pub fn left_out(pm: &mut Pidmap, tids: &[i32]) -> Result<LeftOut, PmError> {
    let mut procs = Vec::new();
    pm.fill(Query::processes(), &mut procs)?;
    let seen: HashSet<i32> = tids.iter().copied().collect();
    let mut out = LeftOut {
        of: procs.len(),
        ..LeftOut::default()
    };
    let mut threads = Vec::new();
    for pid in procs.into_iter().filter(|p| !seen.contains(&p.as_raw())) {
        match pm.fill(Query::threads(Target::Pid(pid)), &mut threads) {
            Ok(()) | Err(PmError::NoSuchProcess { .. }) => {}
            Err(e) => {
                out.groups += 1;
                out.reason
                    .get_or_insert_with(|| crate::error::error_line(&anyhow::Error::new(e)));
            }
        }
    }
    Ok(out)
}
