//! The interactive `pidmap top` (ratatui on crossterm): a summary header
//! as procps top prints it, then a terminal-sized table of processes (or
//! threads, `H`), sorted by `P` cpu, `M` mem, `T` time, `N` pid, `<`/`>`
//! and `R` reversed; `q` or Ctrl-C quits. The terminal is restored on
//! every way out: quitting, an error, a panic, and SIGTERM, SIGHUP or
//! SIGINT (after which the process dies of that signal, as it would
//! have without the handler).

use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use crossterm::event::{self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use crossterm::terminal::{self, EnterAlternateScreen, LeaveAlternateScreen};
use pidmap::{InfoFields, Pidmap, Query, TaskInfo};
use ratatui::backend::CrosstermBackend;
use ratatui::layout::{Constraint, Layout};
use ratatui::style::{Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Cell, Paragraph, Row, Table};
use ratatui::{Frame, Terminal};

use crate::clock;
use crate::host::{format_uptime, CpuPercent, Host};
use crate::top_model::{self, Filter, Order, Sample, SortKey, StateCounts, TopRow};
use crate::users::Names;

/// What a refresh needs of each task.
const FIELDS: InfoFields = InfoFields::TGID
    .union(InfoFields::STATE)
    .union(InfoFields::CPU_TIME)
    .union(InfoFields::START_TIME)
    .union(InfoFields::COMM)
    .union(InfoFields::UIDS)
    .union(InfoFields::NICE)
    .union(InfoFields::RSS);

/// The first refresh comes this soon (or after the interval, if shorter),
/// so that the screen fills at once with real deltas.
const FIRST_REFRESH: Duration = Duration::from_millis(300);

/// Bytes buffered per frame (a full 250x80 frame with its escapes fits).
const FRAME_BUFFER: usize = 1 << 18;

/// The longest the event loop waits before looking at [`PENDING_SIGNAL`]:
/// crossterm retries its poll when a signal interrupts it, so a signal
/// is seen within this time, not at once.
const SIGNAL_CHECK: Duration = Duration::from_millis(50);

/// The signals that end the interactive top with the terminal restored.
const QUIT_SIGNALS: [libc::c_int; 3] = [libc::SIGTERM, libc::SIGHUP, libc::SIGINT];

/// The last of [`QUIT_SIGNALS`] that arrived, or 0.
static PENDING_SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn note_signal(sig: libc::c_int) {
    // Async-signal-safe: one atomic store.
    PENDING_SIGNAL.store(sig, Ordering::Relaxed);
}

/// Routes [`QUIT_SIGNALS`] to [`note_signal`], so that the event loop can
/// restore the terminal before the process ends.
fn catch_quit_signals() -> Result<()> {
    for sig in QUIT_SIGNALS {
        // SAFETY: a zeroed sigaction is valid (empty mask, no flags); the
        // handler only stores to an atomic, which is async-signal-safe.
        let r = unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = note_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            sa.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut())
        };
        if r != 0 {
            return Err(io::Error::last_os_error()).context("installing a signal handler");
        }
    }
    Ok(())
}

/// Dies of `sig` with its default action (so that the parent sees the
/// signal, as without the handler); exits 128 + `sig` should that return.
fn die_of(sig: libc::c_int) -> ! {
    // SAFETY: resetting a disposition to SIG_DFL and raising a signal
    // have no memory-safety preconditions.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
    std::process::exit(128 + sig)
}

/// How the interactive top starts.
#[derive(Debug, Clone)]
pub struct Options {
    pub interval: Duration,
    /// Quit after this many refreshes (`None`: on `q`).
    pub iterations: Option<u32>,
    pub threads: bool,
    pub no_kthreads: bool,
    pub filter: Filter,
    pub proc_root: PathBuf,
}

/// Raw mode and the alternate screen, undone on drop (and by the panic
/// hook, which runs before unwinding would print into the alternate
/// screen).
struct TerminalGuard;

impl TerminalGuard {
    fn enter() -> Result<TerminalGuard> {
        terminal::enable_raw_mode().context("switching the terminal to raw mode")?;
        // From here on, Drop undoes whatever part was done.
        let guard = TerminalGuard;
        crossterm::execute!(io::stdout(), EnterAlternateScreen, crossterm::cursor::Hide)
            .context("entering the alternate screen")?;
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            previous(info);
        }));
        Ok(guard)
    }
}

/// Leave the alternate screen, show the cursor, leave raw mode; each
/// step is harmless when already done.
fn restore() {
    let _ = crossterm::execute!(io::stdout(), LeaveAlternateScreen, crossterm::cursor::Show);
    let _ = terminal::disable_raw_mode();
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore();
    }
}

/// The state of the screen between refreshes.
struct Screen {
    opts: Options,
    order: Order,
    threads: bool,
    rows: Vec<TopRow>,
    host: Option<Host>,
    cpu: CpuPercent,
    refreshes: u32,
    names: Names,
}

pub fn run(mut pm: Pidmap, opts: Options) -> Result<()> {
    let mut infos: Vec<TaskInfo> = Vec::new();
    let mut screen = Screen {
        order: Order {
            key: SortKey::Cpu,
            reversed: false,
        },
        threads: opts.threads,
        rows: Vec::new(),
        host: None,
        cpu: CpuPercent::default(),
        refreshes: 0,
        names: Names::default(),
        opts,
    };
    // The baseline sample, before the terminal changes, so that a first
    // error is a plain message.
    let mut host = Host::read(&screen.opts.proc_root)?;
    pm.fill_info(screen.query(), FIELDS, &mut infos)?;
    let mut prev = Sample::of(&infos);
    let mut prev_at = Instant::now();

    catch_quit_signals()?;
    let guard = TerminalGuard::enter()?;
    // One write per frame, not one per line (stdout is line-buffered),
    // so that a terminal never shows a frame half drawn.
    let out = io::BufWriter::with_capacity(FRAME_BUFFER, io::stdout());
    let mut term = Terminal::new(CrosstermBackend::new(out))?;
    term.clear()?;
    let mut next = prev_at + FIRST_REFRESH.min(screen.opts.interval);
    term.draw(|f| screen.draw(f))?;
    loop {
        let sig = PENDING_SIGNAL.load(Ordering::Relaxed);
        if sig != 0 {
            drop(term);
            drop(guard);
            die_of(sig);
        }
        let wait = next.saturating_duration_since(Instant::now());
        if event::poll(wait.min(SIGNAL_CHECK))? {
            match event::read()? {
                Event::Key(key) if key.kind == KeyEventKind::Press => match screen.key(key) {
                    Action::Quit => return Ok(()),
                    Action::Redraw => {}
                    Action::Resample => {
                        // The other view's tasks: a fresh baseline, and
                        // a refresh soon.
                        pm.fill_info(screen.query(), FIELDS, &mut infos)?;
                        prev = Sample::of(&infos);
                        prev_at = Instant::now();
                        screen.rows.clear();
                        next = prev_at + FIRST_REFRESH.min(screen.opts.interval);
                    }
                },
                _ => {}
            }
            sort_rows(&mut screen);
            term.draw(|f| screen.draw(f))?;
            continue;
        }
        if Instant::now() < next {
            continue; // woke to look for a signal
        }
        // Time for a refresh.
        let now_host = Host::read(&screen.opts.proc_root)?;
        pm.fill_info(screen.query(), FIELDS, &mut infos)?;
        let now = Instant::now();
        screen.cpu = now_host.cpu.percent_since(&host.cpu);
        screen.rows = top_model::rows(
            &infos,
            &prev,
            now - prev_at,
            now_host.memory.total,
            &screen.opts.filter,
            screen.order,
        );
        screen.host = Some(now_host);
        screen.refreshes += 1;
        host = now_host;
        prev = Sample::of(&infos);
        prev_at = now;
        next = now + screen.opts.interval;
        term.draw(|f| screen.draw(f))?;
        if screen.opts.iterations == Some(screen.refreshes) {
            return Ok(());
        }
    }
}

fn sort_rows(screen: &mut Screen) {
    top_model::sort(&mut screen.rows, screen.order);
}

/// What a key asks for.
enum Action {
    Quit,
    Redraw,
    /// The set of tasks changed (process/thread view).
    Resample,
}

impl Screen {
    fn query(&self) -> Query<'static> {
        let q = if self.threads {
            Query::all_tasks()
        } else {
            Query::processes()
        };
        if self.opts.no_kthreads {
            q.without_kthreads()
        } else {
            q
        }
    }

    fn key(&mut self, key: KeyEvent) -> Action {
        let KeyCode::Char(c) = key.code else {
            return if key.code == KeyCode::Esc {
                Action::Quit
            } else {
                Action::Redraw
            };
        };
        if key.modifiers.contains(KeyModifiers::CONTROL) {
            return if c == 'c' {
                Action::Quit
            } else {
                Action::Redraw
            };
        }
        if let Some(k) = SortKey::from_letter(c) {
            self.order.key = k;
            return Action::Redraw;
        }
        match c {
            'q' => Action::Quit,
            '<' | '>' => {
                self.order.key = self.order.key.moved(c == '>');
                Action::Redraw
            }
            'R' => {
                self.order.reversed = !self.order.reversed;
                Action::Redraw
            }
            'H' => {
                self.threads = !self.threads;
                Action::Resample
            }
            _ => Action::Redraw,
        }
    }

    fn header(&self) -> Vec<Line<'static>> {
        let clock = clock::epoch_now().map_or_else(|| "?".into(), clock::clock_time);
        let Some(h) = &self.host else {
            return vec![Line::from(format!(
                "pidmap top - {clock}, sampling for {:.1} s…",
                FIRST_REFRESH.min(self.opts.interval).as_secs_f64()
            ))];
        };
        let c = StateCounts::of(&self.rows);
        let p = &self.cpu;
        let m = &h.memory;
        let mib = |kib: u64| kib as f64 / 1024.0;
        vec![
            Line::from(format!(
                "pidmap top - {clock} {}, load average: {:.2}, {:.2}, {:.2}",
                format_uptime(h.uptime),
                h.load.0,
                h.load.1,
                h.load.2
            )),
            Line::from(format!(
                "{}: {:>4} total, {:>4} running, {:>4} sleeping, {:>4} stopped, {:>4} zombie",
                if self.threads { "Threads" } else { "Tasks" },
                c.total,
                c.running,
                c.sleeping,
                c.stopped,
                c.zombie
            )),
            Line::from(format!(
                "%Cpu(s): {:>5.1} us, {:>5.1} sy, {:>5.1} ni, {:>5.1} id, {:>5.1} wa, {:>5.1} hi, {:>5.1} si, {:>5.1} st",
                p.user, p.system, p.nice, p.idle, p.iowait, p.irq, p.softirq, p.steal
            )),
            Line::from(format!(
                "MiB Mem : {:>9.1} total, {:>9.1} free, {:>9.1} used, {:>9.1} buff/cache",
                mib(m.total),
                mib(m.free),
                mib(m.used()),
                mib(m.buff_cache)
            )),
            Line::from(format!(
                "MiB Swap: {:>9.1} total, {:>9.1} free, {:>9.1} used. {:>9.1} avail Mem",
                mib(m.swap_total),
                mib(m.swap_free),
                mib(m.swap_used()),
                mib(m.available)
            )),
            Line::from(format!(
                "sort {}{} · {} · refresh {} every {:.1} s · q quit, P/M/T/N sort, </> column, R reverse, H threads",
                self.order.key.heading(),
                if self.order.reversed { " (reversed)" } else { "" },
                if self.threads { "threads" } else { "processes" },
                self.refreshes,
                self.opts.interval.as_secs_f64()
            )),
        ]
    }

    fn draw(&mut self, f: &mut Frame<'_>) {
        let header = self.header();
        let [top, body] = Layout::vertical([
            Constraint::Length(u16::try_from(header.len() + 1).unwrap_or(u16::MAX)),
            Constraint::Min(0),
        ])
        .areas(f.area());
        f.render_widget(Paragraph::new(header), top);

        let headings = [
            "PID", "USER", "NI", "S", "RES", "%CPU", "%MEM", "TIME+", "COMMAND",
        ];
        let sorted = self.order.key.heading();
        let head = Row::new(headings.iter().map(|h| {
            let style = if *h == sorted {
                Style::new().add_modifier(Modifier::BOLD | Modifier::UNDERLINED)
            } else {
                Style::new().add_modifier(Modifier::BOLD)
            };
            Cell::from(*h).style(style)
        }))
        .style(Style::new().add_modifier(Modifier::REVERSED));
        let visible = usize::from(body.height.saturating_sub(1));
        let names = &mut self.names;
        let rows: Vec<Row<'_>> = self
            .rows
            .iter()
            .take(visible)
            .map(|r| {
                let unknown = || "?".to_string();
                Row::new([
                    r.id.to_string(),
                    r.euid
                        .map_or_else(unknown, |u| names.name(u).chars().take(8).collect()),
                    match (r.nice, r.nice_applies) {
                        (_, Some(false)) => "-".to_string(),
                        (n, _) => n.map_or_else(unknown, |n| n.to_string()),
                    },
                    r.state.to_string(),
                    r.rss_kib.map_or_else(unknown, |k| k.to_string()),
                    format!("{:.1}", r.cpu),
                    format!("{:.1}", r.mem),
                    r.time.map_or_else(unknown, clock::top_time),
                    r.comm.clone(),
                ])
            })
            .collect();
        let widths = [
            Constraint::Length(8),
            Constraint::Length(8),
            Constraint::Length(3),
            Constraint::Length(1),
            Constraint::Length(9),
            Constraint::Length(5),
            Constraint::Length(5),
            Constraint::Length(10),
            Constraint::Fill(1),
        ];
        f.render_widget(Table::new(rows, widths).header(head), body);
    }
}

/// Whether this run is interactive: stdout is a terminal, and neither
/// `-b` nor `--json` asked for batch output.
pub fn wanted(batch: bool, json: bool) -> bool {
    use std::io::IsTerminal;
    !batch && !json && io::stdout().is_terminal()
}
