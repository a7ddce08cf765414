//! L'Ecuyer's LFSR113: the combined Tausworthe generator of "Tables of maximally
//! equidistributed combined LFSR generators", Math. Comp. 68 (1999) 261-269.
//!
//! Four Tausworthe components, each stepped by
//! `b = ((z << S1) ^ z) >> S2; z = ((z & M) << S3) ^ b`; the output is `z1 ^ z2 ^ z3 ^ z4`.
//!
//! | component | (S1, S2, M, S3) | period |
//! |---|---|---|
//! | z1 | (6, 13, 0xFFFFFFFE, 18) | 2^31 - 1 |
//! | z2 | (2, 27, 0xFFFFFFF8, 2) | 2^29 - 1 |
//! | z3 | (13, 21, 0xFFFFFFF0, 7) | 2^28 - 1 |
//! | z4 | (3, 12, 0xFFFFFF80, 13) | 2^25 - 1 |
//!
//! The periods are pairwise coprime, so every valid state lies on one cycle of length
//! `(2^31 - 1)(2^29 - 1)(2^28 - 1)(2^25 - 1)`, about 2^113.
//!
//! **Valid states.** The mask drops the low 1, 3, 4 and 7 bits of z1..z4, and a component whose
//! remaining bits are all zero stays zero forever: the valid states are `z1 > 1`, `z2 > 7`,
//! `z3 > 15`, `z4 > 127` (L'Ecuyer's seeding rule). The dropped bits are part of the raw state
//! but never reach an output (the step reads only the kept bits, because `S2 - S1` is at least
//! the mask's width), so two raw states that differ only there produce the same sequence.
//!
//! **Streams.** Stream `k` of seed `s` starts at the first valid `[z1, z2, z3, z4]` among
//! `Philox4x32-10(counter = (k mod 2^32, k >> 32, j, "L113"), key = (s mod 2^32, s >> 32))`,
//! `j = 0, 1, ...` ([`super::streams::philox_derived`] with [`LFSR113_TAG`]; a retry is needed
//! with probability about 2^-25). Distinct streams of a seed start from distinct raw states
//! (Philox is a bijection of the counter), at pseudo-random points of the 2^113 cycle; they are
//! not spaced by a jump, so two of `n` streams of `L` outputs each overlap with probability
//! below `n^2 L / 2^113`: under 2^-33 for 2^30 streams of 2^20 outputs. Users who need streams
//! that provably do not overlap can space them with [`Skip::skip`] (PRAND, for example, spaces
//! its LFSR113 streams 20,669,825,409 steps apart).
//!
//! **Skip.** Each component's step is linear over GF(2) on the whole 32-bit word, so `n` steps
//! are a 32x32 bit matrix `T^n`; `skip` reduces `n` modulo the component's period and applies
//! precomputed `T^(2^i)` for the set bits (see [`super::taus88`], whose machinery this shares):
//! at most 31 matrix-vector products of 32 word operations per component, whatever `n`.
//!
//! **Quality.** Maximally equidistributed and fast, but every output bit is a linear function
//! over GF(2) of the 113 significant state bits: each output bit sequence has linear complexity
//! at most 113, and LFSR113 fails TestU01's linear-complexity and matrix-rank tests.

use super::taus88::{JumpTable, Tausworthe};
use super::{Generator, InvalidState, Skip, Uniform32};

/// Counter word 3 of LFSR113's Philox-derived streams ("L113").
pub const LFSR113_TAG: u32 = 0x4C31_3133;

/// Smallest valid value of each component (z1, z2, z3, z4).
pub const MIN_STATE: [u32; 4] = [2, 8, 16, 128];

const C1: Tausworthe = Tausworthe { s1: 6, s2: 13, s3: 18, mask: 0xFFFF_FFFE, period: 0x7FFF_FFFF };
const C2: Tausworthe = Tausworthe { s1: 2, s2: 27, s3: 2, mask: 0xFFFF_FFF8, period: 0x1FFF_FFFF };
const C3: Tausworthe = Tausworthe { s1: 13, s2: 21, s3: 7, mask: 0xFFFF_FFF0, period: 0x0FFF_FFFF };
const C4: Tausworthe = Tausworthe { s1: 3, s2: 12, s3: 13, mask: 0xFFFF_FF80, period: 0x01FF_FFFF };

// A `const`, not a `static`: a user's integrand module (built with --emit=asm) embeds what it
// reads of a const, but would hold a static of this crate only as an undefined `.extern .global`
// (README, "Your own integrand").
const JUMP1: JumpTable = C1.jump_table();
const JUMP2: JumpTable = C2.jump_table();
const JUMP3: JumpTable = C3.jump_table();
const JUMP4: JumpTable = C4.jump_table();

/// Generator state: `[z1, z2, z3, z4]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct Lfsr113 {
    pub z: [u32; 4],
}

impl Lfsr113 {
    /// Whether `z` is a valid state (see the module docs).
    #[inline(always)]
    pub fn is_valid(z: [u32; 4]) -> bool {
        z[0] >= MIN_STATE[0] && z[1] >= MIN_STATE[1] && z[2] >= MIN_STATE[2] && z[3] >= MIN_STATE[3]
    }

    /// A generator from a raw state, rejecting states with a dead component.
    pub fn from_state(z: [u32; 4]) -> Result<Self, InvalidState> {
        const RULES: [&str; 4] = [
            "z1 must be >= 2 (the generator discards its low 1 bit, and a component left at zero stays zero)",
            "z2 must be >= 8 (the generator discards its low 3 bits, and a component left at zero stays zero)",
            "z3 must be >= 16 (the generator discards its low 4 bits, and a component left at zero stays zero)",
            "z4 must be >= 128 (the generator discards its low 7 bits, and a component left at zero stays zero)",
        ];
        let mut i = 0;
        while i < 4 {
            if z[i] < MIN_STATE[i] {
                return Err(InvalidState { generator: Self::NAME, word: Some(i as u8), value: z[i], rule: RULES[i] });
            }
            i += 1;
        }
        Ok(Self { z })
    }
}

impl Uniform32 for Lfsr113 {
    #[inline(always)]
    fn next_u32(&mut self) -> u32 {
        self.z[0] = C1.step(self.z[0]);
        self.z[1] = C2.step(self.z[1]);
        self.z[2] = C3.step(self.z[2]);
        self.z[3] = C4.step(self.z[3]);
        self.z[0] ^ self.z[1] ^ self.z[2] ^ self.z[3]
    }
}

// SAFETY: #[repr(C)] with one field, [u32; 4]: four words, no padding.
unsafe impl Generator for Lfsr113 {
    const NAME: &'static str = "lfsr113";
    const RAW_STATE: &'static str = "z1,z2,z3,z4";
    const RAW_STATE_WORDS: usize = 4;
    const PERIOD: &'static str = "about 2^113";

    /// Philox-derived starting points (see the module docs).
    #[inline(always)]
    fn stream(seed: u64, stream: u64) -> Self {
        Self { z: super::streams::philox_derived(seed, stream, LFSR113_TAG, Self::is_valid) }
    }

    fn from_raw_state(words: &[u32]) -> Result<Self, InvalidState> {
        let z: [u32; 4] = words
            .try_into()
            .map_err(|_| InvalidState::word_count(Self::NAME, "it has exactly four words, z1,z2,z3,z4"))?;
        Self::from_state(z)
    }
}

impl Skip for Lfsr113 {
    #[inline(always)]
    fn skip(&mut self, n: u64) {
        self.z[0] = C1.skip(&JUMP1, self.z[0], n);
        self.z[1] = C2.skip(&JUMP2, self.z[1], n);
        self.z[2] = C3.skip(&JUMP3, self.z[2], n);
        self.z[3] = C4.skip(&JUMP4, self.z[3], n);
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::*;

    /// The definition, written out separately from the generator's step.
    fn reference_step(z: &mut [u32; 4]) -> u32 {
        let b = ((z[0] << 6) ^ z[0]) >> 13;
        z[0] = ((z[0] & 0xFFFF_FFFE) << 18) ^ b;
        let b = ((z[1] << 2) ^ z[1]) >> 27;
        z[1] = ((z[1] & 0xFFFF_FFF8) << 2) ^ b;
        let b = ((z[2] << 13) ^ z[2]) >> 21;
        z[2] = ((z[2] & 0xFFFF_FFF0) << 7) ^ b;
        let b = ((z[3] << 3) ^ z[3]) >> 12;
        z[3] = ((z[3] & 0xFFFF_FF80) << 13) ^ b;
        z[0] ^ z[1] ^ z[2] ^ z[3]
    }

    /// Raw states with the masked-off low bits set, and minimal ones.
    fn test_states() -> Vec<Lfsr113> {
        [
            [0xFFFF_FFFF; 4],
            [2, 8, 16, 128],
            [3, 15, 31, 255],
            [987654321; 4],
            [0x8000_0001, 0x8000_0007, 0x8000_000F, 0x8000_007F],
        ]
        .into_iter()
        .map(|z| Lfsr113::from_state(z).unwrap())
        .collect()
    }

    /// Published known answers (docs/ALGORITHMS.md): L'Ecuyer's check from seeds 987654321 x4,
    /// and PRAND's (Barash and Shchur) from seeds 12345 x4.
    #[test]
    fn reference() {
        let mut g = Lfsr113::from_raw_state(&[987_654_321; 4]).unwrap();
        let first: Vec<u32> = (0..5).map(|_| g.next_u32()).collect();
        assert_eq!(first, [0xEB97_5594, 0x471B_9434, 0x9078_435E, 0x4954_0227, 0x2EF9_F25D]);
        let mut g = Lfsr113::from_raw_state(&[987_654_321; 4]).unwrap();
        g.skip(10_000);
        let next: Vec<u32> = (0..8).map(|_| g.next_u32()).collect();
        assert_eq!(
            next,
            [0xFFC8_2E32, 0x3642_8E7D, 0x87B8_571B, 0xFF16_9F0F, 0x930E_DB4F, 0xA10D_951E, 0xF281_02A2, 0x4FC2_7B17]
        );

        // PRAND: frac(sum of the first 10^8 outputs / 2^32) and the next output / 2^32, to 6 digits.
        let mut g = Lfsr113::from_raw_state(&[12345; 4]).unwrap();
        let mut sum = 0u32;
        for _ in 0..100_000_000 {
            sum = sum.wrapping_add(g.next_u32());
        }
        let frac = sum as f64 / 4_294_967_296.0;
        let next = g.next_u32() as f64 / 4_294_967_296.0;
        assert!((frac - 0.267101).abs() < 1e-6, "sum: {frac}");
        assert!((next - 0.625769).abs() < 1e-6, "next: {next}");
        // The skip reaches the same point.
        let mut h = Lfsr113::from_raw_state(&[12345; 4]).unwrap();
        h.skip(100_000_000);
        assert_eq!(h.next_u32() as f64 / 4_294_967_296.0, next);
    }

    #[test]
    fn from_raw_state_follows_definition() {
        for words in [[12345u32, 67890, 13579, 24680], [0xFFFF_FFFF, 9, 17, 129], [2, 8, 16, 128]] {
            follows_reference_step::<Lfsr113, 4>(words, 10_000, reference_step);
        }
    }

    #[test]
    fn value_stability() {
        // Pinned: a change here changes every result produced with this generator.
        assert_eq!(first(&mut Lfsr113::stream(0, 0), 3), [4143628520, 2756356626, 2204586049]);
        assert_eq!(first(&mut Lfsr113::stream(0x0123_4567_89AB_CDEF, 1000), 3), [2199505599, 2207233567, 1306212627]);
    }

    #[test]
    fn skip_equals_stepping() {
        let mut r = 1u64;
        let ns = skip_lengths((0..6).map(|_| splitmix64(&mut r) % 1_000_001));
        for g in test_states() {
            skip_matches_stepping(g, &ns);
        }
    }

    /// Right after from_raw_state the masked-off bits may be set; one skip is exactly one step.
    #[test]
    fn skip_one_on_raw_words() {
        let mut r = 7u64;
        for _ in 0..10_000 {
            let z = [
                splitmix64(&mut r) as u32 | 2,
                splitmix64(&mut r) as u32 | 8,
                splitmix64(&mut r) as u32 | 16,
                splitmix64(&mut r) as u32 | 128,
            ];
            skip_matches_stepping(Lfsr113::from_state(z).unwrap(), &[1, 2]);
        }
    }

    #[test]
    fn skips_compose() {
        let mut r = 3u64;
        let big =
            [1u64 << 40, 1 << 63, u64::MAX / 2, 0x7FFF_FFFF, 0x1FFF_FFFF, 0x0FFF_FFFF, 0x01FF_FFFF, 20_669_825_409];
        for g in test_states() {
            let mut pairs: Vec<_> = (0..20).map(|_| (splitmix64(&mut r) >> 1, splitmix64(&mut r) >> 1)).collect();
            pairs.extend(big.iter().flat_map(|&a| [0, 1, 2, 12345, 1 << 40].map(|b| (a, b))));
            pairs.push((u64::MAX - 5, 5));
            skips_compose_for(g, &pairs);
        }
    }

    /// Each component returns after its own period, and only then.
    #[test]
    fn periods_via_skip() {
        let g = stepped(Lfsr113::from_state([0xFFFF_FFFF; 4]).unwrap(), 1);
        let p = [C1.period as u64, C2.period as u64, C3.period as u64, C4.period as u64];
        for pi in p {
            let h = skipped(g, pi);
            for (j, pj) in p.into_iter().enumerate() {
                assert_eq!(h.z[j] == g.z[j], pi % pj == 0, "component {j} after {pi}");
            }
        }
        let h = skipped(g, p[0] * p[1]);
        assert_eq!(h.z[..2], g.z[..2]);
        assert_ne!(h.z[2], g.z[2]);
        assert_ne!(h.z[3], g.z[3]);
    }

    /// The facts `skip` relies on: T^(p+1) = T on the whole word, and p is the exact period
    /// (T^(p/q + 1) != T for every prime q dividing p).
    #[test]
    fn component_periods() {
        for (c, primes) in [
            (C1, &[2147483647u64][..]),
            (C2, &[233, 1103, 2089][..]),
            (C3, &[3, 5, 29, 43, 113, 127][..]),
            (C4, &[31, 601, 1801][..]),
        ] {
            tausworthe_period_is_exact(c, primes);
        }
    }

    #[test]
    fn large_skip_is_cheap() {
        skips_are_cheap(Lfsr113::stream(1, 2), (0..10_000u64).map(|i| u64::MAX - i));
    }

    #[test]
    fn streams_are_valid_and_distinct() {
        // The kept bits decide the sequence: the helper compares the states after one step.
        for g in streams_start_distinct::<Lfsr113>(42, 1000) {
            assert!(Lfsr113::is_valid(g.z));
        }
        seed_and_stream_halves_matter::<Lfsr113>();
        // The documented rule: the first Philox block (j = 0) is valid for these streams.
        for (seed, k) in [(0u64, 0u64), (0x0123_4567_89AB_CDEF, 1000), (u64::MAX, 1 << 40)] {
            assert_eq!(Lfsr113::stream(seed, k).z, first_philox_candidate(seed, k, 0x4C31_3133));
        }
        let h = super::super::streams::hybrid_taus_stream(42, 0);
        assert_ne!(Lfsr113::stream(42, 0).z, h.z);
    }

    #[test]
    fn neighbouring_streams_differ() {
        neighbours_rarely_agree::<Lfsr113>(7, 0..20, 1000);
    }

    #[test]
    fn invalid_states() {
        for (z, word, value) in [
            ([1, 8, 16, 128], 0, 1),
            ([0, 8, 16, 128], 0, 0),
            ([2, 7, 16, 128], 1, 7),
            ([2, 8, 15, 128], 2, 15),
            ([2, 8, 16, 127], 3, 127),
        ] {
            let e = Lfsr113::from_raw_state(&z).unwrap_err();
            assert_eq!((e.generator, e.word, e.value), ("lfsr113", Some(word), value));
            let rule = ["z1 must be >= 2", "z2 must be >= 8", "z3 must be >= 16", "z4 must be >= 128"][word as usize];
            assert!(e.rule.starts_with(rule));
        }
        assert_eq!(Lfsr113::from_raw_state(&[2, 8, 16, 128]), Ok(Lfsr113 { z: [2, 8, 16, 128] }));
        rejects_word_counts::<Lfsr113>(&[&[2, 8, 16], &[2, 8, 16, 128, 0], &[]], "it has exactly four words");
        // The rule is tight: a component just below its minimum is zero after one step.
        for (i, (c, z)) in [(C1, 1u32), (C2, 7), (C3, 15), (C4, 127)].into_iter().enumerate() {
            assert_eq!(c.step(z), 0, "component {}", i + 1);
            assert_ne!(c.step(z + 1), 0);
        }
    }
}
