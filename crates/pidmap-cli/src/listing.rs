//! `pidmap procs` and `pidmap tasks`: every process or task of the view,
//! as ids or `--long` rows, and their JSON document; also the `--long`
//! rows the targeted listings print.

use std::io::Write;
use std::path::Path;

use anyhow::Result;
use pidmap::{ActiveBackend, Error as PmError, Pidmap, Query};
use serde::Serialize;

use crate::args::{Cli, Columns, Kthreads};
use crate::backend::{open, proc_root};
use crate::cmdline;
use crate::output::{self, SCHEMA};
use crate::report::warn;
use crate::tasks::{self, TaskRows};
use crate::unlisted;

/// `q`, without kernel threads when `--no-kthreads` says so.
pub fn with_kthreads(q: Query<'_>, k: Kthreads) -> Query<'_> {
    if k.no_kthreads {
        q.without_kthreads()
    } else {
        q
    }
}

/// The `--long` rows of `q`, warning when columns cannot be read; every
/// id keeps its row. With `args`, the command lines too.
pub fn task_rows(
    cli: &Cli,
    pm: &mut Pidmap,
    q: Query<'_>,
    args: bool,
) -> Result<TaskRows, PmError> {
    let mut rows = tasks::read(pm, q)?;
    if args {
        let root = pm.proc_root().map(Path::to_path_buf);
        if let Some(w) = cmdline::fill(&mut rows.rows, root.as_deref()) {
            warn(&w);
        }
    }
    let unknown = rows.unknown();
    if rows.info_backend.is_none() {
        warn_no_proc(cli, rows.rows.len());
    } else if unknown > 0 {
        warn(&format!(
            "the columns of {unknown} of {} tasks could not be read (shown as ?)",
            rows.rows.len()
        ));
    }
    Ok(rows)
}

pub fn warn_no_proc(cli: &Cli, ids: usize) {
    warn(&format!(
        "{} is not a mounted procfs: listing {ids} ids with unknown columns (shown as ?)",
        proc_root(cli).display()
    ));
}

#[derive(Serialize)]
struct ListingDoc<E: Serialize> {
    schema: u32,
    command: &'static str,
    backend: ActiveBackend,
    /// With `--long`: where the columns came from (`null`: unknown).
    #[allow(
        clippy::option_option,
        reason = "absent from the JSON (None), null (Some(None)) or a value"
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    info_backend: Option<Option<ActiveBackend>>,
    count: usize,
    ids: Vec<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    entries: Option<Vec<E>>,
}

/// `pidmap procs` (`name` "procs") or `pidmap tasks` ("tasks").
pub fn run(
    cli: &Cli,
    name: &'static str,
    q: Query<'_>,
    columns: Columns,
    out: &mut dyn Write,
) -> Result<bool> {
    let mut pm = open(cli)?;
    let tgid = name == "tasks";
    let (ids, rows) = if columns.long {
        let rows = task_rows(cli, &mut pm, q, columns.args)?;
        (rows.ids(), Some(rows))
    } else {
        let mut ids = Vec::new();
        pm.fill(q, &mut ids)?;
        (ids.into_iter().map(i32::from).collect::<Vec<i32>>(), None)
    };
    if tgid {
        // Every task: say so if the view kept some processes' tasks back.
        if let Some(w) = unlisted::left_out(&mut pm, &ids)?.warning() {
            warn(&w);
        }
    }
    if cli.json {
        let doc = ListingDoc {
            schema: SCHEMA,
            command: name,
            backend: pm.active(),
            info_backend: rows.as_ref().map(|r| r.info_backend),
            count: ids.len(),
            entries: rows.as_ref().map(|rows| {
                rows.rows
                    .iter()
                    .map(|r| output::TaskEntry::new(r, tgid))
                    .collect()
            }),
            ids,
        };
        output::json(out, &doc)?;
    } else if let Some(rows) = rows {
        output::task_table(out, &rows.rows, tgid, !columns.no_headers)?;
    } else {
        for id in ids {
            writeln!(out, "{id}")?;
        }
    }
    out.flush()?;
    Ok(true)
}
