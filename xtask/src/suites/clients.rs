//! `cargo xtask clients`: procps-ng's `ps`, `top`, `pgrep` and `pidof`,
//! and htop, on pidmap(2) and pidmap_info(2).
//!
//! The upstream tarballs of procps-ng 4.0.4 and htop 3.4.1 come from
//! Debian's source pool (trixie, through a `deb-src` source this adds,
//! pinned so that no binary package comes from it) with `apt-get source
//! --download-only` (htop's checked against the Sources index: see
//! [`htop`]); the patches in `clients/procps/` and `clients/htop/`
//! (git-format, against those tarballs) are applied with `patch -p1`, and
//! both the patched and the upstream trees are built static (ncurses too)
//! into `target/xtask/clients/`.
//!
//! `--host-test` compares, on this (stock) kernel, the patched builds with
//! upstream's in a pid namespace of their own: without the calls the
//! patched tools must print what upstream prints. `--guest-test` boots the
//! patched kernel and compares each tool with the calls and with
//! `LIBPROC_NO_PIDMAP=1` / `HTOP_NO_PIDMAP=1`
//! (`guest-tests/clients/identity.sh`; htop's screen through
//! `htopscreen.c`, a pty and a text terminal). `--bench` measures both in
//! the patched guest at about 250 and 10,000 tasks.

mod htop;

use crate::arch::Arch;
use crate::bench::stats::median;
use crate::guest;
use crate::guest::qemu::{self, GuestClock};
use crate::kernel;
use crate::kernel::KernelArgs;
use crate::paths::{target_dir, workspace_root};
use crate::run::{output, run, run_quiet, step, timed};
use anyhow::{bail, Context, Result};
use clap::Args;
use std::collections::BTreeMap;
use std::fs;
use std::hash::{Hash, Hasher};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(Args)]
pub struct ClientsArgs {
    /// On this host's kernel (without the calls), compare the patched
    /// build with upstream's: root, in a pid and mount namespace of its own.
    #[arg(long)]
    pub host_test: bool,
    /// Boot the patched kernel and compare each tool with the calls and
    /// with LIBPROC_NO_PIDMAP=1 (htop: HTOP_NO_PIDMAP=1), as root and uid
    /// 65534, hidepid=invisible.
    #[arg(long)]
    pub guest_test: bool,
    /// Measure each command with and without the calls in the patched
    /// guest, at 100 x 100 and 1000 x 10 tasks.
    #[arg(long)]
    pub bench: bool,
    /// With --bench: the host clock instead of the instruction clock.
    #[arg(long, requires = "bench")]
    pub wall_clock: bool,
    /// With --bench: runs of each command per variant and workload.
    #[arg(long, default_value_t = 5, requires = "bench")]
    pub runs: u32,
    /// With --bench: only the commands of this program (ps, top, pgrep,
    /// pidof or htop).
    #[arg(long, requires = "bench")]
    pub only: Option<String>,
}

/// The upstream release the patches are made against.
const PROCPS_VERSION: &str = "4.0.4";
/// The tarball `apt-get source` leaves (Debian's name for upstream's).
const PROCPS_TARBALL: &str = "procps_4.0.4.orig.tar.xz";
/// The Debian release whose source pool serves it.
const SUITE: &str = "trixie";
/// The tools built, as (make target, name in the guest).
const TOOLS: [(&str, &str); 4] = [
    ("src/ps/pscommand", "ps"),
    ("src/top/top", "top"),
    ("src/pgrep", "pgrep"),
    ("src/pidof", "pidof"),
];
/// The configuration of both builds: static, no NLS, only what the tools
/// above need.
const CONFIGURE: [&str; 10] = [
    "--disable-shared",
    "--enable-static",
    "--disable-nls",
    "--disable-numa",
    "--disable-kill",
    "--disable-w",
    "--without-systemd",
    "--without-elogind",
    "NCURSES_LIBS=-lncursesw -ltinfo",
    "NCURSES_CFLAGS=",
];

const APT_SOURCES: &str = "/etc/apt/sources.list.d/pidmap-trixie-src.sources";
const APT_PIN: &str = "/etc/apt/preferences.d/pidmap-trixie-src";

fn clients_dir() -> PathBuf {
    target_dir().join("xtask/clients")
}

/// The machine's Debian mirror, as `.ci/apt-backports` finds it: the first
/// deb822 `URIs:` or one-line `deb` entry that ends in /debian.
fn debian_mirror() -> String {
    let mut candidates = Vec::new();
    if let Ok(entries) = fs::read_dir("/etc/apt/sources.list.d") {
        let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        for path in paths {
            let Ok(text) = fs::read_to_string(&path) else {
                continue;
            };
            if path.extension().is_some_and(|x| x == "sources") {
                for line in text.lines() {
                    if let Some(uris) = line.strip_prefix("URIs:") {
                        candidates.extend(uris.split_whitespace().map(str::to_string));
                    }
                }
            } else if path.extension().is_some_and(|x| x == "list") {
                candidates.extend(deb_line_uris(&text));
            }
        }
    }
    if let Ok(text) = fs::read_to_string("/etc/apt/sources.list") {
        candidates.extend(deb_line_uris(&text));
    }
    candidates
        .into_iter()
        .find(|u| u.trim_end_matches('/').ends_with("/debian"))
        .unwrap_or_else(|| "http://deb.debian.org/debian".to_string())
}

/// The URIs of one-line `deb` entries (options in brackets skipped).
fn deb_line_uris(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            if words.next() != Some("deb") {
                return None;
            }
            let mut word = words.next()?;
            if word.starts_with('[') {
                while !word.ends_with(']') {
                    word = words.next()?;
                }
                word = words.next()?;
            }
            Some(word.to_string())
        })
        .collect()
}

/// Adds trixie's source packages as an apt source (idempotent), pinned so
/// that no binary package is ever taken from trixie, and updates apt's
/// lists when the source is new or does not serve procps 4.0.4.
fn ensure_apt_source() -> Result<()> {
    let mirror = debian_mirror();
    let sources = format!(
        "# Added by pidmap's cargo xtask clients: the upstream tarballs of procps\n\
         # and htop from {SUITE}'s source pool; no binary package (see {APT_PIN}).\n\
         Types: deb-src\n\
         URIs: {mirror}\n\
         Suites: {SUITE}\n\
         Components: main\n\
         Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n"
    );
    let pin = format!(
        "# Added by pidmap's cargo xtask clients: {SUITE} is there for source\n\
         # packages only; no binary package comes from it.\n\
         Package: *\n\
         Pin: release n={SUITE}\n\
         Pin-Priority: -10\n"
    );
    let current = fs::read_to_string(APT_SOURCES).unwrap_or_default();
    let mut changed = false;
    if current != sources || fs::read_to_string(APT_PIN).unwrap_or_default() != pin {
        fs::write(APT_SOURCES, &sources)
            .and_then(|()| fs::write(APT_PIN, &pin))
            .with_context(|| {
                format!("cannot write {APT_SOURCES} and {APT_PIN} (run as root, or add them)")
            })?;
        step(format!("apt: {SUITE} source packages from {mirror}"));
        changed = true;
    }
    let serves = |package: &str, version: &str| {
        Command::new("apt-cache")
            .args(["showsrc", package])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).contains(&format!("Version: {version}-")))
            .unwrap_or(false)
    };
    let procps = format!("2:{PROCPS_VERSION}");
    let both = || serves("procps", &procps) && serves("htop", htop::VERSION);
    if changed || !both() {
        run(Command::new("apt-get").args(["update", "-q"]))?;
        if !serves("procps", &procps) {
            bail!("apt serves no procps {PROCPS_VERSION} source package from {SUITE}");
        }
        if !serves("htop", htop::VERSION) {
            bail!(
                "apt serves no htop {} source package from {SUITE}",
                htop::VERSION
            );
        }
    }
    Ok(())
}

/// The procps tarball, downloaded once into target/xtask/clients/dl.
fn fetch_procps() -> Result<PathBuf> {
    let dl = clients_dir().join("dl");
    let tarball = dl.join(PROCPS_TARBALL);
    if tarball.exists() {
        return Ok(tarball);
    }
    ensure_apt_source()?;
    fs::create_dir_all(&dl)?;
    // apt checks each file against the signed Sources index.
    run(Command::new("apt-get")
        .current_dir(&dl)
        .args(["source", "--download-only", "-q"])
        .arg(format!("procps/{SUITE}")))?;
    if !tarball.exists() {
        bail!("apt-get source left no {}", tarball.display());
    }
    Ok(tarball)
}

/// The patches of clients/`client` (procps, htop), sorted by name.
fn client_patches(client: &str) -> Result<Vec<PathBuf>> {
    let dir = workspace_root().join("clients").join(client);
    let mut patches: Vec<PathBuf> = fs::read_dir(&dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "patch"))
        .collect();
    patches.sort();
    if patches.is_empty() {
        bail!("no patches in {}", dir.display());
    }
    Ok(patches)
}

/// Builds the tools from `tarball`, with `patches` applied, into
/// target/xtask/clients/NAME/; rebuilt only when the tarball, the
/// patches, the uapi header or the configuration changed.
fn build(tarball: &Path, name: &str, patches: &[PathBuf]) -> Result<PathBuf> {
    let header = crate::kernel::abi::dir().join("linux/pidmap.h");
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    PROCPS_TARBALL.hash(&mut hasher);
    CONFIGURE.hash(&mut hasher);
    for p in patches.iter().chain(std::iter::once(&header)) {
        fs::read(p)
            .with_context(|| format!("cannot read {}", p.display()))?
            .hash(&mut hasher);
    }
    let key = format!("{:016x}\n", hasher.finish());
    let out = clients_dir().join(name);
    let stamp = out.join(".built");
    if fs::read_to_string(&stamp).is_ok_and(|s| s == key) {
        step(format!("{name}: up to date in {}", out.display()));
        return Ok(out);
    }
    let src = clients_dir().join("build").join(name);
    if src.exists() {
        fs::remove_dir_all(&src)?;
    }
    fs::create_dir_all(&src)?;
    run(Command::new("tar")
        .arg("xf")
        .arg(tarball)
        .arg("-C")
        .arg(&src)
        .args(["--strip-components=1", "--no-same-owner"]))?;
    for patch in patches {
        step(format!("{name}: applying {}", patch.display()));
        run_quiet(
            Command::new("patch")
                .current_dir(&src)
                .args([
                    "-p1",
                    "--forward",
                    "--batch",
                    "--no-backup-if-mismatch",
                    "-i",
                ])
                .arg(patch),
        )?;
    }
    // The uapi header as <linux/pidmap.h>: the patched readproc.c includes
    // it when the headers have it (its own copy is for those without).
    let include = clients_dir().join("include");
    fs::create_dir_all(include.join("linux"))?;
    fs::copy(&header, include.join("linux/pidmap.h"))?;
    timed(&format!("{name}: configure"), || {
        run_quiet(
            Command::new("nice")
                .current_dir(&src)
                .args(["-n", "10", "./configure", "-q"])
                .args(CONFIGURE)
                // configure insists on a pkg-config even though the only
                // library it would ask about, ncurses, is given above
                .args((!Path::new("/usr/bin/pkg-config").exists()).then_some("PKG_CONFIG=true"))
                .arg(format!("CPPFLAGS=-I{}", include.display())),
        )
    })?;
    let jobs = std::thread::available_parallelism().map_or(2, |n| n.get());
    timed(&format!("{name}: make (static)"), || {
        run_quiet(
            Command::new("nice")
                .current_dir(&src)
                .args(["-n", "10", "make"])
                .arg(format!("-j{jobs}"))
                // libtool's flag for a fully static program
                .arg("LDFLAGS=-all-static")
                .args(TOOLS.map(|(target, _)| target)),
        )
    })?;
    fs::create_dir_all(&out)?;
    for (target, tool) in TOOLS {
        fs::copy(src.join(target), out.join(tool))
            .with_context(|| format!("{name}: no {target} after make"))?;
    }
    fs::write(&stamp, key)?;
    step(format!("{name}: ps top pgrep pidof in {}", out.display()));
    Ok(out)
}

/// The builds: procps' and htop's, patched and upstream.
pub struct Builds {
    /// The patched procps tools' directory.
    pub patched: PathBuf,
    /// Upstream's procps tools' directory.
    pub upstream: PathBuf,
    /// The patched htop.
    pub htop: PathBuf,
    /// Upstream's htop.
    pub htop_upstream: PathBuf,
}

/// htop's tarball, downloaded once into target/xtask/clients/dl.
fn fetch_htop() -> Result<PathBuf> {
    let dl = clients_dir().join("dl");
    if !dl.join(htop::TARBALL).exists() {
        ensure_apt_source()?;
    }
    htop::fetch(&dl, SUITE)
}

/// Builds htop, with `patches`, into target/xtask/clients/NAME/htop.
fn build_htop(tarball: &Path, name: &str, patches: &[PathBuf]) -> Result<PathBuf> {
    let header = crate::kernel::abi::dir().join("linux/pidmap.h");
    let include = clients_dir().join("include");
    fs::create_dir_all(include.join("linux"))?;
    fs::copy(&header, include.join("linux/pidmap.h"))?;
    htop::build(
        tarball,
        patches,
        &header,
        &include,
        &clients_dir().join("build").join(name),
        &clients_dir().join(name),
    )
}

/// Every build.
pub fn build_all() -> Result<Builds> {
    crate::deps::ensure_clients()?;
    let tarball = fetch_procps()?;
    let patched = build(&tarball, "procps-pidmap", &client_patches("procps")?)?;
    let upstream = build(&tarball, "procps-upstream", &[])?;
    let htop_tarball = fetch_htop()?;
    let htop_patched = build_htop(&htop_tarball, "htop-pidmap", &client_patches("htop")?)?;
    let htop_upstream = build_htop(&htop_tarball, "htop-upstream", &[])?;
    Ok(Builds {
        patched,
        upstream,
        htop: htop_patched,
        htop_upstream,
    })
}

/// Compiles `src` static for the host (x86_64), as the guest programs are.
fn compile_host(src: &Path, out: &Path) -> Result<()> {
    run_quiet(
        Command::new("gcc")
            .args([
                "-static", "-O2", "-Wall", "-Wextra", "-Werror", "-pthread", "-o",
            ])
            .arg(out)
            .arg(src),
    )
    .with_context(|| format!("cannot compile {}", src.display()))
}

/// Compiles guest-tests/clients/pidsdump.c against the library of the
/// build tree `tree` (`procps-pidmap` or `procps-upstream`), static.
fn compile_pidsdump(tree: &str, out: &Path) -> Result<()> {
    let lib = clients_dir().join("build").join(tree).join("library");
    let src = workspace_root().join("guest-tests/clients/pidsdump.c");
    run_quiet(
        Command::new("gcc")
            .args(["-static", "-O2", "-Wall", "-Wextra", "-Werror", "-I"])
            .arg(lib.join("include"))
            .arg("-o")
            .arg(out)
            .arg(&src)
            .arg(lib.join(".libs/libproc2.a")),
    )
    .with_context(|| format!("cannot compile {} against {tree}", src.display()))
}

/// Copies a build's tools and its htop into `dir` (mode 0755: uid 65534
/// runs them).
fn stage_tools(from: &Path, htop: &Path, dir: &Path) -> Result<()> {
    fs::create_dir_all(dir)?;
    fs::set_permissions(dir, fs::Permissions::from_mode(0o755))?;
    for (_, tool) in TOOLS {
        fs::copy(from.join(tool), dir.join(tool))?;
    }
    fs::copy(htop, dir.join("htop"))?;
    Ok(())
}

/// What the tools need beside them in `dir`: htop's settings, and a
/// terminfo directory with "dumb" (top -b sets up that terminal; the guest
/// has no terminfo) and the terminal htopscreen emulates.
fn stage_extras(dir: &Path) -> Result<()> {
    let root = workspace_root();
    fs::copy(root.join("guest-tests/clients/htoprc"), dir.join("htoprc"))?;
    let dumb = ["/usr/share/terminfo/d/dumb", "/lib/terminfo/d/dumb"]
        .into_iter()
        .map(Path::new)
        .find(|p| p.exists())
        .context("no terminfo entry for \"dumb\" (Debian's ncurses-base)")?;
    fs::create_dir_all(dir.join("terminfo/d"))?;
    fs::copy(dumb, dir.join("terminfo/d/dumb"))?;
    htop::terminfo(&root, &dir.join("terminfo"))
}

fn host_test(builds: &Builds) -> Result<()> {
    if !is_root() {
        bail!("--host-test needs root (a pid namespace, a remount of its /proc, uid 65534)");
    }
    // Out of the tree: every directory above the tools must be searchable
    // by uid 65534.
    let base = std::env::temp_dir().join(format!("pidmap-clients-{}", std::process::id()));
    if base.exists() {
        fs::remove_dir_all(&base)?;
    }
    let (pm, up) = (base.join("pidmap"), base.join("upstream"));
    stage_tools(&builds.patched, &builds.htop, &pm)?;
    stage_tools(&builds.upstream, &builds.htop_upstream, &up)?;
    stage_extras(&pm)?;
    fs::set_permissions(&base, fs::Permissions::from_mode(0o755))?;
    let tests = workspace_root().join("guest-tests");
    compile_host(&tests.join("clients/workload.c"), &pm.join("workload"))?;
    compile_host(&tests.join("clients/htopscreen.c"), &pm.join("htopscreen"))?;
    compile_host(&tests.join("helpers/runas.c"), &pm.join("runas"))?;
    compile_pidsdump("procps-pidmap", &pm.join("pidsdump"))?;
    compile_pidsdump("procps-upstream", &up.join("pidsdump"))?;
    let result = run(Command::new("unshare")
        .args(["--pid", "--fork", "--mount-proc", "sh"])
        .arg(tests.join("clients/identity.sh"))
        .arg("host")
        .arg(&pm)
        .arg(&up));
    fs::remove_dir_all(&base)?;
    result.context("the patched procps or htop differs from upstream's on this kernel")
}

fn is_root() -> bool {
    output(Command::new("id").arg("-u")).is_ok_and(|s| s.trim() == "0")
}

fn guest_kernel_args() -> KernelArgs {
    KernelArgs {
        arch: Arch::X86_64,
        debug: false,
        unpatched: false,
        bpf: false,
        kernel_src: None,
        timeout: 1800,
        memory: 3072,
        cpus: None,
    }
}

/// The guest payload: the patched tools and htop, workload, htopscreen,
/// park-threads and the scripts, in `dir` (the guest's /add/clients).
fn stage_guest(builds: &Builds, kernel: &kernel::Kernel, dir: &Path) -> Result<()> {
    if dir.exists() {
        fs::remove_dir_all(dir)?;
    }
    stage_tools(&builds.patched, &builds.htop, dir)?;
    stage_extras(dir)?;
    let root = workspace_root();
    for program in ["workload", "htopscreen"] {
        guest::compile_c(
            kernel.arch,
            &root.join(format!("guest-tests/clients/{program}.c")),
            &dir.join(program),
            None,
            &kernel.headers(),
        )?;
    }
    compile_pidsdump("procps-pidmap", &dir.join("pidsdump"))?;
    guest::compile_c(
        kernel.arch,
        &root.join("bench/park-threads.c"),
        &dir.join("park-threads"),
        None,
        &kernel.headers(),
    )?;
    for script in ["identity.sh", "bench.sh"] {
        fs::copy(
            root.join("guest-tests/clients").join(script),
            dir.join(script),
        )?;
    }
    Ok(())
}

fn guest_test(builds: &Builds) -> Result<()> {
    let args = guest_kernel_args();
    let kernel = kernel::prepare(&args)?;
    let dir = clients_dir().join("guest/clients");
    stage_guest(builds, &kernel, &dir)?;
    let command = ["sh", "/add/clients/identity.sh", "guest", "/add/clients"].map(String::from);
    let run = timed(
        "procps and htop identity tests in the patched guest",
        || {
            qemu::run_in_guest(
                &kernel,
                &args,
                GuestClock::Host,
                &dir,
                &command,
                "clients-identity",
            )
        },
    )?;
    for line in run.log.lines() {
        let line = line.trim_end_matches('\r');
        if line.starts_with("ok: ")
            || line.starts_with("FAIL: ")
            || line.starts_with("identity: ")
            || line.starts_with("workload ready")
        {
            eprintln!("    {line}");
        }
    }
    if run.status != 0 {
        bail!(
            "the identity tests failed in the guest (status {}); see {}",
            run.status,
            run.log_path.display()
        );
    }
    Ok(())
}

/// The commands the guest bench measures (words split on spaces). `top
/// -b -n 1` sleeps 100 ms twice (procps' LIB_USLEEP: before its first
/// frame and to prime %CPU), which the guest clock counts; the two `-d 0`
/// runs give the cost of one refresh, their difference over 20. htop runs
/// under htopscreen (bench.sh) with its default settings on a 50 x 200
/// terminal; `-n 1` scans three times (twice at start, 75 ms apart, then
/// before its one frame), and each further frame of `-d 1` scans once and
/// first waits 100 ms for a key (its shortest delay), which the guest
/// clock counts too: one refresh is their difference over 10, less 100 ms.
const BENCH_COMMANDS: [&str; 12] = [
    "ps -e",
    "ps -ef",
    "ps aux",
    "ps -eLf",
    "ps -eo pid,ppid,stat,rss,time,comm",
    "top -b -n 1",
    "top -b -d 0 -n 1",
    "top -b -d 0 -n 21",
    "pgrep -a .",
    "pidof park-threads",
    "htop -n 1",
    "htop -d 1 -n 11",
];

/// One refresh from two runs of a command: (label, the run of one frame,
/// the run of more, how many more frames, what each of them waits, in ns).
const REFRESHES: [(&str, &str, &str, f64, f64); 2] = [
    ("top", "top -b -d 0 -n 1", "top -b -d 0 -n 21", 20.0, 0.0),
    ("htop", "htop -n 1", "htop -d 1 -n 11", 10.0, 100e6),
];

/// The guest bench's workloads, as bench.sh names them.
const BENCH_WORKLOADS: [&str; 3] = ["250", "100x100", "1000x10"];

/// The guest bench's result lines: `CLIENTS-BENCH WORKLOAD VARIANT LABEL NS`.
fn parse_bench(log: &str) -> BTreeMap<(String, String, String), Vec<f64>> {
    let mut runs: BTreeMap<(String, String, String), Vec<f64>> = BTreeMap::new();
    for line in log.lines() {
        let Some(rest) = line.trim_end().strip_prefix("CLIENTS-BENCH ") else {
            continue;
        };
        let mut words = rest.splitn(3, ' ');
        let (Some(work), Some(variant), Some(tail)) = (words.next(), words.next(), words.next())
        else {
            continue;
        };
        // the command holds spaces: the last word is the figure
        let Some((label, ns)) = tail.rsplit_once(' ') else {
            continue;
        };
        if let Ok(ns) = ns.parse::<f64>() {
            runs.entry((work.to_string(), label.to_string(), variant.to_string()))
                .or_default()
                .push(ns);
        }
    }
    runs
}

fn bench(builds: &Builds, args: &ClientsArgs) -> Result<()> {
    let kargs = guest_kernel_args();
    let kernel = kernel::prepare(&kargs)?;
    let dir = clients_dir().join("bench/clients");
    stage_guest(builds, &kernel, &dir)?;
    let clock = if args.wall_clock {
        GuestClock::Host
    } else {
        GuestClock::Instructions
    };
    let mut command = vec![
        "sh".to_string(),
        "/add/clients/bench.sh".to_string(),
        "/add/clients".to_string(),
        args.runs.to_string(),
    ];
    let commands: Vec<&str> = BENCH_COMMANDS
        .into_iter()
        .filter(|c| {
            args.only
                .as_deref()
                .is_none_or(|only| c.split(' ').next() == Some(only))
        })
        .collect();
    if commands.is_empty() {
        bail!(
            "no bench command runs {}",
            args.only.as_deref().unwrap_or("")
        );
    }
    command.extend(commands.iter().map(|c| c.to_string()));
    let run = timed("procps and htop bench in the patched guest", || {
        qemu::run_in_guest(&kernel, &kargs, clock, &dir, &command, "clients-bench")
    })?;
    if run.status != 0 {
        bail!(
            "the guest bench failed (status {}); see {}",
            run.status,
            run.log_path.display()
        );
    }
    let runs = parse_bench(&run.log);
    // ns to ms, or instructions to millions of them
    let unit = if args.wall_clock { "ms" } else { "M instr." };
    let scale = 1e6;
    println!(
        "procps and htop in the patched guest ({}), {} runs per cell: median (min-max), {unit}",
        qemu::clock_setup(clock, clock.default_cpus()),
        args.runs
    );
    for line in run.log.lines() {
        if let Some(rest) = line.trim_end().strip_prefix("CLIENTS-BENCH-WORKLOAD ") {
            println!("workload {rest}");
        }
    }
    for work in BENCH_WORKLOADS {
        println!("\n{work}:\n| command | with the calls | without | ratio |\n|---|--:|--:|--:|");
        let mut medians: BTreeMap<(&str, &str), f64> = BTreeMap::new();
        for &label in &commands {
            let key = |v: &str| (work.to_string(), label.to_string(), v.to_string());
            let (Some(a), Some(b)) = (runs.get(&key("pidmap")), runs.get(&key("proc"))) else {
                bail!("the guest bench has no figures for {label} at {work}");
            };
            let fmt = |v: &[f64]| {
                let mut v = v.to_vec();
                let med = median(&mut v);
                (
                    med,
                    format!(
                        "{:.2} ({:.2}-{:.2})",
                        med / scale,
                        v[0] / scale,
                        v[v.len() - 1] / scale
                    ),
                )
            };
            let ((ma, sa), (mb, sb)) = (fmt(a), fmt(b));
            println!("| `{label}` | {sa} | {sb} | {:.2}x |", mb / ma);
            medians.insert((label, "pidmap"), ma);
            medians.insert((label, "proc"), mb);
        }
        // one refresh: (N + 1 frames - 1 frame) / N less the wait, from
        // the medians
        for (tool, one, many, frames, wait) in REFRESHES {
            let refresh = |v: &str| {
                let one = medians.get(&(one, v)).copied()?;
                let many = medians.get(&(many, v)).copied()?;
                Some((many - one) / frames - wait)
            };
            let (Some(ra), Some(rb)) = (refresh("pidmap"), refresh("proc")) else {
                continue;
            };
            let less = if wait > 0.0 {
                format!(" - {:.0} ms", wait / 1e6)
            } else {
                String::new()
            };
            println!(
                "| {tool}, one refresh (medians: (`-n {}` - `-n 1`) / {frames}{less}) | {:.2} | {:.2} | {:.2}x |",
                frames + 1.0,
                ra / scale,
                rb / scale,
                rb / ra
            );
        }
    }
    Ok(())
}

pub fn run_clients(args: &ClientsArgs) -> Result<()> {
    let builds = build_all()?;
    if args.host_test {
        timed(
            "procps and htop identity tests on this host (fallback vs upstream)",
            || host_test(&builds),
        )?;
    }
    if args.guest_test {
        guest_test(&builds)?;
    }
    if args.bench {
        bench(&builds, args)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deb_lines_give_their_uri_past_options() {
        let text = "# c\ndeb [arch=amd64 signed-by=/k.gpg] http://m.example/debian bookworm main\n\
                    deb-src http://s.example/debian bookworm main\n";
        assert_eq!(deb_line_uris(text), vec!["http://m.example/debian"]);
    }

    #[test]
    fn bench_lines_are_grouped_by_workload_command_and_variant() {
        let log = "noise\nCLIENTS-BENCH 100x100 pidmap ps -ef 1500\n\
                   CLIENTS-BENCH 100x100 pidmap ps -ef 1700\r\n\
                   CLIENTS-BENCH 100x100 proc ps -ef 3000\nCLIENTS-BENCH bad\n";
        let runs = parse_bench(log);
        let key = |v: &str| ("100x100".to_string(), "ps -ef".to_string(), v.to_string());
        assert_eq!(runs.get(&key("pidmap")), Some(&vec![1500.0, 1700.0]));
        assert_eq!(runs.get(&key("proc")), Some(&vec![3000.0]));
        assert_eq!(runs.len(), 2);
    }
}
