//! The hybrid Tausworthe generator of GPU Gems 3, ch. 37 (Howes and Thomas, 2007).
//!
//! Three Tausworthe components, exactly L'Ecuyer's taus88 (1996), XORed with the 32-bit
//! "quick and dirty" LCG of Press et al., `z4 = 1664525 z4 + 1013904223 mod 2^32`.
//! Each Tausworthe step is `b = ((z << S1) ^ z) >> S2; z = ((z & M) << S3) ^ b`.
//!
//! | component | (S1, S2, S3, M) | period |
//! |---|---|---|
//! | z1 | (13, 19, 12, 0xFFFFFFFE) | 2^31 - 1 |
//! | z2 | (2, 25, 4, 0xFFFFFFF8) | 2^29 - 1 (the chapter's comment says 2^30 - 1; that is wrong) |
//! | z3 | (3, 11, 17, 0xFFFFFFF0) | 2^28 - 1 |
//! | z4 | LCG | 2^32 |
//!
//! The periods are coprime, so the combined period is their product, about 2^120.
//!
//! The mask `M` discards the low 1, 3 and 4 bits of z1, z2 and z3; a component whose remaining
//! bits are all zero stays zero forever. So the valid states are `z1 >= 2`, `z2 >= 8`,
//! `z3 >= 16` (any `z4`). The chapter's "all above 128" is sufficient, not necessary.
//! [`HybridTaus::from_state`] rejects invalid states; it never adjusts them.
//!
//! ```
//! use warpmc_kernels::rng::{HybridTaus, Uniform32};
//! let mut g = HybridTaus::from_state([12345; 4]).unwrap();
//! assert_eq!(g.next_u32(), 1717149490);
//! ```

use super::{Generator, InvalidState, Uniform32};

/// Smallest valid value of each Tausworthe component (z1, z2, z3).
pub const MIN_STATE: [u32; 3] = [2, 8, 16];

/// Generator state: `[z1, z2, z3, z4]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(C)]
pub struct HybridTaus {
    pub z: [u32; 4],
}

#[inline(always)]
fn taus_step<const S1: u32, const S2: u32, const S3: u32, const M: u32>(z: u32) -> u32 {
    let b = ((z << S1) ^ z) >> S2;
    ((z & M) << S3) ^ b
}

#[inline(always)]
fn lcg_step(z: u32) -> u32 {
    z.wrapping_mul(1_664_525).wrapping_add(1_013_904_223)
}

impl HybridTaus {
    /// A generator from a raw state, rejecting states with a dead Tausworthe component.
    pub fn from_state(z: [u32; 4]) -> Result<Self, InvalidState> {
        Self::check(z)?;
        Ok(Self { z })
    }

    /// Whether `z` is a valid state (see the module docs).
    #[inline(always)]
    pub fn is_valid(z: [u32; 4]) -> bool {
        z[0] >= MIN_STATE[0] && z[1] >= MIN_STATE[1] && z[2] >= MIN_STATE[2]
    }

    fn check(z: [u32; 4]) -> Result<(), InvalidState> {
        const RULES: [&str; 3] = [
            "z1 must be >= 2 (the generator discards its low 1 bit, and a component left at zero stays zero)",
            "z2 must be >= 8 (the generator discards its low 3 bits, and a component left at zero stays zero)",
            "z3 must be >= 16 (the generator discards its low 4 bits, and a component left at zero stays zero)",
        ];
        for i in 0..3 {
            if z[i] < MIN_STATE[i] {
                return Err(InvalidState { generator: Self::NAME, word: Some(i as u8), value: z[i], rule: RULES[i] });
            }
        }
        Ok(())
    }

    /// A generator from a state the caller has already validated (see [`Self::is_valid`]).
    #[inline(always)]
    pub const fn from_valid_state(z: [u32; 4]) -> Self {
        Self { z }
    }

    /// Advance all four components one step and return `z1 ^ z2 ^ z3 ^ z4`.
    #[inline(always)]
    pub fn step(&mut self) -> u32 {
        self.z[0] = taus_step::<13, 19, 12, 0xFFFF_FFFE>(self.z[0]);
        self.z[1] = taus_step::<2, 25, 4, 0xFFFF_FFF8>(self.z[1]);
        self.z[2] = taus_step::<3, 11, 17, 0xFFFF_FFF0>(self.z[2]);
        self.z[3] = lcg_step(self.z[3]);
        self.z[0] ^ self.z[1] ^ self.z[2] ^ self.z[3]
    }
}

impl Uniform32 for HybridTaus {
    #[inline(always)]
    fn next_u32(&mut self) -> u32 {
        self.step()
    }
}

// SAFETY: #[repr(C)] with one field, [u32; 4].
unsafe impl Generator for HybridTaus {
    const NAME: &'static str = "hybrid-taus";
    const RAW_STATE: &'static str = "z1,z2,z3,z4";
    const RAW_STATE_WORDS: usize = 4;
    const PERIOD: &'static str = "about 2^120";

    /// Philox-derived starting points (see [`super::streams`]).
    #[inline(always)]
    fn stream(seed: u64, stream: u64) -> Self {
        super::streams::hybrid_taus_stream(seed, stream)
    }

    fn from_raw_state(words: &[u32]) -> Result<Self, InvalidState> {
        let z: [u32; 4] = words
            .try_into()
            .map_err(|_| InvalidState::word_count(Self::NAME, "it has exactly four words, z1,z2,z3,z4"))?;
        Self::from_state(z)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::rejects_word_counts;
    use super::*;

    fn first(z: [u32; 4], n: usize) -> Vec<u32> {
        super::super::testing::first(&mut HybridTaus::from_state(z).unwrap(), n)
    }

    /// Known answers from docs/ALGORITHMS.md (computed from the definition).
    #[test]
    fn reference() {
        assert_eq!(first([12345; 4], 5), [1717149490, 1013719216, 2431227087, 838963927, 3550480589]);
        assert_eq!(first([129, 130, 131, 132], 5), [1217370641, 3227414615, 1904114233, 2387917307, 3549388247]);
    }

    /// taus88 on its own, ISO 28640:2010's check: the seed 19660809 is the first component and
    /// the others continue it by s = 1664525 s + 1, keeping values with s & 0xFFFFFFF0 != 0;
    /// the 5000th output >> 1 is 262361229.
    #[test]
    fn taus88_iso_28640() {
        let mut s: u32 = 19_660_809;
        let mut z = [0u32; 3];
        for (i, zi) in z.iter_mut().enumerate() {
            loop {
                if i > 0 {
                    s = s.wrapping_mul(1_664_525).wrapping_add(1);
                }
                if s & 0xFFFF_FFF0 != 0 {
                    *zi = s;
                    break;
                }
            }
        }
        let mut out = 0;
        for _ in 0..5000 {
            z[0] = taus_step::<13, 19, 12, 0xFFFF_FFFE>(z[0]);
            z[1] = taus_step::<2, 25, 4, 0xFFFF_FFF8>(z[1]);
            z[2] = taus_step::<3, 11, 17, 0xFFFF_FFF0>(z[2]);
            out = z[0] ^ z[1] ^ z[2];
        }
        assert_eq!(out >> 1, 262_361_229);
    }

    /// Brute-force periods of the Tausworthe components from a valid start (about a second in
    /// release; the second component's period is 2^29 - 1, not the chapter's 2^30 - 1).
    #[test]
    fn component_periods() {
        fn period(step: fn(u32) -> u32, z0: u32, mask: u32) -> u64 {
            // Compare the significant bits only: the masked-off bits are gone after one step.
            let start = step(z0) & mask;
            let mut z = step(z0);
            let mut n = 0u64;
            loop {
                z = step(z);
                n += 1;
                if z & mask == start {
                    return n;
                }
            }
        }
        assert_eq!(period(taus_step::<3, 11, 17, 0xFFFF_FFF0>, 12345, 0xFFFF_FFF0), (1 << 28) - 1);
        assert_eq!(period(taus_step::<2, 25, 4, 0xFFFF_FFF8>, 12345, 0xFFFF_FFF8), (1 << 29) - 1);
    }

    #[test]
    fn value_stability() {
        // Pinned outputs from a seed with every component just valid; a change here is
        // value-breaking for every result produced with this generator.
        assert_eq!(first([2, 8, 16, 0], 3), [1011799007, 1162872242, 2579789451]);
    }

    #[test]
    fn rejects_dead_components() {
        for (z, word, value) in [([1, 8, 16, 0], 0, 1), ([2, 7, 16, 0], 1, 7), ([2, 8, 15, 0], 2, 15)] {
            let e = HybridTaus::from_state(z).unwrap_err();
            assert_eq!((e.word, e.value), (Some(word), value));
            assert!(e.rule.starts_with(["z1 must be >= 2", "z2 must be >= 8", "z3 must be >= 16"][word as usize]));
        }
        assert!(HybridTaus::from_state([2, 8, 16, 0]).is_ok());
        rejects_word_counts::<HybridTaus>(&[&[2, 8, 16]], "it has exactly four words");
        assert_eq!(HybridTaus::from_raw_state(&[2, 8, 16, 5]), HybridTaus::from_state([2, 8, 16, 5]));
    }

    /// The validity rule is exact: a state just below each minimum is stuck at zero.
    #[test]
    fn minimum_is_tight() {
        for (z, step) in [
            (1u32, taus_step::<13, 19, 12, 0xFFFF_FFFE> as fn(u32) -> u32),
            (7, taus_step::<2, 25, 4, 0xFFFF_FFF8>),
            (15, taus_step::<3, 11, 17, 0xFFFF_FFF0>),
        ] {
            assert_eq!(step(step(z)), 0);
        }
    }
}
