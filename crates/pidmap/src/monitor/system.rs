//! Machine-wide totals for a monitor's header and its `%MEM` column:
//! memory from `/proc/meminfo`, CPU time from `/proc/stat`.
//!
//! Each type reads its file below a proc root (`/proc` by default) and
//! parses it with a parser that also takes the text alone, so that a
//! program can parse a file it read itself. These are plain file reads
//! and need neither the `fallback` feature nor the system calls.
//!
//! ```
//! use std::time::Duration;
//! use pidmap::monitor::{SystemCpu, SystemMemory};
//!
//! let mem = SystemMemory::read()?;
//! assert!(mem.used() <= mem.total);
//! let before = SystemCpu::read()?;
//! std::thread::sleep(Duration::from_millis(20));
//! let now = SystemCpu::read()?;
//! let busy = now.total.percent_since(&before.total);
//! println!("{:.1}% idle, {} KiB in use", busy.idle, mem.used() / 1024);
//! # Ok::<(), pidmap::Error>(())
//! ```

use std::path::Path;
use std::time::Duration;

use crate::error::{Error, ParseError, Result};
use crate::info::ticks;
/// Where procfs is mounted by default.
const PROC: &str = "/proc";

/// Read `name` below `proc_root` and parse it.
pub(crate) fn read_file<T>(
    proc_root: &Path,
    name: &str,
    parse: impl FnOnce(&str) -> Result<T, ParseError>,
) -> Result<T> {
    let path = proc_root.join(name);
    let text = std::fs::read_to_string(&path)
        .map_err(|e| Error::io(format!("reading {}", path.display()), e))?;
    parse(&text).map_err(|source| Error::Parse { path, source })
}

/// System memory, in bytes, as `/proc/meminfo` gives it and `free` and
/// `top` print it.
///
/// ```
/// let mem = pidmap::monitor::SystemMemory::parse(
///     "MemTotal: 1000 kB\nMemFree: 100 kB\nMemAvailable: 600 kB\nCached: 300 kB\n",
/// )?;
/// assert_eq!((mem.total, mem.used()), (1_024_000, 409_600));
/// assert_eq!(mem.percent_of(102_400), 10.0);
/// # Ok::<(), pidmap::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SystemMemory {
    /// Usable RAM (`MemTotal`).
    pub total: u64,
    /// RAM not used at all (`MemFree`).
    pub free: u64,
    /// RAM that could be given to programs without swapping
    /// (`MemAvailable`); on kernels before 3.14, which lack it, `free +
    /// buff_cache` as procps estimates it, at most `total`.
    pub available: u64,
    /// Page cache, block-device buffers and reclaimable slab: `Buffers +
    /// Cached + SReclaimable`, procps' `buff/cache`.
    pub buff_cache: u64,
    /// Swap space (`SwapTotal`).
    pub swap_total: u64,
    /// Unused swap space (`SwapFree`).
    pub swap_free: u64,
}

impl SystemMemory {
    /// Read `/proc/meminfo`.
    ///
    /// # Errors
    ///
    /// As [`read_from`](SystemMemory::read_from).
    pub fn read() -> Result<SystemMemory> {
        SystemMemory::read_from(PROC)
    }

    /// Read `meminfo` below `proc_root` (a procfs mount, as
    /// [`Builder::proc_root`](crate::Builder::proc_root)).
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when the file cannot be read, [`Error::Parse`] when it
    /// does not parse (see [`parse`](SystemMemory::parse)).
    pub fn read_from(proc_root: impl AsRef<Path>) -> Result<SystemMemory> {
        read_file(proc_root.as_ref(), "meminfo", SystemMemory::parse)
    }

    /// Parse the text of `/proc/meminfo`. `MemTotal` and `MemFree` are
    /// required; a missing line of the others counts as 0 (but see
    /// [`available`](Self::available)).
    ///
    /// # Errors
    ///
    /// What is wrong, when there is no `MemTotal` or `MemFree` line, or a
    /// value the struct keeps is not a number of kB.
    pub fn parse(meminfo: &str) -> Result<SystemMemory, ParseError> {
        let mut total = None;
        let mut free = None;
        let mut available = None;
        let (mut buffers, mut cached, mut reclaimable) = (0, 0, 0);
        let (mut swap_total, mut swap_free) = (0, 0);
        for line in meminfo.lines() {
            let Some((key, rest)) = line.split_once(':') else {
                continue;
            };
            let bytes = || -> Result<u64, ParseError> {
                let value = rest.trim();
                value
                    .strip_suffix("kB")
                    .and_then(|n| n.trim_end().parse::<u64>().ok())
                    .and_then(|kib| kib.checked_mul(1024))
                    .ok_or_else(|| ParseError::new(format!("bad value {value:?} for {key}")))
            };
            match key {
                "MemTotal" => total = Some(bytes()?),
                "MemFree" => free = Some(bytes()?),
                "MemAvailable" => available = Some(bytes()?),
                "Buffers" => buffers = bytes()?,
                "Cached" => cached = bytes()?,
                "SReclaimable" => reclaimable = bytes()?,
                "SwapTotal" => swap_total = bytes()?,
                "SwapFree" => swap_free = bytes()?,
                _ => {}
            }
        }
        let total = total.ok_or_else(|| ParseError::new("no MemTotal line"))?;
        let free = free.ok_or_else(|| ParseError::new("no MemFree line"))?;
        let buff_cache = buffers.saturating_add(cached).saturating_add(reclaimable);
        Ok(SystemMemory {
            total,
            free,
            available: available
                .unwrap_or_else(|| free.saturating_add(buff_cache))
                .min(total),
            buff_cache,
            swap_total,
            swap_free,
        })
    }

    /// Memory in use, as procps 4 (`free`, `top`) counts it: `total -
    /// available`.
    #[must_use]
    pub fn used(&self) -> u64 {
        self.total.saturating_sub(self.available)
    }

    /// Swap in use: `swap_total - swap_free`.
    #[must_use]
    pub fn swap_used(&self) -> u64 {
        self.swap_total.saturating_sub(self.swap_free)
    }

    /// `bytes` in percent of [`total`](Self::total), as `top`'s and `ps`'s
    /// `%MEM` of a resident set ([`TaskInfo::rss_bytes`]); 0 when the
    /// total is 0.
    ///
    /// [`TaskInfo::rss_bytes`]: crate::TaskInfo::rss_bytes
    #[must_use]
    pub fn percent_of(&self, bytes: u64) -> f64 {
        if self.total == 0 {
            return 0.0;
        }
        // Exact below 2^53 bytes (8 PiB): more than any machine has.
        #[allow(clippy::cast_precision_loss)]
        let share = bytes as f64 * 100.0 / self.total as f64;
        share
    }
}

/// CPU time spent in each mode: one line of `/proc/stat` (`cpu` for all
/// CPUs, `cpuN` for one), counted since boot.
///
/// Time spent running guests is part of [`user`](Self::user) and
/// [`nice`](Self::nice), as the kernel counts it, and is not repeated.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CpuTimes {
    /// Running user code at nice 0 or below.
    pub user: Duration,
    /// Running user code at a positive nice value.
    pub nice: Duration,
    /// Running kernel code.
    pub system: Duration,
    /// Idle.
    pub idle: Duration,
    /// Idle while a disk read or write was outstanding.
    pub iowait: Duration,
    /// Serving hardware interrupts.
    pub irq: Duration,
    /// Serving software interrupts.
    pub softirq: Duration,
    /// Taken by the hypervisor for other guests.
    pub steal: Duration,
}

/// The shares of [`CpuTimes`]' modes between two readings, in percent of
/// the CPU time that passed (they add up to 100), as `top`'s `%Cpu(s)`
/// line.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
#[non_exhaustive]
pub struct CpuPercent {
    /// [`CpuTimes::user`]'s share.
    pub user: f64,
    /// [`CpuTimes::nice`]'s share.
    pub nice: f64,
    /// [`CpuTimes::system`]'s share.
    pub system: f64,
    /// [`CpuTimes::idle`]'s share.
    pub idle: f64,
    /// [`CpuTimes::iowait`]'s share.
    pub iowait: f64,
    /// [`CpuTimes::irq`]'s share.
    pub irq: f64,
    /// [`CpuTimes::softirq`]'s share.
    pub softirq: f64,
    /// [`CpuTimes::steal`]'s share.
    pub steal: f64,
}

impl CpuTimes {
    /// Parse one `cpu` line of `/proc/stat`, its label included.
    fn parse_line(line: &str) -> Result<CpuTimes, ParseError> {
        let label = line.split_ascii_whitespace().next().unwrap_or("");
        let mut fields = line.split_ascii_whitespace().skip(1).map(|f| {
            f.parse::<u64>()
                .map(ticks)
                .map_err(|_| ParseError::new(format!("bad number {f:?} in the {label:?} line")))
        });
        // The kernel has printed at least these eight since Linux 2.6.11.
        let mut next = || {
            fields.next().unwrap_or_else(|| {
                Err(ParseError::new(format!(
                    "the {label:?} line has fewer than 8 numbers"
                )))
            })
        };
        Ok(CpuTimes {
            user: next()?,
            nice: next()?,
            system: next()?,
            idle: next()?,
            iowait: next()?,
            irq: next()?,
            softirq: next()?,
            steal: next()?,
        })
    }

    /// All the modes' time together.
    #[must_use]
    pub fn total(&self) -> Duration {
        self.busy() + self.idle + self.iowait
    }

    /// The time not idle: every mode but [`idle`](Self::idle) and
    /// [`iowait`](Self::iowait).
    #[must_use]
    pub fn busy(&self) -> Duration {
        self.user + self.nice + self.system + self.irq + self.softirq + self.steal
    }

    /// The shares of each mode in the time between `earlier` and `self`.
    /// A counter that went backwards (idle and iowait can, on some
    /// kernels) counts as no time; when no time passed at all the CPU
    /// counts as idle (100 %).
    #[must_use]
    pub fn percent_since(&self, earlier: &CpuTimes) -> CpuPercent {
        let d = |now: Duration, then: Duration| now.saturating_sub(then).as_secs_f64();
        let deltas = [
            d(self.user, earlier.user),
            d(self.nice, earlier.nice),
            d(self.system, earlier.system),
            d(self.idle, earlier.idle),
            d(self.iowait, earlier.iowait),
            d(self.irq, earlier.irq),
            d(self.softirq, earlier.softirq),
            d(self.steal, earlier.steal),
        ];
        let total: f64 = deltas.iter().sum();
        if total == 0.0 {
            return CpuPercent {
                idle: 100.0,
                ..CpuPercent::default()
            };
        }
        let [user, nice, system, idle, iowait, irq, softirq, steal] =
            deltas.map(|t| t * 100.0 / total);
        CpuPercent {
            user,
            nice,
            system,
            idle,
            iowait,
            irq,
            softirq,
            steal,
        }
    }
}

impl CpuPercent {
    /// The share not idle: 100 minus [`idle`](Self::idle) and
    /// [`iowait`](Self::iowait).
    #[must_use]
    pub fn busy(&self) -> f64 {
        self.user + self.nice + self.system + self.irq + self.softirq + self.steal
    }
}

/// The CPU times of `/proc/stat`: all CPUs together, and each online CPU.
///
/// ```
/// let stat = "cpu  10 0 5 85 0 0 0 0\ncpu0 6 0 2 42 0 0 0 0\ncpu1 4 0 3 43 0 0 0 0\n";
/// let cpu = pidmap::monitor::SystemCpu::parse(stat)?;
/// assert_eq!(cpu.per_cpu.len(), 2);
/// assert_eq!(cpu.per_cpu[1].0, 1);
/// assert_eq!(cpu.total.user, cpu.per_cpu[0].1.user + cpu.per_cpu[1].1.user);
/// # Ok::<(), pidmap::ParseError>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SystemCpu {
    /// All CPUs together (the `cpu` line).
    pub total: CpuTimes,
    /// Each online CPU's times by its number (the `cpuN` lines), in the
    /// kernel's order. An offline CPU has no line, so the numbers may have
    /// gaps.
    pub per_cpu: Vec<(u32, CpuTimes)>,
}

impl SystemCpu {
    /// Read `/proc/stat`.
    ///
    /// # Errors
    ///
    /// As [`read_from`](SystemCpu::read_from).
    pub fn read() -> Result<SystemCpu> {
        SystemCpu::read_from(PROC)
    }

    /// Read `stat` below `proc_root` (a procfs mount, as
    /// [`Builder::proc_root`](crate::Builder::proc_root)).
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when the file cannot be read, [`Error::Parse`] when it
    /// does not parse (see [`parse`](SystemCpu::parse)).
    pub fn read_from(proc_root: impl AsRef<Path>) -> Result<SystemCpu> {
        read_file(proc_root.as_ref(), "stat", SystemCpu::parse)
    }

    /// Parse the text of `/proc/stat`. The `cpu` line is required.
    ///
    /// # Errors
    ///
    /// What is wrong, when there is no `cpu` line, or a `cpu` or `cpuN` line
    /// has fewer than eight numbers or a field that is not one.
    pub fn parse(stat: &str) -> Result<SystemCpu, ParseError> {
        let mut total = None;
        let mut per_cpu = Vec::new();
        for line in stat.lines() {
            let Some(rest) = line.strip_prefix("cpu") else {
                continue;
            };
            let label = rest.split(' ').next().unwrap_or("");
            if label.is_empty() {
                total = Some(CpuTimes::parse_line(line)?);
            } else if let Ok(n) = label.parse::<u32>() {
                per_cpu.push((n, CpuTimes::parse_line(line)?));
            }
        }
        Ok(SystemCpu {
            total: total.ok_or_else(|| ParseError::new("no \"cpu\" line"))?,
            per_cpu,
        })
    }

    /// CPU `n`'s times, when it is online.
    #[must_use]
    pub fn cpu(&self, n: u32) -> Option<&CpuTimes> {
        self.per_cpu.iter().find(|(m, _)| *m == n).map(|(_, t)| t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "cpu  13034 30197 10788 32554 760 0 190 968 5 0\n\
                        cpu0 6532 14776 5238 16993 205 0 22 470 0 0\n\
                        cpu2 6502 15421 5550 15561 555 0 168 498 5 0\n\
                        intr 1234 0 0\nctxt 99\ncpufreq 1 2\n";

    #[test]
    fn stat_lines() {
        let c = SystemCpu::parse(STAT).unwrap();
        assert_eq!(
            c.total,
            CpuTimes {
                user: ticks(13034),
                nice: ticks(30197),
                system: ticks(10788),
                idle: ticks(32554),
                iowait: ticks(760),
                irq: ticks(0),
                softirq: ticks(190),
                steal: ticks(968),
            }
        );
        let numbers: Vec<u32> = c.per_cpu.iter().map(|(n, _)| *n).collect();
        assert_eq!(numbers, [0, 2]);
        assert_eq!(c.cpu(2).unwrap().steal, ticks(498));
        assert!(c.cpu(1).is_none());
        assert_eq!(c.total.busy() + ticks(32554 + 760), c.total.total());
        for bad in [
            "",
            "cpu0 1 2 3 4 5 6 7 8\n",
            "cpu  1 2 3\n",
            "cpu  1 2 x 4 5 6 7 8\n",
            "cpu  1 2 3 4 5 6 7 8\ncpu0 1 2\n",
        ] {
            assert!(SystemCpu::parse(bad).is_err(), "{bad:?}");
        }
        let e = SystemCpu::parse("cpu  1 2 3\n").unwrap_err();
        assert_eq!(e.to_string(), "the \"cpu\" line has fewer than 8 numbers");
    }

    #[test]
    fn percent_is_the_delta_share() {
        let before = SystemCpu::parse("cpu  100 0 50 800 10 0 0 0\n").unwrap();
        // 200 ticks later: 60 user, 20 system, 10 nice, 100 idle, 10 iowait.
        let after = SystemCpu::parse("cpu  160 10 70 900 20 0 0 0\n").unwrap();
        let p = after.total.percent_since(&before.total);
        assert_eq!((p.user, p.system, p.nice), (30.0, 10.0, 5.0));
        assert_eq!((p.idle, p.iowait, p.busy()), (50.0, 5.0, 45.0));
        // No time at all: idle, not a division by zero.
        assert_eq!(after.total.percent_since(&after.total).idle, 100.0);
        // A counter that went backwards counts as none.
        let odd = SystemCpu::parse("cpu  160 10 70 899 20 0 0 0\n").unwrap();
        assert_eq!(odd.total.percent_since(&after.total).idle, 100.0);
    }

    const MEMINFO: &str = "MemTotal:       24683584 kB\n\
                           MemFree:        18963616 kB\n\
                           MemAvailable:   24007528 kB\n\
                           Buffers:           81108 kB\n\
                           Cached:          4728064 kB\n\
                           SwapCached:            0 kB\n\
                           SwapTotal:        1048572 kB\n\
                           SwapFree:          1000000 kB\n\
                           SReclaimable:     500000 kB\n\
                           HugePages_Total:       0\n";

    #[test]
    fn meminfo() {
        let m = SystemMemory::parse(MEMINFO).unwrap();
        assert_eq!(m.total, 24_683_584 * 1024);
        assert_eq!(m.free, 18_963_616 * 1024);
        assert_eq!(m.available, 24_007_528 * 1024);
        assert_eq!(m.buff_cache, (81_108 + 4_728_064 + 500_000) * 1024);
        assert_eq!(m.used(), (24_683_584 - 24_007_528) * 1024);
        assert_eq!(m.swap_used(), 48_572 * 1024);
        assert_eq!(m.percent_of(m.total / 4), 25.0);
        // Without MemAvailable: free + buff/cache.
        let old =
            SystemMemory::parse("MemTotal: 1000 kB\nMemFree: 100 kB\nCached: 300 kB\n").unwrap();
        assert_eq!((old.available, old.used()), (400 * 1024, 600 * 1024));
        assert_eq!(SystemMemory::default().percent_of(1), 0.0);
        for bad in [
            "MemFree: 1 kB\n",
            "MemTotal: 1 kB\n",
            "MemTotal: lots\nMemFree: 1 kB\n",
            "MemTotal: 1\nMemFree: 1 kB\n",
            "MemTotal: 18446744073709551615 kB\nMemFree: 1 kB\n",
        ] {
            assert!(SystemMemory::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn errors_name_the_file() {
        let dir = std::env::temp_dir().join(format!("pidmap-system-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("meminfo"), "MemFree: 1 kB\n").unwrap();
        let e = SystemMemory::read_from(&dir).unwrap_err();
        assert!(matches!(e, Error::Parse { .. }), "{e:?}");
        assert_eq!(
            e.to_string(),
            format!("malformed {}", dir.join("meminfo").display())
        );
        let cause = std::error::Error::source(&e).map(ToString::to_string);
        assert_eq!(cause.as_deref(), Some("no MemTotal line"));
        let e = SystemCpu::read_from(&dir).unwrap_err();
        assert!(
            matches!(&e, Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound)
        );
        assert_eq!(
            e.to_string(),
            format!("reading {}", dir.join("stat").display())
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
