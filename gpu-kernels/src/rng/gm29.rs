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

use super::gm_common::{Family, RawRules, Recurrence, gm_generator};
// The module docs link to `Skip::skip`.
#[cfg(doc)]
use super::Skip;

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

const RULES: RawRules = RawRules {
    count: "it has exactly two words, x0,x1",
    x0: "x0 must be < g = 2^29 - 3 = 536870909 (values are residues mod g)",
    x1: "x1 must be < g = 2^29 - 3 = 536870909 (values are residues mod g)",
    zero: "x0 and x1 must not both be zero (every orbit would stay zero)",
};

gm_generator! {
    /// Generator state: the last two values of each of the 32 orbits.
    pub struct Gm29 {
        /// `x_{n-1}` of orbit `j`.
        pub prev: [u32; 32],
        /// `x_n` of orbit `j`.
        pub cur: [u32; 32],
    }
    name: "gm29",
    raw_state: "x0,x1",
    family: FAMILY,
    base: BASE,
    rules: RULES,
    next_u32: next_bits(THRESHOLD),
    stream_spacing: STREAM_SPACING,
    seed_spacing: SEED_SPACING as u128,
    stream_doc: "The published sequence skipped by `seed 2^40 + stream L` (see the module docs).",
    period: "about 2^58",
}

#[cfg(test)]
mod tests {
    use super::super::gm_common::checks::{Case, Cycle, Seeds, gm_tests};
    use super::super::gm_common::definition::{Assembly, Definition};
    use super::*;

    const G: u64 = 536870909;

    const CASE: Case = Case {
        name: "gm29",
        family: FAMILY,
        definition: Definition {
            g: 536870909,
            k: 4,
            q: 2,
            spacing: 9007198285571818,
            orbits: 32,
            assembly: Assembly::OneBit(1 << 28),
        },
        published_base: (514932, 127293),
        base: BASE,
        base_words: &[514932, 127293],
        constants: &[],
        first_outputs: [3860964450, 3418542724, 505840115, 4261471899, 4173086020],
        prand_sum: "0.301769 0.689350",
        regression_sum: 2148737992789986,
        definition_starts: &[(514932, 127293), (1, 0), (0, 1), (536870908, 536870908), (12345, 67890)],
        same_generator: &[],
        pinned: [((0, 5), [4011468954, 645873493, 4190646361]), ((3, 100), [910416615, 3424661726, 3211142015])],
        skip_from: (1, 0),
        extra_compose_pairs: &[],
        // The cycle has length P = g^2 - 1 (below 2^64).
        cycle: Cycle::Period(536870909 * 536870909 - 1),
        stream_spacing: STREAM_SPACING,
        spaced_streams: &[(0, &[0, 1, 2, 13257, 108615928]), (7, &[0, 1 << 40])],
        // Seed s starts s 2^40 steps in.
        seeds: Seeds::Skip { spacing: 1 << 40, seeds: &[1, 2, 8190] },
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
        Gm29,
        CASE,
        /// PRAND's check: frac((sum of the first 10^8 words) / 2^32) = 0.301769, next word / 2^32 =
        /// 0.689350. 3.2 * 10^9 orbit steps, about 4.5 s in release.
        reference_prand_sum
    }
}
