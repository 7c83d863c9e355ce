//! The checked conversions into [`Pid`]: from `i32`, from `u32` (as
//! `std::process` gives ids) and from decimal text. They fail with the
//! crate's [`Error`], which names pids ([`TargetId`](crate::TargetId)):
//! [`Pid`] itself stays below the error type, these above it.

use std::str::FromStr;

use crate::error::{Error, Result};
use crate::pid::Pid;

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
}
