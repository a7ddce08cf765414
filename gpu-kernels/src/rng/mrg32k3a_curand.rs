//! MRG32k3a as cuRAND's device API runs it: L'Ecuyer's combined multiple recursive generator
//! ("Good parameters and implementations for combined multiple recursive random number
//! generators", Operations Research 47(1), 1999) with cuRAND's seeding, subsequence spacing and
//! 32-bit output, so that `Generator::stream(seed, k)` followed by `next_u32()` calls gives the
//! words of cuRAND's `curand_init(seed, k, 0, &state)` followed by `curand(&state)` calls.
//!
//! **Recurrence.** Exactly [`super::mrg32k3a`]'s (its step is reused): `x_n = (1403580 x_{n-2} -
//! 810728 x_{n-3}) mod m1`, `y_n = (527612 y_{n-1} - 1370589 y_{n-3}) mod m2`, `z = x_n - y_n` if
//! `x_n > y_n`, else `x_n - y_n + m1`, so `z` is in `[1, m1]`, with `m1 = 2^32 - 209`,
//! `m2 = 2^32 - 22853`. cuRAND's state `s1[0..3]`, `s2[0..3]` is this `x`, `y` (oldest first).
//!
//! **The facts taken from cuRAND** (`curand_kernel.h` and `curand_mrg32k3a.h` of the CUDA
//! toolkit, NVIDIA, read in public copies of recent headers (C++17-era, with the integer step
//! below); older headers agree on seeding, tables and output; used as facts, no code copied):
//!
//! - Step (`curand_MRG32k3a`, `curand_kernel.h`): the recurrence above. It has three
//!   implementations (an integer one for `__CUDA_ARCH__ > 600`, an `fma`-based double one for
//!   older GPUs, a double one on the host), each meant as exact modular arithmetic (the integer
//!   one, which an H100 runs, plainly is: the high word folded once for `x`, twice for `y`, then
//!   one conditional subtraction), returning `z` in `[1, m1]` (`m1` when `x_n == y_n`) as a
//!   `double`.
//! - Output (`curand(curandStateMRG32k3a_t *)`, `curand_kernel.h`): `(unsigned int)((double)z *
//!   (double)MRG32K3A_BITS_NORM)` with `#define MRG32K3A_BITS_NORM 1.000000048662` (the header
//!   notes it replaces `(2^32 - 1) / m1`, which "rounds differently on some host systems"). The
//!   product is one correctly rounded IEEE double multiply (`mul.rn.f64` on the GPU, the same on
//!   the CPU), then truncation toward zero. See "The output word" below.
//! - Seeding (`curand_init(seed, subsequence, offset, curandStateMRG32k3a_t *)`,
//!   `curand_kernel.h`): all six words start at 12345. If `seed != 0`, with
//!   `a = (seed mod 2^32) ^ 0x55555555` and `b = (seed >> 32) ^ 0xAAAAAAAA` (32-bit words),
//!   `x = (12345 a mod m1, 12345 b mod m1, 12345 a mod m1)` and `y = (12345 b mod m2,
//!   12345 a mod m2, 12345 b mod m2)` (`curand_MRGmodMul`, exact in doubles). Then
//!   `skipahead_subsequence(subsequence)`, then `skipahead(offset)`.
//! - Subsequences (`skipahead_subsequence`, `curand_kernel.h`; tables `mrg32k3aM1SubSeq`,
//!   `mrg32k3aM2SubSeq`, `curand_mrg32k3a.h`): the state is multiplied by `T[i]` for each set bit
//!   `i` of `subsequence`, where the tables hold `T[i] = A^(2^(76 + i))`: entry 0 is RngStreams'
//!   published `A1p76`, `A2p76`, and the entries checked here (1, 2, 10, 45, 46, 50 for `A1`;
//!   0, 1, 2, 11, 30, 49, 50 for `A2`) equal repeated squarings. So subsequences are `2^76` steps
//!   apart (RngStreams' substream length; its own streams are `2^127` apart). The tables are
//!   declared with 56 entries but only entries 0..=50 are initialised: entries 51..=55 are zero
//!   matrices, and bits 56..=63 index past the tables. The documentation's "masked to 51 bits" is
//!   not what the code does (see the stream rule below).
//! - Offsets (`skipahead(n)`, tables `mrg32k3aM1`, `mrg32k3aM2` of 64 entries `A^(2^i)`, all
//!   initialised; entries 2, 3, 52, 53, 62, 63 checked): an exact jump of `n` steps for every
//!   64-bit `n`, which is [`Skip::skip`] here.
//!
//! **The output word.** `w = trunc(fl(z * c))` with `c` the double nearest 1.000000048662
//! (`0x1.000000d1006f5p+0`, `c - 1 = 219154165 / 2^52`). It is a correctly rounded double
//! product, and that rounding is part of the definition: for 691 of the `m1` values of `z` the
//! product rounds up to an integer, one more than the exact `floor(z c)` (the first is
//! `z = 82199663 -> 82199667`). `c` is slightly above `(2^32 - 1) / m1`, so `z = m1` gives
//! `4294967296.0017`, above `u32::MAX`: the GPU's `cvt.rzi.u32.f64` clamps it to `0xFFFFFFFF`,
//! as does Rust's saturating `as u32` here (in C on an x86 host the same conversion is undefined
//! behaviour). `z = m1 - 1` also gives `0xFFFFFFFF`. So the words are not a uniform 32-bit
//! stream: 0 and 209 other words (about one every 2^24.3, the first 20549916) never occur, and
//! `0xFFFFFFFF` is twice as likely as any other word; `210 / 2^32` (about 2^-24.3) from uniform
//! in total variation, like [`super::mrg32k3a`]'s `z`. The top bits are as good as MRG32k3a's.
//!
//! **State.** The raw state `x1,x2,x3,y1,y2,y3` is cuRAND's `s1[0..3]`, `s2[0..3]`, the same
//! layout as [`super::mrg32k3a`]'s (RngStreams' `Cg`). Valid states: every `x_i < m1`, every
//! `y_i < m2`, neither triple all zero; [`Generator::from_raw_state`] rejects anything else.
//!
//! **Period.** That of MRG32k3a: `rho = (m1^3 - 1)(m2^3 - 1) / 2`, about 2^191.
//!
//! **Stream rule.** Stream `k` of seed `s` is cuRAND's seeding `B(s)` (above; `B(0) = 12345 x6`)
//! advanced by `k * 2^76` steps, by `(A^(2^76))^k` (`O(log k)` matrix products). For
//! `k < 2^51` this is exactly `curand_init(s, k, 0)`. For `k >= 2^51` cuRAND does something
//! else: bits 51..=55 multiply the state by a zero matrix (the all-zero state, whose every output
//! is `0xFFFFFFFF`) and bits 56..=63 read past its tables (undefined); this generator keeps the
//! `k * 2^76` spacing, so it has no cuRAND counterpart there.
//!
//! **What this guarantees.** Within one seed, the streams `k` (all `2^64` of them; `2^64 * 2^76 =
//! 2^140` is far below `rho`) are disjoint segments of the cycle, each `2^76` outputs long: no
//! two overlap while each is used for fewer than `2^76` outputs. Across seeds nothing is
//! guaranteed: `B(s)` is an arithmetic, not a pseudo-random, function of `s` (first and third
//! words of each triple equal), at an unknown position on the cycle. Distinct seeds give
//! distinct `B(s)` (CRT: `a` is fixed by its residues modulo `m1` and `m2`) with one exception:
//! seed `0xAAAAAAAB55555554` (`a = b = 1`) gives `12345 x6`, the state of seed 0, so its
//! streams are seed 0's streams. And 7 seeds give a triple that is all zero, which the
//! recurrence keeps zero (cuRAND does not check; this generator reproduces it): `x` is zero
//! when `a, b` are in `{0, m1}`, i.e. `seed mod 2^32` in `{0x55555555, 0xAAAAAA7A}` and
//! `seed >> 32` in `{0xAAAAAAAA, 0x55555585}`; `y` is zero when `a, b` are in `{0, m2}`, i.e.
//! `seed mod 2^32` in `{0x55555555, 0xAAAAF3EE}` and `seed >> 32` in `{0xAAAAAAAA, 0x55550C11}`.
//! Seed `0xAAAAAAAA55555555` zeroes both: every word is `0xFFFFFFFF`. Avoid these seeds.
//!
//! **Cost.** A step is [`super::mrg32k3a`]'s (two folded 64-bit reductions) plus one double
//! multiply and a conversion: cheap on an H100 (FP64 at half the FP32 rate), slow on GPUs with
//! 1/32 or 1/64-rate FP64. [`Skip::skip`]`(n)` and [`Generator::stream`] each cost at most 64 squarings
//! and 64 matrix-vector products of 3x3 matrices per component (the `2^76` jump's matrices are
//! computed at compile time).
//!
//! ```
//! use warpmc_kernels::rng::{Generator, Uniform32, mrg32k3a_curand::{Mrg32k3aCurand, curand_word}};
//! let mut g = Mrg32k3aCurand::stream(0, 0);
//! assert_eq!(g.state(), [12345; 6]);
//! // MRG32k3a's first z from 12345 x6 is 545508589 (L'Ecuyer).
//! assert_eq!(g.next_u32(), curand_word(545508589));
//! ```

use super::mrg32k3a::{M1, M2, Mrg32k3a, jump_matrices};
use super::{Generator, InvalidState, Skip, Uniform32};

/// cuRAND's `MRG32K3A_BITS_NORM`: the factor that spreads `z` in `[1, m1]` over 32 bits.
// The literal is cuRAND's (its 13 significant digits), so that the double is the same.
pub const BITS_NORM: f64 = 1.000000048662;

/// cuRAND's salt for the seed's low word.
pub const SEED_XOR_LO: u32 = 0x5555_5555;
/// cuRAND's salt for the seed's high word.
pub const SEED_XOR_HI: u32 = 0xAAAA_AAAA;
/// Every state word before seeding (cuRAND's and RngStreams' default seed).
pub const SEED_BASE: u32 = 12345;

/// Subsequences are `2^SUBSEQUENCE_LOG2` steps apart.
pub const SUBSEQUENCE_LOG2: u32 = 76;
/// Stream numbers below `2^CURAND_SUBSEQUENCE_BITS` are cuRAND's subsequences; above, cuRAND's
/// tables run out (see the module docs).
pub const CURAND_SUBSEQUENCE_BITS: u32 = 51;

/// `(A1^(2^76), A2^(2^76))`, computed at compile time.
const SUBSEQUENCE_JUMP: ([[u32; 3]; 3], [[u32; 3]; 3]) = jump_matrices(SUBSEQUENCE_LOG2);

/// cuRAND's `curand()` word for a combined value `z` in `[1, m1]`: `trunc(fl(z * BITS_NORM))`,
/// clamped to `u32::MAX` (only `z = m1` exceeds it).
#[inline(always)]
pub fn curand_word(z: u32) -> u32 {
    // One correctly rounded multiply, as on the GPU (no fma: there is nothing to fuse), and the
    // saturating conversion, which matches `cvt.rzi.u32.f64` for z = m1.
    (z as f64 * BITS_NORM) as u32
}

/// Generator state: `x = (x_{n-3}, x_{n-2}, x_{n-1})`, `y = (y_{n-3}, y_{n-2}, y_{n-1})`, cuRAND's
/// `s1` and `s2`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct Mrg32k3aCurand {
    pub x: [u32; 3],
    pub y: [u32; 3],
}

impl Mrg32k3aCurand {
    /// A generator from the two triples (oldest first), rejecting invalid states.
    pub fn from_state(x: [u32; 3], y: [u32; 3]) -> Result<Self, InvalidState> {
        match Mrg32k3a::from_state(x, y) {
            Ok(g) => Ok(Self::from_mrg32k3a(g)),
            Err(e) => Err(InvalidState { generator: Self::NAME, ..e }),
        }
    }

    /// Whether `(x, y)` is a valid state (see the module docs).
    #[inline(always)]
    pub fn is_valid(x: [u32; 3], y: [u32; 3]) -> bool {
        Mrg32k3a::is_valid(x, y)
    }

    /// A generator from a state the caller has already validated (see [`Self::is_valid`]).
    #[inline(always)]
    pub const fn from_valid_state(x: [u32; 3], y: [u32; 3]) -> Self {
        Self { x, y }
    }

    /// The same recurrence state as an [`Mrg32k3a`] (whose words are `z` itself).
    #[inline(always)]
    pub const fn mrg32k3a(&self) -> Mrg32k3a {
        Mrg32k3a::from_valid_state(self.x, self.y)
    }

    /// The state of an [`Mrg32k3a`], to be read through cuRAND's output.
    #[inline(always)]
    pub const fn from_mrg32k3a(g: Mrg32k3a) -> Self {
        Self { x: g.x, y: g.y }
    }

    /// The raw state `[x1, x2, x3, y1, y2, y3]` (cuRAND's `s1`, `s2`).
    #[inline(always)]
    pub const fn state(&self) -> [u32; 6] {
        [self.x[0], self.x[1], self.x[2], self.y[0], self.y[1], self.y[2]]
    }

    /// cuRAND's seeding `B(seed)`, before any subsequence or offset (see the module docs).
    pub fn base(seed: u64) -> Self {
        if seed == 0 {
            return Self { x: [SEED_BASE; 3], y: [SEED_BASE; 3] };
        }
        let a = (seed as u32) ^ SEED_XOR_LO;
        let b = ((seed >> 32) as u32) ^ SEED_XOR_HI;
        // 12345 * w < 2^46: an exact product, then one 64-bit remainder (seeding is not hot).
        let times_base = |w: u32, m: u32| ((w as u64 * SEED_BASE as u64) % m as u64) as u32;
        let (xa, xb) = (times_base(a, M1), times_base(b, M1));
        let (ya, yb) = (times_base(a, M2), times_base(b, M2));
        Self { x: [xa, xb, xa], y: [yb, ya, yb] }
    }

    /// Advance by `k` subsequences, `k * 2^76` steps (cuRAND's `skipahead_subsequence` for
    /// `k < 2^51`), `O(log k)` matrix products.
    pub fn skip_subsequences(&mut self, k: u64) {
        let mut g = self.mrg32k3a();
        g.jump_by_power(&SUBSEQUENCE_JUMP, k);
        *self = Self::from_mrg32k3a(g);
    }

    /// cuRAND's `curand_init(seed, subsequence, offset)`: stream `subsequence` of `seed`, then
    /// `offset` steps (exactly cuRAND's state for `subsequence < 2^51` and every `offset`).
    pub fn curand_init(seed: u64, subsequence: u64, offset: u64) -> Self {
        let mut g = Self::stream(seed, subsequence);
        g.skip(offset);
        g
    }

    /// Advance one step and return the combined value `z` in `[1, m1]` (cuRAND's
    /// `curand_MRG32k3a`), before the 32-bit conversion.
    #[inline(always)]
    pub fn step_z(&mut self) -> u32 {
        let mut g = self.mrg32k3a();
        let z = g.step();
        *self = Self::from_mrg32k3a(g);
        z
    }
}

impl Uniform32 for Mrg32k3aCurand {
    /// cuRAND's `curand()`: never 0; `0xFFFFFFFF` twice as likely as other words, 209 other
    /// words never occur (see the module docs).
    #[inline(always)]
    fn next_u32(&mut self) -> u32 {
        curand_word(self.step_z())
    }
}

// SAFETY: #[repr(C)] with two fields, both [u32; 3]: six u32 words, no padding.
unsafe impl Generator for Mrg32k3aCurand {
    const NAME: &'static str = "mrg32k3a-curand";
    const RAW_STATE: &'static str = "x1,x2,x3,y1,y2,y3";
    const RAW_STATE_WORDS: usize = 6;
    const PERIOD: &'static str = "about 2^191";

    /// `B(seed)` advanced by `stream * 2^76` steps: cuRAND's `curand_init(seed, stream, 0)` for
    /// `stream < 2^51` (see the module docs).
    fn stream(seed: u64, stream: u64) -> Self {
        let mut g = Self::base(seed);
        g.skip_subsequences(stream);
        g
    }

    fn from_raw_state(words: &[u32]) -> Result<Self, InvalidState> {
        let w: [u32; 6] = words
            .try_into()
            .map_err(|_| InvalidState::word_count(Self::NAME, "it has exactly six words, x1,x2,x3,y1,y2,y3"))?;
        Self::from_state([w[0], w[1], w[2]], [w[3], w[4], w[5]])
    }
}

impl Skip for Mrg32k3aCurand {
    /// cuRAND's `skipahead(n)`: `O(log n)`, at most 64 squarings and 64 matrix-vector products
    /// per component.
    fn skip(&mut self, n: u64) {
        let mut g = self.mrg32k3a();
        g.skip(n);
        *self = Self::from_mrg32k3a(g);
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::*;

    /// cuRAND's conversion, emulated in integers (independent of the f64 path): `c = M 2^-52`
    /// with `M` the 53-bit significand of `BITS_NORM`; the product `z M` is exact in u128, rounded
    /// to 53 significant bits (to nearest, ties to even), truncated, then clamped.
    fn emulated_word(z: u32) -> u32 {
        let bits = BITS_NORM.to_bits();
        assert_eq!(bits >> 52, 1023, "BITS_NORM is in [1, 2)");
        let m = (bits & ((1 << 52) - 1)) | (1 << 52);
        let p = z as u128 * m as u128;
        let len = 128 - p.leading_zeros();
        let (mut q, s) = if len > 53 { (p >> (len - 53), len - 53) } else { (p, 0) };
        if s > 0 {
            let r = p & ((1 << s) - 1);
            let half = 1u128 << (s - 1);
            if r > half || (r == half && q & 1 == 1) {
                q += 1;
            }
        }
        let v = (q << s) >> 52;
        if v > u32::MAX as u128 { u32::MAX } else { v as u32 }
    }

    /// The definition, literally: signed arithmetic, `rem_euclid`, then cuRAND's conversion
    /// (emulated). One step on `s = [x1, x2, x3, y1, y2, y3]`.
    fn definition_step(s: &mut [u32; 6]) -> u32 {
        let (m1, m2) = (M1 as i64, M2 as i64);
        let xn = (1403580 * s[1] as i64 - 810728 * s[0] as i64).rem_euclid(m1);
        let yn = (527612 * s[5] as i64 - 1370589 * s[3] as i64).rem_euclid(m2);
        *s = [s[1], s[2], xn as u32, s[4], s[5], yn as u32];
        let z = if xn > yn { xn - yn } else { xn - yn + m1 };
        emulated_word(z as u32)
    }

    /// L'Ecuyer's published first z from 12345 x6 (/work/shared/ALGORITHMS.md).
    const PUBLISHED_Z: [u32; 10] = [
        545508589, 1368065410, 1327943761, 3546985096, 951893194, 2290915636, 2064909380, 1527117980, 584065747,
        3246360482,
    ];

    /// Known answers: cuRAND's seed-0 state is 12345 x6 and its words are the published z
    /// through cuRAND's conversion; cuRAND's subsequence and offset tables are the jumps used.
    #[test]
    fn reference() {
        let mut g = Mrg32k3aCurand::stream(0, 0);
        assert_eq!(g.state(), [12345; 6]);
        let words = first(&mut g, 10);
        let expect: Vec<u32> = PUBLISHED_Z.iter().map(|&z| emulated_word(z)).collect();
        assert_eq!(words, expect);
        assert_eq!(
            words,
            [
                545508615, 1368065476, 1327943825, 3546985268, 951893240, 2290915747, 2064909480, 1527118054,
                584065775, 3246360639
            ]
        );
        // The words are z through the conversion: the recurrence is MRG32k3a's.
        let mut g = Mrg32k3aCurand::stream(0, 0);
        assert_eq!(PUBLISHED_Z.iter().map(|_| g.step_z()).collect::<Vec<_>>(), PUBLISHED_Z);

        // Entries of cuRAND's mrg32k3aM1SubSeq / mrg32k3aM2SubSeq (A^(2^(76 + i))), first rows.
        let row = |e: u32| {
            let (a1, a2) = jump_matrices(e);
            (a1[0], a2[0])
        };
        assert_eq!(row(76), ([82758667, 1871391091, 4127413238], [1511326704, 3759209742, 1610795712]));
        assert_eq!(row(77), ([3361372532, 2329303404, 99651939], [972103006, 964807713, 878035866]));
        assert_eq!(row(126), ([2402749950, 2353776151, 75909174], [4129760842, 1671665759, 1677834656]));
        assert_eq!(SUBSEQUENCE_JUMP, jump_matrices(76));
        // Entries of cuRAND's mrg32k3aM1 (A1^(2^i)), used by skipahead.
        assert_eq!(jump_matrices(3).0[0], [1527363550, 2758233149, 1831234280]);
        assert_eq!(jump_matrices(63).0[0], [967330218, 3464884028, 3444447102]);
    }

    /// curand_init's seeding, written out with u128 arithmetic.
    #[test]
    fn seeding_follows_curand_init() {
        for seed in [1u64, 1234, 0xFFFF_FFFF, 1 << 32, 0xDEAD_BEEF_0123_4567, u64::MAX] {
            let a = (seed & 0xFFFF_FFFF) as u128 ^ 0x5555_5555;
            let b = (seed >> 32) as u128 ^ 0xAAAA_AAAA;
            let r = |w: u128, m: u32| (w * 12345 % m as u128) as u32;
            let expect = [r(a, M1), r(b, M1), r(a, M1), r(b, M2), r(a, M2), r(b, M2)];
            assert_eq!(Mrg32k3aCurand::base(seed).state(), expect, "seed {seed:#x}");
            assert_eq!(Mrg32k3aCurand::stream(seed, 0), Mrg32k3aCurand::base(seed));
        }
        // Seed 1 by hand: a = 0x55555554 = 1431655764, b = 0xAAAAAAAA = 2863311530.
        assert_eq!(
            Mrg32k3aCurand::base(1).x[0] as u64,
            1431655764u64 * 12345 % M1 as u64,
            "x1 of seed 1 is 12345 (seed low word ^ 0x55555555) mod m1"
        );
    }

    #[test]
    fn conversion() {
        assert_eq!(curand_word(1), 1);
        assert_eq!(curand_word(2), 2);
        // z = m1 - 1 and z = m1 both give 0xFFFFFFFF; z = m1 only by clamping 4294967296.0017.
        assert_eq!(curand_word(M1 - 2), 4294967294);
        assert_eq!(curand_word(M1 - 1), u32::MAX);
        assert!(M1 as f64 * BITS_NORM > u32::MAX as f64 + 1.0);
        assert_eq!(curand_word(M1), u32::MAX);
        // The first skipped word: 20549916 is never produced.
        assert_eq!((curand_word(20549915), curand_word(20549916)), (20549915, 20549917));
        // Where the rounded product (not the exact one) decides: floor(z c) = 82199666, but
        // fl(z c) = 82199667.0.
        let significand = (BITS_NORM.to_bits() & ((1 << 52) - 1)) | (1 << 52);
        let exact_floor = |z: u32| ((z as u128 * significand as u128) >> 52) as u32;
        assert_eq!((curand_word(82199663), exact_floor(82199663)), (82199667, 82199666));
        assert_eq!((curand_word(143849410), exact_floor(143849410)), (143849417, 143849416));
        // The f64 path equals the integer emulation on edges and on random z.
        let mut s = 0x1234_5678_9ABC_DEF0u64;
        let edges = [1, 2, 3, 20549915, 20549916, 82199663, 143849410, M2 - 1, M2, M1 - 2, M1 - 1, M1];
        for z in edges.into_iter().chain((0..1_000_000).map(|_| (splitmix64(&mut s) % M1 as u64) as u32 + 1)) {
            assert_eq!(curand_word(z), emulated_word(z), "z = {z}");
        }
    }

    /// A state whose next x equals its next y: z = m1, and cuRAND's word is clamped.
    #[test]
    fn equal_components_give_the_clamped_word() {
        // x = (0, 1, 0) gives x_n = 1403580; y = (0, 0, f) with 527612 f = 1403580 (mod m2).
        let f = 1226359468u32;
        assert_eq!(527612u64 * f as u64 % M2 as u64, 1403580);
        let mut g = Mrg32k3aCurand::from_raw_state(&[0, 1, 0, 0, 0, f]).unwrap();
        let mut h = g;
        assert_eq!(h.step_z(), M1);
        assert_eq!(g.next_u32(), u32::MAX);
    }

    #[test]
    fn raw_state_follows_definition() {
        for s in [[12345; 6], [1, 0, 0, 0, 0, 1], [M1 - 1, M1 - 1, M1 - 1, M2 - 1, M2 - 1, M2 - 1], [7, 0, 9, 0, 11, 0]]
        {
            follows_reference_step::<Mrg32k3aCurand, 6>(s, 1000, definition_step);
        }
    }

    #[test]
    fn value_stability() {
        // Pinned: a change here changes every result produced with this generator. To be
        // compared with cuRAND's curand_init(seed, k, 0) then curand() on the GPU.
        assert_eq!(
            first(&mut Mrg32k3aCurand::stream(1234, 0), 5),
            [3379073520, 2521876100, 213678209, 1604391373, 2253011095]
        );
        assert_eq!(
            first(&mut Mrg32k3aCurand::stream(1234, 1), 5),
            [653317650, 2890950871, 2749090064, 2410030135, 1992398857]
        );
        assert_eq!(
            first(&mut Mrg32k3aCurand::stream(1234, 5), 5),
            [1307787078, 2849003678, 560262121, 1764926452, 1184748449]
        );
        assert_eq!(
            first(&mut Mrg32k3aCurand::stream(0, 0), 5),
            [545508615, 1368065476, 1327943825, 3546985268, 951893240]
        );
        assert_eq!(
            Mrg32k3aCurand::base(1234).state(),
            [4283798977, 1711840, 4283798977, 188071960, 82011950, 188071960]
        );
    }

    #[test]
    fn skip_equals_steps() {
        let mut rng = 0x9E37_79B9_7F4A_7C15u64;
        let ns = skip_lengths((0..5).map(|_| splitmix64(&mut rng) % 1_000_000));
        skip_matches_stepping(Mrg32k3aCurand::stream(7, 1), &ns);
        skip_matches_stepping(Mrg32k3aCurand::stream(0, 0), &[0, 1, 2, 3, 100]);
    }

    #[test]
    fn skips_compose() {
        let start = Mrg32k3aCurand::stream(1234, 3);
        skips_compose_for(
            start,
            &[(0, 5), (17, 1 << 40), (123_456_789, 987_654_321_000), (u64::MAX / 2, u64::MAX / 2)],
        );
        skips_are_cheap(start, [1 << 40, u64::MAX, 1 << 63, 12345]);
        // curand_init's offset is a skip.
        assert_eq!(Mrg32k3aCurand::curand_init(1234, 3, 0), start);
        assert_eq!(Mrg32k3aCurand::curand_init(1234, 3, 100), stepped(start, 100));
    }

    #[test]
    fn streams() {
        for g in streams_start_distinct::<Mrg32k3aCurand>(42, 1000) {
            assert!(Mrg32k3aCurand::is_valid(g.x, g.y));
        }
        // Stream 1 is stream 0 advanced 2^76 steps, by plain skips: 2^76 = 2^13 * 2^63.
        for seed in [0u64, 1234] {
            let mut g = Mrg32k3aCurand::stream(seed, 0);
            for _ in 0..1 << 13 {
                g.skip(1 << 63);
            }
            assert_eq!(g, Mrg32k3aCurand::stream(seed, 1), "seed {seed}");
        }
        // Stream k is stream 0 advanced k subsequences, and stream k - 1 advanced one.
        let spacing = jump_matrices(SUBSEQUENCE_LOG2);
        for seed in [0u64, 1, 1234, u64::MAX] {
            let mut prev = Mrg32k3aCurand::stream(seed, 0);
            assert_eq!(prev, Mrg32k3aCurand::base(seed));
            for k in 1..20u64 {
                let mut expect = prev.mrg32k3a();
                expect.jump_by_power(&spacing, 1);
                let g = Mrg32k3aCurand::stream(seed, k);
                assert_eq!(g, Mrg32k3aCurand::from_mrg32k3a(expect), "seed {seed} stream {k}");
                let mut h = Mrg32k3aCurand::stream(seed, 0);
                h.skip_subsequences(k);
                assert_eq!(g, h);
                prev = g;
            }
            neighbours_rarely_agree::<Mrg32k3aCurand>(seed, 0..19, 1000);
        }
        // Large stream numbers, past cuRAND's 2^51: the k * 2^76 spacing continues.
        let k = 0x0123_4567_89AB_CDEFu64;
        let mut a = Mrg32k3aCurand::stream(5, k);
        a.skip_subsequences(3);
        assert_eq!(a, Mrg32k3aCurand::stream(5, k + 3));
        let mut b = Mrg32k3aCurand::stream(5, 1 << CURAND_SUBSEQUENCE_BITS);
        assert!(Mrg32k3aCurand::is_valid(b.x, b.y));
        b.skip_subsequences(1 << CURAND_SUBSEQUENCE_BITS);
        assert_eq!(b, Mrg32k3aCurand::stream(5, 1 << (CURAND_SUBSEQUENCE_BITS + 1)));
        // 2^51 subsequences are one RngStreams stream, 2^127 steps.
        let mut c = Mrg32k3aCurand::stream(5, 0).mrg32k3a();
        c.jump_by_power(&jump_matrices(127), 1);
        assert_eq!(Mrg32k3aCurand::from_mrg32k3a(c), Mrg32k3aCurand::stream(5, 1 << 51));
        seed_and_stream_halves_matter::<Mrg32k3aCurand>();
    }

    /// cuRAND's seeding quirks, reproduced (see the module docs).
    #[test]
    fn seeding_quirks() {
        // a = b = 1 is seed 0's state.
        assert_eq!(Mrg32k3aCurand::stream(0xAAAA_AAAB_5555_5554, 7), Mrg32k3aCurand::stream(0, 7));
        // Both triples zero: every word is 0xFFFFFFFF, in every stream.
        let mut g = Mrg32k3aCurand::stream(0xAAAA_AAAA_5555_5555, 3);
        assert_eq!(g.state(), [0; 6]);
        assert_eq!(first(&mut g, 5), [u32::MAX; 5]);
        // The other zero-triple seeds.
        let (lo_x, hi_x) = ([0x5555_5555u64, (M1 ^ SEED_XOR_LO) as u64], [0xAAAA_AAAAu64, (M1 ^ SEED_XOR_HI) as u64]);
        let (lo_y, hi_y) = ([0x5555_5555u64, (M2 ^ SEED_XOR_LO) as u64], [0xAAAA_AAAAu64, (M2 ^ SEED_XOR_HI) as u64]);
        assert_eq!((lo_x[1], hi_x[1], lo_y[1], hi_y[1]), (0xAAAA_AA7A, 0x5555_5585, 0xAAAA_F3EE, 0x5555_0C11));
        let mut zero_seeds = std::collections::BTreeSet::new();
        for (lo, hi, in_x) in [(lo_x, hi_x, true), (lo_y, hi_y, false)] {
            for l in lo {
                for h in hi {
                    let seed = h << 32 | l;
                    let g = Mrg32k3aCurand::base(seed);
                    assert_eq!(if in_x { g.x } else { g.y }, [0; 3], "seed {seed:#x}");
                    zero_seeds.insert(seed);
                }
            }
        }
        assert_eq!(zero_seeds.len(), 7);
        // A nearby seed is fine.
        let g = Mrg32k3aCurand::base(0xAAAA_AAAA_5555_5556);
        assert!(Mrg32k3aCurand::is_valid(g.x, g.y));
    }

    #[test]
    fn invalid_states() {
        let ok = [M1 - 1, M1 - 1, M1 - 1, M2 - 1, M2 - 1, M2 - 1];
        assert!(Mrg32k3aCurand::from_raw_state(&ok).is_ok());
        for i in 0..6 {
            let m = if i < 3 { M1 } else { M2 };
            for bad in [m, u32::MAX] {
                let mut s = ok;
                s[i] = bad;
                let e = Mrg32k3aCurand::from_raw_state(&s).unwrap_err();
                assert_eq!((e.generator, e.word, e.value), ("mrg32k3a-curand", Some(i as u8), bad));
                let name = ["x1", "x2", "x3", "y1", "y2", "y3"][i];
                let bound = if i < 3 { "< m1 = 4294967087" } else { "< m2 = 4294944443" };
                assert!(e.rule.starts_with(&format!("{name} must be {bound}")), "{}", e.rule);
            }
        }
        assert!(Mrg32k3aCurand::from_raw_state(&[M2, M2, M2, 1, 1, 1]).is_ok());
        let e = Mrg32k3aCurand::from_raw_state(&[0, 0, 0, 1, 2, 3]).unwrap_err();
        assert_eq!((e.generator, e.word), ("mrg32k3a-curand", None));
        assert!(e.rule.starts_with("x1, x2, x3 must not all be zero"));
        let e = Mrg32k3aCurand::from_raw_state(&[1, 2, 3, 0, 0, 0]).unwrap_err();
        assert_eq!((e.generator, e.word), ("mrg32k3a-curand", None));
        assert!(e.rule.starts_with("y1, y2, y3 must not all be zero"));
        assert!(Mrg32k3aCurand::from_raw_state(&[0, 0, 1, 1, 0, 0]).is_ok());
        rejects_word_counts::<Mrg32k3aCurand>(&[&[1; 0], &[1; 5], &[1; 7]], "it has exactly six words");
    }
}
