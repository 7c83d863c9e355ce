//! The user that `-u USER` names. Names are the library's
//! ([`pidmap::monitor::user_id`], [`pidmap::monitor::UserNames`]): the C
//! library's user database, so NSS sources count, as they do for `ps` and
//! `top`.

use anyhow::{anyhow, Result};

/// The uid `-u USER` names: a number, or a user name.
pub fn uid_of(user: &str) -> Result<u32> {
    if let Ok(uid) = user.parse::<u32>() {
        return Ok(uid);
    }
    pidmap::monitor::user_id(user)?.ok_or_else(|| anyhow!("no such user: {user:?}"))
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
    }
}
