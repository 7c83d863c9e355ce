//! `pidmap threads`, `pidmap children` and `pidmap fds`: the listings of
//! given processes, as ids, labelled ids or `--long` rows, and their
//! JSON document with a status per target.

use std::io::Write;

use anyhow::Result;
use pidmap::{ActiveBackend, Pid, Query, Target};
use serde::Serialize;

use crate::args::{Cli, Columns, PidArg};
use crate::backend::open;
use crate::columns::{self, Reader};
use crate::error::{error_status, with_causes};
use crate::listing::{task_rows, warn_no_proc};
use crate::output::{self, SCHEMA};
use crate::report::warn;

/// A targeted listing.
#[derive(Debug, Clone, Copy)]
pub enum What {
    Threads(bool),
    Children(bool),
    Fds,
}

impl What {
    pub fn name(self) -> &'static str {
        match self {
            What::Threads(_) => "threads",
            What::Children(_) => "children",
            What::Fds => "fds",
        }
    }
}

#[derive(Serialize)]
struct TargetDoc {
    target: String,
    pid: i32,
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    count: usize,
    ids: Vec<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    entries: Option<serde_json::Value>,
}

#[derive(Serialize)]
struct TargetedDoc {
    schema: u32,
    command: &'static str,
    backend: ActiveBackend,
    targets: Vec<TargetDoc>,
}

#[allow(
    clippy::too_many_lines,
    reason = "one loop over the targets collects the documents and rows that the output after it reads"
)]
/// A targeted listing of each of `pids`.
pub fn run(
    cli: &Cli,
    what: What,
    pids: &[PidArg],
    columns: Columns,
    out: &mut dyn Write,
) -> Result<bool> {
    let mut pm = open(cli)?;
    let reader = Reader::new(pm.proc_root());
    if columns.long && matches!(what, What::Fds) && !reader.available() {
        warn_no_proc(cli, 0);
    }
    let mut all_ok = true;
    let mut docs = Vec::new();
    let mut task_rows_all = Vec::new();
    let mut fd_rows_all = Vec::new();
    let mut plain = Vec::new();
    for &arg in pids {
        let (target, pid) = match arg {
            PidArg::Myself => (Target::Caller, Pid::this_process()),
            PidArg::Pid(p) => (Target::Pid(p), p),
        };
        let mut ids: Vec<i32> = Vec::new();
        let mut rows = None;
        let r = match what {
            What::Threads(k) | What::Children(k) => {
                let q = if matches!(what, What::Threads(_)) {
                    Query::threads(target)
                } else {
                    Query::children(target)
                };
                let q = if k { q.without_kthreads() } else { q };
                if columns.long {
                    task_rows(cli, &mut pm, q, columns.args).map(|r| {
                        ids = r.ids();
                        rows = Some(r);
                    })
                } else {
                    let mut v = Vec::new();
                    pm.fill(q, &mut v)
                        .map(|()| ids = v.into_iter().map(i32::from).collect())
                }
            }
            What::Fds => pm.fill_fds(target, &mut ids),
        };
        let mut doc = TargetDoc {
            target: arg.spelling(),
            pid: pid.as_raw(),
            status: "ok",
            error: None,
            count: 0,
            ids: Vec::new(),
            entries: None,
        };
        if let Err(e) = r {
            let line = with_causes(&e);
            eprintln!("pidmap: {line}");
            doc.status = error_status(&e);
            doc.error = Some(line);
            all_ok = false;
            docs.push(doc);
            continue;
        }
        if columns.long {
            match what {
                What::Fds => {
                    // The caller's fds are the calling thread's table.
                    let dir = match arg {
                        PidArg::Myself => "thread-self".to_string(),
                        PidArg::Pid(p) => p.to_string(),
                    };
                    let rows: Vec<_> = ids
                        .iter()
                        .map(|&fd| reader.fd(&dir, pid.as_raw(), fd))
                        .collect();
                    if reader.available() {
                        if let Some(w) = columns::unreadable_targets(pid.as_raw(), &rows) {
                            warn(&w);
                        }
                    }
                    let entries: Vec<_> = rows.iter().map(output::FdEntry::new).collect();
                    doc.entries = Some(serde_json::to_value(entries)?);
                    fd_rows_all.extend(rows);
                }
                What::Threads(_) | What::Children(_) => {
                    let tgid = matches!(what, What::Threads(_));
                    let rows = rows.map(|r| r.rows).unwrap_or_default();
                    let entries: Vec<_> = rows
                        .iter()
                        .map(|r| output::TaskEntry::new(r, tgid))
                        .collect();
                    doc.entries = Some(serde_json::to_value(entries)?);
                    task_rows_all.extend(rows);
                }
            }
        }
        doc.count = ids.len();
        plain.extend(ids.iter().map(|&id| (pid.as_raw(), id)));
        doc.ids = ids;
        docs.push(doc);
    }
    // Every target failed (each said why on stderr): no table header
    // above nothing.
    let any_listed = docs.iter().any(|d| d.status == "ok");
    if cli.json {
        let doc = TargetedDoc {
            schema: SCHEMA,
            command: what.name(),
            backend: pm.active(),
            targets: docs,
        };
        output::json(out, &doc)?;
    } else if !any_listed {
    } else if columns.long {
        match what {
            What::Fds => output::fd_table(out, &fd_rows_all, !columns.no_headers)?,
            What::Threads(_) => output::task_table(out, &task_rows_all, true, !columns.no_headers)?,
            What::Children(_) => {
                output::task_table(out, &task_rows_all, false, !columns.no_headers)?;
            }
        }
    } else if pids.len() > 1 {
        // Several targets: say whose each id is.
        let heading = match what {
            What::Threads(_) => ["PID", "TID"],
            What::Children(_) => ["PPID", "PID"],
            What::Fds => ["PID", "FD"],
        };
        output::labelled_ids(out, heading, &plain, !columns.no_headers)?;
    } else {
        for (_, id) in plain {
            writeln!(out, "{id}")?;
        }
    }
    out.flush()?;
    Ok(all_ok)
}
