//! The backend and proc root the global flags ask for, in one place:
//! `--backend` (parsed by [`backend_parser`](crate::args::backend_parser)
//! into the library's [`Backend`]), else `PIDMAP_BACKEND`, else auto; and
//! the handle every command opens with them.

use std::path::PathBuf;

use anyhow::Result;
use pidmap::{Backend, Pidmap};

use crate::args::Cli;
use crate::error::UsageError;

/// `--backend`, else `PIDMAP_BACKEND` (the library reads it only when
/// asked), else `None` (auto). A bad `PIDMAP_BACKEND` is a usage error.
pub fn requested(cli: &Cli) -> Result<Option<Backend>> {
    if let Some(b) = cli.backend {
        return Ok(Some(b));
    }
    Backend::from_env().map_err(|_| {
        let value = std::env::var_os(pidmap::BACKEND_ENV).unwrap_or_default();
        anyhow::Error::new(UsageError::new(format!(
            "{}={:?} is not a backend: use auto, syscall or procfs",
            pidmap::BACKEND_ENV,
            value.to_string_lossy()
        )))
    })
}

/// The handle of a one-off listing.
pub fn open(cli: &Cli) -> Result<Pidmap> {
    open_with(cli, false)
}

/// The handle, keeping the fallback's files open between full refreshes
/// when `keep_files` (`pidmap top`, which refreshes every task in a loop).
pub fn open_with(cli: &Cli, keep_files: bool) -> Result<Pidmap> {
    let mut b = Pidmap::builder().keep_files(keep_files);
    if let Some(backend) = requested(cli)? {
        b = b.backend(backend);
    }
    if let Some(root) = &cli.proc_root {
        b = b.proc_root(root);
    }
    Ok(b.build()?)
}

/// `--proc-root`, else `/proc`.
pub fn proc_root(cli: &Cli) -> PathBuf {
    cli.proc_root
        .clone()
        .unwrap_or_else(|| PathBuf::from("/proc"))
}

/// Whether the proc root is a mounted procfs of this pid namespace, as a
/// /proc handle finds it.
pub fn procfs_view(cli: &Cli) -> bool {
    let mut b = Pidmap::builder().backend(Backend::Procfs);
    if let Some(root) = &cli.proc_root {
        b = b.proc_root(root);
    }
    b.build().is_ok_and(|pm| pm.proc_root().is_some())
}
