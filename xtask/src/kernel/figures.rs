//! Every figure a cover letter quotes must be one BENCHMARKS.md gives, so
//! a number cannot drift away from the measurement it came from. A figure
//! is a decimal (`13.98`) or a number with thousands separators
//! (`10,031`); plain integers (counts, sizes, patch numbers) are not. A
//! figure may also come from docs/ABI.md, where the ABI's own limits
//! are. Not figures: version numbers (`Linux 5.8`, `7.3.4`), links, and
//! the signature format-patch appends after `-- `.

use anyhow::{bail, Context, Result};
use std::collections::BTreeSet;
use std::path::Path;

/// The figures of `text`, in order of appearance.
pub fn figures(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for line in text.lines() {
        if line == "-- " {
            break;
        }
        if line.starts_with("Link:") || line.contains("://") {
            continue;
        }
        scan_line(line, &mut found);
    }
    found
}

fn scan_line(line: &str, found: &mut Vec<String>) {
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let starts_number = bytes[i].is_ascii_digit()
            && (i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'.'));
        if !starts_number {
            i += 1;
            continue;
        }
        let start = i;
        let mut end = i;
        // Digits, with ',' or '.' only between digits.
        while end < bytes.len() {
            let c = bytes[end];
            let joins = (c == b',' || c == b'.')
                && end + 1 < bytes.len()
                && bytes[end + 1].is_ascii_digit()
                && end > start;
            if c.is_ascii_digit() || joins {
                end += 1;
            } else {
                break;
            }
        }
        let token = &line[start..end];
        if is_figure(token) && !is_version(line, start, token) {
            found.push(token.to_string());
        }
        i = end.max(i + 1);
    }
}

/// A decimal or a thousands-grouped number: at most one '.', after any
/// ',' groups, and every ',' group three digits long.
fn is_figure(token: &str) -> bool {
    let (whole, fraction) = match token.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (token, None),
    };
    if fraction.is_some_and(|f| f.is_empty() || f.contains(['.', ','])) {
        return false;
    }
    let groups: Vec<&str> = whole.split(',').collect();
    let grouped = groups.len() > 1;
    let groups_ok = groups[0].len() <= if grouped { 3 } else { usize::MAX }
        && groups[1..].iter().all(|g| g.len() == 3);
    groups_ok && (grouped || fraction.is_some())
}

/// `7.3.4` (two dots) and a number right after "Linux " are versions.
fn is_version(line: &str, start: usize, token: &str) -> bool {
    token.matches('.').count() > 1
        || line[..start].ends_with("Linux ")
        || line[start..].split_whitespace().next().is_some_and(|w| {
            w.trim_end_matches([',', ')', ';', ':'])
                .matches('.')
                .count()
                > 1
        })
}

/// The figures of each cover letter under `patches` that neither
/// BENCHMARKS.md nor docs/ABI.md gives.
pub fn check_cover_letters(root: &Path) -> Result<()> {
    let mut known = BTreeSet::new();
    for source in ["BENCHMARKS.md", "docs/ABI.md"] {
        let path = root.join(source);
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        known.extend(figures(&text));
    }
    let mut drift = Vec::new();
    let mut letters = Vec::new();
    for entry in std::fs::read_dir(root.join("kernel-patches"))? {
        let letter = entry?.path().join("0000-cover-letter.patch");
        if letter.exists() {
            letters.push(letter);
        }
    }
    letters.sort();
    for letter in &letters {
        let text = std::fs::read_to_string(letter)?;
        let missing: BTreeSet<String> = figures(&text)
            .into_iter()
            .filter(|f| !known.contains(f))
            .collect();
        if !missing.is_empty() {
            let name = letter
                .strip_prefix(root)
                .unwrap_or(letter)
                .display()
                .to_string();
            drift.push(format!(
                "{name}: {}",
                missing.into_iter().collect::<Vec<_>>().join(", ")
            ));
        }
    }
    if !drift.is_empty() {
        bail!(
            "cover-letter figures that BENCHMARKS.md does not give (measure them there, or quote its figures):\n  {}",
            drift.join("\n  ")
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_and_grouped_numbers_are_figures() {
        let line = "refresh 13.23 M (17.12x), 10,031 tasks, 2 boots, 512 a call";
        assert_eq!(figures(line), ["13.23", "17.12", "10,031"]);
    }

    #[test]
    fn versions_links_and_the_signature_are_not() {
        let text = "since Linux 5.8, base 7.3.4; see\nLink: https://x/r/20220711135237.173667-5\n1.5x\n-- \n2.47.3\n";
        assert_eq!(figures(text), ["1.5"]);
    }

    #[test]
    fn a_figure_inside_a_longer_number_does_not_count() {
        assert_eq!(figures("11.09 and 1.09"), ["11.09", "1.09"]);
        assert!(!figures("11.09").contains(&"1.09".to_string()));
    }

    #[test]
    fn every_cover_letter_figure_is_one_benchmarks_md_gives() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        if let Err(e) = check_cover_letters(&root) {
            panic!("{e:#}");
        }
    }
}
