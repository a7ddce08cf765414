//! The "quick and dirty" 32-bit linear congruential generator of Numerical Recipes (Press,
//! Teukolsky, Vetterling and Flannery, *Numerical Recipes in C*, 2nd ed., 1992, §7.1):
//! `x = 1664525 x + 1013904223 mod 2^32`; each output is the new `x`.
//!
//! **A baseline, not a generator to use.** It is in warpmc for the seeds' comparison table (and
//! as the cheapest "real" generator in the benchmark). Its low bits are very poor: bit `i` of
//! the output has period `2^(i+1)` (the lowest bit alternates 1, 0, 1, 0, ...), and consecutive
//! outputs lie on few hyperplanes, as for every LCG. Use only the high bits, and only for
//! comparison.
//!
//! **Period and states.** The increment is odd and `a - 1 = 1664524` is divisible by 4, so by
//! the Hull–Dobell theorem the period is the full `2^32` and every 32-bit value is a valid state
//! (all states lie on one cycle). The raw state is `x` (one word, any value).
//!
//! **Skip.** `x -> a x + c` is affine, and composing it with itself gives the affine map
//! `(a, c) o (a, c) = (a^2, a c + c)` (mod 2^32). [`Skip::skip`] raises the map to the `n`-th
//! power by squaring: at most 32 squarings and 32 compositions (a few multiplications each),
//! because the full period makes `n` matter only mod `2^32`.
//!
//! **Stream rule: block splitting of one sequence.** Stream `k` of seed `s` starts at
//! `x0 = (s mod 2^32) ^ (s >> 32)` jumped ahead by `k * 2^20` outputs. Streams are consecutive
//! blocks of the one cycle of length `2^32`, so:
//! - the 4096 streams 0 to 4095 of one seed, each using at most `2^20` outputs, never overlap;
//! - stream `k + 4096` *is* stream `k` (same state): with more than 4096 streams, or more than
//!   `2^20` outputs per stream, streams overlap. There is no way around it: the whole cycle is
//!   only `2^32` outputs;
//! - two different seeds are two starting points on the same cycle, so their streams can
//!   overlap; seeds with the same `(s mod 2^32) ^ (s >> 32)` give identical streams.
//!
//! ```
//! use warpmc_kernels::rng::{Uniform32, lcg32::Lcg32};
//! let mut g = Lcg32::new(0);
//! assert_eq!(g.next_u32(), 1013904223);
//! assert_eq!(g.next_u32(), 1196435762);
//! ```

use super::{Generator, InvalidState, Skip, Uniform32};

/// The multiplier `a`.
pub const A: u32 = 1_664_525;
/// The increment `c`.
pub const C: u32 = 1_013_904_223;
/// Outputs between the starts of neighbouring streams (see the module docs).
pub const STREAM_SPACING: u64 = 1 << 20;

/// Generator state: the last output `x` (the next output is `A x + C`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(C)]
pub struct Lcg32 {
    pub x: u32,
}

/// The affine map `x -> a x + c` applied `n` times, as `(a_n, c_n)`, all mod 2^32.
#[inline(always)]
fn affine_power(n: u32) -> (u32, u32) {
    // (pa, pc) is the map to the power 2^i at the i-th bit of n; (ra, rc) the product so far.
    // All powers of one map commute, so the order of composition does not matter.
    let (mut pa, mut pc) = (A, C);
    let (mut ra, mut rc) = (1u32, 0u32);
    let mut n = n;
    while n != 0 {
        if n & 1 != 0 {
            ra = pa.wrapping_mul(ra);
            rc = pa.wrapping_mul(rc).wrapping_add(pc);
        }
        pc = pa.wrapping_mul(pc).wrapping_add(pc);
        pa = pa.wrapping_mul(pa);
        n >>= 1;
    }
    (ra, rc)
}

impl Lcg32 {
    /// A generator whose first output is `A x + C`. Every `x` is valid.
    #[inline(always)]
    pub const fn new(x: u32) -> Self {
        Self { x }
    }

    /// Advance one step and return the new `x`.
    #[inline(always)]
    pub fn step(&mut self) -> u32 {
        self.x = self.x.wrapping_mul(A).wrapping_add(C);
        self.x
    }
}

impl Uniform32 for Lcg32 {
    #[inline(always)]
    fn next_u32(&mut self) -> u32 {
        self.step()
    }
}

impl Skip for Lcg32 {
    #[inline(always)]
    fn skip(&mut self, n: u64) {
        // The period is exactly 2^32 (Hull–Dobell), so only n mod 2^32 matters.
        let (a, c) = affine_power(n as u32);
        self.x = a.wrapping_mul(self.x).wrapping_add(c);
    }
}

// SAFETY: #[repr(C)] with one field, a u32.
unsafe impl Generator for Lcg32 {
    const NAME: &'static str = "lcg32";
    const RAW_STATE: &'static str = "x";
    const RAW_STATE_WORDS: usize = 1;
    const PERIOD: &'static str = "2^32";

    /// Block splitting: `x0 = (seed mod 2^32) ^ (seed >> 32)` jumped by `stream * 2^20` outputs
    /// (see the module docs: at most 4096 non-overlapping streams of `2^20` outputs).
    #[inline(always)]
    fn stream(seed: u64, stream: u64) -> Self {
        let mut g = Self::new((seed as u32) ^ ((seed >> 32) as u32));
        // stream * 2^20 mod 2^32 without a 64-bit overflow: only stream mod 2^12 survives.
        g.skip(u64::from((stream as u32) << 20));
        g
    }

    fn from_raw_state(words: &[u32]) -> Result<Self, InvalidState> {
        match words {
            [x] => Ok(Self::new(*x)),
            _ => Err(InvalidState::word_count(Self::NAME, "it has exactly one word, x (any value is valid)")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::*;

    /// The definition computed independently: in u64, reduced with `%`.
    fn by_definition(x0: u32, n: usize) -> Vec<u32> {
        let mut x = u64::from(x0);
        (0..n)
            .map(|_| {
                x = (1_664_525 * x + 1_013_904_223) % (1u64 << 32);
                x as u32
            })
            .collect()
    }

    /// Known answers: from x = 0 the first output is the increment, 1013904223; the rest follow
    /// from the recurrence (computed here and cross-checked with u64 arithmetic).
    #[test]
    fn reference() {
        let expected = [1013904223, 1196435762, 3519870697, 2868466484, 1649599747];
        assert_eq!(first(&mut Lcg32::new(0), 5), expected);
        assert_eq!(by_definition(0, 5), expected);
        // Same in hex, the form in which Numerical Recipes tabulates this generator.
        assert_eq!(expected, [0x3C6E_F35F, 0x4750_2932, 0xD1CC_F6E9, 0xAAF9_5334, 0x6252_E503]);
    }

    #[test]
    fn raw_state_follows_definition() {
        for x0 in [0, 1, 12345, 0x8000_0000, u32::MAX] {
            let mut g = Lcg32::from_raw_state(&[x0]).unwrap();
            assert_eq!(first(&mut g, 1000), by_definition(x0, 1000));
        }
    }

    #[test]
    fn value_stability() {
        // Pinned: a change here changes every result produced with this generator. The second
        // pair was also checked by stepping the recurrence 7 * 2^20 times outside Rust (Python).
        assert_eq!(first(&mut Lcg32::stream(0, 0), 3), [1013904223, 1196435762, 3519870697]);
        assert_eq!(first(&mut Lcg32::stream(0x0123_4567_89AB_CDEF, 7), 3), [3883668039, 905128698, 257015313]);
    }

    /// The caveat in the module docs: the low `i + 1` bits of the output repeat every `2^(i+1)`
    /// outputs, whatever the start.
    #[test]
    fn low_bits_have_short_periods() {
        let out = first(&mut Lcg32::new(987_654_321), 1024);
        for i in 0..8 {
            let (mask, p) = ((2u32 << i) - 1, 2usize << i);
            assert!((0..out.len() - p).all(|j| out[j] & mask == out[j + p] & mask), "bit {i}");
        }
        assert!(out.windows(2).all(|w| (w[0] ^ w[1]) & 1 == 1));
    }

    #[test]
    fn skip_equals_steps() {
        // A small xorshift picks the "random" n; it needs no dependency.
        let mut r = 88_172_645_463_325_252u64;
        let ns = skip_lengths((0..5).map(|_| xorshift64(&mut r) % 1_000_001));
        for x0 in [0, 42, u32::MAX] {
            skip_matches_stepping(Lcg32::new(x0), &ns);
        }
    }

    #[test]
    fn skips_compose() {
        let start = Lcg32::new(2024);
        skips_compose_for(start, &[(0, 5), (7, 0), (1, 1), (12345, 678_901), (1 << 31, 1 << 31), (1 << 40, 99)]);
        // u64 wrap-around is harmless: 2^64 is a multiple of the period 2^32.
        assert_eq!(skipped(skipped(start, u64::MAX), 3), skipped(start, 2));
    }

    /// The period is exactly 2^32: jumping 2^32 (or 2^40) is the identity, 2^31 is not.
    #[test]
    fn period_is_2_pow_32() {
        for x0 in [0, 1, 0xDEAD_BEEF] {
            let g = Lcg32::new(x0);
            assert_eq!(skipped(g, 1 << 32), g);
            assert_eq!(skipped(g, 1 << 40), g);
            assert_eq!(skipped(g, (1 << 32) + 5), skipped(g, 5));
            assert_ne!(skipped(g, 1 << 31), g);
        }
    }

    #[test]
    fn large_skips_are_cheap() {
        skips_are_cheap(Lcg32::new(1), (0..100_000u64).map(|i| (1 << 40) + i * STREAM_SPACING + 0xFFFF_FFFF));
    }

    #[test]
    fn streams_are_spaced_blocks() {
        let seed = 0xFEED_FACE_0000_0001;
        assert_eq!(Lcg32::stream(seed, 0), Lcg32::new(0xFEED_FACE ^ 1));
        streams_are_spaced::<Lcg32>(seed, &[0, 1, 2, 100, 4094, 1 << 40], STREAM_SPACING);
        // The documented limit: the cycle holds 4096 blocks, then the streams wrap.
        for k in [0u64, 1, 4095, 123_456_789] {
            assert_eq!(Lcg32::stream(seed, k + 4096), Lcg32::stream(seed, k));
        }
        assert_eq!(Lcg32::stream(seed, u64::MAX), Lcg32::stream(seed, 4095));
    }

    #[test]
    fn streams_are_distinct() {
        streams_start_distinct::<Lcg32>(7, 1000);
        // Neighbouring streams share no output among their first 1000 (all outputs within one
        // period are distinct, so this also rules out shifted copies).
        neighbours_share_no_value::<Lcg32>(7, 0..999, 1000);
        // Seeds fold to 32 bits; the high half changes the stream.
        assert_ne!(Lcg32::stream(1 << 32, 0), Lcg32::stream(0, 0));
    }

    #[test]
    fn raw_state_word_count() {
        rejects_word_counts::<Lcg32>(&[&[], &[1, 2]], "it has exactly one word, x");
        assert_eq!(Lcg32::NAME, "lcg32");
        assert_eq!(Lcg32::from_raw_state(&[0]), Ok(Lcg32::new(0)));
        assert_eq!(Lcg32::from_raw_state(&[u32::MAX]), Ok(Lcg32::new(u32::MAX)));
    }
}
