//! Extracts, for the unit test in src/sys.rs, the uapi header of the kernel
//! series (the `+` lines of every hunk of kernel-patches/*.patch that touch
//! include/uapi/linux/pidmap.h, in `series` order), the syscall-table lines
//! the series adds (each after the table's path and a tab), and the header
//! blocks of docs/ABI.md (the uapi header and the task records' layout). Outside the
//! repository (no kernel-patches/), the files are empty and that test fails
//! saying so; nothing else uses them.

use std::fs;
use std::path::{Path, PathBuf};

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets it"));
    let root = manifest.join("../..");
    // An override, to check a series elsewhere (another worktree).
    println!("cargo:rerun-if-env-changed=PIDMAP_KERNEL_PATCHES");
    let patches = std::env::var_os("PIDMAP_KERNEL_PATCHES")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("kernel-patches"));
    println!("cargo:rerun-if-changed={}", patches.display());
    println!(
        "cargo:rerun-if-changed={}",
        root.join("docs/ABI.md").display()
    );

    let mut header = String::new();
    let mut table = String::new();
    for patch in series(&patches) {
        println!("cargo:rerun-if-changed={}", patch.display());
        let text = fs::read_to_string(&patch).unwrap_or_default();
        let mut in_header = false;
        let mut file = "";
        for line in text.lines() {
            if let Some(f) = line.strip_prefix("+++ ") {
                file = f.trim_end().strip_prefix("b/").unwrap_or(f);
                in_header = file == "include/uapi/linux/pidmap.h";
                continue;
            }
            if line.starts_with("diff --git ") {
                in_header = false;
                continue;
            }
            let Some(added) = line.strip_prefix('+') else {
                continue;
            };
            if in_header {
                header.push_str(added);
                header.push('\n');
            }
            let words: Vec<&str> = added.split_whitespace().collect();
            if words.len() >= 3
                && words[0].bytes().all(|b| b.is_ascii_digit())
                && (words[2] == "pidmap" || words[2] == "fdmap")
            {
                table.push_str(file);
                table.push('\t');
                table.push_str(added);
                table.push('\n');
            }
        }
    }
    write(&out.join("uapi_from_patch.h"), &header);
    write(&out.join("uapi_syscall_tables.txt"), &table);

    let doc = fs::read_to_string(root.join("docs/ABI.md")).unwrap_or_default();
    write(&out.join("uapi_from_abi_doc.h"), &abi_doc_header(&doc));
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

/// The fenced C blocks of docs/ABI.md that follow the
/// `include/uapi/linux/pidmap.h` heading and the task records' `### Layout`
/// heading, in that order.
fn abi_doc_header(doc: &str) -> String {
    let mut header = c_block_after(doc, "## `include/uapi/linux/pidmap.h`");
    if let Some(records) = doc.find("## Task records") {
        header.push_str(&c_block_after(&doc[records..], "### Layout"));
    }
    header
}

/// The first fenced C block after `heading`, or nothing.
fn c_block_after(doc: &str, heading: &str) -> String {
    let Some(at) = doc.find(heading) else {
        return String::new();
    };
    let rest = &doc[at..];
    let Some(open) = rest.find("```c\n") else {
        return String::new();
    };
    let body = &rest[open + 5..];
    body[..body.find("```").unwrap_or(body.len())].to_string()
}

fn write(path: &Path, text: &str) {
    if fs::read_to_string(path).ok().as_deref() != Some(text) {
        fs::write(path, text).expect("writing to OUT_DIR");
    }
}
