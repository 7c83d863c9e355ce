//! The interactive `pidmap top` (ratatui on crossterm): the event loop
//! and the terminal. It samples, hands keys and mouse events to
//! [`State`] (`input`), does what they ask (`actions`) and draws
//! (`view`). The terminal is restored on every way out: quitting, an
//! error, a panic, and SIGTERM, SIGHUP or SIGINT (after which the process
//! dies of that signal, as it would have without the handler).

use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use crossterm::event::{self, DisableMouseCapture, EnableMouseCapture, Event, KeyEventKind};
use crossterm::terminal::{self, EnterAlternateScreen, LeaveAlternateScreen};
use pidmap::monitor::UserNames;
use pidmap::{InfoFields, Pid, Pidmap, Query, Target, TaskInfo};
use ratatui::backend::CrosstermBackend;
use ratatui::Terminal;

use crate::host::Host;
use crate::top::actions;
use crate::top::columns::Column;
use crate::top::input::Effect;
use crate::top::model::{self, Filter, Sample, StateCounts};
use crate::top::state::State;
use crate::top::view::{self, Summary};

/// What a refresh needs of each task.
const FIELDS: InfoFields = InfoFields::TGID
    .union(InfoFields::STATE)
    .union(InfoFields::CPU_TIME)
    .union(InfoFields::START_TIME)
    .union(InfoFields::COMM)
    .union(InfoFields::UIDS)
    .union(InfoFields::NICE)
    .union(InfoFields::RSS)
    .union(InfoFields::PPID)
    .union(InfoFields::NUM_THREADS);

/// The first refresh comes this soon (or after the interval, if shorter),
/// so that the screen fills at once with real deltas.
const FIRST_REFRESH: Duration = Duration::from_millis(300);

/// Bytes buffered per frame (a full 250x80 frame with its escapes fits).
const FRAME_BUFFER: usize = 1 << 18;

/// The longest the event loop waits before looking at [`PENDING_SIGNAL`]:
/// crossterm retries its poll when a signal interrupts it, so a signal
/// is seen within this time, not at once.
const SIGNAL_CHECK: Duration = Duration::from_millis(50);

/// How often the watchdog looks for a hung-up terminal.
const HANGUP_CHECK: Duration = Duration::from_millis(250);

/// File descriptors that must be free before the terminal changes: the
/// tty crossterm opens, its poll and wake-up fds, and the `/proc` file a
/// refresh opens at a time. With fewer, crossterm's reads fail, and its
/// cursor-position read retries a failed read for ever: the screen would
/// hang blank at 100 % CPU instead of saying why.
const FD_RESERVE: usize = 8;

/// A quit signal the event loop has not acted on within this time (it is
/// stuck in a read) is acted on by the watchdog: terminal restored, and
/// death by the signal.
const SIGNAL_GRACE: Duration = Duration::from_millis(750);

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
            libc::sigemptyset(std::ptr::from_mut(&mut sa.sa_mask));
            libc::sigaction(sig, std::ptr::from_ref(&sa), std::ptr::null_mut())
        };
        if r != 0 {
            return Err(io::Error::last_os_error()).context("installing a signal handler");
        }
    }
    Ok(())
}

/// Whether the terminal on stdin was hung up (its tmux or ssh session
/// closed without a SIGHUP reaching us, as when a shell that did not exec
/// us led the session). Reads then give end-of-file for ever, and
/// crossterm's `poll` retries them without returning, at 100 % CPU, so a
/// watchdog thread asks this instead of the event loop. A hung-up tty
/// answers every ioctl with `EIO`; stdin that is not a terminal
/// (`ENOTTY`) is not taken for one.
fn terminal_hung_up() -> bool {
    // SAFETY: a zeroed termios is a valid buffer, and tcgetattr writes
    // only into it.
    let failed = unsafe {
        let mut t: libc::termios = std::mem::zeroed();
        libc::tcgetattr(libc::STDIN_FILENO, std::ptr::from_mut(&mut t)) != 0
    };
    failed && io::Error::last_os_error().raw_os_error() == Some(libc::EIO)
}

/// Fails, naming the limit and the cause, unless [`FD_RESERVE`] more files
/// can be opened.
fn check_fd_reserve() -> Result<()> {
    use std::os::fd::{FromRawFd, OwnedFd};
    let mut held = Vec::with_capacity(FD_RESERVE);
    for _ in 0..FD_RESERVE {
        // SAFETY: F_DUPFD_CLOEXEC duplicates stderr into a new fd, which
        // the OwnedFd then owns alone and closes on drop.
        let fd = unsafe { libc::fcntl(libc::STDERR_FILENO, libc::F_DUPFD_CLOEXEC, 0) };
        if fd < 0 {
            let e = io::Error::last_os_error();
            let mut limit = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            // SAFETY: `limit` is a valid, writable rlimit.
            unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, std::ptr::from_mut(&mut limit)) };
            return Err(e).with_context(|| {
                format!(
                    "too few free fds for the terminal (RLIMIT_NOFILE {}, {FD_RESERVE} more needed)",
                    limit.rlim_cur
                )
            });
        }
        // SAFETY: `fd` was just returned by fcntl and is owned by nobody.
        held.push(unsafe { OwnedFd::from_raw_fd(fd) });
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
        crossterm::execute!(
            io::stdout(),
            EnterAlternateScreen,
            crossterm::cursor::Hide,
            EnableMouseCapture
        )
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
    let _ = crossterm::execute!(
        io::stdout(),
        DisableMouseCapture,
        LeaveAlternateScreen,
        crossterm::cursor::Show
    );
    let _ = terminal::disable_raw_mode();
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore();
    }
}

#[allow(
    clippy::too_many_lines,
    reason = "the event loop: refresh, draw, wait for a key or the interval, with its state in locals"
)]
pub fn run(mut pm: Pidmap, opts: Options) -> Result<()> {
    let mut infos: Vec<TaskInfo> = Vec::new();
    let mut state = State::new(opts.filter, opts.threads, opts.interval);
    let mut summary = Summary {
        first_refresh: FIRST_REFRESH.min(opts.interval),
        ..Summary::default()
    };
    let mut names = UserNames::new();
    let query = |threads: bool| {
        let q = if threads {
            Query::all_tasks()
        } else {
            Query::processes()
        };
        if opts.no_kthreads {
            q.without_kthreads()
        } else {
            q
        }
    };
    // The baseline sample, before the terminal changes, so that a first
    // error is a plain message.
    let mut host = Host::read(&opts.proc_root)?;
    pm.fill_info(query(state.threads), FIELDS, &mut infos)?;
    let mut prev = Sample::of(&infos);
    let mut prev_at = Instant::now();

    check_fd_reserve()?;
    catch_quit_signals()?;
    let guard = TerminalGuard::enter()?;
    // Nothing can be restored on a terminal that is gone: die as a
    // SIGHUP would have made us. A quit signal the event loop leaves
    // unanswered (stuck in a read) is answered here.
    std::thread::spawn(|| {
        let mut pending_since: Option<Instant> = None;
        loop {
            std::thread::sleep(HANGUP_CHECK);
            if terminal_hung_up() {
                die_of(libc::SIGHUP);
            }
            let sig = PENDING_SIGNAL.load(Ordering::Relaxed);
            if sig == 0 {
                continue;
            }
            let since = *pending_since.get_or_insert_with(Instant::now);
            if since.elapsed() >= SIGNAL_GRACE {
                restore();
                die_of(sig);
            }
        }
    });
    // Open crossterm's input now: a failure here is an error line, where
    // the cursor-position read below would retry it for ever.
    event::poll(Duration::ZERO).context("reading the terminal's input")?;
    // One write per frame, not one per line (stdout is line-buffered),
    // so that a terminal never shows a frame half drawn.
    let out = io::BufWriter::with_capacity(FRAME_BUFFER, io::stdout());
    let mut term = Terminal::new(CrosstermBackend::new(out))?;
    term.clear()?;
    let mut next = prev_at + summary.first_refresh;
    term.draw(|f| view::draw(f, &mut state, &summary))?;
    loop {
        let sig = PENDING_SIGNAL.load(Ordering::Relaxed);
        if sig != 0 {
            drop(term);
            drop(guard);
            die_of(sig);
        }
        let wait = next.saturating_duration_since(Instant::now());
        if event::poll(wait.min(SIGNAL_CHECK))? {
            let effect = match event::read()? {
                Event::Key(key) if key.kind == KeyEventKind::Press => state.key(key),
                Event::Mouse(m) => state.mouse(m),
                _ => Effect::Redraw, // a resize, among others
            };
            match effect {
                Effect::Quit => return Ok(()),
                Effect::Redraw => {}
                Effect::Resample => {
                    // The other view's tasks: a fresh baseline, and a
                    // refresh soon.
                    pm.fill_info(query(state.threads), FIELDS, &mut infos)?;
                    prev = Sample::of(&infos);
                    prev_at = Instant::now();
                    state.all.clear();
                    state.arrange();
                    next = prev_at + FIRST_REFRESH.min(state.interval);
                }
                Effect::Signal {
                    pid,
                    thread_of,
                    sig,
                } => {
                    state.message = Some(actions::send_signal(pid, thread_of, sig));
                    // Show what the signal did soon.
                    next = next.min(Instant::now() + FIRST_REFRESH);
                }
                Effect::SignalTagged { targets, sig } => {
                    let results: Vec<String> = targets
                        .iter()
                        .map(|&(pid, thread_of)| actions::send_signal(pid, thread_of, sig))
                        .collect();
                    // Each outcome, failures first (one line: the first
                    // failure and a count, or how many were signalled).
                    let failed: Vec<&String> =
                        results.iter().filter(|r| !r.starts_with("sent ")).collect();
                    state.message = Some(match failed.first() {
                        Some(first) => format!(
                            "{first} ({} of {} tagged failed)",
                            failed.len(),
                            results.len()
                        ),
                        None => format!(
                            "{} to {} tagged",
                            results[0].split(" to ").next().unwrap_or("sent"),
                            results.len()
                        ),
                    });
                    next = next.min(Instant::now() + FIRST_REFRESH);
                }
                Effect::Renice { pid, to } => {
                    state.message = Some(renice(&mut pm, state.threads, pid, to));
                    next = next.min(Instant::now() + FIRST_REFRESH);
                }
                Effect::Delay(d) => next = Instant::now() + d,
            }
            term.draw(|f| view::draw(f, &mut state, &summary))?;
            continue;
        }
        if Instant::now() < next {
            continue; // woke to look for a signal
        }
        // Time for a refresh.
        let now_host = Host::read(&opts.proc_root)?;
        pm.fill_info(query(state.threads), FIELDS, &mut infos)?;
        let now = Instant::now();
        summary.cpu = now_host.cpu.total.percent_since(&host.cpu.total);
        summary.cpus = now_host
            .cpu
            .per_cpu
            .iter()
            .map(|(n, t)| (*n, t.percent_since(host.cpu.cpu(*n).unwrap_or(t))))
            .collect();
        summary.left_out = if state.threads {
            let tids: Vec<i32> = infos.iter().map(|i| i.tid.as_raw()).collect();
            crate::unlisted::left_out(&mut pm, &tids)?.warning()
        } else {
            None
        };
        state.all = model::rows(&infos, &prev, now - prev_at, &now_host.memory, &mut |uid| {
            names.get(uid).to_string()
        });
        let statm = [Column::Virt, Column::Shr]
            .iter()
            .any(|c| state.shown.contains(*c) || state.order.key == *c);
        model::read_extras(&mut state.all, &opts.proc_root, statm, state.cmdline);
        summary.counts = StateCounts::of(state.all.iter().map(|r| r.state));
        state.arrange();
        summary.refreshes += 1;
        summary.host = Some(now_host.clone());
        host = now_host;
        prev = Sample::of(&infos);
        prev_at = now;
        next = now + state.interval;
        term.draw(|f| view::draw(f, &mut state, &summary))?;
        if opts.iterations == Some(summary.refreshes) {
            return Ok(());
        }
    }
}

/// Renice `pid`: in the process view every thread of the process (Linux
/// sets one thread's nice value per call), in the thread view that one.
fn renice(pm: &mut Pidmap, threads: bool, pid: i32, to: i32) -> String {
    let mut tids = vec![pid];
    if !threads {
        let mut ids = Vec::new();
        match pm.fill(Query::threads(Target::Pid(Pid::from_raw(pid))), &mut ids) {
            Ok(()) => tids = ids.into_iter().map(i32::from).collect(),
            Err(e) => return format!("renice {pid}: {}", crate::error::error_line(&e.into())),
        }
    }
    actions::renice(pid, &tids, to)
}

/// Whether this run is interactive: stdout is a terminal, and neither
/// `-b` nor `--json` asked for batch output.
pub fn wanted(batch: bool, json: bool) -> bool {
    use std::io::IsTerminal;
    !batch && !json && io::stdout().is_terminal()
}
