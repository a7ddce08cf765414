//! A counter: output `x`, then `x = x + 1 mod 2^32`.
//!
//! **This is NOT a random number generator.** It is the benchmark's speed control: the cheapest
//! possible "generator" (one add per output), so that timing a consumer (a fill, a transform,
//! a path simulation) with it measures what the consumer itself costs, and the difference from
//! a real generator is what that generator costs. Its outputs are as far from random as can
//! be; any statistical result computed from it is meaningless.
//!
//! **Period and states.** The period is `2^32`, every value is a valid state, and the raw
//! state `x` (one word) is the *next* output (unlike the LCGs here, whose state is the last
//! output).
//!
//! **Skip.** `x += n mod 2^32`: constant time.
//!
//! **Stream rule.** Stream `k` of seed `s` starts at `x = (s mod 2^32) + k * 2^20 (mod 2^32)`:
//! consecutive blocks of the one cycle, so the 4096 streams 0 to 4095 of one seed, each using at most
//! `2^20` outputs, never overlap, and stream `k + 4096` is stream `k`. The high half of the
//! seed is ignored. The spacing is `lcg32`'s, so both give streams of the same shape.
//!
//! ```
//! use warpmc_kernels::rng::{Uniform32, adder::Adder};
//! let mut g = Adder::new(u32::MAX);
//! assert_eq!((g.next_u32(), g.next_u32()), (u32::MAX, 0));
//! ```

use super::{Generator, InvalidState, Skip, Uniform32};

/// Outputs between the starts of neighbouring streams (see the module docs).
pub const STREAM_SPACING: u64 = 1 << 20;

/// Generator state: the next output `x`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(C)]
pub struct Adder {
    pub x: u32,
}

impl Adder {
    /// A counter whose first output is `x`. Every `x` is valid.
    #[inline(always)]
    pub const fn new(x: u32) -> Self {
        Self { x }
    }
}

impl Uniform32 for Adder {
    #[inline(always)]
    fn next_u32(&mut self) -> u32 {
        let out = self.x;
        self.x = self.x.wrapping_add(1);
        out
    }
}

impl Skip for Adder {
    #[inline(always)]
    fn skip(&mut self, n: u64) {
        self.x = self.x.wrapping_add(n as u32);
    }
}

// SAFETY: #[repr(C)] with one field, a u32.
unsafe impl Generator for Adder {
    const NAME: &'static str = "adder";
    const RAW_STATE: &'static str = "x";
    const RAW_STATE_WORDS: usize = 1;
    const PERIOD: &'static str = "2^32";

    /// `x = (seed mod 2^32) + stream * 2^20 (mod 2^32)` (see the module docs: at most 4096
    /// non-overlapping streams of `2^20` outputs).
    #[inline(always)]
    fn stream(seed: u64, stream: u64) -> Self {
        // Only stream mod 2^12 survives the shift, which is exactly stream * 2^20 mod 2^32.
        Self::new((seed as u32).wrapping_add((stream as u32) << 20))
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

    /// Known answers from the definition: the outputs count up from the state, wrapping.
    #[test]
    fn reference() {
        assert_eq!(first(&mut Adder::new(0), 5), [0, 1, 2, 3, 4]);
        assert_eq!(first(&mut Adder::new(u32::MAX - 1), 4), [u32::MAX - 1, u32::MAX, 0, 1]);
    }

    #[test]
    fn raw_state_follows_definition() {
        for x0 in [0u32, 12345, u32::MAX - 500] {
            let mut g = Adder::from_raw_state(&[x0]).unwrap();
            let expected: Vec<u32> = (0..1000u64).map(|i| ((u64::from(x0) + i) % (1 << 32)) as u32).collect();
            assert_eq!(first(&mut g, 1000), expected);
        }
    }

    #[test]
    fn value_stability() {
        // Pinned: the control must not change what it feeds the consumers (0x89ABCDEF + 7 * 2^20).
        assert_eq!(first(&mut Adder::stream(0, 0), 3), [0, 1, 2]);
        assert_eq!(first(&mut Adder::stream(0x0123_4567_89AB_CDEF, 7), 3), [0x8A1B_CDEF, 0x8A1B_CDF0, 0x8A1B_CDF1]);
    }

    #[test]
    fn skip_equals_steps() {
        let mut r = 88_172_645_463_325_252u64;
        let ns = skip_lengths((0..5).map(|_| xorshift64(&mut r) % 1_000_001));
        for x0 in [0, 42, u32::MAX] {
            skip_matches_stepping(Adder::new(x0), &ns);
        }
    }

    #[test]
    fn skips_compose() {
        let start = Adder::new(2024);
        skips_compose_for(start, &[(0, 5), (7, 0), (12345, 678_901), (1 << 40, 99)]);
        // u64 wrap-around is harmless: 2^64 is a multiple of the period 2^32.
        assert_eq!(skipped(skipped(start, u64::MAX), 3), skipped(start, 2));
        assert_eq!(skipped(Adder::new(9), 1 << 40), Adder::new(9));
    }

    #[test]
    fn streams_are_spaced_blocks() {
        let seed = 0xFEED_FACE_0000_0001;
        assert_eq!(Adder::stream(seed, 0), Adder::new(1));
        streams_are_spaced::<Adder>(seed, &[0, 1, 2, 100, 4095, 1 << 40, u64::MAX - 1], STREAM_SPACING);
        for k in [0u64, 1, 4095, 123_456_789] {
            assert_eq!(Adder::stream(seed, k + 4096), Adder::stream(seed, k));
        }
    }

    #[test]
    fn streams_are_distinct() {
        streams_start_distinct::<Adder>(7, 1000);
        // Both are runs of consecutive values 2^20 apart: no value in common.
        neighbours_share_no_value::<Adder>(7, 0..1000, 1000);
    }

    #[test]
    fn raw_state_word_count() {
        rejects_word_counts::<Adder>(&[&[], &[1, 2]], "it has exactly one word, x");
        assert_eq!(Adder::NAME, "adder");
        assert_eq!(Adder::from_raw_state(&[0]), Ok(Adder::new(0)));
        assert_eq!(Adder::from_raw_state(&[u32::MAX]), Ok(Adder::new(u32::MAX)));
    }
}
