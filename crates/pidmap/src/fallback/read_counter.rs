//! Test-only counts of the task files the records read on this thread,
//! kept by [`TaskFiles::read`](super::task_files::TaskFiles::read) and
//! checked by the records' tests.

use std::cell::Cell;

thread_local! {
    /// Files `read_once` opened on this thread.
    static FILES_READ: Cell<usize> = const { Cell::new(0) };
    /// Of them, the `status` files and the `statm` files.
    static STATUS_READ: Cell<usize> = const { Cell::new(0) };
    static STATM_READ: Cell<usize> = const { Cell::new(0) };
}

/// Count a read of `path` (below the proc root).
pub(super) fn count_read(path: &[u8]) {
    let bump = |c: &Cell<usize>| c.set(c.get() + 1);
    FILES_READ.with(bump);
    if path.ends_with(b"/status") {
        STATUS_READ.with(bump);
    } else if path.ends_with(b"/statm") {
        STATM_READ.with(bump);
    }
}

/// Files read so far on this thread.
pub(super) fn files_read() -> usize {
    FILES_READ.with(Cell::get)
}

/// `(status, statm)` files read so far on this thread.
pub(super) fn status_statm_read() -> (usize, usize) {
    (STATUS_READ.with(Cell::get), STATM_READ.with(Cell::get))
}
