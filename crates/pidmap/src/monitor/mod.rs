//! What a monitor (a `top`, an exporter) builds on the pid API: CPU use
//! between two refreshes ([`CpuSample`]), a process table that picks its
//! fields and keeps the last snapshot ([`ProcessTable`], [`Process`]), the
//! machine's totals ([`SystemMemory`], [`SystemCpu`], [`LoadAverage`],
//! [`Uptime`]) and user names ([`user_name`], [`user_id`], [`UserNames`]).
//!
//! The totals are plain reads of `/proc/meminfo`, `/proc/stat`,
//! `/proc/loadavg` and `/proc/uptime` (with or without the `fallback`
//! feature); the user names come from the C library's user database.
//!
//! ```
//! use std::time::Duration;
//! use pidmap::{InfoFields, Pidmap, Query};
//! use pidmap::monitor::{CpuSample, SystemMemory, UserNames};
//!
//! let mut pm = Pidmap::monitor()?;
//! let fields = CpuSample::FIELDS | InfoFields::RSS | InfoFields::UIDS;
//! let mut records = Vec::new();
//! pm.fill_info(Query::processes(), fields, &mut records)?;
//! let before = CpuSample::now(&records);
//! std::thread::sleep(Duration::from_millis(20));
//! pm.fill_info(Query::processes(), fields, &mut records)?;
//! let now = CpuSample::now(&records);
//! let memory = SystemMemory::read()?;
//! let mut names = UserNames::new();
//! for (r, cpu) in now.records_since(&before, &records) {
//!     let user = r.euid.map_or("?", |uid| names.get(uid));
//!     let mem = r.rss_bytes().map(|b| memory.percent_of(b));
//!     let _ = (r.tid, user, mem, cpu.and_then(|c| c.percent));
//! }
//! # Ok::<(), pidmap::Error>(())
//! ```

mod cpu;
mod cpu_fields;
mod load;
mod process;
mod process_table;
mod system;
mod users;

pub use cpu::{CpuSample, TaskCpu, TaskKey};
pub use load::{LoadAverage, Uptime};
pub use process::Process;
pub use process_table::ProcessTable;
pub use system::{CpuPercent, CpuTimes, SystemCpu, SystemMemory};
pub use users::{user_id, user_name, UserNames};
