//! Times for people: CPU time as `ps` and `top` print it, and a start
//! time since boot as the wall-clock time it was.

use std::time::Duration;

/// `[D-]HH:MM:SS`, as `ps`'s `TIME`.
pub fn ps_time(d: Duration) -> String {
    let s = d.as_secs();
    let (days, h, m, s) = (s / 86_400, s / 3600 % 24, s / 60 % 60, s % 60);
    if days > 0 {
        format!("{days}-{h:02}:{m:02}:{s:02}")
    } else {
        format!("{h:02}:{m:02}:{s:02}")
    }
}

/// `M:SS.hh`, as `top`'s `TIME+`.
pub fn top_time(d: Duration) -> String {
    let hundredths = d.as_millis() / 10;
    let (m, s, h) = (hundredths / 6000, hundredths / 100 % 60, hundredths % 100);
    format!("{m}:{s:02}.{h:02}")
}

/// One clock, read with `clock_gettime`.
fn now(clock: libc::clockid_t) -> Option<Duration> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    if unsafe { libc::clock_gettime(clock, std::ptr::from_mut(&mut ts)) } != 0 {
        return None;
    }
    Some(Duration::new(
        u64::try_from(ts.tv_sec).ok()?,
        u32::try_from(ts.tv_nsec).ok()?,
    ))
}

/// The local wall-clock time (seconds since the epoch) of a moment given
/// as time since boot (`CLOCK_BOOTTIME`, the clock of start times), as
/// `ps` computes it: the boot time in whole seconds (`btime` of
/// `/proc/stat`, which the kernel truncates) plus the whole seconds since
/// boot. Adding the fractions first would put a task started in the last
/// fraction of a second before a minute in the next minute, where `ps`
/// does not.
pub fn since_boot_to_epoch(since_boot: Duration) -> Option<i64> {
    let boot = now(libc::CLOCK_REALTIME)?.checked_sub(now(libc::CLOCK_BOOTTIME)?)?;
    i64::try_from(boot.as_secs().checked_add(since_boot.as_secs())?).ok()
}

/// The current wall-clock time, seconds since the epoch.
pub fn epoch_now() -> Option<i64> {
    i64::try_from(now(libc::CLOCK_REALTIME)?.as_secs()).ok()
}

/// Broken-down local time.
fn local(epoch: i64) -> Option<libc::tm> {
    let t = libc::time_t::try_from(epoch).ok()?;
    // SAFETY: all-zero is a valid `tm` (plain integers and, where present,
    // a null zone pointer), overwritten by localtime_r.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointers to a time_t and a writable tm.
    let r = unsafe { libc::localtime_r(std::ptr::from_ref(&t), std::ptr::from_mut(&mut tm)) };
    (!r.is_null()).then_some(tm)
}

/// `HH:MM:SS` of local time.
pub fn clock_time(epoch: i64) -> String {
    match local(epoch) {
        Some(tm) => format!("{:02}:{:02}:{:02}", tm.tm_hour, tm.tm_min, tm.tm_sec),
        None => "?".into(),
    }
}

/// `ps`'s `START` column (procps's `start_time`/`stime`): `HH:MM` on
/// the same local calendar day as now, `MonDD` in the same year, else the
/// year. procps compares the day of the year, not the age: a task started
/// at 23:59 shows `MonDD` a minute after midnight. Today's date is worked
/// out once per listing, not once per row.
pub struct StartColumn {
    today: Option<libc::tm>,
}

impl StartColumn {
    /// The column as of `now` (seconds since the epoch).
    pub fn at(now: i64) -> Self {
        Self { today: local(now) }
    }

    /// The cell for a task started at `epoch`.
    pub fn cell(&self, epoch: i64) -> String {
        const MONTHS: [&str; 12] = [
            "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
        ];
        let (Some(tm), Some(today)) = (local(epoch), self.today.as_ref()) else {
            return "?".into();
        };
        if tm.tm_year != today.tm_year {
            format!("{}", i64::from(tm.tm_year) + 1900)
        } else if tm.tm_yday != today.tm_yday {
            let month = usize::try_from(tm.tm_mon).ok().and_then(|m| MONTHS.get(m));
            format!("{}{:02}", month.unwrap_or(&"?"), tm.tm_mday)
        } else {
            format!("{:02}:{:02}", tm.tm_hour, tm.tm_min)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_times() {
        assert_eq!(ps_time(Duration::from_secs(3)), "00:00:03");
        assert_eq!(ps_time(Duration::from_secs(90_061)), "1-01:01:01");
        assert_eq!(top_time(Duration::from_millis(61_237)), "1:01.23");
        assert_eq!(top_time(Duration::ZERO), "0:00.00");
    }

    #[test]
    fn start_times() {
        let now = epoch_now().unwrap();
        let today = local(now).unwrap();
        // Local midnight today, whatever the zone: step back by the
        // clock's own hours, minutes and seconds.
        let midnight = now - i64::from(today.tm_hour * 3600 + today.tm_min * 60 + today.tm_sec);
        let column = StartColumn::at(now);
        assert_eq!(column.cell(midnight), "00:00");
        // One second before midnight is yesterday: a date, or the
        // year when today is January 1st.
        let yesterday = column.cell(midnight - 1);
        if today.tm_yday == 0 {
            assert_eq!(yesterday, format!("{}", today.tm_year + 1900 - 1));
        } else {
            assert_eq!(yesterday.len(), 5, "{yesterday:?}");
            assert!(yesterday[..3].chars().all(|c| c.is_ascii_alphabetic()));
        }
        assert_eq!(
            column.cell(now - 400 * 86_400),
            format!("{}", local(now - 400 * 86_400).unwrap().tm_year + 1900)
        );
        // We started after boot, and before now.
        let boot = since_boot_to_epoch(Duration::ZERO).unwrap();
        assert!(boot <= now && boot > 0);
    }
}
