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

use super::gm_common::{Family, RawRules, Recurrence, gm_generator};

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

const RULES: RawRules = RawRules {
    count: "it has exactly four words, x0_lo,x0_hi,x1_lo,x1_hi",
    x0: "x0 = x0_lo + 2^32 x0_hi must be < g = 2^61 - 1 (values are residues mod g)",
    x1: "x1 = x1_lo + 2^32 x1_hi must be < g = 2^61 - 1 (values are residues mod g)",
    zero: "x0 and x1 must not both be zero (every orbit would stay zero)",
};

gm_generator! {
    /// Generator state: the last two values of each of the 32 orbits, as (low, high) word pairs.
    pub struct Gm61 {
        /// `x_{n-1}` of orbit `j`: low word at `2j`, high word at `2j + 1`.
        pub prev: [u32; 64],
        /// `x_n` of orbit `j`: low word at `2j`, high word at `2j + 1`.
        pub cur: [u32; 64],
    }
    name: "gm61",
    raw_state: "x0_lo,x0_hi,x1_lo,x1_hi",
    family: FAMILY,
    base: BASE,
    rules: RULES,
    next_u32: next_bits(THRESHOLD),
    stream_spacing: STREAM_SPACING,
    seed_spacing: SEED_SPACING,
    stream_doc: "The published sequence skipped by `seed 2^64 + stream L` (see the module docs).",
    period: "about 2^122",
}

#[cfg(test)]
mod tests {
    use super::super::gm_common::checks::{Case, Cycle, Seeds, gm_tests};
    use super::super::gm_common::definition::{Assembly, Definition};
    use super::*;

    const G: u64 = (1 << 61) - 1;
    const HI: u32 = (G >> 32) as u32;

    const CASE: Case = Case {
        name: "gm61",
        family: FAMILY,
        definition: Definition {
            g: G as u128,
            k: 24,
            q: 74,
            spacing: (9007199254740991 << 64) + 7371121435597082533,
            orbits: 32,
            assembly: Assembly::OneBit(1 << 60),
        },
        published_base: (BASE.0 as u128, BASE.1 as u128),
        base: BASE,
        base_words: &[2552448964, 107970358, 1337274437, 481827283],
        constants: &[],
        first_outputs: [2004337331, 822000079, 377781725, 1176955191, 3973368],
        prand_sum: "0.662747 0.454201",
        regression_sum: 2147628040062291,
        definition_starts: &[(BASE.0, BASE.1), (1, 0), (0, 1), (G - 1, G - 1), (12345, 1 << 60)],
        same_generator: &[],
        pinned: [((0, 5), [3407641188, 1531431693, 738811874]), ((3, 100), [1009295350, 2708527473, 1504941413])],
        skip_from: (G - 1, 1),
        extra_compose_pairs: &[],
        // Beyond u64: two skips of 2^63 are the jump by 2^64 (one seed spacing).
        cycle: Cycle::BeyondU64,
        stream_spacing: STREAM_SPACING,
        spaced_streams: &[(0, &[0, 1, 2, 892447985, u64::MAX - 1]), (7, &[0, 1 << 40])],
        // Seed s starts s 2^64 steps in.
        seeds: Seeds::Jump { spacing: SEED_SPACING, seeds: &[1, 2, (1 << 53) - 2] },
        disjoint_neighbours: &[(0, &[0, 1, 2, 999]), (3, &[0, 892447984])],
        valid: &[(G - 1, G - 1), (0, 1), (1 << 32, 0)],
        out_of_range: &[
            ((G, 0), 1, HI, "x0 = x0_lo + 2^32 x0_hi must be < g"),
            ((1, G), 3, HI, "x1 = x1_lo + 2^32 x1_hi must be < g"),
            ((u64::MAX, 1), 1, u32::MAX, "x0 "),
            ((0, 1 << 61), 3, 1 << 29, "x1 "),
        ],
        zero: &[(0, 0)],
        zero_rule: "x0 and x1 must not both be zero",
        wrong_counts: &[&[], &[1, 2], &[1, 2, 3], &[1, 2, 3, 4, 5]],
        count_rule: "it has exactly four words",
    };

    gm_tests! {
        Gm61,
        CASE,
        /// PRAND's check: frac((sum of the first 10^8 words) / 2^32) = 0.662747, next word / 2^32 =
        /// 0.454201. 3.2 * 10^9 orbit steps, about 5.6 s in release.
        reference_prand_sum
    }
}
