//! The per-task values the task records do not carry, read from the same
//! `/proc` files process-exporter reads them from:
//!
//! - `stat`: minor and major page faults, virtual size;
//! - `status`: voluntary and involuntary context switches, `VmSwap`;
//! - `io`: `read_bytes` and `write_bytes` (the storage layer's bytes, as
//!   process-exporter reports them, not `rchar`/`wchar`);
//! - `wchan`: where a sleeping task waits (`0` or empty: not waiting);
//! - `smaps_rollup`: `Pss` and `SwapPss` (only with `-gather-smaps`).
//!
//! Only the files the enabled families need are read. Each file is kept
//! open from one scrape to the next and read again with `pread(2)` at
//! offset 0 (a `/proc` file regenerates its text on every read from the
//! start), so a scrape costs one system call per file rather than an
//! open, a read and a close. The kept files are capped (a quarter of the
//! soft `RLIMIT_NOFILE`: the task records keep files too); beyond the cap
//! a file is opened, read and closed each time.

use std::collections::HashMap;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

use crate::read_error::ReadError;

/// Which files to read for a task.
#[allow(
    clippy::struct_excessive_bools,
    reason = "one switch per file, each independent"
)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Wants {
    pub stat: bool,
    pub status: bool,
    pub io: bool,
    pub wchan: bool,
    pub smaps: bool,
}

/// What the files said; a value whose file was not read (or could not
/// be) is 0 (`None` for the wait channel).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extras {
    pub minor_faults: u64,
    pub major_faults: u64,
    pub virtual_bytes: u64,
    pub swap_bytes: u64,
    pub voluntary_switches: u64,
    pub involuntary_switches: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// The symbol the task waits in; `None` when it does not wait.
    pub wchan: Option<String>,
    pub pss_bytes: u64,
    pub swap_pss_bytes: u64,
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Kind {
    Stat,
    Status,
    Io,
    Wchan,
    Smaps,
}

impl Kind {
    fn file(self) -> &'static str {
        match self {
            Kind::Stat => "stat",
            Kind::Status => "status",
            Kind::Io => "io",
            Kind::Wchan => "wchan",
            Kind::Smaps => "smaps_rollup",
        }
    }
}

/// The files kept open for one task.
#[derive(Default)]
struct TaskFiles {
    seen: u64,
    files: Vec<(Kind, File)>,
}

/// Reads [`Extras`], keeping files between scrapes.
pub struct ExtrasReader {
    kept: HashMap<(i32, i32), TaskFiles>,
    kept_count: usize,
    max_kept: usize,
    scrape: u64,
    buf: Vec<u8>,
}

/// The outcome of reading one file.
enum Read {
    /// This many bytes of text in the buffer.
    Text(usize),
    Gone,
}

impl ExtrasReader {
    pub fn new() -> ExtrasReader {
        ExtrasReader {
            kept: HashMap::new(),
            kept_count: 0,
            max_kept: kept_budget(),
            scrape: 0,
            buf: vec![0; 4096],
        }
    }

    /// Start a scrape: files of tasks not read since the last call to
    /// [`ExtrasReader::end_scrape`] are closed there.
    pub fn begin_scrape(&mut self) {
        self.scrape += 1;
    }

    /// Close the files of tasks this scrape did not read.
    pub fn end_scrape(&mut self) {
        let scrape = self.scrape;
        let mut closed = 0;
        self.kept.retain(|_, t| {
            let keep = t.seen == scrape;
            if !keep {
                closed += t.files.len();
            }
            keep
        });
        self.kept_count -= closed;
    }

    /// Read what `wants` asks for about task `tid` of process `tgid` (the
    /// process itself when `tid == tgid` and `thread` is false). `Ok(false)`:
    /// the task is gone. A file that cannot be read for another reason
    /// leaves its values at 0 and adds an error to `errors`.
    #[allow(
        clippy::similar_names,
        reason = "tgid and tid are the kernel's names for the two ids"
    )]
    pub fn read(
        &mut self,
        tgid: i32,
        tid: i32,
        thread: bool,
        wants: Wants,
        out: &mut Extras,
        errors: &mut Vec<ReadError>,
    ) -> bool {
        *out = Extras::default();
        let kinds = [
            (wants.stat, Kind::Stat),
            (wants.status, Kind::Status),
            (wants.io, Kind::Io),
            (wants.wchan, Kind::Wchan),
            (wants.smaps, Kind::Smaps),
        ];
        // Threads and processes are kept apart: a thread's file says what
        // that thread did, a process's what the whole group did.
        let key = (tgid, if thread { tid } else { -tid });
        for (wanted, kind) in kinds {
            if !wanted {
                continue;
            }
            match self.read_file(key, tgid, tid, thread, kind) {
                Ok(Read::Text(n)) => parse(kind, &String::from_utf8_lossy(&self.buf[..n]), out),
                Ok(Read::Gone) => return false,
                Err(e) => errors.push(e),
            }
        }
        true
    }

    /// Read one file into `self.buf`, from a kept file if there is one.
    #[allow(
        clippy::similar_names,
        reason = "tgid and tid are the kernel's names for the two ids"
    )]
    fn read_file(
        &mut self,
        key: (i32, i32),
        tgid: i32,
        tid: i32,
        thread: bool,
        kind: Kind,
    ) -> Result<Read, ReadError> {
        let failed = |e: &io::Error| ReadError::from_io(kind.file(), &format!(" of {tid}"), e);
        let task = self.kept.entry(key).or_default();
        task.seen = self.scrape;
        if let Some(i) = task.files.iter().position(|(k, _)| *k == kind) {
            match pread_whole(&task.files[i].1, &mut self.buf) {
                Ok(n) => return Ok(Read::Text(n)),
                // The task is gone, or its number now names another task
                // (a kept file names the task it was opened for): open the
                // path again.
                Err(e) if is_gone(&e) => {
                    task.files.swap_remove(i);
                    self.kept_count -= 1;
                }
                Err(e) => return Err(failed(&e)),
            }
        }
        let path = if thread {
            format!("/proc/{tgid}/task/{tid}/{}", kind.file())
        } else {
            format!("/proc/{tid}/{}", kind.file())
        };
        let file = match File::open(&path) {
            Ok(f) => f,
            Err(e) if is_gone(&e) => return Ok(Read::Gone),
            Err(e) => return Err(failed(&e)),
        };
        let n = match pread_whole(&file, &mut self.buf) {
            Ok(n) => n,
            Err(e) if is_gone(&e) => return Ok(Read::Gone),
            Err(e) => return Err(failed(&e)),
        };
        if self.kept_count < self.max_kept {
            task.files.push((kind, file));
            self.kept_count += 1;
        }
        Ok(Read::Text(n))
    }
}

/// Read a whole `/proc` file from offset 0, growing `buf` until the text
/// fits; the text's length.
fn pread_whole(file: &File, buf: &mut Vec<u8>) -> io::Result<usize> {
    loop {
        let n = file.read_at(buf, 0)?;
        if n < buf.len() {
            return Ok(n);
        }
        let len = buf.len() * 2;
        buf.resize(len, 0);
    }
}

/// How many files the extras may keep: a quarter of the soft limit.
fn kept_budget() -> usize {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `limit` is a valid, writable rlimit.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, std::ptr::from_mut(&mut limit)) } != 0 {
        return 0;
    }
    usize::try_from(limit.rlim_cur / 4).unwrap_or(usize::MAX)
}

fn is_gone(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ESRCH))
}

/// Fill `out` from one file's text.
fn parse(kind: Kind, text: &str, out: &mut Extras) {
    match kind {
        Kind::Stat => {
            // Fields after the comm's closing parenthesis, from field 3
            // (state): minflt is field 10, majflt 12, vsize 23.
            if let Some((_, rest)) = text.rsplit_once(')') {
                let fields: Vec<&str> = rest.split_ascii_whitespace().collect();
                let at = |n: usize| fields.get(n - 3).and_then(|v| v.parse().ok());
                out.minor_faults = at(10).unwrap_or(0);
                out.major_faults = at(12).unwrap_or(0);
                out.virtual_bytes = at(23).unwrap_or(0);
            }
        }
        Kind::Status => {
            for line in text.lines() {
                if let Some(v) = line.strip_prefix("voluntary_ctxt_switches:") {
                    out.voluntary_switches = number(v);
                } else if let Some(v) = line.strip_prefix("nonvoluntary_ctxt_switches:") {
                    out.involuntary_switches = number(v);
                } else if let Some(v) = line.strip_prefix("VmSwap:") {
                    out.swap_bytes = kib(v);
                }
            }
        }
        Kind::Io => {
            for line in text.lines() {
                if let Some(v) = line.strip_prefix("read_bytes:") {
                    out.read_bytes = number(v);
                } else if let Some(v) = line.strip_prefix("write_bytes:") {
                    out.write_bytes = number(v);
                }
            }
        }
        Kind::Wchan => {
            let w = text.trim();
            out.wchan = (!w.is_empty() && w != "0").then(|| w.to_owned());
        }
        Kind::Smaps => {
            for line in text.lines() {
                if let Some(v) = line.strip_prefix("Pss:") {
                    out.pss_bytes = kib(v);
                } else if let Some(v) = line.strip_prefix("SwapPss:") {
                    out.swap_pss_bytes = kib(v);
                }
            }
        }
    }
}

fn number(v: &str) -> u64 {
    v.trim().parse().unwrap_or(0)
}

/// "   123 kB" in bytes.
fn kib(v: &str) -> u64 {
    v.split_ascii_whitespace()
        .next()
        .and_then(|n| n.parse::<u64>().ok())
        .map_or(0, |n| n.saturating_mul(1024))
}
