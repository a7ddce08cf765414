//! GM31 of the PRAND "GM" family of Barash and Shchur ("PRAND: GPU accelerated parallel random
//! number generation library", Comput. Phys. Commun. 185 (2014) 1343; RNGSSELIB, Comput. Phys.
//! Commun. 182 (2011) 1518). The family's machinery and the reasoning behind it are in
//! [`super::gm_common`].
//!
//! **Definition.** 32 orbits of `x_n = (11 x_{n-1} - 14 x_{n-2}) mod g`,
//! `g = 2^31 - 1 = 2147483647` (prime). Orbit `j` starts at `(x_{(j+1)N}, x_{(j+1)N+1})`,
//! `N = 144115183781032008`, of the base sequence from `(x0, x1) = (554937932, 1253942293)`. Each
//! call advances all 32 orbits once; bit `j` of the output word is 1 when orbit `j`'s new value is
//! `>= 2^30 = 1073741824`.
//!
//! **State.** 64 words: `prev[j] = x_{n-1}` and `cur[j] = x_n` of orbit `j`, each `< g`.
//!
//! **Period and valid states.** `X^2 - 11 X + 14` is primitive mod `g`, so every nonzero pair lies
//! on one cycle of `P = g^2 - 1` (about 4.6 * 10^18 = 2^62) steps. The 32 orbits split it:
//! `32 N <= P`, so each orbit runs `N` (about 1.4 * 10^17 = 2^57) steps before it reaches the start
//! of the next orbit; after that, output words are shifted copies of earlier ones (bits `0..31` of
//! a word are bits `1..32` of an earlier one). `N` outputs is the budget shared by every stream and
//! seed. The raw state is the base pair `x0, x1` (each `< g`, not both zero); the 32 orbits are
//! built from it as above.
//!
//! **Streams (block splitting).** Stream `k` of seed `s` starts `D = s 2^40 + k L` steps into the
//! published sequence, `L = 82927047` (PRAND's `gm31_init_short_sequence_`; its medium and long
//! spacings, 8799201913 and 828317697521, are reachable with [`Skip::skip`]): every orbit is jumped
//! by `D`, so stream `k` continues where stream `k - 1`'s `L` outputs end, and a GPU run of
//! consecutive streams reproduces the sequential stream. Seed 0, stream 0 is the published
//! generator. Streams with `D + len <= N` whose starts are at least `len` apart never share an
//! orbit value ([`super::gm_common`]). So:
//! - streams `0 <= k < 13258` (`13258 L <= 2^40`) of seeds `0 <= s <= 131070`
//!   (`131071 * 2^40 <= N`), each used for at most `L` outputs, are pairwise disjoint;
//! - with seed 0 alone, streams `0 <= k < 1737855006 = floor(N / L)` of `L` outputs are disjoint
//!   (PRAND offers 10^9 of up to 8 * 10^7);
//! - stream `k >= 13258` of seed `s` runs into the first streams of seed `s + 1` (overlapping
//!   segments, offset by `2^40 mod L`), and seeds `s >= 131071` start beyond `N`, in the region of
//!   shifted copies of earlier seeds' words (and the cycle wraps after `P`).
//!
//! **Skip.** `skip(n)` raises the one-step jump to the `n`-th power (at most 64 squarings and 64
//! products of six multiplications mod `g`) and applies it to each orbit (four multiplications
//! and a step each). `stream` costs two such powers.
//!
//! **Cost and quality.** Every output word costs 32 orbit steps (one multiply-add and a fold each),
//! several times a Tausworthe step. Each output bit is a threshold of one linear recurrence mod
//! `g`, and all bits come from one sequence at 32 offsets. Quality is not measured here; see the
//! authors' papers for their test results.
//!
//! ```
//! use warpmc_kernels::rng::{Generator, Uniform32, gm31::Gm31};
//! let mut g = Gm31::stream(0, 0);
//! assert_eq!(g.next_u32(), 4293320464);
//! ```

use super::gm_common::{Family, Jump, RawRules, Recurrence};
use super::{Generator, InvalidState, Skip, Uniform32};

/// The recurrence and orbit layout.
pub const FAMILY: Family = Family {
    rec: Recurrence { e: 31, c: 1, k: 11, q: 14 },
    t: 0,
    orbits: 32,
    wide: false,
    orbit_spacing: 144_115_183_781_032_008,
};
/// The published base pair `(x0, x1)`.
pub const BASE: (u64, u64) = (554_937_932, 1_253_942_293);
/// An orbit's new value `>= THRESHOLD` gives a 1 bit.
pub const THRESHOLD: u64 = 1 << 30;
/// Outputs between the starts of neighbouring streams (`L`, PRAND's short sequences).
pub const STREAM_SPACING: u64 = 82_927_047;
/// Steps between the starts of neighbouring seeds.
pub const SEED_SPACING: u64 = 1 << 40;

const _: () = assert!(FAMILY.is_consistent::<32>());

/// The published orbits (seed 0, stream 0), evaluated at compile time.
static START: ([u32; 32], [u32; 32]) = FAMILY.orbits_from_base(BASE.0, BASE.1);
const STREAM_JUMP: Jump = FAMILY.rec.jump(STREAM_SPACING as u128);
const SEED_JUMP: Jump = FAMILY.rec.jump(SEED_SPACING as u128);

/// Generator state: the last two values of each of the 32 orbits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct Gm31 {
    /// `x_{n-1}` of orbit `j`.
    pub prev: [u32; 32],
    /// `x_n` of orbit `j`.
    pub cur: [u32; 32],
}

const RULES: RawRules = RawRules {
    count: "it has exactly two words, x0,x1",
    x0: "x0 must be < g = 2^31 - 1 = 2147483647 (values are residues mod g)",
    x1: "x1 must be < g = 2^31 - 1 = 2147483647 (values are residues mod g)",
    zero: "x0 and x1 must not both be zero (every orbit would stay zero)",
};

impl Uniform32 for Gm31 {
    #[inline(always)]
    fn next_u32(&mut self) -> u32 {
        FAMILY.next_bits(&mut self.prev, &mut self.cur, THRESHOLD)
    }
}

// SAFETY: #[repr(C)] with two fields, both [u32; 32]: 64 words, no padding.
unsafe impl Generator for Gm31 {
    const NAME: &'static str = "gm31";
    const RAW_STATE: &'static str = "x0,x1";
    const RAW_STATE_WORDS: usize = 2;

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

impl Skip for Gm31 {
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
        Definition {
            g: 2147483647,
            k: 11,
            q: 14,
            spacing: 144115183781032008,
            orbits: 32,
            assembly: Assembly::OneBit(1 << 30),
        }
    }

    /// The first outputs of the published generator ([R] in ALGORITHMS.md), from the generator
    /// and from the definition.
    #[test]
    fn reference() {
        let expected = [4293320464, 2011781859, 517669476, 510187734, 459027413];
        assert_eq!(first(&mut Gm31::stream(0, 0), 5), expected);
        assert_eq!(definition().outputs(554937932, 1253942293, 5), expected);
        assert_eq!(Gm31::from_raw_state(&[554937932, 1253942293]), Ok(Gm31::stream(0, 0)));
    }

    /// PRAND's check: frac((sum of the first 10^8 words) / 2^32) = 0.219147, next word / 2^32 =
    /// 0.351754. 3.2 * 10^9 orbit steps, about 4.8 s in release: run with `--ignored`.
    #[test]
    #[ignore = "10^8 words, about 4.8 s in release"]
    fn reference_prand_sum() {
        let mut g = Gm31::stream(0, 0);
        assert_eq!(prand_check(|| g.next_u32()), "0.219147 0.351754");
    }

    /// A regression value computed with this implementation (which matches the published 10^8
    /// check above): the sum of the first 10^6 words.
    #[test]
    fn regression_sum() {
        let mut g = Gm31::stream(0, 0);
        assert_eq!(sum(|| g.next_u32(), 1_000_000), 2146496435340193);
    }

    #[test]
    fn from_raw_state_follows_definition() {
        for (x0, x1) in [(554937932, 1253942293), (1, 0), (0, 1), (2147483646, 2147483646), (12345, 67890)] {
            let mut g = Gm31::from_raw_state(&[x0, x1]).unwrap();
            assert_eq!(first(&mut g, 2000), definition().outputs(x0 as u128, x1 as u128, 2000), "{x0}, {x1}");
        }
    }

    #[test]
    fn value_stability() {
        // Pinned: a change here changes every result produced with this generator.
        assert_eq!(first(&mut Gm31::stream(0, 5), 3), [590988495, 2197888537, 2640844227]);
        assert_eq!(first(&mut Gm31::stream(3, 100), 3), [1805325562, 4254696059, 3634466893]);
    }

    /// Orbit `j + 1` starts `N` steps after orbit `j`.
    #[test]
    fn orbits_are_spaced() {
        let g = Gm31::stream(0, 0);
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
        skip_matches_stepping(Gm31::stream(0, 0), &ns);
        skip_matches_stepping(Gm31::from_raw_state(&[1, 0]).unwrap(), &ns);
    }

    #[test]
    fn skips_compose() {
        let pairs = [(0, 5), (17, 1 << 40), (123_456_789, 987_654_321_000), (u64::MAX / 2, u64::MAX / 2)];
        skips_compose_for(Gm31::stream(1, 2), &pairs);
        // The cycle has length P = g^2 - 1 (below 2^64).
        let p = 2147483647u64 * 2147483647 - 1;
        assert_eq!(skipped(Gm31::stream(1, 2), p), Gm31::stream(1, 2));
        skips_are_cheap(Gm31::stream(0, 0), (0..1000u64).map(|i| u64::MAX - i));
    }

    #[test]
    fn streams() {
        let starts = streams_start_distinct::<Gm31>(0, 1000);
        assert_eq!(starts[0], Gm31::from_raw_state(&[554937932, 1253942293]).unwrap());
        streams_are_spaced::<Gm31>(0, &[0, 1, 2, 13257, 1737855005], STREAM_SPACING);
        streams_are_spaced::<Gm31>(7, &[0, 1 << 40], STREAM_SPACING);
        // Seed s starts s 2^40 steps in.
        for s in [1u64, 2, 131070] {
            assert_eq!(Gm31::stream(s, 3), skipped(Gm31::stream(0, 3), s << 40));
        }
        neighbours_share_no_value::<Gm31>(0, [0, 1, 2, 999], 1000);
        neighbours_share_no_value::<Gm31>(3, [0, 13256], 1000);
        seed_and_stream_halves_matter::<Gm31>();
    }

    #[test]
    fn invalid_states() {
        let g = 2147483647u32;
        assert!(Gm31::from_raw_state(&[g - 1, g - 1]).is_ok());
        assert!(Gm31::from_raw_state(&[0, 1]).is_ok());
        for (words, word, value, rule) in
            [([g, 0], 0, g, "x0 must be < g"), ([1, g], 1, g, "x1 must be < g"), ([u32::MAX, 1], 0, u32::MAX, "x0 ")]
        {
            let e = Gm31::from_raw_state(&words).unwrap_err();
            assert_eq!((e.generator, e.word, e.value), ("gm31", Some(word), value));
            assert!(e.rule.starts_with(rule), "{}", e.rule);
        }
        let e = Gm31::from_raw_state(&[0, 0]).unwrap_err();
        assert_eq!((e.word, e.value), (None, 0));
        assert!(e.rule.starts_with("x0 and x1 must not both be zero"));
        rejects_word_counts::<Gm31>(&[&[], &[1], &[1, 2, 3]], "it has exactly two words");
    }
}
