//! The series' syscall numbers: one table of every architecture the crate
//! issues them on, and whether this build may issue them at all.
//!
//! The numbers are the series', not assigned upstream: on a kernel without
//! the series they may name another system call. So unless the crate is
//! built with the `series-syscalls` feature, [`enabled_numbers`] is `None`
//! and nothing in [`sys`](super) enters the kernel.

/// The syscall numbers of the series on this architecture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyscallNumbers {
    /// `pidmap(2)`: ids.
    pub pidmap: i64,
    /// `pidmap_info(2)`: task records.
    pub pidmap_info: i64,
    /// `fdmap(2)`: fd numbers.
    pub fdmap: i64,
}

/// The numbers the series adds to every table but alpha's (583–585) and
/// MIPS's, which number relative to a per-ABI base.
const SERIES_NUMBERS: SyscallNumbers = SyscallNumbers {
    pidmap: 473,
    pidmap_info: 474,
    fdmap: 475,
};

/// [`SERIES_NUMBERS`] above a MIPS ABI's base.
#[allow(dead_code)] // used on MIPS only
const fn based(base: i64) -> SyscallNumbers {
    SyscallNumbers {
        pidmap: base + SERIES_NUMBERS.pidmap,
        pidmap_info: base + SERIES_NUMBERS.pidmap_info,
        fdmap: base + SERIES_NUMBERS.fdmap,
    }
}

/// Declares [`SYSCALL_NUMBERS`] from one table of `cfg => numbers` rows
/// (the rows' cfgs exclude one another): the row whose cfg holds gives
/// the numbers, and an architecture no row names gets `None`.
macro_rules! numbers_by_arch {
    ($($cfg:meta => $numbers:expr,)*) => {
        $(
            /// The numbers for the architecture this crate was built for,
            /// `None` where the series wires no table the crate knows
            /// (every call then reports `ENOSYS` without entering the
            /// kernel).
            #[cfg($cfg)]
            pub const SYSCALL_NUMBERS: Option<SyscallNumbers> = Some($numbers);
        )*
        /// The numbers for the architecture this crate was built for,
        /// `None` where the series wires no table the crate knows (every
        /// call then reports `ENOSYS` without entering the kernel).
        #[cfg(not(any($($cfg),*)))]
        pub const SYSCALL_NUMBERS: Option<SyscallNumbers> = None;
    };
}

numbers_by_arch! {
    target_arch = "x86_64" => SERIES_NUMBERS,
    target_arch = "x86" => SERIES_NUMBERS,
    // `scripts/syscall.tbl`: arm64, riscv, loongarch64, csky, hexagon.
    target_arch = "aarch64" => SERIES_NUMBERS,
    target_arch = "riscv64" => SERIES_NUMBERS,
    target_arch = "riscv32" => SERIES_NUMBERS,
    target_arch = "loongarch64" => SERIES_NUMBERS,
    target_arch = "csky" => SERIES_NUMBERS,
    target_arch = "hexagon" => SERIES_NUMBERS,
    target_arch = "arm" => SERIES_NUMBERS,
    target_arch = "powerpc" => SERIES_NUMBERS,
    target_arch = "powerpc64" => SERIES_NUMBERS,
    target_arch = "s390x" => SERIES_NUMBERS,
    target_arch = "sparc" => SERIES_NUMBERS,
    target_arch = "sparc64" => SERIES_NUMBERS,
    target_arch = "m68k" => SERIES_NUMBERS,
    target_arch = "xtensa" => SERIES_NUMBERS,
    // MIPS o32: `arch/mips/kernel/syscalls/syscall_o32.tbl` above 4000.
    any(target_arch = "mips", target_arch = "mips32r6") => based(4000),
    // MIPS n64: `syscall_n64.tbl` above 5000. No n32 row: Rust has no
    // such Linux target to test it on, so no number that could mean
    // another call.
    all(
        any(target_arch = "mips64", target_arch = "mips64r6"),
        target_pointer_width = "64"
    ) => based(5000),
}

/// Every table the series adds the calls to, with the numbers it gives
/// them (a MIPS table's numbers are relative to its ABI's base, added
/// here): checked against the series in the tests. The crate issues those
/// of x86_64 and i386, `scripts/syscall.tbl` (arm64, riscv, loongarch64,
/// csky, hexagon), arm, powerpc, s390x, sparc, m68k, xtensa and MIPS o32
/// and n64; the others have no Rust Linux target.
#[cfg(test)]
const SERIES_TABLES: [(&str, SyscallNumbers); 17] = [
    ("arch/x86/entry/syscalls/syscall_64.tbl", SERIES_NUMBERS),
    ("arch/x86/entry/syscalls/syscall_32.tbl", SERIES_NUMBERS),
    ("scripts/syscall.tbl", SERIES_NUMBERS),
    ("arch/arm/tools/syscall.tbl", SERIES_NUMBERS),
    ("arch/arm64/tools/syscall_32.tbl", SERIES_NUMBERS),
    ("arch/powerpc/kernel/syscalls/syscall.tbl", SERIES_NUMBERS),
    ("arch/s390/kernel/syscalls/syscall.tbl", SERIES_NUMBERS),
    ("arch/sparc/kernel/syscalls/syscall.tbl", SERIES_NUMBERS),
    ("arch/m68k/kernel/syscalls/syscall.tbl", SERIES_NUMBERS),
    ("arch/xtensa/kernel/syscalls/syscall.tbl", SERIES_NUMBERS),
    ("arch/mips/kernel/syscalls/syscall_o32.tbl", based(4000)),
    ("arch/mips/kernel/syscalls/syscall_n64.tbl", based(5000)),
    ("arch/mips/kernel/syscalls/syscall_n32.tbl", based(6000)),
    (
        "arch/microblaze/kernel/syscalls/syscall.tbl",
        SERIES_NUMBERS,
    ),
    ("arch/parisc/kernel/syscalls/syscall.tbl", SERIES_NUMBERS),
    ("arch/sh/kernel/syscalls/syscall.tbl", SERIES_NUMBERS),
    // Alpha numbers from 583: no MIPS-style base, but the same offset.
    ("arch/alpha/kernel/syscalls/syscall.tbl", based(110)),
];

/// The numbers this build may issue: [`SYSCALL_NUMBERS`] with the
/// `series-syscalls` feature, else `None` (no call is ever made).
pub(crate) const fn enabled_numbers() -> Option<SyscallNumbers> {
    if cfg!(feature = "series-syscalls") {
        SYSCALL_NUMBERS
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    //! The table above against the syscall-table lines the crate packages
    //! (abi/syscall-numbers.tbl, written from the series by `cargo xtask
    //! abi`, which checks that it still is).
    use super::*;
    use std::collections::BTreeMap;

    const CHECKED_IN_NUMBERS: &str = include_str!("../../abi/syscall-numbers.tbl");

    /// `(table, number, call)` of each "path\tnr\tcall" line of
    /// abi/syscall-numbers.tbl.
    fn table_entries(text: &str) -> Vec<(String, i64, String)> {
        text.lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
            .map(|line| {
                let (file, entry) = line.split_once('\t').expect("path, tab, entry");
                let (nr, call) = entry.split_once('\t').expect("number, tab, call");
                let nr: i64 = nr.parse().expect("a number");
                (file.to_string(), nr, call.to_string())
            })
            .collect()
    }

    /// Each table in [`SERIES_TABLES`] has the three calls once each, at
    /// its numbers (less the MIPS base the table leaves out), and there is
    /// no other table.
    fn wired_tables_say(entries: &[(String, i64, String)], source: &str) {
        let mut seen: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for (file, nr, call) in entries {
            let Some((table, n)) = SERIES_TABLES.iter().find(|(t, _)| t == file) else {
                panic!("{source}: {file}: a table the crate does not know");
            };
            let base = if table.contains("/mips/") {
                n.pidmap - SERIES_NUMBERS.pidmap
            } else {
                0
            };
            let want = match call.as_str() {
                "pidmap" => n.pidmap,
                "pidmap_info" => n.pidmap_info,
                "fdmap" => n.fdmap,
                other => panic!("{source}: {file}: unexpected call {other}"),
            };
            assert_eq!(nr + base, want, "{source}: {file}: {call}");
            seen.entry(table).or_default().push(call);
        }
        for (table, _) in SERIES_TABLES {
            let mut calls = seen.get(table).cloned().unwrap_or_default();
            calls.sort_unstable();
            assert_eq!(
                calls,
                ["fdmap", "pidmap", "pidmap_info"],
                "{source}: {table}: each call once"
            );
        }
    }

    #[test]
    fn syscall_numbers_match_the_checked_in_table() {
        let entries = table_entries(CHECKED_IN_NUMBERS);
        wired_tables_say(&entries, "abi/syscall-numbers.tbl");
        // The numbers of this build are one of the tables'.
        let n = SYSCALL_NUMBERS.expect("wired on the test architectures");
        assert!(SERIES_TABLES.iter().any(|(_, t)| *t == n));
    }

    #[test]
    fn numbers_are_the_contracts() {
        let n = SYSCALL_NUMBERS.expect("wired on the test architectures");
        if cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) {
            assert_eq!((n.pidmap, n.pidmap_info, n.fdmap), (473, 474, 475));
        }
        assert_eq!(
            enabled_numbers().is_some(),
            cfg!(feature = "series-syscalls")
        );
        assert_eq!(based(5000).fdmap, 5475);
    }
}
