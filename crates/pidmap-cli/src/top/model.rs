//! What the interactive `pidmap top` shows, without a terminal: the rows
//! of one refresh (CPU % from the previous sample, told apart by start
//! time), the filters, the sort order, the tree and the task counts by
//! state.

use std::collections::HashMap;
use std::time::Duration;

use pidmap::monitor::SystemMemory;
use pidmap::{Pid, TaskInfo};

use crate::output::escape;
use crate::top::columns::Column;
use crate::top::row::TopRow;

/// How rows are ordered: by `key` in its natural order (ids and text up,
/// numbers largest first, as top does); `reversed` flips it (top's `R`,
/// htop's `I`). Ties go by id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Order {
    pub key: Column,
    pub reversed: bool,
}

/// A filter of top's `o` (`[!]FIELD=TEXT`, `FIELD<N`, `FIELD>N`): the
/// cell of FIELD contains TEXT (ignoring case), or is a number below or
/// above N; `!` keeps the rows that do not match.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldFilter {
    pub column: Column,
    pub test: FieldTest,
    pub negated: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub enum FieldTest {
    Contains(String),
    Below(f64),
    Above(f64),
}

impl FieldFilter {
    /// Parse `[!]FIELD=TEXT`, `[!]FIELD<N` or `[!]FIELD>N`; FIELD is a
    /// column heading in any case.
    pub fn parse(s: &str) -> Result<FieldFilter, String> {
        let (negated, rest) = match s.trim().strip_prefix('!') {
            Some(r) => (true, r),
            None => (false, s.trim()),
        };
        let at = rest
            .find(['=', '<', '>'])
            .ok_or_else(|| format!("{s:?} is not FIELD=TEXT, FIELD<N or FIELD>N"))?;
        let (field, value) = (&rest[..at], &rest[at + 1..]);
        let column = Column::from_heading(field.trim())
            .ok_or_else(|| format!("no column named {:?}", field.trim()))?;
        let number = || {
            value
                .trim()
                .parse::<f64>()
                .map_err(|_| format!("{value:?} is not a number"))
        };
        let test = match &rest[at..=at] {
            "=" => FieldTest::Contains(value.to_lowercase()),
            "<" => FieldTest::Below(number()?),
            _ => FieldTest::Above(number()?),
        };
        Ok(FieldFilter {
            column,
            test,
            negated,
        })
    }

    pub fn keeps(&self, row: &TopRow) -> bool {
        let cell = self.column.cell(row);
        let hit = match &self.test {
            FieldTest::Contains(t) => cell.to_lowercase().contains(t.as_str()),
            FieldTest::Below(n) => cell.parse::<f64>().is_ok_and(|v| v < *n),
            FieldTest::Above(n) => cell.parse::<f64>().is_ok_and(|v| v > *n),
        };
        hit != self.negated
    }
}

/// Which tasks to show: `-p` (a task is kept when its process or its
/// own id is listed), `-u`/`u` (effective uid, as top's `-u`), htop's
/// filter (`\`, F4: the name contains the text, ignoring case) and top's
/// `o` filters.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub pids: Vec<Pid>,
    pub euid: Option<u32>,
    pub text: String,
    pub fields: Vec<FieldFilter>,
}

impl Filter {
    /// Whether a record passes `-p` and `-u` (what batch mode applies).
    pub fn keeps(&self, info: &TaskInfo) -> bool {
        let pid_ok = self.pids.is_empty()
            || self
                .pids
                .iter()
                .any(|p| *p == info.tid || Some(*p) == info.tgid);
        let user_ok = self.euid.is_none_or(|u| info.euid == Some(u));
        pid_ok && user_ok
    }

    /// Whether a row passes every filter.
    pub fn keeps_row(&self, row: &TopRow) -> bool {
        let pid_ok = self.pids.is_empty()
            || self
                .pids
                .iter()
                .any(|p| p.as_raw() == row.id || Some(p.as_raw()) == row.tgid);
        pid_ok
            && self.euid.is_none_or(|u| row.euid == Some(u))
            && (self.text.is_empty() || matches_text(row, &self.text))
            && self.fields.iter().all(|f| f.keeps(row))
    }

    /// Drop the filters set at run time (top's `=`), keeping `-p`.
    pub fn clear_runtime(&mut self) {
        self.euid = None;
        self.text.clear();
        self.fields.clear();
    }
}

/// Whether the row's name or command line contains `text`, ignoring
/// case (htop searches and filters on the command line).
pub fn matches_text(row: &TopRow, text: &str) -> bool {
    let text = text.to_lowercase();
    row.comm.to_lowercase().contains(&text)
        || row
            .cmdline
            .as_ref()
            .is_some_and(|c| c.to_lowercase().contains(&text))
}

/// What COMMAND shows for `row`: its command line when `cmdline` is on
/// and it has one, else its name.
pub fn set_command(row: &mut TopRow, cmdline: bool) {
    row.command = match (&row.cmdline, cmdline) {
        (Some(c), true) => c.clone(),
        _ => row.comm.clone(),
    };
}

/// Read each row's command line (once per process: a thread shows its
/// process's) and, with `statm`, its virtual and shared memory, from
/// `proc_root`. A row whose files cannot be read (gone, not allowed)
/// keeps `None`: a refresh never fails on one task.
pub fn read_extras(rows: &mut [TopRow], proc_root: &std::path::Path, statm: bool, cmdline: bool) {
    // SAFETY: sysconf has no memory-safety preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    let page_kib = u64::try_from(page).unwrap_or(4096) / 1024;
    let mut cmdlines: HashMap<i32, Option<String>> = HashMap::new();
    for row in rows.iter_mut() {
        let process = row.tgid.unwrap_or(row.id);
        let line = cmdlines
            .entry(process)
            .or_insert_with(|| {
                let bytes =
                    std::fs::read(proc_root.join(process.to_string()).join("cmdline")).ok()?;
                let args: Vec<&[u8]> = bytes.split(|&b| b == 0).filter(|a| !a.is_empty()).collect();
                (!args.is_empty()).then(|| escape(&args.join(&b' ')))
            })
            .clone();
        row.cmdline = line;
        set_command(row, cmdline);
        if statm {
            // size resident shared text lib data dt, in pages.
            let text =
                std::fs::read_to_string(proc_root.join(process.to_string()).join("statm")).ok();
            let mut fields = text
                .as_deref()
                .unwrap_or("")
                .split_whitespace()
                .map(|v| v.parse::<u64>().ok());
            let size = fields.next().flatten();
            let shared = fields.nth(1).flatten();
            row.virt_kib = size.map(|p| p * page_kib);
            row.shr_kib = shared.map(|p| p * page_kib);
        }
    }
}

/// The state letter of a record (`?` when unknown).
pub fn state_letter(info: &TaskInfo) -> char {
    info.state.map_or('?', char::from)
}

/// Each task's CPU time at a sample, keyed by id and start time, so that
/// a reused id is a new task.
#[derive(Debug, Default)]
pub struct Sample(HashMap<(i32, Option<Duration>), Duration>);

impl Sample {
    pub fn of(infos: &[TaskInfo]) -> Sample {
        Sample(
            infos
                .iter()
                .filter_map(|i| Some(((i.tid.as_raw(), i.start_time), i.cpu_time()?)))
                .collect(),
        )
    }

    /// CPU time used since this sample: all of it for a task that is new
    /// since then; none at all against an empty sample (there was no
    /// earlier refresh to compare with).
    fn used(&self, info: &TaskInfo) -> Duration {
        let now = info.cpu_time().unwrap_or_default();
        match self.0.get(&(info.tid.as_raw(), info.start_time)) {
            Some(before) => now.saturating_sub(*before),
            None if self.0.is_empty() => Duration::ZERO,
            None => now,
        }
    }
}

/// The rows of `infos`, CPU % against `prev` over `elapsed`, memory % of
/// `memory`'s total, user names from `user`; unfiltered and unsorted.
pub fn rows(
    infos: &[TaskInfo],
    prev: &Sample,
    elapsed: Duration,
    memory: &SystemMemory,
    user: &mut dyn FnMut(u32) -> String,
) -> Vec<TopRow> {
    let secs = elapsed.as_secs_f64();
    infos
        .iter()
        .map(|i| {
            let rss_kib = i.rss_bytes().map(|b| b / 1024);
            let cpu = if secs > 0.0 {
                prev.used(i).as_secs_f64() * 100.0 / secs
            } else {
                0.0
            };
            let mem = i.rss_bytes().map_or(0.0, |b| memory.percent_of(b));
            TopRow {
                id: i.tid.as_raw(),
                tgid: i.tgid.map(Pid::as_raw),
                ppid: i.ppid.map(Pid::as_raw),
                euid: i.euid,
                user: i.euid.map_or_else(|| "?".to_string(), &mut *user),
                priority: i.priority,
                // ps and top show no nice value where it does not apply.
                nice: i.nice.filter(|_| i.nice_applies() != Some(false)),
                nice_applies: i.nice_applies(),
                state: state_letter(i),
                threads: i.num_threads,
                rss_kib,
                cpu,
                mem,
                time: i.cpu_time(),
                comm: i.comm.map_or_else(|| "?".into(), |c| escape(c.as_bytes())),
                cmdline: None,
                command: i.comm.map_or_else(|| "?".into(), |c| escape(c.as_bytes())),
                virt_kib: None,
                shr_kib: None,
                tree_prefix: String::new(),
            }
        })
        .collect()
}

/// Sort rows in place.
pub fn sort(rows: &mut [TopRow], order: Order) {
    rows.sort_by(|a, b| {
        let by_key = order.key.compare(a, b);
        let by_key = if order.reversed {
            by_key.reverse()
        } else {
            by_key
        };
        by_key.then(a.id.cmp(&b.id))
    });
}

/// The id a row hangs from in the tree: a thread (not its group's
/// leader) under its leader, anything else under its parent process.
fn tree_parent(row: &TopRow) -> Option<i32> {
    match row.tgid {
        Some(t) if t != row.id => Some(t),
        _ => row.ppid.filter(|p| *p > 0),
    }
}

/// Rows as a tree, as htop's tree view (F5) shows it: each row below its
/// parent, siblings in `order`, rows whose parent is not shown at the
/// top level; each name is prefixed with its branch (`├─ `, `└─ `).
pub fn tree(mut rows: Vec<TopRow>, order: Order) -> Vec<TopRow> {
    sort(&mut rows, order);
    let shown: HashMap<i32, usize> = rows.iter().enumerate().map(|(i, r)| (r.id, i)).collect();
    let mut children: HashMap<i32, Vec<usize>> = HashMap::new();
    let mut roots = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        match tree_parent(r).filter(|p| shown.contains_key(p) && *p != r.id) {
            Some(p) => children.entry(p).or_default().push(i),
            None => roots.push(i),
        }
    }
    let mut out_order = Vec::with_capacity(rows.len());
    let mut placed = vec![false; rows.len()];
    // (row, prefix for its own children, its branch)
    let mut stack: Vec<(usize, String, String)> = roots
        .iter()
        .rev()
        .map(|&i| (i, String::new(), String::new()))
        .collect();
    while let Some((i, indent, branch)) = stack.pop() {
        if std::mem::replace(&mut placed[i], true) {
            continue;
        }
        out_order.push((i, branch));
        let kids = children.get(&rows[i].id).map_or(&[][..], Vec::as_slice);
        for (n, &k) in kids.iter().enumerate().rev() {
            let last = n + 1 == kids.len();
            let branch = format!("{indent}{}", if last { "└─ " } else { "├─ " });
            let deeper = format!("{indent}{}", if last { "   " } else { "│  " });
            stack.push((k, deeper, branch));
        }
    }
    // A parent loop (ids reused mid-listing) leaves rows unplaced: they
    // go at the end, flat, so that no row is lost.
    out_order.extend(
        (0..rows.len())
            .filter(|i| !placed[*i])
            .map(|i| (i, String::new())),
    );
    let mut taken: Vec<Option<TopRow>> = rows.into_iter().map(Some).collect();
    out_order
        .into_iter()
        .filter_map(|(i, branch)| {
            let mut r = taken[i].take()?;
            r.tree_prefix = branch;
            Some(r)
        })
        .collect()
}

/// Tasks by state as the `Tasks:` line counts them, in both the batch
/// and interactive headers: D (disk sleep) and I (idle) count as
/// sleeping, as procps top counts them; t (traced) as stopped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StateCounts {
    pub total: usize,
    pub running: usize,
    pub sleeping: usize,
    pub stopped: usize,
    pub zombie: usize,
}

impl StateCounts {
    pub fn of(states: impl IntoIterator<Item = char>) -> StateCounts {
        let mut c = StateCounts::default();
        for s in states {
            c.total += 1;
            match s {
                'R' => c.running += 1,
                'S' | 'D' | 'I' => c.sleeping += 1,
                'T' | 't' => c.stopped += 1,
                'Z' => c.zombie += 1,
                _ => {}
            }
        }
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn row(id: i32, cpu: f64, rss: u64, secs: u64, state: char) -> TopRow {
        TopRow {
            id,
            tgid: Some(id),
            ppid: Some(1),
            euid: Some(0),
            user: "root".into(),
            priority: Some(20),
            nice: Some(0),
            nice_applies: Some(true),
            state,
            threads: Some(1),
            rss_kib: Some(rss),
            cpu,
            mem: 0.0,
            time: Some(Duration::from_secs(secs)),
            comm: format!("t{id}"),
            cmdline: None,
            command: format!("t{id}"),
            virt_kib: None,
            shr_kib: None,
            tree_prefix: String::new(),
        }
    }

    fn ids(rows: &[TopRow]) -> Vec<i32> {
        rows.iter().map(|r| r.id).collect()
    }

    #[test]
    fn sort_keys() {
        let mut rows = vec![
            row(30, 1.0, 500, 9, 'S'),
            row(10, 5.0, 100, 1, 'R'),
            row(20, 5.0, 900, 3, 'Z'),
        ];
        let order = |key, reversed| Order { key, reversed };
        sort(&mut rows, order(Column::Pid, false));
        assert_eq!(ids(&rows), [10, 20, 30]);
        // Equal CPU: by id.
        sort(&mut rows, order(Column::Cpu, false));
        assert_eq!(ids(&rows), [10, 20, 30]);
        sort(&mut rows, order(Column::Mem, false));
        assert_eq!(ids(&rows), [20, 30, 10]);
        sort(&mut rows, order(Column::Time, false));
        assert_eq!(ids(&rows), [30, 20, 10]);
        sort(&mut rows, order(Column::Pid, true));
        assert_eq!(ids(&rows), [30, 20, 10]);
        // Text goes up: t10 < t20 < t30.
        sort(&mut rows, order(Column::Command, false));
        assert_eq!(ids(&rows), [10, 20, 30]);
        sort(&mut rows, order(Column::State, false));
        assert_eq!(ids(&rows), [10, 30, 20]);
    }

    #[test]
    #[allow(
        clippy::many_single_char_names,
        reason = "the rows are the nodes of a small tree; longer names would only restate their pids"
    )]
    fn tree_puts_children_under_parents() {
        let mut a = row(1, 0.0, 0, 0, 'S');
        a.ppid = Some(0);
        let mut b = row(5, 0.0, 0, 0, 'S');
        b.ppid = Some(1);
        let mut c = row(3, 0.0, 0, 0, 'S');
        c.ppid = Some(5);
        let mut d = row(9, 0.0, 0, 0, 'S');
        d.ppid = Some(1);
        // A thread of 5, and a process whose parent is not shown.
        let mut t = row(6, 0.0, 0, 0, 'S');
        t.tgid = Some(5);
        t.ppid = Some(1);
        let mut orphan = row(7, 0.0, 0, 0, 'S');
        orphan.ppid = Some(4242);
        let order = Order {
            key: Column::Pid,
            reversed: false,
        };
        let rows = tree(vec![d, c, orphan, b, a, t], order);
        let got: Vec<(i32, &str)> = rows
            .iter()
            .map(|r| (r.id, r.tree_prefix.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (1, ""),
                (5, "├─ "),
                (3, "│  ├─ "),
                (6, "│  └─ "),
                (9, "└─ "),
                (7, ""),
            ]
        );
        // A loop loses no row.
        let mut x = row(2, 0.0, 0, 0, 'S');
        x.ppid = Some(8);
        let mut y = row(8, 0.0, 0, 0, 'S');
        y.ppid = Some(2);
        assert_eq!(tree(vec![x, y], order).len(), 2);
    }

    #[test]
    fn field_filters() {
        let r = row(42, 12.5, 100, 0, 'S');
        let keeps = |s: &str| FieldFilter::parse(s).unwrap().keeps(&r);
        assert!(keeps("COMMAND=T4"));
        assert!(!keeps("!command=t4"));
        assert!(keeps("%CPU>12"));
        assert!(!keeps("%CPU<12"));
        assert!(keeps("pid=42"));
        assert!(!keeps("user=nobody"));
        assert!(FieldFilter::parse("nonsense").is_err());
        assert!(FieldFilter::parse("FOO=1").is_err());
        assert!(FieldFilter::parse("%CPU>x").is_err());
        let mut f = Filter {
            text: "T4".into(),
            ..Filter::default()
        };
        assert!(f.keeps_row(&r));
        f.text = "zz".into();
        assert!(!f.keeps_row(&r));
        f.clear_runtime();
        f.euid = Some(1);
        assert!(!f.keeps_row(&r));
        f.euid = Some(0);
        f.pids = vec![Pid::from_raw(42)];
        assert!(f.keeps_row(&r));
        f.pids = vec![Pid::from_raw(43)];
        assert!(!f.keeps_row(&r));
    }

    #[test]
    fn state_counts() {
        assert_eq!(
            StateCounts::of("RSDITtZ?".chars()),
            StateCounts {
                total: 8,
                running: 1,
                sleeping: 3,
                stopped: 2,
                zombie: 1
            }
        );
    }
}
