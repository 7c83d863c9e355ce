//! The ABI of the series' uapi headers, `include/uapi/linux/pidmap.h` and
//! `include/uapi/linux/fdmap.h`: their constants and `#[repr(C)]` structs,
//! checked in the tests against the crate's `abi/` folder (the headers as
//! the series writes them), compiled by gcc.
//!
//! Every integer conversion here is explicit and lossless on 32-bit and
//! 64-bit targets alike (no `as` between integer types).

use std::mem::size_of;

// `struct pidmap_req.scope`.
pub(crate) const PIDMAP_SCOPE_PROCS: u32 = 0;
pub(crate) const PIDMAP_SCOPE_TASKS: u32 = 1;
pub(crate) const PIDMAP_SCOPE_THREADS: u32 = 2;
pub(crate) const PIDMAP_SCOPE_CHILDREN: u32 = 3;
// `struct pidmap_req.filter` bits. The view is not a bit: it is the
// naming field that is non-zero (`procfs_fd`, `pidns_fd`, `pidns_id`).
pub(crate) const PIDMAP_FILTER_NO_KTHREADS: u32 = 1 << 0;

// `struct pidmap_info.mask` / `req->info_mask` bits.
pub(crate) const PIDMAP_INFO_ID: u64 = 1 << 0;
pub(crate) const PIDMAP_INFO_PPID: u64 = 1 << 1;
pub(crate) const PIDMAP_INFO_CREDS: u64 = 1 << 2;
pub(crate) const PIDMAP_INFO_SCHED: u64 = 1 << 3;
pub(crate) const PIDMAP_INFO_NUM_THREADS: u64 = 1 << 4;
pub(crate) const PIDMAP_INFO_CPUTIME: u64 = 1 << 5;
pub(crate) const PIDMAP_INFO_START_TIME: u64 = 1 << 6;
pub(crate) const PIDMAP_INFO_RSS: u64 = 1 << 7;
pub(crate) const PIDMAP_INFO_STATE: u64 = 1 << 8;
pub(crate) const PIDMAP_INFO_COMM: u64 = 1 << 9;
pub(crate) const PIDMAP_INFO_TASK_FLAGS: u64 = 1 << 10;
pub(crate) const PIDMAP_INFO_FAULTS: u64 = 1 << 11;
pub(crate) const PIDMAP_INFO_CTXSW: u64 = 1 << 12;
/// Every field bit above (`InfoFields::ALL`): what [`probe_info`](super::probe_info) asks for.
pub(crate) const PIDMAP_INFO_FIELDS: u64 = PIDMAP_INFO_ID
    | PIDMAP_INFO_PPID
    | PIDMAP_INFO_CREDS
    | PIDMAP_INFO_SCHED
    | PIDMAP_INFO_NUM_THREADS
    | PIDMAP_INFO_CPUTIME
    | PIDMAP_INFO_START_TIME
    | PIDMAP_INFO_RSS
    | PIDMAP_INFO_STATE
    | PIDMAP_INFO_COMM
    | PIDMAP_INFO_TASK_FLAGS
    | PIDMAP_INFO_FAULTS
    | PIDMAP_INFO_CTXSW;
#[cfg(test)]
pub(crate) const PIDMAP_INFO_SUPPORTED_MASK: u64 = 1 << 63;

// `struct pidmap_info.task_flags` bits.
pub(crate) const PIDMAP_TASK_KTHREAD: u32 = 1 << 0;
pub(crate) const PIDMAP_TASK_USER_WORKER: u32 = 1 << 1;
pub(crate) const PIDMAP_TASK_EXITING: u32 = 1 << 2;
pub(crate) const PIDMAP_TASK_FORKNOEXEC: u32 = 1 << 3;
/// Every task flag bit above (`TaskFlags::ALL`).
pub(crate) const PIDMAP_TASK_FLAGS: u32 =
    PIDMAP_TASK_KTHREAD | PIDMAP_TASK_USER_WORKER | PIDMAP_TASK_EXITING | PIDMAP_TASK_FORKNOEXEC;

/// `include/uapi/linux/pidfd.h`: the calling thread, and its thread group,
/// as a pidfd argument.
pub(crate) const PIDFD_SELF_THREAD: i32 = -10000;
pub(crate) const PIDFD_SELF_THREAD_GROUP: i32 = -10001;

/// The largest count the calls take (`-EOVERFLOW` above).
pub(crate) const MAX_NR: usize = 1_000_000;

/// `struct pidmap_req`, `PIDMAP_REQ_SIZE_VER0`: the request of pidmap(2)
/// and pidmap_info(2).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct PidmapReq {
    pub size: u32,
    /// `PIDMAP_SCOPE_*`.
    pub scope: u32,
    /// The last id returned, 0 to start (exclusive).
    pub last_id: u64,
    /// THREADS, CHILDREN: a pidfd or `PIDFD_SELF_*`; else 0.
    pub pidfd: i32,
    /// `PIDMAP_FILTER_NO_KTHREADS`.
    pub filter: u32,
    /// pidmap_info(2): `size_of::<PidmapInfo>()`; pidmap(2): 0.
    pub info_size: u32,
    pub reserved: u32,
    /// pidmap_info(2): the `PIDMAP_INFO_*` fields wanted; pidmap(2): 0.
    pub info_mask: u64,
    /// The procfs root fd of the view; 0: none.
    pub procfs_fd: u32,
    /// A pid namespace fd; 0: none (the crate never names one).
    pub pidns_fd: u32,
    /// A pid namespace's nsfs id; 0: none (the crate never names one).
    pub pidns_id: u64,
}

/// `struct pidmap_info`, `PIDMAP_INFO_SIZE_VER0`: one task record.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PidmapInfo {
    pub mask: u64,
    pub supported_mask: u64,
    pub pidfs_id: u64,
    pub tid: u32,
    pub tgid: u32,
    pub ppid: u32,
    pub ruid: u32,
    pub euid: u32,
    pub nice: i32,
    pub priority: i32,
    pub policy: u32,
    pub num_threads: u32,
    pub task_flags: u32,
    /// Nanoseconds (stat's clock ticks times `NSEC_PER_SEC / USER_HZ`).
    pub utime_ns: u64,
    pub stime_ns: u64,
    /// Since boot, in the caller's time namespace.
    pub start_time_ns: u64,
    /// `VmRSS` in bytes.
    pub rss_bytes: u64,
    pub state: u8,
    pub spare: [u8; 7],
    pub comm: [u8; 64],
    /// stat fields 10 and 12.
    pub min_flt: u64,
    pub maj_flt: u64,
    /// status `voluntary_ctxt_switches`, `nonvoluntary_ctxt_switches`.
    pub nvcsw: u64,
    pub nivcsw: u64,
}

impl PidmapInfo {
    /// `tid` as a `pid_t`: the kernel writes a pid, at most
    /// `PID_MAX_LIMIT` (2^22), into the `__u32`, so the bits are the same.
    pub fn tid(&self) -> i32 {
        pid_t(self.tid)
    }

    /// `tgid` as a `pid_t`, as [`tid`](Self::tid).
    pub fn tgid(&self) -> i32 {
        pid_t(self.tgid)
    }

    /// `ppid` as a `pid_t`, as [`tid`](Self::tid); 0 for a task without a
    /// parent in the view.
    pub fn ppid(&self) -> i32 {
        pid_t(self.ppid)
    }
}

/// A record's `__u32` id as the `pid_t` it holds, bit for bit.
fn pid_t(id: u32) -> i32 {
    i32::from_ne_bytes(id.to_ne_bytes())
}

impl Default for PidmapInfo {
    fn default() -> Self {
        PidmapInfo {
            mask: 0,
            supported_mask: 0,
            pidfs_id: 0,
            tid: 0,
            tgid: 0,
            ppid: 0,
            ruid: 0,
            euid: 0,
            nice: 0,
            priority: 0,
            policy: 0,
            num_threads: 0,
            task_flags: 0,
            utime_ns: 0,
            stime_ns: 0,
            start_time_ns: 0,
            rss_bytes: 0,
            state: 0,
            spare: [0; 7],
            comm: [0; 64],
            min_flt: 0,
            maj_flt: 0,
            nvcsw: 0,
            nivcsw: 0,
        }
    }
}

// SAFETY: `PidmapInfo` is `repr(C)` of integers and byte arrays only, so
// all-zero bytes are a valid value (its `Default`).
unsafe impl bytemuck::Zeroable for PidmapInfo {}
// SAFETY: every field is an integer or an array of bytes, for which any
// bit pattern is valid; the struct is `Copy` and `'static`. So any bytes
// the kernel writes into a record are a valid `PidmapInfo`.
unsafe impl bytemuck::AnyBitPattern for PidmapInfo {}

/// `struct fdmap_req`, `FDMAP_REQ_SIZE_VER0`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct FdmapReq {
    pub size: u32,
    /// A pidfd or `PIDFD_SELF_*`.
    pub pidfd: i32,
    /// The first fd listed (inclusive).
    pub first_fd: u32,
    pub reserved: u32,
    /// The procfs root fd of the view; 0: none.
    pub procfs_fd: u32,
    /// A pid namespace fd; 0: none (the crate never names one).
    pub pidns_fd: u32,
    /// A pid namespace's nsfs id; 0: none (the crate never names one).
    pub pidns_id: u64,
}

pub(crate) const PIDMAP_REQ_SIZE_VER0: u32 = 56;
pub(crate) const FDMAP_REQ_SIZE_VER0: u32 = 32;
pub(crate) const PIDMAP_INFO_SIZE_VER0: u32 = 200;

// The structs this crate was built with: each one's first version.
const _: () = assert!(
    size_of::<PidmapReq>() == 56
        && PIDMAP_REQ_SIZE_VER0 == 56
        && size_of::<FdmapReq>() == 32
        && FDMAP_REQ_SIZE_VER0 == 32
        && size_of::<PidmapInfo>() == 200
        && PIDMAP_INFO_SIZE_VER0 == 200
);

/// The size field of a request (or `info_size`): the struct this crate was
/// built with.
pub(crate) fn req_size<T>() -> u32 {
    u32::try_from(size_of::<T>()).expect("an ABI struct is at most 200 bytes")
}

#[cfg(test)]
mod tests {
    //! The constants and struct layouts above against the uapi headers the
    //! crate packages (abi/linux/: written from the series by `cargo xtask
    //! abi`, which checks that they still are). The layouts are not parsed
    //! here: gcc compiles a small program against the headers that prints
    //! what C makes of them.
    use super::*;
    use std::collections::BTreeMap;
    use std::mem::{align_of, offset_of};
    use std::path::PathBuf;
    use std::process::Command;

    // Built in, so that the tests need no source tree where they run.
    const PIDMAP_H: &str = include_str!("../../abi/linux/pidmap.h");
    const FDMAP_H: &str = include_str!("../../abi/linux/fdmap.h");

    /// One field of one of our structs: its C struct, its C name, its
    /// offset and size here, whether it is signed here, whether it is an
    /// array (whose element signedness is not compared: `char` has none
    /// of its own).
    type Field = (&'static str, &'static str, usize, usize, bool, bool);

    macro_rules! fields {
        ($ty:ty, $cstruct:literal: $($field:ident $cname:literal $signed:literal $array:literal),* $(,)?) => {
            [$((
                $cstruct,
                $cname,
                offset_of!($ty, $field),
                std::mem::size_of_val(&<$ty>::default().$field),
                $signed,
                $array,
            )),*]
        };
    }

    /// Every field of our three structs, in order.
    fn our_fields() -> Vec<Field> {
        let mut v = Vec::new();
        v.extend(fields!(PidmapReq, "pidmap_req":
            size "size" false false, scope "scope" false false,
            last_id "last_id" false false, pidfd "pidfd" true false,
            filter "filter" false false, info_size "info_size" false false,
            reserved "__reserved" false false, info_mask "info_mask" false false,
            procfs_fd "procfs_fd" false false, pidns_fd "pidns_fd" false false,
            pidns_id "pidns_id" false false,
        ));
        v.extend(fields!(PidmapInfo, "pidmap_info":
            mask "mask" false false, supported_mask "supported_mask" false false,
            pidfs_id "pidfs_id" false false, tid "tid" false false,
            tgid "tgid" false false, ppid "ppid" false false,
            ruid "ruid" false false, euid "euid" false false,
            nice "nice" true false, priority "priority" true false,
            policy "policy" false false, num_threads "num_threads" false false,
            task_flags "task_flags" false false, utime_ns "utime_ns" false false,
            stime_ns "stime_ns" false false, start_time_ns "start_time_ns" false false,
            rss_bytes "rss_bytes" false false, state "state" false false,
            spare "__spare" false true, comm "comm" false true,
            min_flt "min_flt" false false, maj_flt "maj_flt" false false,
            nvcsw "nvcsw" false false, nivcsw "nivcsw" false false,
        ));
        v.extend(fields!(FdmapReq, "fdmap_req":
            size "size" false false, pidfd "pidfd" true false,
            first_fd "first_fd" false false, reserved "__reserved" false false,
            procfs_fd "procfs_fd" false false, pidns_fd "pidns_fd" false false,
            pidns_id "pidns_id" false false,
        ));
        v
    }

    /// Our structs: (C name, size, alignment).
    fn our_structs() -> [(&'static str, usize, usize); 3] {
        [
            (
                "pidmap_req",
                size_of::<PidmapReq>(),
                align_of::<PidmapReq>(),
            ),
            (
                "pidmap_info",
                size_of::<PidmapInfo>(),
                align_of::<PidmapInfo>(),
            ),
            ("fdmap_req", size_of::<FdmapReq>(), align_of::<FdmapReq>()),
        ]
    }

    /// Every define of the headers, with our value.
    fn our_defines() -> BTreeMap<&'static str, u64> {
        BTreeMap::from([
            ("PIDMAP_SCOPE_PROCS", PIDMAP_SCOPE_PROCS.into()),
            ("PIDMAP_SCOPE_TASKS", PIDMAP_SCOPE_TASKS.into()),
            ("PIDMAP_SCOPE_THREADS", PIDMAP_SCOPE_THREADS.into()),
            ("PIDMAP_SCOPE_CHILDREN", PIDMAP_SCOPE_CHILDREN.into()),
            (
                "PIDMAP_FILTER_NO_KTHREADS",
                PIDMAP_FILTER_NO_KTHREADS.into(),
            ),
            ("PIDMAP_REQ_SIZE_VER0", PIDMAP_REQ_SIZE_VER0.into()),
            ("PIDMAP_INFO_SIZE_VER0", PIDMAP_INFO_SIZE_VER0.into()),
            ("PIDMAP_INFO_ID", PIDMAP_INFO_ID),
            ("PIDMAP_INFO_PPID", PIDMAP_INFO_PPID),
            ("PIDMAP_INFO_CREDS", PIDMAP_INFO_CREDS),
            ("PIDMAP_INFO_SCHED", PIDMAP_INFO_SCHED),
            ("PIDMAP_INFO_NUM_THREADS", PIDMAP_INFO_NUM_THREADS),
            ("PIDMAP_INFO_CPUTIME", PIDMAP_INFO_CPUTIME),
            ("PIDMAP_INFO_START_TIME", PIDMAP_INFO_START_TIME),
            ("PIDMAP_INFO_RSS", PIDMAP_INFO_RSS),
            ("PIDMAP_INFO_STATE", PIDMAP_INFO_STATE),
            ("PIDMAP_INFO_COMM", PIDMAP_INFO_COMM),
            ("PIDMAP_INFO_TASK_FLAGS", PIDMAP_INFO_TASK_FLAGS),
            ("PIDMAP_INFO_FAULTS", PIDMAP_INFO_FAULTS),
            ("PIDMAP_INFO_CTXSW", PIDMAP_INFO_CTXSW),
            ("PIDMAP_INFO_SUPPORTED_MASK", PIDMAP_INFO_SUPPORTED_MASK),
            ("PIDMAP_TASK_KTHREAD", PIDMAP_TASK_KTHREAD.into()),
            ("PIDMAP_TASK_USER_WORKER", PIDMAP_TASK_USER_WORKER.into()),
            ("PIDMAP_TASK_EXITING", PIDMAP_TASK_EXITING.into()),
            ("PIDMAP_TASK_FORKNOEXEC", PIDMAP_TASK_FORKNOEXEC.into()),
            ("FDMAP_REQ_SIZE_VER0", FDMAP_REQ_SIZE_VER0.into()),
        ])
    }

    /// What C makes of the headers in `abi`.
    #[derive(Debug, Default)]
    struct CSays {
        /// Each `PIDMAP_*` and `FDMAP_*` define, evaluated.
        defines: BTreeMap<String, u64>,
        /// (struct, field) -> (offset, size, signed) for each of
        /// [`our_fields`].
        fields: BTreeMap<(String, String), (usize, usize, bool)>,
        /// struct -> (size, alignment).
        structs: BTreeMap<String, (usize, usize)>,
    }

    /// A folder below the temporary one, removed on drop.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new(what: &str) -> Scratch {
            use std::sync::atomic::{AtomicUsize, Ordering};
            static NEXT: AtomicUsize = AtomicUsize::new(0);
            let dir = std::env::temp_dir().join(format!(
                "pidmap-{what}-{}-{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            ));
            std::fs::create_dir_all(&dir).unwrap();
            Scratch(dir)
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// Runs `cmd`, panicking with its stderr if it fails; `None` if gcc
    /// is not installed (the guest that runs these tests has none).
    fn gcc_output(cmd: &mut Command) -> Option<String> {
        match cmd.output() {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => panic!("cannot run {cmd:?}: {e}"),
            Ok(out) => {
                assert!(
                    out.status.success(),
                    "{cmd:?} failed: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
                Some(String::from_utf8_lossy(&out.stdout).into_owned())
            }
        }
    }

    /// Compiles and runs, with gcc, a program that includes `pidmap_h` and
    /// `fdmap_h` as `<linux/pidmap.h>` and `<linux/fdmap.h>` and prints
    /// every `PIDMAP_*`/`FDMAP_*` define (the list from `gcc -dM -E`), and
    /// the offset, size and signedness of each field of [`our_fields`] and
    /// the size and alignment of each struct. `None` without gcc.
    fn c_says(pidmap_h: &str, fdmap_h: &str) -> Option<CSays> {
        let scratch = Scratch::new("abi-layout");
        let abi = scratch.0.join("abi");
        std::fs::create_dir_all(abi.join("linux")).unwrap();
        std::fs::write(abi.join("linux/pidmap.h"), pidmap_h).unwrap();
        std::fs::write(abi.join("linux/fdmap.h"), fdmap_h).unwrap();
        let includes = "#include <linux/pidmap.h>\n#include <linux/fdmap.h>\n";
        let header = scratch.0.join("headers.h");
        std::fs::write(&header, includes).unwrap();
        let macros = gcc_output(
            Command::new("gcc")
                .args(["-E", "-dM", "-I"])
                .arg(&abi)
                .arg(&header),
        )?;
        let names: Vec<&str> = macros
            .lines()
            .filter_map(|l| l.strip_prefix("#define ")?.split_whitespace().next())
            .filter(|n| n.starts_with("PIDMAP_") || n.starts_with("FDMAP_"))
            .collect();
        let mut c =
            format!("#include <stddef.h>\n#include <stdio.h>\n{includes}int main(void)\n{{\n");
        for name in &names {
            c.push_str(&format!(
                "\tprintf(\"define {name} %llu\\n\", (unsigned long long)({name}));\n"
            ));
        }
        for (st, f, _, _, _, array) in our_fields() {
            let member = format!("((struct {st} *)0)->{f}");
            let element = if array {
                format!("{member}[0]")
            } else {
                member.clone()
            };
            c.push_str(&format!(
                "\tprintf(\"field {st} {f} %zu %zu %d\\n\", offsetof(struct {st}, {f}), \
                 sizeof({member}), (__typeof__({element}))-1 < 0);\n"
            ));
        }
        for (st, _, _) in our_structs() {
            c.push_str(&format!(
                "\tprintf(\"struct {st} %zu %zu\\n\", sizeof(struct {st}), _Alignof(struct {st}));\n"
            ));
        }
        c.push_str("\treturn 0;\n}\n");
        let src = scratch.0.join("layout.c");
        let exe = scratch.0.join("layout");
        std::fs::write(&src, c).unwrap();
        gcc_output(
            Command::new("gcc")
                .args(["-Wall", "-Werror", "-I"])
                .arg(&abi)
                .arg("-o")
                .arg(&exe)
                .arg(&src),
        )?;
        let out = gcc_output(&mut Command::new(&exe)).expect("the program just built");
        let mut says = CSays::default();
        for line in out.lines() {
            let w: Vec<&str> = line.split_whitespace().collect();
            let n = |i: usize| -> usize { w[i].parse().unwrap() };
            match w[0] {
                "define" => {
                    says.defines.insert(w[1].to_string(), w[2].parse().unwrap());
                }
                "field" => {
                    says.fields.insert(
                        (w[1].to_string(), w[2].to_string()),
                        (n(3), n(4), w[5] == "1"),
                    );
                }
                "struct" => {
                    says.structs.insert(w[1].to_string(), (n(2), n(3)));
                }
                _ => panic!("unexpected line {line}"),
            }
        }
        Some(says)
    }

    /// Every way what C says and this module disagree (empty if they
    /// agree).
    fn disagreements(c: &CSays) -> Vec<String> {
        let mut out = Vec::new();
        let ours = our_defines();
        for (name, value) in &c.defines {
            match ours.get(name.as_str()) {
                None => out.push(format!("{name}: a define the crate does not know")),
                Some(v) if v != value => out.push(format!("{name}: {value}, here {v}")),
                Some(_) => {}
            }
        }
        for name in ours.keys().filter(|n| !c.defines.contains_key(**n)) {
            out.push(format!("{name}: not in the headers"));
        }
        // PIDMAP_INFO_FIELDS (InfoFields::ALL) is every field bit of the
        // headers, and PIDMAP_TASK_FLAGS (TaskFlags::ALL) every task flag.
        let bits = |prefix: &str| {
            c.defines
                .iter()
                .filter(|(n, _)| n.starts_with(prefix) && !n.contains("SIZE"))
                .fold(0, |acc, (_, v)| acc | v)
        };
        if bits("PIDMAP_INFO_") & !PIDMAP_INFO_SUPPORTED_MASK != PIDMAP_INFO_FIELDS {
            out.push("PIDMAP_INFO_FIELDS is not every PIDMAP_INFO_* field bit".into());
        }
        if bits("PIDMAP_TASK_") != u64::from(PIDMAP_TASK_FLAGS) {
            out.push("PIDMAP_TASK_FLAGS is not every PIDMAP_TASK_* bit".into());
        }
        for (st, f, off, size, signed, array) in our_fields() {
            let Some(&(c_off, c_size, c_signed)) = c.fields.get(&(st.into(), f.into())) else {
                out.push(format!("{st}.{f}: not in the headers"));
                continue;
            };
            if (c_off, c_size) != (off, size) || (!array && c_signed != signed) {
                out.push(format!(
                    "{st}.{f}: offset {c_off}, size {c_size}, signed {c_signed}; \
                     here {off}, {size}, {signed}"
                ));
            }
        }
        for (st, size, align) in our_structs() {
            // Our fields tile the struct: C has no field we lack, not
            // even in what would be padding.
            let end = our_fields()
                .iter()
                .filter(|fl| fl.0 == st)
                .fold(0, |at, fl| if fl.2 == at { at + fl.3 } else { usize::MAX });
            if c.structs.get(st) != Some(&(size, align)) || end != size {
                out.push(format!(
                    "struct {st}: (size, align) {:?}, here ({size}, {align}), fields end at {end}",
                    c.structs.get(st)
                ));
            }
        }
        out
    }

    #[test]
    fn abi_matches_the_headers() {
        let Some(c) = c_says(PIDMAP_H, FDMAP_H) else {
            eprintln!("note: no gcc here: the layouts are checked where the crate is built");
            return;
        };
        assert_eq!(disagreements(&c), Vec::<String>::new(), "abi/linux/*.h");
        assert_eq!(
            u64::from(req_size::<PidmapReq>()),
            c.defines["PIDMAP_REQ_SIZE_VER0"]
        );
        assert_eq!(
            u64::from(req_size::<PidmapInfo>()),
            c.defines["PIDMAP_INFO_SIZE_VER0"]
        );
        assert_eq!(
            u64::from(req_size::<FdmapReq>()),
            c.defines["FDMAP_REQ_SIZE_VER0"]
        );
    }

    /// The comparison sees a header that differs: each change, made to a
    /// copy of the headers, is a disagreement.
    #[test]
    fn a_changed_header_disagrees() {
        let changes = [
            ("pidmap.h", "__s32 nice;", "__u32 nice;"),
            ("pidmap.h", "char comm[64];", "char comm[16];"),
            ("pidmap.h", "__u64 info_mask;", "__u32 info_mask;"),
            ("pidmap.h", "__u64 last_id;", "__u64 last_idx;"),
            ("pidmap.h", "(1ULL << 7)", "(1ULL << 13)"),
            (
                "pidmap.h",
                "__u8 __spare[7];",
                "__u8 __spare[3];\n\t__u32 new_field;",
            ),
            (
                "pidmap.h",
                "#define PIDMAP_INFO_SIZE_VER0",
                "#define PIDMAP_INFO_NEW (1ULL << 13)\n#define PIDMAP_INFO_SIZE_VER0",
            ),
            ("fdmap.h", "__u32 first_fd;", "__s32 first_fd;"),
            (
                "fdmap.h",
                "__u64 pidns_id;",
                "__u32 pidns_id;\n\t__u32 pad;",
            ),
            ("pidmap.h", "__u32 procfs_fd;", "__s32 procfs_fd;"),
        ];
        let mut checked = 0;
        for (file, from, to) in changes {
            let (p, f) = match file {
                "pidmap.h" => (PIDMAP_H.replacen(from, to, 1), FDMAP_H.to_string()),
                _ => (PIDMAP_H.to_string(), FDMAP_H.replacen(from, to, 1)),
            };
            assert!(p != PIDMAP_H || f != FDMAP_H, "{from} must be in {file}");
            // A field renamed away does not compile: gcc fails, and so
            // does the check.
            let c = std::panic::catch_unwind(|| c_says(&p, &f));
            match c {
                Ok(None) => return eprintln!("note: no gcc here"),
                Ok(Some(c)) => assert!(
                    !disagreements(&c).is_empty(),
                    "{from} -> {to} went unnoticed"
                ),
                Err(_) => {}
            }
            checked += 1;
        }
        assert_eq!(checked, changes.len());
    }
}
