//! checkpatch findings that have a written answer. `patches check` fails
//! on any error or warning except these two, each accepted only when its
//! answer holds for that patch:
//!
//! - FILE_PATH_CHANGES (a new file: does MAINTAINERS need updating?): no,
//!   when an existing section other than THE REST already covers every
//!   file the patch adds, as `get_maintainer.pl --sections` says in the
//!   patched tree;
//! - UNKNOWN_COMMIT_ID (checkpatch cannot find a cited commit): Debian's
//!   tarball has no git history to look it up in, so the id must be
//!   listed in kernel-patches/upstream-commits with the subject the
//!   patch's tag quotes.

use anyhow::{Context, Result};
use std::path::Path;
use std::process::Command;

/// The answers to every finding of checkpatch's `report` on `patch`, or
/// None when a finding has none.
pub fn findings(report: &str, patch: &str, tree: &Path) -> Result<Option<Vec<String>>> {
    let findings: Vec<&str> = report
        .lines()
        .filter(|l| l.starts_with("ERROR:") || l.starts_with("WARNING:") || l.starts_with("CHECK:"))
        .collect();
    if findings.is_empty() {
        return Ok(None);
    }
    let known = known_commits()?;
    let mut answers = Vec::new();
    for finding in findings {
        let answer = if finding.starts_with("WARNING:FILE_PATH_CHANGES:") {
            path_changes(patch, tree)?
        } else if finding.starts_with("WARNING:UNKNOWN_COMMIT_ID:") {
            unknown_commit(finding, patch, &known)
        } else {
            None
        };
        match answer {
            Some(answer) => answers.push(answer),
            None => return Ok(None),
        }
    }
    answers.dedup();
    Ok(Some(answers))
}

/// The files a patch creates (`new file mode` after their `diff --git`).
fn new_files(patch: &str) -> Vec<String> {
    let mut files = Vec::new();
    let mut current = None;
    for line in patch.lines() {
        if let Some(rest) = line.strip_prefix("diff --git a/") {
            current = rest.split(" b/").next().map(str::to_string);
        } else if line.starts_with("new file mode") {
            if let Some(file) = current.take() {
                files.push(file);
            }
        }
    }
    files
}

fn path_changes(patch: &str, tree: &Path) -> Result<Option<String>> {
    let mut sections = Vec::new();
    for file in new_files(patch) {
        let out = Command::new("perl")
            .arg("scripts/get_maintainer.pl")
            .args(["--sections", "-f", &file])
            .current_dir(tree)
            .output()?;
        let text = String::from_utf8_lossy(&out.stdout);
        let section = text
            .lines()
            .next()
            .unwrap_or("")
            .trim_end_matches(':')
            .to_string();
        if !out.status.success() || section.is_empty() || section == "THE REST" {
            return Ok(None);
        }
        sections.push(format!("{file}: {section}"));
    }
    Ok((!sections.is_empty()).then(|| {
        format!(
            "FILE_PATH_CHANGES answered: MAINTAINERS already covers each new file ({})",
            sections.join("; ")
        )
    }))
}

/// kernel-patches/upstream-commits as (id, subject) pairs.
fn known_commits() -> Result<Vec<(String, String)>> {
    let path = crate::paths::patches_dir().join("upstream-commits");
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    Ok(parse_known(&text))
}

fn parse_known(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| l.split_once(' '))
        .map(|(id, subject)| (id.to_string(), subject.trim().to_string()))
        .collect()
}

/// The id checkpatch could not find must be a listed one, and every tag
/// in the patch that cites it must quote the listed subject.
fn unknown_commit(finding: &str, patch: &str, known: &[(String, String)]) -> Option<String> {
    let id = finding.split('\'').nth(1)?;
    let (_, subject) = known.iter().find(|(k, _)| k == id)?;
    let quoted = format!("{id} (\"{subject}\")");
    let cites: Vec<&str> = patch
        .lines()
        .take_while(|l| *l != "---")
        .filter(|l| l.contains(id))
        .collect();
    let every_cite_quotes = !cites.is_empty() && cites.iter().all(|l| l.contains(&quoted));
    every_cite_quotes.then(|| {
        format!("UNKNOWN_COMMIT_ID answered: {id} is upstream's \"{subject}\" (kernel-patches/upstream-commits)")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const KNOWN: &str = "# comment\n2fa044e51a1f XArray: Add cyclic allocation\n";
    const FINDING: &str =
        "WARNING:UNKNOWN_COMMIT_ID: Unknown commit id '2fa044e51a1f', maybe rebased or not pulled?";

    #[test]
    fn a_listed_commit_quoted_with_its_subject_is_answered() {
        let patch = "Subject: x\n\nFixes: 2fa044e51a1f (\"XArray: Add cyclic allocation\")\n---\n";
        assert!(unknown_commit(FINDING, patch, &parse_known(KNOWN)).is_some());
    }

    #[test]
    fn a_wrong_subject_or_an_unlisted_id_is_not() {
        let wrong = "Fixes: 2fa044e51a1f (\"XArray: something else\")\n---\n";
        assert!(unknown_commit(FINDING, wrong, &parse_known(KNOWN)).is_none());
        let other = FINDING.replace("2fa044e51a1f", "0123456789ab");
        let patch = "Fixes: 0123456789ab (\"XArray: Add cyclic allocation\")\n---\n";
        assert!(unknown_commit(&other, patch, &parse_known(KNOWN)).is_none());
    }

    #[test]
    fn one_unanswered_finding_fails_the_patch() {
        let report = format!("{FINDING}\nWARNING:LONG_LINE: line length of 101 exceeds 100\n");
        let patch = "Fixes: 2fa044e51a1f (\"XArray: Add cyclic allocation\")\n---\n";
        assert!(findings(&report, patch, Path::new("/nonexistent"))
            .unwrap()
            .is_none());
    }
}
