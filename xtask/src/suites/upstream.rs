//! `cargo xtask upstream-selftests`: the kernel's own proc, pidfd, clone3,
//! pid_namespace and namespaces selftests on the unpatched and the patched
//! kernel.
//!
//! The series changes `/proc` readdir and `kernel/pid.c`, so suites that
//! upstream wrote for those must behave the same on both kernels. With
//! `--debug` the same programs, less [`LEFT_OUT_ON_DEBUG`], boot a third
//! time, on the patched debug kernel (lockdep, PROVE_RCU, KASAN), judged
//! against the unpatched run. The programs are built once, static, from the
//! patched tree (so the tests that series A adds to these suites run on the
//! unpatched kernel too), and the same binaries boot on every kernel. The
//! stage fails on:
//! - any program or TAP subtest whose result differs between the kernels;
//! - a program that does not pass on both and is not in [`KNOWN`] with the
//!   reason (so the list cannot hide a new failure);
//! - a splat in either kernel's log, a guest that died, or a result that
//!   never reached the console.

use crate::arch::Arch;
use crate::deps;
use crate::guest::qemu::{self, Outcome};
use crate::guest::{is_elf_executable, Stage};
use crate::kernel::KernelArgs;
use crate::kernel::{self, Kernel};
use crate::paths::xtask_dir;
use crate::run::{run_quiet, step, timed, with_ccache};
use anyhow::{bail, Context, Result};
use clap::Args;
use std::collections::BTreeMap;
use std::fs;
use std::path::PathBuf;
use std::process::Command;

/// The upstream selftest directories that exercise what the series touches.
pub const SUITES: &[&str] = &["proc", "pidfd", "clone3", "pid_namespace", "namespaces"];

/// Programs that do not pass on either kernel, for a reason outside the
/// series, with that reason. Printed by every run.
pub const KNOWN: &[(&str, &str)] = &[
    (
        "pidfd/pidfd_file_handle_test",
        "pidfd file handles need CONFIG_FHANDLE, which the minimal guest \
         kernel leaves out",
    ),
    (
        "pidfd/pidfd_info_test",
        "thread_group_exec and its siblings exec \"pidfd_exec_helper\" by a \
         relative path, and the guest runs every program from /, so the exec \
         fails and the poller's wait reports it",
    ),
    (
        "namespaces/file_handle_test",
        "name_to_handle_at() on nsfs needs CONFIG_FHANDLE, which the minimal \
         guest kernel leaves out: every subtest fails at its first call",
    ),
    (
        "namespaces/ns_active_ref_test",
        "it identifies namespaces by nsfs file handles (name_to_handle_at(), \
         CONFIG_FHANDLE, left out of the guest kernel)",
    ),
    (
        "namespaces/siocgskns_test",
        "SIOCGSKNS needs an AF_INET socket, and the guest kernel has no \
         CONFIG_INET (socket() fails with EAFNOSUPPORT)",
    ),
];

/// Programs left out of the comparison, with the reason: a result that
/// changes between boots of the same kernel would make any comparison
/// fail by chance.
pub const LEFT_OUT: &[(&str, &str)] = &[
    (
        "pidfd/pidfd_exec_helper",
        "not a test: the helper pidfd_info_test execs (the suite's \
         TEST_GEN_PROGS_EXTENDED); run alone it pause()s until the timeout",
    ),
    (
        "namespaces/stress_test",
        "rapid_namespace_creation_destruction counts the active user namespaces \
         right after destroying 100, before their teardown (which finishes \
         asynchronously) is done: under TCG it failed 1 of 2 runs on the same \
         patched kernel",
    ),
    (
        "pidfd/pidfd_autoreap_test",
        "autokill_without_nnp_with_cap asks PIDFD_GET_INFO for the exit info as \
         soon as poll() says the autoreaped child exited, which can be before \
         the child is released and its exit info published: it failed so on \
         the unpatched 7.3 kernel under TCG",
    ),
];

/// Programs left out of the debug kernel's boot only, with the reason. They
/// still run, and are judged, on the unpatched and the patched kernel.
pub const LEFT_OUT_ON_DEBUG: &[(&str, &str)] = &[(
    "pidfd/pidfd_test",
    "nearly all its time is the recycled-pid case, which skips on every \
     7.3 kernel after 32,769 forks (see PID_MAX): 915 of the debug boot's \
     1,330 s on 2026-12-04. The debug kernel still wraps the pid allocator \
     under KASAN and lockdep, in pidfd_poll_test's 10,000 forks",
)];

/// Per-program time limit in the guest. The slowest programs fork in a
/// loop (pidfd_poll_test 10,000 times, pidfd_test 32,769 times): 20 and
/// 92 s under TCG on a loaded 2-core host (2026-12-04). The debug kernel
/// (KASAN, lockdep) forks about 10 times slower: pidfd_poll_test took
/// 232 s there, so it gets 1500 s, as its whole boot gets 3600 s instead
/// of 1800 s.
fn test_timeout_secs(run: Run) -> u32 {
    if run == Run::PatchedDebug {
        1500
    } else {
        600
    }
}

/// pid_max for these boots, so that the fork loops wrap the cyclic pid
/// allocation (from RESERVED_PIDS, 300, after the wrap) that the series
/// reimplements: pidfd_poll_test's 10,000 forks wrap it about 8 times, and
/// pidfd_test's 32,769 about 26 times.
///
/// pidfd_test's recycled-pid case cannot use it: the case forks in a pid
/// namespace of its own, and 7.3 starts every new namespace at
/// PID_MAX_LIMIT, so its pids never come back to 1000 and it skips after
/// 32,769 forks, on every kernel.
const PID_MAX: u32 = 1536;

#[derive(Args, Clone)]
pub struct UpstreamArgs {
    /// Use this Linux 7.3 source tree instead of Debian's linux-source-7.3 tarball.
    #[arg(long, value_name = "DIR")]
    pub kernel_src: Option<PathBuf>,
    /// Also boot the patched debug kernel and judge it against the unpatched one.
    #[arg(long)]
    pub debug: bool,
}

/// The kernels the programs boot on, the unpatched one first.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Run {
    Unpatched,
    Patched,
    PatchedDebug,
}

fn kernel_args(args: &UpstreamArgs, run: Run) -> KernelArgs {
    KernelArgs {
        arch: Arch::X86_64,
        debug: run == Run::PatchedDebug,
        unpatched: run == Run::Unpatched,
        bpf: false,
        kernel_src: args.kernel_src.clone(),
        // KASAN and lockdep make the fork-heavy programs several times slower.
        timeout: if run == Run::PatchedDebug { 3600 } else { 1800 },
        memory: 2048,
        cpus: None,
    }
}

/// What one program did: its verdict and its TAP lines by test number.
#[derive(Clone, Debug, PartialEq, Eq)]
struct ProgramResult {
    verdict: String,
    subtests: BTreeMap<u32, String>,
}

pub fn run(args: &UpstreamArgs) -> Result<()> {
    deps::ensure_upstream_selftests()?;
    let unpatched = kernel::prepare(&kernel_args(args, Run::Unpatched))?;
    let patched = kernel::prepare(&kernel_args(args, Run::Patched))?;
    // From the patched tree: series A adds tests to the proc and
    // pid_namespace suites, and those must pass on the unpatched kernel too.
    let programs = timed("building upstream's selftests static", || build(&patched))?;
    let before = boot(&unpatched, args, &programs, Run::Unpatched)?;
    let after = boot(&patched, args, &programs, Run::Patched)?;
    judge(&programs, &before, &after, "patched")?;
    if args.debug {
        let debug = kernel::prepare(&kernel_args(args, Run::PatchedDebug))?;
        let programs = on_debug(&programs);
        let after = boot(&debug, args, &programs, Run::PatchedDebug)?;
        judge(&programs, &before, &after, "patched debug")?;
    }
    Ok(())
}

/// The reason `list` (such as [`KNOWN`] or [`LEFT_OUT`]) gives for `name`,
/// if it lists that program.
fn reason(list: &[(&'static str, &'static str)], name: &str) -> Option<&'static str> {
    list.iter().find(|(n, _)| *n == name).map(|(_, why)| *why)
}

/// The programs that also boot on the debug kernel: all but
/// [`LEFT_OUT_ON_DEBUG`].
fn on_debug(programs: &[(String, PathBuf)]) -> Vec<(String, PathBuf)> {
    let mut kept = Vec::new();
    for (name, path) in programs {
        match reason(LEFT_OUT_ON_DEBUG, name) {
            Some(why) => step(format!("left out on the debug kernel: {name} ({why})")),
            None => kept.push((name.clone(), path.clone())),
        }
    }
    kept
}

/// Builds every suite into `target/xtask/upstream-selftests` and returns
/// the programs as (suite/name, path).
fn build(kernel: &Kernel) -> Result<Vec<(String, PathBuf)>> {
    let out = xtask_dir().join("upstream-selftests");
    run_quiet(
        with_ccache(&mut Command::new("make"))
            .arg("-C")
            .arg(kernel.src.join("tools/testing/selftests"))
            .args(kernel.arch.make_vars())
            .arg(format!("TARGETS={}", SUITES.join(" ")))
            .arg(format!("O={}", out.display()))
            .arg(format!(
                "KHDR_INCLUDES=-isystem {}",
                kernel.headers().display()
            ))
            .arg("LDFLAGS=-static")
            .arg(kernel::jobs())
            .arg("all"),
    )?;
    let mut programs = Vec::new();
    for suite in SUITES {
        let dir = out.join("kselftest").join(suite);
        let mut found: Vec<PathBuf> = fs::read_dir(&dir)
            .with_context(|| format!("the {suite} selftests left nothing in {}", dir.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        found.sort();
        let before = programs.len();
        for path in found {
            if is_elf_executable(&path)? {
                let name = path.file_name().unwrap_or_default().to_string_lossy();
                let name = format!("{suite}/{name}");
                if let Some(why) = reason(LEFT_OUT, &name) {
                    step(format!("left out: {name} ({why})"));
                    continue;
                }
                programs.push((name, path.clone()));
            }
        }
        if programs.len() == before {
            bail!("the {suite} selftests built no program");
        }
    }
    step(format!(
        "{} upstream programs from {}",
        programs.len(),
        SUITES.join(", ")
    ));
    Ok(programs)
}

fn boot(
    kernel: &Kernel,
    args: &UpstreamArgs,
    programs: &[(String, PathBuf)],
    run: Run,
) -> Result<BTreeMap<String, ProgramResult>> {
    let label = format!("upstream-{}", kernel.label());
    let outcome = qemu::boot_tests(kernel, &kernel_args(args, run), &label, |stage| {
        payload(stage, programs, test_timeout_secs(run))
    })?;
    check_boot(&outcome, kernel)?;
    let log = fs::read_to_string(&outcome.log)?;
    let results = parse_results(&log);
    let missing: Vec<&str> = programs
        .iter()
        .map(|(name, _)| name.as_str())
        .filter(|name| !results.contains_key(*name))
        .collect();
    if !missing.is_empty() {
        bail!(
            "on the {} kernel, no result reached the console for: {}; see {}",
            kernel.describe(),
            missing.join(", "),
            outcome.log.display()
        );
    }
    Ok(results)
}

fn payload(stage: &Stage, programs: &[(String, PathBuf)], timeout_secs: u32) -> Result<()> {
    for (name, path) in programs {
        stage.add_file(path, &format!("tests/upstream/{name}"))?;
    }
    stage.set_env("PIDMAP_PID_MAX", &PID_MAX.to_string())?;
    stage.set_env("PIDMAP_TEST_TIMEOUT", &timeout_secs.to_string())
}

/// A splat or a guest that never reported fails the stage outright.
fn check_boot(outcome: &Outcome, kernel: &Kernel) -> Result<()> {
    if !outcome.splats.is_empty() {
        for line in &outcome.splats {
            eprintln!("    {line}");
        }
        bail!(
            "the {} kernel's log has {} splat line(s); see {}",
            kernel.describe(),
            outcome.splats.len(),
            outcome.log.display()
        );
    }
    if !qemu::guest_reported(outcome) {
        bail!(
            "the {} guest died before reporting (qemu exit {:?}); see {}",
            kernel.describe(),
            outcome.debug_exit,
            outcome.log.display()
        );
    }
    Ok(())
}

/// The program's verdict from init's result line: pass (rc 0), skip
/// (kselftest's 4), timeout (busybox timeout's SIGTERM), or fail with rc.
fn verdict(rc: i32) -> String {
    match rc {
        0 => "pass".to_string(),
        4 => "skip".to_string(),
        143 | 124 => "timeout".to_string(),
        rc => format!("fail rc={rc}"),
    }
}

/// TAP's `ok N …` / `not ok N … # SKIP …`, keyed by N: descriptions can
/// carry pids, so only the number and the outcome are compared.
fn parse_tap(line: &str) -> Option<(u32, String)> {
    let line = line.trim_start();
    let (outcome, rest) = if let Some(rest) = line.strip_prefix("not ok ") {
        ("not ok", rest)
    } else if let Some(rest) = line.strip_prefix("ok ") {
        ("ok", rest)
    } else {
        return None;
    };
    let number: u32 = rest.split_whitespace().next()?.parse().ok()?;
    let directive = rest.to_ascii_uppercase();
    let outcome = if directive.contains("# SKIP") {
        "skip"
    } else if directive.contains("# XFAIL") {
        "xfail"
    } else {
        outcome
    };
    Some((number, outcome.to_string()))
}

/// Every program's result from a test-mode console log.
fn parse_results(log: &str) -> BTreeMap<String, ProgramResult> {
    let mut results = BTreeMap::new();
    let mut current: Option<(String, BTreeMap<u32, String>)> = None;
    for line in log.lines().map(|l| l.trim_end_matches('\r')) {
        if let Some(name) = line.strip_prefix("PIDMAP-TEST-START ") {
            current = Some((name.trim().to_string(), BTreeMap::new()));
        } else if let Some(rest) = line.strip_prefix("PIDMAP-TEST-RESULT ") {
            let mut words = rest.split_whitespace();
            let name = words.next().unwrap_or_default().to_string();
            let rc = words
                .find_map(|w| w.strip_prefix("rc="))
                .and_then(|rc| rc.parse().ok())
                .unwrap_or(-1);
            let subtests = match current.take() {
                Some((started, subtests)) if started == name => subtests,
                _ => BTreeMap::new(),
            };
            results.insert(
                name,
                ProgramResult {
                    verdict: verdict(rc),
                    subtests,
                },
            );
        } else if let Some((_, subtests)) = current.as_mut() {
            if let Some((n, outcome)) = parse_tap(line) {
                // A program's own plan restarts nowhere; keep the last word.
                subtests.insert(n, outcome);
            }
        }
    }
    results
}

/// The differences between the kernels, one line each.
fn differences(
    programs: &[(String, PathBuf)],
    before: &BTreeMap<String, ProgramResult>,
    after: &BTreeMap<String, ProgramResult>,
    label: &str,
) -> Vec<String> {
    let mut diffs = Vec::new();
    for (name, _) in programs {
        let (Some(b), Some(a)) = (before.get(name), after.get(name)) else {
            continue;
        };
        if b.verdict != a.verdict {
            diffs.push(format!(
                "{name}: unpatched {}, {label} {}",
                b.verdict, a.verdict
            ));
        }
        let numbers: std::collections::BTreeSet<u32> = b
            .subtests
            .keys()
            .chain(a.subtests.keys())
            .copied()
            .collect();
        for n in numbers {
            let (bs, as_) = (b.subtests.get(&n), a.subtests.get(&n));
            if bs != as_ {
                diffs.push(format!(
                    "{name} subtest {n}: unpatched {}, {label} {}",
                    bs.map_or("absent", String::as_str),
                    as_.map_or("absent", String::as_str)
                ));
            }
        }
    }
    diffs
}

fn judge(
    programs: &[(String, PathBuf)],
    before: &BTreeMap<String, ProgramResult>,
    after: &BTreeMap<String, ProgramResult>,
    label: &str,
) -> Result<()> {
    let diffs = differences(programs, before, after, label);
    let mut unexplained = Vec::new();
    let mut passed = 0;
    for (name, _) in programs {
        let (b, a) = (&before[name], &after[name]);
        let known = reason(KNOWN, name);
        match (b.verdict == "pass" && a.verdict == "pass", known) {
            (true, None) => passed += 1,
            (true, Some(_)) => {
                passed += 1;
                step(format!(
                    "note: {name} passes on both kernels now; drop it from KNOWN"
                ));
            }
            (false, Some(why)) => step(format!(
                "known: {name}: unpatched {}, {label} {} ({why})",
                b.verdict, a.verdict
            )),
            (false, None) => unexplained.push(format!(
                "{name}: unpatched {}, {label} {}",
                b.verdict, a.verdict
            )),
        }
    }
    println!(
        "upstream selftests, unpatched vs {label}: {} programs, {passed} pass on both kernels, {} differ, {} unexplained",
        programs.len(),
        diffs.len(),
        unexplained.len()
    );
    for line in &diffs {
        step(format!("DIFFERS: {line}"));
    }
    for line in &unexplained {
        step(format!("UNEXPLAINED (not in KNOWN): {line}"));
    }
    if !diffs.is_empty() || !unexplained.is_empty() {
        bail!(
            "upstream selftests, unpatched vs {label}: {} difference(s), {} unexplained non-pass(es)",
            diffs.len(),
            unexplained.len()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "\
PIDMAP-TEST-START proc/read\r
TAP version 13\r
1..2\r
ok 1 first\r
[    3.1] random: crng init done\r
not ok 2 second # SKIP no feature\r
PIDMAP-TEST-RESULT proc/read pass rc=0 seconds=1\r
PIDMAP-TEST-START pidfd/pidfd_test\r
not ok 1 pid 57 recycled\r
PIDMAP-TEST-RESULT pidfd/pidfd_test FAIL rc=1 seconds=3\r
";

    #[test]
    fn results_and_subtests_are_parsed() {
        let r = parse_results(LOG);
        assert_eq!(r["proc/read"].verdict, "pass");
        assert_eq!(r["proc/read"].subtests[&1], "ok");
        assert_eq!(r["proc/read"].subtests[&2], "skip");
        assert_eq!(r["pidfd/pidfd_test"].verdict, "fail rc=1");
        assert_eq!(r["pidfd/pidfd_test"].subtests[&1], "not ok");
    }

    #[test]
    fn a_changed_subtest_is_a_difference_and_a_changed_pid_is_not() {
        let programs = vec![
            ("proc/read".to_string(), PathBuf::new()),
            ("pidfd/pidfd_test".to_string(), PathBuf::new()),
        ];
        let before = parse_results(LOG);
        let same = parse_results(&LOG.replace("pid 57", "pid 58"));
        assert!(differences(&programs, &before, &same, "patched").is_empty());
        let changed = parse_results(&LOG.replace("ok 1 first", "not ok 1 first"));
        assert_eq!(
            differences(&programs, &before, &changed, "patched"),
            vec!["proc/read subtest 1: unpatched ok, patched not ok"]
        );
    }

    #[test]
    fn a_failure_on_both_kernels_outside_known_fails() {
        let programs = vec![("pidfd/pidfd_test".to_string(), PathBuf::new())];
        let r = parse_results(LOG);
        assert!(judge(&programs, &r, &r, "patched").is_err());
    }

    #[test]
    fn the_debug_boot_leaves_out_only_its_own_list() {
        let programs = vec![
            ("pidfd/pidfd_poll_test".to_string(), PathBuf::new()),
            ("pidfd/pidfd_test".to_string(), PathBuf::new()),
        ];
        let names: Vec<String> = on_debug(&programs).into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, vec!["pidfd/pidfd_poll_test".to_string()]);
        // Every entry names a program of these suites, and none is also
        // left out everywhere (then it would need no entry here).
        for (name, _) in LEFT_OUT_ON_DEBUG {
            let suite = name.split('/').next().unwrap_or_default();
            assert!(SUITES.contains(&suite), "{name}");
            assert!(!LEFT_OUT.iter().any(|(n, _)| n == name), "{name}");
        }
    }

    #[test]
    fn timeouts_and_skips_are_told_apart() {
        assert_eq!(verdict(0), "pass");
        assert_eq!(verdict(4), "skip");
        assert_eq!(verdict(143), "timeout");
        assert_eq!(verdict(2), "fail rc=2");
    }
}
