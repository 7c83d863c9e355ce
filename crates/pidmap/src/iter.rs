//! Iterators that batch internally.

use std::os::fd::RawFd;

use crate::error::{Error, Result};
use crate::{ActiveBackend, Enumeration, Pid, Pidmap, Query, RawId};

/// Ids fetched per syscall by the iterators.
pub const BATCH: usize = 256;

/// The shared engine behind [`Pids`] and [`Fds`].
#[derive(Debug)]
struct Ids<T: RawId> {
    pm: Pidmap,
    what: Enumeration,
    buf: Vec<T>,
    pos: usize,
    next_start: i32,
    done: bool,
}

impl<T: RawId> Ids<T> {
    fn new(pm: Pidmap, what: Enumeration) -> Self {
        Ids {
            pm,
            what,
            buf: Vec::new(),
            pos: 0,
            next_start: 0,
            done: false,
        }
    }

    fn refill(&mut self) -> Result<()> {
        match self.pm.active() {
            ActiveBackend::Syscall => {
                if self.buf.capacity() < BATCH {
                    self.buf.reserve_exact(BATCH);
                }
                self.buf.clear();
                self.buf.resize(BATCH, T::from_raw_id(0));
                let n = self
                    .pm
                    .chunk_raw(self.what, self.next_start, &mut self.buf)?;
                self.buf.truncate(n);
                match self.buf.last() {
                    Some(last) => {
                        let l = last.raw_id();
                        if l == i32::MAX {
                            self.done = true;
                        } else {
                            self.next_start = l + 1;
                        }
                    }
                    None => self.done = true,
                }
            }
            ActiveBackend::Procfs => {
                // /proc cannot resume from a cursor cheaply: take one sorted
                // snapshot (one directory pass) and yield from it.
                self.pm.fill_raw(self.what, &mut self.buf)?;
                self.done = true;
            }
        }
        self.pos = 0;
        Ok(())
    }

    fn next(&mut self) -> Option<Result<T>> {
        loop {
            if let Some(&id) = self.buf.get(self.pos) {
                self.pos += 1;
                return Some(Ok(id));
            }
            if self.done {
                return None;
            }
            if let Err(e) = self.refill() {
                self.done = true;
                self.buf.clear();
                return Some(Err(e));
            }
        }
    }
}

/// Iterator over process or thread ids, in strictly ascending order.
///
/// Created by [`Pidmap::iter`] or the free functions such as
/// [`processes`](crate::processes). Each item is a `Result`: an error ends
/// the iteration.
///
/// ```
/// for pid in pidmap::processes()? {
///     let pid = pid?;
///     assert!(pid.as_raw() > 0);
/// }
/// # Ok::<(), pidmap::Error>(())
/// ```
#[derive(Debug)]
pub struct Pids(Ids<Pid>);

impl Pids {
    pub(crate) fn new(pm: Pidmap, q: Query) -> Self {
        Pids(Ids::new(pm, Enumeration::Ids(q)))
    }

    /// Collect every id, stopping at the first error.
    ///
    /// ```
    /// let threads = pidmap::threads(pidmap::Pid::this_process())?.to_vec()?;
    /// assert!(!threads.is_empty());
    /// # Ok::<(), pidmap::Error>(())
    /// ```
    pub fn to_vec(self) -> Result<Vec<Pid>> {
        self.collect()
    }
}

impl Iterator for Pids {
    type Item = Result<Pid, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next()
    }
}

/// Iterator over the open file descriptors of a process, ascending.
///
/// ```
/// let fds = pidmap::fds(pidmap::Pid::this_process())?.to_vec()?;
/// assert!(fds.windows(2).all(|w| w[0] < w[1]));
/// # Ok::<(), pidmap::Error>(())
/// ```
#[derive(Debug)]
pub struct Fds(Ids<RawFd>);

impl Fds {
    pub(crate) fn new(pm: Pidmap, pid: Pid) -> Self {
        Fds(Ids::new(pm, Enumeration::Fds(pid)))
    }

    /// Collect every fd, stopping at the first error.
    pub fn to_vec(self) -> Result<Vec<RawFd>> {
        self.collect()
    }
}

impl Iterator for Fds {
    type Item = Result<RawFd, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next()
    }
}
