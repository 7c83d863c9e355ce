//! [`Query`]: what to list, about whom, with which modifiers.

use crate::error::{Error, Result};
use crate::sys;
use crate::target::Target;
use crate::target_id::TargetId;

/// What a pidmap(2) listing lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
#[non_exhaustive]
pub enum Listing {
    /// Thread-group ids (processes) of the view.
    Processes,
    /// Every task id of the view, threads included.
    AllTasks,
    /// The thread ids of the target's thread group.
    Threads,
    /// The children of the target's thread group.
    Children,
}

impl Listing {
    /// A plural noun for messages: `"processes"`, `"threads"`, ...
    #[must_use]
    pub fn noun(self) -> &'static str {
        match self {
            Listing::Processes => "processes",
            Listing::AllTasks => "tasks",
            Listing::Threads => "threads",
            Listing::Children => "children",
        }
    }
}

/// A listing, its target and its modifiers.
///
/// ```
/// use pidmap::{Listing, Pid, Query, Target};
/// let q = Query::processes().without_kthreads();
/// assert_eq!(q.listing(), Listing::Processes);
/// assert!(q.ignores_kthreads());
/// assert_eq!(Query::threads(Target::Caller).target(), Target::Caller);
/// let q = Query::children(Pid::this_process());
/// assert_eq!(q.target(), Target::Pid(Pid::this_process()));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Query<'fd> {
    listing: Listing,
    target: Target<'fd>,
    ignore_kthreads: bool,
}

impl<'fd> Query<'fd> {
    /// All processes of the view.
    #[must_use]
    pub const fn processes() -> Query<'static> {
        Query::untargeted(Listing::Processes)
    }

    /// All tasks of the view, threads included.
    #[must_use]
    pub const fn all_tasks() -> Query<'static> {
        Query::untargeted(Listing::AllTasks)
    }

    /// The threads of `target`'s thread group.
    pub fn threads(target: impl Into<Target<'fd>>) -> Query<'fd> {
        Query {
            listing: Listing::Threads,
            target: target.into(),
            ignore_kthreads: false,
        }
    }

    /// The children of `target`'s thread group.
    pub fn children(target: impl Into<Target<'fd>>) -> Query<'fd> {
        Query {
            listing: Listing::Children,
            target: target.into(),
            ignore_kthreads: false,
        }
    }

    const fn untargeted(listing: Listing) -> Query<'static> {
        Query {
            listing,
            target: Target::Caller,
            ignore_kthreads: false,
        }
    }

    /// Leave kernel threads out (`PIDMAP_FILTER_NO_KTHREADS`).
    #[must_use]
    pub const fn without_kthreads(mut self) -> Self {
        self.ignore_kthreads = true;
        self
    }

    /// The same query with kernel threads included.
    #[cfg(feature = "fallback")]
    pub(crate) const fn with_kthreads(mut self) -> Self {
        self.ignore_kthreads = false;
        self
    }

    /// What is listed.
    #[must_use]
    pub const fn listing(&self) -> Listing {
        self.listing
    }

    /// Whose threads or children ([`Target::Caller`] for the untargeted
    /// listings).
    #[must_use]
    pub const fn target(&self) -> Target<'fd> {
        self.target
    }

    /// Whether kernel threads are left out.
    #[must_use]
    pub const fn ignores_kthreads(&self) -> bool {
        self.ignore_kthreads
    }
}

/// One enumeration: the ids of a [`Query`] (pidmap(2)) or the fds of a
/// target (fdmap(2)). Both share the cursor protocol.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Enumeration<'fd> {
    Ids(Query<'fd>),
    Fds(Target<'fd>),
}

/// A pid target must be positive ([`Target::Caller`] is the caller).
fn check_target(target: Target<'_>) -> Result<()> {
    match target {
        Target::Pid(p) if p.as_raw() <= 0 => Err(Error::InvalidArgument(
            "a pid target must be positive (use Target::Caller for the caller)",
        )),
        _ => Ok(()),
    }
}

impl Enumeration<'_> {
    /// `"threads"`, `"fds"`, ... for errors.
    pub(crate) fn what(&self) -> &'static str {
        match self {
            Enumeration::Ids(q) => q.listing.noun(),
            Enumeration::Fds(_) => "fds",
        }
    }

    pub(crate) fn target(&self) -> Target<'_> {
        match *self {
            Enumeration::Ids(q) => q.target,
            Enumeration::Fds(t) => t,
        }
    }

    pub(crate) fn target_id(&self) -> TargetId {
        self.target().id()
    }

    /// pidmap(2)'s scope and filter (the view is its own field); the
    /// target is resolved to a pidfd by the caller.
    pub(crate) fn pidmap_args(q: Query<'_>) -> Result<(u32, u32)> {
        let scope = match q.listing {
            Listing::Processes => sys::PIDMAP_SCOPE_PROCS,
            Listing::AllTasks => sys::PIDMAP_SCOPE_TASKS,
            Listing::Threads => sys::PIDMAP_SCOPE_THREADS,
            Listing::Children => sys::PIDMAP_SCOPE_CHILDREN,
        };
        check_target(q.target)?;
        if matches!(q.listing, Listing::Processes | Listing::AllTasks) && q.target != Target::Caller
        {
            return Err(Error::InvalidArgument(
                "processes and all tasks take no target",
            ));
        }
        let filter = if q.ignore_kthreads {
            sys::PIDMAP_FILTER_NO_KTHREADS
        } else {
            0
        };
        Ok((scope, filter))
    }

    /// Whether pidmap(2) takes a target for this query.
    pub(crate) fn targeted(q: Query<'_>) -> bool {
        matches!(q.listing, Listing::Threads | Listing::Children)
    }

    /// Check the arguments without running anything.
    pub(crate) fn validate(&self) -> Result<()> {
        match *self {
            Enumeration::Ids(q) => Enumeration::pidmap_args(q).map(drop),
            Enumeration::Fds(t) => check_target(t),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pid::Pid;

    #[test]
    fn scopes_filters_and_targets() {
        let p = Pid::new(5).unwrap();
        assert_eq!(
            Enumeration::pidmap_args(Query::processes().without_kthreads()).unwrap(),
            (sys::PIDMAP_SCOPE_PROCS, sys::PIDMAP_FILTER_NO_KTHREADS)
        );
        assert_eq!(
            Enumeration::pidmap_args(Query::all_tasks()).unwrap(),
            (sys::PIDMAP_SCOPE_TASKS, 0)
        );
        assert_eq!(
            Enumeration::pidmap_args(Query::children(p)).unwrap(),
            (sys::PIDMAP_SCOPE_CHILDREN, 0)
        );
        assert_eq!(
            Enumeration::pidmap_args(Query::threads(Target::Caller)).unwrap(),
            (sys::PIDMAP_SCOPE_THREADS, 0)
        );
        assert!(Enumeration::targeted(Query::threads(p)));
        assert!(!Enumeration::targeted(Query::processes()));
        assert!(Enumeration::pidmap_args(Query::threads(Pid::from_raw(0))).is_err());
        assert!(Enumeration::pidmap_args(Query::threads(Pid::from_raw(-2))).is_err());
        assert!(Enumeration::Fds(Target::Pid(Pid::from_raw(0)))
            .validate()
            .is_err());
        assert!(Enumeration::Fds(Target::Pid(p)).validate().is_ok());
    }
}
