//! Marsaglia's KISS ("Keep It Simple Stupid") as posted to sci.stat.math on 1999-01-20
//! ("Random numbers for C: End, at last?"), a baseline of the comparison table.
//!
//! Three simple generators, each updating its own state, combined from their new values:
//!
//! - MWC, two 16-bit multiply-with-carry generators: `z = 36969 (z & 65535) + (z >> 16)`,
//!   `w = 18000 (w & 65535) + (w >> 16)`, `MWC = (z << 16) + w`;
//! - SHR3, a 3-shift register: `jsr ^= jsr << 17; jsr ^= jsr >> 13; jsr ^= jsr << 5`;
//! - CONG, an LCG: `jcong = 69069 jcong + 1234567`;
//!
//! and `KISS = (MWC ^ CONG) + SHR3`, all modulo 2^32. The raw state is `z, w, jsr, jcong` (the
//! post's order; its example seeds are 12345, 65435, 34221, 12345).
//!
//! **Periods.** `z`'s recursion is `x -> x 2^-16 mod m` with `m = 36969 * 2^16 - 1` (a prime), so
//! from any `z` in `[1, m - 1]` it has period `(m - 1)/2 = 1211400191` (prime): the order of 2^16
//! modulo `m`. Likewise `w`: `m = 18000 * 2^16 - 1`, period 589823999 (prime). Larger words
//! enter that range within two steps. CONG has period 2^32 from every state. **SHR3 with shifts
//! (17, 13, 5), as in the 1999 post, is not full period** (the post says 2^32 - 1, which holds
//! for the shifts (13, 17, 5)): its 2^32 states fall into 64 cycles, of
//! lengths 1 (twice: 0 and 0xAEA21B8F), 2, 4, 585 (14 cycles), 1170 (7), 2340 (7), 131071 (2),
//! 262142, 524284, 76676535 (14), 153353070 (7) and 306706140 (7) (counted by brute force while
//! writing this module). So KISS's period depends on the starting state: it is
//! `2^32 * 1211400191 * 589823999 * (odd part of jsr's SHR3 cycle length)`: about 2^117.5 for all
//! but 2^-12 of the `jsr` values (those on the long SHR3 cycles, which include the post's 34221),
//! and at least 2^91.3 for every valid state. The post's "about 2^123" assumes a full-period SHR3.
//!
//! **Valid states.** A component stuck at a fixed point is rejected, with the states that step
//! to one:
//! - `z` not 0 or 0x9068FFFF (`36969 * 2^16 - 1`), the fixed points of `z`'s recursion (nothing
//!   else steps to them);
//! - `w` not 0 or 0x464FFFFF (`18000 * 2^16 - 1`), the fixed points of `w`'s recursion, nor
//!   0x8C9FFFFE or 0xD2EFFFFD, which step to 0x464FFFFF;
//! - `jsr` not 0 or 0xAEA21B8F, the fixed points of SHR3 (the post only warns about 0);
//! - any `jcong`.
//!
//! The short SHR3 cycles (lengths 2 to 524284) are accepted: KISS still has period at least
//! 2^91.3 from them.
//!
//! **Streams.** Stream `k` of seed `s` starts at the first valid `[z, w, jsr, jcong]` among
//! `Philox4x32-10(counter = (k mod 2^32, k >> 32, j, "KISS"), key = (s mod 2^32, s >> 32))`,
//! `j = 0, 1, ...` ([`super::streams::philox_derived`] with [`KISS_TAG`]; a retry is needed with
//! probability about 2^-29). Distinct streams of a seed start from distinct states (Philox is
//! a bijection of the counter), at pseudo-random points; they are not spaced by a jump, so two of
//! `n` streams of `L` outputs each overlap with probability below `n^2 L / 2^91` (the shortest
//! cycle of a valid state): under 2^-11 for 2^30 streams of 2^20 outputs (and about
//! `n^2 L / 2^117` for the typical state). KISS has no jump-ahead here (no [`super::Skip`]).
//!
//! **Quality.** A historical baseline for the comparison table, not a generator warpmc
//! recommends; its statistical quality has not been measured here. CONG's low bits are weak on
//! their own (the post says so), SHR3 is linear over GF(2) and short-cycled as above, and the
//! combination mixes `^` and `+`, so there is neither a jump-ahead nor an equidistribution
//! theory for it.

use super::{Generator, InvalidState, Uniform32};

/// Counter word 3 of KISS's Philox-derived streams ("KISS").
pub const KISS_TAG: u32 = 0x4B49_5353;

/// The nonzero fixed point of `z = 36969 (z & 65535) + (z >> 16)`: `36969 * 2^16 - 1`.
pub const Z_FIXED: u32 = 0x9068_FFFF;
/// The nonzero fixed point of `w = 18000 (w & 65535) + (w >> 16)`: `18000 * 2^16 - 1`.
pub const W_FIXED: u32 = 0x464F_FFFF;
/// The two other words that `w`'s recursion sends to [`W_FIXED`] in one step.
pub const W_TO_FIXED: [u32; 2] = [0x8C9F_FFFE, 0xD2EF_FFFD];
/// The nonzero fixed point of SHR3 (17, 13, 5).
pub const SHR3_FIXED: u32 = 0xAEA2_1B8F;

/// Generator state, in the post's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct Kiss {
    pub z: u32,
    pub w: u32,
    pub jsr: u32,
    pub jcong: u32,
}

#[inline(always)]
fn mwc_z(z: u32) -> u32 {
    // At most 36970 * 65535 < 2^32: no wrap.
    36969 * (z & 65535) + (z >> 16)
}

#[inline(always)]
fn mwc_w(w: u32) -> u32 {
    18000 * (w & 65535) + (w >> 16)
}

#[inline(always)]
fn shr3(mut j: u32) -> u32 {
    j ^= j << 17;
    j ^= j >> 13;
    j ^= j << 5;
    j
}

#[inline(always)]
fn cong(j: u32) -> u32 {
    j.wrapping_mul(69069).wrapping_add(1_234_567)
}

impl Kiss {
    /// Whether `[z, w, jsr, jcong]` is a valid state (see the module docs).
    #[inline(always)]
    pub fn is_valid(s: [u32; 4]) -> bool {
        let [z, w, jsr, _] = s;
        z != 0
            && z != Z_FIXED
            && w != 0
            && w != W_FIXED
            && w != W_TO_FIXED[0]
            && w != W_TO_FIXED[1]
            && jsr != 0
            && jsr != SHR3_FIXED
    }

    /// A generator from a raw state `[z, w, jsr, jcong]`, rejecting stuck components.
    pub fn from_state(s: [u32; 4]) -> Result<Self, InvalidState> {
        let [z, w, jsr, jcong] = s;
        let err = |word: u8, value: u32, rule: &'static str| InvalidState {
            generator: Self::NAME,
            word: Some(word),
            value,
            rule,
        };
        if z == 0 {
            return Err(err(0, z, "z must not be 0 (z's multiply-with-carry recursion would stay at 0)"));
        }
        if z == Z_FIXED {
            return Err(err(
                0,
                z,
                "z must not be 0x9068FFFF = 36969 * 2^16 - 1 (the fixed point of z = 36969 (z & 65535) + (z >> 16))",
            ));
        }
        if w == 0 {
            return Err(err(1, w, "w must not be 0 (w's multiply-with-carry recursion would stay at 0)"));
        }
        if w == W_FIXED || w == W_TO_FIXED[0] || w == W_TO_FIXED[1] {
            return Err(err(
                1,
                w,
                "w must not be 0x464FFFFF = 18000 * 2^16 - 1 (the fixed point of w = 18000 (w & 65535) + (w >> 16)), \
                 nor 0x8C9FFFFE or 0xD2EFFFFD (which step to it)",
            ));
        }
        if jsr == 0 {
            return Err(err(2, jsr, "jsr must not be 0 (the shift register SHR3 would stay at 0)"));
        }
        if jsr == SHR3_FIXED {
            return Err(err(2, jsr, "jsr must not be 0xAEA21B8F (the nonzero fixed point of the shift register SHR3)"));
        }
        Ok(Self { z, w, jsr, jcong })
    }
}

impl Uniform32 for Kiss {
    #[inline(always)]
    fn next_u32(&mut self) -> u32 {
        self.z = mwc_z(self.z);
        self.w = mwc_w(self.w);
        self.jsr = shr3(self.jsr);
        self.jcong = cong(self.jcong);
        let mwc = (self.z << 16).wrapping_add(self.w);
        (mwc ^ self.jcong).wrapping_add(self.jsr)
    }
}

// SAFETY: #[repr(C)] with four u32 fields: four words, no padding.
unsafe impl Generator for Kiss {
    const NAME: &'static str = "kiss";
    const RAW_STATE: &'static str = "z,w,jsr,jcong";
    const RAW_STATE_WORDS: usize = 4;
    const PERIOD: &'static str = "at least 2^91 for most states (SHR3 has 64 cycles)";

    /// Philox-derived starting points (see the module docs).
    #[inline(always)]
    fn stream(seed: u64, stream: u64) -> Self {
        let [z, w, jsr, jcong] = super::streams::philox_derived(seed, stream, KISS_TAG, Self::is_valid);
        Self { z, w, jsr, jcong }
    }

    fn from_raw_state(words: &[u32]) -> Result<Self, InvalidState> {
        let s: [u32; 4] = words
            .try_into()
            .map_err(|_| InvalidState::word_count(Self::NAME, "it has exactly four words, z,w,jsr,jcong"))?;
        Self::from_state(s)
    }
}

#[cfg(test)]
mod tests {
    use super::super::taus88::mat_vec;
    use super::super::testing::*;
    use super::*;

    const POST_SEEDS: [u32; 4] = [12345, 65435, 34221, 12345];

    /// A second implementation of the post's definition, written differently (u64 arithmetic,
    /// explicit reductions), to check the generator against.
    struct Reference {
        z: u64,
        w: u64,
        jsr: u64,
        jcong: u64,
    }

    impl Reference {
        const M32: u64 = 0xFFFF_FFFF;

        fn new(s: [u32; 4]) -> Self {
            Self { z: s[0] as u64, w: s[1] as u64, jsr: s[2] as u64, jcong: s[3] as u64 }
        }

        fn next(&mut self) -> u32 {
            self.z = (36969 * (self.z % 65536) + self.z / 65536) & Self::M32;
            self.w = (18000 * (self.w % 65536) + self.w / 65536) & Self::M32;
            let mwc = (self.z * 65536 + self.w) & Self::M32;
            self.jsr ^= (self.jsr * 131072) & Self::M32;
            self.jsr ^= self.jsr / 8192;
            self.jsr ^= (self.jsr * 32) & Self::M32;
            self.jcong = (69069 * self.jcong + 1_234_567) & Self::M32;
            (((mwc ^ self.jcong) + self.jsr) & Self::M32) as u32
        }
    }

    /// The post's own test program: `settable(12345, 65435, 34221, 12345, ...)` draws 256 KISS
    /// values for its table, then 10^6 more KISS values end at 1372460312; continuing from that
    /// state, 10^6 CONG values end at 1529210297, 10^6 SHR3 at 2642725982 and 10^6 MWC at
    /// 904977562 (each "prints 0" check of the post).
    #[test]
    fn reference() {
        let mut g = Kiss::from_raw_state(&POST_SEEDS).unwrap();
        for _ in 0..256 {
            g.next_u32();
        }
        let k = (0..1_000_000).map(|_| g.next_u32()).last().unwrap();
        assert_eq!(k, 1_372_460_312);
        for _ in 0..1_000_000 {
            g.jcong = cong(g.jcong);
        }
        assert_eq!(g.jcong, 1_529_210_297);
        for _ in 0..1_000_000 {
            g.jsr = shr3(g.jsr);
        }
        assert_eq!(g.jsr, 2_642_725_982);
        let mut mwc = 0;
        for _ in 0..1_000_000 {
            g.z = mwc_z(g.z);
            g.w = mwc_w(g.w);
            mwc = (g.z << 16).wrapping_add(g.w);
        }
        assert_eq!(mwc, 904_977_562);
    }

    #[test]
    fn matches_second_implementation() {
        let mut r = 5u64;
        let mut seeds = vec![POST_SEEDS, [0xFFFF_FFFF; 4], [1, 1, 1, 0]];
        seeds.extend((0..5).map(|_| Kiss::stream(splitmix64(&mut r), 0)).map(|g| [g.z, g.w, g.jsr, g.jcong]));
        for s in seeds {
            let mut g = Kiss::from_raw_state(&s).unwrap();
            let mut h = Reference::new(s);
            for _ in 0..100_000 {
                assert_eq!(g.next_u32(), h.next());
            }
            assert_eq!([g.z, g.w, g.jsr, g.jcong].map(u64::from), [h.z, h.w, h.jsr, h.jcong]);
        }
    }

    #[test]
    fn value_stability() {
        // Pinned after checking against `Reference` and the post's test values: a change here
        // changes every result produced with this generator.
        let mut g = Kiss::from_raw_state(&POST_SEEDS).unwrap();
        assert_eq!(first(&mut g, 5), [2406566837, 3945488823, 3217501373, 1294085848, 1685356791]);
        assert_eq!(first(&mut Kiss::stream(0, 0), 3), [1400327575, 1858115357, 3746200669]);
        assert_eq!(first(&mut Kiss::stream(0x0123_4567_89AB_CDEF, 1000), 3), [3614374109, 336788617, 240543222]);
    }

    /// The multiply-with-carry fixed points, and every word that reaches them, found
    /// exhaustively: a word `c 2^16 + y` steps to `a y + c`, so the preimages of `f` are the
    /// `(c, y)` with `c = f - a y` in `[0, 2^16)`.
    #[test]
    fn mwc_dead_states() {
        fn preimages(a: u64, f: u64) -> Vec<u32> {
            (0..65536u64)
                .filter_map(|y| f.checked_sub(a * y).filter(|&c| c < 65536).map(|c| (c << 16 | y) as u32))
                .collect()
        }
        fn dead(a: u64) -> Vec<u32> {
            // Fixed points: a y + c = c 2^16 + y.
            let mut set: Vec<u32> = (0..65536u64)
                .filter(|&y| ((a - 1) * y).is_multiple_of(65535) && (a - 1) * y / 65535 < 65536)
                .map(|y| (((a - 1) * y / 65535) << 16 | y) as u32)
                .collect();
            let mut i = 0;
            while i < set.len() {
                for p in preimages(a, set[i] as u64) {
                    if !set.contains(&p) {
                        set.push(p);
                    }
                }
                i += 1;
            }
            set.sort();
            set
        }
        assert_eq!(dead(36969), [0, Z_FIXED]);
        assert_eq!(dead(18000), [0, W_FIXED, W_TO_FIXED[0], W_TO_FIXED[1]]);
        // The fixed points are (a << 16) - 1.
        for (a, x, step) in [(36969u32, Z_FIXED, mwc_z as fn(u32) -> u32), (18000, W_FIXED, mwc_w)] {
            assert_eq!(x, (a << 16) - 1);
            assert_eq!(a * (x & 0xFFFF) + (x >> 16), x);
            assert_eq!(step(x), x);
        }
        for x in W_TO_FIXED {
            assert_eq!(mwc_w(x), W_FIXED);
        }
    }

    /// The periods quoted in the module docs: m = a 2^16 - 1 and (m - 1)/2 are prime, 2^16 has
    /// order (m - 1)/2 modulo m, and one step multiplies by 2^-16 modulo m.
    #[test]
    fn mwc_periods() {
        fn is_prime(n: u64) -> bool {
            n > 1 && (2..).take_while(|d| d * d <= n).all(|d| !n.is_multiple_of(d))
        }
        fn pow_mod(mut b: u64, mut e: u64, m: u64) -> u64 {
            let mut r = 1;
            while e > 0 {
                if e & 1 == 1 {
                    r = r * b % m;
                }
                b = b * b % m;
                e >>= 1;
            }
            r
        }
        let mut r = 9u64;
        for (a, period, step) in [(36969u64, 1_211_400_191u64, mwc_z as fn(u32) -> u32), (18000, 589_823_999, mwc_w)] {
            let m = a * 65536 - 1;
            assert!(is_prime(m) && is_prime(period) && period == (m - 1) / 2);
            // The order divides m - 1 = 2 period and is neither 1 nor 2.
            assert_eq!(pow_mod(65536, period, m), 1);
            assert_ne!(pow_mod(65536, 2, m), 1);
            // Words above m reach [1, m - 1] within two steps (w's two dead ones aside).
            let above = (0..10_000).map(|_| m + 1 + splitmix64(&mut r) % ((1 << 32) - m - 1));
            for x in above.chain([m + 1, (1 << 32) - 1, a << 16, (a << 16) + 65535 - a]) {
                let x = x as u32;
                if !W_TO_FIXED.contains(&x) || a != 18000 {
                    assert!((1..m).contains(&(step(step(x)) as u64)), "{x:#x}");
                }
            }
            for _ in 0..10_000 {
                let x = 1 + splitmix64(&mut r) % (m - 1);
                let y = step(x as u32) as u64;
                assert!((1..m).contains(&y));
                assert_eq!(y * 65536 % m, x);
            }
        }
    }

    /// SHR3 (17, 13, 5) as a bit matrix: not full period, with exactly one nonzero fixed point,
    /// and the post's jsr = 34221 on a cycle of 306706140 = 2^2 3^2 5 13 131071.
    #[test]
    fn shr3_cycles() {
        let t: [u32; 32] = core::array::from_fn(|j| shr3(1 << j));
        let pow = |e: u64| gf2_pow(&t, e);
        let identity: [u32; 32] = core::array::from_fn(|j| 1 << j);
        assert_ne!(pow((1 << 32) - 1), identity, "SHR3 (17, 13, 5) would be full period");
        assert_eq!(shr3(SHR3_FIXED), SHR3_FIXED);
        // rank(T + I) = 31: the fixed points are 0 and SHR3_FIXED only.
        let mut rows: Vec<u32> = (0..32).map(|j| t[j] ^ (1 << j)).collect();
        let mut rank = 0;
        for bit in (0..32).rev() {
            if let Some(p) = (rank..rows.len()).find(|&i| rows[i] >> bit & 1 == 1) {
                rows.swap(rank, p);
                for i in 0..rows.len() {
                    if i != rank && rows[i] >> bit & 1 == 1 {
                        rows[i] ^= rows[rank];
                    }
                }
                rank += 1;
            }
        }
        assert_eq!(rank, 31);
        let len = 306_706_140u64;
        assert_eq!(mat_vec(&pow(len), 34221), 34221);
        for q in [2, 3, 5, 13, 131071] {
            assert_ne!(mat_vec(&pow(len / q), 34221), 34221);
        }
    }

    #[test]
    fn streams_are_valid_and_distinct() {
        for g in streams_start_distinct::<Kiss>(42, 1000) {
            assert!(Kiss::is_valid([g.z, g.w, g.jsr, g.jcong]));
        }
        seed_and_stream_halves_matter::<Kiss>();
        for (seed, k) in [(0u64, 0u64), (0x0123_4567_89AB_CDEF, 1000), (u64::MAX, 1 << 40)] {
            let g = Kiss::stream(seed, k);
            assert_eq!([g.z, g.w, g.jsr, g.jcong], first_philox_candidate(seed, k, 0x4B49_5353));
        }
    }

    #[test]
    fn neighbouring_streams_differ() {
        neighbours_rarely_agree::<Kiss>(7, 0..20, 1000);
    }

    #[test]
    fn invalid_states() {
        let ok = [1u32, 1, 1, 0];
        for (word, value, rule) in [
            (0, 0, "z must not be 0"),
            (0, Z_FIXED, "z must not be 0x9068FFFF"),
            (1, 0, "w must not be 0"),
            (1, W_FIXED, "w must not be 0x464FFFFF"),
            (1, W_TO_FIXED[0], "w must not be 0x464FFFFF"),
            (1, W_TO_FIXED[1], "w must not be 0x464FFFFF"),
            (2, 0, "jsr must not be 0"),
            (2, SHR3_FIXED, "jsr must not be 0xAEA21B8F"),
        ] {
            let mut s = ok;
            s[word] = value;
            let e = Kiss::from_raw_state(&s).unwrap_err();
            assert_eq!((e.generator, e.word, e.value), ("kiss", Some(word as u8), value));
            assert!(e.rule.starts_with(rule), "{}", e.rule);
            assert!(!Kiss::is_valid(s));
        }
        // Neighbours of the rejected words, and any jcong, are accepted.
        for (word, value) in [(0, 1), (0, Z_FIXED - 1), (0, Z_FIXED + 1), (1, W_FIXED + 1), (2, SHR3_FIXED + 1), (3, 0)]
        {
            let mut s = ok;
            s[word] = value;
            assert!(Kiss::from_raw_state(&s).is_ok() && Kiss::is_valid(s));
        }
        assert_eq!(Kiss::from_raw_state(&POST_SEEDS), Ok(Kiss { z: 12345, w: 65435, jsr: 34221, jcong: 12345 }));
        rejects_word_counts::<Kiss>(&[&[1, 1, 1], &[1, 1, 1, 1, 1], &[]], "it has exactly four words");
    }
}
