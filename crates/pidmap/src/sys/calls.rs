//! The three typed calls: pidmap(2) into `u32` ids, pidmap_info(2) into
//! [`PidmapInfo`] records and fdmap(2) into `i32` fd numbers, each a
//! [`Call`] issued through [`raw::call`] with flags 0.

use super::abi::{req_size, FdmapReq, PidmapInfo, PidmapReq};
use super::numbers::SyscallNumbers;
use super::raw::{self, Call};

/// pidmap(2): ids.
pub(super) struct Ids;

// SAFETY: pidmap(2) reads the `struct pidmap_req` of `size` bytes
// (`PidmapReq`'s, set by `prepare`, which also zeroes the record fields
// as pidmap(2) requires) and writes at most `nr` `__u32` ids, each a
// `u32`; it takes no flags, and refuses any before writing.
unsafe impl Call for Ids {
    type Req = PidmapReq;
    type Elem = u32;

    fn number(numbers: SyscallNumbers) -> i64 {
        numbers.pidmap
    }

    fn prepare(req: &PidmapReq) -> PidmapReq {
        PidmapReq {
            size: req_size::<PidmapReq>(),
            info_size: 0,
            info_mask: 0,
            ..*req
        }
    }
}

/// pidmap_info(2): task records.
pub(super) struct Records;

// SAFETY: pidmap_info(2) reads the `struct pidmap_req` of `size` bytes
// and writes at most `nr` records of `info_size` bytes each
// (copy_struct_to_user()); `prepare` sets both to this crate's structs,
// so each record is exactly one `PidmapInfo`.
unsafe impl Call for Records {
    type Req = PidmapReq;
    type Elem = PidmapInfo;

    fn number(numbers: SyscallNumbers) -> i64 {
        numbers.pidmap_info
    }

    fn prepare(req: &PidmapReq) -> PidmapReq {
        PidmapReq {
            size: req_size::<PidmapReq>(),
            info_size: req_size::<PidmapInfo>(),
            ..*req
        }
    }
}

/// fdmap(2): fd numbers.
pub(super) struct Fds;

// SAFETY: fdmap(2) reads the `struct fdmap_req` of `size` bytes
// (`FdmapReq`'s, set by `prepare`) and writes at most `nr` `__s32` fd
// numbers, each an `i32`; it takes no flags, and refuses any before
// writing.
unsafe impl Call for Fds {
    type Req = FdmapReq;
    type Elem = i32;

    fn number(numbers: SyscallNumbers) -> i64 {
        numbers.fdmap
    }

    fn prepare(req: &FdmapReq) -> FdmapReq {
        FdmapReq {
            size: req_size::<FdmapReq>(),
            ..*req
        }
    }
}

/// `pidmap(req, ids, nr, 0)`: ids into `ids`. The request's record fields
/// are zeroed (pidmap(2) requires it). Returns the count the kernel says
/// it wrote, unclamped (a value above `ids.len()` is an ABI violation for
/// the caller to report), or the raw errno.
pub(crate) fn list_ids(req: &PidmapReq, ids: &mut [u32]) -> Result<u64, i32> {
    raw::call::<Ids>(req, Some(ids), 0)
}

/// `fdmap(req, fds, nr, 0)`: fd numbers into `fds`. Returns as
/// [`list_ids`] does.
pub(crate) fn list_fds(req: &FdmapReq, fds: &mut [i32]) -> Result<u64, i32> {
    raw::call::<Fds>(req, Some(fds), 0)
}

/// `pidmap_info(req, records, nr, 0)`: task records into `records`, with
/// `req.info_size` set to `size_of::<PidmapInfo>()`, so the kernel writes
/// records of exactly this struct's size. Returns as [`list_ids`] does.
pub(crate) fn read_records(req: &PidmapReq, records: &mut [PidmapInfo]) -> Result<u64, i32> {
    raw::call::<Records>(req, Some(records), 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What each call's request is issued with, whatever the caller set.
    #[test]
    fn each_call_sets_the_fields_its_abi_fixes() {
        let asked = PidmapReq {
            size: 1,
            scope: 3,
            last_id: 7,
            info_size: 9,
            info_mask: 0xff,
            ..PidmapReq::default()
        };
        let ids = Ids::prepare(&asked);
        assert_eq!((ids.size, ids.info_size, ids.info_mask), (56, 0, 0));
        assert_eq!((ids.scope, ids.last_id), (3, 7));
        let records = Records::prepare(&asked);
        assert_eq!(
            (records.size, records.info_size, records.info_mask),
            (56, 200, 0xff)
        );
        assert_eq!((records.scope, records.last_id), (3, 7));
        let fds = Fds::prepare(&FdmapReq {
            size: 1,
            first_fd: 5,
            ..FdmapReq::default()
        });
        assert_eq!((fds.size, fds.first_fd), (32, 5));
    }

    /// Without the feature every wrapper answers ENOSYS without entering
    /// the kernel.
    #[test]
    fn wrappers_refuse_without_the_feature() {
        let req = PidmapReq::default();
        let mut ids = [0u32; 4];
        let mut fds = [0i32; 4];
        let mut recs = [PidmapInfo::default(); 1];
        let fdreq = FdmapReq::default();
        if cfg!(not(feature = "series-syscalls")) {
            assert_eq!(list_ids(&req, &mut ids), Err(libc::ENOSYS));
            assert_eq!(list_fds(&fdreq, &mut fds), Err(libc::ENOSYS));
            assert_eq!(read_records(&req, &mut recs), Err(libc::ENOSYS));
        }
    }
}
