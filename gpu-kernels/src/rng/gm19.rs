//! GM19, the smallest generator of the PRAND "GM" family of Barash and Shchur ("PRAND: GPU
//! accelerated parallel random number generation library", Comput. Phys. Commun. 185 (2014)
//! 1343; first in RNGSSELIB, Comput. Phys. Commun. 182 (2011) 1518). The family's machinery and
//! the reasoning behind it are in [`super::gm_common`].
//!
//! **Definition.** 32 orbits of `x_n = (15 x_{n-1} - 28 x_{n-2}) mod g`, `g = 2^19 - 1 = 524287`
//! (prime). Orbit `j` starts at `(x_{(j+1)N}, x_{(j+1)N+1})`, `N = 8382841959`, of the base
//! sequence from `(x0, x1) = (514932, 127293)`. Each call advances all 32 orbits once; bit `j` of
//! the output word is 1 when orbit `j`'s new value is `>= 262144 = 2^18`.
//!
//! **State.** 64 words: `prev[j] = x_{n-1}` and `cur[j] = x_n` of orbit `j`, each `< g`.
//!
//! **Period and valid states.** `X^2 - 15 X + 28` is primitive mod `g`, so every nonzero pair lies
//! on one cycle of `P = g^2 - 1 = 2^38 - 2^20` steps (about 2.7 * 10^11). The 32 orbits split it:
//! `32 N <= P`, so each orbit runs `N` (about 8.4 * 10^9 = 2^33) steps before it reaches the
//! start of the next orbit; after that, output words are shifted copies of earlier ones. GM19 is
//! a small generator: `N` outputs is its whole budget, shared by every stream and seed. The raw
//! state is the base pair `x0, x1` (each `< g`, not both zero); the 32 orbits are built from it
//! as above.
//!
//! **Streams (block splitting).** Stream `k` of seed `s` starts `D = (128 s + k) L` steps into the
//! published sequence, `L = 6927047` (PRAND's `gm19_init_sequence_`): every orbit is jumped by `D`,
//! so stream `k` continues where stream `k - 1`'s `L` outputs end and a GPU run of consecutive
//! streams reproduces the sequential stream. Seed 0, stream 0 is the published generator. Streams
//! with `D + len <= N` and starts at least `len` apart never share an orbit value
//! ([`super::gm_common`]): that is `floor(N / L) = 1210` streams of `L` outputs in all, e.g. seeds
//! 0 to 8 with streams 0 to 127 each (PRAND offers 1000 sequences of up to 6 * 10^6). Stream
//! `k >= 128` of seed `s` *is* stream `k - 128` of seed `s + 1`, and a stream with `D > N` (from
//! `128 s + k = 1211` on) has the words of the block `D - N` shifted by one bit (orbit `j` there is
//! orbit `j + 1` here). A seed spacing of 2^40 steps, as for the larger generators, would be worse:
//! `2^40 = 2^22 mod P`, less than one stream apart.
//!
//! **Skip.** `skip(n)` raises the one-step jump to the `n`-th power (at most 64 squarings and 64
//! products of six multiplications mod `g`) and applies it to each orbit (four multiplications
//! and a step each). `stream` costs two such powers.
//!
//! **Cost and quality.** Every output word costs 32 orbit steps (one multiply-add and a fold each),
//! several times a Tausworthe step. Each output bit is a threshold of one linear recurrence mod
//! `g`, and all bits come from one sequence at 32 offsets; the short cycle limits it to small jobs.
//! Quality is not measured here; see the authors' papers for their test results.
//!
//! ```
//! use warpmc_kernels::rng::{Generator, Uniform32, gm19::Gm19};
//! let mut g = Gm19::stream(0, 0);
//! assert_eq!(g.next_u32(), 2481458146);
//! ```

use super::gm_common::{Family, Jump, RawRules, Recurrence};
use super::{Generator, InvalidState, Skip, Uniform32};

/// The recurrence and orbit layout.
pub const FAMILY: Family = Family {
    rec: Recurrence { e: 19, c: 1, k: 15, q: 28 },
    t: 0,
    orbits: 32,
    wide: false,
    orbit_spacing: 8_382_841_959,
};
/// The published base pair `(x0, x1)`.
pub const BASE: (u64, u64) = (514_932, 127_293);
/// An orbit's new value `>= THRESHOLD` gives a 1 bit.
pub const THRESHOLD: u64 = 262_144;
/// Outputs between the starts of neighbouring streams (`L`).
pub const STREAM_SPACING: u64 = 6_927_047;
/// Streams per seed: seed `s + 1` starts `128 L` steps after seed `s`.
pub const STREAMS_PER_SEED: u64 = 128;

const _: () = assert!(FAMILY.is_consistent::<32>());

/// The published orbits (seed 0, stream 0), evaluated at compile time.
static START: ([u32; 32], [u32; 32]) = FAMILY.orbits_from_base(BASE.0, BASE.1);
const STREAM_JUMP: Jump = FAMILY.rec.jump(STREAM_SPACING as u128);
const SEED_JUMP: Jump = FAMILY.rec.jump(STREAMS_PER_SEED as u128 * STREAM_SPACING as u128);

/// Generator state: the last two values of each of the 32 orbits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct Gm19 {
    /// `x_{n-1}` of orbit `j`.
    pub prev: [u32; 32],
    /// `x_n` of orbit `j`.
    pub cur: [u32; 32],
}

const RULES: RawRules = RawRules {
    count: "it has exactly two words, x0,x1",
    x0: "x0 must be < g = 2^19 - 1 = 524287 (values are residues mod g)",
    x1: "x1 must be < g = 2^19 - 1 = 524287 (values are residues mod g)",
    zero: "x0 and x1 must not both be zero (every orbit would stay zero)",
};

impl Uniform32 for Gm19 {
    #[inline(always)]
    fn next_u32(&mut self) -> u32 {
        FAMILY.next_bits(&mut self.prev, &mut self.cur, THRESHOLD)
    }
}

// SAFETY: #[repr(C)] with two fields, both [u32; 32]: 64 words, no padding.
unsafe impl Generator for Gm19 {
    const NAME: &'static str = "gm19";
    const RAW_STATE: &'static str = "x0,x1";
    const RAW_STATE_WORDS: usize = 2;

    /// The published sequence skipped by `(128 seed + stream) L` (see the module docs).
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

impl Skip for Gm19 {
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

    fn definition() -> Definition {
        Definition { g: 524287, k: 15, q: 28, spacing: 8382841959, orbits: 32, assembly: Assembly::OneBit(262144) }
    }

    /// The first outputs of the published generator ([R] in ALGORITHMS.md), from the generator
    /// and from the definition.
    #[test]
    fn reference() {
        let expected = [2481458146, 742541813, 499751709, 324483849, 2122535118];
        assert_eq!(first(&mut Gm19::stream(0, 0), 5), expected);
        assert_eq!(definition().outputs(514932, 127293, 5), expected);
        assert_eq!(Gm19::from_raw_state(&[514932, 127293]), Ok(Gm19::stream(0, 0)));
    }

    /// PRAND's check: frac((sum of the first 10^8 words) / 2^32) = 0.898518, next word / 2^32 =
    /// 0.124352. 3.2 * 10^9 orbit steps, about 4.4 s in release: run with `--ignored`.
    #[test]
    #[ignore = "10^8 words, about 4.4 s in release"]
    fn reference_prand_sum() {
        let mut g = Gm19::stream(0, 0);
        assert_eq!(prand_check(|| g.next_u32()), "0.898518 0.124352");
    }

    /// A regression value computed with this implementation (which matches the published 10^8
    /// check above): the sum of the first 10^6 words.
    #[test]
    fn regression_sum() {
        let mut g = Gm19::stream(0, 0);
        assert_eq!(sum(|| g.next_u32(), 1_000_000), 2147935829452849);
    }

    #[test]
    fn from_raw_state_follows_definition() {
        for (x0, x1) in [(514932, 127293), (1, 0), (0, 1), (524286, 524286), (12345, 67890)] {
            let mut g = Gm19::from_raw_state(&[x0, x1]).unwrap();
            assert_eq!(first(&mut g, 2000), definition().outputs(x0 as u128, x1 as u128, 2000), "{x0}, {x1}");
        }
    }

    #[test]
    fn value_stability() {
        // Pinned: a change here changes every result produced with this generator.
        assert_eq!(first(&mut Gm19::stream(0, 5), 3), [444621589, 4022425337, 983715480]);
        assert_eq!(first(&mut Gm19::stream(3, 100), 3), [3086932345, 1657013744, 207100582]);
    }

    /// Orbit `j + 1` starts `N` steps after orbit `j`.
    #[test]
    fn orbits_are_spaced() {
        let g = Gm19::stream(0, 0);
        let spacing = FAMILY.rec.jump(FAMILY.orbit_spacing);
        for j in 0..31 {
            let (p, c) = FAMILY.rec.apply(spacing, g.prev[j] as u64, g.cur[j] as u64);
            assert_eq!((p, c), (g.prev[j + 1] as u64, g.cur[j + 1] as u64), "orbit {j}");
        }
    }

    #[test]
    fn skip_equals_stepping() {
        let mut r = 1u64;
        let ns = skip_lengths((0..5).map(|_| splitmix64(&mut r) % 1_000_001));
        skip_matches_stepping(Gm19::stream(0, 0), &ns);
        skip_matches_stepping(Gm19::from_raw_state(&[1, 0]).unwrap(), &ns);
    }

    #[test]
    fn skips_compose() {
        let p = (1u64 << 38) - (1 << 20);
        let pairs = [(0, 5), (17, 1 << 40), (123_456_789, 987_654_321_000), (u64::MAX / 2, u64::MAX / 2), (p, 1)];
        skips_compose_for(Gm19::stream(1, 2), &pairs);
        // The cycle has length P = g^2 - 1 exactly.
        assert_eq!(skipped(Gm19::stream(1, 2), p), Gm19::stream(1, 2));
        skips_are_cheap(Gm19::stream(0, 0), (0..1000u64).map(|i| u64::MAX - i));
    }

    #[test]
    fn streams() {
        let starts = streams_start_distinct::<Gm19>(0, 1000);
        assert_eq!(starts[0], Gm19::from_raw_state(&[514932, 127293]).unwrap());
        streams_are_spaced::<Gm19>(0, &[0, 1, 2, 500, 1209], STREAM_SPACING);
        streams_are_spaced::<Gm19>(7, &[0, 127, 1 << 40], STREAM_SPACING);
        // Seed s is stream 128 s of seed 0.
        for s in [1u64, 2, 8] {
            assert_eq!(Gm19::stream(s, 3), Gm19::stream(0, 128 * s + 3));
        }
        neighbours_share_no_value::<Gm19>(0, [0, 1, 2, 999], 1000);
        neighbours_share_no_value::<Gm19>(3, [0, 126], 1000);
        seed_and_stream_halves_matter::<Gm19>();
    }

    #[test]
    fn invalid_states() {
        let g = 524287u32;
        assert!(Gm19::from_raw_state(&[g - 1, g - 1]).is_ok());
        assert!(Gm19::from_raw_state(&[0, 1]).is_ok());
        for (words, word, value, rule) in
            [([g, 0], 0, g, "x0 must be < g"), ([1, g], 1, g, "x1 must be < g"), ([u32::MAX, 1], 0, u32::MAX, "x0 ")]
        {
            let e = Gm19::from_raw_state(&words).unwrap_err();
            assert_eq!((e.generator, e.word, e.value), ("gm19", Some(word), value));
            assert!(e.rule.starts_with(rule), "{}", e.rule);
        }
        let e = Gm19::from_raw_state(&[0, 0]).unwrap_err();
        assert_eq!((e.word, e.value), (None, 0));
        assert!(e.rule.starts_with("x0 and x1 must not both be zero"));
        rejects_word_counts::<Gm19>(&[&[], &[1], &[1, 2, 3]], "it has exactly two words");
    }
}
