//! Label values from names that may not be UTF-8.
//!
//! Prometheus label values are UTF-8. A process or thread name is bytes
//! (`comm`, `argv`), so a name that is not valid UTF-8 is escaped: every
//! byte that is not part of a valid UTF-8 sequence becomes the four
//! characters `\xNN` (lower-case hex), everything else is kept as it is.
//! The exposition format then escapes the backslash itself, so in PromQL
//! the name `a\xffb` is written `groupname="a\\xffb"`.

use std::fmt::Write;

/// `bytes` as a label value: valid UTF-8 unchanged, every other byte as
/// `\xNN`.
pub fn label_value(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        for byte in chunk.invalid() {
            // Writing to a String cannot fail.
            let _ = write!(out, "\\x{byte:02x}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::label_value;

    #[test]
    fn utf8_names_are_kept() {
        assert_eq!(label_value(b"nginx"), "nginx");
        assert_eq!(label_value("caf\u{e9}".as_bytes()), "caf\u{e9}");
    }

    #[test]
    fn invalid_bytes_are_hex_escaped() {
        assert_eq!(label_value(b"a\xffb"), "a\\xffb");
        // A truncated sequence: the lead byte and the next valid char.
        assert_eq!(label_value(b"\xc3x"), "\\xc3x");
        assert_eq!(label_value(b"\xfe\xff"), "\\xfe\\xff");
    }
}
