//! Directory entries of /proc, read with `rustix::fs::RawDir` (raw
//! `getdents64` into one reused buffer) and parsed in place.

use std::io;
use std::mem::MaybeUninit;
use std::os::fd::BorrowedFd;

use rustix::fs::RawDir;

/// Size of the reused `getdents64` buffer.
pub(crate) const DIRENT_BUF_SIZE: usize = 64 * 1024;

/// A canonical decimal id: ASCII digits, no sign, no leading zero, no
/// overflow past `i32::MAX`. `.`, `..`, `self`, `0`, `007`, `12a` give
/// `None`.
#[inline]
pub(crate) fn parse_id(name: &[u8]) -> Option<i32> {
    let (&first, _) = name.split_first()?;
    if !(b'1'..=b'9').contains(&first) || name.len() > 10 {
        return None;
    }
    let mut v: u64 = 0;
    for &c in name {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v * 10 + u64::from(d);
    }
    i32::try_from(v).ok()
}

/// An fd number: a canonical id, or `0`.
#[inline]
pub(crate) fn parse_fd(name: &[u8]) -> Option<i32> {
    if name == b"0" {
        Some(0)
    } else {
        parse_id(name)
    }
}

/// Every entry of `dir` that `parse` accepts and that is `>= start`, in
/// directory order, handed to `f`.
pub(crate) fn read_ids(
    buf: &mut [MaybeUninit<u8>],
    dir: BorrowedFd<'_>,
    start: i32,
    parse: fn(&[u8]) -> Option<i32>,
    mut f: impl FnMut(i32),
) -> io::Result<()> {
    let mut entries = RawDir::new(dir, buf);
    while let Some(entry) = entries.next() {
        if let Some(id) = parse(entry?.file_name().to_bytes()) {
            if id >= start {
                f(id);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_id_edges() {
        for (name, want) in [
            (&b"1"[..], Some(1)),
            (b"4194304", Some(4194304)),
            (b"2147483647", Some(i32::MAX)),
            (b"2147483648", None),
            (b"0", None),
            (b"", None),
            (b"1 ", None),
            (b"-5", None),
            (b"+6", None),
            (b"007", None),
            (b"12a", None),
            (b"self", None),
            (b"12345678901", None),
            (b"\xff\xfe", None),
        ] {
            assert_eq!(parse_id(name), want, "{name:?}");
        }
        assert_eq!(parse_fd(b"0"), Some(0));
        assert_eq!(parse_fd(b"00"), None);
        assert_eq!(parse_fd(b"12"), Some(12));
    }

    /// Against `std::fs::read_dir` of a directory made here, with names
    /// that are ids and names that are not.
    #[test]
    fn reads_a_made_directory() {
        let dir = std::env::temp_dir().join(format!("pidmap-dirent-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir(&dir).unwrap();
        let mut want = Vec::new();
        for i in 1..3000 {
            std::fs::write(dir.join((i * 7).to_string()), b"").unwrap();
            want.push(i * 7);
        }
        for odd in ["0", "007", "self", "12a", "-3", "99999999999"] {
            std::fs::write(dir.join(odd), b"").unwrap();
        }
        let fd = rustix::fs::open(
            &dir,
            rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::DIRECTORY,
            rustix::fs::Mode::empty(),
        )
        .unwrap();
        use std::os::fd::AsFd;
        // A small buffer, so getdents64 is called many times.
        let mut buf = vec![MaybeUninit::uninit(); 1024];
        let mut got = Vec::new();
        read_ids(&mut buf, fd.as_fd(), 100, parse_id, |id| got.push(id)).unwrap();
        got.sort_unstable();
        want.retain(|&id| id >= 100);
        assert_eq!(got, want);
        let mut fds = Vec::new();
        rustix::fs::seek(&fd, rustix::fs::SeekFrom::Start(0)).unwrap();
        read_ids(&mut buf, fd.as_fd(), 0, parse_fd, |id| fds.push(id)).unwrap();
        assert!(fds.contains(&0));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
