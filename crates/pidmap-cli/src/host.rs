//! The machine-wide numbers of `top`'s summary header, parsed from
//! `/proc/stat`, `/proc/meminfo`, `/proc/loadavg` and `/proc/uptime`.
//! The parsers take the files' text, so that they are tested on fixed
//! samples; [`Host::read`] reads the files.

use std::path::Path;
use std::time::Duration;

use anyhow::{anyhow, Context, Result};

/// The aggregate `cpu` line of `/proc/stat`, in clock ticks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTicks {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
}

/// CPU use over an interval, in percent of all CPUs' time, as top's
/// `%Cpu(s)` line.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CpuPercent {
    pub user: f64,
    pub system: f64,
    pub nice: f64,
    pub idle: f64,
    pub iowait: f64,
    pub irq: f64,
    pub softirq: f64,
    pub steal: f64,
}

impl CpuTicks {
    /// The `cpu ` line of `/proc/stat`'s text. Guest time is already part
    /// of user and nice time, so it is not read.
    pub fn parse(stat: &str) -> Result<CpuTicks> {
        let line = stat
            .lines()
            .find(|l| l.starts_with("cpu "))
            .ok_or_else(|| anyhow!("no `cpu` line"))?;
        CpuTicks::parse_line(line)
    }

    /// The `cpuN` lines of `/proc/stat`'s text, one per online CPU, in
    /// order (top's `1`).
    pub fn parse_each(stat: &str) -> Result<Vec<(u32, CpuTicks)>> {
        stat.lines()
            .filter_map(|l| {
                let rest = l.strip_prefix("cpu")?;
                // `cpu0 ...`, not the aggregate `cpu  ...`.
                let n: u32 = rest.split(' ').next()?.parse().ok()?;
                Some((n, l))
            })
            .map(|(n, l)| Ok((n, CpuTicks::parse_line(l)?)))
            .collect()
    }

    fn parse_line(line: &str) -> Result<CpuTicks> {
        let mut fields = line.split_ascii_whitespace().skip(1).map(|f| {
            f.parse::<u64>()
                .map_err(|_| anyhow!("bad number {f:?} in the `cpu` line"))
        });
        // The kernel has printed at least these eight since Linux 2.6.11.
        let mut next = || {
            fields
                .next()
                .unwrap_or_else(|| Err(anyhow!("short `cpu` line")))
        };
        Ok(CpuTicks {
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

    fn total(&self) -> u64 {
        self.user
            + self.nice
            + self.system
            + self.idle
            + self.iowait
            + self.irq
            + self.softirq
            + self.steal
    }

    /// The shares of the ticks between `earlier` and `self`. Counters that
    /// went backwards (idle and iowait can, on some kernels) count as 0.
    pub fn percent_since(&self, earlier: &CpuTicks) -> CpuPercent {
        let d = |now: u64, then: u64| now.saturating_sub(then) as f64;
        let total = d(self.total(), earlier.total());
        if total == 0.0 {
            return CpuPercent {
                idle: 100.0,
                ..CpuPercent::default()
            };
        }
        let pct = |now: u64, then: u64| d(now, then) * 100.0 / total;
        CpuPercent {
            user: pct(self.user, earlier.user),
            system: pct(self.system, earlier.system),
            nice: pct(self.nice, earlier.nice),
            idle: pct(self.idle, earlier.idle),
            iowait: pct(self.iowait, earlier.iowait),
            irq: pct(self.irq, earlier.irq),
            softirq: pct(self.softirq, earlier.softirq),
            steal: pct(self.steal, earlier.steal),
        }
    }
}

/// What top's memory lines show, in KiB.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Memory {
    pub total: u64,
    pub free: u64,
    pub available: u64,
    /// Buffers + Cached + SReclaimable, as procps counts buff/cache.
    pub buff_cache: u64,
    pub swap_total: u64,
    pub swap_free: u64,
}

impl Memory {
    /// `/proc/meminfo`'s text. MemTotal and MemFree are required; a
    /// missing MemAvailable (kernels before 3.14) is estimated as procps
    /// does without it, free + buff/cache.
    pub fn parse(meminfo: &str) -> Result<Memory> {
        let mut total = None;
        let mut free = None;
        let mut available = None;
        let (mut buffers, mut cached, mut reclaimable) = (0, 0, 0);
        let (mut swap_total, mut swap_free) = (0, 0);
        for line in meminfo.lines() {
            let Some((key, rest)) = line.split_once(':') else {
                continue;
            };
            let value = || -> Result<u64> {
                let number = rest.trim().trim_end_matches("kB").trim_end();
                number
                    .parse()
                    .map_err(|_| anyhow!("bad value {:?} for {key}", rest.trim()))
            };
            match key {
                "MemTotal" => total = Some(value()?),
                "MemFree" => free = Some(value()?),
                "MemAvailable" => available = Some(value()?),
                "Buffers" => buffers = value()?,
                "Cached" => cached = value()?,
                "SReclaimable" => reclaimable = value()?,
                "SwapTotal" => swap_total = value()?,
                "SwapFree" => swap_free = value()?,
                _ => {}
            }
        }
        let total = total.ok_or_else(|| anyhow!("no MemTotal"))?;
        let free = free.ok_or_else(|| anyhow!("no MemFree"))?;
        let buff_cache = buffers + cached + reclaimable;
        Ok(Memory {
            total,
            free,
            available: available.unwrap_or(free + buff_cache).min(total),
            buff_cache,
            swap_total,
            swap_free,
        })
    }

    /// Used memory as procps 4 counts it: total minus available.
    pub fn used(&self) -> u64 {
        self.total.saturating_sub(self.available)
    }

    pub fn swap_used(&self) -> u64 {
        self.swap_total.saturating_sub(self.swap_free)
    }
}

/// The 1, 5 and 15 minute load averages.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Load(pub f64, pub f64, pub f64);

impl Load {
    /// `/proc/loadavg`'s text: `0.52 0.58 0.59 1/467 12345`.
    pub fn parse(loadavg: &str) -> Result<Load> {
        let mut it = loadavg.split_ascii_whitespace().map(|f| {
            f.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= 0.0)
                .ok_or_else(|| anyhow!("bad load average {f:?}"))
        });
        let mut next = || it.next().unwrap_or_else(|| Err(anyhow!("short loadavg")));
        Ok(Load(next()?, next()?, next()?))
    }
}

/// The first number of `/proc/uptime`: seconds since boot.
pub fn parse_uptime(uptime: &str) -> Result<Duration> {
    let first = uptime.split_ascii_whitespace().next().unwrap_or("");
    first
        .parse::<f64>()
        .ok()
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
        .ok_or_else(|| anyhow!("bad uptime {first:?}"))
}

/// An uptime as top prints it: `up 7 min`, `up 1:05`, `up 3 days, 2:04`.
pub fn format_uptime(up: Duration) -> String {
    let minutes = up.as_secs() / 60;
    let (days, hours, mins) = (minutes / 1440, minutes / 60 % 24, minutes % 60);
    let clock = if hours > 0 {
        format!("{hours}:{mins:02}")
    } else {
        format!("{mins} min")
    };
    match days {
        0 => format!("up {clock}"),
        1 => format!("up 1 day, {clock}"),
        n => format!("up {n} days, {clock}"),
    }
}

/// One reading of all four files.
#[derive(Debug, Clone)]
pub struct Host {
    pub uptime: Duration,
    pub load: Load,
    pub cpu: CpuTicks,
    /// Each CPU's ticks, by CPU number.
    pub per_cpu: Vec<(u32, CpuTicks)>,
    pub memory: Memory,
}

impl Host {
    /// Read the files below `proc_root`.
    pub fn read(proc_root: &Path) -> Result<Host> {
        let text = |name: &str| {
            let path = proc_root.join(name);
            std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))
        };
        let parsed = |name: &str, e: anyhow::Error| {
            e.context(format!("parsing {}", proc_root.join(name).display()))
        };
        let uptime = parse_uptime(&text("uptime")?).map_err(|e| parsed("uptime", e))?;
        let load = Load::parse(&text("loadavg")?).map_err(|e| parsed("loadavg", e))?;
        let stat = text("stat")?;
        Ok(Host {
            uptime,
            load,
            cpu: CpuTicks::parse(&stat).map_err(|e| parsed("stat", e))?,
            per_cpu: CpuTicks::parse_each(&stat).map_err(|e| parsed("stat", e))?,
            memory: Memory::parse(&text("meminfo")?).map_err(|e| parsed("meminfo", e))?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "cpu  13034 30197 10788 32554 760 0 190 968 5 0\n\
                        cpu0 6532 14776 5238 16993 205 0 22 470 0 0\n\
                        intr 1234 0 0\nctxt 99\n";

    #[test]
    fn stat_cpu_line() {
        let t = CpuTicks::parse(STAT).unwrap();
        assert_eq!(
            t,
            CpuTicks {
                user: 13034,
                nice: 30197,
                system: 10788,
                idle: 32554,
                iowait: 760,
                irq: 0,
                softirq: 190,
                steal: 968,
            }
        );
        assert!(CpuTicks::parse("cpu0 1 2 3 4 5 6 7 8\n").is_err());
        assert!(CpuTicks::parse("cpu  1 2 3\n").is_err());
        assert!(CpuTicks::parse("cpu  1 2 x 4 5 6 7 8\n").is_err());
        assert!(CpuTicks::parse("").is_err());
        let each = CpuTicks::parse_each(STAT).unwrap();
        assert_eq!(each.len(), 1);
        assert_eq!((each[0].0, each[0].1.user, each[0].1.steal), (0, 6532, 470));
        assert!(CpuTicks::parse_each("cpu0 1 2\n").is_err());
    }

    #[test]
    fn cpu_percent_is_the_delta_share() {
        let before = CpuTicks::parse("cpu  100 0 50 800 10 0 0 0\n").unwrap();
        // 200 ticks later: 60 user, 20 system, 10 nice, 100 idle, 10 iowait.
        let after = CpuTicks::parse("cpu  160 10 70 900 20 0 0 0\n").unwrap();
        let p = after.percent_since(&before);
        assert_eq!((p.user, p.system, p.nice), (30.0, 10.0, 5.0));
        assert_eq!((p.idle, p.iowait), (50.0, 5.0));
        // No ticks at all: idle, not a division by zero.
        assert_eq!(after.percent_since(&after).idle, 100.0);
        // A counter that went backwards counts as none.
        let odd = CpuTicks::parse("cpu  160 10 70 899 20 0 0 0\n").unwrap();
        assert_eq!(odd.percent_since(&after).idle, 100.0);
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
        let m = Memory::parse(MEMINFO).unwrap();
        assert_eq!(m.total, 24_683_584);
        assert_eq!(m.free, 18_963_616);
        assert_eq!(m.available, 24_007_528);
        assert_eq!(m.buff_cache, 81_108 + 4_728_064 + 500_000);
        assert_eq!(m.used(), 24_683_584 - 24_007_528);
        assert_eq!(m.swap_used(), 48_572);
        // Without MemAvailable: free + buff/cache.
        let old = Memory::parse("MemTotal: 1000 kB\nMemFree: 100 kB\nCached: 300 kB\n").unwrap();
        assert_eq!((old.available, old.used()), (400, 600));
        assert!(Memory::parse("MemFree: 1 kB\n").is_err());
        assert!(Memory::parse("MemTotal: lots\nMemFree: 1 kB\n").is_err());
    }

    #[test]
    fn loadavg_and_uptime() {
        assert_eq!(
            Load::parse("5.89 3.10 1.28 8/112 11979\n").unwrap(),
            Load(5.89, 3.10, 1.28)
        );
        assert!(Load::parse("5.89 3.10\n").is_err());
        assert!(Load::parse("a b c\n").is_err());
        assert_eq!(
            parse_uptime("444.09 325.54\n").unwrap(),
            Duration::from_millis(444_090)
        );
        assert!(parse_uptime("").is_err());
        assert!(parse_uptime("-3 1").is_err());
    }

    #[test]
    fn uptime_as_top_prints_it() {
        assert_eq!(format_uptime(Duration::from_secs(7 * 60 + 5)), "up 7 min");
        assert_eq!(format_uptime(Duration::from_secs(3900)), "up 1:05");
        assert_eq!(
            format_uptime(Duration::from_secs(86_400 + 60)),
            "up 1 day, 1 min"
        );
        assert_eq!(
            format_uptime(Duration::from_secs(3 * 86_400 + 2 * 3600 + 4 * 60)),
            "up 3 days, 2:04"
        );
    }

    #[test]
    fn reads_this_machine() {
        let h = Host::read(Path::new("/proc")).unwrap();
        assert!(h.memory.total > 0 && h.memory.used() <= h.memory.total);
        assert!(h.uptime > Duration::ZERO);
        let online = std::fs::read_dir("/sys/devices/system/cpu")
            .unwrap()
            .filter(|e| {
                let name = e.as_ref().unwrap().file_name();
                let name = name.to_string_lossy();
                name.strip_prefix("cpu")
                    .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            })
            .count();
        assert!(!h.per_cpu.is_empty() && h.per_cpu.len() <= online, "{h:?}");
        let e = Host::read(Path::new("/nonexistent")).unwrap_err();
        assert!(format!("{e:#}").contains("/nonexistent/uptime"), "{e:#}");
    }
}
