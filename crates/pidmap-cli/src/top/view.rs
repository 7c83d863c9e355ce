//! How the interactive `pidmap top` draws a frame: the summary header
//! as procps top prints it (after `1`, htop's CPU meters), a status line, the table with its selection
//! bar, and a bottom line that holds a prompt, the last action's outcome
//! or htop's function-key bar; menus and the help screen on top.

use pidmap::monitor::CpuPercent;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{
    Block, Borders, Cell, Clear, List, ListItem, ListState, Paragraph, Row, Table,
};
use ratatui::Frame;

use crate::clock;
use crate::host::{format_uptime, Host};
use crate::top::actions::SIGNALS;
use crate::top::columns::Column;
use crate::top::input::HELP;
use crate::top::meters;
use crate::top::model::StateCounts;
use crate::top::state::{HitAreas, Mode, PromptKind, State};

/// The machine-wide numbers of the header, from the last refresh.
#[derive(Debug, Default)]
pub struct Summary {
    pub host: Option<Host>,
    pub cpu: CpuPercent,
    pub cpus: Vec<(u32, CpuPercent)>,
    pub refreshes: u32,
    /// Every task of the view, before any filter (as top counts them).
    pub counts: StateCounts,
    /// The first refresh comes after this.
    pub first_refresh: std::time::Duration,
    /// In the thread view: the warning that some processes' tasks could
    /// not be listed (never silent).
    pub left_out: Option<String>,
}

/// htop's function-key bar.
const KEY_BAR: &str =
    "F1Help F2Columns F3Search F4Filter F5Tree F6SortBy F7Nice- F8Nice+ F9Kill F10Quit";

fn cpu_line(label: &str, p: &CpuPercent) -> Line<'static> {
    Line::from(format!(
        "{label}: {:>5.1} us, {:>5.1} sy, {:>5.1} ni, {:>5.1} id, {:>5.1} wa, {:>5.1} hi, {:>5.1} si, {:>5.1} st",
        p.user, p.system, p.nice, p.idle, p.iowait, p.irq, p.softirq, p.steal
    ))
}

fn header(state: &State, s: &Summary, width: u16) -> Vec<Line<'static>> {
    let clock = clock::epoch_now().map_or_else(|| "?".into(), clock::clock_time);
    let Some(h) = &s.host else {
        return vec![Line::from(format!(
            "pidmap top - {clock}, sampling for {:.1} s…",
            s.first_refresh.as_secs_f64()
        ))];
    };
    let c = &s.counts;
    let m = &h.memory;
    #[allow(
        clippy::cast_precision_loss,
        reason = "exact below 2^53 bytes (8 PiB), and shown to 0.1 MiB anyway"
    )]
    let mib = |bytes: u64| bytes as f64 / (1024.0 * 1024.0);
    let mut lines = vec![
        Line::from(format!(
            "pidmap top - {clock} {}, load average: {:.2}, {:.2}, {:.2}",
            format_uptime(h.uptime),
            h.load.one,
            h.load.five,
            h.load.fifteen
        )),
        Line::from(format!(
            "{}: {:>4} total, {:>4} running, {:>4} sleeping, {:>4} stopped, {:>4} zombie",
            if state.threads { "Threads" } else { "Tasks" },
            c.total,
            c.running,
            c.sleeping,
            c.stopped,
            c.zombie
        )),
    ];
    if state.per_cpu {
        lines.extend(meters::lines(&s.cpus, usize::from(width)));
    } else {
        lines.push(cpu_line("%Cpu(s)", &s.cpu));
    }
    lines.push(Line::from(format!(
        "MiB Mem : {:>9.1} total, {:>9.1} free, {:>9.1} used, {:>9.1} buff/cache",
        mib(m.total),
        mib(m.free),
        mib(m.used()),
        mib(m.buff_cache)
    )));
    lines.push(Line::from(format!(
        "MiB Swap: {:>9.1} total, {:>9.1} free, {:>9.1} used. {:>9.1} avail Mem",
        mib(m.swap_total),
        mib(m.swap_free),
        mib(m.swap_used()),
        mib(m.available)
    )));
    lines.push(Line::from(status(state, s)));
    lines
}

/// The status line: sort, view, refreshes, filters.
fn status(state: &State, s: &Summary) -> String {
    let mut parts = vec![
        format!(
            "sort {}{}",
            state.order.key.heading(),
            if state.order.reversed {
                " (reversed)"
            } else {
                ""
            }
        ),
        format!(
            "{}{}",
            if state.threads {
                "threads"
            } else {
                "processes"
            },
            if state.tree { " tree" } else { "" }
        ),
        format!(
            "refresh {} every {:.1} s",
            s.refreshes,
            state.interval.as_secs_f64()
        ),
        format!("{} of {} shown", state.rows.len(), state.all.len()),
    ];
    if !state.filter.text.is_empty() {
        parts.push(format!("filter: {}", state.filter.text));
    }
    if let Some(u) = state.filter.euid {
        parts.push(format!("uid {u}"));
    }
    for f in &state.filter.fields {
        parts.push(format!("{} filter", f.column.heading()));
    }
    if let Some(w) = &s.left_out {
        parts.push(format!("warning: {w}"));
    }
    parts.push("h help".into());
    parts.join(" · ")
}

/// The bottom line.
fn bottom(state: &State) -> Line<'static> {
    let prompt = match &state.mode {
        Mode::Search { text, .. } => Some(format!("Search: {text}")),
        Mode::Filter { .. } => Some(format!("Filter: {}", state.filter.text)),
        Mode::Prompt { kind, text } => Some(match kind {
            PromptKind::User => format!("Which user (blank for all): {text}"),
            PromptKind::Delay => format!(
                "Change delay from {:.1} to: {text}",
                state.interval.as_secs_f64()
            ),
            PromptKind::FieldFilter => {
                format!("Add filter (FIELD=TEXT, FIELD<N, FIELD>N; ! negates): {text}")
            }
            PromptKind::Nice { pid } => format!("Renice {pid} to: {text}"),
        }),
        Mode::ConfirmRenice {
            pid,
            name,
            from,
            to,
        } => Some(format!(
            "Renice {pid} ({name}) from {} to {to}? y/n",
            from.map_or_else(|| "?".to_string(), |n| n.to_string())
        )),
        _ => None,
    };
    let text = match (prompt, &state.message) {
        (Some(p), Some(m)) => format!("{p}   [{m}]"),
        (Some(p), None) => p,
        (None, Some(m)) => m.clone(),
        (None, None) => KEY_BAR.to_string(),
    };
    Line::from(text)
}

pub fn draw(f: &mut Frame<'_>, state: &mut State, summary: &Summary) {
    let header = header(state, summary, f.area().width);
    let [top, body, foot] = Layout::vertical([
        Constraint::Length(u16::try_from(header.len() + 1).unwrap_or(u16::MAX)),
        Constraint::Min(0),
        Constraint::Length(1),
    ])
    .areas(f.area());
    f.render_widget(Paragraph::new(header), top);
    table(f, state, body);
    f.render_widget(
        Paragraph::new(bottom(state)).style(Style::new().add_modifier(Modifier::REVERSED)),
        foot,
    );
    match &state.mode {
        Mode::Help => help(f),
        Mode::Signal {
            pid, name, cursor, ..
        } => {
            let items = SIGNALS
                .iter()
                .map(|(n, s)| ListItem::new(format!("{n:>2} SIG{s}")))
                .collect();
            menu(f, &format!("Send signal to {pid} ({name})"), items, *cursor);
        }
        Mode::Columns { cursor } => {
            let items = Column::ALL
                .iter()
                .map(|c| {
                    let mark = if state.shown.contains(*c) {
                        "[x]"
                    } else {
                        "[ ]"
                    };
                    ListItem::new(format!("{mark} {:<8} {}", c.heading(), c.description()))
                })
                .collect();
            menu(f, "Columns (Space shows/hides, Esc done)", items, *cursor);
        }
        Mode::Sort { cursor } => {
            let items = Column::ALL
                .iter()
                .map(|c| ListItem::new(c.heading()))
                .collect();
            menu(f, "Sort by (Enter picks)", items, *cursor);
        }
        _ => {}
    }
}

fn table(f: &mut Frame<'_>, state: &mut State, body: Rect) {
    let columns = state.shown.columns().to_vec();
    let head = Row::new(columns.iter().map(|c| {
        let style = if *c == state.order.key {
            Style::new().add_modifier(Modifier::BOLD | Modifier::UNDERLINED)
        } else {
            Style::new().add_modifier(Modifier::BOLD)
        };
        Cell::from(c.heading()).style(style)
    }))
    .style(Style::new().add_modifier(Modifier::REVERSED));
    state.page = usize::from(body.height.saturating_sub(1)).max(1);
    // The page size may have changed (a resize): keep the bar on screen.
    state.select(state.cursor);
    let selected = state.cursor;
    let rows: Vec<Row<'_>> = state
        .visible()
        .map(|(i, r)| {
            let row = Row::new(columns.iter().map(|c| c.cell(r)));
            // A tagged row in bold yellow, as htop shows it.
            let mut style = Style::new();
            if state.tagged.contains(&r.id) {
                style = style
                    .fg(ratatui::style::Color::Yellow)
                    .add_modifier(Modifier::BOLD);
            }
            if i == selected {
                style = style.add_modifier(Modifier::REVERSED);
            }
            row.style(style)
        })
        .collect();
    let last = columns.len() - 1;
    let widths: Vec<Constraint> = columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            if i == last {
                Constraint::Fill(1)
            } else {
                Constraint::Length(c.width())
            }
        })
        .collect();
    let mut x = body.x;
    let mut hits = HitAreas {
        headings_y: body.y,
        columns: Vec::new(),
    };
    for (i, c) in columns.iter().enumerate() {
        let w = if i == last {
            body.right().saturating_sub(x).max(1)
        } else {
            c.width()
        };
        hits.columns.push((x, x + w - 1, *c));
        x += w + 1;
    }
    state.hits = hits;
    f.render_widget(Table::new(rows, widths).header(head), body);
}

/// A centered box over the table.
fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let w = width.min(area.width);
    let h = height.min(area.height);
    Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    )
}

fn menu(f: &mut Frame<'_>, title: &str, items: Vec<ListItem<'_>>, cursor: usize) {
    let height = u16::try_from(items.len() + 2).unwrap_or(u16::MAX);
    let width = u16::try_from(title.chars().count() + 4)
        .unwrap_or(u16::MAX)
        .max(60);
    let area = centered(f.area(), width, height);
    f.render_widget(Clear, area);
    let list = List::new(items)
        .block(
            Block::default()
                .borders(Borders::ALL)
                .title(title.to_string()),
        )
        .highlight_style(Style::new().add_modifier(Modifier::REVERSED));
    let mut at = ListState::default().with_selected(Some(cursor));
    f.render_stateful_widget(list, area, &mut at);
}

fn help(f: &mut Frame<'_>) {
    let area = f.area();
    f.render_widget(Clear, area);
    let mut lines = vec![
        Line::from("pidmap top - help (any key closes it)"),
        Line::from(""),
    ];
    let key_width = HELP.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    lines.extend(
        HELP.iter()
            .map(|(k, what)| Line::from(format!("  {k:<key_width$}  {what}"))),
    );
    lines.push(Line::from(""));
    lines.push(Line::from(
        "A process row's %CPU and TIME+ are its whole thread group's.",
    ));
    f.render_widget(Paragraph::new(lines), area);
}
