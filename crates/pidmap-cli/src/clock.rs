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
    if unsafe { libc::clock_gettime(clock, &mut ts) } != 0 {
        return None;
    }
    Some(Duration::new(
        u64::try_from(ts.tv_sec).ok()?,
        u32::try_from(ts.tv_nsec).ok()?,
    ))
}

/// The local wall-clock time (seconds since the epoch) of a moment given
/// as time since boot (`CLOCK_BOOTTIME`, the clock of start times).
pub fn since_boot_to_epoch(since_boot: Duration) -> Option<i64> {
    let boot = now(libc::CLOCK_REALTIME)?.checked_sub(now(libc::CLOCK_BOOTTIME)?)?;
    i64::try_from((boot + since_boot).as_secs()).ok()
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
    let r = unsafe { libc::localtime_r(&t, &mut tm) };
    (!r.is_null()).then_some(tm)
}

/// `HH:MM:SS` of local time.
pub fn clock_time(epoch: i64) -> String {
    match local(epoch) {
        Some(tm) => format!("{:02}:{:02}:{:02}", tm.tm_hour, tm.tm_min, tm.tm_sec),
        None => "?".into(),
    }
}

/// A start time as `ps`'s `START`: `HH:MM` within the last 24 hours,
/// else `MonDD`, else the year.
pub fn ps_start(epoch: i64, now: i64) -> String {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let Some(tm) = local(epoch) else {
        return "?".into();
    };
    let age = now.saturating_sub(epoch);
    if age < 86_400 {
        format!("{:02}:{:02}", tm.tm_hour, tm.tm_min)
    } else if age < 365 * 86_400 {
        let month = usize::try_from(tm.tm_mon).ok().and_then(|m| MONTHS.get(m));
        format!("{}{:02}", month.unwrap_or(&"?"), tm.tm_mday)
    } else {
        format!("{}", i64::from(tm.tm_year) + 1900)
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
        assert_eq!(ps_start(now - 60, now).len(), 5);
        assert_eq!(ps_start(now - 2 * 86_400, now).len(), 5);
        assert_eq!(ps_start(now - 400 * 86_400, now).len(), 4);
        // We started after boot, and before now.
        let boot = since_boot_to_epoch(Duration::ZERO).unwrap();
        assert!(boot <= now && boot > 0);
    }
}
