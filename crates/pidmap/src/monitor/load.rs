//! The load average and the uptime, as `uptime(1)`, `top` and `w` show
//! them: `/proc/loadavg` and `/proc/uptime`. Plain file reads, like
//! [`SystemMemory`](crate::monitor::SystemMemory): they need neither the
//! `fallback` feature nor the system calls.
//!
//! ```
//! use pidmap::monitor::{LoadAverage, Uptime};
//!
//! let load = LoadAverage::read()?;
//! let up = Uptime::read()?;
//! println!(
//!     "up {} s, load average: {:.2}, {:.2}, {:.2}",
//!     up.up.as_secs(),
//!     load.one,
//!     load.five,
//!     load.fifteen
//! );
//! assert!(load.runnable <= load.tasks);
//! # Ok::<(), pidmap::Error>(())
//! ```

use std::path::Path;
use std::time::Duration;

use super::system::read_file;
use crate::error::{ParseError, Result};

/// The system load averages over 1, 5 and 15 minutes, and the
/// scheduler's task counts, as `/proc/loadavg` gives them.
///
/// ```
/// let load = pidmap::monitor::LoadAverage::parse("0.52 0.58 0.59 3/472 12345\n")?;
/// assert_eq!((load.one, load.five, load.fifteen), (0.52, 0.58, 0.59));
/// assert_eq!((load.runnable, load.tasks, load.last_pid), (3, 472, 12345));
/// # Ok::<(), pidmap::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct LoadAverage {
    /// Over the last minute.
    pub one: f64,
    /// Over the last 5 minutes.
    pub five: f64,
    /// Over the last 15 minutes.
    pub fifteen: f64,
    /// Tasks runnable now.
    pub runnable: u32,
    /// Tasks (threads) that exist now.
    pub tasks: u32,
    /// The pid most recently given out (in the reader's pid namespace).
    pub last_pid: i32,
}

impl LoadAverage {
    /// Read `/proc/loadavg`.
    ///
    /// # Errors
    ///
    /// As [`read_from`](LoadAverage::read_from).
    pub fn read() -> Result<LoadAverage> {
        LoadAverage::read_from("/proc")
    }

    /// Read `loadavg` below `proc_root`.
    ///
    /// # Errors
    ///
    /// [`Error::Io`](crate::Error::Io) when the file cannot be read,
    /// [`Error::Parse`](crate::Error::Parse) when it does not parse.
    pub fn read_from(proc_root: impl AsRef<Path>) -> Result<LoadAverage> {
        read_file(proc_root.as_ref(), "loadavg", LoadAverage::parse)
    }

    /// Parse the text of `/proc/loadavg`: `1min 5min 15min R/T LAST`.
    ///
    /// # Errors
    ///
    /// What is wrong when a field is missing or not a number.
    pub fn parse(text: &str) -> Result<LoadAverage, ParseError> {
        let mut f = text.split_whitespace();
        let mut next = |what: &str| {
            f.next()
                .ok_or_else(|| ParseError::new(format!("no {what} field")))
        };
        let load = |what: &str, v: &str| {
            v.parse::<f64>()
                .map_err(|_| ParseError::new(format!("{what} load {v:?} is not a number")))
        };
        let one = load("1-minute", next("1-minute load")?)?;
        let five = load("5-minute", next("5-minute load")?)?;
        let fifteen = load("15-minute", next("15-minute load")?)?;
        let counts = next("runnable/tasks")?;
        let (runnable, tasks) = counts
            .split_once('/')
            .and_then(|(r, t)| Some((r.parse().ok()?, t.parse().ok()?)))
            .ok_or_else(|| ParseError::new(format!("task counts {counts:?} are not R/T")))?;
        let last = next("last pid")?;
        let last_pid = last
            .parse()
            .map_err(|_| ParseError::new(format!("last pid {last:?} is not a number")))?;
        Ok(LoadAverage {
            one,
            five,
            fifteen,
            runnable,
            tasks,
            last_pid,
        })
    }
}

/// How long the system has been up, and how long its CPUs were idle in
/// that time (summed over CPUs), as `/proc/uptime` gives them.
///
/// ```
/// use std::time::Duration;
/// let u = pidmap::monitor::Uptime::parse("3605.25 7000.50\n")?;
/// assert_eq!(u.up, Duration::from_millis(3_605_250));
/// assert_eq!(u.idle, Duration::from_millis(7_000_500));
/// # Ok::<(), pidmap::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct Uptime {
    /// Since boot (`CLOCK_BOOTTIME`, suspend included).
    pub up: Duration,
    /// Idle time of all CPUs together.
    pub idle: Duration,
}

impl Uptime {
    /// Read `/proc/uptime`.
    ///
    /// # Errors
    ///
    /// As [`read_from`](Uptime::read_from).
    pub fn read() -> Result<Uptime> {
        Uptime::read_from("/proc")
    }

    /// Read `uptime` below `proc_root`.
    ///
    /// # Errors
    ///
    /// [`Error::Io`](crate::Error::Io) when the file cannot be read,
    /// [`Error::Parse`](crate::Error::Parse) when it does not parse.
    pub fn read_from(proc_root: impl AsRef<Path>) -> Result<Uptime> {
        read_file(proc_root.as_ref(), "uptime", Uptime::parse)
    }

    /// Parse the text of `/proc/uptime`: two decimal numbers of seconds.
    ///
    /// # Errors
    ///
    /// What is wrong when a field is missing or not a non-negative number
    /// of seconds.
    pub fn parse(text: &str) -> Result<Uptime, ParseError> {
        let mut f = text.split_whitespace();
        let mut secs = |what: &str| {
            let v = f
                .next()
                .ok_or_else(|| ParseError::new(format!("no {what} field")))?;
            v.parse::<f64>()
                .ok()
                .and_then(|s| Duration::try_from_secs_f64(s).ok())
                .ok_or_else(|| ParseError::new(format!("{what} {v:?} is not a number of seconds")))
        };
        let up = secs("uptime")?;
        let idle = secs("idle time")?;
        Ok(Uptime { up, idle })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_text_is_a_parse_error_naming_the_field() {
        for (text, wanted) in [
            ("", "no 1-minute load"),
            ("x 1 1 1/2 3", "1-minute load \"x\""),
            ("1 1 1 12 3", "not R/T"),
            ("1 1 1 1/2", "no last pid"),
        ] {
            let e = LoadAverage::parse(text).unwrap_err().to_string();
            assert!(e.contains(wanted), "{text:?}: {e}");
        }
        assert!(Uptime::parse("12.5")
            .unwrap_err()
            .to_string()
            .contains("idle"));
        assert!(Uptime::parse("-1 2").is_err());
    }

    #[test]
    fn read_agrees_with_the_files() {
        let load = LoadAverage::read().unwrap();
        let text = std::fs::read_to_string("/proc/loadavg").unwrap();
        let one: f64 = text.split_whitespace().next().unwrap().parse().unwrap();
        // The averages change every 5 s: within a read of each other.
        assert!((load.one - one).abs() < 1.0, "{load:?} against {text}");
        assert!(load.tasks >= 1 && load.runnable <= load.tasks);
        let before = Uptime::read().unwrap();
        let file: f64 = std::fs::read_to_string("/proc/uptime")
            .unwrap()
            .split_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let after = Uptime::read().unwrap();
        assert!(before.up.as_secs_f64() <= file + 0.01 && file <= after.up.as_secs_f64() + 0.01);
    }
}
