//! GQ58.3 of the PRAND "GM" family of Barash and Shchur ("PRAND: GPU accelerated parallel random
//! number generation library", Comput. Phys. Commun. 185 (2014) 1343; RNGSSELIB, Comput. Phys.
//! Commun. 184 (2013) 2367). The family's machinery and the reasoning behind it are in
//! [`super::gm_common`].
//!
//! **Definition.** 12 orbits of `x_n = (8 x_{n-1} - 48 x_{n-2}) mod g`, `g = 2^29 p`,
//! `p = 2^29 - 3` (prime), so `g = 2^58 - 3 * 2^29 = 288230374541099008`. Orbit `j` starts at
//! `(x_{(j+1)N}, x_{(j+1)N+1})`, `N = 24014539279611495`, of the base sequence from
//! `(x0, x1) = (100142853817629549, 133388305121829306)` (GQ58.3's own base, not GQ58.1's). Each
//! call advances all 12 orbits once and takes 3 bits `t = floor(8 x / g)` from each new value:
//! orbit `j` adds `((t << s) & 255) << (8 (j mod 4))` with `s = 6, 3, 0` for orbits 0-3, 4-7, 8-11,
//! so each byte holds 2 bits of an orbit of the first group (its top bit is dropped) and 3 of each
//! of the others.
//!
//! **Working units.** Mod `2^29` the recurrence is nilpotent (`8 = 2^3`, `48 = 2^4 * 3`): from
//! `x_16` on, every `x_n` is a multiple of `2^29`, `x_n = 2^29 y_n` with
//! `y_n = (8 y_{n-1} - 48 y_{n-2}) mod p`. The orbits start far past that transient, so the state
//! holds `y < 2^29`, and `t = floor(8 y / p)` (`2^29 y / (2^26 p)`)
//! ([`super::gm_common`]).
//!
//! **State.** 24 words: `prev[j] = y_{n-1}` and `cur[j] = y_n` of orbit `j` (`x = 2^29 y`), each
//! `< p`.
//!
//! **Period and valid states.** `X^2 - 8 X + 48` is primitive mod `p`, so every pair that is not
//! zero mod `p` reaches (after the transient) one cycle of `P = p^2 - 1` (about `2^58`) steps. The
//! 12 orbits split it: `12 N <= P`, so each orbit runs `N` (about `2.4 * 10^16 = 2^54.4`) steps
//! before it reaches the start of the next orbit; after that, output words reuse earlier orbit
//! values in other bit positions. `N` outputs is the budget shared by every stream and seed. The
//! raw state is the base pair `x0, x1` as four words `x0_lo, x0_hi, x1_lo, x1_hi`: each value
//! `< g`, and not both multiples of `p` (such a pair reaches zero and stays there). Raw pairs that
//! agree mod `p` give the same generator: the part mod `2^29` dies in the transient.
//!
//! **Streams (block splitting).** Stream `k` of seed `s` starts `D = s 2^40 + k L` steps into the
//! published sequence, `L = 82927047` (PRAND's `gq58x3_init_short_sequence_`; its medium and long
//! spacings, 8799201913 and 828317697521, are reachable with [`Skip::skip`]): every orbit is jumped
//! by `D`, so stream `k` continues where stream `k - 1`'s `L` outputs end, and a GPU run of
//! consecutive streams reproduces the sequential stream. Seed 0, stream 0 is the published
//! generator. Streams with `D + len <= N` whose starts are at least `len` apart never share an
//! orbit value ([`super::gm_common`]). So:
//! - streams `0 <= k < 13258` (`13258 L <= 2^40`) of seeds `0 <= s <= 21840` (`21841 * 2^40 <= N`),
//!   each used for at most `L` outputs, are pairwise disjoint;
//! - with seed 0 alone, streams `0 <= k < 289586330 = floor(N / L)` of `L` outputs are disjoint
//!   (PRAND offers 2 * 10^8 of up to 8 * 10^7);
//! - stream `k >= 13258` of seed `s` runs into the first streams of seed `s + 1` (overlapping
//!   segments, offset by `2^40 mod L`), and seeds `s >= 21841` start beyond `N`, in the region of
//!   other orbits of earlier seeds.
//!
//! **Skip.** `skip(n)` raises the one-step jump to the `n`-th power (at most 64 squarings and 64
//! products of six multiplications mod `p`) and applies it to each orbit (four multiplications
//! and a step each). `stream` costs two such powers.
//!
//! **Cost and quality.** Every output word costs 12 orbit steps (one multiply-add and a fold each)
//! and 12 bucket lookups without division; 36 bits are generated for 32 kept. Each 3-bit block
//! comes from one linear recurrence mod `p`, and all come from one sequence at 12 offsets. Quality
//! is not measured here; see the authors' papers for their test results.
//!
//! ```
//! use warpmc_kernels::rng::{Generator, Uniform32, gq58_3::Gq583};
//! let mut g = Gq583::stream(0, 0);
//! assert_eq!(g.next_u32(), 2890017627);
//! ```

use super::gm_common::{Family, RawRules, Recurrence, gm_generator};
// The module docs link to `Skip::skip`.
#[cfg(doc)]
use super::Skip;

/// The recurrence mod `p = 2^29 - 3` and the orbit layout (`g = 2^29 p`).
pub const FAMILY: Family = Family {
    rec: Recurrence { e: 29, c: 3, k: 8, q: 48 },
    t: 29,
    orbits: 12,
    wide: false,
    orbit_spacing: 24_014_539_279_611_495,
};
/// The published base pair `(x0, x1)`.
pub const BASE: (u64, u64) = (100_142_853_817_629_549, 133_388_305_121_829_306);
/// Outputs between the starts of neighbouring streams (`L`, PRAND's short sequences).
pub const STREAM_SPACING: u64 = 82_927_047;
/// Steps between the starts of neighbouring seeds.
pub const SEED_SPACING: u64 = 1 << 40;

const RULES: RawRules = RawRules {
    count: "it has exactly four words, x0_lo,x0_hi,x1_lo,x1_hi",
    x0: "x0 = x0_lo + 2^32 x0_hi must be < g = 2^29 (2^29 - 3) = 288230374541099008 (values are residues mod g)",
    x1: "x1 = x1_lo + 2^32 x1_hi must be < g = 2^29 (2^29 - 3) = 288230374541099008 (values are residues mod g)",
    zero: "x0 and x1 must not both be multiples of p = 2^29 - 3 (every orbit would reach zero and stay there)",
};

gm_generator! {
    /// Generator state: the last two values of each of the 12 orbits, in working units `y = x / 2^29`.
    pub struct Gq583 {
        /// `y_{n-1}` of orbit `j`.
        pub prev: [u32; 12],
        /// `y_n` of orbit `j`.
        pub cur: [u32; 12],
    }
    name: "gq58-3",
    raw_state: "x0_lo,x0_hi,x1_lo,x1_hi",
    family: FAMILY,
    base: BASE,
    rules: RULES,
    next_u32: next_gq58_3(),
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

    const P: u64 = (1 << 29) - 3;
    const G: u64 = P << 29;
    const HI: u32 = (G >> 32) as u32;

    const CASE: Case = Case {
        name: "gq58-3",
        family: FAMILY,
        definition: Definition {
            g: G as u128,
            k: 8,
            q: 48,
            spacing: 24014539279611495,
            orbits: 12,
            assembly: Assembly::ThreeBit,
        },
        published_base: (BASE.0 as u128, BASE.1 as u128),
        base: BASE,
        base_words: &[479722349, 23316325, 4026163642, 31056884],
        constants: &[(FAMILY.g(), G)],
        first_outputs: [2890017627, 190198786, 3174723463, 2431672917, 2436925139],
        prand_sum: "0.745176 0.675635",
        regression_sum: 2145804422265249,
        // The definition in `x` mod `g` (with its transient) against the generator in `y` mod `p`.
        definition_starts: &[(BASE.0, BASE.1), (1, 0), (0, 1), (G - 1, G - 1), (P, 1), (1 << 29, 0), (12345, 1 << 57)],
        // Pairs that agree mod p are the same generator.
        same_generator: &[((5, 7), (5 + 3 * P, 7 + (1 << 28) * P))],
        pinned: [((0, 5), [3511231573, 1173601066, 2703050916]), ((3, 100), [3230991127, 2215653361, 1174216333])],
        skip_from: (G - 1, 1),
        extra_compose_pairs: &[],
        // The cycle has length P = p^2 - 1 (below 2^64).
        cycle: Cycle::Period(P * P - 1),
        stream_spacing: STREAM_SPACING,
        spaced_streams: &[(0, &[0, 1, 2, 13257, 289586329]), (7, &[0, 1 << 40])],
        // Seed s starts s 2^40 steps in.
        seeds: Seeds::Skip { spacing: 1 << 40, seeds: &[1, 2, 21840] },
        disjoint_neighbours: &[(0, &[0, 1, 2, 999]), (3, &[0, 13256])],
        valid: &[(G - 1, G - 1), (0, 1), (P, 1), (1 << 29, 0)],
        out_of_range: &[
            ((G, 0), 1, HI, "x0 = x0_lo + 2^32 x0_hi must be < g"),
            ((1, G), 3, HI, "x1 = x1_lo + 2^32 x1_hi must be < g"),
            ((u64::MAX, 1), 1, u32::MAX, "x0 "),
            ((0, 1 << 58), 3, 1 << 26, "x1 "),
        ],
        zero: &[(0, 0), (P, 0), (0, 15 * P), (3 * P, ((1 << 29) - 1) * P)],
        zero_rule: "x0 and x1 must not both be multiples of p",
        wrong_counts: &[&[], &[1, 2], &[1, 2, 3], &[1, 2, 3, 4, 5]],
        count_rule: "it has exactly four words",
    };

    gm_tests! {
        Gq583,
        CASE,
        /// PRAND's check: frac((sum of the first 10^8 words) / 2^32) = 0.745176, next word / 2^32 =
        /// 0.675635. 1.2 * 10^9 orbit steps, about 2.9 s in release.
        reference_prand_sum
    }

    /// Why multiples of p are rejected: such a pair reaches zero within the transient and stays.
    #[test]
    fn multiples_of_p_die() {
        let d = &CASE.definition;
        let mut o = [(3 * P as u128, 7 * P as u128)];
        for _ in 0..20 {
            d.next(&mut o);
        }
        assert_eq!(o[0], (0, 0));
    }
}
