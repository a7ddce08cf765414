//! GQ58.4 of the PRAND "GM" family of Barash and Shchur ("PRAND: GPU accelerated parallel random
//! number generation library", Comput. Phys. Commun. 185 (2014) 1343; RNGSSELIB, Comput. Phys.
//! Commun. 184 (2013) 2367). The family's machinery and the reasoning behind it are in
//! [`super::gm_common`].
//!
//! **Definition.** 8 orbits of `x_n = (8 x_{n-1} - 48 x_{n-2}) mod g`, `g = 2^29 p`,
//! `p = 2^29 - 3` (prime), so `g = 2^58 - 3 * 2^29 = 288230374541099008`. Orbit `j` starts at
//! `(x_{(j+1)N}, x_{(j+1)N+1})`, `N = 35048736516210783`, of the base sequence from `(x0, x1) =
//! (100152853817629549, 132388305121829306)` (GQ58.1's base). Each call advances all 8 orbits once
//! and takes 4 bits `floor(16 x / g)` from each new value: orbit `j`'s nibble is shifted left by
//! `0, 8, 16, 24, 4, 12, 20, 28` for `j = 0..8`.
//!
//! **Working units.** Mod `2^29` the recurrence is nilpotent (`8 = 2^3`, `48 = 2^4 * 3`): from
//! `x_16` on, every `x_n` is a multiple of `2^29`, `x_n = 2^29 y_n` with
//! `y_n = (8 y_{n-1} - 48 y_{n-2}) mod p`. The orbits start far past that transient, so the state
//! holds `y < 2^29`, and the nibble is `floor(16 y / p)` (`2^29 y / (2^25 p)`)
//! ([`super::gm_common`]).
//!
//! **State.** 16 words: `prev[j] = y_{n-1}` and `cur[j] = y_n` of orbit `j` (`x = 2^29 y`), each
//! `< p`.
//!
//! **Period and valid states.** `X^2 - 8 X + 48` is primitive mod `p`, so every pair that is not
//! zero mod `p` reaches (after the transient) one cycle of `P = p^2 - 1` (about `2^58`) steps. The
//! 8 orbits split it: `8 N <= P`, so each orbit runs `N` (about `3.5 * 10^16 = 2^55`) steps before
//! it reaches the start of the next orbit; after that, output words reuse earlier orbit values in
//! other bit positions. `N` outputs is the budget shared by every stream and seed. The raw state is
//! the base pair `x0, x1` as four words `x0_lo, x0_hi, x1_lo, x1_hi`: each value `< g`, and not
//! both multiples of `p` (such a pair reaches zero and stays there). Raw pairs that agree mod `p`
//! give the same generator: the part mod `2^29` dies in the transient.
//!
//! **Streams (block splitting).** Stream `k` of seed `s` starts `D = s 2^40 + k L` steps into the
//! published sequence, `L = 82927047` (PRAND's `gq58x4_init_short_sequence_`; its medium and long
//! spacings, 8799201913 and 828317697521, are reachable with [`Skip::skip`]): every orbit is jumped
//! by `D`, so stream `k` continues where stream `k - 1`'s `L` outputs end, and a GPU run of
//! consecutive streams reproduces the sequential stream. Seed 0, stream 0 is the published
//! generator. Streams with `D + len <= N` whose starts are at least `len` apart never share an
//! orbit value ([`super::gm_common`]). So:
//! - streams `0 <= k < 13258` (`13258 L <= 2^40`) of seeds `0 <= s <= 31875` (`31876 * 2^40 <= N`),
//!   each used for at most `L` outputs, are pairwise disjoint;
//! - with seed 0 alone, streams `0 <= k < 422645418 = floor(N / L)` of `L` outputs are disjoint
//!   (PRAND offers 3 * 10^8 of up to 8 * 10^7);
//! - stream `k >= 13258` of seed `s` runs into the first streams of seed `s + 1` (overlapping
//!   segments, offset by `2^40 mod L`), and seeds `s >= 31876` start beyond `N`, in the region of
//!   other orbits of earlier seeds.
//!
//! **Skip.** `skip(n)` raises the one-step jump to the `n`-th power (at most 64 squarings and 64
//! products of six multiplications mod `p`) and applies it to each orbit (four multiplications
//! and a step each). `stream` costs two such powers.
//!
//! **Cost and quality.** Every output word costs 8 orbit steps (one multiply-add and a fold each)
//! and 8 bucket lookups without division. Each nibble comes from one linear recurrence mod `p`, and
//! all come from one sequence at 8 offsets. Quality is not measured here; see the
//! authors' papers for their test results.
//!
//! ```
//! use warpmc_kernels::rng::{Generator, Uniform32, gq58_4::Gq584};
//! let mut g = Gq584::stream(0, 0);
//! assert_eq!(g.next_u32(), 3992599244);
//! ```

use super::gm_common::{Family, Jump, RawRules, Recurrence};
use super::{Generator, InvalidState, Skip, Uniform32};

/// The recurrence mod `p = 2^29 - 3` and the orbit layout (`g = 2^29 p`).
pub const FAMILY: Family = Family {
    rec: Recurrence { e: 29, c: 3, k: 8, q: 48 },
    t: 29,
    orbits: 8,
    wide: false,
    orbit_spacing: 35_048_736_516_210_783,
};
/// The published base pair `(x0, x1)`.
pub const BASE: (u64, u64) = (100_152_853_817_629_549, 132_388_305_121_829_306);
/// Outputs between the starts of neighbouring streams (`L`, PRAND's short sequences).
pub const STREAM_SPACING: u64 = 82_927_047;
/// Steps between the starts of neighbouring seeds.
pub const SEED_SPACING: u64 = 1 << 40;

const _: () = assert!(FAMILY.is_consistent::<8>());

/// The published orbits (seed 0, stream 0), evaluated at compile time.
static START: ([u32; 8], [u32; 8]) = FAMILY.orbits_from_base(BASE.0, BASE.1);
const STREAM_JUMP: Jump = FAMILY.rec.jump(STREAM_SPACING as u128);
const SEED_JUMP: Jump = FAMILY.rec.jump(SEED_SPACING as u128);

/// Generator state: the last two values of each of the 8 orbits, in working units `y = x / 2^29`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct Gq584 {
    /// `y_{n-1}` of orbit `j`.
    pub prev: [u32; 8],
    /// `y_n` of orbit `j`.
    pub cur: [u32; 8],
}

const RULES: RawRules = RawRules {
    count: "it has exactly four words, x0_lo,x0_hi,x1_lo,x1_hi",
    x0: "x0 = x0_lo + 2^32 x0_hi must be < g = 2^29 (2^29 - 3) = 288230374541099008 (values are residues mod g)",
    x1: "x1 = x1_lo + 2^32 x1_hi must be < g = 2^29 (2^29 - 3) = 288230374541099008 (values are residues mod g)",
    zero: "x0 and x1 must not both be multiples of p = 2^29 - 3 (every orbit would reach zero and stay there)",
};

impl Uniform32 for Gq584 {
    #[inline(always)]
    fn next_u32(&mut self) -> u32 {
        FAMILY.next_nibbles(&mut self.prev, &mut self.cur)
    }
}

// SAFETY: #[repr(C)] with two fields, both [u32; 8]: 16 words, no padding.
unsafe impl Generator for Gq584 {
    const NAME: &'static str = "gq58-4";
    const RAW_STATE: &'static str = "x0_lo,x0_hi,x1_lo,x1_hi";
    const RAW_STATE_WORDS: usize = 4;

    /// The published sequence skipped by `seed 2^40 + stream L` (see the module docs).
    fn stream(seed: u64, stream: u64) -> Self {
        let (prev, cur) = FAMILY.stream_start(&START, SEED_JUMP, seed, STREAM_JUMP, stream);
        Self { prev, cur }
    }

    fn from_raw_state(words: &[u32]) -> Result<Self, InvalidState> {
        let (x0, x1) = FAMILY.parse_raw(Self::NAME, &RULES, words)?;
        let (prev, cur) = FAMILY.orbits_from_base(x0, x1);
        Ok(Self { prev, cur })
    }
}

impl Skip for Gq584 {
    #[inline(always)]
    fn skip(&mut self, n: u64) {
        FAMILY.skip(&mut self.prev, &mut self.cur, n);
    }
}

#[cfg(test)]
mod tests {
    use super::super::gm_common::definition::{Assembly, Definition, prand_check, sum};
    use super::super::testing::*;
    use super::*;

    const P: u64 = (1 << 29) - 3;
    const G: u64 = P << 29;

    fn definition() -> Definition {
        let g = G as u128;
        Definition { g, k: 8, q: 48, spacing: 35048736516210783, orbits: 8, assembly: Assembly::Nibbles }
    }

    fn raw(x0: u64, x1: u64) -> [u32; 4] {
        [x0 as u32, (x0 >> 32) as u32, x1 as u32, (x1 >> 32) as u32]
    }

    /// The first outputs of the published generator ([R] in ALGORITHMS.md), from the generator
    /// and from the definition.
    #[test]
    fn reference() {
        let expected = [3992599244, 2916225011, 1367819961, 2284688513, 3543032124];
        assert_eq!(first(&mut Gq584::stream(0, 0), 5), expected);
        assert_eq!(definition().outputs(BASE.0 as u128, BASE.1 as u128, 5), expected);
        assert_eq!(FAMILY.g(), G);
        let words = [1795857261, 23318653, 1261691322, 30824054];
        assert_eq!(raw(BASE.0, BASE.1), words);
        assert_eq!(Gq584::from_raw_state(&words), Ok(Gq584::stream(0, 0)));
    }

    /// PRAND's check: frac((sum of the first 10^8 words) / 2^32) = 0.065003, next word / 2^32 =
    /// 0.876562. 8 * 10^8 orbit steps, about 1.3 s in release.
    #[test]
    fn reference_prand_sum() {
        let mut g = Gq584::stream(0, 0);
        assert_eq!(prand_check(|| g.next_u32()), "0.065003 0.876562");
    }

    /// A regression value computed with this implementation (which matches the published 10^8
    /// check above): the sum of the first 10^6 words.
    #[test]
    fn regression_sum() {
        let mut g = Gq584::stream(0, 0);
        assert_eq!(sum(|| g.next_u32(), 1_000_000), 2145542035705354);
    }

    /// The definition in `x` mod `g` (with its transient) against the generator in `y` mod `p`.
    #[test]
    fn from_raw_state_follows_definition() {
        for (x0, x1) in [BASE, (1, 0), (0, 1), (G - 1, G - 1), (P, 1), (1 << 29, 0), (12345, 1 << 57)] {
            let mut g = Gq584::from_raw_state(&raw(x0, x1)).unwrap();
            assert_eq!(first(&mut g, 2000), definition().outputs(x0 as u128, x1 as u128, 2000), "{x0}, {x1}");
        }
        // Pairs that agree mod p are the same generator.
        assert_eq!(Gq584::from_raw_state(&raw(5, 7)), Gq584::from_raw_state(&raw(5 + 3 * P, 7 + (1 << 28) * P)));
    }

    #[test]
    fn value_stability() {
        // Pinned: a change here changes every result produced with this generator.
        assert_eq!(first(&mut Gq584::stream(0, 5), 3), [2839455470, 1261435727, 3242744188]);
        assert_eq!(first(&mut Gq584::stream(3, 100), 3), [2832240970, 540512679, 2685307924]);
    }

    /// Orbit `j + 1` starts `N` steps after orbit `j`.
    #[test]
    fn orbits_are_spaced() {
        let g = Gq584::stream(0, 0);
        let spacing = FAMILY.rec.jump(FAMILY.orbit_spacing);
        for j in 0..7 {
            let next = FAMILY.rec.apply(spacing, FAMILY.load(&g.prev, j), FAMILY.load(&g.cur, j));
            assert_eq!(next, (FAMILY.load(&g.prev, j + 1), FAMILY.load(&g.cur, j + 1)), "orbit {j}");
        }
    }

    #[test]
    fn skip_equals_stepping() {
        let mut r = 1u64;
        let ns = skip_lengths((0..5).map(|_| splitmix64(&mut r) % 1_000_001));
        skip_matches_stepping(Gq584::stream(0, 0), &ns);
        skip_matches_stepping(Gq584::from_raw_state(&raw(G - 1, 1)).unwrap(), &ns);
    }

    #[test]
    fn skips_compose() {
        let pairs = [(0, 5), (17, 1 << 40), (123_456_789, 987_654_321_000), (u64::MAX / 2, u64::MAX / 2)];
        skips_compose_for(Gq584::stream(1, 2), &pairs);
        // The cycle has length P = p^2 - 1 (below 2^64).
        assert_eq!(skipped(Gq584::stream(1, 2), P * P - 1), Gq584::stream(1, 2));
        skips_are_cheap(Gq584::stream(0, 0), (0..1000u64).map(|i| u64::MAX - i));
    }

    #[test]
    fn streams() {
        let starts = streams_start_distinct::<Gq584>(0, 1000);
        assert_eq!(starts[0], Gq584::from_raw_state(&raw(BASE.0, BASE.1)).unwrap());
        streams_are_spaced::<Gq584>(0, &[0, 1, 2, 13257, 422645417], STREAM_SPACING);
        streams_are_spaced::<Gq584>(7, &[0, 1 << 40], STREAM_SPACING);
        // Seed s starts s 2^40 steps in.
        for s in [1u64, 2, 31875] {
            assert_eq!(Gq584::stream(s, 3), skipped(Gq584::stream(0, 3), s << 40));
        }
        neighbours_share_no_value::<Gq584>(0, [0, 1, 2, 999], 1000);
        neighbours_share_no_value::<Gq584>(3, [0, 13256], 1000);
        seed_and_stream_halves_matter::<Gq584>();
    }

    #[test]
    fn invalid_states() {
        assert!(Gq584::from_raw_state(&raw(G - 1, G - 1)).is_ok());
        assert!(Gq584::from_raw_state(&raw(0, 1)).is_ok());
        assert!(Gq584::from_raw_state(&raw(P, 1)).is_ok());
        assert!(Gq584::from_raw_state(&raw(1 << 29, 0)).is_ok());
        let hi = (G >> 32) as u32;
        for (words, word, value, rule) in [
            (raw(G, 0), 1, hi, "x0 = x0_lo + 2^32 x0_hi must be < g"),
            (raw(1, G), 3, hi, "x1 = x1_lo + 2^32 x1_hi must be < g"),
            (raw(u64::MAX, 1), 1, u32::MAX, "x0 "),
            (raw(0, 1 << 58), 3, 1 << 26, "x1 "),
        ] {
            let e = Gq584::from_raw_state(&words).unwrap_err();
            assert_eq!((e.generator, e.word, e.value), ("gq58-4", Some(word), value), "{words:?}");
            assert!(e.rule.starts_with(rule), "{}", e.rule);
        }
        for (x0, x1) in [(0, 0), (P, 0), (0, 15 * P), (3 * P, ((1 << 29) - 1) * P)] {
            let e = Gq584::from_raw_state(&raw(x0, x1)).unwrap_err();
            assert_eq!((e.word, e.value), (None, 0));
            assert!(e.rule.starts_with("x0 and x1 must not both be multiples of p"));
        }
        rejects_word_counts::<Gq584>(&[&[], &[1, 2], &[1, 2, 3], &[1, 2, 3, 4, 5]], "it has exactly four words");
    }

    /// Why multiples of p are rejected: such a pair reaches zero within the transient and stays.
    #[test]
    fn multiples_of_p_die() {
        let d = definition();
        let mut o = [(3 * P as u128, 7 * P as u128)];
        for _ in 0..20 {
            d.next(&mut o);
        }
        assert_eq!(o[0], (0, 0));
    }
}
