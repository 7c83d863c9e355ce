//! The machine-wide numbers of `top`'s summary header, all read by the
//! library: CPU times and memory ([`SystemCpu`], [`SystemMemory`]), the
//! load averages ([`LoadAverage`]) and the uptime ([`Uptime`]); and the
//! uptime as top prints it.

use std::path::Path;
use std::time::Duration;

use anyhow::Result;
use pidmap::monitor::{LoadAverage, SystemCpu, SystemMemory, Uptime};

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
    pub load: LoadAverage,
    /// All CPUs' times, and each CPU's.
    pub cpu: SystemCpu,
    pub memory: SystemMemory,
}

impl Host {
    /// Read the files below `proc_root`.
    pub fn read(proc_root: &Path) -> Result<Host> {
        Ok(Host {
            uptime: Uptime::read_from(proc_root)?.up,
            load: LoadAverage::read_from(proc_root)?,
            cpu: SystemCpu::read_from(proc_root)?,
            memory: SystemMemory::read_from(proc_root)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
