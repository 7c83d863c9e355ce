//! `pidmap top`: every task, sorted by the CPU time it used since the
//! previous refresh, one table (or one JSON line) per refresh, as
//! `top -b` prints. The first refresh compares with a sample taken one
//! interval earlier, so even `-n 1` shows real deltas.

use std::collections::HashMap;
use std::io::Write;
use std::time::{Duration, Instant};

use anyhow::Result;
use pidmap::{ActiveBackend, InfoFields, Pidmap, Query, TaskInfo};
use serde::Serialize;

use crate::clock;
use crate::output::{self, escape, json_name, nanos, SCHEMA};
use crate::top::model::{self, StateCounts};
use crate::unlisted;

/// What a refresh needs of each task.
const FIELDS: InfoFields = InfoFields::TGID
    .union(InfoFields::STATE)
    .union(InfoFields::CPU_TIME)
    .union(InfoFields::START_TIME)
    .union(InfoFields::COMM);

/// How `top` runs.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    pub interval: Duration,
    /// `None`: until interrupted.
    pub iterations: Option<u32>,
    /// One compact JSON document per refresh, one per line.
    pub json: bool,
    /// Read the uids too (for a `-u` filter).
    pub uids: bool,
}

/// A task's CPU time at the previous sample, keyed by tid; the start time
/// tells a reused tid from the same task.
type Sample = HashMap<i32, (Option<Duration>, Duration)>;

/// One task of a refresh.
struct Row {
    info: TaskInfo,
    delta: Duration,
}

/// Run batch refreshes of the tasks of `q` that `keep` keeps.
pub fn run(
    mut pm: Pidmap,
    q: Query<'_>,
    opts: Options,
    keep: &dyn Fn(&TaskInfo) -> bool,
    out: &mut dyn Write,
) -> Result<()> {
    let fields = if opts.uids {
        FIELDS.union(InfoFields::UIDS)
    } else {
        FIELDS
    };
    let mut infos = Vec::new();
    pm.fill_info(q, fields, &mut infos)?;
    infos.retain(keep);
    let mut prev = sample(&infos);
    let mut prev_at = Instant::now();
    let mut iteration = 0u32;
    while opts.iterations.is_none_or(|n| iteration < n) {
        iteration += 1;
        std::thread::sleep(opts.interval);
        pm.fill_info(q, fields, &mut infos)?;
        let now = Instant::now();
        let tids: Vec<i32> = infos.iter().map(|i| i.tid.as_raw()).collect();
        if let Some(w) = unlisted::left_out(&mut pm, &tids)?.warning() {
            crate::report::warn(&format!("refresh {iteration}: {w}"));
        }
        let counts = StateCounts::of(infos.iter().map(model::state_letter));
        infos.retain(keep);
        let elapsed = now - prev_at;
        let rows = rank(&infos, &prev);
        let via = pm.info_backend()?;
        if opts.json {
            json_refresh(out, &pm, via, iteration, opts.interval, elapsed, &rows)?;
        } else {
            table(out, via, elapsed, &counts, &rows)?;
        }
        out.flush()?;
        prev = sample(&infos);
        prev_at = now;
    }
    Ok(())
}

fn sample(infos: &[TaskInfo]) -> Sample {
    infos
        .iter()
        .map(|i| {
            let cpu = i.cpu_time().unwrap_or_default();
            (i.tid.as_raw(), (i.start_time, cpu))
        })
        .collect()
}

/// The CPU time each task used since `prev` (all of it for a task that is
/// new since then), largest first, then by tid.
fn rank(infos: &[TaskInfo], prev: &Sample) -> Vec<Row> {
    let mut rows: Vec<Row> = infos
        .iter()
        .map(|info| {
            let cpu = info.cpu_time().unwrap_or_default();
            let delta = match prev.get(&info.tid.as_raw()) {
                Some(&(start, before)) if start == info.start_time => cpu.saturating_sub(before),
                _ => cpu,
            };
            Row { info: *info, delta }
        })
        .collect();
    rows.sort_by(|a, b| b.delta.cmp(&a.delta).then(a.info.tid.cmp(&b.info.tid)));
    rows
}

/// The share of one CPU a delta is over `elapsed`, in percent.
fn percent(delta: Duration, elapsed: Duration) -> f64 {
    if elapsed.is_zero() {
        return 0.0;
    }
    delta.as_secs_f64() * 100.0 / elapsed.as_secs_f64()
}

/// The batch table. Its `Tasks:` line counts every task listed, before
/// `-p` and `-u`, by the same rule as the interactive header (procps top's:
/// D and I are sleeping, t is stopped); `shown` is how many rows follow.
fn table(
    out: &mut dyn Write,
    via: ActiveBackend,
    elapsed: Duration,
    counts: &StateCounts,
    rows: &[Row],
) -> Result<()> {
    let now = clock::epoch_now().map_or_else(|| "?".into(), clock::clock_time);
    let c = counts;
    writeln!(
        out,
        "pidmap top - {now}, Tasks: {} total, {} running, {} sleeping, {} stopped, {} zombie; \
         {} shown; {:.2} s interval, records via {via}",
        c.total,
        c.running,
        c.sleeping,
        c.stopped,
        c.zombie,
        rows.len(),
        elapsed.as_secs_f64()
    )?;
    writeln!(
        out,
        "{:>8} {:>8} S {:>6} {:>10} COMMAND",
        "TID", "TGID", "%CPU", "TIME+"
    )?;
    for r in rows {
        let i = &r.info;
        let tgid = i
            .tgid
            .map_or_else(|| "?".into(), |p| p.as_raw().to_string());
        writeln!(
            out,
            "{:>8} {:>8} {} {:>6.1} {:>10} {}",
            i.tid,
            tgid,
            i.state.map_or('?', char::from),
            percent(r.delta, elapsed),
            i.cpu_time().map_or_else(|| "?".into(), clock::top_time),
            i.comm.map_or_else(|| "?".into(), |c| escape(c.as_bytes())),
        )?;
    }
    writeln!(out)?;
    Ok(())
}

#[derive(Serialize)]
struct RefreshDoc {
    schema: u32,
    command: &'static str,
    backend: ActiveBackend,
    info_backend: ActiveBackend,
    iteration: u32,
    interval_s: f64,
    elapsed_ns: u64,
    count: usize,
    tasks: Vec<TopEntry>,
}

#[derive(Serialize)]
struct TopEntry {
    tid: i32,
    tgid: Option<i32>,
    state: Option<String>,
    comm: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    comm_bytes: Option<Vec<u8>>,
    cpu_delta_ns: u64,
    cpu_percent: f64,
    utime_ns: Option<u64>,
    stime_ns: Option<u64>,
}

fn json_refresh(
    out: &mut dyn Write,
    pm: &Pidmap,
    via: ActiveBackend,
    iteration: u32,
    interval: Duration,
    elapsed: Duration,
    rows: &[Row],
) -> Result<()> {
    let tasks = rows
        .iter()
        .map(|r| {
            let i = &r.info;
            let (comm, comm_bytes) = json_name(i.comm.as_ref().map(pidmap::Comm::as_bytes));
            TopEntry {
                tid: i.tid.as_raw(),
                tgid: i.tgid.map(pidmap::Pid::as_raw),
                state: i.state.map(|s| char::from(s).to_string()),
                comm,
                comm_bytes,
                cpu_delta_ns: nanos(r.delta),
                cpu_percent: percent(r.delta, elapsed),
                utime_ns: i.utime.map(nanos),
                stime_ns: i.stime.map(nanos),
            }
        })
        .collect();
    let doc = RefreshDoc {
        schema: SCHEMA,
        command: "top",
        backend: pm.active(),
        info_backend: via,
        iteration,
        interval_s: interval.as_secs_f64(),
        elapsed_ns: nanos(elapsed),
        count: rows.len(),
        tasks,
    };
    output::json_line(out, &doc)?;
    Ok(())
}
