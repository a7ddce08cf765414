//! GM55.4 of the PRAND "GM" family of Barash and Shchur ("PRAND: GPU accelerated parallel random
//! number generation library", Comput. Phys. Commun. 185 (2014) 1343; RNGSSELIB, Comput. Phys.
//! Commun. 184 (2013) 2367). The family's machinery and the reasoning behind it are in
//! [`super::gm_common`].
//!
//! **Definition.** 8 orbits of `x_n = (256 x_{n-1} - 176 x_{n-2}) mod g`, `g = 16 p`,
//! `p = 2^51 - 129` (prime), so `g = 2^55 - 2064 = 36028797018961904`. Orbit `j` starts at
//! `(x_{(j+1)N}, x_{(j+1)N+1})`, `N = 7730941120 * 2^64 + 2741045636569588180` (about `2^96.8`), of
//! the base sequence from the published `(x0, x1) = (100152853817629549, 132388305121829306)`
//! taken mod `g`, that is `(28095259779705741, 24301914064943594)`. Each call advances all 8
//! orbits once and takes 4 bits `floor(16 x / g)` from each new value: orbit `j`'s nibble is
//! shifted left by `0, 8, 16, 24, 4, 12, 20, 28` for `j = 0..8`.
//!
//! **Working units.** `k` and `q` are multiples of 16, so from the second step on every `x_n` is a
//! multiple of 16: `x_n = 16 y_n` with `y_n = (256 y_{n-1} - 176 y_{n-2}) mod p`, and
//! `floor(16 x / g) = floor(16 y / p)`. The orbits start far past that transient, so the state
//! holds `y` ([`super::gm_common`]).
//!
//! **State.** 32 words: `prev[2j], prev[2j + 1]` are the low and high words of orbit `j`'s
//! `y_{n-1} = x_{n-1} / 16`, `cur[2j], cur[2j + 1]` those of its `y_n`, each `< p`.
//!
//! **Period and valid states.** `X^2 - 256 X + 176` is primitive mod `p`, so every pair that is
//! not zero mod `p` reaches (after the two-step transient) one cycle of `P = p^2 - 1` (about
//! `2^102`) steps. The 8 orbits are `N` apart on it (`8 N` is about `0.225 P`), so each orbit runs
//! `N` steps before it reaches the start of the next orbit; after that, output words would repeat
//! other orbits' nibbles in other positions. `N` outputs is the budget shared by every stream and
//! seed. The raw state is the base pair `x0, x1` as four words `x0_lo, x0_hi, x1_lo, x1_hi`: each
//! value `< g`, and not both multiples of `p` (such a pair reaches zero and stays there). Raw
//! pairs that agree mod `p` give the same generator: the part mod 16 dies in the transient.
//!
//! **Streams (block splitting).** Stream `k` of seed `s` starts `D = s 2^64 + k L` steps into the
//! published sequence, `L = 20669825409` (PRAND's `gm55_init_short_sequence_` allows sequences of
//! up to 10^10): every orbit is jumped by `D`, so stream `k` continues where stream `k - 1`'s `L`
//! outputs end, and a GPU run of consecutive streams reproduces the sequential stream. Seed 0,
//! stream 0 is the published generator. Streams with `D + len <= N` whose starts are at least `len`
//! apart never share an orbit value ([`super::gm_common`]). So:
//! - streams `0 <= k < 892447986` (`892447986 L <= 2^64`) of seeds `0 <= s <= 7730941119`
//!   (`7730941120 * 2^64 <= N`), each used for at most `L` outputs, are pairwise disjoint;
//! - with seed 0 alone, streams `0 <= k < 6899462838723512565 = floor(N / L)` are disjoint;
//! - stream `k >= 892447986` of seed `s` runs into the first streams of seed `s + 1` (overlapping
//!   segments), and seeds `s >= 7730941120` start beyond `N`, in the region of other orbits of
//!   earlier seeds.
//!
//! The seed spacing is `2^64`, not the `2^40` of GM29, GM31 and GQ58.x: with `L` about `2^34.3`,
//! `2^40` would leave only 53 full streams per seed, while `N` has room for `2^32.8` seeds of
//! `2^64`.
//!
//! **Skip.** `skip(n)` raises the one-step jump to the `n`-th power (at most 64 squarings and 64
//! products of six multiplications mod `p`, each a 64x64 -> 128-bit product and folds by
//! `2^51 = 129 mod p`) and applies it to each orbit. `stream` costs two such powers.
//!
//! **Cost and quality.** Every output word costs 8 orbit steps (a 64-bit multiply-add and a fold
//! each) and 8 bucket lookups without division. Each nibble comes from one linear recurrence mod
//! `p`, and all come from one sequence at 8 offsets. Quality is not measured here; see the authors'
//! papers for their test results.
//!
//! ```
//! use warpmc_kernels::rng::{Generator, Uniform32, gm55::Gm55};
//! let mut g = Gm55::stream(0, 0);
//! assert_eq!(g.next_u32(), 3939088052);
//! ```

use super::gm_common::{Family, RawRules, Recurrence, gm_generator};

/// The recurrence mod `p = 2^51 - 129` and the orbit layout (`g = 2^4 p`).
pub const FAMILY: Family = Family {
    rec: Recurrence { e: 51, c: 129, k: 256, q: 176 },
    t: 4,
    orbits: 8,
    wide: true,
    orbit_spacing: (7_730_941_120 << 64) + 2_741_045_636_569_588_180,
};
/// The published base pair `(x0, x1)`, reduced mod `g`.
pub const BASE: (u64, u64) = (100_152_853_817_629_549 % G, 132_388_305_121_829_306 % G);
/// The definition's modulus `g = 16 (2^51 - 129)`.
pub const G: u64 = FAMILY.g();
/// Outputs between the starts of neighbouring streams (`L`).
pub const STREAM_SPACING: u64 = 20_669_825_409;
/// Steps between the starts of neighbouring seeds.
pub const SEED_SPACING: u128 = 1 << 64;

const RULES: RawRules = RawRules {
    count: "it has exactly four words, x0_lo,x0_hi,x1_lo,x1_hi",
    x0: "x0 = x0_lo + 2^32 x0_hi must be < g = 16 (2^51 - 129) = 36028797018961904 (values are residues mod g)",
    x1: "x1 = x1_lo + 2^32 x1_hi must be < g = 16 (2^51 - 129) = 36028797018961904 (values are residues mod g)",
    zero: "x0 and x1 must not both be multiples of p = 2^51 - 129 (every orbit would reach zero and stay there)",
};

gm_generator! {
    /// Generator state: the last two values of each of the 8 orbits, in working units `y = x / 16`,
    /// as (low, high) word pairs.
    pub struct Gm55 {
        /// `y_{n-1}` of orbit `j`: low word at `2j`, high word at `2j + 1`.
        pub prev: [u32; 16],
        /// `y_n` of orbit `j`: low word at `2j`, high word at `2j + 1`.
        pub cur: [u32; 16],
    }
    name: "gm55",
    raw_state: "x0_lo,x0_hi,x1_lo,x1_hi",
    family: FAMILY,
    base: BASE,
    rules: RULES,
    next_u32: next_nibbles(),
    stream_spacing: STREAM_SPACING,
    seed_spacing: SEED_SPACING,
    stream_doc: "The published sequence skipped by `seed 2^64 + stream L` (see the module docs).",
    period: "about 2^102",
}

#[cfg(test)]
mod tests {
    use super::super::gm_common::checks::{Case, Cycle, Seeds, gm_tests};
    use super::super::gm_common::definition::{Assembly, Definition};
    use super::*;

    const P: u64 = (1 << 51) - 129;
    const HI: u32 = (G >> 32) as u32;

    const CASE: Case = Case {
        name: "gm55",
        family: FAMILY,
        definition: Definition {
            g: 16 * P as u128,
            k: 256,
            q: 176,
            spacing: (7730941120 << 64) + 2741045636569588180,
            orbits: 8,
            assembly: Assembly::Nibbles,
        },
        // The definition reduces the published base mod g.
        published_base: (100152853817629549, 132388305121829306),
        base: BASE,
        base_words: &[1795861389, 6541437, 1261697514, 5658230],
        constants: &[(G, 36028797018961904), (BASE.0, 28095259779705741), (BASE.1, 24301914064943594)],
        first_outputs: [3939088052, 502966821, 308800831, 362694009, 3904129798],
        prand_sum: "0.112289 0.146348",
        regression_sum: 2148319192998234,
        definition_starts: &[
            (BASE.0, BASE.1),
            (1, 0),
            (0, 1),
            (G - 1, G - 1),
            (P, 1),
            (15, 16 * P - 1),
            (12345, 1 << 54),
        ],
        // Pairs that agree mod p are the same generator.
        same_generator: &[((5, 7), (5 + 3 * P, 7 + 15 * P))],
        pinned: [((0, 5), [2458526267, 1420566036, 3074648830]), ((3, 100), [118711476, 2804084767, 2798311970])],
        skip_from: (G - 1, 1),
        extra_compose_pairs: &[],
        // Beyond u64: two skips of 2^63 are the jump by 2^64 (one seed spacing).
        cycle: Cycle::BeyondU64,
        stream_spacing: STREAM_SPACING,
        spaced_streams: &[(0, &[0, 1, 2, 892447985, 6899462838723512564]), (7, &[0, 1 << 40])],
        // Seed s starts s 2^64 steps in.
        seeds: Seeds::Jump { spacing: SEED_SPACING, seeds: &[1, 2, 7730941119] },
        disjoint_neighbours: &[(0, &[0, 1, 2, 999]), (3, &[0, 892447984])],
        valid: &[(G - 1, G - 1), (0, 1), (P, 1), (16, 0)],
        out_of_range: &[
            ((G, 0), 1, HI, "x0 = x0_lo + 2^32 x0_hi must be < g"),
            ((1, G), 3, HI, "x1 = x1_lo + 2^32 x1_hi must be < g"),
            ((u64::MAX, 1), 1, u32::MAX, "x0 "),
            ((0, 1 << 55), 3, 1 << 23, "x1 "),
        ],
        zero: &[(0, 0), (P, 0), (0, 15 * P), (3 * P, 7 * P)],
        zero_rule: "x0 and x1 must not both be multiples of p",
        wrong_counts: &[&[], &[1, 2], &[1, 2, 3], &[1, 2, 3, 4, 5]],
        count_rule: "it has exactly four words",
    };

    gm_tests! {
        Gm55,
        CASE,
        /// PRAND's check: frac((sum of the first 10^8 words) / 2^32) = 0.112289, next word / 2^32 =
        /// 0.146348. 8 * 10^8 orbit steps, about 1.3 s in release.
        reference_prand_sum
    }

    /// Why multiples of p are rejected: such a pair reaches zero within two steps and stays there.
    #[test]
    fn multiples_of_p_die() {
        let d = &CASE.definition;
        let mut o = [(0u128, 0u128); 1];
        o[0] = (3 * P as u128, 7 * P as u128);
        for _ in 0..3 {
            d.next(&mut o);
        }
        assert_eq!(o[0], (0, 0));
    }
}
