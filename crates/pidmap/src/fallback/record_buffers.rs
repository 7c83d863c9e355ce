//! [`RecordBuffers`]: what the /proc task records keep from call to call,
//! held by the [`Fallback`](super::Fallback) reader.

use std::collections::HashMap;

use super::group_refresh::GroupScratch;
use super::kept::KeptFiles;
use super::listed::TaskRef;

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
