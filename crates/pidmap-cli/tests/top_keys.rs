//! The keys of the interactive `pidmap top` in a real terminal (tmux):
//! the selection bar scrolls to the last of more processes than the
//! screen holds, search moves it, the tree view hangs a child under its
//! parent, `k` kills a process this test spawned and `F8`/`r` renice one
//! (checked through waitpid and /proc), the table follows a resize, help
//! opens and Esc closes things without quitting.

use std::time::{Duration, Instant};

mod support;
use support::tmux::*;
use support::Named;

/// `n` sleeping children named `name`, and their pids as `-p` takes them.
fn kids(n: usize, name: &'static [u8]) -> (Vec<Named>, String) {
    let kids: Vec<Named> = (0..n).map(|_| Named::spawn(name)).collect();
    let list = kids
        .iter()
        .map(|k| k.0.to_string())
        .collect::<Vec<_>>()
        .join(",");
    (kids, list)
}

fn pid_of(row: &[String]) -> i32 {
    row[0].parse().unwrap()
}

/// The nice value of `pid`, `/proc/PID/stat` field 19.
fn nice_of(pid: i32) -> i32 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    after.split_whitespace().nth(16).unwrap().parse().unwrap()
}

/// Wait until the selection bar is on `pid`.
fn wait_selected(tmux: &Tmux, pid: i32) {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let sel = tmux.selected();
        if sel.as_deref().map(pid_of) == Some(pid) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the bar never reached {pid} (it is on {sel:?}); screen:\n{}",
            tmux.screen()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn the_bar_scrolls_to_the_last_process_and_back() {
    let (kids, list) = kids(60, b"scrollkid");
    let mut pids: Vec<i32> = kids.iter().map(|k| k.0).collect();
    pids.sort_unstable();
    let tmux = Tmux::new("scroll");
    tmux.start(&["top", "-d", "0.5", "-p", &list]);
    tmux.wait_for("started", started);
    tmux.keys("N");
    let s = tmux.wait_for("sorted by PID", |s| {
        s.contains("sort PID ") && table(s).first().map(|r| pid_of(r)) == Some(pids[0])
    });
    let shown = table(&s);
    assert!(
        shown.len() < pids.len(),
        "the list is longer than the screen"
    );
    assert!(!shown.iter().any(|r| pid_of(r) == pids[59]), "{s}");
    wait_selected(&tmux, pids[0]);
    // Down and j move one row; PgDn a page; End the last.
    tmux.keys("Down");
    wait_selected(&tmux, pids[1]);
    tmux.keys("j");
    wait_selected(&tmux, pids[2]);
    tmux.keys("PgDn");
    wait_selected(&tmux, pids[2 + shown.len()]);
    tmux.keys("End");
    wait_selected(&tmux, pids[59]);
    let s = tmux.screen();
    let rows = table(&s);
    assert_eq!(rows.last().map(|r| pid_of(r)), Some(pids[59]), "{s}");
    assert_eq!(rows.len(), shown.len(), "a full page at the end: {s}");
    tmux.keys("PgUp");
    wait_selected(&tmux, pids[59 - shown.len()]);
    tmux.keys("Home");
    wait_selected(&tmux, pids[0]);
    assert_eq!(table(&tmux.screen())[0][0], pids[0].to_string());
    // The bar stays on its process across refreshes.
    tmux.keys("Down");
    wait_selected(&tmux, pids[1]);
    let n = refreshes(&tmux.screen()).unwrap();
    tmux.wait_for("refreshed", |s| refreshes(s).is_some_and(|m| m > n + 1));
    assert_eq!(tmux.selected().as_deref().map(pid_of), Some(pids[1]));
    tmux.keys("q");
    assert_eq!(tmux.wait_exit(), "0");
}

#[test]
fn search_moves_the_bar_and_esc_goes_back() {
    let (kids, list) = kids(30, b"hay");
    let needle = Named::spawn(b"needle");
    let tmux = Tmux::new("search");
    tmux.start(&["top", "-d", "0.5", "-p", &format!("{list},{}", needle.0)]);
    tmux.wait_for("started", started);
    tmux.keys("N");
    let first = kids.iter().map(|k| k.0).chain([needle.0]).min().unwrap();
    tmux.wait_for("sorted by PID", |s| s.contains("sort PID "));
    wait_selected(&tmux, first);
    tmux.keys("/");
    tmux.type_text("need");
    tmux.wait_for("the search prompt", |s| bottom(s) == "Search: need");
    wait_selected(&tmux, needle.0);
    // Esc: the bar goes back, and top is still running.
    tmux.keys("Escape");
    wait_selected(&tmux, first);
    tmux.wait_for("the key bar back", |s| bottom(s).starts_with("F1Help"));
    // A name nobody has: the bar stays, the status says so.
    tmux.keys("F3");
    tmux.type_text("zzz");
    tmux.wait_for("not found", |s| bottom(s).contains("not found: zzz"));
    tmux.keys("Enter");
    // The filter (\) keeps only the matching rows.
    tmux.keys("\\");
    tmux.type_text("needle");
    let s = tmux.wait_for("filtered", |s| table(s).len() == 1);
    assert_eq!(table(&s)[0][0], needle.0.to_string(), "{s}");
    tmux.keys("Escape");
    tmux.wait_for("unfiltered", |s| table(s).len() == 31);
    tmux.keys("q");
    assert_eq!(tmux.wait_exit(), "0");
}

#[test]
fn tree_view_hangs_children_under_their_parent() {
    let kid = Named::spawn(b"treekid");
    let me = support::me();
    let tmux = Tmux::new("tree");
    tmux.start(&["top", "-d", "0.5", "-p", &format!("{me},{}", kid.0)]);
    tmux.wait_for("started", started);
    tmux.keys("F5");
    let s = tmux.wait_for("the tree", |s| {
        s.contains("processes tree") && table(s).len() == 2
    });
    let rows = table(&s);
    assert_eq!(rows[0][0], me.to_string(), "the parent first: {s}");
    assert_eq!(rows[1][0], kid.0.to_string(), "{s}");
    // COMMAND shows the command line (htop's default): the kid is a fork
    // of this test, so this test's arguments, under its new name.
    let cmdline = std::fs::read(format!("/proc/{}/cmdline", kid.0)).unwrap();
    let mut wanted = vec!["└─".to_string()];
    wanted.extend(
        String::from_utf8_lossy(&cmdline)
            .split('\0')
            .filter(|a| !a.is_empty())
            .flat_map(|a| a.split_whitespace().map(str::to_string).collect::<Vec<_>>()),
    );
    let command: Vec<String> = rows[1][8..].to_vec();
    // (a long command line is cut at the screen's edge)
    assert!(
        command.len() >= 2 && wanted.starts_with(&command[..command.len() - 1]),
        "{command:?} against {wanted:?}: {s}"
    );
    // c toggles the name.
    tmux.keys("c");
    let s = tmux.wait_for("names", |s| {
        table_rows(s).is_some_and(|r| r.len() == 2 && r[1][8..] == ["└─", "treekid"])
    });
    assert!(table(&s)[0].len() >= 9, "{s}");
    // t turns it off again.
    tmux.keys("t");
    tmux.wait_for("flat", |s| {
        !s.contains("processes tree") && !s.contains("└─")
    });
    tmux.keys("q");
    assert_eq!(tmux.wait_exit(), "0");
}

#[test]
fn kill_menu_kills_the_selected_process() {
    let kid = Named::spawn(b"killme");
    let tmux = Tmux::new("kill");
    tmux.start(&["top", "-d", "0.5", "-p", &kid.0.to_string()]);
    tmux.wait_for("started", started);
    wait_selected(&tmux, kid.0);
    tmux.keys("k");
    tmux.wait_for("the signal menu", |s| {
        s.contains(&format!("Send signal to {} (killme)", kid.0))
    });
    // Esc closes the menu and kills nothing.
    tmux.keys("Escape");
    tmux.wait_for("the menu closed", |s| !s.contains("Send signal"));
    assert!(std::path::Path::new(&format!("/proc/{}", kid.0)).exists());
    // F9, Down to SIGKILL, Enter.
    tmux.keys("F9");
    tmux.wait_for("the signal menu", |s| s.contains("Send signal"));
    tmux.keys("Down");
    tmux.keys("Enter");
    let sent = format!("sent SIGKILL to {}", kid.0);
    tmux.wait_for("the status line", |s| bottom(s) == sent);
    let mut status = 0;
    // SAFETY: reaping our own child.
    let r = unsafe { libc::waitpid(kid.0, std::ptr::from_mut(&mut status), 0) };
    assert_eq!(r, kid.0);
    assert!(
        libc::WIFSIGNALED(status) && libc::WTERMSIG(status) == libc::SIGKILL,
        "status {status:#x}"
    );
    // Reaped: Named's drop must not kill a reused pid.
    std::mem::forget(kid);
    tmux.wait_for("the row gone", |s| table(s).is_empty());
    tmux.keys("q");
    assert_eq!(tmux.wait_exit(), "0");
}

#[test]
fn renice_asks_then_sets_the_nice_value() {
    let kid = Named::spawn(b"niceme");
    // Whatever this test runs at (`nice cargo test` runs it at 10).
    let n0 = nice_of(kid.0);
    assert!(n0 <= 15, "room to renice up from {n0}");
    let (n1, n3) = (n0 + 1, n0 + 3);
    let tmux = Tmux::new("renice");
    tmux.start(&["top", "-d", "0.5", "-p", &kid.0.to_string()]);
    tmux.wait_for("started", started);
    wait_selected(&tmux, kid.0);
    tmux.keys("F8");
    let ask = format!("Renice {} (niceme) from {n0} to {n1}? y/n", kid.0);
    tmux.wait_for("the question", |s| bottom(s) == ask);
    tmux.keys("y");
    let done = format!("reniced {} to {n1}", kid.0);
    tmux.wait_for("the status line", |s| bottom(s) == done);
    assert_eq!(nice_of(kid.0), n1);
    // r: a value; n declines.
    tmux.keys("r");
    tmux.type_text(&n3.to_string());
    tmux.keys("Enter");
    let ask = format!("from {n1} to {n3}? y/n");
    tmux.wait_for("the question", |s| bottom(s).contains(&ask));
    tmux.keys("n");
    tmux.wait_for("cancelled", |s| bottom(s) == "renice cancelled");
    assert_eq!(nice_of(kid.0), n1);
    tmux.keys("r");
    tmux.type_text(&n3.to_string());
    tmux.keys("Enter");
    tmux.keys("Enter");
    tmux.wait_for("the status line", |s| {
        bottom(s) == format!("reniced {} to {n3}", kid.0)
    });
    assert_eq!(nice_of(kid.0), n3);
    // The table shows it at the next refresh.
    tmux.wait_for("the new NI", |s| {
        table(s).first().is_some_and(|r| r[2] == n3.to_string())
    });
    tmux.keys("q");
    assert_eq!(tmux.wait_exit(), "0");
}

#[test]
fn the_table_follows_a_resize_and_help_and_esc_do_not_quit() {
    let (kids, list) = kids(50, b"resizekid");
    let mut pids: Vec<i32> = kids.iter().map(|k| k.0).collect();
    pids.sort_unstable();
    let tmux = Tmux::new("resize");
    tmux.start(&["top", "-d", "0.5", "-p", &list]);
    tmux.wait_for("started", started);
    tmux.keys("N");
    tmux.wait_for("sorted", |s| s.contains("sort PID "));
    tmux.keys("End");
    wait_selected(&tmux, pids[49]);
    let big = table(&tmux.screen()).len();
    tmux.resize(100, 24);
    let s = tmux.wait_for("redrawn at 24 lines", |s| {
        s.lines().count() == 24 && table_rows(s).is_some_and(|t| t.len() < big)
    });
    let lines: Vec<&str> = s.lines().collect();
    let headings_at = lines
        .iter()
        .position(|l| l.split_whitespace().eq(HEADINGS.iter().copied()))
        .unwrap();
    assert_eq!(table(&s).len(), 24 - headings_at - 2, "{s}");
    assert!(bottom(&s).starts_with("F1Help"), "{s}");
    // The bar is still on screen, on the same process.
    wait_selected(&tmux, pids[49]);
    assert!(lines.iter().all(|l| l.chars().count() <= 100), "{s}");
    // Help, then Esc: back to the table, still running.
    tmux.keys("h");
    tmux.wait_for("help", |s| s.contains("pidmap top - help"));
    tmux.keys("Escape");
    tmux.wait_for("the table", started);
    tmux.keys("Escape");
    let n = refreshes(&tmux.screen()).unwrap();
    tmux.wait_for("another refresh", |s| refreshes(s).is_some_and(|m| m > n));
    tmux.keys("F10");
    assert_eq!(tmux.wait_exit(), "0");
}

/// An SGR mouse report (what a terminal sends with mouse reporting on)
/// at 0-based screen cell (`x`, `y`): `button` 0 a left press (and its
/// release), 65 a wheel step down, 64 up.
fn mouse(tmux: &Tmux, button: u8, x: usize, y: usize) {
    let (col, row) = (x + 1, y + 1);
    let press = format!("\x1b[<{button};{col};{row}M");
    let seq = if button == 0 {
        format!("{press}\x1b[<0;{col};{row}m")
    } else {
        press
    };
    tmux.type_text(&seq);
}

#[test]
fn mouse_clicks_select_and_sort_and_the_wheel_scrolls() {
    let (kids, list) = kids(40, b"mousekid");
    let mut pids: Vec<i32> = kids.iter().map(|k| k.0).collect();
    pids.sort_unstable();
    let tmux = Tmux::new("mouse");
    tmux.start(&["top", "-d", "0.5", "-p", &list]);
    let s = tmux.wait_for("started", started);
    let headings_at = s
        .lines()
        .position(|l| l.split_whitespace().eq(HEADINGS.iter().copied()))
        .unwrap();
    // A click on the PID heading sorts by it.
    mouse(&tmux, 0, 2, headings_at);
    tmux.wait_for("sorted by PID", |s| {
        s.contains("sort PID ") && table(s).first().map(|r| pid_of(r)) == Some(pids[0])
    });
    // A click on the fifth row selects it.
    mouse(&tmux, 0, 30, headings_at + 5);
    wait_selected(&tmux, pids[4]);
    // Each wheel step moves the bar three rows.
    mouse(&tmux, 65, 30, headings_at + 5);
    wait_selected(&tmux, pids[7]);
    mouse(&tmux, 64, 30, headings_at + 5);
    mouse(&tmux, 64, 30, headings_at + 5);
    wait_selected(&tmux, pids[1]);
    // Another click on the sorted heading reverses the order; the bar
    // stays on its process, which the table scrolls to.
    mouse(&tmux, 0, 2, headings_at);
    let s = tmux.wait_for("reversed", |s| s.contains("sort PID (reversed)"));
    let shown: Vec<i32> = table(&s).iter().map(|r| pid_of(r)).collect();
    assert!(shown.windows(2).all(|w| w[0] > w[1]), "{s}");
    assert!(shown.contains(&pids[1]), "{s}");
    wait_selected(&tmux, pids[1]);
    tmux.keys("q");
    assert_eq!(tmux.wait_exit(), "0");
}

/// The state letter of `pid` (`/proc/PID/stat` field 3), or None once it
/// is gone.
fn state_of(pid: i32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat[stat.rfind(')').unwrap() + 2..].chars().next()
}

#[test]
fn top_ends_when_its_terminal_is_hung_up() {
    // Started by a shell that does not exec it, so the tty's SIGHUP goes
    // to the shell (the session leader) and not to top: top must notice
    // the hung-up terminal itself (before the fix it spun on end-of-file
    // at 100 % CPU for ever).
    let tmux = Tmux::new("hangup");
    let script = format!("{} top -d 0.5; true", support::bin().display());
    tmux.start_shell(&script);
    tmux.wait_for("started", started);
    let shell: i32 = tmux.format("#{pane_pid}").parse().unwrap();
    let children = std::fs::read_to_string(format!("/proc/{shell}/task/{shell}/children")).unwrap();
    let top: i32 = children.split_whitespace().next().unwrap().parse().unwrap();
    tmux.run(&["kill-server"]);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match state_of(top) {
            None | Some('Z' | 'X') => break,
            Some(state) => assert!(
                Instant::now() < deadline,
                "top ({top}) still runs (state {state}) 10 s after its terminal was hung up"
            ),
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The first and last pid of the table, once it has rows.
fn ends(s: &str) -> Option<(i32, i32)> {
    let rows = table_rows(s)?;
    Some((pid_of(rows.first()?), pid_of(rows.last()?)))
}

#[test]
fn p_and_t_sort_busiest_first_even_after_i_and_i_inverts() {
    let (_idle, list) = kids(2, b"sortidle");
    let mut busy = std::process::Command::new("sh")
        .args(["-c", "while :; do :; done"])
        .spawn()
        .unwrap();
    let busy_pid = i32::try_from(busy.id()).unwrap();
    let tmux = Tmux::new("sortkeys");
    tmux.start(&["top", "-d", "0.5", "-p", &format!("{list},{busy_pid}")]);
    tmux.wait_for("started", started);
    // I inverts the order; P after it is busiest first again (htop's P).
    tmux.keys("I");
    tmux.keys("P");
    tmux.wait_for("the busy loop first by %CPU", |s| {
        ends(s).is_some_and(|(first, _)| first == busy_pid)
    });
    tmux.keys("I");
    tmux.wait_for("the busy loop last, inverted", |s| {
        ends(s).is_some_and(|(_, last)| last == busy_pid)
    });
    tmux.keys("T");
    tmux.wait_for("the busy loop first by TIME+", |s| {
        ends(s).is_some_and(|(first, _)| first == busy_pid)
    });
    tmux.keys("q");
    assert_eq!(tmux.wait_exit(), "0");
    let _ = busy.kill();
    let _ = busy.wait();
}

/// The size and shared fields of `/proc/PID/statm`, in KiB: (VIRT, SHR).
fn statm_kib(pid: u32) -> (u64, u64) {
    let text = std::fs::read_to_string(format!("/proc/{pid}/statm")).unwrap();
    let f: Vec<u64> = text
        .split_whitespace()
        .map(|v| v.parse().unwrap())
        .collect();
    // SAFETY: sysconf has no memory-safety preconditions.
    let page = u64::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap() / 1024;
    (f[0] * page, f[2] * page)
}

#[test]
fn search_and_filter_match_the_command_line_and_virt_shr_show_statm() {
    // Two sleeps: the same name, told apart by their arguments only.
    let mut a = std::process::Command::new("sleep")
        .arg("611.25")
        .spawn()
        .unwrap();
    let mut b = std::process::Command::new("sleep")
        .arg("622.75")
        .spawn()
        .unwrap();
    let tmux = Tmux::new("cmdline");
    tmux.start(&["top", "-d", "0.5", "-p", &format!("{},{}", a.id(), b.id())]);
    tmux.wait_for("started", |s| {
        started(s) && table_rows(s).is_some_and(|r| r.len() == 2)
    });
    tmux.keys("N");
    tmux.wait_for("sorted by PID", |s| s.contains("sort PID "));
    // The search finds the second by its argument.
    tmux.keys("/");
    tmux.type_text("622.7");
    wait_selected(&tmux, i32::try_from(b.id()).unwrap());
    tmux.keys("Escape");
    tmux.wait_for("the key bar back", |s| bottom(s).starts_with("F1Help"));
    // The filter keeps the first only.
    tmux.keys("\\");
    tmux.type_text("611.2");
    let s = tmux.wait_for("filtered", |s| table_rows(s).is_some_and(|r| r.len() == 1));
    assert_eq!(table(&s)[0][0], a.id().to_string(), "{s}");
    assert!(s.contains("sleep 611.25"), "the command line shown: {s}");
    tmux.keys("Enter");
    tmux.wait_for("the key bar back", |s| bottom(s).starts_with("F1Help"));
    // F2: show VIRT (below NLWP) and SHR (below RES).
    tmux.keys("F2");
    tmux.wait_for("the column chooser", |s| s.contains("VIRT"));
    for _ in 0..7 {
        tmux.keys("Down");
    }
    tmux.keys("Space");
    tmux.keys("Down");
    tmux.keys("Down");
    tmux.keys("Space");
    tmux.keys("Escape");
    tmux.wait_for("the key bar back", |s| bottom(s).starts_with("F1Help"));
    // The headings are no longer the default ones: the cells by the
    // headings line, once a refresh has read statm (a number, not "?").
    let cells_of = |s: &str| -> Option<Vec<(String, String)>> {
        let lines: Vec<&str> = s.lines().collect();
        let at = lines
            .iter()
            .position(|l| l.split_whitespace().any(|w| w == "VIRT"))?;
        let heads = lines[at].split_whitespace().map(str::to_string);
        let cells = lines.get(at + 1)?.split_whitespace().map(str::to_string);
        let pairs: Vec<(String, String)> = heads.zip(cells).collect();
        let ok = pairs
            .iter()
            .any(|(h, c)| h == "SHR" && c.parse::<u64>().is_ok());
        ok.then_some(pairs)
    };
    let s = tmux.wait_for("VIRT and SHR read", |s| cells_of(s).is_some());
    let pairs = cells_of(&s).unwrap();
    let cell = |h: &str| -> u64 {
        pairs
            .iter()
            .find(|(x, _)| x == h)
            .and_then(|(_, c)| c.parse().ok())
            .unwrap_or_else(|| panic!("{h} in {pairs:?}"))
    };
    let (virt, shr) = statm_kib(a.id());
    assert_eq!(cell("VIRT"), virt, "{s}");
    // Shared pages move as the process runs; a sleep's hardly at all.
    assert!(
        cell("SHR").abs_diff(shr) <= 64,
        "SHR {} against {shr}: {s}",
        cell("SHR")
    );
    tmux.keys("q");
    assert_eq!(tmux.wait_exit(), "0");
    for c in [&mut a, &mut b] {
        let _ = c.kill();
        let _ = c.wait();
    }
}

#[test]
fn space_tags_and_k_signals_the_tagged_processes() {
    let (kids, list) = kids(3, b"tagme");
    let pids: Vec<i32> = kids.iter().map(|k| k.0).collect();
    let tmux = Tmux::new("tag");
    tmux.start(&["top", "-d", "0.5", "-p", &list]);
    tmux.wait_for("started", |s| {
        started(s) && table_rows(s).is_some_and(|r| r.len() == 3)
    });
    tmux.keys("N");
    tmux.wait_for("sorted by PID", |s| s.contains("sort PID "));
    wait_selected(&tmux, pids[0]);
    // Space tags and moves down: tag the first and the third.
    tmux.keys("Space");
    wait_selected(&tmux, pids[1]);
    tmux.keys("Down");
    wait_selected(&tmux, pids[2]);
    tmux.keys("Space");
    tmux.keys("k");
    tmux.wait_for("the signal menu", |s| s.contains("(2 tagged)"));
    tmux.keys("Down"); // SIGKILL
    tmux.keys("Enter");
    tmux.wait_for("the status line", |s| {
        bottom(s) == "sent SIGKILL to 2 tagged"
    });
    let mut alive = Vec::new();
    for (i, kid) in kids.into_iter().enumerate() {
        if i == 1 {
            // Untagged: alive (and killed by Named's drop at the end).
            assert!(std::path::Path::new(&format!("/proc/{}", kid.0)).exists());
            alive.push(kid);
            continue;
        }
        let mut status = 0;
        // SAFETY: reaping our own child.
        let r = unsafe { libc::waitpid(kid.0, std::ptr::from_mut(&mut status), 0) };
        assert_eq!(r, kid.0);
        assert!(
            libc::WIFSIGNALED(status) && libc::WTERMSIG(status) == libc::SIGKILL,
            "{}: status {status:#x}",
            kid.0
        );
        // Reaped: Named's drop must not kill a reused pid.
        std::mem::forget(kid);
    }
    let s = tmux.wait_for("one row left", |s| {
        table_rows(s).is_some_and(|r| r.len() == 1)
    });
    assert_eq!(table(&s)[0][0], alive[0].0.to_string(), "{s}");
    tmux.keys("q");
    assert_eq!(tmux.wait_exit(), "0");
}
