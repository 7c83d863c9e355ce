//! What each key and mouse event does in the interactive `pidmap top`:
//! it changes the [`State`] and says what the event loop must do next
//! ([`Effect`]). The keys are htop's and procps top's; [`HELP`] lists
//! them, and the help screen shows that list.

use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};

use crate::top::actions::SIGNALS;
use crate::top::columns::Column;
use crate::top::model;
use crate::top::state::{Mode, PromptKind, State};

/// What the event loop does after an event.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Draw again.
    Redraw,
    Quit,
    /// The set of tasks changed (processes/threads): sample again.
    Resample,
    /// Send a signal to a task.
    Signal {
        pid: i32,
        thread_of: Option<i32>,
        sig: libc::c_int,
    },
    /// Send a signal to each tagged task: (id, thread group in the thread
    /// view).
    SignalTagged {
        targets: Vec<(i32, Option<i32>)>,
        sig: libc::c_int,
    },
    /// Set a process's (or, in the thread view, a thread's) nice value.
    Renice {
        pid: i32,
        to: i32,
    },
    /// Refresh at this new interval, starting now.
    Delay(Duration),
}

/// The keys, as the help screen (h, ?, F1) and the README list them.
pub const HELP: &[(&str, &str)] = &[
    (
        "Up/Down, j",
        "move the selection bar (k is kill, as in htop and top)",
    ),
    ("PgUp/PgDn", "a page up / down"),
    (
        "Space, U",
        "tag the task and move down (k signals the tagged); untag all",
    ),
    ("Home/End", "the first / last row"),
    (
        "mouse",
        "wheel scrolls; click selects a row, or sorts by a heading",
    ),
    ("h, ?, F1", "this help (any key closes it)"),
    (
        "/, F3",
        "search names as you type; F3/Down next, Up previous, Enter keeps, Esc goes back",
    ),
    (
        "\\, F4",
        "filter names as you type; Enter keeps, Esc restores the old filter",
    ),
    (
        "o",
        "add a filter FIELD=TEXT, FIELD<N, FIELD>N (! negates; FIELD a heading)",
    ),
    (
        "u",
        "show only one user's tasks (name or uid; blank for all)",
    ),
    ("=", "clear the filters of \\, o and u"),
    ("F5, t", "tree view on/off"),
    ("F6", "choose the sort column"),
    ("<, >", "sort by the column to the left / right"),
    (
        "P, M, T, N",
        "sort by %CPU, %MEM, TIME+ (largest first), PID",
    ),
    ("R, I", "invert the current sort order"),
    ("c", "COMMAND: the command line or the name"),
    (
        "F2",
        "choose the columns (Space or Enter shows or hides one)",
    ),
    ("H", "processes or threads"),
    ("1", "a meter per CPU, as htop's bars"),
    (
        "k, F9",
        "kill: choose a signal for the tagged tasks, or else the selected one; Enter sends it",
    ),
    (
        "F7, F8",
        "nice value -1 / +1 of the selected task (asks first)",
    ),
    ("r", "renice the selected task to a value (asks first)"),
    ("d, s", "change the delay between refreshes"),
    ("Esc", "close a menu, prompt or search; never quits"),
    ("q, F10, Ctrl-C", "quit"),
];

/// Rows the mouse wheel moves.
const WHEEL_ROWS: isize = 3;

impl State {
    /// Handle a key press.
    pub fn key(&mut self, key: KeyEvent) -> Effect {
        if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
            return Effect::Quit;
        }
        match std::mem::replace(&mut self.mode, Mode::Table) {
            Mode::Table => self.table_key(key),
            // Any key closes the help screen.
            Mode::Help => Effect::Redraw,
            Mode::Search { text, from } => self.search_key(key, text, from),
            Mode::Filter { before } => self.filter_key(key, before),
            Mode::Prompt { kind, text } => self.prompt_key(key, kind, text),
            Mode::Signal {
                pid,
                thread_of,
                name,
                cursor,
                tagged,
            } => match key.code {
                KeyCode::Enter if !tagged.is_empty() => {
                    self.tagged.clear();
                    Effect::SignalTagged {
                        targets: tagged,
                        sig: SIGNALS[cursor].0,
                    }
                }
                KeyCode::Enter => Effect::Signal {
                    pid,
                    thread_of,
                    sig: SIGNALS[cursor].0,
                },
                KeyCode::Esc | KeyCode::Char('q') | KeyCode::F(10) => Effect::Redraw,
                code => {
                    let cursor = menu_move(code, cursor, SIGNALS.len());
                    self.mode = Mode::Signal {
                        pid,
                        thread_of,
                        name,
                        cursor,
                        tagged,
                    };
                    Effect::Redraw
                }
            },
            Mode::ConfirmRenice { pid, to, .. } => match key.code {
                KeyCode::Char('y' | 'Y') | KeyCode::Enter => Effect::Renice { pid, to },
                _ => {
                    self.message = Some("renice cancelled".into());
                    Effect::Redraw
                }
            },
            Mode::Columns { cursor } => {
                match key.code {
                    KeyCode::Esc | KeyCode::Enter | KeyCode::F(2) | KeyCode::Char('q') => {
                        return Effect::Redraw
                    }
                    KeyCode::Char(' ') => {
                        self.shown.toggle(Column::ALL[cursor]);
                        self.mode = Mode::Columns { cursor };
                    }
                    code => {
                        self.mode = Mode::Columns {
                            cursor: menu_move(code, cursor, Column::ALL.len()),
                        }
                    }
                }
                Effect::Redraw
            }
            Mode::Sort { cursor } => match key.code {
                KeyCode::Enter => {
                    self.order.key = Column::ALL[cursor];
                    self.arrange();
                    Effect::Redraw
                }
                KeyCode::Esc | KeyCode::F(6) | KeyCode::Char('q') => Effect::Redraw,
                code => {
                    self.mode = Mode::Sort {
                        cursor: menu_move(code, cursor, Column::ALL.len()),
                    };
                    Effect::Redraw
                }
            },
        }
    }

    fn table_key(&mut self, key: KeyEvent) -> Effect {
        let page = isize::try_from(self.page.max(1)).unwrap_or(1);
        self.message = None;
        match key.code {
            KeyCode::Up => self.move_by(-1),
            KeyCode::Down | KeyCode::Char('j') => self.move_by(1),
            KeyCode::PageUp => self.move_by(-page),
            KeyCode::PageDown => self.move_by(page),
            // Space tags the task under the bar and moves down; U untags
            // all (htop's keys).
            KeyCode::Char(' ') => {
                if let Some(id) = self.current().map(|r| r.id) {
                    if !self.tagged.remove(&id) {
                        self.tagged.insert(id);
                    }
                    self.move_by(1);
                }
            }
            KeyCode::Char('U') => self.tagged.clear(),
            KeyCode::Home => self.select(0),
            KeyCode::End => self.select(usize::MAX),
            KeyCode::Char('q') | KeyCode::F(10) => return Effect::Quit,
            KeyCode::Char('h' | '?') | KeyCode::F(1) => self.mode = Mode::Help,
            KeyCode::Char('/') | KeyCode::F(3) => {
                self.mode = Mode::Search {
                    text: String::new(),
                    from: self.selected,
                }
            }
            KeyCode::Char('\\') | KeyCode::F(4) => {
                self.mode = Mode::Filter {
                    before: self.filter.text.clone(),
                }
            }
            KeyCode::Char('o' | 'O') => self.prompt(PromptKind::FieldFilter, String::new()),
            KeyCode::Char('u') => self.prompt(PromptKind::User, String::new()),
            KeyCode::Char('d' | 's') => self.prompt(PromptKind::Delay, String::new()),
            KeyCode::Char('=') => {
                self.filter.clear_runtime();
                self.arrange();
            }
            KeyCode::F(5) | KeyCode::Char('t') => {
                self.tree = !self.tree;
                self.arrange();
            }
            KeyCode::F(6) => {
                let cursor = Column::ALL.iter().position(|c| *c == self.order.key);
                self.mode = Mode::Sort {
                    cursor: cursor.unwrap_or(0),
                };
            }
            KeyCode::F(2) => self.mode = Mode::Columns { cursor: 0 },
            KeyCode::Char(c @ ('<' | '>')) => {
                self.order.key = self.shown.next_to(self.order.key, c == '>');
                self.arrange();
            }
            KeyCode::Char('R' | 'I') => {
                self.order.reversed = !self.order.reversed;
                self.arrange();
            }
            KeyCode::Char('H') => {
                self.threads = !self.threads;
                return Effect::Resample;
            }
            KeyCode::Char('1') => self.per_cpu = !self.per_cpu,
            KeyCode::Char('c') => {
                self.cmdline = !self.cmdline;
                let on = self.cmdline;
                for row in self.all.iter_mut() {
                    model::set_command(row, on);
                }
                self.arrange();
            }
            KeyCode::Char('k') | KeyCode::F(9) => {
                if let Some(r) = self.current() {
                    // The tagged tasks still shown, if any: else the one
                    // under the bar.
                    let threads = self.threads;
                    let tagged: Vec<(i32, Option<i32>)> = self
                        .all
                        .iter()
                        .filter(|t| self.tagged.contains(&t.id))
                        .map(|t| (t.id, if threads { t.tgid } else { None }))
                        .collect();
                    let name = if tagged.is_empty() {
                        r.comm.clone()
                    } else {
                        format!("{} tagged", tagged.len())
                    };
                    self.mode = Mode::Signal {
                        pid: r.id,
                        thread_of: if threads { r.tgid } else { None },
                        name,
                        cursor: 0,
                        tagged,
                    };
                }
            }
            KeyCode::F(7 | 8) => {
                if let Some(r) = self.current() {
                    let step = if key.code == KeyCode::F(7) { -1 } else { 1 };
                    let from = (self.nice_of)(r.id).or(r.nice);
                    self.mode = Mode::ConfirmRenice {
                        pid: r.id,
                        name: r.comm.clone(),
                        from,
                        to: (from.unwrap_or(0) + step).clamp(-20, 19),
                    };
                }
            }
            KeyCode::Char('r') => {
                if let Some(r) = self.current() {
                    let pid = r.id;
                    self.prompt(PromptKind::Nice { pid }, String::new());
                }
            }
            KeyCode::Char(c) => {
                if let Some(k) = Column::from_letter(c) {
                    // As htop: P, M, T always busiest first, N lowest
                    // first, whatever I did to the previous order.
                    self.order.key = k;
                    self.order.reversed = false;
                    self.arrange();
                }
            }
            // Esc and anything else: nothing to cancel.
            _ => {}
        }
        Effect::Redraw
    }

    fn prompt(&mut self, kind: PromptKind, text: String) {
        self.mode = Mode::Prompt { kind, text };
    }

    fn search_key(&mut self, key: KeyEvent, mut text: String, from: Option<i32>) -> Effect {
        match key.code {
            KeyCode::Esc => {
                if let Some(i) = from.and_then(|id| self.rows.iter().position(|r| r.id == id)) {
                    self.select(i);
                }
                return Effect::Redraw;
            }
            KeyCode::Enter => return Effect::Redraw,
            KeyCode::F(3) | KeyCode::Down => {
                self.found(&text, true);
            }
            KeyCode::Up => {
                // The previous match: search the rows backwards.
                let n = self.rows.len();
                let hit = (1..=n)
                    .map(|k| (self.cursor + n - k) % n)
                    .find(|&i| crate::top::model::matches_text(&self.rows[i], &text));
                if let Some(i) = hit {
                    self.select(i);
                }
            }
            KeyCode::Backspace => {
                text.pop();
                self.found(&text, false);
            }
            KeyCode::Char(c) => {
                text.push(c);
                self.found(&text, false);
            }
            _ => {}
        }
        self.mode = Mode::Search { text, from };
        Effect::Redraw
    }

    fn found(&mut self, text: &str, skip_current: bool) {
        self.message = (!self.find(text, skip_current)).then(|| format!("not found: {text}"));
    }

    fn filter_key(&mut self, key: KeyEvent, before: String) -> Effect {
        match key.code {
            KeyCode::Esc => {
                self.filter.text = before;
                self.arrange();
                return Effect::Redraw;
            }
            KeyCode::Enter => return Effect::Redraw,
            KeyCode::Backspace => {
                self.filter.text.pop();
            }
            KeyCode::Char(c) => self.filter.text.push(c),
            _ => {}
        }
        self.arrange();
        self.mode = Mode::Filter { before };
        Effect::Redraw
    }

    fn prompt_key(&mut self, key: KeyEvent, kind: PromptKind, mut text: String) -> Effect {
        match key.code {
            KeyCode::Esc => return Effect::Redraw,
            KeyCode::Enter => return self.answer(kind, text.trim()),
            KeyCode::Backspace => {
                text.pop();
            }
            KeyCode::Char(c) => text.push(c),
            _ => {}
        }
        self.mode = Mode::Prompt { kind, text };
        Effect::Redraw
    }

    /// A prompt's answer; a bad one is a line in the status bar.
    fn answer(&mut self, kind: PromptKind, text: &str) -> Effect {
        match kind {
            PromptKind::User if text.is_empty() => {
                self.filter.euid = None;
                self.arrange();
            }
            PromptKind::User => match crate::users::uid_of(text) {
                Ok(uid) => {
                    self.filter.euid = Some(uid);
                    self.arrange();
                }
                Err(e) => self.message = Some(e.to_string()),
            },
            PromptKind::Delay => match crate::args::parse_interval(text) {
                Ok(d) => {
                    self.interval = d;
                    return Effect::Delay(d);
                }
                Err(e) => self.message = Some(e),
            },
            PromptKind::FieldFilter => match crate::top::model::FieldFilter::parse(text) {
                Ok(f) => {
                    self.filter.fields.push(f);
                    self.arrange();
                }
                Err(e) => self.message = Some(e),
            },
            PromptKind::Nice { pid } => match text.parse::<i32>() {
                Ok(n) if (-20..=19).contains(&n) => {
                    let row = self.rows.iter().find(|r| r.id == pid);
                    self.mode = Mode::ConfirmRenice {
                        pid,
                        name: row.map_or_else(String::new, |r| r.comm.clone()),
                        from: (self.nice_of)(pid).or(row.and_then(|r| r.nice)),
                        to: n,
                    };
                }
                _ => self.message = Some(format!("{text:?} is not a nice value (-20 to 19)")),
            },
        }
        Effect::Redraw
    }

    /// Handle a mouse event: the wheel scrolls, a click selects a row or
    /// sorts by a heading (again: reversed).
    pub fn mouse(&mut self, m: MouseEvent) -> Effect {
        if self.mode != Mode::Table {
            return Effect::Redraw;
        }
        match m.kind {
            MouseEventKind::ScrollUp => self.move_by(-WHEEL_ROWS),
            MouseEventKind::ScrollDown => self.move_by(WHEEL_ROWS),
            MouseEventKind::Down(MouseButton::Left) => {
                let y = m.row;
                if y == self.hits.headings_y {
                    let hit = self
                        .hits
                        .columns
                        .iter()
                        .find(|(x0, x1, _)| (*x0..=*x1).contains(&m.column));
                    if let Some(&(_, _, c)) = hit {
                        if self.order.key == c {
                            self.order.reversed = !self.order.reversed;
                        } else {
                            self.order.key = c;
                        }
                        self.arrange();
                    }
                } else if y > self.hits.headings_y {
                    let i = self.offset + usize::from(y - self.hits.headings_y - 1);
                    if i < self.rows.len() && i < self.offset + self.page {
                        self.select(i);
                    }
                }
            }
            _ => {}
        }
        Effect::Redraw
    }
}

/// A menu's cursor after a key: Up/Down (and j), Home/End.
fn menu_move(code: KeyCode, cursor: usize, len: usize) -> usize {
    match code {
        KeyCode::Up => cursor.saturating_sub(1),
        KeyCode::Down | KeyCode::Char('j') => (cursor + 1).min(len - 1),
        KeyCode::Home => 0,
        KeyCode::End => len - 1,
        _ => cursor,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::top::model::Filter;
    use crossterm::event::KeyEventState;

    fn press(s: &mut State, code: KeyCode) -> Effect {
        s.key(KeyEvent {
            code,
            modifiers: KeyModifiers::NONE,
            kind: crossterm::event::KeyEventKind::Press,
            state: KeyEventState::NONE,
        })
    }

    fn typed(s: &mut State, text: &str) {
        for c in text.chars() {
            press(s, KeyCode::Char(c));
        }
    }

    fn state() -> State {
        let mut s = State::new(Filter::default(), false, Duration::from_secs(3));
        s.order.key = Column::Pid;
        s.all = crate::top::state::tests::rows(50);
        s.page = 10;
        // The fake rows' ids are real processes: use the rows' values.
        s.nice_of = |_| None;
        s.arrange();
        s
    }

    #[test]
    fn esc_cancels_and_never_quits() {
        let mut s = state();
        assert_eq!(press(&mut s, KeyCode::Esc), Effect::Redraw);
        press(&mut s, KeyCode::Char('k'));
        assert!(matches!(s.mode, Mode::Signal { pid: 1, .. }));
        assert_eq!(press(&mut s, KeyCode::Esc), Effect::Redraw);
        assert_eq!(s.mode, Mode::Table);
        assert_eq!(press(&mut s, KeyCode::F(10)), Effect::Quit);
        assert_eq!(press(&mut s, KeyCode::Char('q')), Effect::Quit);
    }

    #[test]
    fn kill_menu_sends_the_chosen_signal() {
        let mut s = state();
        press(&mut s, KeyCode::Down);
        press(&mut s, KeyCode::F(9));
        press(&mut s, KeyCode::Down); // KILL
        assert_eq!(
            press(&mut s, KeyCode::Enter),
            Effect::Signal {
                pid: 2,
                thread_of: None,
                sig: libc::SIGKILL
            }
        );
    }

    #[test]
    fn renice_asks_first() {
        let mut s = state();
        press(&mut s, KeyCode::F(8));
        assert!(matches!(s.mode, Mode::ConfirmRenice { to: 1, .. }));
        assert_eq!(press(&mut s, KeyCode::Char('n')), Effect::Redraw);
        assert_eq!(s.message.as_deref(), Some("renice cancelled"));
        press(&mut s, KeyCode::Char('r'));
        typed(&mut s, "7");
        press(&mut s, KeyCode::Enter);
        assert_eq!(
            press(&mut s, KeyCode::Char('y')),
            Effect::Renice { pid: 1, to: 7 }
        );
        press(&mut s, KeyCode::Char('r'));
        typed(&mut s, "99");
        assert_eq!(press(&mut s, KeyCode::Enter), Effect::Redraw);
        assert!(s.message.as_deref().unwrap().contains("not a nice value"));
    }

    #[test]
    fn search_and_filter_are_incremental() {
        let mut s = state();
        press(&mut s, KeyCode::Char('/'));
        typed(&mut s, "proc4");
        assert_eq!(s.selected, Some(4));
        press(&mut s, KeyCode::F(3));
        assert_eq!(s.selected, Some(40));
        press(&mut s, KeyCode::Esc);
        assert_eq!(s.selected, Some(1));
        press(&mut s, KeyCode::Char('\\'));
        typed(&mut s, "proc3");
        assert_eq!(s.rows.len(), 11); // 3, 30..=39
        press(&mut s, KeyCode::Esc);
        assert_eq!(s.rows.len(), 50);
        press(&mut s, KeyCode::F(4));
        typed(&mut s, "proc3");
        press(&mut s, KeyCode::Enter);
        assert_eq!((s.rows.len(), &s.mode), (11, &Mode::Table));
        press(&mut s, KeyCode::Char('='));
        assert_eq!(s.rows.len(), 50);
    }

    #[test]
    fn sorting_columns_and_delay() {
        let mut s = state();
        press(&mut s, KeyCode::F(6));
        press(&mut s, KeyCode::End); // COMMAND
        press(&mut s, KeyCode::Enter);
        assert_eq!(s.order.key, Column::Command);
        press(&mut s, KeyCode::Char('<'));
        assert_eq!(s.order.key, Column::Time);
        press(&mut s, KeyCode::F(2));
        press(&mut s, KeyCode::Down); // PPID
        press(&mut s, KeyCode::Char(' '));
        press(&mut s, KeyCode::Esc);
        assert!(s.shown.contains(Column::Ppid));
        press(&mut s, KeyCode::Char('d'));
        typed(&mut s, "0.5");
        assert_eq!(
            press(&mut s, KeyCode::Enter),
            Effect::Delay(Duration::from_millis(500))
        );
        press(&mut s, KeyCode::Char('s'));
        typed(&mut s, "x");
        press(&mut s, KeyCode::Enter);
        assert!(s.message.is_some());
        assert_eq!(s.interval, Duration::from_millis(500));
    }

    #[test]
    fn scrolling_keys() {
        let mut s = state();
        press(&mut s, KeyCode::End);
        assert_eq!((s.selected, s.offset), (Some(50), 40));
        press(&mut s, KeyCode::Home);
        assert_eq!(s.selected, Some(1));
        press(&mut s, KeyCode::PageDown);
        assert_eq!(s.selected, Some(11));
        press(&mut s, KeyCode::PageUp);
        assert_eq!(s.selected, Some(1));
        // Space tags and moves one down; U untags all.
        press(&mut s, KeyCode::Char(' '));
        assert_eq!(s.selected, Some(2));
        assert!(s.tagged.contains(&1));
        press(&mut s, KeyCode::Char(' '));
        assert_eq!(s.tagged.len(), 2);
        press(&mut s, KeyCode::Up);
        press(&mut s, KeyCode::Char(' '));
        assert!(!s.tagged.contains(&2) && s.tagged.contains(&1));
        press(&mut s, KeyCode::Char('U'));
        assert!(s.tagged.is_empty());
        press(&mut s, KeyCode::Home);
        press(&mut s, KeyCode::Char('j'));
        assert_eq!(s.selected, Some(2));
        press(&mut s, KeyCode::Char('t'));
        assert!(s.tree);
        assert_eq!(s.rows[1].tree_prefix, "├─ ");
    }
}
