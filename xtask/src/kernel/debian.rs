//! The series must apply to upstream v7.3.4 as it is, though it is made on
//! Debian's tree: no hunk may hold a Debian-only line as context or as a
//! removed line (`git am` would find no such line upstream). The Debian-only
//! lines of the files the series modifies are listed in
//! `kernel-patches/debian-changes.txt`; this checks every hunk against them.

use anyhow::{bail, Context, Result};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::run::step;

/// The list's file name in kernel-patches/.
pub const LIST: &str = "debian-changes.txt";

/// What the list says of one file the series modifies.
#[derive(Debug, Default)]
pub struct FileEntry {
    /// (Debian patch, Debian-only line or distinctive substring of one).
    pub lines: Vec<(String, String)>,
    /// How the file was found to have no Debian change, when it has none.
    pub none: Option<String>,
}

/// Parses `debian-changes.txt` (format described in its header).
pub fn parse_list(text: &str) -> Result<BTreeMap<String, FileEntry>> {
    let mut files: BTreeMap<String, FileEntry> = BTreeMap::new();
    let mut file: Option<String> = None;
    let mut patch: Option<String> = None;
    for (n, raw) in text.lines().enumerate() {
        let n = n + 1;
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (key, value) = line.split_once(' ').unwrap_or((line, ""));
        let value = value.trim();
        if value.is_empty() {
            bail!("{LIST}:{n}: `{key}` needs a value");
        }
        let current = || {
            file.clone()
                .with_context(|| format!("{LIST}:{n}: `{key}` before any `file`"))
        };
        match key {
            "file" => {
                if files.contains_key(value) {
                    bail!("{LIST}:{n}: file {value} is listed twice");
                }
                files.insert(value.to_string(), FileEntry::default());
                file = Some(value.to_string());
                patch = None;
            }
            "debian" => {
                current()?;
                patch = Some(value.to_string());
            }
            "line" => {
                let f = current()?;
                let p = patch
                    .clone()
                    .with_context(|| format!("{LIST}:{n}: `line` before any `debian` patch"))?;
                let entry = files.get_mut(&f).expect("inserted at `file`");
                entry.lines.push((p, value.to_string()));
            }
            "none" => {
                let f = current()?;
                files.get_mut(&f).expect("inserted at `file`").none = Some(value.to_string());
            }
            other => bail!("{LIST}:{n}: unknown record `{other}` (file, debian, line, none)"),
        }
    }
    for (f, entry) in &files {
        match (entry.lines.is_empty(), &entry.none) {
            (true, None) => bail!("{LIST}: file {f} has neither `line` nor `none`"),
            (false, Some(_)) => bail!("{LIST}: file {f} has both `line` and `none`"),
            _ => {}
        }
    }
    Ok(files)
}

/// One line a hunk needs to find in the tree it applies to.
#[derive(Debug, PartialEq, Eq)]
pub struct NeededLine {
    pub file: String,
    /// Line number in the file before this patch.
    pub line_no: usize,
    /// ' ' for context, '-' for a removed line.
    pub kind: char,
    pub text: String,
}

/// What a patch needs of the tree: the files it modifies, the files it
/// creates, and every context and removed line of its hunks.
#[derive(Debug, Default)]
pub struct PatchNeeds {
    pub modified: BTreeSet<String>,
    pub created: BTreeSet<String>,
    pub lines: Vec<NeededLine>,
}

/// Parses `old,len` of a hunk header's `-old,len` or `+new,len`.
fn range(field: &str) -> Option<(usize, usize)> {
    let field = &field[1..];
    match field.split_once(',') {
        Some((start, len)) => Some((start.parse().ok()?, len.parse().ok()?)),
        None => Some((field.parse().ok()?, 1)),
    }
}

/// Reads a `git format-patch` file. Hunks are bounded by their headers'
/// line counts, so the `-- ` signature is not taken for a removed line.
pub fn patch_needs(patch: &str) -> Result<PatchNeeds> {
    let mut needs = PatchNeeds::default();
    let mut file: Option<String> = None;
    // Lines still to come in the current hunk: (old side, new side).
    let mut left = (0usize, 0usize);
    let mut old_no = 0usize;
    for line in patch.lines() {
        if left.0 > 0 || left.1 > 0 {
            let Some(f) = &file else {
                bail!("a hunk before any `diff --git` header");
            };
            let (kind, text) = match line.chars().next() {
                Some(c @ (' ' | '-' | '+')) => (c, &line[1..]),
                // An empty context line whose space was stripped.
                None => (' ', ""),
                Some('\\') => continue, // "\ No newline at end of file"
                Some(_) => bail!("{f}: a hunk ends early at {line:?}"),
            };
            let fits = match kind {
                ' ' => left.0 > 0 && left.1 > 0,
                '-' => left.0 > 0,
                _ => left.1 > 0,
            };
            if !fits {
                bail!("{f}: a hunk's lines do not match its header's counts at {line:?}");
            }
            if kind != '+' {
                needs.lines.push(NeededLine {
                    file: f.clone(),
                    line_no: old_no,
                    kind,
                    text: text.to_string(),
                });
                old_no += 1;
                left.0 -= 1;
            }
            if kind != '-' {
                left.1 -= 1;
            }
            continue;
        }
        if let Some(rest) = line.strip_prefix("diff --git a/") {
            let name = rest
                .split(" b/")
                .next()
                .context("a `diff --git` line without b/")?;
            file = Some(name.to_string());
            needs.modified.insert(name.to_string());
        } else if line.starts_with("new file mode") {
            if let Some(f) = &file {
                needs.modified.remove(f);
                needs.created.insert(f.clone());
            }
        } else if line.starts_with("@@ ") {
            let mut fields = line.split_whitespace().skip(1);
            let old = fields.next().and_then(range);
            let new = fields.next().and_then(range);
            let (Some((start, old_len)), Some((_, new_len))) = (old, new) else {
                bail!("cannot read the hunk header {line:?}");
            };
            left = (old_len, new_len);
            old_no = start;
        }
    }
    Ok(needs)
}

/// A context or removed line of a hunk that holds a Debian-only line.
#[derive(Debug)]
pub struct Hit {
    pub patch: String,
    pub file: String,
    pub line_no: usize,
    pub kind: char,
    pub text: String,
    pub debian_patch: String,
    pub listed: String,
}

/// What [`check_patches`] looked at, for its report.
#[derive(Debug, Default)]
pub struct Checked {
    pub patches: usize,
    /// Context and removed lines looked at.
    pub lines: usize,
    /// Files the series modifies (created by none of its earlier patches).
    pub files: BTreeSet<String>,
    /// Of those, the ones with Debian-only lines listed.
    pub with_debian_lines: BTreeSet<String>,
}

/// Checks `(name, text)` patches, in series order, against the list.
/// Fails when a file the series modifies is not in the list; returns the
/// hits (empty when the series is clean).
pub fn check_patches(
    list: &BTreeMap<String, FileEntry>,
    patches: &[(String, String)],
) -> Result<(Checked, Vec<Hit>)> {
    let mut checked = Checked::default();
    let mut hits = Vec::new();
    // Files an earlier patch of the series created: not Debian's.
    let mut created: BTreeSet<String> = BTreeSet::new();
    let mut unlisted = BTreeSet::new();
    for (name, text) in patches {
        let needs = patch_needs(text).with_context(|| format!("cannot read {name}"))?;
        checked.patches += 1;
        for f in needs.modified.iter().filter(|f| !created.contains(*f)) {
            checked.files.insert(f.clone());
            match list.get(f) {
                None => {
                    unlisted.insert(f.clone());
                }
                Some(entry) if !entry.lines.is_empty() => {
                    checked.with_debian_lines.insert(f.clone());
                }
                Some(_) => {}
            }
        }
        for needed in &needs.lines {
            if created.contains(&needed.file) {
                continue;
            }
            checked.lines += 1;
            let Some(entry) = list.get(&needed.file) else {
                continue;
            };
            for (debian_patch, listed) in &entry.lines {
                if needed.text.contains(listed.as_str()) {
                    hits.push(Hit {
                        patch: name.clone(),
                        file: needed.file.clone(),
                        line_no: needed.line_no,
                        kind: needed.kind,
                        text: needed.text.clone(),
                        debian_patch: debian_patch.clone(),
                        listed: listed.clone(),
                    });
                }
            }
        }
        created.extend(needs.created);
    }
    if !unlisted.is_empty() {
        bail!(
            "the series modifies files kernel-patches/{LIST} does not list: {}\n  \
             find what Debian changed in each (a `line` per Debian-only line, or \
             `none` with how it was checked) and add a `file` record",
            unlisted.into_iter().collect::<Vec<_>>().join(", ")
        );
    }
    Ok((checked, hits))
}

/// Runs the check on the series' patches, printing what it checked.
pub fn check_series(patches_dir: &Path, patches: &[std::path::PathBuf]) -> Result<()> {
    let list_path = patches_dir.join(LIST);
    let list_text = std::fs::read_to_string(&list_path)
        .with_context(|| format!("cannot read {}", list_path.display()))?;
    let list = parse_list(&list_text)?;
    let mut texts = Vec::new();
    for patch in patches {
        let name = patch
            .strip_prefix(patches_dir)
            .unwrap_or(patch)
            .display()
            .to_string();
        let text = std::fs::read_to_string(patch)
            .with_context(|| format!("cannot read {}", patch.display()))?;
        texts.push((name, text));
    }
    let (checked, hits) = check_patches(&list, &texts)?;
    let listed_lines: usize = list.values().map(|e| e.lines.len()).sum();
    step(format!(
        "upstream-clean hunks: {} context/removed lines of {} patches, in {} modified files, \
         against {listed_lines} Debian-only lines of kernel-patches/{LIST} ({} of those files \
         carry Debian changes: {})",
        checked.lines,
        checked.patches,
        checked.files.len(),
        checked.with_debian_lines.len(),
        checked
            .with_debian_lines
            .iter()
            .cloned()
            .collect::<Vec<_>>()
            .join(", ")
    ));
    if !hits.is_empty() {
        for hit in &hits {
            eprintln!(
                "{}: {}:{}: {} line holds Debian-only {:?} (from {}): {:?}",
                hit.patch,
                hit.file,
                hit.line_no,
                if hit.kind == '-' {
                    "removed"
                } else {
                    "context"
                },
                hit.listed,
                hit.debian_patch,
                hit.text
            );
        }
        bail!(
            "{} hunk line(s) need Debian-only text, so `git am` on upstream v7.3.4 would fail: \
             move or shrink those hunks so their context holds only upstream lines",
            hits.len()
        );
    }
    step("upstream-clean hunks: no hunk holds a Debian-only line");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIST_TEXT: &str = "\
# comment
file kernel/fork.c
debian debian/add-sysctl-to-disallow-unprivileged-CLONE_NEWUSER-by-default.patch
line unprivileged_userns_clone

file kernel/pid.c
none checked
";

    fn patch(context: &str) -> String {
        format!(
            "From 0000 Mon Sep 17 00:00:00 2001\n\
             Subject: [PATCH] test\n\
             \n\
             ---\n \
             kernel/fork.c | 1 +\n\
             \n\
             diff --git a/kernel/fork.c b/kernel/fork.c\n\
             index 1111111..2222222 100644\n\
             --- a/kernel/fork.c\n\
             +++ b/kernel/fork.c\n\
             @@ -130,3 +130,4 @@\n \
             #include <kunit/visibility.h>\n\
             \n \
             {context}\n\
             +/* new */\n\
             -- \n\
             2.47.0\n"
        )
    }

    fn run(patch_text: &str) -> Result<(Checked, Vec<Hit>)> {
        let list = parse_list(LIST_TEXT).unwrap();
        check_patches(
            &list,
            &[("0001-test.patch".to_string(), patch_text.to_string())],
        )
    }

    #[test]
    fn context_holding_a_debian_line_fails() {
        let (checked, hits) = run(&patch("#ifdef CONFIG_USER_NS")).unwrap();
        assert!(hits.is_empty());
        assert_eq!(checked.lines, 3);
        let (_, hits) = run(&patch("extern int unprivileged_userns_clone;")).unwrap();
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].file, "kernel/fork.c");
        assert_eq!(hits[0].line_no, 132);
        assert_eq!(hits[0].kind, ' ');
    }

    #[test]
    fn removed_debian_line_fails_added_one_does_not() {
        let removed = patch("x")
            .replace("@@ -130,3 +130,4 @@", "@@ -130,3 +130,3 @@")
            .replace(
                " x\n+/* new */",
                "-#define unprivileged_userns_clone 0\n+/* new */",
            );
        let (_, hits) = run(&removed).unwrap();
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].kind, '-');
        let added = patch("x").replace("+/* new */", "+int unprivileged_userns_clone;");
        assert!(run(&added).unwrap().1.is_empty());
    }

    #[test]
    fn signature_is_not_a_removed_line() {
        let needs = patch_needs(&patch("x")).unwrap();
        assert!(needs.lines.iter().all(|l| l.text != "- "));
        assert_eq!(needs.lines.len(), 3);
    }

    #[test]
    fn unlisted_modified_file_fails() {
        let other = patch("x").replace("kernel/fork.c", "kernel/exit.c");
        let err = run(&other).unwrap_err().to_string();
        assert!(err.contains("kernel/exit.c"), "{err}");
    }

    #[test]
    fn files_the_series_created_need_no_entry() {
        let create = "diff --git a/kernel/new.c b/kernel/new.c\n\
                      new file mode 100644\n\
                      --- /dev/null\n\
                      +++ b/kernel/new.c\n\
                      @@ -0,0 +1 @@\n\
                      +int x;\n";
        let modify = "diff --git a/kernel/new.c b/kernel/new.c\n\
                      --- a/kernel/new.c\n\
                      +++ b/kernel/new.c\n\
                      @@ -1 +1,2 @@\n \
                      int x;\n\
                      +int y;\n";
        let list = parse_list(LIST_TEXT).unwrap();
        let (checked, hits) = check_patches(
            &list,
            &[
                ("1".to_string(), create.to_string()),
                ("2".to_string(), modify.to_string()),
            ],
        )
        .unwrap();
        assert!(hits.is_empty());
        assert!(checked.files.is_empty());
    }

    #[test]
    fn list_needs_line_or_none() {
        assert!(parse_list("file a\n").is_err());
        assert!(parse_list("file a\nline x\n").is_err());
        assert!(parse_list("file a\ndebian p\nline x\nnone y\n").is_err());
    }

    #[test]
    fn the_real_list_parses() {
        let text = std::fs::read_to_string(crate::paths::patches_dir().join(LIST)).unwrap();
        let list = parse_list(&text).unwrap();
        assert!(list["kernel/fork.c"]
            .lines
            .iter()
            .any(|(_, l)| l == "unprivileged_userns_clone"));
    }
}
