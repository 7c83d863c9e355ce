//! Backend selection and kernel-support detection.
//!
//! Detection is explicit and testable, in the spirit of the `landlock`
//! crate's compatibility levels: the probe's raw answer is turned into a
//! [`KernelSupport`] by a pure function ([`KernelSupport::from_probe`]), and
//! a requested [`Backend`] is turned into the active one by another pure
//! function ([`Backend::resolve`]). Only [`kernel_support`] touches the
//! kernel, once per process, and caches the answer in an atomic.
//!
//! The probe only ever issues our own syscall numbers, with an undefined
//! flag bit and a NULL buffer of length 0: a patched kernel answers
//! `EINVAL`, an unpatched one `ENOSYS`, a seccomp filter usually `EPERM`.
//! The kernel version (`uname`) is never consulted: backports and
//! out-of-tree patches make it meaningless.

use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{Error, Result};
use crate::sys;

/// Which implementation a listing should use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Backend {
    /// Use the syscalls when the kernel has them, else fall back to /proc.
    #[default]
    Auto,
    /// Require pidmap(2)/fdmap(2); never fall back.
    Syscall,
    /// Always read /proc, never issue the syscalls (not even the probe).
    Procfs,
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Backend::Auto => "auto",
            Backend::Syscall => "syscall",
            Backend::Procfs => "procfs",
        })
    }
}

impl FromStr for Backend {
    type Err = Error;

    /// Parse `auto`, `syscall` or `procfs`.
    ///
    /// ```
    /// use pidmap::Backend;
    /// assert_eq!("procfs".parse::<Backend>().unwrap(), Backend::Procfs);
    /// assert!("nope".parse::<Backend>().is_err());
    /// ```
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "auto" => Ok(Backend::Auto),
            "syscall" => Ok(Backend::Syscall),
            "procfs" | "proc" => Ok(Backend::Procfs),
            _ => Err(Error::InvalidArgument(
                "backend must be auto, syscall or procfs",
            )),
        }
    }
}

/// The implementation actually in use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ActiveBackend {
    /// pidmap(2)/fdmap(2).
    Syscall,
    /// The /proc fallback (raw `getdents64`).
    Procfs,
}

impl fmt::Display for ActiveBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ActiveBackend::Syscall => "syscall",
            ActiveBackend::Procfs => "procfs",
        })
    }
}

/// What the running kernel says about pidmap(2)/fdmap(2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum KernelSupport {
    /// Both calls answered the probe with `EINVAL`: they exist.
    Available,
    /// `ENOSYS`: the kernel does not have the calls (unpatched kernel).
    Missing,
    /// `EPERM`: a seccomp filter (container runtime, sandbox) blocks them.
    Blocked,
    /// Some other answer: whatever is at our numbers is not our ABI.
    Unexpected {
        /// `"pidmap"` or `"fdmap"`.
        call: &'static str,
        /// The raw return value, or the negated errno.
        result: i64,
    },
}

impl KernelSupport {
    /// Classify the raw results of the probe calls (`Ok(return value)` or
    /// `Err(errno)`), without touching the kernel.
    ///
    /// ```
    /// use pidmap::KernelSupport;
    /// let e = |errno| Err(errno);
    /// assert_eq!(KernelSupport::from_probe(e(libc::EINVAL), e(libc::EINVAL)), KernelSupport::Available);
    /// assert_eq!(KernelSupport::from_probe(e(libc::ENOSYS), e(libc::ENOSYS)), KernelSupport::Missing);
    /// assert_eq!(KernelSupport::from_probe(e(libc::EPERM), e(libc::EPERM)), KernelSupport::Blocked);
    /// ```
    pub fn from_probe(pidmap: Result<i64, i32>, fdmap: Result<i64, i32>) -> KernelSupport {
        let one = |call: &'static str, r: Result<i64, i32>| match r {
            Err(libc::EINVAL) => KernelSupport::Available,
            Err(libc::ENOSYS) => KernelSupport::Missing,
            Err(libc::EPERM) => KernelSupport::Blocked,
            Err(e) => KernelSupport::Unexpected {
                call,
                result: -i64::from(e),
            },
            Ok(v) => KernelSupport::Unexpected { call, result: v },
        };
        match one("pidmap", pidmap) {
            KernelSupport::Available => one("fdmap", fdmap),
            other => other,
        }
    }

    /// Whether the syscall backend can be used.
    pub fn is_available(self) -> bool {
        self == KernelSupport::Available
    }

    /// A one-line explanation, for `pidmap info` and error messages.
    pub fn reason(self) -> String {
        match self {
            KernelSupport::Available => {
                "pidmap(2) and fdmap(2) answered the probe with EINVAL, as a patched kernel does"
                    .to_string()
            }
            KernelSupport::Missing => {
                "pidmap(2) answered ENOSYS: the kernel is not patched".to_string()
            }
            KernelSupport::Blocked => {
                "pidmap(2) answered EPERM: a seccomp filter blocks it".to_string()
            }
            KernelSupport::Unexpected { call, result } => {
                format!("{call}(2) answered the probe with {result}, which is not our ABI")
            }
        }
    }

    fn encode(self) -> u64 {
        match self {
            KernelSupport::Available => 1,
            KernelSupport::Missing => 2,
            KernelSupport::Blocked => 3,
            KernelSupport::Unexpected { call, result } => {
                let c = u64::from(call == "fdmap");
                4 | (c << 8) | (u64::from(result as i32 as u32) << 32)
            }
        }
    }

    fn decode(v: u64) -> Option<KernelSupport> {
        Some(match v & 0xff {
            1 => KernelSupport::Available,
            2 => KernelSupport::Missing,
            3 => KernelSupport::Blocked,
            4 => KernelSupport::Unexpected {
                call: if (v >> 8) & 1 == 1 { "fdmap" } else { "pidmap" },
                result: i64::from((v >> 32) as u32 as i32),
            },
            _ => return None,
        })
    }
}

impl fmt::Display for KernelSupport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason())
    }
}

static SUPPORT: AtomicU64 = AtomicU64::new(0);

/// Probe the kernel now, without the cache. Safe on any kernel: it only
/// issues our two syscall numbers with an invalid flag and no buffer.
pub fn probe_kernel() -> KernelSupport {
    let p = sys::probe(sys::NR.pidmap);
    // Don't issue fdmap if pidmap already says no.
    let f = if matches!(p, Err(libc::EINVAL)) {
        sys::probe(sys::NR.fdmap)
    } else {
        Err(libc::EINVAL)
    };
    KernelSupport::from_probe(p, f)
}

/// The kernel's support, probed once per process and cached in an atomic.
///
/// ```
/// let s = pidmap::kernel_support();
/// println!("syscall backend available: {} ({s})", s.is_available());
/// ```
pub fn kernel_support() -> KernelSupport {
    if let Some(s) = KernelSupport::decode(SUPPORT.load(Ordering::Relaxed)) {
        return s;
    }
    let s = probe_kernel();
    // Racing probes compute the same answer; last store wins harmlessly.
    SUPPORT.store(s.encode(), Ordering::Relaxed);
    s
}

/// The outcome of backend selection: what was asked, what is used, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Detection {
    /// The backend that was asked for.
    pub requested: Backend,
    /// The backend in use.
    pub active: ActiveBackend,
    /// The kernel's answer to the probe; `None` when the probe was not run
    /// (for [`Backend::Procfs`]).
    pub support: Option<KernelSupport>,
}

impl Detection {
    /// Why [`Detection::active`] was chosen, in one line.
    pub fn reason(&self) -> String {
        match (self.requested, self.support) {
            (Backend::Procfs, _) => "procfs backend forced; the syscalls were not probed".into(),
            (Backend::Syscall, Some(s)) => format!("syscall backend forced; {}", s.reason()),
            (Backend::Auto, Some(s)) if s.is_available() => format!("auto: {}", s.reason()),
            (Backend::Auto, Some(s)) => {
                format!("auto: {}; falling back to /proc", s.reason())
            }
            (_, None) => "not probed".into(),
        }
    }
}

impl fmt::Display for Detection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.active, self.reason())
    }
}

impl Backend {
    /// Decide the active backend for a given kernel answer, without
    /// touching the kernel. `Syscall` never falls back.
    ///
    /// ```
    /// use pidmap::{ActiveBackend, Backend, KernelSupport};
    /// let d = Backend::Auto.resolve(Some(KernelSupport::Missing)).unwrap();
    /// assert_eq!(d.active, ActiveBackend::Procfs);
    /// assert!(Backend::Syscall.resolve(Some(KernelSupport::Blocked)).is_err());
    /// ```
    pub fn resolve(self, support: Option<KernelSupport>) -> Result<Detection> {
        let active = match (self, support) {
            (Backend::Procfs, _) => ActiveBackend::Procfs,
            (_, Some(KernelSupport::Available)) => ActiveBackend::Syscall,
            (Backend::Auto, _) => ActiveBackend::Procfs,
            (Backend::Syscall, Some(s)) => return Err(Error::SyscallUnavailable(s)),
            (Backend::Syscall, None) => {
                return Err(Error::SyscallUnavailable(KernelSupport::Missing))
            }
        };
        Ok(Detection {
            requested: self,
            active,
            support,
        })
    }

    /// Probe (cached) if needed and resolve.
    ///
    /// ```
    /// use pidmap::Backend;
    /// let d = Backend::Auto.detect().unwrap();
    /// println!("using {d}");
    /// ```
    pub fn detect(self) -> Result<Detection> {
        let support = match self {
            Backend::Procfs => None,
            _ => Some(kernel_support()),
        };
        self.resolve(support)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encode_roundtrip() {
        for s in [
            KernelSupport::Available,
            KernelSupport::Missing,
            KernelSupport::Blocked,
            KernelSupport::Unexpected {
                call: "fdmap",
                result: -22,
            },
            KernelSupport::Unexpected {
                call: "pidmap",
                result: 5,
            },
        ] {
            assert_eq!(KernelSupport::decode(s.encode()), Some(s));
        }
        assert_eq!(KernelSupport::decode(0), None);
    }

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
    fn resolution_matrix() {
        use KernelSupport::*;
        for s in [Available, Missing, Blocked] {
            let auto = Backend::Auto.resolve(Some(s)).unwrap();
            let want = if s == Available {
                ActiveBackend::Syscall
            } else {
                ActiveBackend::Procfs
            };
            assert_eq!(auto.active, want);
            assert_eq!(
                Backend::Procfs.resolve(Some(s)).unwrap().active,
                ActiveBackend::Procfs
            );
            match Backend::Syscall.resolve(Some(s)) {
                Ok(d) => assert_eq!((s, d.active), (Available, ActiveBackend::Syscall)),
                Err(Error::SyscallUnavailable(got)) => assert_eq!(got, s),
                Err(e) => panic!("unexpected {e}"),
            }
            assert!(!auto.reason().is_empty());
        }
    }

    #[test]
    fn cached_probe_is_stable() {
        assert_eq!(kernel_support(), kernel_support());
        assert_eq!(kernel_support(), probe_kernel());
    }
}
