//! The state of the interactive `pidmap top` between two frames: the
//! rows as arranged (filtered, sorted or as a tree), the selection bar
//! and the scroll position, the open menu or prompt, the status line.

use std::time::Duration;

use crate::top::columns::{Column, Shown};
use crate::top::model::{self, Filter, Order};
use crate::top::row::TopRow;

/// What the keys do at the moment: the table, or an open screen, menu or
/// prompt (Esc closes each without doing anything).
#[derive(Debug, Clone, PartialEq)]
pub enum Mode {
    Table,
    Help,
    /// Incremental search (`/`, F3): the bar moves to the next name that
    /// contains the text; Esc puts it back where it was.
    Search {
        text: String,
        from: Option<i32>,
    },
    /// Incremental filter (`\`, F4): only names with the text are shown;
    /// Esc restores the filter as it was.
    Filter {
        before: String,
    },
    Prompt {
        kind: PromptKind,
        text: String,
    },
    /// The kill menu (`k`, F9): a signal for process `pid`.
    Signal {
        pid: i32,
        thread_of: Option<i32>,
        name: String,
        cursor: usize,
        /// The tagged tasks (id, thread group in the thread view) the
        /// signal goes to instead of `pid`, when any are tagged.
        tagged: Vec<(i32, Option<i32>)>,
    },
    /// `y` or Enter renices, anything else cancels.
    ConfirmRenice {
        pid: i32,
        name: String,
        from: Option<i32>,
        to: i32,
    },
    /// Choose the columns (F2).
    Columns {
        cursor: usize,
    },
    /// Choose the sort column (F6).
    Sort {
        cursor: usize,
    },
}

/// A one-line prompt's question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptKind {
    /// `u`: a user name or uid, blank for all.
    User,
    /// `d`, `s`: seconds between refreshes.
    Delay,
    /// `o`: a field filter.
    FieldFilter,
    /// `r`: a nice value for a process.
    Nice { pid: i32 },
}

/// Where the last frame put the table, for mouse clicks.
#[derive(Debug, Clone, Default)]
pub struct HitAreas {
    /// The line of the headings.
    pub headings_y: u16,
    /// Each shown column's first and last x.
    pub columns: Vec<(u16, u16, Column)>,
}

#[derive(Debug)]
pub struct State {
    pub mode: Mode,
    /// All rows of the last refresh, unfiltered.
    pub all: Vec<TopRow>,
    /// The rows shown, in order.
    pub rows: Vec<TopRow>,
    pub filter: Filter,
    pub order: Order,
    pub tree: bool,
    pub threads: bool,
    pub per_cpu: bool,
    /// COMMAND shows the command line (`c` toggles the name).
    pub cmdline: bool,
    /// Tasks tagged with Space (ids), as htop tags them for `k`.
    pub tagged: std::collections::BTreeSet<i32>,
    pub shown: Shown,
    pub interval: Duration,
    /// The selection bar's row index in `rows`.
    pub cursor: usize,
    /// The id under the bar, which it follows across refreshes.
    pub selected: Option<i32>,
    /// The first row on screen.
    pub offset: usize,
    /// How many rows fit on screen (set by each frame).
    pub page: usize,
    /// The status line: the last action's outcome or error.
    pub message: Option<String>,
    pub hits: HitAreas,
    /// Where a renice starts from: the task's nice value now, not the
    /// one of the last refresh.
    pub nice_of: fn(i32) -> Option<i32>,
}

impl State {
    pub fn new(filter: Filter, threads: bool, interval: Duration) -> State {
        State {
            mode: Mode::Table,
            all: Vec::new(),
            rows: Vec::new(),
            filter,
            order: Order {
                key: Column::Cpu,
                reversed: false,
            },
            tree: false,
            threads,
            per_cpu: false,
            cmdline: true,
            tagged: std::collections::BTreeSet::new(),
            shown: Shown::default(),
            interval,
            cursor: 0,
            selected: None,
            offset: 0,
            page: 1,
            message: None,
            hits: HitAreas::default(),
            nice_of: crate::top::actions::current_nice,
        }
    }

    /// Filter and order `all` again (after a refresh, or a change of
    /// filter, sort or view); the bar stays on its task when it is still
    /// shown, else at the same place.
    pub fn arrange(&mut self) {
        let kept: Vec<TopRow> = self
            .all
            .iter()
            .filter(|r| self.filter.keeps_row(r))
            .cloned()
            .collect();
        self.rows = if self.tree {
            model::tree(kept, self.order)
        } else {
            let mut kept = kept;
            model::sort(&mut kept, self.order);
            kept
        };
        if let Some(i) = self
            .selected
            .and_then(|id| self.rows.iter().position(|r| r.id == id))
        {
            self.cursor = i;
        }
        self.select(self.cursor);
    }

    /// Put the bar on row `i` (clamped), scrolling so that it is on
    /// screen.
    pub fn select(&mut self, i: usize) {
        let last = self.rows.len().saturating_sub(1);
        self.cursor = i.min(last);
        self.selected = self.rows.get(self.cursor).map(|r| r.id);
        let page = self.page.max(1);
        if self.cursor < self.offset {
            self.offset = self.cursor;
        } else if self.cursor >= self.offset + page {
            self.offset = self.cursor + 1 - page;
        }
        // No empty space below the last row while rows are above.
        self.offset = self.offset.min(self.rows.len().saturating_sub(page));
    }

    /// Move the bar by `delta` rows.
    pub fn move_by(&mut self, delta: isize) {
        self.select(self.cursor.saturating_add_signed(delta));
    }

    /// The row under the bar.
    pub fn current(&self) -> Option<&TopRow> {
        self.rows.get(self.cursor)
    }

    /// The rows on screen, with their indexes.
    pub fn visible(&self) -> impl Iterator<Item = (usize, &TopRow)> {
        self.rows
            .iter()
            .enumerate()
            .skip(self.offset)
            .take(self.page)
    }

    /// Move the bar to the next row (from the bar, `skip_current` past
    /// it) whose name contains `text`, wrapping; whether one was found.
    pub fn find(&mut self, text: &str, skip_current: bool) -> bool {
        if text.is_empty() || self.rows.is_empty() {
            return true;
        }
        let n = self.rows.len();
        let start = usize::from(skip_current);
        let hit = (start..n + start)
            .map(|k| (self.cursor + k) % n)
            .find(|&i| model::matches_text(&self.rows[i], text));
        if let Some(i) = hit {
            self.select(i);
        }
        hit.is_some()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::top::row::TopRow;

    pub(crate) fn rows(n: i32) -> Vec<TopRow> {
        (1..=n)
            .map(|id| TopRow {
                id,
                tgid: Some(id),
                ppid: Some(i32::from(id != 1)),
                euid: Some(0),
                user: "root".into(),
                priority: Some(20),
                nice: Some(0),
                nice_applies: Some(true),
                state: 'S',
                threads: Some(1),
                rss_kib: Some(0),
                cpu: 0.0,
                mem: 0.0,
                time: Some(Duration::ZERO),
                comm: format!("proc{id}"),
                cmdline: Some(format!("/bin/proc{id} --arg{id}")),
                command: format!("/bin/proc{id} --arg{id}"),
                virt_kib: None,
                shr_kib: None,
                tree_prefix: String::new(),
            })
            .collect()
    }

    fn state(n: i32, page: usize) -> State {
        let mut s = State::new(Filter::default(), false, Duration::from_secs(1));
        s.order.key = Column::Pid;
        s.all = rows(n);
        s.page = page;
        s.arrange();
        s
    }

    #[test]
    fn the_bar_scrolls_the_table() {
        let mut s = state(100, 10);
        assert_eq!((s.cursor, s.offset, s.selected), (0, 0, Some(1)));
        s.move_by(9);
        assert_eq!((s.cursor, s.offset), (9, 0));
        s.move_by(1);
        assert_eq!((s.cursor, s.offset), (10, 1));
        s.select(usize::MAX);
        assert_eq!((s.cursor, s.offset, s.selected), (99, 90, Some(100)));
        assert_eq!(s.visible().last().map(|(_, r)| r.id), Some(100));
        s.move_by(-200);
        assert_eq!((s.cursor, s.offset), (0, 0));
    }

    #[test]
    fn the_bar_follows_its_task() {
        let mut s = state(20, 5);
        s.select(7); // id 8
        s.order.reversed = true;
        s.arrange();
        assert_eq!(s.current().map(|r| r.id), Some(8));
        assert_eq!(s.cursor, 12);
        // Its task is gone: the bar stays at the same place.
        s.all.retain(|r| r.id != 8);
        s.arrange();
        assert_eq!(s.cursor, 12);
        assert_eq!(s.current().map(|r| r.id), Some(7));
        // Fewer rows than the bar's place.
        s.all.truncate(3);
        s.arrange();
        assert_eq!((s.cursor, s.offset), (2, 0));
    }

    #[test]
    fn search_wraps_and_skips() {
        let mut s = state(30, 10);
        assert!(s.find("proc2", false));
        assert_eq!(s.selected, Some(2));
        assert!(s.find("proc2", true));
        assert_eq!(s.selected, Some(20));
        assert!(s.find("PROC2", true));
        assert_eq!(s.selected, Some(21));
        s.select(29);
        assert!(s.find("proc2", true));
        assert_eq!(s.selected, Some(2));
        assert!(!s.find("nothing", false));
        assert_eq!(s.selected, Some(2));
    }
}
