//! [`KernelSupport`]: what the running kernel (and any sandbox) says about
//! the series' system calls, and the probes that ask it.
//!
//! The probe's raw answer becomes a [`KernelSupport`] through a pure
//! function ([`KernelSupport::from_probe`]); only [`kernel_support`] and
//! [`task_info_support`] touch the kernel, once per process (`OnceLock`).
//! The kernel version is never consulted.

use std::fmt;
use std::sync::OnceLock;

use crate::sys;

/// What the running kernel (and any sandbox) says about pidmap(2)/fdmap(2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub enum KernelSupport {
    /// pidmap(2) and fdmap(2) answered the probe with `EINVAL`: the
    /// series is there (pidmap_info(2), between them, comes with it).
    Available,
    /// Not asked: this build of the crate never issues the series'
    /// system calls (the `series-syscalls` feature is off), because their
    /// numbers are not assigned upstream and may mean another call here.
    NotBuilt,
    /// `ENOSYS`: the kernel lacks the calls (or a filter says so).
    Missing,
    /// `EPERM`: a seccomp filter blocks them.
    Blocked,
    /// Some other answer: whatever is at our numbers is not our ABI.
    Unexpected {
        /// `"pidmap"` or `"fdmap"`.
        call: &'static str,
        /// The return value, or the negated errno.
        result: i64,
    },
}

impl KernelSupport {
    /// Classify the probe's raw results (`Ok(return value)` or
    /// `Err(errno)`), without touching the kernel.
    ///
    /// ```
    /// use pidmap::KernelSupport;
    /// let e = |errno| Err(errno);
    /// assert_eq!(KernelSupport::from_probe(e(libc::EINVAL), e(libc::EINVAL)), KernelSupport::Available);
    /// assert_eq!(KernelSupport::from_probe(e(libc::ENOSYS), e(libc::ENOSYS)), KernelSupport::Missing);
    /// assert_eq!(KernelSupport::from_probe(e(libc::EPERM), e(libc::EPERM)), KernelSupport::Blocked);
    /// ```
    #[must_use]
    pub fn from_probe(pidmap: Result<u64, i32>, fdmap: Result<u64, i32>) -> KernelSupport {
        let one = |call: &'static str, r: Result<u64, i32>| match r {
            Err(libc::EINVAL) => KernelSupport::Available,
            Err(libc::ENOSYS) => KernelSupport::Missing,
            Err(libc::EPERM) => KernelSupport::Blocked,
            Err(e) => KernelSupport::Unexpected {
                call,
                result: -i64::from(e),
            },
            Ok(v) => KernelSupport::Unexpected {
                call,
                result: i64::try_from(v).unwrap_or(i64::MAX),
            },
        };
        match one("pidmap", pidmap) {
            KernelSupport::Available => one("fdmap", fdmap),
            other => other,
        }
    }

    /// Whether the syscall backend can be used.
    #[must_use]
    pub fn is_available(self) -> bool {
        self == KernelSupport::Available
    }

    /// A one-line explanation, for `pidmap info` and error messages.
    #[must_use]
    pub fn reason(self) -> String {
        match self {
            KernelSupport::Available => {
                "pidmap(2) and fdmap(2) answered the probe with EINVAL, as a kernel with the series does"
                    .into()
            }
            KernelSupport::NotBuilt => "not available: built without the series-syscalls feature \
                 (pidmap(2)/fdmap(2) have no upstream syscall numbers, so they are never issued)"
                .into(),
            KernelSupport::Missing => {
                "pidmap(2) or fdmap(2) answered ENOSYS: the kernel does not have the series".into()
            }
            KernelSupport::Blocked => "pidmap(2) answered EPERM: a seccomp filter blocks it".into(),
            KernelSupport::Unexpected { call, result } => {
                format!("{call}(2) answered the probe with {result}, which is not its ABI")
            }
        }
    }
}

impl fmt::Display for KernelSupport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason())
    }
}

/// Probe the kernel now, without the cache. It issues only pidmap(2) and
/// fdmap(2), with an invalid flag and no buffer; see the crate docs
/// ([Backends](crate#backends)) for sandboxes that kill on unknown calls.
#[must_use]
pub fn probe_kernel() -> KernelSupport {
    if sys::enabled_numbers().is_none() {
        return KernelSupport::NotBuilt;
    }
    let (p, f) = sys::probe();
    KernelSupport::from_probe(p, f)
}

static SUPPORT: OnceLock<KernelSupport> = OnceLock::new();

/// The kernel's support, probed once per process.
///
/// ```
/// let s = pidmap::kernel_support();
/// println!("syscall backend available: {} ({s})", s.is_available());
/// ```
pub fn kernel_support() -> KernelSupport {
    *SUPPORT.get_or_init(probe_kernel)
}

static TASK_INFO: OnceLock<bool> = OnceLock::new();

/// Whether pidmap_info(2) answers (task records), probed once per
/// process on a kernel whose calls are available; `Err(errno)` (not
/// cached) for an answer that says nothing about records, such as a
/// filter's `EPERM`.
pub(crate) fn task_info_support() -> Result<bool, i32> {
    if let Some(&known) = TASK_INFO.get() {
        return Ok(known);
    }
    let known = classify_task_info_probe(sys::probe_info())?;
    Ok(*TASK_INFO.get_or_init(|| known))
}

/// The task-record probe's answer: 0 (a count-0 call that passed every
/// check) means records; `EINVAL` or `E2BIG` (a record or request the
/// kernel does not take) is a kernel without usable records, as is any
/// other count, which the ABI rules out.
fn classify_task_info_probe(r: Result<u64, i32>) -> Result<bool, i32> {
    match r {
        Ok(0) => Ok(true),
        Ok(_) | Err(libc::EINVAL | libc::E2BIG) => Ok(false),
        Err(errno) => Err(errno),
    }
}

// The tests' raw probe, independent of the probe code above.
#[cfg(test)]
#[path = "../tests/support/raw_probe.rs"]
mod raw_probe;

#[cfg(test)]
mod tests {
    use super::raw_probe::{probe, Call};
    use super::*;

    #[test]
    fn classification() {
        use KernelSupport::*;
        assert_eq!(
            KernelSupport::from_probe(Err(libc::EINVAL), Err(libc::ENOSYS)),
            Missing
        );
        assert_eq!(
            KernelSupport::from_probe(Err(libc::EFAULT), Err(libc::EINVAL)),
            Unexpected {
                call: "pidmap",
                result: -i64::from(libc::EFAULT)
            }
        );
        assert_eq!(
            KernelSupport::from_probe(Ok(0), Err(libc::EINVAL)),
            Unexpected {
                call: "pidmap",
                result: 0
            }
        );
    }

    #[test]
    fn task_info_probe_classification() {
        assert_eq!(classify_task_info_probe(Ok(0)), Ok(true));
        assert_eq!(classify_task_info_probe(Err(libc::EINVAL)), Ok(false));
        assert_eq!(classify_task_info_probe(Err(libc::E2BIG)), Ok(false));
        assert_eq!(classify_task_info_probe(Ok(3)), Ok(false));
        assert_eq!(classify_task_info_probe(Err(libc::EPERM)), Err(libc::EPERM));
        assert_eq!(
            classify_task_info_probe(Err(libc::ENOSYS)),
            Err(libc::ENOSYS)
        );
    }

    /// The cache must hold what the kernel answered the first time, which
    /// is checked against a raw `syscall()` made here independently of the
    /// crate's probe code: ENOSYS means Missing, EINVAL means Available.
    #[test]
    fn cached_probe_matches_an_independent_raw_call() {
        let cached = kernel_support();
        let required = std::env::var("PIDMAP_REQUIRE_SYSCALL").is_ok_and(|v| v == "1");
        if cfg!(not(feature = "series-syscalls")) {
            // Nothing is issued, not even by the tests' raw probe.
            assert_eq!(cached, KernelSupport::NotBuilt);
            assert!(
                !required,
                "PIDMAP_REQUIRE_SYSCALL=1 needs a build with the series-syscalls feature"
            );
            return;
        }
        let errno = probe(Call::Pidmap)
            .expect_err("the probe must fail")
            .raw_os_error();
        let mut want = match errno {
            Some(libc::ENOSYS) => KernelSupport::Missing,
            Some(libc::EINVAL) => KernelSupport::Available,
            Some(libc::EPERM) => KernelSupport::Blocked,
            other => panic!("unexpected errno {other:?}"),
        };
        if want == KernelSupport::Available {
            // fdmap too, or the classification would not say Available.
            let fdmap = probe(Call::Fdmap).expect_err("the fdmap probe must fail");
            match fdmap.raw_os_error() {
                Some(libc::EINVAL) => {}
                Some(libc::ENOSYS) => want = KernelSupport::Missing,
                other => panic!("unexpected fdmap errno {other:?}"),
            }
        }
        assert_eq!(cached, want);
        let unpatched = std::env::var("PIDMAP_EXPECT_NO_SYSCALL").is_ok_and(|v| v == "1");
        if required {
            assert_eq!(cached, KernelSupport::Available);
        }
        if unpatched {
            assert_eq!(cached, KernelSupport::Missing);
        }
    }
}
