//! The crate built without its /proc fallback (`--no-default-features`):
//! the syscalls or a clear error, never a silent empty listing.

#![cfg(not(feature = "fallback"))]

use pidmap::{ActiveBackend, Backend, Error, Pidmap, Query};

#[test]
fn procfs_backend_is_not_built() {
    let r = Pidmap::with_backend(Backend::Procfs);
    assert!(matches!(r, Err(Error::FallbackNotBuilt)), "{r:?}");
}

#[test]
fn auto_is_the_syscalls_or_an_error() {
    let support = pidmap::kernel_support();
    match Pidmap::with_backend(Backend::Auto) {
        Ok(mut pm) => {
            assert!(support.is_available());
            assert_eq!(pm.active(), ActiveBackend::Syscall);
            let mut v = Vec::new();
            pm.fill(Query::processes(), &mut v).unwrap();
            assert!(v.contains(&pidmap::Pid::this_process()));
        }
        Err(Error::SyscallUnavailable(s)) => assert_eq!(s, support),
        Err(e) => panic!("{e}"),
    }
}
