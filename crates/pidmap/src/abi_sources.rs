//! Test-only: the uapi headers and syscall-table lines of the kernel series,
//! read from the repository around the crate (include/uapi/linux/pidmap.h
//! and fdmap.h as the hunks of kernel-patches/*.patch leave them, applied in
//! `series` order; the table lines the series adds, each after the table's
//! path and a tab). The packaged crate has none of them: it checks its
//! checked-in copies (abi/) alone, and the tests comparing those copies
//! with the series say they skip.

use std::fs;
use std::path::{Path, PathBuf};

/// What the repository says.
pub(crate) struct Sources {
    /// include/uapi/linux/pidmap.h as the series' patches leave it.
    pub header_from_patch: String,
    /// include/uapi/linux/fdmap.h as the series' patches leave it.
    pub fdmap_header_from_patch: String,
    /// `path\tline` for each table line adding pidmap, pidmap_info or
    /// fdmap.
    pub syscall_tables: String,
}

/// The repository's kernel series and docs, `None` outside it (the
/// packaged crate). `PIDMAP_KERNEL_PATCHES` names another series.
pub(crate) fn from_repo() -> Option<Sources> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let patches = std::env::var_os("PIDMAP_KERNEL_PATCHES")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("kernel-patches"));
    if !patches.is_dir() {
        return None;
    }
    // None once a hunk does not fit: the header is then empty, and the
    // test says it found none.
    let mut header: Option<Vec<String>> = Some(Vec::new());
    let mut fdmap_header: Option<Vec<String>> = Some(Vec::new());
    let mut table = String::new();
    for patch in series(&patches) {
        let text = fs::read_to_string(&patch).unwrap_or_default();
        header = header.and_then(|h| apply(&h, &hunks(&text, UAPI_HEADER)));
        fdmap_header = fdmap_header.and_then(|h| apply(&h, &hunks(&text, FDMAP_HEADER)));
        let mut file = "";
        for line in text.lines() {
            if let Some(f) = line.strip_prefix("+++ ") {
                file = f.trim_end().strip_prefix("b/").unwrap_or(f);
                continue;
            }
            let Some(added) = line.strip_prefix('+') else {
                continue;
            };
            let words: Vec<&str> = added.split_whitespace().collect();
            if words.len() >= 3
                && words[0].bytes().all(|b| b.is_ascii_digit())
                && matches!(words[2], "pidmap" | "pidmap_info" | "fdmap")
            {
                table.push_str(file);
                table.push('\t');
                table.push_str(added);
                table.push('\n');
            }
        }
    }
    let join = |h: Option<Vec<String>>| h.map(|lines| lines.join("\n")).unwrap_or_default();
    Some(Sources {
        header_from_patch: join(header),
        fdmap_header_from_patch: join(fdmap_header),
        syscall_tables: table,
    })
}

const UAPI_HEADER: &str = "include/uapi/linux/pidmap.h";
const FDMAP_HEADER: &str = "include/uapi/linux/fdmap.h";

/// One hunk: the first old line (1-based; for an insertion into an empty
/// range, the line it follows) and its lines, each with its ' ', '-' or
/// '+' prefix.
struct Hunk<'a> {
    old_start: usize,
    old_count: usize,
    lines: Vec<&'a str>,
}

/// The hunks of `patch` that change `file`, in order.
fn hunks<'a>(patch: &'a str, file: &str) -> Vec<Hunk<'a>> {
    let mut out = Vec::new();
    let mut in_file = false;
    let mut lines = patch.lines();
    while let Some(line) = lines.next() {
        if let Some(f) = line.strip_prefix("+++ ") {
            in_file = f.trim_end().strip_prefix("b/") == Some(file);
            continue;
        }
        if line.starts_with("diff --git ") {
            in_file = false;
            continue;
        }
        let Some(range) = line.strip_prefix("@@ -").filter(|_| in_file) else {
            continue;
        };
        // "a[,b] +c[,d] @@": a count left out is 1.
        let mut ranges = range.split_whitespace();
        let count = |r: Option<&str>| -> Option<(usize, usize)> {
            let r = r?.trim_start_matches('+');
            match r.split_once(',') {
                Some((s, n)) => Some((s.parse().ok()?, n.parse().ok()?)),
                None => Some((r.parse().ok()?, 1)),
            }
        };
        let (Some((old_start, old_count)), Some((_, new_count))) =
            (count(ranges.next()), count(ranges.next()))
        else {
            continue;
        };
        let (mut old_left, mut new_left) = (old_count, new_count);
        let mut body = Vec::new();
        while old_left + new_left > 0 {
            let Some(l) = lines.next() else { break };
            match l.as_bytes().first() {
                Some(b'+') => new_left = new_left.saturating_sub(1),
                Some(b'-') => old_left = old_left.saturating_sub(1),
                Some(b'\\') => continue,
                _ => {
                    old_left = old_left.saturating_sub(1);
                    new_left = new_left.saturating_sub(1);
                }
            }
            body.push(l);
        }
        out.push(Hunk {
            old_start,
            old_count,
            lines: body,
        });
    }
    out
}

/// `old` with `hunks` applied; `None` if a context or removed line does
/// not match.
fn apply(old: &[String], hunks: &[Hunk<'_>]) -> Option<Vec<String>> {
    let mut new = Vec::new();
    let mut at = 0;
    for h in hunks {
        let begin = if h.old_count == 0 {
            h.old_start
        } else {
            h.old_start.checked_sub(1)?
        };
        new.extend_from_slice(old.get(at..begin)?);
        at = begin;
        for l in &h.lines {
            let (kind, text) = l.split_at(l.len().min(1));
            match kind {
                "+" => new.push(text.to_string()),
                "-" => {
                    (old.get(at)? == text).then_some(())?;
                    at += 1;
                }
                _ => {
                    (old.get(at)? == text).then_some(())?;
                    new.push(text.to_string());
                    at += 1;
                }
            }
        }
    }
    new.extend_from_slice(old.get(at..)?);
    Some(new)
}

/// The patches in `series` order (every *.patch, sorted, without one).
fn series(dir: &Path) -> Vec<PathBuf> {
    if let Ok(s) = fs::read_to_string(dir.join("series")) {
        return s
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(|l| dir.join(l))
            .collect();
    }
    let mut v: Vec<PathBuf> = fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "patch"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}
