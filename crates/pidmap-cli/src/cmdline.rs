//! The `--args` column: a task's command line as `ps -o args` prints it,
//! read from `/proc/PID/cmdline` only when asked for.

use std::io;
use std::path::Path;

use crate::columns::Status;
use crate::tasks::TaskRow;

/// A raw `cmdline` as one line: the NUL-separated arguments joined by
/// spaces; an empty one (kernel threads, zombies) as `[comm]`, as `ps`
/// shows it.
pub fn display(raw: &[u8], comm: Option<&[u8]>) -> Vec<u8> {
    let trimmed = match raw.iter().rposition(|&b| b != 0) {
        Some(last) => &raw[..=last],
        None => &[][..],
    };
    if trimmed.is_empty() {
        let mut out = b"[".to_vec();
        out.extend_from_slice(comm.unwrap_or(b"?"));
        out.push(b']');
        return out;
    }
    trimmed
        .iter()
        .map(|&b| if b == 0 { b' ' } else { b })
        .collect()
}

/// Read the command line of each row below `proc_root`. A task that is
/// gone is `Vanished`; other failures are `Unknown` or `PermissionDenied`
/// and are returned as one warning (with the first reason).
pub fn fill(rows: &mut [TaskRow], proc_root: Option<&Path>) -> Option<String> {
    let mut failed = 0;
    let mut first_reason = None;
    for row in rows.iter_mut() {
        let comm = row.info.as_ref().and_then(|i| i.comm);
        let read = match proc_root {
            Some(root) => std::fs::read(root.join(row.id.to_string()).join("cmdline")),
            None => Err(io::Error::from(io::ErrorKind::NotFound)),
        };
        row.args = Some(match read {
            Ok(raw) => Ok(display(&raw, comm.as_ref().map(pidmap::Comm::as_bytes))),
            Err(e) => {
                let status = match e.raw_os_error() {
                    Some(libc::ENOENT | libc::ESRCH) if proc_root.is_some() => Status::Vanished,
                    Some(libc::EACCES | libc::EPERM) => Status::PermissionDenied,
                    _ => Status::Unknown,
                };
                if status != Status::Vanished {
                    failed += 1;
                    first_reason.get_or_insert_with(|| match proc_root {
                        None => "no mounted procfs".to_string(),
                        Some(_) => e.to_string(),
                    });
                }
                Err(status)
            }
        });
    }
    first_reason.map(|why| {
        format!(
            "the command lines of {failed} of {} tasks could not be read ({why}); shown as ?",
            rows.len()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn as_ps_shows_args() {
        assert_eq!(display(b"sleep\x00100\x00", Some(b"sleep")), b"sleep 100");
        // An argument with spaces, and an empty argument, as ps shows them.
        assert_eq!(
            display(b"sh\x00-c\x00a b\x00\x00x\x00", None),
            b"sh -c a b  x"
        );
        // A process that rewrote its cmdline without NULs.
        assert_eq!(
            display(b"nginx: worker process", None),
            b"nginx: worker process"
        );
        assert_eq!(display(b"", Some(b"kthreadd")), b"[kthreadd]");
        assert_eq!(display(b"\x00\x00", None), b"[?]");
    }
}
