//! The one place the crate enters the kernel for the series' calls:
//! [`call`], typed by a [`Call`] that pairs a call with its request and
//! its buffer's element type, so no buffer can be handed to the wrong
//! call.

use bytemuck::AnyBitPattern;

use super::abi::MAX_NR;
use super::numbers::{enabled_numbers, SyscallNumbers};

/// One of the series' calls: its number, the request it reads and the
/// element its buffer holds.
///
/// # Safety
///
/// An implementation promises that the call [`number`](Call::number)
/// picks among the series' numbers, given a request that
/// [`prepare`](Call::prepare) returned, a buffer and a count `n`, reads
/// nothing but that request and writes nothing but at most `n` elements
/// of `size_of::<Elem>()` bytes each at the start of the buffer, whatever
/// the flags argument.
pub(super) unsafe trait Call {
    /// The request struct, of the ABI's layout.
    type Req: Copy;
    /// An element of the buffer: any bytes the kernel writes are one.
    type Elem: AnyBitPattern;
    /// The call's number among the series'.
    fn number(numbers: SyscallNumbers) -> i64;
    /// The request as issued: `req` with the fields the call's ABI fixes
    /// (its size, and what the call requires of the others) set here.
    fn prepare(req: &Self::Req) -> Self::Req;
}

/// `C(req, buf, nr, flags)`, the request [`prepared`](Call::prepare) and
/// `nr` the buffer's length up to [`MAX_NR`]; with no buffer, NULL and a
/// count of 0, so that nothing can be written. Returns the count the
/// kernel says it wrote, unclamped (a value above the buffer's length is
/// an ABI violation for the caller to report), or the raw errno: `ENOSYS`
/// at once, without entering the kernel, unless this build issues the
/// series' numbers ([`enabled_numbers`]).
pub(super) fn call<C: Call>(
    req: &C::Req,
    buf: Option<&mut [C::Elem]>,
    flags: u32,
) -> Result<u64, i32> {
    let Some(numbers) = enabled_numbers() else {
        return Err(libc::ENOSYS);
    };
    let nr = libc::c_long::try_from(C::number(numbers)).map_err(|_| libc::ENOSYS)?;
    let req = C::prepare(req);
    let (buf, count) = match buf {
        Some(buf) => (buf.as_mut_ptr(), clamped_count(buf.len())),
        None => (std::ptr::null_mut(), 0),
    };
    // SAFETY: `req` is a live request that `C::prepare` returned, and
    // `buf` is valid for writes of `count` elements (`count <=` the
    // slice's length), or NULL with `count == 0`: all that `C`'s contract
    // says the call reads and writes, and any bytes it writes are a valid
    // `C::Elem`. The number is the series' call `C` names, issued only in
    // a build that opted in to the series' numbers (see the crate docs:
    // on a kernel without the series it may name another call, which no
    // probe can rule out); a kernel without the call answers ENOSYS
    // without touching memory. `count` is a `size_t` as the ABI's `nr`;
    // `flags` goes through the variadic call as a full-width `c_ulong`
    // (zero-extended from the ABI's `unsigned int`).
    let ret = unsafe {
        libc::syscall(
            nr,
            std::ptr::from_ref(&req),
            buf,
            libc::size_t::from(count),
            libc::c_ulong::from(flags),
        )
    };
    if ret < 0 {
        Err(std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO))
    } else {
        // Non-negative, so it fits; not clamped (see above).
        Ok(u64::try_from(ret).unwrap_or(u64::MAX))
    }
}

/// A buffer length as the calls' `nr`, at most [`MAX_NR`].
fn clamped_count(len: usize) -> usize {
    len.min(MAX_NR)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_clamped_to_what_the_calls_take() {
        assert_eq!(clamped_count(usize::MAX), MAX_NR);
        assert_eq!(clamped_count(MAX_NR + 1), MAX_NR);
        assert_eq!(clamped_count(7), 7);
        assert_eq!(clamped_count(0), 0);
    }
}
