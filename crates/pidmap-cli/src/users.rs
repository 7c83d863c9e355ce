//! User names and ids, through the C library's passwd lookup (so NSS
//! sources count, as they do for `ps` and `top`).

use std::collections::HashMap;
use std::ffi::{CStr, CString};

use anyhow::{bail, Result};

/// The uid `-u USER` names: a number, or a user name.
pub fn uid_of(user: &str) -> Result<u32> {
    if let Ok(uid) = user.parse::<u32>() {
        return Ok(uid);
    }
    let Ok(name) = CString::new(user) else {
        bail!("no such user: {user:?}");
    };
    let mut found = None;
    lookup(
        |(pw, buf, len, result)| {
            // SAFETY: valid pointers to a passwd, a buffer of `len` bytes and
            // a result pointer, as getpwnam_r requires.
            unsafe { libc::getpwnam_r(name.as_ptr(), pw, buf, len, result) }
        },
        |pw| found = Some(pw.pw_uid),
    );
    found.ok_or_else(|| anyhow::anyhow!("no such user: {user:?}"))
}

/// Names of uids, looked up once each; a uid without a name shows as
/// the number, as `ps` does.
#[derive(Debug, Default)]
pub struct Names(HashMap<u32, String>);

impl Names {
    pub fn name(&mut self, uid: u32) -> &str {
        self.0.entry(uid).or_insert_with(|| {
            let mut name = None;
            lookup(
                |(pw, buf, len, result)| {
                    // SAFETY: as in `uid_of`, for getpwuid_r.
                    unsafe { libc::getpwuid_r(uid, pw, buf, len, result) }
                },
                |pw| {
                    // SAFETY: a found entry's pw_name is a NUL-terminated
                    // string in the buffer, alive for this call.
                    let n = unsafe { CStr::from_ptr(pw.pw_name) };
                    name = Some(n.to_string_lossy().into_owned());
                },
            );
            name.unwrap_or_else(|| uid.to_string())
        })
    }
}

/// The arguments of `getpwnam_r`/`getpwuid_r` after the key.
type PwArgs = (
    *mut libc::passwd,
    *mut libc::c_char,
    usize,
    *mut *mut libc::passwd,
);

/// Run a `getpw*_r` call with a buffer that grows on ERANGE, and give a
/// found entry to `found`. Not found and errors both mean no entry.
fn lookup(mut call: impl FnMut(PwArgs) -> libc::c_int, found: impl FnOnce(&libc::passwd)) {
    let mut len = 1024;
    while len <= 1 << 20 {
        let mut buf = vec![0 as libc::c_char; len];
        // SAFETY: all-zero is a valid passwd (integers and null pointers).
        let mut pw: libc::passwd = unsafe { std::mem::zeroed() };
        let mut result: *mut libc::passwd = std::ptr::null_mut();
        let rc = call((&mut pw, buf.as_mut_ptr(), len, &mut result));
        if rc == libc::ERANGE {
            len *= 4;
            continue;
        }
        if rc == 0 && !result.is_null() {
            found(&pw);
        }
        return;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_and_numbers() {
        assert_eq!(uid_of("root").unwrap(), 0);
        assert_eq!(uid_of("4242").unwrap(), 4242);
        assert!(uid_of("no-such-user-pidmap").is_err());
        assert!(uid_of("a\0b").is_err());
        let mut names = Names::default();
        assert_eq!(names.name(0), "root");
        // A uid with no passwd entry is shown as its number.
        assert_eq!(names.name(3_999_999_999), "3999999999");
    }
}
