//! `pidmap info`: the backend in use, the kernel's support and why, where
//! task records come from, and its JSON document.

use std::io::Write;

use anyhow::Result;
use pidmap::{ActiveBackend, Backend, KernelSupport};
use serde::Serialize;

use crate::args::Cli;
use crate::backend::{open, proc_root, procfs_view, requested};
use crate::error::error_line;
use crate::output::{self, SCHEMA};

fn support_name(s: Option<KernelSupport>) -> &'static str {
    match s {
        None => "not probed",
        Some(KernelSupport::Available) => "available",
        Some(KernelSupport::Missing) => "missing",
        Some(KernelSupport::Blocked) => "blocked",
        Some(KernelSupport::NotBuilt) => "not_built",
        Some(_) => "unexpected",
    }
}

#[derive(Serialize)]
struct InfoDoc {
    schema: u32,
    command: &'static str,
    requested: Backend,
    backend: Option<ActiveBackend>,
    kernel_support: &'static str,
    reason: String,
    proc_root: String,
    procfs_view: bool,
    syscall_numbers: Option<Numbers>,
    /// Where task records (`--long`, `top`) come from; `null` when they
    /// cannot be read.
    info_backend: Option<ActiveBackend>,
    version: &'static str,
}

#[derive(Serialize)]
struct Numbers {
    pidmap: i64,
    pidmap_info: i64,
    fdmap: i64,
}

/// `pidmap info`.
pub fn run(cli: &Cli, out: &mut dyn Write) -> Result<bool> {
    let requested: Backend = requested(cli)?.unwrap_or_default();
    // The kernel's answer, unless the user said not to probe.
    let support = (requested != Backend::Procfs).then(pidmap::kernel_support);
    let built = open(cli);
    let (backend, reason, view) = match &built {
        Ok(pm) => (
            Some(pm.active()),
            pm.detection().reason(),
            pm.proc_root().is_some(),
        ),
        // Whether the proc root is a mounted procfs does not depend on
        // the backend that failed: ask a /proc handle.
        Err(e) => (None, error_line(e), procfs_view(cli)),
    };
    let doc = InfoDoc {
        schema: SCHEMA,
        command: "info",
        requested,
        backend,
        kernel_support: support_name(support),
        reason,
        proc_root: proc_root(cli).display().to_string(),
        procfs_view: view,
        info_backend: built.as_ref().ok().and_then(|pm| pm.info_backend().ok()),
        syscall_numbers: pidmap::SYSCALL_NUMBERS.map(|n| Numbers {
            pidmap: n.pidmap,
            pidmap_info: n.pidmap_info,
            fdmap: n.fdmap,
        }),
        version: env!("CARGO_PKG_VERSION"),
    };
    if cli.json {
        output::json(out, &doc)?;
    } else {
        let backend = doc
            .backend
            .map_or_else(|| "none".to_string(), |b| b.to_string());
        writeln!(out, "backend:        {backend}")?;
        writeln!(out, "requested:      {}", doc.requested)?;
        match support {
            Some(s) => writeln!(
                out,
                "kernel support: {} ({})",
                doc.kernel_support,
                s.reason()
            )?,
            None => writeln!(out, "kernel support: not probed (--backend procfs)")?,
        }
        writeln!(out, "reason:         {}", doc.reason)?;
        let records = match doc.info_backend {
            Some(ActiveBackend::Syscall) => "pidmap_info(2)".to_string(),
            Some(b) => format!("{b} (stat and status files)"),
            None => "unavailable".to_string(),
        };
        writeln!(out, "task records:   {records}")?;
        writeln!(
            out,
            "proc root:      {}{}",
            doc.proc_root,
            if view { "" } else { " (not a mounted procfs)" }
        )?;
        match &doc.syscall_numbers {
            Some(n) => writeln!(
                out,
                "syscalls:       pidmap = {}, pidmap_info = {}, fdmap = {}",
                n.pidmap, n.pidmap_info, n.fdmap
            )?,
            None => writeln!(out, "syscalls:       not wired on this architecture")?,
        }
    }
    out.flush()?;
    // A failure is in the report (`reason`), on stdout; it is not said
    // again on stderr, and the exit status is 1.
    Ok(built.is_ok())
}
