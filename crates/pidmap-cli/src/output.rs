//! Text and JSON output: name escaping, the `--long` tables, and the JSON
//! documents (schema 2, documented in the README).

use std::fmt::Write as _;
use std::io::{self, Write};

use pidmap::TaskInfo;
use serde::Serialize;

use crate::clock;
use crate::columns::{FdRow, Status};
use crate::tasks::TaskRow;

/// Standard output, whose write errors say that they happened writing
/// the output (`writing the output: No space left on device`); the
/// error kind is kept, so a closed pipe is still told apart.
pub struct OutputWriter<W: Write>(pub W);

impl<W: Write> OutputWriter<W> {
    #[allow(
        clippy::needless_pass_by_value,
        reason = "the signature `map_err` takes: `.map_err(Self::labelled)`"
    )]
    fn labelled(e: io::Error) -> io::Error {
        io::Error::new(e.kind(), format!("writing the output: {e}"))
    }
}

impl<W: Write> Write for OutputWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf).map_err(Self::labelled)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush().map_err(Self::labelled)
    }
}

/// The version of the JSON documents; bumped on any incompatible change.
pub const SCHEMA: u32 = 2;

/// A name (comm, fd target) for a table cell, escaped so that one id is
/// always one line: printable UTF-8 as is; `\` as `\\`; newline, tab and
/// carriage return as `\n`, `\t`, `\r`; other control characters and
/// bytes that are not UTF-8 as `\xHH`.
///
/// ```
/// assert_eq!(pidmap_cli::escape(b"evil\nname) Z 1"), "evil\\nname) Z 1");
/// assert_eq!(pidmap_cli::escape(b"a\\b\xff\x1b"), "a\\\\b\\xff\\x1b");
/// ```
#[must_use]
pub fn escape(name: &[u8]) -> String {
    let mut out = String::with_capacity(name.len());
    for chunk in name.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                '\r' => out.push_str("\\r"),
                c if c.is_control() => {
                    let mut buf = [0u8; 4];
                    for b in c.encode_utf8(&mut buf).bytes() {
                        let _ = write!(out, "\\x{b:02x}");
                    }
                }
                c => out.push(c),
            }
        }
        for b in chunk.invalid() {
            let _ = write!(out, "\\x{b:02x}");
        }
    }
    out
}

/// A name as JSON: always a string, with each byte that is not UTF-8
/// replaced by U+FFFD; when that happened (only then), the exact bytes too.
pub fn json_name(raw: Option<&[u8]>) -> (Option<String>, Option<Vec<u8>>) {
    match raw {
        None => (None, None),
        Some(raw) => match std::str::from_utf8(raw) {
            Ok(s) => (Some(s.to_string()), None),
            Err(_) => (
                Some(String::from_utf8_lossy(raw).into_owned()),
                Some(raw.to_vec()),
            ),
        },
    }
}

/// A `--long` task entry in JSON: the ids, then every record field
/// (`null` when unknown).
#[derive(Debug, Serialize)]
pub struct TaskEntry {
    pub pid: i32,
    #[allow(
        clippy::option_option,
        reason = "absent from the JSON (None), null (Some(None)) or a value"
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tgid: Option<Option<i32>>,
    pub ppid: Option<i32>,
    pub state: Option<String>,
    pub comm: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comm_bytes: Option<Vec<u8>>,
    pub ruid: Option<u32>,
    pub euid: Option<u32>,
    pub nice: Option<i32>,
    pub priority: Option<i32>,
    pub policy: Option<u32>,
    pub num_threads: Option<u32>,
    pub rss_kib: Option<u64>,
    pub utime_ns: Option<u64>,
    pub stime_ns: Option<u64>,
    pub start_time_ns: Option<u64>,
    pub task_flags: Option<u32>,
    pub kernel_thread: Option<bool>,
    pub pidfs_id: Option<u64>,
    pub status: Status,
    /// With `--args`: the command line (`null` when unreadable).
    #[allow(
        clippy::option_option,
        reason = "absent from the JSON (None), null (Some(None)) or a value"
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub args: Option<Option<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub args_bytes: Option<Vec<u8>>,
}

/// Nanoseconds of a duration, for JSON.
pub fn nanos(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl TaskEntry {
    pub fn new(row: &TaskRow, with_tgid: bool) -> TaskEntry {
        let i = row.info.as_ref();
        let comm = i.and_then(|i| i.comm);
        let (comm, comm_bytes) = json_name(comm.as_ref().map(pidmap::Comm::as_bytes));
        let (args, args_bytes) = match &row.args {
            None => (None, None),
            Some(Err(_)) => (Some(None), None),
            Some(Ok(a)) => {
                let (text, bytes) = json_name(Some(a));
                (Some(text), bytes)
            }
        };
        TaskEntry {
            pid: row.id,
            tgid: with_tgid.then(|| i.and_then(|i| i.tgid).map(pidmap::Pid::as_raw)),
            ppid: i.and_then(|i| i.ppid).map(pidmap::Pid::as_raw),
            state: i.and_then(|i| i.state).map(|s| char::from(s).to_string()),
            comm,
            comm_bytes,
            ruid: i.and_then(|i| i.ruid),
            euid: i.and_then(|i| i.euid),
            nice: i.and_then(|i| i.nice),
            priority: i.and_then(|i| i.priority),
            policy: i.and_then(|i| i.policy),
            num_threads: i.and_then(|i| i.num_threads),
            rss_kib: i.and_then(TaskInfo::rss_bytes).map(|b| b / 1024),
            utime_ns: i.and_then(|i| i.utime).map(nanos),
            stime_ns: i.and_then(|i| i.stime).map(nanos),
            start_time_ns: i.and_then(|i| i.start_time).map(nanos),
            task_flags: i.and_then(|i| i.flags).map(pidmap::TaskFlags::bits),
            kernel_thread: i.and_then(TaskInfo::is_kernel_thread),
            pidfs_id: i.and_then(|i| i.pidfs_id),
            status: row.status,
            args,
            args_bytes,
        }
    }
}

/// A `--long` fd entry in JSON.
#[derive(Debug, Serialize)]
pub struct FdEntry {
    pub fd: i32,
    pub target: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_bytes: Option<Vec<u8>>,
    pub status: Status,
    /// Why the target could not be read, when it could not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl FdEntry {
    pub fn new(row: &FdRow) -> FdEntry {
        let (target, target_bytes) = json_name(row.target.as_deref());
        FdEntry {
            fd: row.fd,
            target,
            target_bytes,
            status: row.status,
            error: row.error.clone(),
        }
    }
}

/// What a cell shows when its row has no value.
/// `-` for a task under a policy other than `SCHED_OTHER` and `SCHED_BATCH`,
/// for which `ps` prints `-` too: its nice value means nothing.
pub fn nice_cell(i: Option<&TaskInfo>) -> Option<String> {
    i.filter(|i| i.nice_applies() == Some(false))
        .map(|_| "-".to_string())
}

fn missing(status: Status) -> &'static str {
    match status {
        Status::Vanished => "-",
        _ => "?",
    }
}

/// The `--long` task table: `TID TGID` (with `tgid`: tasks, threads) or
/// `PID`, then `PPID S UID NI NLWP RSS TIME START COMMAND`.
pub fn task_table(
    out: &mut dyn Write,
    rows: &[TaskRow],
    tgid: bool,
    headers: bool,
) -> io::Result<()> {
    if headers {
        if tgid {
            write!(out, "{:>8} {:>8} ", "TID", "TGID")?;
        } else {
            write!(out, "{:>8} ", "PID")?;
        }
        writeln!(
            out,
            "{:>8} S {:>5} {:>3} {:>4} {:>8} {:>8} {:>5} COMMAND",
            "PPID", "UID", "NI", "NLWP", "RSS", "TIME", "START"
        )?;
    }
    let start_column = clock::StartColumn::at(clock::epoch_now().unwrap_or(0));
    for r in rows {
        let m = missing(r.status);
        let i = r.info.as_ref();
        let cell = |v: Option<String>| v.unwrap_or_else(|| m.to_string());
        let num = |v: Option<i64>| cell(v.map(|v| v.to_string()));
        if tgid {
            let g = i.and_then(|i| i.tgid).map(|p| i64::from(p.as_raw()));
            write!(out, "{:>8} {:>8} ", r.id, num(g))?;
        } else {
            write!(out, "{:>8} ", r.id)?;
        }
        let state = cell(i.and_then(|i| i.state).map(|s| char::from(s).to_string()));
        let start = i
            .and_then(|i| i.start_time)
            .and_then(clock::since_boot_to_epoch)
            .map(|t| start_column.cell(t));
        writeln!(
            out,
            "{:>8} {} {:>5} {:>3} {:>4} {:>8} {:>8} {:>5} {}",
            num(i.and_then(|i| i.ppid).map(|p| i64::from(p.as_raw()))),
            state,
            num(i.and_then(|i| i.euid).map(i64::from)),
            nice_cell(i).unwrap_or_else(|| num(i.and_then(|i| i.nice).map(i64::from))),
            num(i.and_then(|i| i.num_threads).map(i64::from)),
            cell(
                i.and_then(TaskInfo::rss_bytes)
                    .map(|b| (b / 1024).to_string())
            ),
            match r.process_time {
                // The process exited between the task and process reads.
                Some(None) => "-".to_string(),
                _ => cell(r.time().map(clock::ps_time)),
            },
            cell(start),
            match &r.args {
                None => cell(i.and_then(|i| i.comm).map(|c| escape(c.as_bytes()))),
                Some(Ok(args)) => escape(args),
                Some(Err(status)) => missing(*status).to_string(),
            },
        )?;
    }
    Ok(())
}

/// The `--long` fd table.
pub fn fd_table(out: &mut dyn Write, rows: &[FdRow], headers: bool) -> io::Result<()> {
    if headers {
        writeln!(out, "{:>8} {:>6} TARGET", "PID", "FD")?;
    }
    for r in rows {
        let target = r
            .target
            .as_deref()
            .map_or_else(|| missing(r.status).to_string(), escape);
        writeln!(out, "{:>8} {:>6} {}", r.pid, r.fd, target)?;
    }
    Ok(())
}

/// The ids of several targets, one `TARGET ID` pair a line, under a
/// heading (`PID TID`, `PPID PID`, `PID FD`).
pub fn labelled_ids(
    out: &mut dyn Write,
    heading: [&str; 2],
    pairs: &[(i32, i32)],
    headers: bool,
) -> io::Result<()> {
    if headers {
        writeln!(out, "{:>8} {:>8}", heading[0], heading[1])?;
    }
    for (target, id) in pairs {
        writeln!(out, "{target:>8} {id:>8}")?;
    }
    Ok(())
}

/// Write one pretty JSON document and a newline; a closed pipe stays an
/// `io::Error` of kind `BrokenPipe`.
pub fn json(out: &mut dyn Write, doc: &impl Serialize) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, doc).map_err(io::Error::from)?;
    writeln!(out)
}

/// Write one compact JSON document on one line (streams of documents).
pub fn json_line(out: &mut dyn Write, doc: &impl Serialize) -> io::Result<()> {
    serde_json::to_writer(&mut *out, doc).map_err(io::Error::from)?;
    writeln!(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_columns_keep_their_row() {
        let rows = [
            TaskRow {
                id: 77,
                info: None,
                status: Status::Unknown,
                args: None,
                process_time: None,
            },
            TaskRow {
                id: 78,
                info: None,
                status: Status::Vanished,
                args: None,
                process_time: None,
            },
        ];
        let mut out = Vec::new();
        task_table(&mut out, &rows, true, true).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<Vec<&str>> = text
            .lines()
            .map(|l| l.split_whitespace().collect())
            .collect();
        assert_eq!(lines.len(), 3, "{text:?}");
        assert_eq!(lines[0].len(), 11);
        assert!(lines[1..].iter().all(|l| l.len() == 11), "{text:?}");
        assert_eq!(lines[1][0], "77");
        assert!(lines[1][1..].iter().all(|c| *c == "?"), "{text:?}");
        assert!(lines[2][1..].iter().all(|c| *c == "-"), "{text:?}");
        let v = serde_json::to_value(TaskEntry::new(&rows[0], false)).unwrap();
        assert!(v["comm"].is_null() && v["ppid"].is_null() && v.get("tgid").is_none());
        assert_eq!(v["status"], "unknown");
    }

    /// NI is `-` where the policy says nice does not apply (as ps shows
    /// it), the value under `SCHED_OTHER`/`SCHED_BATCH`, `?` when unknown;
    /// JSON keeps the raw value with the policy, and the fields the records add.
    #[test]
    fn nice_column_follows_the_policy() {
        let mut rt = TaskInfo::new(pidmap::Pid::from_raw(5));
        rt.nice = Some(0);
        rt.policy = Some(libc::SCHED_FIFO.unsigned_abs());
        rt.priority = Some(-2);
        rt.flags = Some(pidmap::TaskFlags::KTHREAD);
        rt.pidfs_id = Some(1 << 32);
        let mut batch = TaskInfo::new(pidmap::Pid::from_raw(6));
        batch.nice = Some(5);
        batch.policy = Some(libc::SCHED_BATCH.unsigned_abs());
        let mut unknown = TaskInfo::new(pidmap::Pid::from_raw(7));
        unknown.nice = None;
        let rows: Vec<TaskRow> = [rt, batch, unknown]
            .into_iter()
            .map(|i| TaskRow {
                id: i.tid.as_raw(),
                info: Some(i),
                status: Status::Ok,
                args: None,
                process_time: None,
            })
            .collect();
        let mut out = Vec::new();
        task_table(&mut out, &rows, false, true).unwrap();
        let text = String::from_utf8(out).unwrap();
        let ni: Vec<&str> = text
            .lines()
            .skip(1)
            .map(|l| l.split_whitespace().nth(4).unwrap())
            .collect();
        assert_eq!(ni, ["-", "5", "?"], "{text}");
        let v = serde_json::to_value(TaskEntry::new(&rows[0], false)).unwrap();
        assert_eq!(
            (&v["nice"], &v["policy"], &v["priority"]),
            (
                &serde_json::json!(0),
                &serde_json::json!(1),
                &serde_json::json!(-2)
            )
        );
        assert_eq!(v["task_flags"], 1);
        assert_eq!(v["kernel_thread"], true);
        assert_eq!(v["pidfs_id"], 1u64 << 32);
        assert!(v.get("flags").is_none(), "schema 2 has no PF_* flags");
    }

    #[test]
    fn json_names_keep_invalid_bytes() {
        assert_eq!(json_name(Some(b"ok")), (Some("ok".into()), None));
        assert_eq!(
            json_name(Some(b"a\xffb")),
            (Some("a\u{fffd}b".into()), Some(vec![97, 255, 98]))
        );
    }

    #[test]
    fn escape_rules() {
        assert_eq!(escape("héllo wörld".as_bytes()), "héllo wörld");
        assert_eq!(escape(b"\t\r\x7f"), "\\t\\r\\x7f");
        assert_eq!(escape("\u{85}".as_bytes()), "\\xc2\\x85");
    }
}
