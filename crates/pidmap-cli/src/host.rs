//! The machine-wide numbers of `top`'s summary header: CPU times and
//! memory from the library ([`SystemCpu`], [`SystemMemory`]), the load
//! averages and uptime parsed here from `/proc/loadavg` and
//! `/proc/uptime`. The parsers take the files' text, so that they are
//! tested on fixed samples; [`Host::read`] reads the files.

use std::path::Path;
use std::time::Duration;

use anyhow::{anyhow, Context, Result};
use pidmap::{SystemCpu, SystemMemory};

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
    /// All CPUs' times, and each CPU's.
    pub cpu: SystemCpu,
    pub memory: SystemMemory,
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
        Ok(Host {
            uptime,
            load,
            cpu: SystemCpu::read_from(proc_root)?,
            memory: SystemMemory::read_from(proc_root)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(h.cpu.total.total() > Duration::ZERO);
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
        assert!(
            !h.cpu.per_cpu.is_empty() && h.cpu.per_cpu.len() <= online,
            "{h:?}"
        );
        let e = Host::read(Path::new("/nonexistent")).unwrap_err();
        assert!(format!("{e:#}").contains("/nonexistent/uptime"), "{e:#}");
    }
}
