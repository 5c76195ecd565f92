//! 64-bit FNV-1a, the hash the stored weights are keyed by. Written here because the hash must
//! stay the same across crate versions and platforms, which std's and most crates' hashers do
//! not promise. Free of other modules, so that `build.rs` packs the shipped weights with the
//! very same function.

/// An FNV-1a hasher.
pub struct Fnv(u64);

impl Fnv {
    /// A hasher at the FNV offset basis.
    pub fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    /// Hashes more bytes.
    pub fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    /// The hash so far.
    pub fn finish(&self) -> u64 {
        self.0
    }
}

impl Default for Fnv {
    fn default() -> Fnv {
        Fnv::new()
    }
}

/// The hash a key is stored under.
pub fn hash_key(key: &str) -> u64 {
    let mut h = Fnv::new();
    h.write(key.as_bytes());
    h.finish()
}
