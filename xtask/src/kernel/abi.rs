//! `cargo xtask abi`: the ABI of the series, taken from the series itself
//! into one folder, `crates/pidmap/abi/` (the crate packages it):
//!
//! - every uapi header the series creates (`include/uapi/linux/pidmap.h`,
//!   `fdmap.h`), as the series' patches leave it, at its path below
//!   `include/uapi/` (`abi/linux/pidmap.h`), so a C program built with
//!   `-I crates/pidmap/abi` includes `<linux/pidmap.h>` as it would from
//!   the patched kernel's headers;
//! - `syscall-numbers.tbl`: every syscall-table line the series adds, as
//!   `path<TAB>number<TAB>call`.
//!
//! The headers come out of the `.patch` files with `git apply --include`
//! in an empty scratch folder, patch by patch in `series` order: no kernel
//! tree is needed. The guest tests and the bench compile against the
//! folder; the crate checks its Rust structs against it; and a test here
//! checks that the committed folder is what the series gives.

use crate::kernel;
use crate::paths::workspace_root;
use crate::run::{run_quiet, step};
use anyhow::{bail, Context, Result};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(clap::Args)]
pub struct AbiArgs {
    /// Write nothing: fail, naming the files, if the folder is not what
    /// the series gives.
    #[arg(long)]
    check: bool,
}

/// The folder, from the workspace root.
const DIR: &str = "crates/pidmap/abi";

/// The folder.
pub fn dir() -> PathBuf {
    workspace_root().join(DIR)
}

/// The syscall-table listing's name in the folder.
const TABLE: &str = "syscall-numbers.tbl";

/// Where the series' uapi headers live in the kernel tree.
const UAPI: &str = "include/uapi/";

/// The calls the series adds to the syscall tables.
const CALLS: [&str; 3] = ["pidmap", "pidmap_info", "fdmap"];

const TABLE_HEADER: &str = "\
# Written by `cargo xtask abi` from kernel-patches/: every line the series
# adds to a syscall table, as path, number, call. MIPS tables number
# relative to a per-ABI base (o32 4000, n64 5000, n32 6000).
";

pub fn run(args: &AbiArgs) -> Result<()> {
    let want = from_series(&kernel::series()?)?;
    let differ = differences(&dir(), &want)?;
    if differ.is_empty() {
        step(format!(
            "{DIR}: the series' ABI ({} files), unchanged",
            want.len()
        ));
        return Ok(());
    }
    if args.check {
        bail!(
            "{DIR} is not what the series gives ({}): run `cargo xtask abi`",
            differ.join(", ")
        );
    }
    write(&dir(), &want)?;
    step(format!(
        "{DIR}: written from the series ({})",
        differ.join(", ")
    ));
    Ok(())
}

/// The folder's files (relative path, text) as `patches` leave them.
pub fn from_series(patches: &[PathBuf]) -> Result<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    let headers = created_uapi_headers(patches)?;
    if !headers.is_empty() {
        let scratch = Scratch::new()?;
        for patch in patches {
            let mut apply = Command::new("git");
            apply
                .arg("apply")
                .args(headers.iter().map(|h| format!("--include={h}")))
                .arg(patch)
                .current_dir(&scratch.0)
                // An empty folder, not a repository: git must not look
                // above it for one.
                .env("GIT_CEILING_DIRECTORIES", std::env::temp_dir());
            run_quiet(&mut apply)
                .with_context(|| format!("the uapi hunks of {} do not apply", patch.display()))?;
        }
        for header in &headers {
            let path = scratch.0.join(header);
            let text = fs::read_to_string(&path)
                .with_context(|| format!("the series leaves no {header}"))?;
            let rel = header.strip_prefix(UAPI).expect("a uapi header");
            out.insert(rel.to_string(), text);
        }
    }
    out.insert(TABLE.to_string(), table(patches)?);
    Ok(out)
}

/// The files below `include/uapi/` that a patch of the series creates.
fn created_uapi_headers(patches: &[PathBuf]) -> Result<Vec<String>> {
    let mut headers = Vec::new();
    for patch in patches {
        let text = read(patch)?;
        let mut file: Option<&str> = None;
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("diff --git a/") {
                file = rest.split(" b/").next();
            } else if line.starts_with("new file mode") {
                if let Some(f) = file.filter(|f| f.starts_with(UAPI)) {
                    headers.push(f.to_string());
                }
            } else if line.starts_with("deleted file mode") {
                if let Some(f) = file.filter(|f| headers.iter().any(|h| h == f)) {
                    bail!("{} deletes {f}, which the series created", patch.display());
                }
            }
        }
    }
    Ok(headers)
}

/// The syscall-table lines the series adds, sorted by table and number.
fn table(patches: &[PathBuf]) -> Result<String> {
    let mut lines = Vec::new();
    for patch in patches {
        let text = read(patch)?;
        let mut file = "";
        for line in text.lines() {
            if let Some(f) = line.strip_prefix("+++ ") {
                file = f.trim_end().strip_prefix("b/").unwrap_or(f);
                continue;
            }
            let Some(added) = line.strip_prefix('+') else {
                continue;
            };
            // `NR ABI NAME ENTRY...`, in a file called *.tbl.
            let words: Vec<&str> = added.split_whitespace().collect();
            if !file.ends_with(".tbl") || words.len() < 3 || !CALLS.contains(&words[2]) {
                continue;
            }
            let nr: u32 = words[0]
                .parse()
                .with_context(|| format!("{}: {file}: `{added}`", patch.display()))?;
            lines.push((file.to_string(), nr, words[2].to_string()));
        }
    }
    lines.sort();
    let mut out = String::from(TABLE_HEADER);
    for (file, nr, call) in lines {
        out.push_str(&format!("{file}\t{nr}\t{call}\n"));
    }
    Ok(out)
}

fn read(path: &Path) -> Result<String> {
    fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))
}

/// Every file of `dir`, recursively, as (relative path, text).
fn files(dir: &Path) -> Result<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        let Ok(entries) = fs::read_dir(&d) else {
            continue;
        };
        for entry in entries {
            let path = entry?.path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                let rel = path.strip_prefix(dir)?.to_string_lossy().into_owned();
                out.insert(rel, fs::read_to_string(&path).unwrap_or_default());
            }
        }
    }
    Ok(out)
}

/// What differs between `dir` and `want`: "X differs", "X missing",
/// "X is not the series'".
fn differences(dir: &Path, want: &BTreeMap<String, String>) -> Result<Vec<String>> {
    let have = files(dir)?;
    let mut out = Vec::new();
    for (name, text) in want {
        match have.get(name) {
            None => out.push(format!("{name} missing")),
            Some(t) if t != text => out.push(format!("{name} differs")),
            Some(_) => {}
        }
    }
    for name in have.keys().filter(|n| !want.contains_key(*n)) {
        out.push(format!("{name} is not the series'"));
    }
    Ok(out)
}

/// Makes `dir` hold exactly `want`.
fn write(dir: &Path, want: &BTreeMap<String, String>) -> Result<()> {
    for name in files(dir)?.keys().filter(|n| !want.contains_key(*n)) {
        fs::remove_file(dir.join(name))?;
    }
    for (name, text) in want {
        let path = dir.join(name);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)?;
        }
        fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

/// An empty folder below the system's temporary one, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Result<Scratch> {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "xtask-abi-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        if dir.exists() {
            fs::remove_dir_all(&dir)?;
        }
        fs::create_dir_all(&dir)?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The committed folder is what the series gives; `cargo xtask abi`
    /// rewrites it.
    #[test]
    fn the_abi_folder_is_the_series() {
        let want = from_series(&kernel::series().unwrap()).unwrap();
        for name in ["linux/pidmap.h", "linux/fdmap.h", TABLE] {
            assert!(want.contains_key(name), "the series gives no {name}");
        }
        let differ = differences(&dir(), &want).unwrap();
        assert!(
            differ.is_empty(),
            "{DIR} is not what kernel-patches/ gives ({}): run `cargo xtask abi`",
            differ.join(", ")
        );
    }

    /// A header created by one patch and changed by a later one comes out
    /// as the later one leaves it; files outside include/uapi/ and table
    /// lines of other calls stay out.
    #[test]
    fn a_header_is_taken_as_the_last_patch_leaves_it() {
        let dir = Scratch::new().unwrap();
        let create = "\
diff --git a/include/uapi/linux/demo.h b/include/uapi/linux/demo.h
new file mode 100644
index 0000000..1111111
--- /dev/null
+++ b/include/uapi/linux/demo.h
@@ -0,0 +1,3 @@
+#define DEMO_A 1
+#define DEMO_B 2
+#define DEMO_C 3
diff --git a/kernel/demo.c b/kernel/demo.c
new file mode 100644
index 0000000..2222222
--- /dev/null
+++ b/kernel/demo.c
@@ -0,0 +1 @@
+int demo;
diff --git a/arch/x86/entry/syscalls/syscall_64.tbl b/arch/x86/entry/syscalls/syscall_64.tbl
index 3333333..4444444 100644
--- a/arch/x86/entry/syscalls/syscall_64.tbl
+++ b/arch/x86/entry/syscalls/syscall_64.tbl
@@ -1,1 +1,3 @@
 472\tcommon\tother\t\t\tsys_other
+473\tcommon\tpidmap\t\t\tsys_pidmap
+476\tcommon\tsomething\t\tsys_something
";
        let change = "\
diff --git a/include/uapi/linux/demo.h b/include/uapi/linux/demo.h
index 1111111..5555555 100644
--- a/include/uapi/linux/demo.h
+++ b/include/uapi/linux/demo.h
@@ -1,3 +1,3 @@
 #define DEMO_A 1
-#define DEMO_B 2
+#define DEMO_B 20
 #define DEMO_C 3
";
        let first = dir.0.join("0001.patch");
        let second = dir.0.join("0002.patch");
        fs::write(&first, create).unwrap();
        fs::write(&second, change).unwrap();
        let got = from_series(&[first.clone(), second]).unwrap();
        assert_eq!(
            got.keys().collect::<Vec<_>>(),
            ["linux/demo.h", TABLE],
            "only the uapi header and the table"
        );
        assert_eq!(
            got["linux/demo.h"],
            "#define DEMO_A 1\n#define DEMO_B 20\n#define DEMO_C 3\n"
        );
        assert_eq!(
            got[TABLE],
            format!("{TABLE_HEADER}arch/x86/entry/syscalls/syscall_64.tbl\t473\tpidmap\n")
        );
        // A change that does not fit the header is an error, not a skip.
        let bad = dir.0.join("0003.patch");
        fs::write(
            &bad,
            change.replace(" #define DEMO_C 3", " #define DEMO_C 4"),
        )
        .unwrap();
        assert!(from_series(&[first, bad]).is_err());
    }

    /// `differences` names a changed, a missing and an extra file.
    #[test]
    fn differences_name_every_file_that_is_not_the_series() {
        let dir = Scratch::new().unwrap();
        let want: BTreeMap<String, String> = [("a.h", "A\n"), ("linux/b.h", "B\n")]
            .into_iter()
            .map(|(n, t)| (n.to_string(), t.to_string()))
            .collect();
        write(&dir.0, &want).unwrap();
        assert!(differences(&dir.0, &want).unwrap().is_empty());
        fs::write(dir.0.join("a.h"), "changed\n").unwrap();
        fs::write(dir.0.join("extra.h"), "\n").unwrap();
        fs::remove_file(dir.0.join("linux/b.h")).unwrap();
        assert_eq!(
            differences(&dir.0, &want).unwrap(),
            [
                "a.h differs",
                "linux/b.h missing",
                "extra.h is not the series'"
            ]
        );
        write(&dir.0, &want).unwrap();
        assert!(differences(&dir.0, &want).unwrap().is_empty());
    }
}
