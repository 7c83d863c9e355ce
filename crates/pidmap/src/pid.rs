//! [`Pid`]: a process or thread id.

use std::fmt;

/// A process or thread id, as seen from a pid namespace (the view's: the
/// procfs mount's, by default the caller's).
///
/// A valid id is positive; [`Pid::new`], [`TryFrom`] and
/// [`FromStr`](std::str::FromStr) check that. [`Pid::from_raw`] does not: it wraps what the kernel returns, and
/// a non-positive one is rejected when it is used as a target.
///
/// `#[repr(transparent)]` over `i32`, so a `&mut [Pid]` is handed to the
/// kernel as a `&mut [i32]` without copying.
#[repr(transparent)]
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(try_from = "i32", into = "i32"))]
pub struct Pid(i32);

// SAFETY: `Pid` is `repr(transparent)` over `i32`, for which every bit
// pattern, all zeroes included, is valid; it has no padding.
unsafe impl bytemuck::Zeroable for Pid {}
// SAFETY: as above; `Pid` is `Copy` and `'static`, and no unsafe code
// relies on its value being positive.
unsafe impl bytemuck::Pod for Pid {}

impl Pid {
    /// A checked id: `None` unless `id > 0`.
    ///
    /// ```
    /// assert!(pidmap::Pid::new(1).is_some());
    /// assert!(pidmap::Pid::new(0).is_none());
    /// ```
    #[must_use]
    pub const fn new(id: i32) -> Option<Pid> {
        if id > 0 {
            Some(Pid(id))
        } else {
            None
        }
    }

    /// Wrap an id without checking it (as returned by the kernel).
    #[must_use]
    pub const fn from_raw(id: i32) -> Pid {
        Pid(id)
    }

    /// The raw id.
    #[must_use]
    pub const fn as_raw(self) -> i32 {
        self.0
    }

    /// The calling process's id (`getpid()`).
    ///
    /// ```
    /// assert_eq!(u32::try_from(pidmap::Pid::this_process().as_raw()), Ok(std::process::id()));
    /// ```
    #[must_use]
    pub fn this_process() -> Pid {
        Pid(rustix::process::getpid().as_raw_nonzero().get())
    }

    /// The calling thread's id (`gettid()`).
    #[must_use]
    pub fn this_thread() -> Pid {
        Pid(rustix::thread::gettid().as_raw_nonzero().get())
    }
}

impl fmt::Display for Pid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl From<Pid> for i32 {
    fn from(p: Pid) -> i32 {
        p.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn views_as_i32() {
        let mut v = [Pid(1), Pid(2)];
        let raw: &mut [i32] = bytemuck::cast_slice_mut(&mut v);
        raw[1] = 5;
        assert_eq!(v, [Pid(1), Pid(5)]);
    }

    #[cfg(feature = "serde")]
    #[test]
    fn serde_is_a_number_and_checked() {
        assert_eq!(serde_json::to_string(&Pid(42)).unwrap(), "42");
        assert_eq!(serde_json::from_str::<Pid>("42").unwrap(), Pid(42));
        assert!(serde_json::from_str::<Pid>("0").is_err());
        assert!(serde_json::from_str::<Pid>("-7").is_err());
    }
}
