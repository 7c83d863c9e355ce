//! Backend selection: the [`Backend`] asked for becomes the
//! [`ActiveBackend`] for the kernel's [`KernelSupport`] through a pure
//! function ([`Backend::resolve`]); [`Backend::detect`] probes (once per
//! process, see [`crate::kernel_support()`]) and resolves.
//!
//! **Sandboxes.** The probe issues a system call an allow-list seccomp
//! filter does not know (Android apps, Chromium-style sandboxes, systemd's
//! `SystemCallFilter=`, which may *kill* the process rather than answer
//! `EPERM`). Such programs must not probe: build the handle with
//! [`Backend::Procfs`], or opt in to [`BACKEND_ENV`]
//! (`PIDMAP_BACKEND=procfs`) with [`Backend::from_env`]. Under [`Backend::Auto`], a real call that answers
//! `ENOSYS`, or `EPERM` while a fresh probe no longer says "available" (a
//! filter installed after the first probe), switches that handle to /proc.

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};
use crate::kernel_support::{kernel_support, KernelSupport};

/// The environment variable a program may let choose its backend:
/// `auto`, `syscall` or `procfs` (`procfs` never issues the probe). Read
/// only when asked: [`Backend::from_env`],
/// [`Builder::backend_from_env`](crate::Builder::backend_from_env).
pub const BACKEND_ENV: &str = "PIDMAP_BACKEND";

/// Which implementation a listing should use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
#[non_exhaustive]
pub enum Backend {
    /// The syscalls when usable, else /proc (probed once per process, and
    /// re-checked when a real call answers `ENOSYS`/`EPERM`).
    #[default]
    Auto,
    /// Require pidmap(2)/fdmap(2); never fall back.
    Syscall,
    /// Always read /proc; the syscalls are never issued, not even the probe.
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

    /// `auto`, `syscall` or `procfs`.
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
            "procfs" => Ok(Backend::Procfs),
            _ => Err(Error::InvalidArgument(
                "a backend is auto, syscall or procfs",
            )),
        }
    }
}

impl Backend {
    /// The backend [`BACKEND_ENV`] asks for, if it is set.
    ///
    /// An unset or empty variable is `Ok(None)`; a value that is not a
    /// backend is an error rather than a silent probe.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the variable is set to something
    /// other than `auto`, `syscall` or `procfs`, or is not UTF-8.
    pub fn from_env() -> Result<Option<Backend>> {
        match std::env::var_os(BACKEND_ENV) {
            None => Ok(None),
            Some(v) if v.is_empty() => Ok(None),
            Some(v) => v
                .to_str()
                .ok_or(Error::InvalidArgument("PIDMAP_BACKEND is not UTF-8"))?
                .parse()
                .map(Some)
                .map_err(|_| {
                    Error::InvalidArgument("PIDMAP_BACKEND must be auto, syscall or procfs")
                }),
        }
    }
}

/// The implementation in use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
#[non_exhaustive]
pub enum ActiveBackend {
    /// pidmap(2)/fdmap(2).
    Syscall,
    /// The /proc reader.
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

/// The outcome of backend selection: what was asked, what is used, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct Detection {
    /// The backend that was asked for.
    pub requested: Backend,
    /// The backend in use.
    pub active: ActiveBackend,
    /// The kernel's answer; `None` when the probe was not run.
    pub support: Option<KernelSupport>,
    /// `Auto` switched to /proc after a real call failed (the probe had
    /// said "available").
    pub switched_after_call: bool,
}

impl Detection {
    /// Why [`Detection::active`] was chosen, in one line.
    #[must_use]
    pub fn reason(&self) -> String {
        match (self.requested, self.support) {
            (Backend::Procfs, _) => "procfs backend forced; the syscalls were not probed".into(),
            (Backend::Syscall, Some(s)) => format!("syscall backend forced; {}", s.reason()),
            (Backend::Auto, Some(s)) if self.switched_after_call => format!(
                "auto: a listing failed and a new probe says: {}; switched to /proc",
                s.reason()
            ),
            (Backend::Auto, Some(s)) if s.is_available() => format!("auto: {}", s.reason()),
            (Backend::Auto, Some(s)) => format!("auto: {}; falling back to /proc", s.reason()),
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
    /// # Errors
    ///
    /// [`Error::SyscallUnavailable`] for [`Backend::Syscall`] when `support`
    /// is not [`KernelSupport::Available`] (`None` counts as missing).
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
            switched_after_call: false,
        })
    }

    /// Probe (cached) if needed, and resolve. `Procfs` never probes.
    ///
    /// # Errors
    ///
    /// [`Error::SyscallUnavailable`] for [`Backend::Syscall`] on a kernel
    /// without the calls, under a filter that blocks them, or in a build
    /// without `series-syscalls`.
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
        }
    }

    #[test]
    fn env_switch_parses() {
        // Only the parser: the variable itself is process-wide state.
        for (s, b) in [
            ("auto", Backend::Auto),
            ("syscall", Backend::Syscall),
            ("procfs", Backend::Procfs),
        ] {
            assert_eq!(s.parse::<Backend>().unwrap(), b);
            assert_eq!(b.to_string(), s);
        }
        assert!("proc".parse::<Backend>().is_err());
    }
}
