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
    /// Field 10, minor faults (a process's: its group's, exited threads
    /// included).
    pub min_flt: u64,
    /// Field 12, major faults, as `min_flt`.
    pub maj_flt: u64,
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
    /// Fields 10 to 24, and 41.
    fn parse(fields: &Fields<'_>) -> Option<StatCounters> {
        let min_flt = unsigned(fields.get(10)?)?;
        let maj_flt = unsigned(fields.get(12)?)?;
        let utime_ticks = unsigned(fields.get(14)?)?;
        let stime_ticks = unsigned(fields.get(15)?)?;
        let priority = signed(fields.get(18)?)?;
        let nice = signed(fields.get(19)?)?;
        let num_threads = unsigned(fields.get(20)?)?;
        let start_time_ticks = unsigned(fields.get(22)?)?;
        let rss_pages = unsigned(fields.get(24)?)?;
        let policy = fields.get(41).and_then(unsigned);
        Some(StatCounters {
            min_flt,
            maj_flt,
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
        Stat::parse_up_to(line, Fields::MAX)
    }

    /// [`Stat::parse`] without the policy (field 41, `None`): the line is
    /// scanned up to field 24 only, the last of the counters, which skips
    /// about half of it.
    #[cfg_attr(not(feature = "fallback"), allow(dead_code))]
    pub(crate) fn parse_without_policy(line: &'a [u8]) -> Option<Stat<'a>> {
        Stat::parse_up_to(line, Fields::TO_RSS)
    }

    /// The line's fields 3 to `3 + max - 1` at most.
    fn parse_up_to(line: &'a [u8], max: usize) -> Option<Stat<'a>> {
        let open = line.iter().position(|&b| b == b'(')?;
        let fields = Fields::after_last_paren(line, max)?;
        let close = fields.close;
        if close < open {
            return None;
        }
        let pid = signed(line[..open].strip_suffix(b" ")?)?;
        let comm = &line[open + 1..close];
        let state = *fields.get(3)?.first()?;
        let ppid = signed(fields.get(4)?)?;
        let flags = unsigned(fields.get(9)?)?;
        Some(Stat {
            pid,
            comm,
            state,
            ppid,
            flags,
            counters: StatCounters::parse(&fields),
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

/// The `voluntary_ctxt_switches:` and `nonvoluntary_ctxt_switches:`
/// lines of a `/proc/PID/status` file: the task's own context switches.
///
/// ```
/// let s = b"Name:\tx\nvoluntary_ctxt_switches:\t150\nnonvoluntary_ctxt_switches:\t7\n";
/// assert_eq!(pidmap::status_ctxt_switches(s), Some((150, 7)));
/// assert_eq!(pidmap::status_ctxt_switches(b"Name:\tx\n"), None);
/// ```
#[must_use]
pub fn status_ctxt_switches(status: &[u8]) -> Option<(u64, u64)> {
    let (mut voluntary, mut involuntary) = (None, None);
    for l in status.split(|&b| b == b'\n') {
        if let Some(v) = l.strip_prefix(b"voluntary_ctxt_switches:") {
            voluntary = parse_num(trim(v));
        } else if let Some(v) = l.strip_prefix(b"nonvoluntary_ctxt_switches:") {
            involuntary = parse_num(trim(v));
        }
    }
    Some((voluntary?, involuntary?))
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

/// The fields after the last `)` of a stat line (runs of bytes between
/// spaces and newlines, empty ones skipped): fields 3 (the state) to 41
/// (the policy), the last the parser reads. The `)` is found from the end
/// of the line eight bytes at a time, the fields by one forward pass that
/// stops at field 41.
struct Fields<'a> {
    line: &'a [u8],
    /// Where the last `)` is.
    close: usize,
    /// `(start, end)` of fields 3, 4, ... in the line, which is shorter
    /// than 64 KiB (a stat line is at most a few hundred bytes).
    spans: [(u16, u16); Fields::MAX],
    found: usize,
}

impl<'a> Fields<'a> {
    /// Fields 3 to 41.
    const MAX: usize = 39;
    /// Fields 3 to 24 (the resident set, the last counter).
    const TO_RSS: usize = 22;

    /// The first `max` (at most [`Fields::MAX`]) fields after the last
    /// `)`; `None` without a `)`, or for a line of 64 KiB or more (no
    /// stat line).
    fn after_last_paren(line: &'a [u8], max: usize) -> Option<Fields<'a>> {
        let max = max.min(Fields::MAX);
        let span = |at: usize| u16::try_from(at).ok();
        span(line.len())?;
        let close = last_paren(line)?;
        let mut fields = Fields {
            line,
            close,
            spans: [(0, 0); Fields::MAX],
            found: 0,
        };
        // Eight bytes at a time: a bit per byte that starts a field (a
        // byte that is no separator after one that is) or ends one.
        let mut found = 0;
        let mut start = 0;
        let mut in_field = false;
        let mut pos = close + 1;
        while pos < line.len() {
            let v = match line.get(pos..pos + 8) {
                Some(eight) => u64::from_le_bytes(eight.try_into().ok()?),
                None => {
                    // Past the end of the line: separators.
                    let mut word = [b' '; 8];
                    word[..line.len() - pos].copy_from_slice(&line[pos..]);
                    u64::from_le_bytes(word)
                }
            };
            let sep = zero_bytes(v ^ (ONES * u64::from(b' ')))
                | zero_bytes(v ^ (ONES * u64::from(b'\n')));
            let byte = !sep & HIGH;
            let before = (byte << 8) | (u64::from(in_field) << 7);
            let mut edges = (byte & !before) | (sep & before);
            while edges != 0 {
                let at = pos + edges.trailing_zeros() as usize / 8;
                if in_field {
                    fields.spans[found] = (span(start)?, span(at)?);
                    found += 1;
                    if found == max {
                        fields.found = found;
                        return Some(fields);
                    }
                } else {
                    start = at;
                }
                in_field = !in_field;
                edges &= edges - 1;
            }
            pos += 8;
        }
        if in_field {
            // The line ends in a field, at a word's end.
            fields.spans[found] = (span(start)?, span(line.len())?);
            found += 1;
        }
        fields.found = found;
        Some(fields)
    }

    /// Field `n` of the line (3 is the state), if there is one.
    fn get(&self, n: usize) -> Option<&'a [u8]> {
        let k = n.checked_sub(3)?;
        if k >= self.found {
            return None;
        }
        let (start, end) = self.spans[k];
        self.line.get(usize::from(start)..usize::from(end))
    }
}

const ONES: u64 = 0x0101_0101_0101_0101;
const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// The high bit of each byte of `v` that is zero, exactly (no carry from
/// one byte to the next, unlike the usual `(v - ONES) & !v & HIGH`).
fn zero_bytes(v: u64) -> u64 {
    !(((v & LOW7) + LOW7) | v) & HIGH
}

/// The position of the last `)` of `line`, eight bytes at a time.
fn last_paren(line: &[u8]) -> Option<usize> {
    let chunks = line.rchunks_exact(8);
    let head = chunks.remainder().len();
    for (k, chunk) in chunks.enumerate() {
        let word = u64::from_le_bytes(chunk.try_into().ok()?);
        let parens = zero_bytes(word ^ (ONES * u64::from(b')')));
        if parens != 0 {
            // The highest set bit is the last `)` of the chunk.
            let byte = (63 - parens.leading_zeros()) / 8;
            let chunk_start = line.len() - 8 * (k + 1);
            return Some(chunk_start + byte as usize);
        }
    }
    line[..head].iter().rposition(|&b| b == b')')
}

/// A decimal number as `str::parse` reads an unsigned integer: an
/// optional `+`, then digits only; `None` if it does not fit.
fn unsigned<T: TryFrom<u64>>(s: &[u8]) -> Option<T> {
    let digits = s.strip_prefix(b"+").unwrap_or(s);
    if digits.is_empty() {
        return None;
    }
    let mut v: u64 = 0;
    for &c in digits {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(d))?;
    }
    T::try_from(v).ok()
}

/// A decimal number as `str::parse` reads a signed integer: an optional
/// `-` or `+`, then digits only; `None` if it does not fit.
fn signed<T: TryFrom<i64>>(s: &[u8]) -> Option<T> {
    let v = match s.strip_prefix(b"-") {
        Some(digits) if digits.first() != Some(&b'+') => {
            let magnitude: u64 = unsigned(digits)?;
            i64::try_from(-i128::from(magnitude)).ok()?
        }
        Some(_) => return None,
        None => unsigned::<i64>(s)?,
    };
    T::try_from(v).ok()
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
        // A name of 64 KiB: no stat line (a task's name is at most 64
        // bytes), and one just short of it still parses.
        let long = |len: usize| {
            let mut line = b"3 (".to_vec();
            line.resize(len - 40, b'n');
            line.extend_from_slice(b") S 1 0 0 0 -1 64 0 0 0 0 0 0 0 0 20\n");
            line.resize(len, b' ');
            line
        };
        assert!(Stat::parse(&long(1 << 16)).is_none());
        let just_short = long((1 << 16) - 1);
        let s = Stat::parse(&just_short).unwrap();
        assert_eq!((s.pid, s.state, s.ppid, s.flags), (3, b'S', 1, 64));
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

    /// What both parsers read of a line: pid, name, state, ppid, flags,
    /// and the counters (fields 14, 15, 18, 19, 20, 22, 24, then 41).
    type Parsed = (i32, Vec<u8>, u8, i32, u64, Option<Vec<Option<i128>>>);

    /// The parser as it was written first, with `str::split` and
    /// `str::parse`: the reference the byte scanner must agree with.
    fn reference(line: &[u8]) -> Option<Parsed> {
        let open = line.iter().position(|&b| b == b'(')?;
        let close = line.iter().rposition(|&b| b == b')')?;
        if close < open {
            return None;
        }
        let pid = parse_num(line[..open].strip_suffix(b" ")?)?;
        let mut rest = line[close + 1..]
            .split(|&b| b == b' ' || b == b'\n')
            .filter(|f| !f.is_empty());
        let state = *rest.next()?.first()?;
        let ppid = parse_num(rest.next()?)?;
        let flags = parse_num(rest.nth(4)?)?;
        let fields: Vec<&[u8]> = rest.collect();
        let num = |i: usize, signed: bool| -> Option<i128> {
            let f = fields.get(i)?;
            if signed {
                parse_num::<i32>(f).map(i128::from)
            } else if i == 10 || i == 31 {
                parse_num::<u32>(f).map(i128::from)
            } else {
                parse_num::<u64>(f).map(i128::from)
            }
        };
        // Fields 14, 15, 18, 19, 20, 22, 24 (indices from field 10 on),
        // then 41, which may be missing.
        let counters = [
            (4, false),
            (5, false),
            (8, true),
            (9, true),
            (10, false),
            (12, false),
            (14, false),
        ]
        .iter()
        .map(|&(i, signed)| num(i, signed))
        .collect::<Option<Vec<i128>>>()
        .map(|v| v.into_iter().map(Some).chain([num(31, false)]).collect());
        Some((
            pid,
            line[open + 1..close].to_vec(),
            state,
            ppid,
            flags,
            counters,
        ))
    }

    fn scanned(line: &[u8]) -> Option<Parsed> {
        let s = Stat::parse(line)?;
        let counters = s.counters.map(|c| {
            vec![
                Some(i128::from(c.utime_ticks)),
                Some(i128::from(c.stime_ticks)),
                Some(i128::from(c.priority)),
                Some(i128::from(c.nice)),
                Some(i128::from(c.num_threads)),
                Some(i128::from(c.start_time_ticks)),
                Some(i128::from(c.rss_pages)),
                c.policy.map(i128::from),
            ]
        });
        Some((s.pid, s.comm.to_vec(), s.state, s.ppid, s.flags, counters))
    }

    /// The byte scanner reads what `str::split` and `str::parse` read, on
    /// every stat line of this host and on made ones: names with spaces,
    /// parentheses and newlines, signs, overflow, missing fields.
    #[test]
    fn the_scanner_agrees_with_str_parsing() {
        let mut lines: Vec<Vec<u8>> = Vec::new();
        for p in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(tasks) = std::fs::read_dir(p.path().join("task")) else {
                continue;
            };
            for t in tasks.flatten() {
                if let Ok(line) = std::fs::read(t.path().join("stat")) {
                    lines.push(line);
                }
            }
        }
        assert!(lines.len() > 10, "{} stat lines", lines.len());
        let tail = " 0 0 0 0 -1 4194560 1 2 3 4 5 6 7 8 20 0 1 0 99 100 7 18446744073709551615 1 2 3 4 5 6 7 8 9 10 11 12 13 14 0 0\n";
        for (comm, ppid, nice) in [
            ("a b", "1", "0"),
            ("x) S 1 (y", "1", "-20"),
            ("new\nline", "+7", "19"),
            ("))((", "-0", "+3"),
            ("", "2147483647", "-2147483648"),
            ("n", "2147483648", "0"),
            ("n", "-2147483649", "0"),
            ("n", "1", "-"),
            ("n", "1", "--1"),
            ("n", "1", "-+1"),
            ("n", "+", "1"),
            ("n", "1a", "1"),
        ] {
            let line = format!("42 ({comm}) S {ppid}{tail}")
                .replace(" 20 0 1 0 99", &format!(" 20 {nice} 1 0 99"));
            lines.push(line.into_bytes());
        }
        let full = String::from_utf8(lines[0].clone()).unwrap();
        // Cut at every length: lines that end mid-field, at a word's
        // end, on a separator.
        for cut in 0..full.len() {
            lines.push(full.as_bytes()[..cut].to_vec());
        }
        lines.push(b"1 (x) S 1 1 1 1 1 99999999999999999999 0\n".to_vec());
        lines.push(b"1 (x) S 1 1 1 1 1 4 0 0 0 0 18446744073709551616 0 0\n".to_vec());
        lines.push(b"-5 (x) S 1 1 1 1 1 4\n".to_vec());
        lines.push(b"5 (x)  S  1 \n 1 1 1 1 4\n".to_vec());
        lines.push(b"5 (x)R 1 1 1 1 1 4\n".to_vec());
        // More fields than the scanner keeps (64 after the name).
        let many: String = (1..=90).map(|i| format!(" {i}")).collect();
        lines.push(format!("6 (x) S{many}\n").into_bytes());
        let mut parsed = 0;
        for line in &lines {
            let want = reference(line);
            parsed += usize::from(want.is_some());
            assert_eq!(scanned(line), want, "{:?}", String::from_utf8_lossy(line));
            // The scan that stops at field 24 reads the same but the
            // policy.
            let short = Stat::parse_without_policy(line);
            let full = Stat::parse(line).map(|mut s| {
                if let Some(c) = s.counters.as_mut() {
                    c.policy = None;
                }
                s
            });
            assert_eq!(short, full, "{:?}", String::from_utf8_lossy(line));
        }
        assert!(parsed > 10, "{parsed} lines parsed");
    }

    /// The word-at-a-time search finds what `rposition` finds, at every
    /// length and position, next to bytes one bit away from `)` (`)` is
    /// 0x29: 0xa9, 0x28, 0x2b, 0x69).
    #[test]
    fn last_paren_is_rposition() {
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut byte = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            [b')', 0xa9, b'(', 0x2b, 0x69, b'0', b' ', 0xff, 0][usize::try_from(seed % 9).unwrap()]
        };
        for len in 0..48 {
            for _ in 0..200 {
                let line: Vec<u8> = (0..len).map(|_| byte()).collect();
                let want = line.iter().rposition(|&b| b == b')');
                assert_eq!(super::last_paren(&line), want, "{line:x?}");
            }
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
