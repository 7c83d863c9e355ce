//! Cover-letter figures that cannot drift from the measurements.
//!
//! Every figure a cover letter quotes (a number with a decimal point or
//! with thousands separators: "272,679", "505.7", "13.09") must appear in
//! the documents that hold the measurements, BENCHMARKS.md and docs/*.md,
//! so that a figure changed in one place and not the other fails
//! `cargo xtask patches check`. Links and the diffstat are not figures.

use crate::paths::{patches_dir, workspace_root};
use anyhow::{bail, Result};
use std::collections::BTreeSet;

/// Checks every cover letter of the series against the documents.
pub fn check() -> Result<()> {
    let root = workspace_root();
    let mut measured = std::fs::read_to_string(root.join("BENCHMARKS.md"))?;
    let mut docs: Vec<_> = std::fs::read_dir(root.join("docs"))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    for doc in &docs {
        measured.push_str(&std::fs::read_to_string(doc)?);
    }
    let mut drifted = Vec::new();
    for (group, _) in crate::patches::series_groups()? {
        let cover = patches_dir().join(&group).join("0000-cover-letter.patch");
        let Ok(text) = std::fs::read_to_string(&cover) else {
            continue;
        };
        let missing: Vec<String> = figures(&text)
            .into_iter()
            .filter(|f| !mentions(&measured, f))
            .collect();
        if !missing.is_empty() {
            drifted.push(format!("{group}: {}", missing.join(", ")));
        }
    }
    if !drifted.is_empty() {
        bail!(
            "cover-letter figures that neither BENCHMARKS.md nor docs/*.md gives:\n  {}",
            drifted.join("\n  ")
        );
    }
    crate::run::step("every cover-letter figure is in BENCHMARKS.md or docs/");
    Ok(())
}

/// The figures of a cover letter's text: below its headers, above its
/// signature, leaving out links, the diffstat and the shortlog.
fn figures(cover: &str) -> BTreeSet<String> {
    let body = cover.split_once("\n\n").map_or(cover, |(_, b)| b);
    let body = body.split("\n-- \n").next().unwrap_or(body);
    let mut found = BTreeSet::new();
    for line in body.lines() {
        let diffstat = line.starts_with(' ') && line.contains(" | ");
        let summary = line.contains("changed, ") || line.starts_with(" create mode");
        if diffstat || summary {
            continue;
        }
        for word in line.split_whitespace() {
            if word.contains("://") || word.contains('@') {
                continue;
            }
            found.extend(numbers(word));
        }
    }
    found
}

/// The numbers in `word` that are figures: digits with a decimal point
/// or thousands separators.
fn numbers(word: &str) -> Vec<String> {
    let mut out = Vec::new();
    let bytes = word.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if !bytes[i].is_ascii_digit() || (i > 0 && bytes[i - 1].is_ascii_alphanumeric()) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len()
            && (bytes[i].is_ascii_digit()
                || (matches!(bytes[i], b',' | b'.')
                    && bytes.get(i + 1).is_some_and(u8::is_ascii_digit)))
        {
            i += 1;
        }
        let number = &word[start..i];
        let trailing_letter = bytes
            .get(i)
            .is_some_and(|b| b.is_ascii_alphabetic() && *b != b'x');
        if number.contains(['.', ',']) && !trailing_letter {
            out.push(number.to_string());
        }
    }
    out
}

/// Whether `text` gives `figure` as a number of its own (not as part of
/// a longer one).
fn mentions(text: &str, figure: &str) -> bool {
    text.match_indices(figure).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + figure.len()..].chars().next();
        let part_of_number = |c: Option<char>| c.is_some_and(|c| c.is_ascii_digit());
        let continues = |c: Option<char>, next: Option<char>| {
            matches!(c, Some('.' | ',')) && part_of_number(next)
        };
        let after_next = text[at + figure.len()..].chars().nth(1);
        !part_of_number(before) && !part_of_number(after) && !continues(after, after_next)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_are_decimals_and_grouped_thousands() {
        let cover = "Subject: [PATCH 0/4] x\n\n\
                     fork 272,679 -> 273,141 (+0.17%), 505.7x, 473 and 2022.\n\
                     Link: https://lore.kernel.org/r/20220711135237.173667-5-x@y\n\
                     \x20kernel/pid.c | 239 +++---\n\
                     \x2018 files changed, 679 insertions(+), 96 deletions(-)\n\
                     -- \n2.47.3\n";
        let found: Vec<_> = figures(cover).into_iter().collect();
        assert_eq!(found, ["0.17", "272,679", "273,141", "505.7"]);
    }

    #[test]
    fn a_figure_must_stand_alone_in_the_documents() {
        assert!(mentions("took 13.09 M instructions", "13.09"));
        assert!(!mentions("took 113.09 M", "13.09"));
        assert!(!mentions("took 13.091 M", "13.09"));
        assert!(!mentions("took 13.09.5", "13.09"));
        assert!(mentions("(13.09)", "13.09"));
        assert!(mentions("ends 13.09.", "13.09"));
    }
}
