//! `cargo xtask patches export --out DIR`: the series as a poster sends it.
//!
//! The files in kernel-patches/ name no one: their `From:` and
//! `Signed-off-by:` carry [`MARKER`]. Exporting for posting applies the
//! series to a scratch tree, formats each group of `kernel-patches/series`
//! with `git format-patch --base` (so every cover letter ends with
//! `base-commit:` and, after the first series, the prerequisite patches'
//! ids), puts the poster's identity from `git config` in place of the
//! marker, and addresses each series to what `scripts/get_maintainer.pl`
//! finds for its patches in the patched tree, plus the lists a new system
//! call is sent to. It refuses an unset or placeholder identity, and then
//! checks its own output: `git am` applies it to the pristine tree, with
//! the poster as the author of every commit.

use crate::kernel::KernelArgs;
use crate::kernel::{self, BASE_TAG};
use crate::paths::{patches_dir, workspace_root};
use crate::run::{output, run_quiet, step};
use anyhow::{bail, Context, Result};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Who the files in the tree say wrote and signed off the patches.
pub const MARKER: &str = "Your Name <you@example.org>";

/// The lists a series goes to besides what get_maintainer.pl finds, by
/// what its patches touch: linux-api for a user-space interface (a uapi
/// header or a system call table); for an LSM hook, the LSM list and the
/// lists of the LSMs that implement or will implement its sides.
fn extra_lists(files: &[String]) -> Vec<&'static str> {
    let mut lists = Vec::new();
    if files
        .iter()
        .any(|f| f.contains("include/uapi/") || is_syscall_table(f))
    {
        lists.push("linux-api@vger.kernel.org");
    }
    if files
        .iter()
        .any(|f| f.starts_with("security/") || f == "include/linux/lsm_hook_defs.h")
    {
        lists.extend([
            "linux-security-module@vger.kernel.org",
            "selinux@vger.kernel.org",
            "apparmor@lists.ubuntu.com",
        ]);
    }
    lists
}

/// A poster's `Name <email>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    name: String,
    email: String,
}

impl Identity {
    /// `user.name` and `user.email` from git config, as `git format-patch -s`
    /// takes them; refused when unset or a placeholder.
    pub fn from_git_config() -> Result<Identity> {
        let get = |key: &str| -> String {
            Command::new("git")
                .current_dir(workspace_root())
                .args(["config", key])
                .output()
                .ok()
                .filter(|out| out.status.success())
                .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_string())
                .unwrap_or_default()
        };
        let identity = Identity {
            name: get("user.name"),
            email: get("user.email"),
        };
        identity.check()?;
        Ok(identity)
    }

    /// Refuses what no one can post as: an empty name or email, the tree's
    /// marker, or an address in a domain reserved for examples (RFC 2606).
    fn check(&self) -> Result<()> {
        if self.name.is_empty() || self.email.is_empty() {
            bail!(
                "no poster identity: set `git config user.name` and `git config user.email` \
                 (the patches are exported with them as author and Signed-off-by)"
            );
        }
        let domain = self
            .email
            .rsplit_once('@')
            .map(|(_, d)| d.to_ascii_lowercase())
            .unwrap_or_default();
        let reserved = domain.is_empty()
            || ["example", "invalid", "localhost", "test"]
                .iter()
                .any(|tld| domain == *tld || domain.ends_with(&format!(".{tld}")))
            || ["example.com", "example.net", "example.org"]
                .iter()
                .any(|d| domain == *d || domain.ends_with(&format!(".{d}")));
        if self.line() == MARKER || self.name == "Your Name" || reserved {
            bail!(
                "`{}` is a placeholder, not a poster's identity: set `git config user.name` \
                 and `git config user.email` to yours",
                self.line()
            );
        }
        Ok(())
    }

    fn line(&self) -> String {
        format!("{} <{}>", self.name, self.email)
    }
}

/// The series' groups, from `kernel-patches/series`: each directory (a
/// series posted on its own, with its own cover letter) and how many
/// patches it holds, in order. Names need not exist yet.
pub fn series_groups() -> Result<Vec<(String, usize)>> {
    let mut groups: Vec<(String, usize)> = Vec::new();
    for name in kernel::series_names()? {
        let dir = match name.rsplit_once('/') {
            Some((dir, _)) => dir.to_string(),
            None => String::new(),
        };
        match groups.last_mut() {
            Some((last, n)) if *last == dir => *n += 1,
            _ => groups.push((dir, 1)),
        }
    }
    Ok(groups)
}

/// The subject prefix of a series' patches, from its cover letter's
/// subject: `[PATCH v2 0/6]` gives "PATCH v2", `[RFC PATCH 0/7]` "RFC
/// PATCH", so that every patch carries what the cover letter gives
/// ("PATCH" without a cover letter).
pub fn subject_prefix(cover_letter: &Path) -> Result<String> {
    let Ok(text) = std::fs::read_to_string(cover_letter) else {
        return Ok("PATCH".to_string());
    };
    Ok(prefix_of_cover_subject(&text))
}

fn prefix_of_cover_subject(text: &str) -> String {
    let Some(bracket) = text
        .lines()
        .find_map(|line| line.strip_prefix("Subject: ["))
        .and_then(|rest| rest.split_once(']'))
        .map(|(inside, _)| inside)
    else {
        return "PATCH".to_string();
    };
    // "RFC", "PATCH" and a version "vN", before the "N/M" numbering.
    let words: Vec<&str> = bracket
        .split_whitespace()
        .take_while(|w| !w.contains('/'))
        .filter(|w| {
            matches!(*w, "RFC" | "PATCH")
                || w.strip_prefix('v')
                    .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
        .collect();
    if words.contains(&"PATCH") {
        words.join(" ")
    } else {
        "PATCH".to_string()
    }
}

/// Exports the series for posting into `out`, as the poster in git config.
pub fn export(args: &KernelArgs, out: &Path) -> Result<()> {
    let identity = Identity::from_git_config()?;
    write(args, &identity, out)?;
    verify(args, &identity, out)
}

/// test-all's check of the posting export, as git's own test suite's
/// author (t/test-lib.sh), which [`Identity::check`] would refuse to post.
pub fn check(args: &KernelArgs) -> Result<()> {
    let identity = Identity {
        name: "A U Thor".to_string(),
        email: "author@example.com".to_string(),
    };
    let out = crate::paths::xtask_dir().join("posting");
    write(args, &identity, &out)?;
    verify(args, &identity, &out)
}

/// Formats every series into `out/<group>/`, as `identity`.
pub fn write(args: &KernelArgs, identity: &Identity, out: &Path) -> Result<()> {
    let patches = kernel::series()?;
    let tree = kernel::scratch_tree(args, "posting")?;
    for patch in &patches {
        kernel::git_am(&tree, patch)?;
    }
    let commits: Vec<String> = output(Command::new("git").arg("-C").arg(&tree).args([
        "rev-list",
        "--reverse",
        &format!("{BASE_TAG}..HEAD"),
    ]))?
    .lines()
    .map(str::to_string)
    .collect();
    if out.exists() {
        std::fs::remove_dir_all(out)?;
    }
    let mut first = 0;
    for (group, n) in series_groups()? {
        let range_start = if first == 0 {
            BASE_TAG.to_string()
        } else {
            commits[first - 1].clone()
        };
        let last = commits[first + n - 1].clone();
        let dir = out.join(&group);
        let cover = patches_dir().join(&group).join("0000-cover-letter.patch");
        let prefix = subject_prefix(&cover)?;
        let (to, cc) = recipients(&tree, &patches[first..first + n])?;
        let mut cmd = Command::new("git");
        cmd.arg("-C")
            .arg(&tree)
            .args(["format-patch", "-q", "--numbered", "--cover-letter"])
            .arg(format!("--subject-prefix={prefix}"))
            .arg(format!("--base={BASE_TAG}"))
            .arg("-o")
            .arg(&dir);
        for address in &to {
            cmd.arg(format!("--to={address}"));
        }
        for address in &cc {
            cmd.arg(format!("--cc={address}"));
        }
        run_quiet(cmd.arg(format!("{range_start}..{last}")))?;
        let generated = dir.join("0000-cover-letter.patch");
        let cover_text = std::fs::read_to_string(&cover)
            .with_context(|| format!("{} has no cover letter", group))?;
        let merged = with_generated_headers(&cover_text, &std::fs::read_to_string(&generated)?)?;
        std::fs::write(&generated, merged)?;
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            let text = std::fs::read_to_string(&path)?;
            let signed = as_poster(&text, identity);
            if signed.contains(MARKER) {
                bail!("{} still names the marker after export", path.display());
            }
            std::fs::write(&path, signed)?;
        }
        step(format!(
            "{group}: {n} patches and a cover letter, to {} and {} Cc, in {}",
            to.len(),
            cc.len(),
            dir.display()
        ));
        first += n;
    }
    Ok(())
}

/// Checks `out` as a receiver would: each series applies with `git am` on
/// the pristine tree in order, every commit is authored by `identity`, and
/// every cover letter has recipients and a `base-commit:`.
pub fn verify(args: &KernelArgs, identity: &Identity, out: &Path) -> Result<()> {
    let tree = kernel::scratch_tree(args, "posting-check")?;
    let mut applied = 0;
    for (group, _) in series_groups()? {
        let dir = out.join(&group);
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)?
            .map(|e| e.map(|e| e.path()))
            .collect::<std::io::Result<_>>()?;
        files.sort();
        let (cover, patches) = files.split_first().context("an empty series")?;
        let cover_text = std::fs::read_to_string(cover)?;
        for needed in ["\nTo: ", "\nCc: ", "\nbase-commit: "] {
            if !cover_text.contains(needed) {
                bail!("{} lacks `{}`", cover.display(), needed.trim());
            }
        }
        for patch in patches {
            kernel::git_am(&tree, patch)?;
            applied += 1;
        }
    }
    let authors = output(Command::new("git").arg("-C").arg(&tree).args([
        "log",
        "--format=%an <%ae>",
        &format!("{BASE_TAG}..HEAD"),
    ]))?;
    let others: Vec<&str> = authors.lines().filter(|a| *a != identity.line()).collect();
    if authors.lines().count() != applied || !others.is_empty() {
        bail!(
            "the exported series applies as {} commits, {} not by {}: {others:?}",
            authors.lines().count(),
            others.len(),
            identity.line()
        );
    }
    step(format!(
        "{applied} patches apply with git am on the pristine tree, each by {}",
        identity.line()
    ));
    Ok(())
}

/// To: the maintainers get_maintainer.pl names for the files `patches`
/// touch; Cc: its reviewers and lists, and [`extra_lists`]. A new system
/// call's number in every architecture's table goes to linux-arch rather
/// than to each architecture's maintainers, as new calls are posted.
fn recipients(tree: &Path, patches: &[PathBuf]) -> Result<(Vec<String>, Vec<String>)> {
    let mut to = BTreeSet::new();
    let mut cc = BTreeSet::new();
    let mut touched = Vec::new();
    for patch in patches {
        touched.extend(touched_files(&std::fs::read_to_string(patch)?));
    }
    let mut files = BTreeSet::new();
    for file in &touched {
        if is_syscall_table(file) {
            cc.insert("linux-arch@vger.kernel.org".to_string());
        } else {
            files.insert(file.clone());
        }
    }
    if files.is_empty() {
        bail!("the patches touch no file but the syscall tables");
    }
    let report = output(
        Command::new("perl")
            .current_dir(tree)
            .args([
                "scripts/get_maintainer.pl",
                "--no-git",
                "--no-git-fallback",
                "--no-multiline",
                "--separator",
                "\n",
                "-f",
            ])
            .args(&files),
    )
    .context("scripts/get_maintainer.pl")?;
    for line in report.lines() {
        // `"Name (Company)" <address> (role:SECTION)`: the role is the
        // last parenthesis.
        let (address, role) = match line.rsplit_once(" (") {
            Some((address, role)) => (address.trim(), role),
            None => (line.trim(), ""),
        };
        if address.is_empty() {
            continue;
        }
        if role.starts_with("maintainer:") {
            to.insert(address.to_string());
        } else {
            cc.insert(address.to_string());
        }
    }
    cc.extend(extra_lists(&touched).into_iter().map(str::to_string));
    let cc = cc.into_iter().filter(|a| !to.contains(a)).collect();
    Ok((to.into_iter().collect(), cc))
}

/// The files a patch's `diff --git a/X b/X` lines name.
fn touched_files(patch: &str) -> Vec<String> {
    patch
        .lines()
        .filter_map(|l| l.strip_prefix("diff --git a/"))
        .filter_map(|rest| rest.split_once(" b/").map(|(_, b)| b.to_string()))
        .collect()
}

/// An architecture's system call table (or the generic one), which every
/// new system call touches.
fn is_syscall_table(file: &str) -> bool {
    let name = file.rsplit('/').next().unwrap_or(file);
    (file.starts_with("arch/") && name.starts_with("syscall") && name.ends_with(".tbl"))
        || file == "scripts/syscall.tbl"
        || file == "include/uapi/asm-generic/unistd.h"
}

/// The hand-written cover letter with the generated one's address headers
/// and subject, and its `base-commit:` and `prerequisite-patch-id:` lines
/// before the signature.
fn with_generated_headers(cover: &str, generated: &str) -> Result<String> {
    let Some((cover_head, cover_body)) = cover.split_once("\n\n") else {
        bail!("the cover letter has no blank line after its headers");
    };
    let Some((generated_head, generated_body)) = generated.split_once("\n\n") else {
        bail!("git format-patch wrote a cover letter without headers");
    };
    let subject = cover_head
        .lines()
        .skip_while(|l| !l.starts_with("Subject: "))
        .take_while(|l| l.starts_with("Subject: ") || l.starts_with(' '))
        .collect::<Vec<_>>()
        .join("\n");
    let mut head = Vec::new();
    let mut in_subject = false;
    for line in generated_head.lines() {
        if line.starts_with("Subject: ") {
            // The generated subject is "*** SUBJECT HERE ***" with the
            // right prefix and numbering; the hand-written one is kept.
            head.push(subject.clone());
            in_subject = true;
            continue;
        }
        if in_subject && line.starts_with(' ') {
            continue;
        }
        in_subject = false;
        head.push(line.to_string());
    }
    let base: Vec<&str> = generated_body
        .lines()
        .filter(|l| l.starts_with("base-commit: ") || l.starts_with("prerequisite-patch-id: "))
        .collect();
    if base.is_empty() {
        bail!("git format-patch --base wrote no base-commit");
    }
    let (text, signature) = match cover_body.rsplit_once("\n-- \n") {
        Some((text, signature)) => (text, format!("\n-- \n{signature}")),
        None => (cover_body, String::new()),
    };
    Ok(format!(
        "{}\n\n{}\n\n{}\n{signature}",
        head.join("\n"),
        text.trim_end(),
        base.join("\n")
    ))
}

/// `text` with the marker replaced by `identity` where a poster's name
/// goes: the `From:` header and the `Signed-off-by:` trailers.
fn as_poster(text: &str, identity: &Identity) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        if line.starts_with("From: ") || line.starts_with("Signed-off-by: ") {
            out.push_str(&line.replace(MARKER, &identity.line()));
        } else {
            out.push_str(line);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identity(name: &str, email: &str) -> Identity {
        Identity {
            name: name.to_string(),
            email: email.to_string(),
        }
    }

    #[test]
    fn syscall_tables_are_told_apart() {
        let patch = "diff --git a/arch/x86/entry/syscalls/syscall_64.tbl b/arch/x86/entry/syscalls/syscall_64.tbl\n\
                     diff --git a/kernel/pid.c b/kernel/pid.c\n\
                     diff --git a/scripts/syscall.tbl b/scripts/syscall.tbl\n";
        let files = touched_files(patch);
        assert_eq!(files.len(), 3);
        let tables: Vec<_> = files.iter().filter(|f| is_syscall_table(f)).collect();
        assert_eq!(
            tables,
            [
                "arch/x86/entry/syscalls/syscall_64.tbl",
                "scripts/syscall.tbl"
            ]
        );
        assert!(is_syscall_table("arch/alpha/kernel/syscalls/syscall.tbl"));
        assert!(!is_syscall_table("arch/x86/kernel/process.c"));
    }

    #[test]
    fn lists_follow_what_a_series_touches() {
        let files = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(extra_lists(&files(&["kernel/pid.c", "lib/xarray.c"])).is_empty());
        assert_eq!(
            extra_lists(&files(&["fs/proc/base.c", "include/uapi/linux/pidmap.h"])),
            ["linux-api@vger.kernel.org"]
        );
        let lsm = extra_lists(&files(&["security/security.c"]));
        assert!(lsm.contains(&"apparmor@lists.ubuntu.com"));
        assert!(!lsm.contains(&"linux-api@vger.kernel.org"));
    }

    #[test]
    fn placeholders_and_reserved_domains_are_refused() {
        for (name, email) in [
            ("", "dev@kernel.org"),
            ("Dev", ""),
            ("Your Name", "you@example.org"),
            ("A U Thor", "author@example.com"),
            ("Dev", "dev@sub.example.net"),
            ("Dev", "dev@machine.example"),
            ("Dev", "dev@host.invalid"),
            ("Dev", "dev@localhost"),
        ] {
            assert!(
                identity(name, email).check().is_err(),
                "{name} <{email}> accepted"
            );
        }
        assert!(identity("Jane Doe", "jane@kernel.org").check().is_ok());
        assert!(identity("Jane Doe", "jane@examples.org").check().is_ok());
    }

    #[test]
    fn only_from_and_signed_off_by_take_the_poster() {
        let text = format!(
            "From: {MARKER}\nSubject: x\n\nbody mentions {MARKER}\n\nSigned-off-by: {MARKER}\n"
        );
        let out = as_poster(&text, &identity("Jane Doe", "jane@kernel.org"));
        assert_eq!(
            out,
            format!(
                "From: Jane Doe <jane@kernel.org>\nSubject: x\n\nbody mentions {MARKER}\n\n\
                 Signed-off-by: Jane Doe <jane@kernel.org>\n"
            )
        );
    }

    #[test]
    fn the_cover_letter_gets_addresses_and_base_but_keeps_its_text() {
        let cover = "From 0 Mon Sep 17 00:00:00 2001\nFrom: M\nDate: d\n\
                     Subject: [RFC PATCH 0/2] pidmap: list\n tasks\n\nWhy.\n\n-- \n2.47.3\n";
        let generated = "From 0 Mon Sep 17 00:00:00 2001\nFrom: M\nDate: e\n\
                         Subject: [RFC PATCH 0/2] *** SUBJECT HERE ***\nTo: a@b\nCc: c@d\n\n\
                         *** BLURB HERE ***\n\nbase-commit: 1234\nprerequisite-patch-id: 5678\n\
                         -- \n2.47.3\n";
        let merged = with_generated_headers(cover, generated).unwrap();
        assert_eq!(
            merged,
            "From 0 Mon Sep 17 00:00:00 2001\nFrom: M\nDate: e\n\
             Subject: [RFC PATCH 0/2] pidmap: list\n tasks\nTo: a@b\nCc: c@d\n\n\
             Why.\n\nbase-commit: 1234\nprerequisite-patch-id: 5678\n\n-- \n2.47.3\n"
        );
        assert!(with_generated_headers(cover, "From: M\n\nno base\n").is_err());
    }
}

#[cfg(test)]
mod subject_prefix_tests {
    use super::prefix_of_cover_subject;

    #[test]
    fn the_cover_letter_version_goes_on_every_patch() {
        let cover = "From 0 Mon\nSubject: [PATCH v4 0/6] pidmap(2): list tasks\n\nbody\n";
        assert_eq!(prefix_of_cover_subject(cover), "PATCH v4");
    }

    #[test]
    fn no_version_or_no_subject_is_plain_patch() {
        assert_eq!(prefix_of_cover_subject("Subject: [PATCH 0/2] x\n"), "PATCH");
        assert_eq!(
            prefix_of_cover_subject("Subject: [PATCH vx 0/2] x\n"),
            "PATCH"
        );
        assert_eq!(prefix_of_cover_subject("no subject\n"), "PATCH");
    }

    #[test]
    fn an_rfc_stays_an_rfc() {
        assert_eq!(
            prefix_of_cover_subject("Subject: [RFC PATCH 0/7] pidmap\n"),
            "RFC PATCH"
        );
        assert_eq!(
            prefix_of_cover_subject("Subject: [RFC PATCH v2 0/7] pidmap\n"),
            "RFC PATCH v2"
        );
    }
}
