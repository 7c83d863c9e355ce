//! [`ProcessTable`]: the last snapshot of every process, refreshed with
//! one call, for programs that want rows rather than a field choice (the
//! sysinfo crate's `System::refresh_processes` is the model).
//!
//! The table picks the fields ([`ProcessTable::FIELDS`]), computes CPU %
//! from its previous refresh with [`CpuSample`], names users with
//! [`UserNames`], and reads the machine's totals ([`SystemMemory`],
//! [`SystemCpu`], [`LoadAverage`], [`Uptime`]) below the same proc root.
//!
//! ```
//! use std::time::Duration;
//! use pidmap::Pid;
//! use pidmap::monitor::ProcessTable;
//!
//! let mut table = ProcessTable::new()?;
//! table.refresh()?;
//! std::thread::sleep(Duration::from_millis(50));
//! table.refresh()?;
//! let me = table.process(Pid::this_process()).expect("we are listed");
//! assert!(me.cpu_percent.is_some());
//! assert_eq!(me.parent(), Pid::new(std::os::unix::process::parent_id() as i32));
//! let mut busiest: Vec<_> = table.processes().collect();
//! busiest.sort_by(|a, b| b.cpu_percent.unwrap_or(0.0).total_cmp(&a.cpu_percent.unwrap_or(0.0)));
//! for p in busiest.iter().take(5) {
//!     let user = p.user.as_deref().unwrap_or("?");
//!     let mem = table.memory_percent(p).unwrap_or(0.0);
//!     println!("{:>7} {user:<8} {:5.1} {mem:4.1} {}", p.pid, p.cpu_percent.unwrap_or(0.0), p.name);
//! }
//! # Ok::<(), pidmap::Error>(())
//! ```

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use super::cpu::CpuSample;
use super::load::{LoadAverage, Uptime};
use super::process::Process;
use super::system::{CpuPercent, SystemCpu, SystemMemory};
use super::users::UserNames;
use crate::error::Result;
use crate::handle::Pidmap;
use crate::info::{InfoFields, TaskInfo};
use crate::pid::Pid;
use crate::query::Query;

/// Every process, as of the last refresh.
///
/// Built on a monitor handle ([`Pidmap::monitor`]: the /proc fallback
/// keeps task files open between refreshes), or on a handle of the
/// caller's ([`ProcessTable::with_handle`]: another backend or proc root).
/// [`refresh_processes`](ProcessTable::refresh_processes) lists the
/// processes with one `fill_info` of [`ProcessTable::FIELDS`];
/// [`refresh_system`](ProcessTable::refresh_system) reads the machine's
/// totals; [`refresh`](ProcessTable::refresh) does both.
#[derive(Debug)]
pub struct ProcessTable {
    pm: Pidmap,
    kernel_threads: bool,
    /// Whether the refreshes ask for the fault and context-switch
    /// counters too ([`ProcessTable::COUNTERS`]).
    counters: bool,
    /// The records of the last refresh (the buffer is reused).
    records: Vec<TaskInfo>,
    /// The CPU times of the last refresh, for the next one's CPU %.
    sample: Option<CpuSample>,
    /// The rows, ascending by pid.
    processes: Vec<Process>,
    names: UserNames,
    users: HashMap<u32, Arc<str>>,
    memory: Option<SystemMemory>,
    load: Option<LoadAverage>,
    uptime: Option<Uptime>,
    cpu: Option<SystemCpu>,
    cpu_before: Option<SystemCpu>,
}

impl ProcessTable {
    /// The fields each refresh asks for: everything a [`Process`] holds.
    pub const FIELDS: InfoFields = CpuSample::FIELDS
        .union(InfoFields::PPID)
        .union(InfoFields::STATE)
        .union(InfoFields::RSS)
        .union(InfoFields::COMM)
        .union(InfoFields::UIDS)
        .union(InfoFields::FLAGS)
        .union(InfoFields::SCHED)
        .union(InfoFields::NUM_THREADS);

    /// An empty table on [`Pidmap::monitor`]'s handle; nothing is read
    /// until the first refresh.
    ///
    /// # Errors
    ///
    /// As [`Pidmap::monitor`].
    pub fn new() -> Result<ProcessTable> {
        Ok(ProcessTable::with_handle(Pidmap::monitor()?))
    }

    /// An empty table on `pm`, which chose the backend and the proc root.
    ///
    /// ```
    /// use pidmap::{Backend, Pidmap};
    /// use pidmap::monitor::ProcessTable;
    /// let pm = Pidmap::builder().backend(Backend::Procfs).keep_files(true).build()?;
    /// let mut table = ProcessTable::with_handle(pm).kernel_threads(false);
    /// table.refresh_processes()?;
    /// assert!(table.processes().all(|p| !p.kernel_thread));
    /// # Ok::<(), pidmap::Error>(())
    /// ```
    #[must_use]
    pub fn with_handle(pm: Pidmap) -> ProcessTable {
        ProcessTable {
            pm,
            kernel_threads: true,
            counters: false,
            records: Vec::new(),
            sample: None,
            processes: Vec::new(),
            names: UserNames::new(),
            users: HashMap::new(),
            memory: None,
            load: None,
            uptime: None,
            cpu: None,
            cpu_before: None,
        }
    }

    /// Whether the refreshes list kernel threads (they do unless told
    /// not to).
    #[must_use]
    pub fn kernel_threads(mut self, list: bool) -> ProcessTable {
        self.kernel_threads = list;
        self
    }

    /// The fields [`ProcessTable::counters`] adds to
    /// [`ProcessTable::FIELDS`]: [`Process::min_flt`], [`Process::maj_flt`],
    /// [`Process::nvcsw`] and [`Process::nivcsw`].
    pub const COUNTERS: InfoFields = InfoFields::FAULTS.union(InfoFields::CTX_SWITCHES);

    /// Whether the refreshes also read each process's page faults and
    /// context switches ([`ProcessTable::COUNTERS`]; not unless told to,
    /// as a process exporter is): the rows' counters are `None` without.
    ///
    /// ```
    /// use pidmap::{Backend, Pidmap};
    /// use pidmap::monitor::ProcessTable;
    /// let pm = Pidmap::builder().backend(Backend::Procfs).build()?;
    /// let mut table = ProcessTable::with_handle(pm).counters(true);
    /// table.refresh_processes()?;
    /// let me = table.process(pidmap::Pid::this_process()).unwrap();
    /// assert!(me.min_flt.is_some_and(|f| f > 0));
    /// assert!(me.nvcsw.is_some());
    /// # Ok::<(), pidmap::Error>(())
    /// ```
    #[must_use]
    pub fn counters(mut self, read: bool) -> ProcessTable {
        self.counters = read;
        self
    }

    /// The handle the table reads with.
    #[must_use]
    pub fn handle(&self) -> &Pidmap {
        &self.pm
    }

    /// [`refresh_system`](ProcessTable::refresh_system), then
    /// [`refresh_processes`](ProcessTable::refresh_processes).
    ///
    /// # Errors
    ///
    /// As those two; on an error the table keeps what it had before that
    /// part.
    pub fn refresh(&mut self) -> Result<()> {
        self.refresh_system()?;
        self.refresh_processes()
    }

    /// List every process again, replacing the rows; each row's CPU % is
    /// its use since the previous call.
    ///
    /// # Errors
    ///
    /// As [`Pidmap::fill_info`]; [`Error::AbiViolation`](crate::Error::AbiViolation)
    /// naming the field when a record lacks one the table asked for
    /// (never a row with a made-up value). The rows are those of the
    /// previous refresh after an error.
    pub fn refresh_processes(&mut self) -> Result<()> {
        let query = if self.kernel_threads {
            Query::processes()
        } else {
            Query::processes().without_kthreads()
        };
        let fields = if self.counters {
            ProcessTable::FIELDS.union(ProcessTable::COUNTERS)
        } else {
            ProcessTable::FIELDS
        };
        self.pm.fill_info(query, fields, &mut self.records)?;
        let now = CpuSample::try_now(&self.records)?;
        let mut rows = Vec::with_capacity(self.records.len());
        let cpu: Vec<Option<f64>> = match &self.sample {
            Some(before) => now
                .records_since(before, &self.records)
                .map(|(_, cpu)| cpu.and_then(|c| c.percent))
                .collect(),
            None => vec![None; self.records.len()],
        };
        for (r, percent) in self.records.iter().zip(cpu) {
            let user = r.euid.map(|uid| {
                let names = &mut self.names;
                Arc::clone(
                    self.users
                        .entry(uid)
                        .or_insert_with(|| Arc::from(names.get(uid))),
                )
            });
            rows.push(Process::from_record(r, percent, user, self.counters)?);
        }
        self.processes = rows;
        self.sample = Some(now);
        Ok(())
    }

    /// Read the machine's totals below the handle's proc root:
    /// `meminfo` ([`memory`](ProcessTable::memory)), `stat`
    /// ([`cpu_usage`](ProcessTable::cpu_usage)), `loadavg` and `uptime`.
    ///
    /// # Errors
    ///
    /// As [`SystemMemory::read_from`], [`SystemCpu::read_from`],
    /// [`LoadAverage::read_from`] and [`Uptime::read_from`]: a file that
    /// cannot be read or does not parse (also when the syscall backend
    /// runs without a mounted `/proc`).
    pub fn refresh_system(&mut self) -> Result<()> {
        let root = self
            .pm
            .proc_root()
            .map_or_else(|| PathBuf::from("/proc"), PathBuf::from);
        let memory = SystemMemory::read_from(&root)?;
        let cpu = SystemCpu::read_from(&root)?;
        let load = LoadAverage::read_from(&root)?;
        let uptime = Uptime::read_from(&root)?;
        self.memory = Some(memory);
        self.load = Some(load);
        self.uptime = Some(uptime);
        self.cpu_before = self.cpu.replace(cpu);
        Ok(())
    }

    /// The process `pid`, if the last refresh listed it.
    #[must_use]
    pub fn process(&self, pid: Pid) -> Option<&Process> {
        self.processes
            .binary_search_by_key(&pid, |p| p.pid)
            .ok()
            .map(|i| &self.processes[i])
    }

    /// Every process of the last refresh, ascending by pid.
    pub fn processes(&self) -> impl ExactSizeIterator<Item = &Process> + '_ {
        self.processes.iter()
    }

    /// The children of `pid` (the processes whose parent it is).
    pub fn children(&self, pid: Pid) -> impl Iterator<Item = &Process> + '_ {
        self.processes.iter().filter(move |p| p.ppid == pid)
    }

    /// How many processes the last refresh listed.
    #[must_use]
    pub fn len(&self) -> usize {
        self.processes.len()
    }

    /// Whether the last refresh listed none (or there was none yet).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.processes.is_empty()
    }

    /// The memory totals of the last [`refresh_system`](ProcessTable::refresh_system).
    #[must_use]
    pub fn memory(&self) -> Option<&SystemMemory> {
        self.memory.as_ref()
    }

    /// `p`'s resident memory in percent of the total (`%MEM`), once the
    /// system was refreshed.
    #[must_use]
    pub fn memory_percent(&self, p: &Process) -> Option<f64> {
        self.memory.map(|m| m.percent_of(p.memory))
    }

    /// The load average of the last system refresh.
    #[must_use]
    pub fn load_average(&self) -> Option<LoadAverage> {
        self.load
    }

    /// The uptime of the last system refresh.
    #[must_use]
    pub fn uptime(&self) -> Option<Uptime> {
        self.uptime
    }

    /// All CPUs' use between the last two system refreshes (`None` until
    /// there were two).
    #[must_use]
    pub fn cpu_usage(&self) -> Option<CpuPercent> {
        let (now, before) = (self.cpu.as_ref()?, self.cpu_before.as_ref()?);
        Some(now.total.percent_since(&before.total))
    }

    /// Each online CPU's use between the last two system refreshes, by
    /// CPU number (empty until there were two; a CPU that came online in
    /// between is left out).
    #[must_use]
    pub fn cpus_usage(&self) -> Vec<(u32, CpuPercent)> {
        let (Some(now), Some(before)) = (self.cpu.as_ref(), self.cpu_before.as_ref()) else {
            return Vec::new();
        };
        now.per_cpu
            .iter()
            .filter_map(|(n, times)| Some((*n, times.percent_since(before.cpu(*n)?))))
            .collect()
    }
}
