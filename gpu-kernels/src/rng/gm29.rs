//! GM29.1 of the PRAND "GM" family of Barash and Shchur ("PRAND: GPU accelerated parallel random
//! number generation library", Comput. Phys. Commun. 185 (2014) 1343; RNGSSELIB, Comput. Phys.
//! Commun. 182 (2011) 1518). The family's machinery and the reasoning behind it are in
//! [`super::gm_common`].
//!
//! **Definition.** 32 orbits of `x_n = (4 x_{n-1} - 2 x_{n-2}) mod g`, `g = 2^29 - 3 = 536870909`
//! (prime). Orbit `j` starts at `(x_{(j+1)N}, x_{(j+1)N+1})`, `N = 9007198285571818`, of the base
//! sequence from `(x0, x1) = (514932, 127293)`. Each call advances all 32 orbits once; bit `j` of
//! the output word is 1 when orbit `j`'s new value is `>= 2^28 = 268435456`.
//!
//! **State.** 64 words: `prev[j] = x_{n-1}` and `cur[j] = x_n` of orbit `j`, each `< g`.
//!
//! **Period and valid states.** `X^2 - 4 X + 2` is primitive mod `g`, so every nonzero pair lies on
//! one cycle of `P = g^2 - 1` (about 2.9 * 10^17 = 2^58) steps. The 32 orbits split it:
//! `32 N <= P`, so each orbit runs `N` (about 9.0 * 10^15 = 2^53) steps before it reaches the start
//! of the next orbit; after that, output words are shifted copies of earlier ones (bits `0..31` of
//! a word are bits `1..32` of an earlier one). `N` outputs is the budget shared by every stream and
//! seed. The raw state is the base pair `x0, x1` (each `< g`, not both zero); the 32 orbits are
//! built from it as above.
//!
//! **Streams (block splitting).** Stream `k` of seed `s` starts `D = s 2^40 + k L` steps into the
//! published sequence, `L = 82927047` (PRAND's `gm29_init_short_sequence_`; its medium and long
//! spacings, 8799201913 and 828317697521, are reachable with [`Skip::skip`]): every orbit is jumped
//! by `D`, so stream `k` continues where stream `k - 1`'s `L` outputs end, and a GPU run of
//! consecutive streams reproduces the sequential stream. Seed 0, stream 0 is the published
//! generator. Streams with `D + len <= N` whose starts are at least `len` apart never share an
//! orbit value ([`super::gm_common`]). So:
//! - streams `0 <= k < 13258` (`13258 L <= 2^40`) of seeds `0 <= s <= 8190` (`8191 * 2^40 <= N`),
//!   each used for at most `L` outputs, are pairwise disjoint;
//! - with seed 0 alone, streams `0 <= k < 108615929 = floor(N / L)` of `L` outputs are disjoint
//!   (PRAND offers 10^8 of up to 8 * 10^7);
//! - stream `k >= 13258` of seed `s` runs into the first streams of seed `s + 1` (overlapping
//!   segments, offset by `2^40 mod L`), and seeds `s >= 8191` start beyond `N`, in the region of
//!   shifted copies of seed `s - 8191`'s words (and the cycle wraps after `P`).
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
//! use warpmc_kernels::rng::{Generator, Uniform32, gm29::Gm29};
//! let mut g = Gm29::stream(0, 0);
//! assert_eq!(g.next_u32(), 3860964450);
//! ```

use super::gm_common::{Family, Jump, RawRules, Recurrence};
use super::{Generator, InvalidState, Skip, Uniform32};

/// The recurrence and orbit layout.
pub const FAMILY: Family = Family {
    rec: Recurrence { e: 29, c: 3, k: 4, q: 2 },
    t: 0,
    orbits: 32,
    wide: false,
    orbit_spacing: 9_007_198_285_571_818,
};
/// The published base pair `(x0, x1)`.
pub const BASE: (u64, u64) = (514_932, 127_293);
/// An orbit's new value `>= THRESHOLD` gives a 1 bit.
pub const THRESHOLD: u64 = 1 << 28;
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
pub struct Gm29 {
    /// `x_{n-1}` of orbit `j`.
    pub prev: [u32; 32],
    /// `x_n` of orbit `j`.
    pub cur: [u32; 32],
}

const RULES: RawRules = RawRules {
    count: "it has exactly two words, x0,x1",
    x0: "x0 must be < g = 2^29 - 3 = 536870909 (values are residues mod g)",
    x1: "x1 must be < g = 2^29 - 3 = 536870909 (values are residues mod g)",
    zero: "x0 and x1 must not both be zero (every orbit would stay zero)",
};

impl Uniform32 for Gm29 {
    #[inline(always)]
    fn next_u32(&mut self) -> u32 {
        FAMILY.next_bits(&mut self.prev, &mut self.cur, THRESHOLD)
    }
}

// SAFETY: #[repr(C)] with two fields, both [u32; 32]: 64 words, no padding.
unsafe impl Generator for Gm29 {
    const NAME: &'static str = "gm29";
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

impl Skip for Gm29 {
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
            g: 536870909,
            k: 4,
            q: 2,
            spacing: 9007198285571818,
            orbits: 32,
            assembly: Assembly::OneBit(1 << 28),
        }
    }

    /// The first outputs of the published generator ([R] in ALGORITHMS.md), from the generator
    /// and from the definition.
    #[test]
    fn reference() {
        let expected = [3860964450, 3418542724, 505840115, 4261471899, 4173086020];
        assert_eq!(first(&mut Gm29::stream(0, 0), 5), expected);
        assert_eq!(definition().outputs(514932, 127293, 5), expected);
        assert_eq!(Gm29::from_raw_state(&[514932, 127293]), Ok(Gm29::stream(0, 0)));
    }

    /// PRAND's check: frac((sum of the first 10^8 words) / 2^32) = 0.301769, next word / 2^32 =
    /// 0.689350. 3.2 * 10^9 orbit steps, about 4.5 s in release: run with `--ignored`.
    #[test]
    #[ignore = "10^8 words, about 4.5 s in release"]
    fn reference_prand_sum() {
        let mut g = Gm29::stream(0, 0);
        assert_eq!(prand_check(|| g.next_u32()), "0.301769 0.689350");
    }

    /// A regression value computed with this implementation (which matches the published 10^8
    /// check above): the sum of the first 10^6 words.
    #[test]
    fn regression_sum() {
        let mut g = Gm29::stream(0, 0);
        assert_eq!(sum(|| g.next_u32(), 1_000_000), 2148737992789986);
    }

    #[test]
    fn from_raw_state_follows_definition() {
        for (x0, x1) in [(514932, 127293), (1, 0), (0, 1), (536870908, 536870908), (12345, 67890)] {
            let mut g = Gm29::from_raw_state(&[x0, x1]).unwrap();
            assert_eq!(first(&mut g, 2000), definition().outputs(x0 as u128, x1 as u128, 2000), "{x0}, {x1}");
        }
    }

    #[test]
    fn value_stability() {
        // Pinned: a change here changes every result produced with this generator.
        assert_eq!(first(&mut Gm29::stream(0, 5), 3), [4011468954, 645873493, 4190646361]);
        assert_eq!(first(&mut Gm29::stream(3, 100), 3), [910416615, 3424661726, 3211142015]);
    }

    /// Orbit `j + 1` starts `N` steps after orbit `j`.
    #[test]
    fn orbits_are_spaced() {
        let g = Gm29::stream(0, 0);
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
        skip_matches_stepping(Gm29::stream(0, 0), &ns);
        skip_matches_stepping(Gm29::from_raw_state(&[1, 0]).unwrap(), &ns);
    }

    #[test]
    fn skips_compose() {
        let pairs = [(0, 5), (17, 1 << 40), (123_456_789, 987_654_321_000), (u64::MAX / 2, u64::MAX / 2)];
        skips_compose_for(Gm29::stream(1, 2), &pairs);
        // The cycle has length P = g^2 - 1 (below 2^64).
        let p = 536870909u64 * 536870909 - 1;
        assert_eq!(skipped(Gm29::stream(1, 2), p), Gm29::stream(1, 2));
        skips_are_cheap(Gm29::stream(0, 0), (0..1000u64).map(|i| u64::MAX - i));
    }

    #[test]
    fn streams() {
        let starts = streams_start_distinct::<Gm29>(0, 1000);
        assert_eq!(starts[0], Gm29::from_raw_state(&[514932, 127293]).unwrap());
        streams_are_spaced::<Gm29>(0, &[0, 1, 2, 13257, 108615928], STREAM_SPACING);
        streams_are_spaced::<Gm29>(7, &[0, 1 << 40], STREAM_SPACING);
        // Seed s starts s 2^40 steps in.
        for s in [1u64, 2, 8190] {
            assert_eq!(Gm29::stream(s, 3), skipped(Gm29::stream(0, 3), s << 40));
        }
        neighbours_share_no_value::<Gm29>(0, [0, 1, 2, 999], 1000);
        neighbours_share_no_value::<Gm29>(3, [0, 13256], 1000);
        seed_and_stream_halves_matter::<Gm29>();
    }

    #[test]
    fn invalid_states() {
        let g = 536870909u32;
        assert!(Gm29::from_raw_state(&[g - 1, g - 1]).is_ok());
        assert!(Gm29::from_raw_state(&[0, 1]).is_ok());
        for (words, word, value, rule) in
            [([g, 0], 0, g, "x0 must be < g"), ([1, g], 1, g, "x1 must be < g"), ([u32::MAX, 1], 0, u32::MAX, "x0 ")]
        {
            let e = Gm29::from_raw_state(&words).unwrap_err();
            assert_eq!((e.generator, e.word, e.value), ("gm29", Some(word), value));
            assert!(e.rule.starts_with(rule), "{}", e.rule);
        }
        let e = Gm29::from_raw_state(&[0, 0]).unwrap_err();
        assert_eq!((e.word, e.value), (None, 0));
        assert!(e.rule.starts_with("x0 and x1 must not both be zero"));
        rejects_word_counts::<Gm29>(&[&[], &[1], &[1, 2, 3]], "it has exactly two words");
    }
}
