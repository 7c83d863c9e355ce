//! [`Pid`]: a process or thread id.

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};

/// A process or thread id, as seen from a pid namespace (the view's: the
/// procfs mount's, by default the caller's).
///
/// A valid id is positive; [`Pid::new`], [`TryFrom`] and [`FromStr`] check
/// that. [`Pid::from_raw`] does not: it wraps what the kernel returns, and
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

impl TryFrom<i32> for Pid {
    type Error = Error;

    /// ```
    /// assert!(pidmap::Pid::try_from(-3).is_err());
    /// ```
    fn try_from(id: i32) -> Result<Pid> {
        Pid::new(id).ok_or(Error::InvalidArgument("a pid is a positive number"))
    }
}

impl TryFrom<u32> for Pid {
    type Error = Error;

    /// `std::process::Child::id()` and `std::process::id()` are `u32`s:
    ///
    /// ```
    /// let me = pidmap::Pid::try_from(std::process::id())?;
    /// assert_eq!(me, pidmap::Pid::this_process());
    /// # Ok::<(), pidmap::Error>(())
    /// ```
    fn try_from(id: u32) -> Result<Pid> {
        let id = i32::try_from(id).map_err(|_| Error::InvalidArgument("pid out of range"))?;
        Pid::try_from(id)
    }
}

impl FromStr for Pid {
    type Err = Error;

    /// A positive decimal pid: no sign, no blanks.
    ///
    /// ```
    /// use pidmap::Pid;
    /// assert_eq!("42".parse::<Pid>().unwrap(), Pid::new(42).unwrap());
    /// assert!("0".parse::<Pid>().is_err());
    /// assert!("-1".parse::<Pid>().is_err());
    /// assert!("abc".parse::<Pid>().is_err());
    /// ```
    fn from_str(s: &str) -> Result<Pid> {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return Err(Error::InvalidArgument("a pid is a positive decimal number"));
        }
        let id = s
            .parse::<i32>()
            .map_err(|_| Error::InvalidArgument("pid out of range"))?;
        Pid::try_from(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions() {
        assert_eq!(Pid::try_from(5u32).unwrap().as_raw(), 5);
        assert!(Pid::try_from(0u32).is_err());
        assert!(Pid::try_from(u32::MAX).is_err());
        assert!(Pid::try_from(0x8000_0000u32).is_err());
        assert_eq!(Pid::try_from(0x7fff_ffffu32).unwrap().as_raw(), i32::MAX);
        assert!("2147483648".parse::<Pid>().is_err());
        assert!("+4".parse::<Pid>().is_err());
        assert!(" 4".parse::<Pid>().is_err());
        assert_eq!("007".parse::<Pid>().unwrap().as_raw(), 7);
        let child = std::process::Command::new("true").spawn().unwrap();
        let pid = Pid::try_from(child.id()).unwrap();
        assert_eq!(u32::try_from(pid.as_raw()).unwrap(), child.id());
        let mut child = child;
        child.wait().unwrap();
    }

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
