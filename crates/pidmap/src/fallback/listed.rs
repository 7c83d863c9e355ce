//! [`Listed`]: what a listing of the fallback collects per id.

use crate::raw_id::RawId;

/// What a listing collects per id: the id alone ([`RawId`]), or, for the
/// task records, the id with its thread group ([`TaskRef`]).
pub(crate) trait Listed: Ord + Copy {
    /// Whether the listing must find out the thread group (a threads
    /// listing then reads the target's `status` once).
    const NEEDS_TGID: bool;
    fn listed(id: i32, tgid: i32) -> Self;
    fn listed_id(&self) -> i32;
}

impl<T: RawId> Listed for T {
    const NEEDS_TGID: bool = false;
    fn listed(id: i32, _tgid: i32) -> Self {
        T::from_raw_id(id)
    }
    fn listed_id(&self) -> i32 {
        self.raw_id()
    }
}

/// A listed task and its thread group: where its files are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct TaskRef {
    pub(super) tid: i32,
    pub(super) tgid: i32,
}

impl Listed for TaskRef {
    const NEEDS_TGID: bool = true;
    fn listed(id: i32, tgid: i32) -> Self {
        TaskRef { tid: id, tgid }
    }
    fn listed_id(&self) -> i32 {
        self.tid
    }
}
