//! [`RawId`]: the ids the kernel hands out as `i32`s ([`Pid`]s and fd
//! numbers), for the code that lists either kind.

use std::fmt;

use crate::pid::Pid;

/// An id type the kernel hands out as an `i32` ([`Pid`] or an fd number).
pub(crate) trait RawId: bytemuck::Pod + Ord + fmt::Debug {
    fn from_raw_id(id: i32) -> Self;
    fn raw_id(self) -> i32;
}

impl RawId for Pid {
    fn from_raw_id(id: i32) -> Self {
        Pid::from_raw(id)
    }
    fn raw_id(self) -> i32 {
        self.as_raw()
    }
}

impl RawId for i32 {
    fn from_raw_id(id: i32) -> Self {
        id
    }
    fn raw_id(self) -> i32 {
        self
    }
}
