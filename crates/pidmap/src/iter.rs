//! Iterators that batch internally and borrow (or, for the free functions,
//! own) a handle: [`Pids`] and [`Fds`], and the [`Pidmap`] methods that
//! make them ([`Pidmap::iter`], [`Pidmap::fds`]). They are built on the
//! handle's listing methods, so they live above `handle`.

use crate::backend::ActiveBackend;
use crate::error::{Error, Result};
use crate::handle::Pidmap;
use crate::pid::Pid;
use crate::query::{Enumeration, Query};
use crate::raw_id::RawId;
use crate::target::{Target, TargetFd};

/// Ids fetched per syscall by the iterators.
const BATCH: usize = 256;

#[derive(Debug)]
enum Handle<'a> {
    Borrowed(&'a mut Pidmap),
    Owned(Box<Pidmap>),
}

impl Handle<'_> {
    fn get(&mut self) -> &mut Pidmap {
        match self {
            Handle::Borrowed(pm) => pm,
            Handle::Owned(pm) => pm,
        }
    }
}

/// The engine behind [`Pids`] and [`Fds`].
#[derive(Debug)]
struct Ids<'a, T: RawId> {
    pm: Handle<'a>,
    what: Enumeration<'a>,
    /// The target's pidfd argument, resolved at the first syscall and
    /// kept: every chunk names the same process, even if a pid target's
    /// number is reused meanwhile.
    target: Option<TargetFd<'a>>,
    buf: Vec<T>,
    pos: usize,
    next_start: i32,
    done: bool,
}

impl<'a, T: RawId> Ids<'a, T> {
    fn new(pm: Handle<'a>, what: Enumeration<'a>) -> Self {
        Ids {
            pm,
            what,
            target: None,
            buf: Vec::new(),
            pos: 0,
            next_start: 0,
            done: false,
        }
    }

    fn refill(&mut self) -> Result<()> {
        self.pos = 0;
        if self.pm.get().active() == ActiveBackend::Syscall {
            self.buf.clear();
            self.buf.resize(BATCH, T::from_raw_id(0));
            if self.target.is_none() {
                self.target = Some(Pidmap::target_fd(self.what)?);
            }
            let pm = self.pm.get();
            let n = pm.chunk_raw_at(
                self.what,
                self.target.as_ref(),
                self.next_start,
                &mut self.buf,
            )?;
            self.buf.truncate(n);
            // Unless the handle switched to /proc during this call.
            if pm.active() == ActiveBackend::Syscall {
                match self.buf.last().map(|l| l.raw_id().checked_add(1)) {
                    Some(Some(next)) => self.next_start = next,
                    _ => self.done = true,
                }
                return Ok(());
            }
        }
        // /proc cannot resume from a cursor cheaply: one sorted snapshot,
        // from the cursor on, yielded from the buffer.
        self.done = true;
        self.pm.get().fill_raw(self.what, &mut self.buf)?;
        let from = self.buf.partition_point(|id| id.raw_id() < self.next_start);
        self.buf.drain(..from);
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

/// Iterator over process or thread ids, strictly ascending.
///
/// Created by [`Pidmap::iter`] or the free functions such as
/// [`processes`](crate::processes). An error ends the iteration.
///
/// ```
/// for pid in pidmap::processes()? {
///     assert!(pid?.as_raw() > 0);
/// }
/// # Ok::<(), pidmap::Error>(())
/// ```
#[derive(Debug)]
pub struct Pids<'a>(Ids<'a, Pid>);

impl<'a> Pids<'a> {
    fn borrowed(pm: &'a mut Pidmap, q: Query<'a>) -> Self {
        Pids(Ids::new(Handle::Borrowed(pm), Enumeration::Ids(q)))
    }

    pub(crate) fn owned(pm: Pidmap, q: Query<'a>) -> Self {
        Pids(Ids::new(Handle::Owned(Box::new(pm)), Enumeration::Ids(q)))
    }

    /// Collect every id, stopping at the first error.
    ///
    /// # Errors
    ///
    /// The listing's first error, as [`Pidmap::fill`]'s.
    pub fn to_vec(self) -> Result<Vec<Pid>> {
        self.collect()
    }
}

impl Iterator for Pids<'_> {
    type Item = Result<Pid, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next()
    }
}

/// Iterator over the open fd numbers of a process, ascending. The numbers
/// are the target's, not fds of this process.
///
/// ```
/// let fds = pidmap::fds(pidmap::Target::Caller)?.to_vec()?;
/// assert!(fds.windows(2).all(|w| w[0] < w[1]));
/// # Ok::<(), pidmap::Error>(())
/// ```
#[derive(Debug)]
pub struct Fds<'a>(Ids<'a, i32>);

impl<'a> Fds<'a> {
    fn borrowed(pm: &'a mut Pidmap, t: Target<'a>) -> Self {
        Fds(Ids::new(Handle::Borrowed(pm), Enumeration::Fds(t)))
    }

    pub(crate) fn owned(pm: Pidmap, t: Target<'a>) -> Self {
        Fds(Ids::new(Handle::Owned(Box::new(pm)), Enumeration::Fds(t)))
    }

    /// Collect every fd, stopping at the first error.
    ///
    /// # Errors
    ///
    /// The listing's first error, as [`Pidmap::fill_fds`]'s.
    pub fn to_vec(self) -> Result<Vec<i32>> {
        self.collect()
    }
}

impl Iterator for Fds<'_> {
    type Item = Result<i32, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next()
    }
}

impl Pidmap {
    /// An iterator over the listing, borrowing the handle: 256 ids per
    /// syscall, or one sorted /proc snapshot read into the handle's buffers.
    ///
    /// ```
    /// use pidmap::{Pidmap, Query};
    /// let mut pm = Pidmap::new()?;
    /// let n = pm.iter(Query::all_tasks()).filter_map(Result::ok).count();
    /// assert!(n >= 1);
    /// # Ok::<(), pidmap::Error>(())
    /// ```
    pub fn iter<'a>(&'a mut self, query: Query<'a>) -> Pids<'a> {
        Pids::borrowed(self, query)
    }

    /// An iterator over the fds of `target`, borrowing the handle.
    ///
    /// ```
    /// use pidmap::{Pidmap, Target};
    /// let mut pm = Pidmap::new()?;
    /// for fd in pm.fds(Target::Caller) {
    ///     assert!(fd? >= 0);
    /// }
    /// # Ok::<(), pidmap::Error>(())
    /// ```
    pub fn fds<'a>(&'a mut self, target: impl Into<Target<'a>>) -> Fds<'a> {
        Fds::borrowed(self, target.into())
    }
}
