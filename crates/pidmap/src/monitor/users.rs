//! User names of uids (a record's [`euid`](crate::TaskInfo::euid)), and
//! back, through the C library's user database (`getpwuid_r(3)`,
//! `getpwnam_r(3)`): `/etc/passwd` and whatever else `nsswitch.conf`
//! names (LDAP, systemd's dynamic users, ...), as `ps`, `top` and `id`
//! see them.
//!
//! ```
//! use pidmap::monitor::{user_id, user_name, UserNames};
//!
//! assert_eq!(user_name(0)?.as_deref(), Some(std::ffi::OsStr::new("root")));
//! assert_eq!(user_id("root")?, Some(0));
//! // A monitor names every row: look each uid up once.
//! let mut names = UserNames::new();
//! assert_eq!(names.get(0), "root");
//! assert_eq!(names.get(3_999_999_999), "3999999999"); // no such user
//! # Ok::<(), pidmap::Error>(())
//! ```

use std::collections::HashMap;
use std::ffi::{CStr, CString, OsStr, OsString};
use std::io;
use std::os::unix::ffi::{OsStrExt, OsStringExt};

use crate::error::{Error, Result};

/// The name of the user with id `uid`, or `None` when the user database
/// has no such user.
///
/// # Errors
///
/// [`Error::Io`] when the database could not be read (`EIO`, `EMFILE`,
/// `ENOMEM`, ...), which is not the same as no such user.
pub fn user_name(uid: u32) -> Result<Option<OsString>> {
    lookup(
        |pw, buf, len, result| {
            // SAFETY: `pw`, `buf` (of `len` bytes) and `result` are valid
            // and writable for the call, as getpwuid_r requires.
            unsafe { libc::getpwuid_r(uid, pw, buf, len, result) }
        },
        |pw| {
            if pw.pw_name.is_null() {
                return None;
            }
            // SAFETY: a found entry's pw_name is a NUL-terminated string in
            // the buffer, which outlives this call.
            let name = unsafe { CStr::from_ptr(pw.pw_name) };
            Some(OsString::from_vec(name.to_bytes().to_vec()))
        },
    )
    .map_err(|e| Error::io(format!("looking up uid {uid} in the user database"), e))
    .map(Option::flatten)
}

/// The id of the user named `name`, or `None` when the user database has
/// no such user (a name with a NUL byte names none).
///
/// # Errors
///
/// [`Error::Io`] when the database could not be read.
pub fn user_id(name: impl AsRef<OsStr>) -> Result<Option<u32>> {
    let name = name.as_ref();
    let Ok(c_name) = CString::new(name.as_bytes()) else {
        return Ok(None);
    };
    lookup(
        |pw, buf, len, result| {
            // SAFETY: `c_name` is NUL-terminated; `pw`, `buf` (of `len`
            // bytes) and `result` are valid and writable for the call, as
            // getpwnam_r requires.
            unsafe { libc::getpwnam_r(c_name.as_ptr(), pw, buf, len, result) }
        },
        |pw| pw.pw_uid,
    )
    .map_err(|e| {
        let name = name.to_string_lossy();
        Error::io(format!("looking up user {name:?} in the user database"), e)
    })
}

/// Run a `getpw*_r` call with a buffer that grows while it is too small
/// (`ERANGE`), and give a found entry to `found`.
fn lookup<T>(
    mut call: impl FnMut(
        *mut libc::passwd,
        *mut libc::c_char,
        usize,
        *mut *mut libc::passwd,
    ) -> libc::c_int,
    found: impl FnOnce(&libc::passwd) -> T,
) -> io::Result<Option<T>> {
    // Most entries fit in 1 KiB (glibc's sysconf(_SC_GETPW_R_SIZE_MAX));
    // give up past 1 MiB.
    let mut len = 1024;
    loop {
        let mut buf = vec![0 as libc::c_char; len];
        // SAFETY: all-zero is a valid passwd (integers and null pointers).
        let mut pw: libc::passwd = unsafe { std::mem::zeroed() };
        let mut result: *mut libc::passwd = std::ptr::null_mut();
        match call(&mut pw, buf.as_mut_ptr(), len, &mut result) {
            0 if result.is_null() => return Ok(None),
            0 => return Ok(Some(found(&pw))),
            libc::ERANGE if len < 1 << 20 => len *= 4,
            libc::EINTR => {}
            // What getpwnam(3) lists as "the name or uid was not found".
            libc::ENOENT | libc::ESRCH | libc::EBADF | libc::EPERM => return Ok(None),
            errno => return Err(io::Error::from_raw_os_error(errno)),
        }
    }
}

/// User names by uid, each looked up once: for a monitor that names the
/// user of every row at every refresh.
///
/// A uid the database has no name for, or that could not be looked up,
/// is shown as its number, as `ps` does; a name that is not UTF-8 has its
/// bad bytes replaced by `U+FFFD`.
#[derive(Debug, Default, Clone)]
pub struct UserNames(HashMap<u32, String>);

impl UserNames {
    /// An empty cache.
    #[must_use]
    pub fn new() -> Self {
        UserNames::default()
    }

    /// The name of `uid`, or its number.
    pub fn get(&mut self, uid: u32) -> &str {
        self.0.entry(uid).or_insert_with(|| match user_name(uid) {
            Ok(Some(name)) => name.to_string_lossy().into_owned(),
            _ => uid.to_string(),
        })
    }

    /// Forget every name, so that the next [`get`](Self::get) of each uid
    /// asks the database again (after users were renamed).
    pub fn clear(&mut self) {
        self.0.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_and_missing() {
        assert_eq!(user_name(0).unwrap(), Some("root".into()));
        assert_eq!(user_name(3_999_999_999).unwrap(), None);
        assert_eq!(user_id("root").unwrap(), Some(0));
        assert_eq!(user_id("no-such-user-pidmap").unwrap(), None);
        assert_eq!(user_id("a\0b").unwrap(), None);
        assert_eq!(user_id("").unwrap(), None);
        let mut names = UserNames::new();
        assert_eq!(names.get(0), "root");
        assert_eq!(names.get(3_999_999_999), "3999999999");
        names.clear();
        assert_eq!(names.get(0), "root");
    }

    #[test]
    fn buffer_grows() {
        let mut calls = Vec::new();
        let got = lookup(
            |_, _, len, result| {
                calls.push(len);
                if len < 64 * 1024 {
                    return libc::ERANGE;
                }
                // SAFETY: `result` is the valid out-pointer lookup passes.
                unsafe { *result = std::ptr::NonNull::dangling().as_ptr() };
                0
            },
            |_| 7,
        )
        .unwrap();
        assert_eq!(got, Some(7));
        assert_eq!(calls, [1024, 4096, 16384, 65536]);
        let e = lookup(|_, _, _, _| libc::ERANGE, |_| ()).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ERANGE));
        let e = lookup(|_, _, _, _| libc::EIO, |_| ()).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EIO));
        assert!(lookup(|_, _, _, _| libc::ENOENT, |_| ()).unwrap().is_none());
    }
}
