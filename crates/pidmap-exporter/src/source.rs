//! Everything the exporter reads from the system, and the only module that
//! uses the `pidmap` crate: process and thread records (listing plus task
//! records), fd counts, command lines, fd limits and the boot time.
//!
//! The records come from two handles built with `keep_files(true)`, the
//! crate's fast path for monitors: one lists processes, the other tasks,
//! so each keeps its own files open from one scrape to the next.

use std::io;
use std::time::Duration;

use pidmap::{ActiveBackend, Backend, Error, InfoFields, Pid, Pidmap, Query, Target, TaskState};

use crate::extras::{Extras, ExtrasReader, Task, Wants};
use crate::id_hash::IdMap;
use crate::read_error::ReadError;

/// One process as its `/proc/PID/stat` shows it.
#[derive(Debug, Clone)]
pub struct ProcessRecord {
    pub pid: i32,
    /// 0 when the process has no parent in view.
    pub ppid: i32,
    pub state: u8,
    /// The group's CPU time, exited threads included.
    pub user: Duration,
    pub system: Duration,
    /// Since boot.
    pub start: Duration,
    pub rss_bytes: u64,
    pub comm: Vec<u8>,
    pub num_threads: u32,
    /// Effective uid, read only when asked for.
    pub euid: Option<u32>,
    /// The counters the record carries (see [`Counters`]).
    pub counters: Counters,
}

/// The counters a task record carries: the page faults always (the
/// fallback reads them from the `stat` line it reads anyway), the context
/// switches only from pidmap_info(2) (the fallback would read `status` for
/// them, twice `stat`'s cost). `None`: read from the task's `/proc` files.
#[derive(Debug, Clone, Copy, Default)]
pub struct Counters {
    /// Minor and major faults: the whole group's in a process record (as
    /// `/proc/PID/stat`), the thread's own in a thread record.
    pub faults: Option<(u64, u64)>,
    /// Voluntary and involuntary context switches of the task itself (a
    /// process record's are its first thread's, as `/proc/PID/status`).
    pub switches: Option<(u64, u64)>,
}

impl Counters {
    fn of(t: &pidmap::TaskInfo) -> Counters {
        Counters {
            faults: t.min_flt.zip(t.maj_flt),
            switches: t.nvcsw.zip(t.nivcsw),
        }
    }
}

/// A task's name: at most 63 bytes, kept inline.
pub type Name = pidmap::Comm;

/// One thread of a process.
#[derive(Debug, Clone, Copy)]
pub struct ThreadRecord {
    pub tid: i32,
    pub state: u8,
    pub user: Duration,
    pub system: Duration,
    /// Since boot.
    pub start: Duration,
    pub comm: Name,
    pub counters: Counters,
}

/// A [`ReadError`] from the crate's error, with its causes.
fn pidmap_error(what: &'static str, whose: &str, e: &Error) -> ReadError {
    let kind = match e {
        Error::PermissionDenied { .. } => "permission",
        Error::Io { .. } => "io",
        _ => "other",
    };
    // The error's causes too ("opening /proc/self: Too many open
    // files"): the crate's `Display` is the context alone.
    let mut message = format!("{what}{whose}: {e}");
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        message.push_str(": ");
        message.push_str(&c.to_string());
        cause = c.source();
    }
    ReadError {
        what,
        kind,
        message,
    }
}

fn is_gone(e: &Error) -> bool {
    matches!(e, Error::NoSuchProcess { .. })
}

fn io_is_gone(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ESRCH))
}

/// The state letter of a record.
fn letter(state: Option<TaskState>) -> u8 {
    state.map_or(b'?', TaskState::letter)
}

/// The system, through the `pidmap` crate.
pub struct Source {
    processes: Pidmap,
    tasks: Pidmap,
    records: Vec<pidmap::TaskInfo>,
    fds: Vec<i32>,
    /// This process's id, and the buffer its own fds are counted with.
    own_pid: i32,
    own_fds: Vec<libc::pollfd>,
    /// Task records read since the last process listing began.
    records_read: u64,
    /// The counters the records are asked for.
    counter_fields: InfoFields,
    extras: ExtrasReader,
}

impl Source {
    /// Handles for `backend`, keeping files between scrapes.
    pub fn new(backend: Backend) -> Result<Source, ReadError> {
        let build = || {
            Pidmap::builder()
                .backend(backend)
                .keep_files(true)
                .build()
                .map_err(|e| pidmap_error("handle", "", &e))
        };
        let processes = build()?;
        // pidmap_info(2) carries the context switches in its records; the
        // fallback would read `status` for them.
        let counter_fields = match processes.info_backend() {
            Ok(ActiveBackend::Syscall) => InfoFields::FAULTS | InfoFields::CTX_SWITCHES,
            _ => InfoFields::FAULTS,
        };
        Ok(Source {
            processes,
            tasks: build()?,
            records: Vec::new(),
            fds: Vec::new(),
            own_pid: i32::try_from(std::process::id()).unwrap_or(0),
            own_fds: Vec::new(),
            records_read: 0,
            counter_fields,
            extras: ExtrasReader::new(),
        })
    }

    /// Which backend serves the records ("syscall" or "procfs").
    pub fn backend_name(&self) -> String {
        match self.processes.info_backend() {
            Ok(b) => format!("{b:?}").to_lowercase(),
            Err(e) => format!("unavailable ({e})"),
        }
    }

    /// Every process, ascending by pid.
    pub fn processes(
        &mut self,
        with_euid: bool,
        out: &mut Vec<ProcessRecord>,
    ) -> Result<(), ReadError> {
        let mut fields = InfoFields::TGID
            | InfoFields::PPID
            | InfoFields::STATE
            | InfoFields::CPU_TIME
            | InfoFields::START_TIME
            | InfoFields::RSS
            | InfoFields::COMM
            | InfoFields::NUM_THREADS
            | self.counter_fields;
        if with_euid {
            fields |= InfoFields::UIDS;
        }
        self.processes
            .fill_info(Query::processes(), fields, &mut self.records)
            .map_err(|e| pidmap_error("processes", "", &e))?;
        self.records_read = self.records.len() as u64;
        out.clear();
        out.extend(self.records.iter().map(|t| {
            ProcessRecord {
                pid: t.tid.as_raw(),
                ppid: t.ppid.map_or(0, Pid::as_raw),
                state: letter(t.state),
                user: t.utime.unwrap_or_default(),
                system: t.stime.unwrap_or_default(),
                start: t.start_time.unwrap_or_default(),
                rss_bytes: t.rss_bytes().unwrap_or(0),
                comm: t
                    .comm
                    .as_ref()
                    .map_or(Vec::new(), |c| c.as_bytes().to_vec()),
                num_threads: t.num_threads.unwrap_or(1),
                euid: t.euid,
                counters: Counters::of(t),
            }
        }));
        Ok(())
    }

    /// The threads of `pids` (ascending), into `out` keyed by pid. A
    /// process that is gone has no entry. With `whole_listing` one listing
    /// of every task is read (cheaper when most tasks are wanted: kept
    /// files), otherwise one listing per process.
    pub fn threads(
        &mut self,
        pids: &[i32],
        whole_listing: bool,
        out: &mut IdMap<i32, Vec<ThreadRecord>>,
        errors: &mut Vec<ReadError>,
    ) {
        out.clear();
        let fields = InfoFields::TGID
            | InfoFields::STATE
            | InfoFields::CPU_TIME
            | InfoFields::START_TIME
            | InfoFields::COMM
            | self.counter_fields;
        let thread = |t: &pidmap::TaskInfo| ThreadRecord {
            tid: t.tid.as_raw(),
            state: letter(t.state),
            user: t.utime.unwrap_or_default(),
            system: t.stime.unwrap_or_default(),
            start: t.start_time.unwrap_or_default(),
            comm: t.comm.unwrap_or_default(),
            counters: Counters::of(t),
        };
        if whole_listing {
            match self
                .tasks
                .fill_info(Query::all_tasks(), fields, &mut self.records)
            {
                Ok(()) => {
                    self.records_read += self.records.len() as u64;
                    for t in &self.records {
                        let tgid = t.tgid.map_or(0, Pid::as_raw);
                        if pids.binary_search(&tgid).is_ok() {
                            out.entry(tgid).or_default().push(thread(t));
                        }
                    }
                }
                Err(e) => errors.push(pidmap_error("threads", " (all tasks)", &e)),
            }
            return;
        }
        for &pid in pids {
            let Ok(target) = Pid::try_from(pid) else {
                continue;
            };
            match self.tasks.fill_info(
                Query::threads(Target::Pid(target)),
                fields,
                &mut self.records,
            ) {
                Ok(()) => {
                    self.records_read += self.records.len() as u64;
                    out.insert(pid, self.records.iter().map(thread).collect());
                }
                Err(e) if is_gone(&e) => {}
                Err(e) => errors.push(pidmap_error("threads", &format!(" of {pid}"), &e)),
            }
        }
    }

    /// Start reading extras for a scrape (see [`ExtrasReader`]).
    pub fn begin_extras(&mut self) {
        self.extras.begin_scrape();
    }

    /// The values of `/proc` files the records do not carry, for a process
    /// or one of its threads; `false` if the task is gone.
    pub fn extras(
        &mut self,
        task: Task,
        wants: Wants,
        out: &mut Extras,
        errors: &mut Vec<ReadError>,
    ) -> bool {
        self.extras.read(task, wants, out, errors)
    }

    /// End a scrape's extras: close the files of tasks it did not read.
    pub fn end_extras(&mut self) {
        self.extras.end_scrape();
    }

    /// The `/proc` files the families read that this kernel lacks (see
    /// [`ExtrasReader::missing`]).
    pub fn missing_files(&self) -> Vec<&'static str> {
        self.extras.missing()
    }

    /// Task records read in this scrape (processes and threads).
    pub fn records_read(&self) -> u64 {
        self.records_read
    }

    /// How many fds process `pid` has open; `Ok(None)` if it is gone.
    ///
    /// A listing, as process-exporter counts them: the size `stat(2)`
    /// gives a `/proc` fd directory (Linux 6.2 and later) is cheaper but
    /// also counts fds a system call has reserved and not yet filled (a
    /// thread blocked in `accept(2)` holds one). This process's own fds
    /// are counted without a listing (see [`own_open_fds`]).
    pub fn open_fds(&mut self, pid: i32) -> Result<Option<usize>, ReadError> {
        let Ok(target) = Pid::try_from(pid) else {
            return Ok(None);
        };
        if pid == self.own_pid {
            return own_open_fds(&mut self.own_fds)
                .map(Some)
                .map_err(|e| ReadError::from_io("fds", &format!(" of {pid}"), &e));
        }
        match self.processes.fill_fds(Target::Pid(target), &mut self.fds) {
            Ok(()) => Ok(Some(self.fds.len())),
            Err(e) if is_gone(&e) => Ok(None),
            Err(e) => Err(pidmap_error("fds", &format!(" of {pid}"), &e)),
        }
    }
}

/// How many fds this process has open, the set a listing of
/// `/proc/self/fd` shows, without that listing: the exporter keeps a file
/// per task it reads (about 20,000 at 10,000 threads), and listing them
/// costs the kernel a directory entry and a dentry lookup each, about
/// 16 ms a scrape. One `poll(2)` with no events and no wait over every fd
/// number below the soft `RLIMIT_NOFILE` (where every fd of this process
/// is: it raised the soft limit to the hard one before it opened any file
/// beyond the three standard ones, and `poll` takes no more), and below
/// the size of its fd table, marks
/// `POLLNVAL` each number that holds no file; it marks an `O_PATH` file so
/// too, so each of those numbers is asked again with `fcntl(F_GETFD)`,
/// which sees every installed file. An fd a system call has reserved but
/// not yet filled (a thread blocked in `accept(2)`) is in neither, as in
/// the listing.
fn own_open_fds(buf: &mut Vec<libc::pollfd>) -> io::Result<usize> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `limit` is a valid, writable rlimit.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, std::ptr::from_mut(&mut limit)) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // Every fd is below the size of the fd table (`FDSize`, which grows
    // in powers of two as fds are opened), which is far below a soft
    // limit of a million (a service's usual hard limit); `poll` takes no
    // more than the soft limit.
    let table = fd_table_size()?;
    let n = usize::try_from(limit.rlim_cur)
        .unwrap_or(usize::MAX)
        .min(table);
    buf.clear();
    buf.extend((0..n).map(|fd| libc::pollfd {
        fd: i32::try_from(fd).unwrap_or(i32::MAX),
        events: 0,
        revents: 0,
    }));
    let nfds = libc::nfds_t::try_from(buf.len()).unwrap_or(libc::nfds_t::MAX);
    loop {
        // SAFETY: `buf` holds `nfds` valid, writable pollfd entries; a
        // zero timeout returns at once.
        if unsafe { libc::poll(buf.as_mut_ptr(), nfds, 0) } >= 0 {
            break;
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    Ok(buf
        .iter()
        .filter(|p| {
            p.revents & libc::POLLNVAL == 0
                // SAFETY: F_GETFD only reads the fd's flags; a number that
                // holds no file gives EBADF.
                || unsafe { libc::fcntl(p.fd, libc::F_GETFD) } >= 0
        })
        .count())
}

/// The size of this process's fd table (`FDSize` of `/proc/self/status`):
/// no fd is at or above it.
fn fd_table_size() -> io::Result<usize> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("FDSize:"))
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                "no FDSize line in /proc/self/status",
            )
        })
}

/// The command line of `pid`, split at NULs; `Ok(None)` if it is gone.
pub fn cmdline(pid: i32) -> Result<Option<Vec<Vec<u8>>>, ReadError> {
    match std::fs::read(format!("/proc/{pid}/cmdline")) {
        Ok(bytes) => {
            let mut args: Vec<Vec<u8>> = bytes.split(|&b| b == 0).map(<[u8]>::to_vec).collect();
            // The NUL that ends the last argument leaves an empty piece.
            if args.last().is_some_and(Vec::is_empty) {
                args.pop();
            }
            Ok(Some(args))
        }
        Err(e) if io_is_gone(&e) => Ok(None),
        Err(e) => Err(ReadError::from_io("cmdline", &format!(" of {pid}"), &e)),
    }
}

/// The path of each line of `/proc/PID/cgroup` (`ID:CONTROLLERS:PATH`), in
/// the file's order; `Ok(None)` if the process is gone.
pub fn cgroups(pid: i32) -> Result<Option<Vec<Vec<u8>>>, ReadError> {
    match std::fs::read(format!("/proc/{pid}/cgroup")) {
        Ok(bytes) => Ok(Some(
            bytes
                .split(|&b| b == b'\n')
                .filter(|l| !l.is_empty())
                .map(|line| {
                    // The path is everything after the second colon (it
                    // may hold colons itself).
                    let mut parts = line.splitn(3, |&b| b == b':');
                    parts.nth(2).unwrap_or_default().to_vec()
                })
                .collect(),
        )),
        Err(e) if io_is_gone(&e) => Ok(None),
        Err(e) => Err(ReadError::from_io("cgroup", &format!(" of {pid}"), &e)),
    }
}

/// The soft `RLIMIT_NOFILE` of `pid`; `Ok(None)` if it is gone or has no
/// limit. `prlimit(2)` first (one call); where it is not allowed (a task in
/// another user namespace) `/proc/PID/limits`, which anyone may read.
pub fn fd_limit(pid: i32) -> Result<Option<u64>, ReadError> {
    let mut limit = libc::rlimit64 {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: a null new limit only reads; `limit` is a valid, writable
    // rlimit64 for the call's duration.
    let rc = unsafe {
        libc::prlimit64(
            pid,
            libc::RLIMIT_NOFILE,
            std::ptr::null(),
            std::ptr::from_mut(&mut limit),
        )
    };
    if rc == 0 {
        let soft = limit.rlim_cur;
        return Ok((soft != libc::RLIM64_INFINITY && soft > 0).then_some(soft));
    }
    let e = io::Error::last_os_error();
    if io_is_gone(&e) {
        return Ok(None);
    }
    if e.raw_os_error() != Some(libc::EPERM) {
        return Err(ReadError::from_io("fd_limit", &format!(" of {pid}"), &e));
    }
    let limits = match std::fs::read_to_string(format!("/proc/{pid}/limits")) {
        Ok(text) => text,
        Err(e) if io_is_gone(&e) => return Ok(None),
        Err(e) => return Err(ReadError::from_io("fd_limit", &format!(" of {pid}"), &e)),
    };
    // "Max open files            1024                 524288               files"
    let soft = limits
        .lines()
        .find_map(|l| l.strip_prefix("Max open files"))
        .and_then(|rest| rest.split_whitespace().next())
        .map(|v| v.parse::<u64>().ok());
    match soft {
        Some(Some(n)) if n > 0 => Ok(Some(n)),
        Some(_) => Ok(None), // "unlimited"
        None => Err(ReadError {
            what: "fd_limit",
            kind: "other",
            message: format!("fd_limit of {pid}: no \"Max open files\" line in /proc/{pid}/limits"),
        }),
    }
}

/// The boot time in seconds since the epoch (`btime` of `/proc/stat`), as
/// process-exporter computes start times from it.
pub fn boot_time() -> io::Result<u64> {
    let stat = std::fs::read_to_string("/proc/stat")?;
    stat.lines()
        .find_map(|l| l.strip_prefix("btime "))
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "/proc/stat has no btime line"))
}

/// Let this process keep as many files open as its hard limit allows: the
/// kept files of a refresh need one per task (at most half the soft limit).
pub fn raise_fd_limit() {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `limit` is a valid, writable rlimit.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, std::ptr::from_mut(&mut limit)) } == 0
        && limit.rlim_cur < limit.rlim_max
    {
        limit.rlim_cur = limit.rlim_max;
        // SAFETY: `limit` is a valid rlimit; raising the soft limit to the
        // hard one is always allowed. A failure only leaves the old limit.
        unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, std::ptr::from_ref(&limit)) };
    }
}

/// The user name of `uid` (the user database, through the library's
/// [`pidmap::monitor::user_name`]), or the number when it has none or
/// cannot be read.
pub fn user_name(uid: u32) -> Vec<u8> {
    use std::os::unix::ffi::OsStringExt;
    match pidmap::monitor::user_name(uid) {
        Ok(Some(name)) => name.into_vec(),
        _ => uid.to_string().into_bytes(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::OpenOptionsExt;

    /// The count without a listing is the listing's, an `O_PATH` file and
    /// a socket included. Other tests' threads open and close files
    /// meanwhile, so it is taken when a count, the listing and a second
    /// count agree.
    #[test]
    fn own_fds_are_counted_as_the_listing_counts_them() {
        let path = std::fs::File::options()
            .read(true)
            .custom_flags(libc::O_PATH)
            .open("/proc")
            .unwrap();
        let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        let mut buf = Vec::new();
        let mut last = None;
        for _ in 0..50 {
            let before = own_open_fds(&mut buf).unwrap();
            // The listing's own directory fd is in it.
            let listed = std::fs::read_dir("/proc/self/fd").unwrap().count() - 1;
            let after = own_open_fds(&mut buf).unwrap();
            if before == listed && listed == after {
                drop((path, a, b));
                return;
            }
            last = Some((before, listed, after));
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("counted, listed, counted: {last:?}");
    }
}
