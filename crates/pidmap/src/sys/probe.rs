//! Detection: whether the kernel has the calls, asked with calls that can
//! write nothing. Only the series' pidmap(2), pidmap_info(2) and fdmap(2)
//! can be issued here, never a number a caller passes, and none at all
//! unless this build issues the series' numbers.

use super::abi::{FdmapReq, PidmapReq, PIDMAP_INFO_FIELDS, PIDMAP_SCOPE_PROCS};
use super::calls::{read_records, Fds, Ids};
use super::numbers::enabled_numbers;
use super::raw;

/// A flags argument no version of the calls accepts (it must be 0): a
/// patched kernel answers the probe with `EINVAL`.
const PROBE_INVALID_FLAG: u32 = 0x8000_0000;

/// Ask the kernel whether the calls exist: pidmap(2), then fdmap(2), each
/// with a valid, zeroed request, no buffer, count 0 and a non-zero flags
/// argument. A patched kernel answers `EINVAL`, an unpatched one `ENOSYS`,
/// a seccomp filter whatever it was told (often `EPERM`, or it kills the
/// process: see the crate docs on sandboxes). Nothing is ever written.
/// Takes no syscall number: it can only issue pidmap(2) and fdmap(2).
pub(crate) fn probe() -> (Result<u64, i32>, Result<u64, i32>) {
    if enabled_numbers().is_none() {
        return (Err(libc::ENOSYS), Err(libc::ENOSYS));
    }
    let pr = raw::call::<Ids>(&PidmapReq::default(), None, PROBE_INVALID_FLAG);
    if pr != Err(libc::EINVAL) {
        // Don't issue fdmap when pidmap already says no.
        return (pr, Err(libc::EINVAL));
    }
    let fr = raw::call::<Fds>(&FdmapReq::default(), None, PROBE_INVALID_FLAG);
    (pr, fr)
}

/// Ask whether pidmap_info(2) takes our records: a valid `PROCS` request
/// for every field, over the default view, with count 0. A kernel with
/// the call answers 0 (nothing is written).
pub(crate) fn probe_info() -> Result<u64, i32> {
    let req = PidmapReq {
        scope: PIDMAP_SCOPE_PROCS,
        info_mask: PIDMAP_INFO_FIELDS,
        ..PidmapReq::default()
    };
    read_records(&req, &mut [])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Without the feature the probes answer ENOSYS without entering the
    /// kernel.
    #[test]
    fn probes_refuse_without_the_feature() {
        if cfg!(not(feature = "series-syscalls")) {
            assert_eq!(probe(), (Err(libc::ENOSYS), Err(libc::ENOSYS)));
            assert_eq!(probe_info(), Err(libc::ENOSYS));
        }
    }
}
