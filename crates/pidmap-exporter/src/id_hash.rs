//! [`IdMap`]: a `HashMap` keyed by task ids, with a multiply-and-rotate
//! hash (as `rustc-hash`'s) instead of `SipHash`: a scrape looks up every
//! thread it reads, and the keys are numbers the kernel hands out, not
//! input an attacker picks.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A map keyed by task ids (and other small fixed-size keys).
pub type IdMap<K, V> = HashMap<K, V, BuildHasherDefault<IdHasher>>;

/// The hash of [`IdMap`].
#[derive(Default, Clone, Copy)]
pub struct IdHasher(u64);

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl IdHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for IdHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.add(u64::from(n));
    }

    fn write_i32(&mut self, n: i32) {
        self.add(u64::from(u32::from_ne_bytes(n.to_ne_bytes())));
    }

    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }

    fn write_usize(&mut self, n: usize) {
        self.add(u64::try_from(n).unwrap_or(u64::MAX));
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_spread_and_maps_work() {
        let hash = |k: (i32, i32)| {
            use std::hash::BuildHasher;
            BuildHasherDefault::<IdHasher>::default().hash_one(k)
        };
        assert_ne!(hash((1, 2)), hash((2, 1)));
        assert_ne!(hash((1, 2)), hash((1, -2)));
        let mut m: IdMap<(i32, i32), u32> = IdMap::default();
        for i in 0..1000 {
            m.insert((i, -i), u32::try_from(i).unwrap());
        }
        assert_eq!(m.len(), 1000);
        assert_eq!(m.get(&(500, -500)), Some(&500));
        assert_eq!(m.get(&(500, 500)), None);
    }
}
