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
    /// The thread groups whose `task` directory a refresh by groups
    /// listed.
    static LISTED_GROUPS: std::cell::RefCell<Vec<i32>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Count a listing of group `tgid`'s `task` directory.
pub(super) fn count_listing(tgid: i32) {
    LISTED_GROUPS.with(|l| l.borrow_mut().push(tgid));
}

/// How many times group `tgid`'s `task` directory was listed so far on
/// this thread.
pub(super) fn listings_of(tgid: i32) -> usize {
    LISTED_GROUPS.with(|l| l.borrow().iter().filter(|&&t| t == tgid).count())
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
