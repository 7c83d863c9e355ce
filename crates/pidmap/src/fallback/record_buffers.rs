//! [`RecordBuffers`]: what the /proc task records keep from call to call,
//! held by the [`Fallback`](super::Fallback) reader.

use std::collections::HashMap;

use super::kept::{FileKey, KeptFd, KeptFiles};
use super::listed::TaskRef;
use crate::info::TaskInfo;

/// The buffers the records reuse from call to call.
#[derive(Debug, Default)]
pub(crate) struct RecordBuffers {
    pub(super) tasks: Vec<TaskRef>,
    pub(super) file: Vec<u8>,
    /// Within one task-mode call without the uids: the resident set
    /// (pages) of each thread group already read. The threads of a group
    /// share one mm, so its `statm` is read once per group, not once per
    /// thread.
    pub(super) group_rss: HashMap<i32, u64>,
    /// The files full refreshes of process rows and of task rows keep
    /// open for the next.
    pub(super) kept_for_processes: KeptFiles,
    pub(super) kept_for_tasks: KeptFiles,
    /// What a refresh of every task, group by group, reuses.
    pub(super) groups: GroupScratch,
}

impl RecordBuffers {
    /// Close the files the records keep; whether there was any.
    pub(super) fn release_kept_files(&mut self) -> bool {
        let released = [
            self.kept_for_processes.release_all(),
            self.kept_for_tasks.release_all(),
        ];
        released.contains(&true)
    }
}

/// What a refresh by groups reuses from call to call.
#[derive(Debug, Default)]
pub(crate) struct GroupScratch {
    /// The records, in group order.
    pub(super) recs: Vec<TaskInfo>,
    /// The tids of the group being read: listed, denied.
    pub(super) listed: Vec<i32>,
    pub(super) denied: Vec<i32>,
    /// A group's files and keys, taken back for another pass over it.
    pub(super) held: Vec<(FileKey, Option<KeptFd>)>,
    /// The tid and the index in `recs` of each record, as one sort key
    /// (the tid in the high half), to hand the records out in tid order.
    order: Vec<u64>,
}

impl GroupScratch {
    /// The records into `out` in tid order, but those of tasks found gone
    /// after their `stat` was read (tid 0).
    pub(super) fn hand_out(&mut self, out: &mut Vec<TaskInfo>) {
        // A tid is positive: as a u64 it orders as it does as an i32.
        let key = |tid: i32, i: usize| (u64::from(tid.unsigned_abs()) << 32) | i as u64;
        self.order.clear();
        self.order.extend(
            self.recs
                .iter()
                .enumerate()
                .filter(|(_, r)| r.tid.as_raw() > 0)
                .map(|(i, r)| key(r.tid.as_raw(), i)),
        );
        if !self.order.windows(2).all(|w| w[0] >> 32 < w[1] >> 32) {
            self.order.sort_unstable();
            // Strictly ascending, as every listing: a tid read twice (it
            // cannot be in two groups, but the output never shows one
            // twice whatever /proc did) is handed out once.
            self.order.dedup_by_key(|k| *k >> 32);
        }
        out.reserve(self.order.len());
        out.extend(
            self.order
                .iter()
                .map(|&k| self.recs[(k & u64::from(u32::MAX)) as usize]),
        );
    }
}
