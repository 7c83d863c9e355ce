//! Text and JSON output: name escaping, the `--long` tables, and the JSON
//! documents (schema 1, documented in the README).

use std::io::{self, Write};

use serde::Serialize;

use crate::columns::{FdRow, Status, TaskRow};

/// The version of the JSON documents; bumped on any incompatible change.
pub const SCHEMA: u32 = 1;

/// A name (comm, fd target) for a table cell, escaped so that one id is
/// always one line: printable UTF-8 as is; `\` as `\\`; newline, tab and
/// carriage return as `\n`, `\t`, `\r`; other control characters and
/// bytes that are not UTF-8 as `\xHH`.
///
/// ```
/// assert_eq!(pidmap_cli::escape(b"evil\nname) Z 1"), "evil\\nname) Z 1");
/// assert_eq!(pidmap_cli::escape(b"a\\b\xff\x1b"), "a\\\\b\\xff\\x1b");
/// ```
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
                        out.push_str(&format!("\\x{b:02x}"));
                    }
                }
                c => out.push(c),
            }
        }
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
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

/// A `--long` task entry in JSON.
#[derive(Debug, Serialize)]
pub struct TaskEntry {
    pub pid: i32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tgid: Option<Option<i32>>,
    pub ppid: Option<i32>,
    pub state: Option<String>,
    pub comm: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comm_bytes: Option<Vec<u8>>,
    pub status: Status,
}

impl TaskEntry {
    pub fn new(row: &TaskRow, with_tgid: bool) -> TaskEntry {
        let (comm, comm_bytes) = json_name(row.comm.as_deref());
        TaskEntry {
            pid: row.id,
            tgid: with_tgid.then_some(row.tgid),
            ppid: row.ppid,
            state: row.state.map(|s| char::from(s).to_string()),
            comm,
            comm_bytes,
            status: row.status,
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
}

impl FdEntry {
    pub fn new(row: &FdRow) -> FdEntry {
        let (target, target_bytes) = json_name(row.target.as_deref());
        FdEntry {
            fd: row.fd,
            target,
            target_bytes,
            status: row.status,
        }
    }
}

/// What a cell shows when its row has no value.
fn missing(status: Status) -> &'static str {
    match status {
        Status::Vanished => "-",
        _ => "?",
    }
}

/// The `--long` task table. `tgid`: with the TGID column (tasks,
/// threads).
pub fn task_table(
    out: &mut dyn Write,
    rows: &[TaskRow],
    tgid: bool,
    headers: bool,
) -> io::Result<()> {
    if headers {
        if tgid {
            writeln!(out, "{:>8} {:>8} {:>8} S COMMAND", "TID", "TGID", "PPID")?;
        } else {
            writeln!(out, "{:>8} {:>8} S COMMAND", "PID", "PPID")?;
        }
    }
    for r in rows {
        let m = missing(r.status);
        let cell = |v: Option<i32>| v.map_or_else(|| m.to_string(), |v| v.to_string());
        let state = r
            .state
            .map_or_else(|| m.to_string(), |s| char::from(s).to_string());
        let comm = r.comm.as_deref().map_or_else(|| m.to_string(), escape);
        if tgid {
            writeln!(
                out,
                "{:>8} {:>8} {:>8} {} {}",
                r.id,
                cell(r.tgid),
                cell(r.ppid),
                state,
                comm
            )?;
        } else {
            writeln!(out, "{:>8} {:>8} {} {}", r.id, cell(r.ppid), state, comm)?;
        }
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

/// Write one pretty JSON document and a newline; a closed pipe stays an
/// `io::Error` of kind `BrokenPipe`.
pub fn json(out: &mut dyn Write, doc: &impl Serialize) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, doc).map_err(io::Error::from)?;
    writeln!(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_newline_in_a_name_never_makes_two_rows() {
        let rows = [TaskRow {
            id: 77,
            tgid: None,
            ppid: Some(1),
            state: Some(b'S'),
            comm: Some(b"evil\nname) Z 1".to_vec()),
            status: Status::Ok,
        }];
        let mut out = Vec::new();
        task_table(&mut out, &rows, false, false).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.lines().count(), 1, "{text:?}");
        assert!(text.contains("evil\\nname) Z 1"), "{text:?}");
    }

    #[test]
    fn json_names_keep_invalid_bytes() {
        assert_eq!(json_name(Some(b"ok")), (Some("ok".into()), None));
        assert_eq!(
            json_name(Some(b"a\xffb")),
            (Some("a\u{fffd}b".into()), Some(vec![97, 255, 98]))
        );
        let row = TaskRow {
            id: 5,
            tgid: None,
            ppid: None,
            state: None,
            comm: Some(b"x\xfe".to_vec()),
            status: Status::Ok,
        };
        let v = serde_json::to_value(TaskEntry::new(&row, false)).unwrap();
        assert!(v["comm"].is_string());
        assert_eq!(v["comm_bytes"], serde_json::json!([120, 254]));
        assert!(v.get("tgid").is_none());
    }

    #[test]
    fn escape_rules() {
        assert_eq!(escape("héllo wörld".as_bytes()), "héllo wörld");
        assert_eq!(escape(b"\t\r\x7f"), "\\t\\r\\x7f");
        assert_eq!(escape("\u{85}".as_bytes()), "\\xc2\\x85");
    }
}
