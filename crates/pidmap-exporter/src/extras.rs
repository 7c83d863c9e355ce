//! The per-task values the task records do not carry, read from the same
//! `/proc` files process-exporter reads them from:
//!
//! - `stat`: virtual size (and the page faults, for a record without
//!   them);
//! - `status`: `VmSwap` (and the context switches, for a record without
//!   them: the fallback's records leave them out, as reading `status` for
//!   every task would cost twice what `stat` does);
//! - `io`: `read_bytes` and `write_bytes` (the storage layer's bytes, as
//!   process-exporter reports them, not `rchar`/`wchar`);
//! - `wchan`: where a sleeping task waits (`0` or empty: not waiting);
//! - `smaps_rollup`: `Pss` and `SwapPss` (only with `-gather-smaps`).
//!
//! Only the files the enabled families need are read. Each file is kept
//! open from one scrape to the next and read again with `pread(2)` at
//! offset 0 (a `/proc` file regenerates its text on every read from the
//! start), so a scrape costs one system call per file rather than an
//! open, a read and a close. The kept files are capped (the soft
//! `RLIMIT_NOFILE` less what the task records may keep and a reserve);
//! beyond the cap a file is opened, read and closed each time, and a
//! kept file a scrape did not read is closed at its end.
//!
//! **A thread that did not run is not read again.** A thread's faults,
//! context switches and I/O bytes change only while it runs (the kernel
//! counts them on `current`), and a thread that is blocked and has not
//! run since stays in the same wait, so its wait channel is the same.
//! What shows that it did not run: the context switches its record
//! carries (pidmap_info(2)), which are the same only if it was not
//! switched out since (a thread that ran and is not running now was), or
//! else its `schedstat` (run time in ns, time waited, times switched in),
//! read after its record (one small file). When that witness is the one
//! taken before the last full read and the thread's record, read before
//! it, shows a task that is not runnable, the values of that full read
//! are the thread's values now. Otherwise (the thread ran, or is
//! runnable, or there is no witness: `schedstat` missing or all zeros
//! because the kernel does not keep it) every wanted file is read.
//! Processes are always read in full: their memory changes without them
//! running.

use std::collections::HashMap;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::sync::Arc;
use std::time::Duration;

use crate::id_hash::IdMap;
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

impl Wants {
    /// What both want.
    fn and(self, other: Wants) -> Wants {
        Wants {
            stat: self.stat && other.stat,
            status: self.status && other.status,
            io: self.io && other.io,
            wchan: self.wchan && other.wchan,
            smaps: self.smaps && other.smaps,
        }
    }

    /// Whether every file `other` wants is one `self` wants.
    fn covers(self, other: Wants) -> bool {
        (self.stat || !other.stat)
            && (self.status || !other.status)
            && (self.io || !other.io)
            && (self.wchan || !other.wchan)
            && (self.smaps || !other.smaps)
    }
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
    pub wchan: Option<Arc<str>>,
    pub pss_bytes: u64,
    pub swap_pss_bytes: u64,
}

/// The task to read.
#[derive(Debug, Clone, Copy)]
pub enum Task {
    /// A process: `/proc/PID/...`, the whole group's values.
    Process(i32),
    /// A thread: `/proc/TGID/task/TID/...`. `state` is the `stat` letter
    /// of its record and `start` its start time since boot, both read
    /// before this call; `switches` its voluntary plus involuntary context
    /// switches when the record carries them (pidmap_info(2)).
    Thread {
        tgid: i32,
        tid: i32,
        state: u8,
        start: Duration,
        switches: Option<u64>,
    },
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Kind {
    Stat,
    Status,
    Io,
    Wchan,
    Smaps,
    Schedstat,
}

impl Kind {
    fn file(self) -> &'static str {
        match self {
            Kind::Stat => "stat",
            Kind::Status => "status",
            Kind::Io => "io",
            Kind::Wchan => "wchan",
            Kind::Smaps => "smaps_rollup",
            Kind::Schedstat => "schedstat",
        }
    }
}

/// A `schedstat` line, as read (three numbers, well below 64 bytes).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct SchedLine {
    bytes: [u8; 64],
    len: u8,
}

impl SchedLine {
    /// The line, if it fits and says the task ran (not all zeros, which a
    /// kernel without the run-time accounting shows for every task).
    fn new(text: &[u8]) -> Option<SchedLine> {
        if text.len() > 64 || !text.iter().any(|b| (b'1'..=b'9').contains(b)) {
            return None;
        }
        let mut bytes = [0; 64];
        bytes[..text.len()].copy_from_slice(text);
        Some(SchedLine {
            bytes,
            len: u8::try_from(text.len()).ok()?,
        })
    }
}

/// What shows that a thread has not run since its last full read: the
/// same `schedstat` line (read after the record), or the same number of
/// context switches in the record.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Witness {
    Schedstat(SchedLine),
    Switches(u64),
}

/// A thread's last full read: its values, what was read and the witness
/// taken just before.
struct LastRead {
    start: Duration,
    witness: Witness,
    wants: Wants,
    extras: Extras,
}

/// A file kept open, and the last scrape that read it.
struct KeptFile {
    kind: Kind,
    file: File,
    used: u64,
}

/// What is kept for one task.
#[derive(Default)]
struct TaskEntry {
    seen: u64,
    files: Vec<KeptFile>,
    last: Option<LastRead>,
}

/// Reads [`Extras`], keeping files between scrapes.
pub struct ExtrasReader {
    kept: IdMap<(i32, i32), TaskEntry>,
    kept_count: usize,
    max_kept: usize,
    scrape: u64,
    buf: Vec<u8>,
    /// Wait channel names, shared by the tasks waiting in them.
    wchans: HashMap<Box<[u8]>, Arc<str>>,
    /// Whether the threads' `schedstat` files can tell a thread that did
    /// not run.
    schedstat: bool,
    /// The files this kernel has: `io` needs `CONFIG_TASK_IO_ACCOUNTING`,
    /// `wchan` `CONFIG_KALLSYMS`, `smaps_rollup` `CONFIG_PROC_PAGE_MONITOR`.
    /// A file it lacks is not read (an open of it fails with `ENOENT`,
    /// which must not be taken for a task that is gone).
    has: Wants,
    /// Thread reads this scrape served from the last full read.
    reused: u64,
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
            kept: IdMap::default(),
            kept_count: 0,
            max_kept: kept_budget(),
            scrape: 0,
            buf: vec![0; 4096],
            wchans: HashMap::new(),
            schedstat: schedstat_counts_runs(),
            has: files_of_this_kernel(),
            reused: 0,
        }
    }

    /// Start a scrape: files of tasks not read since the last call to
    /// [`ExtrasReader::end_scrape`] are closed there.
    pub fn begin_scrape(&mut self) {
        self.scrape += 1;
        self.reused = 0;
        // Names of waits no task is in any more go; a name in use stays
        // shared by the last reads that hold it.
        if self.wchans.len() > 4096 {
            self.wchans.clear();
        }
    }

    /// Close the files of tasks this scrape did not read, and the files
    /// it did not read of the tasks it read.
    pub fn end_scrape(&mut self) {
        let scrape = self.scrape;
        let mut closed = 0;
        self.kept.retain(|_, t| {
            if t.seen != scrape {
                closed += t.files.len();
                return false;
            }
            let before = t.files.len();
            t.files.retain(|f| f.used == scrape);
            closed += before - t.files.len();
            true
        });
        self.kept_count -= closed;
    }

    /// The files, among those the families need, that this kernel does not
    /// have (their values stay 0), for one line at start.
    pub fn missing(&self) -> Vec<&'static str> {
        [
            (self.has.io, Kind::Io),
            (self.has.wchan, Kind::Wchan),
            (self.has.smaps, Kind::Smaps),
        ]
        .into_iter()
        .filter(|(has, _)| !has)
        .map(|(_, kind)| kind.file())
        .collect()
    }

    /// Thread reads in this scrape that the last full read served.
    #[cfg(test)]
    fn reused(&self) -> u64 {
        self.reused
    }

    /// Read what `wants` asks for about `task`; `false`: the task is gone.
    /// A file that cannot be read for another reason leaves its values at
    /// 0 and adds an error to `errors`.
    #[allow(
        clippy::similar_names,
        reason = "tgid and tid are the kernel's names for the two ids"
    )]
    pub fn read(
        &mut self,
        task: Task,
        wants: Wants,
        out: &mut Extras,
        errors: &mut Vec<ReadError>,
    ) -> bool {
        let wants = wants.and(self.has);
        // Threads and processes are kept apart: a thread's file says what
        // that thread did, a process's what the whole group did.
        let (tgid, tid, thread) = match task {
            Task::Process(pid) => (pid, pid, false),
            Task::Thread { tgid, tid, .. } => (tgid, tid, true),
        };
        let key = (tgid, if thread { tid } else { -tid });
        let mut witness = None;
        if let Task::Thread {
            state,
            start,
            switches,
            ..
        } = task
        {
            if let Some(n) = switches {
                witness = Some(Witness::Switches(n));
            } else if self.schedstat {
                match self.read_file(key, tgid, tid, thread, Kind::Schedstat) {
                    Ok(Read::Text(n)) => {
                        witness = SchedLine::new(&self.buf[..n]).map(Witness::Schedstat);
                    }
                    Ok(Read::Gone) => return false,
                    // It only saves reads: without it, read everything.
                    Err(_) => {}
                }
            }
            // Seen: its last read stays for the next scrape, even when no
            // file of it is read in this one.
            let scrape = self.scrape;
            if let Some(t) = self.kept.get_mut(&key) {
                t.seen = scrape;
            }
            let last = self.kept.get(&key).and_then(|t| t.last.as_ref());
            if let (Some(now), Some(last)) = (witness, last) {
                // Not runnable when its record was read, and not run
                // since before the last full read (its `schedstat` read
                // after the record, or the record's switches: a thread
                // that ran and is not running has been switched out):
                // still in the same wait.
                if state != b'R'
                    && last.start == start
                    && last.witness == now
                    && last.wants.covers(wants)
                {
                    out.clone_from(&last.extras);
                    self.reused += 1;
                    return true;
                }
            }
        }
        *out = Extras::default();
        let kinds = [
            (wants.stat, Kind::Stat),
            (wants.status, Kind::Status),
            (wants.io, Kind::Io),
            (wants.wchan, Kind::Wchan),
            (wants.smaps, Kind::Smaps),
        ];
        let mut complete = true;
        for (wanted, kind) in kinds {
            if !wanted {
                continue;
            }
            match self.read_file(key, tgid, tid, thread, kind) {
                Ok(Read::Text(n)) => parse(kind, &self.buf[..n], out, &mut self.wchans),
                Ok(Read::Gone) => {
                    if let Some(t) = self.kept.get_mut(&key) {
                        t.last = None;
                    }
                    return false;
                }
                Err(e) => {
                    complete = false;
                    errors.push(e);
                }
            }
        }
        if let Some(t) = self.kept.get_mut(&key) {
            t.last = match (task, witness) {
                (Task::Thread { start, .. }, Some(witness)) if complete => Some(LastRead {
                    start,
                    witness,
                    wants,
                    extras: out.clone(),
                }),
                _ => None,
            };
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
        let scrape = self.scrape;
        let task = self.kept.entry(key).or_default();
        task.seen = scrape;
        if let Some(i) = task.files.iter().position(|f| f.kind == kind) {
            match pread_whole(&task.files[i].file, &mut self.buf) {
                Ok(n) => {
                    task.files[i].used = scrape;
                    return Ok(Read::Text(n));
                }
                // The task is gone, or its number now names another task
                // (a kept file names the task it was opened for): open the
                // path again.
                Err(e) if is_gone(&e) => {
                    task.files.swap_remove(i);
                    self.kept_count -= 1;
                    task.last = None;
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
            task.files.push(KeptFile {
                kind,
                file,
                used: scrape,
            });
            self.kept_count += 1;
        }
        Ok(Read::Text(n))
    }
}

/// Read a whole `/proc` file from offset 0, growing `buf` until the text
/// fits; the text's length.
fn pread_whole(file: &File, buf: &mut Vec<u8>) -> io::Result<usize> {
    loop {
        let n = match file.read_at(buf, 0) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if n < buf.len() {
            return Ok(n);
        }
        let len = buf.len() * 2;
        buf.resize(len, 0);
    }
}

/// How many files the extras may keep: the soft limit less the half (less
/// 64) the task records may keep, less 256 for everything else (the
/// server's sockets, the listings' directories, a file opened to be read
/// once).
fn kept_budget() -> usize {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `limit` is a valid, writable rlimit.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, std::ptr::from_mut(&mut limit)) } != 0 {
        return 0;
    }
    let records = (limit.rlim_cur / 2).saturating_sub(64);
    usize::try_from(limit.rlim_cur.saturating_sub(records).saturating_sub(256))
        .unwrap_or(usize::MAX)
}

/// Which of the files a kernel may lack this one has, as this process's
/// own show (every task has the same files).
fn files_of_this_kernel() -> Wants {
    let has = |file: &str| std::path::Path::new("/proc/self").join(file).exists();
    Wants {
        stat: true,
        status: true,
        io: has("io"),
        wchan: has("wchan"),
        smaps: has("smaps_rollup"),
    }
}

/// Whether this kernel's `schedstat` files count a task's runs: the file
/// exists (`CONFIG_SCHED_INFO`) and shows this running thread switched in
/// at least once (a kernel that does not keep the counts shows zeros).
fn schedstat_counts_runs() -> bool {
    let Ok(text) = std::fs::read("/proc/thread-self/schedstat") else {
        return false;
    };
    text.split(u8::is_ascii_whitespace)
        .filter(|f| !f.is_empty())
        .nth(2)
        .is_some_and(|pcount| number(pcount) > 0)
}

fn is_gone(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ESRCH))
}

/// The lines of a file, without their newlines.
fn lines(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    text.split(|&b| b == b'\n')
}

/// Fill `out` from one file's text.
fn parse(kind: Kind, text: &[u8], out: &mut Extras, wchans: &mut HashMap<Box<[u8]>, Arc<str>>) {
    match kind {
        Kind::Stat => {
            // Fields after the comm's closing parenthesis, from field 3
            // (state): minflt is field 10, majflt 12, vsize 23.
            if let Some(close) = text.iter().rposition(|&b| b == b')') {
                let fields = text[close + 1..]
                    .split(|&b| b == b' ')
                    .filter(|f| !f.is_empty());
                for (n, field) in (3..=23).zip(fields) {
                    match n {
                        10 => out.minor_faults = number(field),
                        12 => out.major_faults = number(field),
                        23 => out.virtual_bytes = number(field),
                        _ => {}
                    }
                }
            }
        }
        Kind::Status => {
            for line in lines(text) {
                if let Some(v) = line.strip_prefix(b"voluntary_ctxt_switches:") {
                    out.voluntary_switches = number(v);
                } else if let Some(v) = line.strip_prefix(b"nonvoluntary_ctxt_switches:") {
                    out.involuntary_switches = number(v);
                } else if let Some(v) = line.strip_prefix(b"VmSwap:") {
                    out.swap_bytes = kib(v);
                }
            }
        }
        Kind::Io => {
            for line in lines(text) {
                if let Some(v) = line.strip_prefix(b"read_bytes:") {
                    out.read_bytes = number(v);
                } else if let Some(v) = line.strip_prefix(b"write_bytes:") {
                    out.write_bytes = number(v);
                }
            }
        }
        Kind::Wchan => {
            let w = text.trim_ascii();
            out.wchan = (!w.is_empty() && w != b"0").then(|| {
                if let Some(name) = wchans.get(w) {
                    return name.clone();
                }
                let name: Arc<str> = String::from_utf8_lossy(w).into();
                wchans.insert(w.into(), name.clone());
                name
            });
        }
        Kind::Smaps => {
            for line in lines(text) {
                if let Some(v) = line.strip_prefix(b"Pss:") {
                    out.pss_bytes = kib(v);
                } else if let Some(v) = line.strip_prefix(b"SwapPss:") {
                    out.swap_pss_bytes = kib(v);
                }
            }
        }
        Kind::Schedstat => {}
    }
}

/// The decimal number `v` holds, blanks around it ignored; 0 if there is
/// none (or it does not fit).
fn number(v: &[u8]) -> u64 {
    let digits = v.trim_ascii();
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return 0;
    }
    digits
        .iter()
        .try_fold(0u64, |n, &d| {
            n.checked_mul(10)?.checked_add(u64::from(d - b'0'))
        })
        .unwrap_or(0)
}

/// "   123 kB" in bytes.
fn kib(v: &[u8]) -> u64 {
    v.split(u8::is_ascii_whitespace)
        .find(|f| !f.is_empty())
        .map_or(0, |n| number(n).saturating_mul(1024))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(kind: Kind, text: &str) -> Extras {
        let mut out = Extras::default();
        parse(kind, text.as_bytes(), &mut out, &mut HashMap::new());
        out
    }

    #[test]
    fn files_parse_as_the_kernel_writes_them() {
        let stat = "42 (a) b) S 1 42 42 0 -1 4194560 1234 0 56 0 7 8 0 0 20 0 3 0 99 1048576 77 \
                    18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
        let s = parsed(Kind::Stat, stat);
        assert_eq!(
            (s.minor_faults, s.major_faults, s.virtual_bytes),
            (1234, 56, 1_048_576)
        );
        let status = "Name:\tx\nVmSwap:\t     12 kB\nvoluntary_ctxt_switches:\t5\n\
                      nonvoluntary_ctxt_switches:\t9\n";
        let s = parsed(Kind::Status, status);
        assert_eq!(
            (s.swap_bytes, s.voluntary_switches, s.involuntary_switches),
            (12 * 1024, 5, 9)
        );
        let io = "rchar: 1\nwchar: 2\nsyscr: 3\nsyscw: 4\nread_bytes: 4096\nwrite_bytes: 8192\n\
                  cancelled_write_bytes: 0\n";
        let s = parsed(Kind::Io, io);
        assert_eq!((s.read_bytes, s.write_bytes), (4096, 8192));
        assert_eq!(
            parsed(Kind::Wchan, "do_sys_poll").wchan.as_deref(),
            Some("do_sys_poll")
        );
        assert_eq!(parsed(Kind::Wchan, "0").wchan, None);
        assert_eq!(parsed(Kind::Wchan, "").wchan, None);
        let smaps = "Rss:  100 kB\nPss:  50 kB\nSwap: 0 kB\nSwapPss:  3 kB\n";
        let s = parsed(Kind::Smaps, smaps);
        assert_eq!((s.pss_bytes, s.swap_pss_bytes), (50 * 1024, 3 * 1024));
    }

    #[test]
    fn numbers_that_do_not_parse_are_zero() {
        assert_eq!(number(b" 17 "), 17);
        assert_eq!(number(b"-1"), 0);
        assert_eq!(number(b"99999999999999999999999"), 0);
        assert_eq!(kib(b"  7 kB"), 7 * 1024);
        assert!(SchedLine::new(b"0 0 0\n").is_none());
        assert!(SchedLine::new(b"12 3 1\n").is_some());
    }

    /// Thread `tid` of this process's state letter, start time and
    /// context switches (voluntary plus involuntary), read as the tracker
    /// has them from its record (before the extras), once it sleeps.
    fn sleeping_record(tid: i32) -> (u8, Duration, u64) {
        let me = std::process::id();
        for _ in 0..200 {
            let status = std::fs::read(format!("/proc/{me}/task/{tid}/status")).unwrap();
            let mut x = Extras::default();
            parse(Kind::Status, &status, &mut x, &mut HashMap::new());
            let stat = std::fs::read(format!("/proc/{me}/task/{tid}/stat")).unwrap();
            let close = stat.iter().rposition(|&b| b == b')').unwrap();
            let fields: Vec<&[u8]> = stat[close + 2..].split(|&b| b == b' ').collect();
            // Field 3 is the state, 22 the start time.
            if fields[0][0] == b'S' {
                return (
                    b'S',
                    Duration::from_millis(number(fields[19]) * 10),
                    x.voluntary_switches + x.involuntary_switches,
                );
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("thread {tid} does not go to sleep");
    }

    /// A thread that sleeps in a blocking read is read in full once, then
    /// served from that read while it does not run (its `schedstat` the
    /// same); once it runs (it faults, and sleeps again), it is read again
    /// and the new values show.
    #[test]
    fn a_thread_that_did_not_run_is_not_read_again() {
        not_read_again_until_it_runs(false);
    }

    /// The same with the context switches of its record as the witness
    /// (pidmap_info(2) carries them): no `schedstat` is read.
    #[test]
    fn a_thread_whose_record_shows_no_switch_is_not_read_again() {
        not_read_again_until_it_runs(true);
    }

    fn not_read_again_until_it_runs(switches_in_record: bool) {
        use std::io::{Read as _, Write as _};
        use std::os::unix::net::UnixStream;
        if !switches_in_record && !schedstat_counts_runs() {
            // Nothing to test on such a kernel: every read is full.
            assert!(!ExtrasReader::new().schedstat);
            return;
        }
        let (mut to_worker, mut worker_end) = UnixStream::pair().unwrap();
        let (tid_tx, tid_rx) = std::sync::mpsc::channel::<i32>();
        let worker = std::thread::spawn(move || {
            // SAFETY: gettid has no preconditions.
            tid_tx.send(unsafe { libc::gettid() }).unwrap();
            let mut byte = [0u8; 1];
            // Each byte: touch new memory (minor faults), then sleep in
            // the next read (a voluntary switch).
            while worker_end.read(&mut byte).is_ok_and(|n| n == 1) {
                // A fresh mapping (not memory the allocator already
                // touched): each page written is a minor fault.
                let len = usize::from(byte[0]) * 4096;
                // SAFETY: a new private anonymous mapping, written within
                // its length and unmapped below; nothing else uses it.
                unsafe {
                    let p = libc::mmap(
                        std::ptr::null_mut(),
                        len,
                        libc::PROT_READ | libc::PROT_WRITE,
                        libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                        -1,
                        0,
                    );
                    assert_ne!(p, libc::MAP_FAILED);
                    for page in (0..len).step_by(4096) {
                        p.cast::<u8>().add(page).write_volatile(1);
                    }
                    libc::munmap(p, len);
                }
            }
        });
        let tid = tid_rx.recv().unwrap();
        let me = i32::try_from(std::process::id()).unwrap();
        let wants = Wants {
            stat: true,
            status: true,
            io: true,
            wchan: true,
            smaps: false,
        };
        let mut reader = ExtrasReader::new();
        let read = |reader: &mut ExtrasReader| {
            let (state, start, switches) = sleeping_record(tid);
            let task = Task::Thread {
                tgid: me,
                tid,
                state,
                start,
                switches: switches_in_record.then_some(switches),
            };
            let mut out = Extras::default();
            let mut errors = Vec::new();
            reader.begin_scrape();
            assert!(reader.read(task, wants, &mut out, &mut errors));
            reader.end_scrape();
            assert!(errors.is_empty(), "{:?}", errors[0].message);
            (out, reader.reused())
        };
        let (first, reused) = read(&mut reader);
        assert_eq!(reused, 0, "nothing to reuse yet");
        let (second, reused) = read(&mut reader);
        assert_eq!(reused, 1, "a sleeping thread is served from the last read");
        assert_eq!(second, first);
        // Again: a scrape that read none of its files keeps its last read.
        let (second, reused) = read(&mut reader);
        assert_eq!(reused, 1, "a sleeping thread is served from the last read");
        assert_eq!(second, first);
        to_worker.write_all(&[64]).unwrap();
        // Until it has run: its state is read only once it sleeps again,
        // and a thread that has not yet run shows no new faults.
        let mut third = first.clone();
        for _ in 0..200 {
            let (now, reused) = read(&mut reader);
            if now.minor_faults > first.minor_faults {
                assert_eq!(reused, 0, "a thread that ran is read again");
                third = now;
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(
            third.minor_faults > first.minor_faults,
            "{} then {}",
            first.minor_faults,
            third.minor_faults
        );
        assert!(
            third.voluntary_switches > first.voluntary_switches,
            "{} then {}",
            first.voluntary_switches,
            third.voluntary_switches
        );
        drop(to_worker);
        worker.join().unwrap();
    }
}
