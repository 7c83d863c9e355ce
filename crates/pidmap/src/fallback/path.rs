//! Paths below the proc root, built on the stack (no allocation per file).

use std::ffi::CStr;

/// The directory of a task below the proc root.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Base {
    /// `<pid>`.
    Pid(i32),
    /// `self`: the calling thread's group.
    Process,
    /// `thread-self`: the calling thread.
    Thread,
}

/// `"<base>[/task/<tid>]<suffix>\0"` in a fixed buffer.
pub(crate) struct ProcPath {
    buf: [u8; 64],
}

impl ProcPath {
    pub(crate) fn new(base: Base, tid: Option<i32>, suffix: &[u8]) -> Self {
        let mut p = ProcPath { buf: [0; 64] };
        let mut n = match base {
            Base::Pid(pid) => p.dec(0, pid),
            Base::Process => p.bytes(0, b"self"),
            Base::Thread => p.bytes(0, b"thread-self"),
        };
        if let Some(tid) = tid {
            n = p.bytes(n, b"/task/");
            n = p.dec(n, tid);
        }
        p.bytes(n, suffix);
        p
    }

    /// `thread-self/fdinfo/<fd>`.
    pub(crate) fn fdinfo(fd: i32) -> Self {
        let mut p = ProcPath::new(Base::Thread, None, b"/fdinfo/");
        let n = p.len();
        p.dec(n, fd);
        p
    }

    fn len(&self) -> usize {
        self.buf
            .iter()
            .position(|&b| b == 0)
            .unwrap_or(self.buf.len())
    }

    fn bytes(&mut self, at: usize, s: &[u8]) -> usize {
        // The longest path is "thread-self/task/<10>/children" < 63 bytes.
        self.buf[at..at + s.len()].copy_from_slice(s);
        at + s.len()
    }

    fn dec(&mut self, at: usize, v: i32) -> usize {
        let mut digits = [0u8; 11];
        let mut i = digits.len();
        let mut v = v.unsigned_abs();
        loop {
            i -= 1;
            digits[i] = b'0' + u8::try_from(v % 10).expect("a digit");
            v /= 10;
            if v == 0 {
                break;
            }
        }
        self.bytes(at, &digits[i..])
    }

    pub(crate) fn as_cstr(&self) -> &CStr {
        CStr::from_bytes_until_nul(&self.buf).expect("the buffer always ends in NUL")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn building() {
        assert_eq!(
            ProcPath::new(Base::Pid(123), None, b"/task").as_cstr(),
            c"123/task"
        );
        assert_eq!(
            ProcPath::new(Base::Pid(1), Some(i32::MAX), b"/children").as_cstr(),
            c"1/task/2147483647/children"
        );
        assert_eq!(
            ProcPath::new(Base::Thread, None, b"/fd").as_cstr(),
            c"thread-self/fd"
        );
        assert_eq!(
            ProcPath::new(Base::Process, Some(7), b"/children").as_cstr(),
            c"self/task/7/children"
        );
        assert_eq!(ProcPath::fdinfo(42).as_cstr(), c"thread-self/fdinfo/42");
    }
}
