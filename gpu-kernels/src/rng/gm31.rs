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

use super::gm_common::{Family, RawRules, Recurrence, gm_generator};
// The module docs link to `Skip::skip`.
#[cfg(doc)]
use super::Skip;

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

const RULES: RawRules = RawRules {
    count: "it has exactly two words, x0,x1",
    x0: "x0 must be < g = 2^31 - 1 = 2147483647 (values are residues mod g)",
    x1: "x1 must be < g = 2^31 - 1 = 2147483647 (values are residues mod g)",
    zero: "x0 and x1 must not both be zero (every orbit would stay zero)",
};

gm_generator! {
    /// Generator state: the last two values of each of the 32 orbits.
    pub struct Gm31 {
        /// `x_{n-1}` of orbit `j`.
        pub prev: [u32; 32],
        /// `x_n` of orbit `j`.
        pub cur: [u32; 32],
    }
    name: "gm31",
    raw_state: "x0,x1",
    family: FAMILY,
    base: BASE,
    rules: RULES,
    next_u32: next_bits(THRESHOLD),
    stream_spacing: STREAM_SPACING,
    seed_spacing: SEED_SPACING as u128,
    stream_doc: "The published sequence skipped by `seed 2^40 + stream L` (see the module docs).",
    period: "about 2^62",
}

#[cfg(test)]
mod tests {
    use super::super::gm_common::checks::{Case, Cycle, Seeds, gm_tests};
    use super::super::gm_common::definition::{Assembly, Definition};
    use super::*;

    const G: u64 = 2147483647;

    const CASE: Case = Case {
        name: "gm31",
        family: FAMILY,
        definition: Definition {
            g: 2147483647,
            k: 11,
            q: 14,
            spacing: 144115183781032008,
            orbits: 32,
            assembly: Assembly::OneBit(1 << 30),
        },
        published_base: (554937932, 1253942293),
        base: BASE,
        base_words: &[554937932, 1253942293],
        constants: &[],
        first_outputs: [4293320464, 2011781859, 517669476, 510187734, 459027413],
        prand_sum: "0.219147 0.351754",
        regression_sum: 2146496435340193,
        definition_starts: &[(554937932, 1253942293), (1, 0), (0, 1), (2147483646, 2147483646), (12345, 67890)],
        same_generator: &[],
        pinned: [((0, 5), [590988495, 2197888537, 2640844227]), ((3, 100), [1805325562, 4254696059, 3634466893])],
        skip_from: (1, 0),
        extra_compose_pairs: &[],
        // The cycle has length P = g^2 - 1 (below 2^64).
        cycle: Cycle::Period(2147483647 * 2147483647 - 1),
        stream_spacing: STREAM_SPACING,
        spaced_streams: &[(0, &[0, 1, 2, 13257, 1737855005]), (7, &[0, 1 << 40])],
        // Seed s starts s 2^40 steps in.
        seeds: Seeds::Skip { spacing: 1 << 40, seeds: &[1, 2, 131070] },
        disjoint_neighbours: &[(0, &[0, 1, 2, 999]), (3, &[0, 13256])],
        valid: &[(G - 1, G - 1), (0, 1)],
        out_of_range: &[
            ((G, 0), 0, G as u32, "x0 must be < g"),
            ((1, G), 1, G as u32, "x1 must be < g"),
            ((u32::MAX as u64, 1), 0, u32::MAX, "x0 "),
        ],
        zero: &[(0, 0)],
        zero_rule: "x0 and x1 must not both be zero",
        wrong_counts: &[&[], &[1], &[1, 2, 3]],
        count_rule: "it has exactly two words",
    };

    gm_tests! {
        Gm31,
        CASE,
        /// PRAND's check: frac((sum of the first 10^8 words) / 2^32) = 0.219147, next word / 2^32 =
        /// 0.351754. 3.2 * 10^9 orbit steps, about 4.8 s in release.
        reference_prand_sum
    }
}
