//! The declared `rust-version`s are the real minimums given the locked
//! dependencies: each equals the highest of (a) what the crate's own code
//! needs (stated here, and checked by clippy's `incompatible_msrv` against
//! the declared value) and (b) every locked dependency's own declared
//! `rust-version`, over the crate's normal dependency closure. The tests'
//! minimum (dev-dependencies included) is checked against the README.
//!
//! Only one toolchain can be installed on the build machine, so the crates
//! are not also compiled with the old compiler; this is the check that
//! can run.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

use serde_json::Value;

type Version = (u64, u64);

fn parse(v: &str) -> Version {
    let mut it = v.split('.').map(|p| p.parse::<u64>().unwrap());
    (it.next().unwrap(), it.next().unwrap_or(0))
}

/// The target triple the tests run on (`rustc -vV`'s `host:` line).
fn host_target() -> String {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let out = Command::new(rustc).arg("-vV").output().expect("rustc -vV");
    assert!(out.status.success(), "rustc -vV failed");
    String::from_utf8(out.stdout)
        .expect("rustc -vV is UTF-8")
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .expect("rustc -vV names the host")
        .to_owned()
}

/// The locked dependency graph for the host target only.
///
/// `--offline` must work on a machine whose cargo cache holds only what a
/// build of this workspace downloaded, and a build downloads no crate of
/// another platform (windows-sys and friends): so the graph is filtered to
/// the platform the crates are built for here. They are Linux-only crates,
/// so no other platform's closure can raise their minimum.
fn metadata() -> Value {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let target = host_target();
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--locked", "--offline"])
        .args(["--filter-platform", &target])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The highest declared rust-version over `root`'s dependency closure
/// (normal dependencies only, or also dev-dependencies of `root` itself),
/// and which package declares it.
fn closure_max(m: &Value, root: &str, with_dev: bool) -> (Version, String) {
    let pkgs: BTreeMap<&str, &Value> = m["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["id"].as_str().unwrap(), p))
        .collect();
    let nodes: BTreeMap<&str, &Value> = m["resolve"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n["id"].as_str().unwrap(), n))
        .collect();
    let root_id = pkgs
        .iter()
        .find(|(_, p)| p["name"] == root && p["source"].is_null())
        .map(|(id, _)| *id)
        .unwrap();
    let mut seen = BTreeSet::new();
    let mut todo = vec![(root_id, true)];
    let mut best = ((0, 0), String::new());
    while let Some((id, is_root)) = todo.pop() {
        if !seen.insert(id) {
            continue;
        }
        for dep in nodes[id]["deps"].as_array().unwrap() {
            let kinds = dep["dep_kinds"].as_array().unwrap();
            let follow = kinds
                .iter()
                .any(|k| k["kind"].is_null() || (with_dev && is_root && k["kind"] == "dev"));
            if follow {
                todo.push((dep["pkg"].as_str().unwrap(), false));
            }
        }
        if !is_root {
            if let Some(rv) = pkgs[id]["rust_version"].as_str() {
                let v = parse(rv);
                if v > best.0 {
                    best = (v, format!("{} {}", pkgs[id]["name"], pkgs[id]["version"]));
                }
            }
        }
    }
    best
}

fn declared(m: &Value, name: &str) -> Version {
    let p = m["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name && p["source"].is_null())
        .unwrap();
    parse(p["rust_version"].as_str().expect("rust-version declared"))
}

#[test]
fn declared_rust_versions_are_the_real_minimums() {
    let m = metadata();
    // What each crate's own code needs: pidmap uses C-string literals and
    // offset_of! (1.77); the CLI uses <[u8]>::utf8_chunks (1.79) and
    // #[allow(..., reason = "...")] (1.81).
    let own: [(&str, Version); 2] = [("pidmap", (1, 77)), ("pidmap-cli", (1, 81))];
    for (name, own) in own {
        let (deps, who) = closure_max(&m, name, false);
        let want = own.max(deps);
        assert_eq!(
            declared(&m, name),
            want,
            "{name}: own code needs {own:?}, dependencies {deps:?} ({who})"
        );
    }
    // The README's minimum for the library's tests and benches.
    let (tests, who) = closure_max(&m, "pidmap", true);
    assert_eq!(
        tests.max((1, 77)),
        (1, 85),
        "pidmap's tests need {tests:?} ({who})"
    );
}
