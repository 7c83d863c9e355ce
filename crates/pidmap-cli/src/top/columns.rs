//! The columns of the interactive `pidmap top`: their headings, widths,
//! cells and sort order. Every column can be shown or hidden (F2) and
//! sorted by (F6, `<`/`>`, a click on its heading).

use std::cmp::Ordering;

use crate::clock;
use crate::top::row::TopRow;

/// A column of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Column {
    Pid,
    Ppid,
    User,
    Priority,
    Nice,
    State,
    Threads,
    Virt,
    Res,
    Shr,
    Cpu,
    Mem,
    Time,
    Command,
}

impl Column {
    /// Every column, in the order the table shows them.
    pub const ALL: [Column; 14] = [
        Column::Pid,
        Column::Ppid,
        Column::User,
        Column::Priority,
        Column::Nice,
        Column::State,
        Column::Threads,
        Column::Virt,
        Column::Res,
        Column::Shr,
        Column::Cpu,
        Column::Mem,
        Column::Time,
        Column::Command,
    ];

    /// The columns shown at start, as procps top's default fields (less
    /// VIRT, SHR and PR).
    pub const DEFAULT: [Column; 9] = [
        Column::Pid,
        Column::User,
        Column::Nice,
        Column::State,
        Column::Res,
        Column::Cpu,
        Column::Mem,
        Column::Time,
        Column::Command,
    ];

    pub fn heading(self) -> &'static str {
        match self {
            Column::Pid => "PID",
            Column::Ppid => "PPID",
            Column::User => "USER",
            Column::Priority => "PR",
            Column::Nice => "NI",
            Column::State => "S",
            Column::Threads => "NLWP",
            Column::Virt => "VIRT",
            Column::Res => "RES",
            Column::Shr => "SHR",
            Column::Cpu => "%CPU",
            Column::Mem => "%MEM",
            Column::Time => "TIME+",
            Column::Command => "COMMAND",
        }
    }

    /// What the column chooser says of it.
    pub fn description(self) -> &'static str {
        match self {
            Column::Pid => "process (or thread) id",
            Column::Ppid => "parent process id",
            Column::User => "effective user",
            Column::Priority => "priority, as stat shows it",
            Column::Nice => "nice value (- where it does not apply)",
            Column::State => "state letter",
            Column::Threads => "threads of the process",
            Column::Virt => "virtual memory, KiB (statm)",
            Column::Res => "resident memory, KiB",
            Column::Shr => "shared memory, KiB (statm)",
            Column::Cpu => "CPU use since the last refresh, % of one CPU",
            Column::Mem => "resident memory, % of the total",
            Column::Time => "CPU time used (the process's total)",
            Column::Command => "command line (c: the name)",
        }
    }

    /// The column's width; 0 for the last, which takes the rest.
    pub fn width(self) -> u16 {
        match self {
            Column::Pid | Column::Ppid | Column::User => 8,
            Column::Priority | Column::Nice => 3,
            Column::State => 1,
            Column::Threads | Column::Cpu | Column::Mem => 5,
            Column::Res | Column::Virt | Column::Shr => 9,
            Column::Time => 10,
            Column::Command => 0,
        }
    }

    /// The key of procps top's sort letters: `P` cpu, `M` mem, `T`
    /// time, `N` pid.
    pub fn from_letter(c: char) -> Option<Column> {
        match c {
            'P' => Some(Column::Cpu),
            'M' => Some(Column::Mem),
            'T' => Some(Column::Time),
            'N' => Some(Column::Pid),
            _ => None,
        }
    }

    /// The column whose heading this is (any case).
    pub fn from_heading(h: &str) -> Option<Column> {
        Column::ALL
            .into_iter()
            .find(|c| c.heading().eq_ignore_ascii_case(h))
    }

    /// Whether larger values come first by default (as top sorts numbers
    /// other than ids); ids and text go up.
    fn descending(self) -> bool {
        !matches!(
            self,
            Column::Pid | Column::Ppid | Column::User | Column::State | Column::Command
        )
    }

    /// The cell text of `row`.
    pub fn cell(self, row: &TopRow) -> String {
        let unknown = || "?".to_string();
        match self {
            Column::Pid => row.id.to_string(),
            Column::Ppid => row.ppid.map_or_else(unknown, |p| p.to_string()),
            Column::User => row.user.chars().take(8).collect(),
            Column::Priority => row.priority.map_or_else(unknown, |p| p.to_string()),
            Column::Nice => match (row.nice, row.nice_applies) {
                (_, Some(false)) => "-".to_string(),
                (n, _) => n.map_or_else(unknown, |n| n.to_string()),
            },
            Column::State => row.state.to_string(),
            Column::Threads => row.threads.map_or_else(unknown, |n| n.to_string()),
            Column::Res => row.rss_kib.map_or_else(unknown, |k| k.to_string()),
            Column::Virt => row.virt_kib.map_or_else(unknown, |k| k.to_string()),
            Column::Shr => row.shr_kib.map_or_else(unknown, |k| k.to_string()),
            Column::Cpu => format!("{:.1}", row.cpu),
            Column::Mem => format!("{:.1}", row.mem),
            Column::Time => row.time.map_or_else(unknown, clock::top_time),
            Column::Command => format!("{}{}", row.tree_prefix, row.command),
        }
    }

    /// `a` against `b` in this column's natural order (largest first for
    /// the numbers top sorts that way).
    pub fn compare(self, a: &TopRow, b: &TopRow) -> Ordering {
        let up = match self {
            Column::Pid => a.id.cmp(&b.id),
            Column::Ppid => a.ppid.cmp(&b.ppid),
            Column::User => a.user.cmp(&b.user),
            Column::Priority => a.priority.cmp(&b.priority),
            Column::Nice => a.nice.cmp(&b.nice),
            Column::State => a.state.cmp(&b.state),
            Column::Threads => a.threads.cmp(&b.threads),
            // %MEM is RES over the same total: the same order.
            Column::Res | Column::Mem => a.rss_kib.cmp(&b.rss_kib),
            Column::Virt => a.virt_kib.cmp(&b.virt_kib),
            Column::Shr => a.shr_kib.cmp(&b.shr_kib),
            Column::Cpu => a.cpu.total_cmp(&b.cpu),
            Column::Time => a.time.cmp(&b.time),
            Column::Command => a.command.cmp(&b.command),
        };
        if self.descending() {
            up.reverse()
        } else {
            up
        }
    }
}

/// The columns on screen, in table order, and which one sorts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shown(Vec<Column>);

impl Default for Shown {
    fn default() -> Shown {
        Shown(Column::DEFAULT.to_vec())
    }
}

impl Shown {
    pub fn columns(&self) -> &[Column] {
        &self.0
    }

    pub fn contains(&self, c: Column) -> bool {
        self.0.contains(&c)
    }

    /// Show or hide `c`; the last column left stays.
    pub fn toggle(&mut self, c: Column) {
        if self.contains(c) {
            if self.0.len() > 1 {
                self.0.retain(|x| *x != c);
            }
        } else {
            self.0 = Column::ALL
                .into_iter()
                .filter(|x| *x == c || self.0.contains(x))
                .collect();
        }
    }

    /// The shown column left (`right == false`) or right of `from`;
    /// `from` itself at either end, or the first column when `from` is
    /// hidden.
    pub fn next_to(&self, from: Column, right: bool) -> Column {
        let Some(i) = self.0.iter().position(|c| *c == from) else {
            return self.0[0];
        };
        let j = if right {
            (i + 1).min(self.0.len() - 1)
        } else {
            i.saturating_sub(1)
        };
        self.0[j]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn letters_headings_and_moves() {
        assert_eq!(Column::from_letter('N'), Some(Column::Pid));
        assert_eq!(Column::from_letter('P'), Some(Column::Cpu));
        assert_eq!(Column::from_letter('M'), Some(Column::Mem));
        assert_eq!(Column::from_letter('T'), Some(Column::Time));
        assert_eq!(Column::from_letter('x'), None);
        assert_eq!(Column::from_heading("command"), Some(Column::Command));
        assert_eq!(Column::from_heading("%cpu"), Some(Column::Cpu));
        assert_eq!(Column::from_heading("nope"), None);
        let shown = Shown::default();
        assert_eq!(shown.next_to(Column::Pid, false), Column::Pid);
        assert_eq!(shown.next_to(Column::Pid, true), Column::User);
        assert_eq!(shown.next_to(Column::Command, true), Column::Command);
        assert_eq!(shown.next_to(Column::Time, false), Column::Mem);
        assert_eq!(shown.next_to(Column::Ppid, true), Column::Pid);
    }

    #[test]
    fn toggling_keeps_table_order_and_one_column() {
        let mut shown = Shown::default();
        shown.toggle(Column::Ppid);
        assert_eq!(
            &shown.columns()[..3],
            [Column::Pid, Column::Ppid, Column::User]
        );
        shown.toggle(Column::Ppid);
        assert_eq!(shown, Shown::default());
        for c in Column::ALL {
            if shown.contains(c) {
                shown.toggle(c);
            }
        }
        assert_eq!(shown.columns().len(), 1);
    }
}
