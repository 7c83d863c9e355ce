//! htop's CPU meters: one bar per CPU, `N[|||||||      25.0%]`, filled
//! in htop's colours (low-priority user time blue, normal user time
//! green, kernel time red, time stolen by the hypervisor cyan) and laid
//! out in as many columns as the terminal width holds, CPUs running down
//! each column first, as htop lays out its meter columns.

use pidmap::monitor::CpuPercent;
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};

/// The narrowest a meter may be: its label, the brackets and room for
/// the percentage and some bar.
const MIN_METER_WIDTH: usize = 24;

/// The widest columns grow before another column is added: htop's two
/// columns on an 80-column terminal are 39 wide.
const MAX_METER_WIDTH: usize = 60;

/// The unfilled part of a bar, as htop's bar shadow.
const SHADOW: Style = Style::new().fg(Color::DarkGray);

/// The parts of a CPU's time a bar shows, in htop's order and colours
/// (htop's CPU meter without "detailed CPU time"): nice, normal user,
/// kernel (system, irq and softirq), virtualisation (steal). iowait is
/// idle time, as htop counts it there.
fn segments(p: &CpuPercent) -> [(f64, Color); 4] {
    [
        (p.nice, Color::Blue),
        (p.user, Color::Green),
        (p.system + p.irq + p.softirq, Color::Red),
        (p.steal, Color::Cyan),
    ]
}

/// The share a bar shows as its number: every part of [`segments`].
#[must_use]
pub fn busy(p: &CpuPercent) -> f64 {
    segments(p)
        .iter()
        .map(|(v, _)| v)
        .sum::<f64>()
        .clamp(0.0, 100.0)
}

/// How many meters go side by side in `width` columns: at least two
/// (htop's two meter columns) when they are at least
/// [`MIN_METER_WIDTH`] wide, more when they would be wider than
/// [`MAX_METER_WIDTH`], never more than the CPUs fill.
#[must_use]
pub fn columns(cpus: usize, width: usize) -> usize {
    let fit = ((width + 1) / (MIN_METER_WIDTH + 1)).max(1);
    let wanted = (width + 1).div_ceil(MAX_METER_WIDTH + 1).max(2);
    let cols = wanted.min(fit).min(cpus).max(1);
    // CPUs run down each column: a last column with none is dropped.
    cpus.div_ceil(cpus.div_ceil(cols)).max(1)
}

/// The meters of `cpus` (CPU number and its shares), in rows of
/// [`columns`] meters that fill `width`.
#[must_use]
pub fn lines(cpus: &[(u32, CpuPercent)], width: usize) -> Vec<Line<'static>> {
    if cpus.is_empty() {
        return Vec::new();
    }
    let cols = columns(cpus.len(), width);
    let rows = cpus.len().div_ceil(cols);
    let label_width = cpus
        .iter()
        .map(|(n, _)| n.to_string().len())
        .max()
        .unwrap_or(1)
        + 1;
    // Columns share the width, one space between them.
    let meter_width = (width.saturating_sub(cols - 1) / cols).max(label_width + 3);
    (0..rows)
        .map(|row| {
            let mut spans = Vec::new();
            for col in 0..cols {
                let Some((n, p)) = cpus.get(col * rows + row) else {
                    break;
                };
                if col > 0 {
                    spans.push(Span::raw(" "));
                }
                spans.extend(meter(*n, p, label_width, meter_width));
            }
            Line::from(spans)
        })
        .collect()
}

/// One meter, `width` wide: the CPU number right-aligned in
/// `label_width`, then `[`, the bar with the percentage over its right
/// end, and `]`.
fn meter(n: u32, p: &CpuPercent, label_width: usize, width: usize) -> Vec<Span<'static>> {
    let inner = width.saturating_sub(label_width + 2);
    let text = format!("{:.1}%", busy(p));
    // The cells: the text right-aligned over the bar, as htop draws it.
    let mut cells: Vec<char> = vec![' '; inner];
    let skip = text.chars().count().saturating_sub(inner);
    for (cell, c) in cells
        .iter_mut()
        .rev()
        .zip(text.chars().rev().take(text.chars().count() - skip))
    {
        *cell = c;
    }
    let mut spans = vec![Span::raw(format!("{n:>label_width$}")), Span::raw("[")];
    let mut at = 0;
    let mut total = 0.0;
    for (value, color) in segments(p) {
        total += value.max(0.0);
        let end = filled(total, inner).max(at);
        if end > at {
            let s: String = cells[at..end]
                .iter()
                .map(|&c| if c == ' ' { '|' } else { c })
                .collect();
            spans.push(Span::styled(s, Style::new().fg(color)));
        }
        at = end;
    }
    if at < inner {
        spans.push(Span::styled(cells[at..].iter().collect::<String>(), SHADOW));
    }
    spans.push(Span::raw("]"));
    spans
}

/// The cells of `inner` that `percent` fills, rounded to the nearest.
fn filled(percent: f64, inner: usize) -> usize {
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss,
        reason = "a share of at most 100 % of a bar of at most a few hundred cells"
    )]
    let cells = (percent.clamp(0.0, 100.0) / 100.0 * inner as f64).round() as usize;
    cells.min(inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pct(user: f64, system: f64, nice: f64) -> CpuPercent {
        let mut p = CpuPercent::default();
        p.user = user;
        p.system = system;
        p.nice = nice;
        p.idle = 100.0 - user - system - nice;
        p
    }

    /// A line's text, and the colour of each of its cells.
    fn cells(line: &Line<'_>) -> (String, Vec<Option<Color>>) {
        let mut text = String::new();
        let mut colors = Vec::new();
        for s in &line.spans {
            for c in s.content.chars() {
                text.push(c);
                colors.push(s.style.fg);
            }
        }
        (text, colors)
    }

    #[test]
    fn a_meter_fills_its_share_in_htop_colours_with_the_percentage() {
        let lines = lines(&[(0, pct(25.0, 25.0, 0.0))], 42);
        assert_eq!(lines.len(), 1);
        let (text, colors) = cells(&lines[0]);
        assert_eq!(text.chars().count(), 42, "{text:?}");
        // "0" right-aligned in 2, "[", 38 cells, "]".
        assert!(
            text.starts_with(" 0[") && text.ends_with("50.0%]"),
            "{text:?}"
        );
        let green = colors.iter().filter(|c| **c == Some(Color::Green)).count();
        let red = colors.iter().filter(|c| **c == Some(Color::Red)).count();
        // 25 % of 38 cells each: 9.5, rounded on the running total.
        assert_eq!((green, red), (10, 9), "{text:?}");
        assert_eq!(text.matches('|').count(), 19);
        assert!(!colors.contains(&Some(Color::Blue)));
    }

    #[test]
    fn full_and_empty_bars_and_the_text_over_the_bar() {
        let (text, colors) = cells(&lines(&[(3, pct(0.0, 0.0, 100.0))], 30)[0]);
        assert!(text.ends_with("|100.0%]"), "{text:?}");
        // The number is drawn over the bar, in the bar's colour.
        let blue = colors.iter().filter(|c| **c == Some(Color::Blue)).count();
        assert_eq!(blue, 30 - 4);
        let (text, colors) = cells(&lines(&[(3, pct(0.0, 0.0, 0.0))], 30)[0]);
        assert!(
            text.ends_with("   0.0%]") && !text.contains('|'),
            "{text:?}"
        );
        assert!(colors
            .iter()
            .all(|c| c.is_none() || *c == Some(Color::DarkGray)));
    }

    #[test]
    fn columns_fit_the_width_and_cpus_run_down_each_column() {
        let cpus: Vec<(u32, CpuPercent)> = (0..8).map(|n| (n, pct(10.0, 0.0, 0.0))).collect();
        for width in [24, 50, 80, 120, 200, 300] {
            let lines = lines(&cpus, width);
            let cols = columns(8, width);
            assert_eq!(lines.len(), 8usize.div_ceil(cols), "{width}");
            for l in &lines {
                let (text, _) = cells(l);
                assert!(text.chars().count() <= width, "{width}: {text:?}");
                assert_eq!(text.matches('[').count(), cols.min(8), "{width}: {text:?}");
            }
        }
        assert_eq!(columns(8, 24), 1);
        assert_eq!(columns(8, 80), 2);
        assert_eq!(columns(2, 300), 2);
        assert_eq!(columns(1, 300), 1);
        // Two columns of four: 0 and 4 share the first line.
        let first = cells(&lines(&cpus, 80)[0]).0;
        let labels: Vec<&str> = first
            .split(']')
            .filter_map(|m| m.split('[').next())
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        assert_eq!(labels, ["0", "4"], "{first:?}");
    }
}
