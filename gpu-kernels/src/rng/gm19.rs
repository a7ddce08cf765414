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

use super::gm_common::{Family, RawRules, Recurrence, gm_generator};

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

const RULES: RawRules = RawRules {
    count: "it has exactly two words, x0,x1",
    x0: "x0 must be < g = 2^19 - 1 = 524287 (values are residues mod g)",
    x1: "x1 must be < g = 2^19 - 1 = 524287 (values are residues mod g)",
    zero: "x0 and x1 must not both be zero (every orbit would stay zero)",
};

gm_generator! {
    /// Generator state: the last two values of each of the 32 orbits.
    pub struct Gm19 {
        /// `x_{n-1}` of orbit `j`.
        pub prev: [u32; 32],
        /// `x_n` of orbit `j`.
        pub cur: [u32; 32],
    }
    name: "gm19",
    raw_state: "x0,x1",
    family: FAMILY,
    base: BASE,
    rules: RULES,
    next_u32: next_bits(THRESHOLD),
    stream_spacing: STREAM_SPACING,
    seed_spacing: STREAMS_PER_SEED as u128 * STREAM_SPACING as u128,
    stream_doc: "The published sequence skipped by `(128 seed + stream) L` (see the module docs).",
    period: "about 2^38",
}

#[cfg(test)]
mod tests {
    use super::super::gm_common::checks::{Case, Cycle, Seeds, gm_tests};
    use super::super::gm_common::definition::{Assembly, Definition};
    use super::*;

    const G: u64 = 524287;
    /// The cycle length `g^2 - 1`.
    const PERIOD: u64 = (1 << 38) - (1 << 20);

    const CASE: Case = Case {
        name: "gm19",
        family: FAMILY,
        definition: Definition {
            g: 524287,
            k: 15,
            q: 28,
            spacing: 8382841959,
            orbits: 32,
            assembly: Assembly::OneBit(262144),
        },
        published_base: (514932, 127293),
        base: BASE,
        base_words: &[514932, 127293],
        constants: &[],
        first_outputs: [2481458146, 742541813, 499751709, 324483849, 2122535118],
        prand_sum: "0.898518 0.124352",
        regression_sum: 2147935829452849,
        definition_starts: &[(514932, 127293), (1, 0), (0, 1), (524286, 524286), (12345, 67890)],
        same_generator: &[],
        pinned: [((0, 5), [444621589, 4022425337, 983715480]), ((3, 100), [3086932345, 1657013744, 207100582])],
        skip_from: (1, 0),
        extra_compose_pairs: &[(PERIOD, 1)],
        // The cycle has length P = g^2 - 1 exactly.
        cycle: Cycle::Period(PERIOD),
        stream_spacing: STREAM_SPACING,
        spaced_streams: &[(0, &[0, 1, 2, 500, 1209]), (7, &[0, 127, 1 << 40])],
        // Seed s is stream 128 s of seed 0.
        seeds: Seeds::Streams { per_seed: 128, seeds: &[1, 2, 8] },
        disjoint_neighbours: &[(0, &[0, 1, 2, 999]), (3, &[0, 126])],
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
        Gm19,
        CASE,
        /// PRAND's check: frac((sum of the first 10^8 words) / 2^32) = 0.898518, next word / 2^32 =
        /// 0.124352. 3.2 * 10^9 orbit steps, about 4.4 s in release.
        reference_prand_sum
    }
}
