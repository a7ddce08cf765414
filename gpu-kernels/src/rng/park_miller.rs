//! Park and Miller's "minimal standard" generator (S. K. Park and K. W. Miller, "Random number
//! generators: good ones are hard to find", CACM 31(10), 1988): the multiplicative LCG
//! `x = 16807 x mod (2^31 - 1)`. It is C++'s `minstd_rand0`.
//!
//! **Output word: `x << 1`.** The values `x` are 31-bit numbers in `[1, 2^31 - 2]`. Every
//! consumer in warpmc reads a word as 32 uniform bits (Box-Muller takes the angle from the
//! whole word and the radius from its top bits), so the generator presents its 31 bits at the
//! top: each output word is the new `x` shifted left by one, and its lowest bit is always 0.
//! (Returned unshifted, the always-zero top bit made every Box-Muller sine non-negative: paths
//! only rose, and the Asian basket priced to exactly 0.) `warpmc generate --generator
//! park-miller` therefore prints `2 x`; [`ParkMiller::step`] returns `x` itself.
//!
//! **A baseline, not for serious use.** It is in warpmc for the seeds' comparison table: 31
//! bits per word, 0 and `2^31 - 1` never occur, the period of about 2^31 is exhausted in well
//! under a second on a GPU, and it fails many standard empirical tests.
//!
//! **Period and states.** The modulus `2^31 - 1` is prime and 16807 = 7^5 is a primitive root
//! of it, so from every `x` in `[1, 2^31 - 2]` the period is `2^31 - 2` (all valid states lie
//! on one cycle). `x = 0` is a fixed point and values `>= 2^31 - 1` are not reduced residues, so
//! the raw state `x` (one word) must be in `[1, 2^31 - 2]`; [`ParkMiller::from_state`] rejects
//! anything else and never adjusts it.
//!
//! **Arithmetic.** The product `16807 x` is formed in 64 bits (below 2^46) and reduced by
//! folding: since `2^31 = 1 (mod 2^31 - 1)`, `p = (p mod 2^31) + (p >> 31) (mod 2^31 - 1)`, and
//! after one fold the value is below `2 (2^31 - 1)`, so one conditional subtraction finishes it.
//! That is a shift, a mask, an add and a compare, where a 64-bit `%` would cost a
//! multiply-high sequence (or a slow emulated division on the GPU). Schrage's method is not
//! needed: it exists to avoid 64-bit products, which both targets have.
//!
//! **Skip.** `n` steps multiply `x` by `16807^n mod (2^31 - 1)`; [`Skip::skip`] reduces `n`
//! mod the period and computes the power by square-and-multiply: at most 31 squarings and 31
//! multiplications mod `2^31 - 1`, whatever `n`.
//!
//! **Stream rule: block splitting of one sequence.** Stream `k` of seed `s` starts at
//! `x0 = 1 + (s mod (2^31 - 2))` jumped ahead by `k * 2^20` outputs. Streams are consecutive
//! blocks of the one cycle of length `2^31 - 2`, so:
//! - the 2047 streams 0 to 2046 of one seed, each using at most `2^20` outputs, never overlap
//!   (`2047 * 2^20 <= 2^31 - 2`); stream 2047 may use only `2^20 - 2` outputs before it reaches
//!   stream 0's first output;
//! - stream `k + 2048` starts just 2 outputs after stream `k` (`2048 * 2^20 = 2^31 = period + 2`),
//!   so beyond 2047 streams they overlap almost entirely: there is no way around it with a
//!   cycle this short;
//! - two different seeds are two starting points on the same cycle, so their streams can
//!   overlap; seeds equal mod `2^31 - 2` give identical streams.
//!
//! ```
//! use warpmc_kernels::rng::{Uniform32, park_miller::ParkMiller};
//! let mut g = ParkMiller::from_state(1).unwrap();
//! assert_eq!(g.next_u32(), 16807 << 1);
//! assert_eq!(g.step(), 282475249);
//! ```

use super::{Generator, InvalidState, Skip, Uniform32};

/// The modulus `2^31 - 1` (prime).
pub const M: u32 = 0x7FFF_FFFF;
/// The multiplier `7^5`.
pub const A: u32 = 16_807;
/// The period, `M - 1 = 2^31 - 2`.
pub const PERIOD: u64 = M as u64 - 1;
/// Outputs between the starts of neighbouring streams (see the module docs).
pub const STREAM_SPACING: u64 = 1 << 20;

/// Generator state: the last output `x`, in `[1, 2^31 - 2]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(C)]
pub struct ParkMiller {
    pub x: u32,
}

/// `a b mod (2^31 - 1)` for `a, b < 2^31`.
#[inline(always)]
fn mul_mod(a: u32, b: u32) -> u32 {
    let p = u64::from(a) * u64::from(b);
    // p < 2^62, so the fold is at most (2^31 - 1) + (2^31 - 1) = 2M: two subtractions at most.
    let mut r = (p & u64::from(M)) + (p >> 31);
    if r >= u64::from(M) {
        r -= u64::from(M);
    }
    if r >= u64::from(M) {
        r -= u64::from(M);
    }
    r as u32
}

/// `16807^e mod (2^31 - 1)` by square-and-multiply.
#[inline(always)]
fn a_pow(e: u64) -> u32 {
    let (mut base, mut r, mut e) = (A, 1u32, e);
    while e != 0 {
        if e & 1 != 0 {
            r = mul_mod(r, base);
        }
        base = mul_mod(base, base);
        e >>= 1;
    }
    r
}

impl ParkMiller {
    /// A generator from a raw state, rejecting `x` outside `[1, 2^31 - 2]`.
    pub fn from_state(x: u32) -> Result<Self, InvalidState> {
        const RULE_ZERO: &str = "x must be in [1, 2^31 - 2]: 0 is a fixed point of x -> 16807 x";
        const RULE_HIGH: &str =
            "x must be in [1, 2^31 - 2]: values at or above the modulus 2^31 - 1 are not reduced residues";
        if Self::is_valid(x) {
            Ok(Self { x })
        } else {
            let rule = if x == 0 { RULE_ZERO } else { RULE_HIGH };
            Err(InvalidState { generator: Self::NAME, word: Some(0), value: x, rule })
        }
    }

    /// Whether `x` is a valid state, `1 <= x <= 2^31 - 2`.
    #[inline(always)]
    pub const fn is_valid(x: u32) -> bool {
        x >= 1 && x < M
    }

    /// Advance one step and return the new `x`.
    #[inline(always)]
    pub fn step(&mut self) -> u32 {
        // Cheaper than mul_mod: p < 2^46 here, so the fold is below 2^31 + 2^15 < 2M and one
        // subtraction suffices. It never yields M itself: p is not a multiple of the prime M.
        let p = u64::from(A) * u64::from(self.x);
        let mut r = (p & u64::from(M)) + (p >> 31);
        if r >= u64::from(M) {
            r -= u64::from(M);
        }
        self.x = r as u32;
        self.x
    }

    /// Advance by `e` steps, `e` already reduced mod the period.
    #[inline(always)]
    fn advance(&mut self, e: u64) {
        self.x = mul_mod(a_pow(e), self.x);
    }
}

impl Uniform32 for ParkMiller {
    /// The new `x` in the word's top 31 bits (see the module docs).
    #[inline(always)]
    fn next_u32(&mut self) -> u32 {
        self.step() << 1
    }
}

impl Skip for ParkMiller {
    #[inline(always)]
    fn skip(&mut self, n: u64) {
        // 16807 has order exactly 2^31 - 2, so only n mod the period matters.
        self.advance(n % PERIOD);
    }
}

// SAFETY: #[repr(C)] with one field, a u32.
unsafe impl Generator for ParkMiller {
    const NAME: &'static str = "park-miller";
    const RAW_STATE: &'static str = "x";
    const RAW_STATE_WORDS: usize = 1;
    const PERIOD: &'static str = "2^31 - 2";

    /// Block splitting: `x0 = 1 + seed mod (2^31 - 2)` jumped by `stream * 2^20` outputs (see the
    /// module docs: at most 2047 non-overlapping streams of `2^20` outputs).
    #[inline(always)]
    fn stream(seed: u64, stream: u64) -> Self {
        let mut g = Self { x: 1 + (seed % PERIOD) as u32 };
        // stream * 2^20 would overflow u64 for stream >= 2^44; reduce first (below 2^51 after).
        g.advance(((stream % PERIOD) * STREAM_SPACING) % PERIOD);
        g
    }

    fn from_raw_state(words: &[u32]) -> Result<Self, InvalidState> {
        match words {
            [x] => Self::from_state(*x),
            _ => Err(InvalidState::word_count(Self::NAME, "it has exactly one word, x, in [1, 2^31 - 2]")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::*;

    /// The first `n` values of `x` (output words shifted back).
    fn first(g: &mut ParkMiller, n: usize) -> Vec<u32> {
        let words = super::super::testing::first(g, n);
        assert!(words.iter().all(|w| w & 1 == 0), "the low bit of an output word is 0");
        words.into_iter().map(|w| w >> 1).collect()
    }

    fn pm(x: u32) -> ParkMiller {
        ParkMiller::from_state(x).unwrap()
    }

    /// The definition computed independently: u64 `%`, no folding.
    fn by_definition(x0: u32, n: usize) -> Vec<u32> {
        let mut x = u64::from(x0);
        (0..n)
            .map(|_| {
                x = 16_807 * x % 2_147_483_647;
                x as u32
            })
            .collect()
    }

    /// Published known answer (docs/ALGORITHMS.md, [P]; C++ `minstd_rand0`): from x = 1 the
    /// 10,000th value is 1043618065. The first values are powers of 16807.
    #[test]
    fn reference() {
        let out = first(&mut pm(1), 10_000);
        assert_eq!(out[9_999], 1_043_618_065);
        assert_eq!(out[..3], [16_807, 16_807 * 16_807, 1_622_650_073]);
        assert_eq!(out, by_definition(1, 10_000));
        let mut g = pm(1);
        g.skip(10_000);
        assert_eq!(g.x, 1_043_618_065);
    }

    #[test]
    fn raw_state_follows_definition() {
        for x0 in [1, 2, 12345, M / 2, M - 2, M - 1] {
            let mut g = ParkMiller::from_raw_state(&[x0]).unwrap();
            assert_eq!(first(&mut g, 1000), by_definition(x0, 1000));
        }
    }

    #[test]
    fn mul_mod_matches_u64_remainder() {
        let edge = [0, 1, 2, A, M / 2, M - 2, M - 1];
        for a in edge {
            for b in edge {
                assert_eq!(u64::from(mul_mod(a, b)), u64::from(a) * u64::from(b) % u64::from(M), "{a} * {b}");
            }
        }
    }

    #[test]
    fn value_stability() {
        // Pinned: a change here changes every result produced with this generator. The second
        // pair was also checked by stepping the recurrence 7 * 2^20 times outside Rust (Python).
        assert_eq!(first(&mut ParkMiller::stream(0, 0), 3), [16_807, 282_475_249, 1_622_650_073]);
        assert_eq!(first(&mut ParkMiller::stream(0x0123_4567_89AB_CDEF, 7), 3), [1495317324, 1944627274, 796970425]);
    }

    /// 16807 is a primitive root mod 2^31 - 1, so the period is 2^31 - 2 from every valid
    /// state: its order divides 2^31 - 2 = 2 3^2 7 11 31 151 331 and no proper divisor.
    #[test]
    fn period_is_2_pow_31_minus_2() {
        assert_eq!(2u64 * 9 * 7 * 11 * 31 * 151 * 331, PERIOD);
        assert_eq!(a_pow(PERIOD), 1);
        for q in [2, 3, 7, 11, 31, 151, 331] {
            assert_ne!(a_pow(PERIOD / q), 1, "q = {q}");
        }
    }

    #[test]
    fn top_bit_is_zero() {
        assert!(first(&mut pm(M - 2), 100_000).iter().all(|&v| v >> 31 == 0 && (1..M).contains(&v)));
    }

    #[test]
    fn skip_equals_steps() {
        let mut r = 88_172_645_463_325_252u64;
        let ns = skip_lengths((0..5).map(|_| xorshift64(&mut r) % 1_000_001));
        for x0 in [1, 42, M - 2] {
            skip_matches_stepping(pm(x0), &ns);
        }
    }

    #[test]
    fn skips_compose() {
        skips_compose_for(
            pm(2024),
            &[(0, 5), (7, 0), (1, 1), (12345, 678_901), (PERIOD - 1, 3), (1 << 40, 99), (u64::MAX / 2, 1 << 50)],
        );
        assert_eq!(skipped(pm(5), PERIOD), pm(5));
        assert_eq!(skipped(pm(5), PERIOD + 3), skipped(pm(5), 3));
    }

    /// A jump of 2^40 equals 2^20 jumps of 2^20 (each checked against stepping above); a
    /// hundred thousand large jumps take milliseconds.
    #[test]
    fn large_skips_are_cheap() {
        let mut g = pm(1);
        for _ in 0..1 << 20 {
            g.skip(STREAM_SPACING);
        }
        assert_eq!(g, skipped(pm(1), 1 << 40));
        skips_are_cheap(g, (0..100_000u64).map(|i| (1 << 40) + i * STREAM_SPACING + u64::from(u32::MAX)));
    }

    #[test]
    fn streams_are_spaced_blocks() {
        let seed = 0xFEED_FACE_0000_0001;
        assert_eq!(ParkMiller::stream(seed, 0).x as u64, 1 + seed % PERIOD);
        assert_eq!(ParkMiller::stream(PERIOD - 1, 0).x, M - 1);
        assert_eq!(ParkMiller::stream(PERIOD, 0), ParkMiller::stream(0, 0));
        streams_are_spaced::<ParkMiller>(seed, &[0, 1, 2, 100, 2046, 2047, 1 << 40, u64::MAX - 1], STREAM_SPACING);
        // The documented limit: stream k + 2048 starts 2 outputs after stream k.
        for k in [0u64, 1, 2047, 123_456_789] {
            let mut g = ParkMiller::stream(seed, k);
            g.skip(2);
            assert_eq!(ParkMiller::stream(seed, k + 2048), g);
        }
        // Stream 2047's 2^20 - 2 outputs end just before stream 0's first output.
        let mut g = ParkMiller::stream(seed, 2047);
        g.skip(STREAM_SPACING - 2);
        assert_eq!(g, ParkMiller::stream(seed, 0));
    }

    #[test]
    fn streams_are_distinct() {
        for g in streams_start_distinct::<ParkMiller>(7, 1000) {
            assert!(ParkMiller::is_valid(g.x));
        }
        // Neighbouring streams share no output among their first 1000 (all outputs within one
        // period are distinct, so this also rules out shifted copies).
        neighbours_share_no_value::<ParkMiller>(7, 0..999, 1000);
    }

    #[test]
    fn rejects_invalid_states() {
        for x in [0, M, M + 1, 0x8000_0000, u32::MAX] {
            let e = ParkMiller::from_state(x).unwrap_err();
            assert_eq!((e.generator, e.word, e.value), ("park-miller", Some(0), x));
            assert!(e.rule.starts_with("x must be in [1, 2^31 - 2]"), "{}", e.rule);
            assert_eq!(ParkMiller::from_raw_state(&[x]), Err(e));
        }
        assert!(ParkMiller::from_state(0).unwrap_err().rule.contains("fixed point"));
        assert!(ParkMiller::from_state(M).unwrap_err().rule.contains("modulus"));
        assert_eq!(ParkMiller::from_state(1), Ok(ParkMiller { x: 1 }));
        assert_eq!(ParkMiller::from_state(M - 1), Ok(ParkMiller { x: M - 1 }));
        rejects_word_counts::<ParkMiller>(&[&[], &[1, 1]], "it has exactly one word, x");
    }
}
