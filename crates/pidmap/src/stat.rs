//! One parser for `/proc/PID/stat` (and the `Tgid:` of `/proc/PID/status`),
//! shared by the /proc fallback and the `pidmap` CLI.

use crate::pid::Pid;

/// The fields of a `/proc/PID/stat` line this crate uses.
///
/// The name (`comm`) may hold any byte but NUL, `)` and newlines included:
/// it is taken between the first `(` and the **last** `)`, as procps does.
///
/// ```
/// use pidmap::Stat;
/// let s = Stat::parse(b"77 (evil\nname) Z 1) S 1 77 77 0 -1 4194560 0 0\n").unwrap();
/// assert_eq!(s.comm, b"evil\nname) Z 1");
/// assert_eq!((s.state, s.ppid), (b'S', 1));
/// assert!(!s.is_kernel_thread());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stat<'a> {
    /// Field 1, the id.
    pub pid: i32,
    /// Field 2, the name without its parentheses (raw bytes).
    pub comm: &'a [u8],
    /// Field 3, the state letter (`R`, `S`, `Z`, ...).
    pub state: u8,
    /// Field 4, the parent's thread-group id (0 for pid 1 and kthreadd).
    pub ppid: i32,
    /// Field 9, the task flags (`PF_*`).
    pub flags: u64,
    /// Fields 14 to 24, when the line has them.
    pub counters: Option<StatCounters>,
}

/// The counters of a stat line (fields 14 to 24), in its units: times in
/// clock ticks (`sysconf(_SC_CLK_TCK)`), the resident set in pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct StatCounters {
    /// Field 14, user time.
    pub utime_ticks: u64,
    /// Field 15, system time.
    pub stime_ticks: u64,
    /// Field 18, the priority.
    pub priority: i32,
    /// Field 19, the nice value.
    pub nice: i32,
    /// Field 20, the number of threads of the group.
    pub num_threads: u32,
    /// Field 22, the start time since boot.
    pub start_time_ticks: u64,
    /// Field 24, the resident set size: the kernel's approximate
    /// per-CPU-cached counter (`ps` shows `VmRSS` from `status`, exact).
    pub rss_pages: u64,
    /// Field 41, the scheduling policy (`SCHED_*`), when the line has it.
    pub policy: Option<u32>,
}

impl StatCounters {
    /// The nice value means something: the policy is `SCHED_OTHER` (0) or
    /// `SCHED_BATCH` (3), the only ones `ps` shows a nice value for (it
    /// shows `-` under `SCHED_FIFO`, `SCHED_RR`, `SCHED_IDLE`,
    /// `SCHED_DEADLINE`). A line without the policy (field 41) has one.
    #[must_use]
    pub fn has_nice(&self) -> bool {
        match self.policy {
            None => true,
            Some(p) => {
                i32::try_from(p).is_ok_and(|p| p == libc::SCHED_OTHER || p == libc::SCHED_BATCH)
            }
        }
    }
}

impl StatCounters {
    /// The fields after `flags` (field 10 on).
    fn parse<'a>(mut rest: impl Iterator<Item = &'a [u8]>) -> Option<StatCounters> {
        let utime_ticks = parse_num(rest.nth(4)?)?;
        let stime_ticks = parse_num(rest.next()?)?;
        let priority = parse_num(rest.nth(2)?)?;
        let nice = parse_num(rest.next()?)?;
        let num_threads = parse_num(rest.next()?)?;
        let start_time_ticks = parse_num(rest.nth(1)?)?;
        let rss_pages = parse_num(rest.nth(1)?)?;
        // Fields 25 to 40, then 41.
        let policy = rest.nth(16).and_then(parse_num);
        Some(StatCounters {
            utime_ticks,
            stime_ticks,
            priority,
            nice,
            num_threads,
            start_time_ticks,
            rss_pages,
            policy,
        })
    }
}

impl<'a> Stat<'a> {
    /// Parse one line; `None` if it is not a stat line.
    #[must_use]
    pub fn parse(line: &'a [u8]) -> Option<Stat<'a>> {
        let open = line.iter().position(|&b| b == b'(')?;
        let close = line.iter().rposition(|&b| b == b')')?;
        if close < open {
            return None;
        }
        let pid = parse_i32(line[..open].strip_suffix(b" ")?)?;
        let comm = &line[open + 1..close];
        let mut rest = line[close + 1..]
            .split(|&b| b == b' ' || b == b'\n')
            .filter(|f| !f.is_empty());
        let state = *rest.next()?.first()?;
        let ppid = parse_i32(rest.next()?)?;
        let flags = parse_num(rest.nth(4)?)?;
        Some(Stat {
            pid,
            comm,
            state,
            ppid,
            flags,
            counters: StatCounters::parse(rest),
        })
    }

    /// `PF_KTHREAD` is set in the flags.
    #[must_use]
    pub fn is_kernel_thread(&self) -> bool {
        self.flags & u64::from(libc::PF_KTHREAD.unsigned_abs()) != 0
    }

    /// A zombie (`Z`) or dead (`X`) task: it has no fd table any more.
    #[must_use]
    pub fn is_zombie(&self) -> bool {
        matches!(self.state, b'Z' | b'X')
    }
}

/// The `Tgid:` line of a `/proc/PID/status` file: the thread group a task
/// belongs to.
///
/// ```
/// let s = b"Name:\tx\nUmask:\t0022\nState:\tS\nTgid:\t42\nNgid:\t0\n";
/// assert_eq!(pidmap::status_tgid(s).map(|p| p.as_raw()), Some(42));
/// ```
pub fn status_tgid(status: &[u8]) -> Option<Pid> {
    status
        .split(|&b| b == b'\n')
        .find_map(|l| l.strip_prefix(b"Tgid:"))
        .and_then(|v| parse_i32(trim(v)))
        .and_then(Pid::new)
}

/// The real and effective uids of a `/proc/PID/status` file's `Uid:`
/// line.
#[cfg_attr(not(feature = "fallback"), allow(dead_code))]
pub(crate) fn status_uids(status: &[u8]) -> Option<(u32, u32)> {
    let line = status
        .split(|&b| b == b'\n')
        .find_map(|l| l.strip_prefix(b"Uid:"))?;
    let mut ids = line
        .split(u8::is_ascii_whitespace)
        .filter(|f| !f.is_empty());
    Some((parse_num(ids.next()?)?, parse_num(ids.next()?)?))
}

/// The `VmRSS:` line of a `/proc/PID/status` file, in KiB (what `ps`
/// shows as RSS). A task without memory (a kernel thread, a zombie) has
/// no such line: `None`.
///
/// ```
/// let s = b"Name:\tx\nVmRSS:\t    1728 kB\nRssAnon:\t 100 kB\n";
/// assert_eq!(pidmap::status_vm_rss_kib(s), Some(1728));
/// assert_eq!(pidmap::status_vm_rss_kib(b"Name:\tkthreadd\n"), None);
/// ```
#[must_use]
pub fn status_vm_rss_kib(status: &[u8]) -> Option<u64> {
    let v = status
        .split(|&b| b == b'\n')
        .find_map(|l| l.strip_prefix(b"VmRSS:"))?;
    parse_num(trim(trim(v).strip_suffix(b"kB")?))
}

fn trim(mut s: &[u8]) -> &[u8] {
    while let [first, rest @ ..] = s {
        if !first.is_ascii_whitespace() {
            break;
        }
        s = rest;
    }
    while let [rest @ .., last] = s {
        if !last.is_ascii_whitespace() {
            break;
        }
        s = rest;
    }
    s
}

fn parse_i32(s: &[u8]) -> Option<i32> {
    parse_num(s)
}

fn parse_num<T: std::str::FromStr>(s: &[u8]) -> Option<T> {
    std::str::from_utf8(s).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kthreadd_and_odd_names() {
        let line = b"2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 9 0 0\n";
        let s = Stat::parse(line).unwrap();
        assert_eq!(
            (s.pid, s.comm, s.state, s.ppid, s.flags),
            (2, &b"kthreadd"[..], b'S', 0, 2129984)
        );
        assert!(s.is_kernel_thread());
        let c = s.counters.unwrap();
        assert_eq!((c.num_threads, c.start_time_ticks, c.rss_pages), (1, 9, 0));
        // Field 24 missing: no counters, the rest still parsed.
        let short =
            Stat::parse(b"2 (k) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 9 0\n").unwrap();
        assert_eq!((short.flags, short.counters), (2129984, None));
        let odd = b"77 (a) b) (c) Z 5 0 0 0 -1 4194560 0\n";
        let s = Stat::parse(odd).unwrap();
        assert_eq!(
            (s.comm, s.state, s.ppid, s.flags),
            (&b"a) b) (c"[..], b'Z', 5, 4194560)
        );
        assert!(s.is_zombie() && !s.is_kernel_thread());
        assert!(Stat::parse(b"garbage").is_none());
        assert!(Stat::parse(b"1 (x) S").is_none());
        assert!(Stat::parse(b"1 )x( S 0 0 0 0 0 0").is_none());
        assert_eq!(status_tgid(b"Tgid:\tabc\n"), None);
        assert_eq!(status_tgid(b"Pid:\t3\n"), None);
        assert_eq!(
            status_uids(b"Tgid:\t1\nUid:\t1000\t0\t7\t7\nGid:\t5\n"),
            Some((1000, 0))
        );
        assert_eq!(status_uids(b"Uid:\t1000\n"), None);
    }

    #[test]
    fn counters() {
        let line = b"9 (a b) R 1 9 9 0 -1 4194304 10 0 0 0 37 5 0 0 20 -3 4 0 12345 999 77 18446744073709551615\n";
        let c = Stat::parse(line).unwrap().counters.unwrap();
        assert_eq!(
            (c.utime_ticks, c.stime_ticks, c.nice, c.num_threads),
            (37, 5, -3, 4)
        );
        assert_eq!(c.priority, 20);
        assert_eq!((c.start_time_ticks, c.rss_pages), (12345, 77));
        assert_eq!(c.policy, None);
        // No field 41: a nice value.
        assert!(c.has_nice());
        // Fields 25 to 41, the policy last.
        let with_policy = |policy: &str| {
            let line = format!("9 (a) S 1 9 9 0 -1 4194304 0 0 0 0 1 2 0 0 20 0 1 0 5 100 3 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 0 {policy}\n");
            Stat::parse(line.as_bytes()).unwrap().counters.unwrap()
        };
        assert_eq!(with_policy("1").policy, Some(1));
        // SCHED_OTHER and SCHED_BATCH have one; FIFO, RR, IDLE and
        // DEADLINE do not (ps shows `-`).
        for (policy, has) in [
            (0, true),
            (3, true),
            (1, false),
            (2, false),
            (5, false),
            (6, false),
        ] {
            assert_eq!(
                with_policy(&policy.to_string()).has_nice(),
                has,
                "policy {policy}"
            );
        }
    }

    #[test]
    fn agrees_with_our_own_stat() {
        let text = std::fs::read("/proc/self/stat").unwrap();
        let s = Stat::parse(&text).unwrap();
        assert_eq!(s.pid, Pid::this_process().as_raw());
        // SAFETY: getppid has no preconditions.
        assert_eq!(s.ppid, unsafe { libc::getppid() });
        assert!(!s.is_kernel_thread());
        let status = std::fs::read("/proc/thread-self/status").unwrap();
        assert_eq!(status_tgid(&status), Some(Pid::this_process()));
    }
}
