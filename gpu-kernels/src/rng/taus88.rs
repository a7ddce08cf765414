//! L'Ecuyer's taus88: the maximally equidistributed combined Tausworthe generator of "Maximally
//! equidistributed combined Tausworthe generators", Math. Comp. 65 (1996) 203-213.
//!
//! Three Tausworthe components, each stepped by
//! `b = ((z << S1) ^ z) >> S2; z = ((z & M) << S3) ^ b`; the output is `z1 ^ z2 ^ z3`.
//!
//! | component | (S1, S2, S3, M) | period |
//! |---|---|---|
//! | z1 | (13, 19, 12, 0xFFFFFFFE) | 2^31 - 1 |
//! | z2 | (2, 25, 4, 0xFFFFFFF8) | 2^29 - 1 |
//! | z3 | (3, 11, 17, 0xFFFFFFF0) | 2^28 - 1 |
//!
//! These are exactly the Tausworthe components of [`super::hybrid_taus`]. The periods are
//! pairwise coprime, so every valid state lies on one cycle of length
//! `(2^31 - 1)(2^29 - 1)(2^28 - 1)`, about 2^88.
//!
//! **Valid states.** The mask drops the low 1, 3 and 4 bits of z1, z2 and z3, and a component
//! whose remaining bits are all zero stays zero forever: the valid states are `z1 >= 2`,
//! `z2 >= 8`, `z3 >= 16`. The dropped bits are part of the raw state but never reach an output
//! (the step reads only the kept bits, because `S2 - S1` is at least the mask's width), so two raw
//! states that differ only there produce the same sequence.
//!
//! **Streams.** Stream `k` of seed `s` starts at the first valid `[z1, z2, z3]` among words 0..3
//! of `Philox4x32-10(counter = (k mod 2^32, k >> 32, j, "TA88"), key = (s mod 2^32, s >> 32))`,
//! `j = 0, 1, ...` ([`super::streams::philox_derived`] with [`TAUS88_TAG`]; a retry is needed with
//! probability about 2^-27). Distinct streams of a seed start from distinct raw states (Philox is a
//! bijection of the counter), at pseudo-random points of the 2^88 cycle; they are not spaced
//! by a jump, so two of `n` streams of `L` outputs each overlap with probability below
//! `n^2 L / 2^88`: under 2^-18 for 2^20 streams of 2^30 outputs, but only under 2^-8 for 2^30
//! streams of 2^20 outputs. Users who need streams that provably do not overlap can space them
//! with [`Skip::skip`] (for example, stream `k` = a common start skipped by `k * 2^40`: up to
//! 2^24 streams of 2^40 outputs each).
//!
//! **Skip.** Each component's step is linear over GF(2) on the whole 32-bit word (the mask, the
//! shifts and the XOR are all linear), so `n` steps are a 32x32 bit matrix `T^n`. From the first
//! step on, a component's word repeats with its period `p` (`T^(p+1) = T`, checked in the
//! tests), so `skip` reduces `n` to `(n - 1) mod p + 1 < 2^31` and applies the precomputed
//! `T^(2^i)` (compile-time tables, 31 matrices of 32 words per component) for the set bits:
//! at most 31 matrix-vector products of 32 word operations per component, whatever `n`.
//!
//! **Quality.** taus88 is maximally equidistributed, fast, and small (three words), but every
//! output bit is a linear function over GF(2) of the 88 significant state bits: each output bit
//! sequence has linear complexity at most 88, so linear-complexity tests and binary matrix-rank
//! tests on matrices larger than 88 x 88 fail it. Its 2^88 period is short for very large
//! parallel jobs (see the overlap bound above).

use super::{Generator, InvalidState, Skip, Uniform32};

/// Counter word 3 of taus88's Philox-derived streams ("TA88").
pub const TAUS88_TAG: u32 = 0x5441_3838;

/// Smallest valid value of each component (z1, z2, z3).
pub const MIN_STATE: [u32; 3] = [2, 8, 16];

/// One Tausworthe component `b = ((z << S1) ^ z) >> S2; z = ((z & M) << S3) ^ b`, with the
/// period of its significant bits. Shared with [`super::lfsr113`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct Tausworthe {
    pub s1: u32,
    pub s2: u32,
    pub s3: u32,
    pub mask: u32,
    /// The component's period, `2^k - 1` for `k` kept bits.
    pub period: u32,
}

/// How many `T^(2^i)` a jump table holds: a reduced exponent is below 2^31.
pub(crate) const JUMP_BITS: usize = 31;

/// `T^(2^i)` for `i = 0..JUMP_BITS`, each a 32x32 bit matrix (column `j` is the image of `1 << j`).
pub(crate) type JumpTable = [[u32; 32]; JUMP_BITS];

impl Tausworthe {
    #[inline(always)]
    pub(crate) const fn step(&self, z: u32) -> u32 {
        let b = ((z << self.s1) ^ z) >> self.s2;
        ((z & self.mask) << self.s3) ^ b
    }

    /// The step as a bit matrix.
    pub(crate) const fn matrix(&self) -> [u32; 32] {
        let mut m = [0u32; 32];
        let mut j = 0;
        while j < 32 {
            m[j] = self.step(1 << j);
            j += 1;
        }
        m
    }

    /// `T^(2^i)` for `i = 0..JUMP_BITS`, by repeated squaring (evaluated at compile time).
    pub(crate) const fn jump_table(&self) -> JumpTable {
        let mut t = [[0u32; 32]; JUMP_BITS];
        t[0] = self.matrix();
        let mut i = 1;
        while i < JUMP_BITS {
            t[i] = mat_mul(&t[i - 1], &t[i - 1]);
            i += 1;
        }
        t
    }

    /// `z` advanced by `n` steps, with `table` this component's [`Self::jump_table`].
    #[inline(always)]
    pub(crate) fn skip(&self, table: &JumpTable, z: u32, n: u64) -> u32 {
        if n == 0 {
            return z;
        }
        // T^(p+1) = T, so any exponent n >= 1 may be replaced by one in [1, p] congruent mod p.
        let mut e = (n - 1) % self.period as u64 + 1;
        let mut z = z;
        let mut i = 0;
        while e != 0 && i < JUMP_BITS {
            if e & 1 != 0 {
                z = mat_vec(&table[i], z);
            }
            e >>= 1;
            i += 1;
        }
        z
    }
}

/// `m v` over GF(2): the XOR of the columns of `m` selected by the bits of `v`.
#[inline(always)]
pub(crate) const fn mat_vec(m: &[u32; 32], v: u32) -> u32 {
    let mut r = 0;
    let mut j = 0;
    while j < 32 {
        // Branch-free select, so GPU lanes with different words do not diverge.
        r ^= m[j] & ((v >> j) & 1).wrapping_neg();
        j += 1;
    }
    r
}

/// `a b` over GF(2) (apply `b` first).
pub(crate) const fn mat_mul(a: &[u32; 32], b: &[u32; 32]) -> [u32; 32] {
    let mut c = [0u32; 32];
    let mut j = 0;
    while j < 32 {
        c[j] = mat_vec(a, b[j]);
        j += 1;
    }
    c
}

const C1: Tausworthe = Tausworthe { s1: 13, s2: 19, s3: 12, mask: 0xFFFF_FFFE, period: 0x7FFF_FFFF };
const C2: Tausworthe = Tausworthe { s1: 2, s2: 25, s3: 4, mask: 0xFFFF_FFF8, period: 0x1FFF_FFFF };
const C3: Tausworthe = Tausworthe { s1: 3, s2: 11, s3: 17, mask: 0xFFFF_FFF0, period: 0x0FFF_FFFF };

// A `const`, not a `static`: a user's integrand module (built with --emit=asm) embeds what it
// reads of a const, but would hold a static of this crate only as an undefined `.extern .global`
// (README, "Your own integrand").
const JUMP1: JumpTable = C1.jump_table();
const JUMP2: JumpTable = C2.jump_table();
const JUMP3: JumpTable = C3.jump_table();

/// Generator state: `[z1, z2, z3]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct Taus88 {
    pub z: [u32; 3],
}

impl Taus88 {
    /// Whether `z` is a valid state (see the module docs).
    #[inline(always)]
    pub fn is_valid(z: [u32; 3]) -> bool {
        z[0] >= MIN_STATE[0] && z[1] >= MIN_STATE[1] && z[2] >= MIN_STATE[2]
    }

    /// A generator from a raw state, rejecting states with a dead component.
    pub fn from_state(z: [u32; 3]) -> Result<Self, InvalidState> {
        const RULES: [&str; 3] = [
            "z1 must be >= 2 (the generator discards its low 1 bit, and a component left at zero stays zero)",
            "z2 must be >= 8 (the generator discards its low 3 bits, and a component left at zero stays zero)",
            "z3 must be >= 16 (the generator discards its low 4 bits, and a component left at zero stays zero)",
        ];
        let mut i = 0;
        while i < 3 {
            if z[i] < MIN_STATE[i] {
                return Err(InvalidState { generator: Self::NAME, word: Some(i as u8), value: z[i], rule: RULES[i] });
            }
            i += 1;
        }
        Ok(Self { z })
    }
}

impl Uniform32 for Taus88 {
    #[inline(always)]
    fn next_u32(&mut self) -> u32 {
        self.z[0] = C1.step(self.z[0]);
        self.z[1] = C2.step(self.z[1]);
        self.z[2] = C3.step(self.z[2]);
        self.z[0] ^ self.z[1] ^ self.z[2]
    }
}

// SAFETY: #[repr(C)] with one field, [u32; 3]: three words, no padding.
unsafe impl Generator for Taus88 {
    const NAME: &'static str = "taus88";
    const RAW_STATE: &'static str = "z1,z2,z3";
    const RAW_STATE_WORDS: usize = 3;
    const PERIOD: &'static str = "about 2^88";

    /// Philox-derived starting points (see the module docs).
    #[inline(always)]
    fn stream(seed: u64, stream: u64) -> Self {
        let w = super::streams::philox_derived(seed, stream, TAUS88_TAG, |w| Self::is_valid([w[0], w[1], w[2]]));
        Self { z: [w[0], w[1], w[2]] }
    }

    fn from_raw_state(words: &[u32]) -> Result<Self, InvalidState> {
        let z: [u32; 3] = words
            .try_into()
            .map_err(|_| InvalidState::word_count(Self::NAME, "it has exactly three words, z1,z2,z3"))?;
        Self::from_state(z)
    }
}

impl Skip for Taus88 {
    #[inline(always)]
    fn skip(&mut self, n: u64) {
        self.z[0] = C1.skip(&JUMP1, self.z[0], n);
        self.z[1] = C2.skip(&JUMP2, self.z[1], n);
        self.z[2] = C3.skip(&JUMP3, self.z[2], n);
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::*;

    /// The definition, written out separately from the generator's step.
    fn reference_step(z: &mut [u32; 3]) -> u32 {
        let b = ((z[0] << 13) ^ z[0]) >> 19;
        z[0] = ((z[0] & 0xFFFF_FFFE) << 12) ^ b;
        let b = ((z[1] << 2) ^ z[1]) >> 25;
        z[1] = ((z[1] & 0xFFFF_FFF8) << 4) ^ b;
        let b = ((z[2] << 3) ^ z[2]) >> 11;
        z[2] = ((z[2] & 0xFFFF_FFF0) << 17) ^ b;
        z[0] ^ z[1] ^ z[2]
    }

    /// Raw states with the masked-off low bits set, and minimal ones.
    fn test_states() -> Vec<Taus88> {
        [[0xFFFF_FFFF; 3], [2, 8, 16], [3, 15, 31], [12345, 12345, 12345], [0x8000_0001, 0x8000_0007, 0x8000_000F]]
            .into_iter()
            .map(|z| Taus88::from_state(z).unwrap())
            .collect()
    }

    /// ISO 28640:2010's check: z1 = 19660809, z2 and z3 continue it by s = 1664525 s + 1,
    /// keeping values with s & 0xFFFFFFF0 != 0; the 5000th output >> 1 is 262361229.
    #[test]
    fn reference() {
        let mut s: u32 = 19_660_809;
        let mut z = [0u32; 3];
        z[0] = s;
        for zi in &mut z[1..] {
            s = s.wrapping_mul(1_664_525).wrapping_add(1);
            while s & 0xFFFF_FFF0 == 0 {
                s = s.wrapping_mul(1_664_525).wrapping_add(1);
            }
            *zi = s;
        }
        let mut g = Taus88::from_raw_state(&z).unwrap();
        let out = (0..5000).map(|_| g.next_u32()).last().unwrap();
        assert_eq!(out >> 1, 262_361_229);
    }

    #[test]
    fn from_raw_state_follows_definition() {
        for words in [[12345u32, 67890, 13579], [0xFFFF_FFFF, 9, 17], [2, 8, 16]] {
            follows_reference_step::<Taus88, 3>(words, 10_000, reference_step);
        }
    }

    #[test]
    fn value_stability() {
        // Pinned: a change here changes every result produced with this generator.
        assert_eq!(first(&mut Taus88::stream(0, 0), 3), [4035074797, 1110146958, 2424416358]);
        assert_eq!(first(&mut Taus88::stream(0x0123_4567_89AB_CDEF, 1000), 3), [2607765595, 2123580224, 831895082]);
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
            let z = [splitmix64(&mut r) as u32 | 2, splitmix64(&mut r) as u32 | 8, splitmix64(&mut r) as u32 | 16];
            skip_matches_stepping(Taus88::from_state(z).unwrap(), &[1, 2]);
        }
    }

    #[test]
    fn skips_compose() {
        let mut r = 3u64;
        let big = [1u64 << 40, 1 << 63, u64::MAX / 2, 0x7FFF_FFFF, 0x7FFF_FFFE, 0x1FFF_FFFF, 0x0FFF_FFFF];
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
        let g = stepped(Taus88::from_state([0xFFFF_FFFF; 3]).unwrap(), 1);
        let p = [C1.period as u64, C2.period as u64, C3.period as u64];
        for (i, pi) in p.into_iter().enumerate() {
            let h = skipped(g, pi);
            for (j, pj) in p.into_iter().enumerate() {
                assert_eq!(h.z[j] == g.z[j], pi % pj == 0, "component {j} after {pi}");
            }
            assert_eq!(h.z[i], g.z[i]);
        }
        // The combined period is the product (it overflows u64): after p1 p2 steps z3 has not returned.
        let h = skipped(g, p[0] * p[1]);
        assert_eq!((h.z[0], h.z[1]), (g.z[0], g.z[1]));
        assert_ne!(h.z[2], g.z[2]);
    }

    /// The facts `skip` relies on: T^(p+1) = T on the whole word, and p is the exact period
    /// (T^(p/q + 1) != T for every prime q dividing p).
    #[test]
    fn component_periods() {
        for (c, primes) in
            [(C1, &[2147483647u64][..]), (C2, &[233, 1103, 2089][..]), (C3, &[3, 5, 29, 43, 113, 127][..])]
        {
            tausworthe_period_is_exact(c, primes);
        }
    }

    #[test]
    fn large_skip_is_cheap() {
        skips_are_cheap(Taus88::stream(1, 2), (0..10_000u64).map(|i| u64::MAX - i));
    }

    #[test]
    fn streams_are_valid_and_distinct() {
        // The kept bits decide the sequence: the helper compares the states after one step.
        for g in streams_start_distinct::<Taus88>(42, 1000) {
            assert!(Taus88::is_valid(g.z));
        }
        seed_and_stream_halves_matter::<Taus88>();
        // The documented rule: the first Philox block (j = 0) is valid for these streams.
        for (seed, k) in [(0u64, 0u64), (0x0123_4567_89AB_CDEF, 1000), (u64::MAX, 1 << 40)] {
            let w = first_philox_candidate(seed, k, 0x5441_3838);
            assert_eq!(Taus88::stream(seed, k).z, [w[0], w[1], w[2]]);
        }
        // Not the hybrid Tausworthe's starting points: the tag differs.
        let h = super::super::streams::hybrid_taus_stream(42, 0);
        assert_ne!(Taus88::stream(42, 0).z, [h.z[0], h.z[1], h.z[2]]);
    }

    #[test]
    fn neighbouring_streams_differ() {
        neighbours_rarely_agree::<Taus88>(7, 0..20, 1000);
    }

    #[test]
    fn invalid_states() {
        for (z, word, value) in [([1, 8, 16], 0, 1), ([0, 8, 16], 0, 0), ([2, 7, 16], 1, 7), ([2, 8, 15], 2, 15)] {
            let e = Taus88::from_raw_state(&z).unwrap_err();
            assert_eq!((e.generator, e.word, e.value), ("taus88", Some(word), value));
            assert!(e.rule.starts_with(["z1 must be >= 2", "z2 must be >= 8", "z3 must be >= 16"][word as usize]));
        }
        assert_eq!(Taus88::from_raw_state(&[2, 8, 16]), Ok(Taus88 { z: [2, 8, 16] }));
        rejects_word_counts::<Taus88>(&[&[2, 8], &[2, 8, 16, 0], &[]], "it has exactly three words");
        // The rule is tight: a component just below its minimum is zero after one step.
        for (i, (c, z)) in [(C1, 1u32), (C2, 7), (C3, 15)].into_iter().enumerate() {
            assert_eq!(c.step(z), 0, "component {}", i + 1);
            assert_ne!(c.step(z + 1), 0);
        }
    }
}
