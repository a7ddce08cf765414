//! GM61 of the PRAND "GM" family of Barash and Shchur ("PRAND: GPU accelerated parallel random
//! number generation library", Comput. Phys. Commun. 185 (2014) 1343; RNGSSELIB, Comput. Phys.
//! Commun. 184 (2013) 2367). The family's machinery and the reasoning behind it are in
//! [`super::gm_common`].
//!
//! **Definition.** 32 orbits of `x_n = (24 x_{n-1} - 74 x_{n-2}) mod g`, `g = 2^61 - 1` (prime).
//! Orbit `j` starts at `(x_{(j+1)N}, x_{(j+1)N+1})`, `N = 9007199254740991 * 2^64 +
//! 7371121435597082533` (about `2^117`), of the base sequence from `(x0, x1) =
//! (463729159099860932, 2069432424142811205)`. Each call advances all 32 orbits once; bit `j` of
//! the output word is 1 when orbit `j`'s new value is `>= 2^60`.
//!
//! **State.** 128 words: `prev[2j], prev[2j + 1]` are the low and high words of orbit `j`'s
//! `x_{n-1}`, `cur[2j], cur[2j + 1]` those of its `x_n`, each value `< g`.
//!
//! **Period and valid states.** `X^2 - 24 X + 74` is primitive mod `g`, so every nonzero pair lies
//! on one cycle of `P = g^2 - 1` (about `2^122`) steps. The 32 orbits split it: `32 N <= P`, so
//! each orbit runs `N` steps before it reaches the start of the next orbit; after that, output
//! words are shifted copies of earlier ones (bits `0..31` of a word are bits `1..32` of an earlier
//! one). `N` outputs is the budget shared by every stream and seed. The raw state is the base pair
//! `x0, x1` as four words `x0_lo, x0_hi, x1_lo, x1_hi` (each value `< g`, not both zero); the 32
//! orbits are built from it as above.
//!
//! **Streams (block splitting).** Stream `k` of seed `s` starts `D = s 2^64 + k L` steps into the
//! published sequence, `L = 20669825409` (PRAND's `gm61_init_sequence_`): every orbit is jumped by
//! `D`, so stream `k` continues where stream `k - 1`'s `L` outputs end, and a GPU run of
//! consecutive streams reproduces the sequential stream. Seed 0, stream 0 is the published
//! generator. Streams with `D + len <= N` whose starts are at least `len` apart never share an
//! orbit value ([`super::gm_common`]). So:
//! - streams `0 <= k < 892447986` (`892447986 L <= 2^64`) of seeds `0 <= s <= 2^53 - 2`
//!   (`(2^53 - 1) 2^64 <= N`), each used for at most `L` outputs, are pairwise disjoint;
//! - with seed 0 alone, all `2^64` streams of `L` outputs are disjoint (`2^64 L < N`);
//! - stream `k >= 892447986` of seed `s` runs into the first streams of seed `s + 1` (overlapping
//!   segments), and seeds `s >= 2^53 - 1` start beyond `N`, in the region of shifted copies of
//!   earlier seeds' words.
//!
//! The seed spacing is `2^64`, not the `2^40` of GM29, GM31 and GQ58.x: with `L` about `2^34.3`,
//! `2^40` would leave only 53 full streams per seed, while `N` has room for `2^53` seeds of `2^64`.
//!
//! **Skip.** `skip(n)` raises the one-step jump to the `n`-th power (at most 64 squarings and 64
//! products of six multiplications mod `g`, each a 64x64 -> 128-bit product and a Mersenne fold)
//! and applies it to each orbit (four multiplications and a step each). `stream` costs two such
//! powers.
//!
//! **Cost and quality.** Every output word costs 32 orbit steps of 128-bit arithmetic (a
//! multiply-add and a fold each): the slowest generator of the family per word. Each output bit is
//! a threshold of one linear recurrence mod `g`, and all bits come from one sequence at 32 offsets.
//! Quality is not measured here; see the authors' papers for their test results.
//!
//! ```
//! use warpmc_kernels::rng::{Generator, Uniform32, gm61::Gm61};
//! let mut g = Gm61::stream(0, 0);
//! assert_eq!(g.next_u32(), 2004337331);
//! ```

use super::gm_common::{Family, Jump, RawRules, Recurrence};
use super::{Generator, InvalidState, Skip, Uniform32};

/// The recurrence and orbit layout.
pub const FAMILY: Family = Family {
    rec: Recurrence { e: 61, c: 1, k: 24, q: 74 },
    t: 0,
    orbits: 32,
    wide: true,
    orbit_spacing: (9_007_199_254_740_991 << 64) + 7_371_121_435_597_082_533,
};
/// The published base pair `(x0, x1)`.
pub const BASE: (u64, u64) = (463_729_159_099_860_932, 2_069_432_424_142_811_205);
/// An orbit's new value `>= THRESHOLD` gives a 1 bit.
pub const THRESHOLD: u64 = 1 << 60;
/// Outputs between the starts of neighbouring streams (`L`).
pub const STREAM_SPACING: u64 = 20_669_825_409;
/// Steps between the starts of neighbouring seeds.
pub const SEED_SPACING: u128 = 1 << 64;

const _: () = assert!(FAMILY.is_consistent::<64>());

/// The published orbits (seed 0, stream 0), evaluated at compile time.
static START: ([u32; 64], [u32; 64]) = FAMILY.orbits_from_base(BASE.0, BASE.1);
const STREAM_JUMP: Jump = FAMILY.rec.jump(STREAM_SPACING as u128);
const SEED_JUMP: Jump = FAMILY.rec.jump(SEED_SPACING);

/// Generator state: the last two values of each of the 32 orbits, as (low, high) word pairs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct Gm61 {
    /// `x_{n-1}` of orbit `j`: low word at `2j`, high word at `2j + 1`.
    pub prev: [u32; 64],
    /// `x_n` of orbit `j`: low word at `2j`, high word at `2j + 1`.
    pub cur: [u32; 64],
}

const RULES: RawRules = RawRules {
    count: "it has exactly four words, x0_lo,x0_hi,x1_lo,x1_hi",
    x0: "x0 = x0_lo + 2^32 x0_hi must be < g = 2^61 - 1 (values are residues mod g)",
    x1: "x1 = x1_lo + 2^32 x1_hi must be < g = 2^61 - 1 (values are residues mod g)",
    zero: "x0 and x1 must not both be zero (every orbit would stay zero)",
};

impl Uniform32 for Gm61 {
    #[inline(always)]
    fn next_u32(&mut self) -> u32 {
        FAMILY.next_bits(&mut self.prev, &mut self.cur, THRESHOLD)
    }
}

// SAFETY: #[repr(C)] with two fields, both [u32; 64]: 128 words, no padding.
unsafe impl Generator for Gm61 {
    const NAME: &'static str = "gm61";
    const RAW_STATE: &'static str = "x0_lo,x0_hi,x1_lo,x1_hi";
    const RAW_STATE_WORDS: usize = 4;

    /// The published sequence skipped by `seed 2^64 + stream L` (see the module docs).
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

impl Skip for Gm61 {
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

    const G: u64 = (1 << 61) - 1;

    fn definition() -> Definition {
        let spacing = (9007199254740991 << 64) + 7371121435597082533;
        Definition { g: G as u128, k: 24, q: 74, spacing, orbits: 32, assembly: Assembly::OneBit(1 << 60) }
    }

    fn raw(x0: u64, x1: u64) -> [u32; 4] {
        [x0 as u32, (x0 >> 32) as u32, x1 as u32, (x1 >> 32) as u32]
    }

    /// The first outputs of the published generator ([R] in ALGORITHMS.md), from the generator
    /// and from the definition.
    #[test]
    fn reference() {
        let expected = [2004337331, 822000079, 377781725, 1176955191, 3973368];
        assert_eq!(first(&mut Gm61::stream(0, 0), 5), expected);
        assert_eq!(definition().outputs(BASE.0 as u128, BASE.1 as u128, 5), expected);
        let words = [2552448964, 107970358, 1337274437, 481827283];
        assert_eq!(raw(BASE.0, BASE.1), words);
        assert_eq!(Gm61::from_raw_state(&words), Ok(Gm61::stream(0, 0)));
    }

    /// PRAND's check: frac((sum of the first 10^8 words) / 2^32) = 0.662747, next word / 2^32 =
    /// 0.454201. 3.2 * 10^9 orbit steps, about 5.6 s in release: run with `--ignored`.
    #[test]
    #[ignore = "10^8 words, about 5.6 s in release"]
    fn reference_prand_sum() {
        let mut g = Gm61::stream(0, 0);
        assert_eq!(prand_check(|| g.next_u32()), "0.662747 0.454201");
    }

    /// A regression value computed with this implementation (which matches the published 10^8
    /// check above): the sum of the first 10^6 words.
    #[test]
    fn regression_sum() {
        let mut g = Gm61::stream(0, 0);
        assert_eq!(sum(|| g.next_u32(), 1_000_000), 2147628040062291);
    }

    #[test]
    fn from_raw_state_follows_definition() {
        for (x0, x1) in [BASE, (1, 0), (0, 1), (G - 1, G - 1), (12345, 1 << 60)] {
            let mut g = Gm61::from_raw_state(&raw(x0, x1)).unwrap();
            assert_eq!(first(&mut g, 2000), definition().outputs(x0 as u128, x1 as u128, 2000), "{x0}, {x1}");
        }
    }

    #[test]
    fn value_stability() {
        // Pinned: a change here changes every result produced with this generator.
        assert_eq!(first(&mut Gm61::stream(0, 5), 3), [3407641188, 1531431693, 738811874]);
        assert_eq!(first(&mut Gm61::stream(3, 100), 3), [1009295350, 2708527473, 1504941413]);
    }

    /// Orbit `j + 1` starts `N` steps after orbit `j`.
    #[test]
    fn orbits_are_spaced() {
        let g = Gm61::stream(0, 0);
        let spacing = FAMILY.rec.jump(FAMILY.orbit_spacing);
        for j in 0..31 {
            let next = FAMILY.rec.apply(spacing, FAMILY.load(&g.prev, j), FAMILY.load(&g.cur, j));
            assert_eq!(next, (FAMILY.load(&g.prev, j + 1), FAMILY.load(&g.cur, j + 1)), "orbit {j}");
        }
    }

    #[test]
    fn skip_equals_stepping() {
        let mut r = 1u64;
        let ns = skip_lengths((0..5).map(|_| splitmix64(&mut r) % 1_000_001));
        skip_matches_stepping(Gm61::stream(0, 0), &ns);
        skip_matches_stepping(Gm61::from_raw_state(&raw(G - 1, 1)).unwrap(), &ns);
    }

    #[test]
    fn skips_compose() {
        let pairs = [(0, 5), (17, 1 << 40), (123_456_789, 987_654_321_000), (u64::MAX / 2, u64::MAX / 2)];
        skips_compose_for(Gm61::stream(1, 2), &pairs);
        // Beyond u64: two skips of 2^63 are the jump by 2^64 (one seed spacing).
        let mut g = Gm61::stream(1, 2);
        FAMILY.jump_orbits(FAMILY.rec.jump(1 << 64), &mut g.prev, &mut g.cur);
        assert_eq!(skipped(skipped(Gm61::stream(1, 2), 1 << 63), 1 << 63), g);
        assert_eq!(g, Gm61::stream(2, 2));
        skips_are_cheap(Gm61::stream(0, 0), (0..1000u64).map(|i| u64::MAX - i));
    }

    #[test]
    fn streams() {
        let starts = streams_start_distinct::<Gm61>(0, 1000);
        assert_eq!(starts[0], Gm61::from_raw_state(&raw(BASE.0, BASE.1)).unwrap());
        streams_are_spaced::<Gm61>(0, &[0, 1, 2, 892447985, u64::MAX - 1], STREAM_SPACING);
        streams_are_spaced::<Gm61>(7, &[0, 1 << 40], STREAM_SPACING);
        // Seed s starts s 2^64 steps in.
        for s in [1u64, 2, (1 << 53) - 2] {
            let mut g = Gm61::stream(0, 3);
            FAMILY.jump_orbits(FAMILY.rec.jump(s as u128 * SEED_SPACING), &mut g.prev, &mut g.cur);
            assert_eq!(Gm61::stream(s, 3), g);
        }
        neighbours_share_no_value::<Gm61>(0, [0, 1, 2, 999], 1000);
        neighbours_share_no_value::<Gm61>(3, [0, 892447984], 1000);
        seed_and_stream_halves_matter::<Gm61>();
    }

    #[test]
    fn invalid_states() {
        assert!(Gm61::from_raw_state(&raw(G - 1, G - 1)).is_ok());
        assert!(Gm61::from_raw_state(&raw(0, 1)).is_ok());
        assert!(Gm61::from_raw_state(&raw(1 << 32, 0)).is_ok());
        let hi = (G >> 32) as u32;
        for (words, word, value, rule) in [
            (raw(G, 0), 1, hi, "x0 = x0_lo + 2^32 x0_hi must be < g"),
            (raw(1, G), 3, hi, "x1 = x1_lo + 2^32 x1_hi must be < g"),
            (raw(u64::MAX, 1), 1, u32::MAX, "x0 "),
            (raw(0, 1 << 61), 3, 1 << 29, "x1 "),
        ] {
            let e = Gm61::from_raw_state(&words).unwrap_err();
            assert_eq!((e.generator, e.word, e.value), ("gm61", Some(word), value), "{words:?}");
            assert!(e.rule.starts_with(rule), "{}", e.rule);
        }
        let e = Gm61::from_raw_state(&[0; 4]).unwrap_err();
        assert_eq!((e.word, e.value), (None, 0));
        assert!(e.rule.starts_with("x0 and x1 must not both be zero"));
        rejects_word_counts::<Gm61>(&[&[], &[1, 2], &[1, 2, 3], &[1, 2, 3, 4, 5]], "it has exactly four words");
    }
}
