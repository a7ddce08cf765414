//! Sobol' quasi-random points in base 2 (32 bits), their randomisation, and their conversion to
//! floating point: pure functions over one dimension's 32 direction numbers, the same on the CPU
//! and the GPU.
//!
//! **Definition.** Dimension `j` of Sobol's sequence (I. M. Sobol', USSR Comput. Math. Math.
//! Phys. 7 (1967) 86-112) is fixed by a primitive polynomial over GF(2) of degree `s`,
//! `x^s + a_1 x^(s-1) + ... + a_(s-1) x + 1`, and odd initial numbers `m_1..m_s` with
//! `m_i < 2^i`. The tabulated `a` is the integer whose binary digits are `a_1 ... a_(s-1)`, `a_1`
//! the most significant. The direction numbers `v_k = m_k / 2^k` continue by Bratley and Fox's
//! recurrence (ACM TOMS 14 (1988) 88-100, eq. (2); Joe and Kuo, ACM TOMS 29 (2003) 49-57,
//! section 2):
//!
//! `m_k = 2 a_1 m_(k-1) ^ 2^2 a_2 m_(k-2) ^ ... ^ 2^(s-1) a_(s-1) m_(k-s+1) ^ 2^s m_(k-s) ^ m_(k-s)`,
//!
//! which on the 32-bit integers `V_k = m_k 2^(32-k)` reads
//! `V_k = V_(k-s) ^ (V_(k-s) >> s) ^ a_1 V_(k-1) ^ ... ^ a_(s-1) V_(k-s+1)` ([`directions`]).
//! Dimension 1 is van der Corput's sequence, `m_k = 1` for all `k` ([`VAN_DER_CORPUT`]). The
//! polynomials and `m_i` of dimensions 2..=21201 are Joe and Kuo's "new-joe-kuo-6.21201" (SIAM
//! J. Sci. Comput. 30 (2008) 2635-2654), which the host crate embeds and turns into direction
//! numbers with [`directions`].
//!
//! **Order.** Point `i` is taken in Antonov and Saleev's Gray-code order (USSR Comput. Math.
//! Math. Phys. 19 (1979) 252-256): `x_i` is the XOR of `V_(k+1)` over the set bits `k` of
//! `gray(i) = i ^ (i >> 1)` ([`point`]), so consecutive points differ by one direction number
//! ([`next`]). This is cuRAND's `CURAND_RNG_QUASI_SOBOL32`: its first output of a dimension is
//! point 0, which is 0, then points 1, 2, ... (checked on an H100 with CUDA 13.0's cuRAND 10.4:
//! the host generator's first 16 outputs of dimensions 1-4 are the ones in this module's tests;
//! the device API's `curand_init(vectors, offset, state)` starts at point `offset`, and its
//! `curand()` returns the current point before XORing in the direction number of the lowest zero
//! bit of the index, as [`next`] does, by `curand_kernel.h`). The first `2^m` points of the
//! sequence, in either order, are the same set, a `(t, m, s)`-net.
//!
//! **Randomisation** (randomised QMC: independent replicates give an unbiased estimate and an
//! error bar). Each replicate `r` of a job seeded `seed` gives dimension `j` two 32-bit keys from
//! Philox4x32-10 ([`randomisation`]), for either
//! - a random digital shift, `x ^ shift` ([`digital_shift`]), or
//! - Owen's nested uniform scrambling (A. B. Owen, "Randomly permuted (t,m,s)-nets and
//!   (t,s)-sequences", 1995) done with a hash, as in B. Burley, "Practical Hash-based Owen
//!   Scrambling", JCGT 9(4) (2020) 1-20 ([`owen_scramble`]).
//!
//! Both map every dyadic interval `[k 2^-m, (k+1) 2^-m)` onto another one bijectively, so a
//! `(t, m, s)`-net stays one; both make each point uniform on the 2^32 grid.
//!
//! **Conversion.** [`to_unit_f64`] and [`to_unit_f32`] return the midpoint of the dyadic cell
//! holding `x 2^-32`, so neither ever returns 0 or 1 (see each for the interval). Only exact
//! operations are used (integer shifts, small integer to float, `+ 0.5`, a power-of-two
//! multiply), so the CPU and GPU builds agree bit for bit.

use crate::rng::philox::philox4x32_10;

/// Bits of each point, and direction numbers per dimension.
pub const BITS: usize = 32;

/// The largest polynomial degree [`directions`] accepts: every `V_k` of a 32-bit point then
/// comes from the `m_k` or the recurrence. Joe and Kuo's table goes up to 18.
pub const MAX_DEGREE: u32 = 32;

/// Dimension 1, van der Corput's sequence: `V_k = 2^(32-k)`, i.e. `m_k = 1` for every `k`.
pub const VAN_DER_CORPUT: [u32; BITS] = {
    let mut v = [0u32; BITS];
    let mut k = 0;
    while k < BITS {
        v[k] = 1 << (31 - k);
        k += 1;
    }
    v
};

/// Why [`directions`] refused its input (a polynomial or initial numbers that do not define a
/// Sobol' dimension).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InvalidDirections {
    /// The offending `i` of `m_i` (1-based), or 0 for a rule about `s` or `a`.
    pub i: u32,
    /// The offending value (`s`, `a` or `m_i`).
    pub value: u32,
    /// The rule, in words.
    pub rule: &'static str,
}

#[cfg(not(target_arch = "nvptx64"))]
impl core::fmt::Display for InvalidDirections {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self.i {
            0 => write!(f, "invalid Sobol' polynomial: {} ({})", self.value, self.rule),
            i => write!(f, "invalid Sobol' initial number m_{i} = {}: {}", self.value, self.rule),
        }
    }
}

#[cfg(not(target_arch = "nvptx64"))]
impl std::error::Error for InvalidDirections {}

/// The 32 direction numbers `out[k] = V_(k+1)` of the dimension with polynomial degree `s`,
/// coefficients `a` (binary `a_1 ... a_(s-1)`, as tabulated) and initial numbers
/// `m = [m_1, ..., m_s]`. Checks `1 <= s <=` [`MAX_DEGREE`], `a < 2^(s-1)`, `m.len() == s`, and
/// every `m_i` odd and below `2^i` (an even `m_i` would make a direction number's lowest set bit
/// collide with another's and break the net property), and leaves `out` untouched when it refuses.
/// Primitivity of the polynomial is not checked here (the host's tests check the table's).
pub fn directions(s: u32, a: u32, m: &[u32], out: &mut [u32; BITS]) -> Result<(), InvalidDirections> {
    if !(1..=MAX_DEGREE).contains(&s) {
        return Err(InvalidDirections { i: 0, value: s, rule: "the degree s must be in 1..=32" });
    }
    if (a >> (s - 1)) != 0 {
        return Err(InvalidDirections { i: 0, value: a, rule: "a must be below 2^(s-1)" });
    }
    if m.len() != s as usize {
        return Err(InvalidDirections { i: 0, value: m.len() as u32, rule: "there must be exactly s initial numbers" });
    }
    let mut i = 1u32;
    while i <= s {
        let mi = m[i as usize - 1];
        // `mi >> i == 0` is `m_i < 2^i`; written as two shifts because `1 << 32` overflows.
        if mi & 1 == 0 || (mi >> (i - 1)) >> 1 != 0 {
            return Err(InvalidDirections { i, value: mi, rule: "m_i must be odd and below 2^i" });
        }
        i += 1;
    }

    let s = s as usize;
    let mut k = 0;
    while k < BITS {
        out[k] = if k < s {
            // V_(k+1) = m_(k+1) 2^(32-(k+1)); m_(k+1) < 2^(k+1), so nothing is shifted out.
            m[k] << (31 - k)
        } else {
            let mut x = out[k - s] ^ (out[k - s] >> s);
            let mut i = 1;
            while i < s {
                // a_i is bit s-1-i of a (a_1 the most significant of the s-1 bits).
                if (a >> (s - 1 - i)) & 1 != 0 {
                    x ^= out[k - i];
                }
                i += 1;
            }
            x
        };
        k += 1;
    }
    Ok(())
}

/// Point `index` of one dimension in Gray-code order: the XOR of `v[k]` over the set bits `k` of
/// `index ^ (index >> 1)`. Point 0 is 0. Covers the whole period: indices `0..2^32` give each
/// 32-bit value once.
#[inline(always)]
pub fn point(index: u32, v: &[u32; BITS]) -> u32 {
    let mut gray = index ^ (index >> 1);
    let mut x = 0;
    while gray != 0 {
        x ^= v[gray.trailing_zeros() as usize];
        gray &= gray - 1; // clear the lowest set bit
    }
    x
}

/// Point `index + 1` from point `index` (`x == point(index, v)`): Gray codes of consecutive
/// integers differ in the bit of `index`'s lowest zero, i.e. the number of trailing ones of
/// `index`. At `index = 2^32 - 1` (all ones) it returns point 0, wrapping like cuRAND, whose
/// `__curand_find_trailing_zero` gives 31 there: `gray(2^32 - 1) = 2^31`, so
/// `point(2^32 - 1) = v[31]` and `v[31] ^ v[31] = 0`.
#[inline(always)]
pub fn next(x: u32, index: u32, v: &[u32; BITS]) -> u32 {
    let k = (!index).trailing_zeros(); // 32 only when index is all ones
    x ^ v[if k > 31 { 31 } else { k as usize }]
}

/// A random digital shift: `x ^ shift`. Bit `k` of every point flips together, so the dyadic
/// intervals of each size are permuted among themselves (a net stays a net), and with a uniform
/// `shift` each point is uniform.
#[inline(always)]
pub fn digital_shift(x: u32, shift: u32) -> u32 {
    x ^ shift
}

/// Owen's nested uniform scrambling in base 2, approximated by a hash as in Burley (2020):
/// reverse the bits, apply a Laine-Karras-style permutation, reverse back.
///
/// In Owen's scramble, whether digit `k` (counting from the most significant) flips is a random
/// function of the `k - 1` digits above it. After the bit reversal those digits are the *lower*
/// bits, and a permutation in which bit `k` of the output depends only on bits `0..=k` of the
/// input has exactly that form: adding a key (carries move upwards only), multiplying by an odd
/// number, and `y ^= y * c` with `c` even (bit `k` of `y * c` depends on bits `< k` of `y`) all
/// qualify, and each is a bijection. The permutation is the improved Laine-Karras hash of
/// N. Vegdahl, "Building a Better LK Hash" (psychopath.io, 2021; also Blender Cycles'), whose
/// constants flip the digits closer to independently than the original's (S. Laine and
/// T. Karras, "Stratified sampling for stochastic transparency", EGSR 2011; Burley's listing 1).
/// It is a hash, not a true random nested scramble: with a uniform `seed` every point is
/// uniform, and nets stay nets (see the tests), but the flips of deep digits are not fully
/// independent.
#[inline(always)]
pub fn owen_scramble(x: u32, seed: u32) -> u32 {
    let mut y = x.reverse_bits();
    y ^= y.wrapping_mul(0x3d20_adea);
    y = y.wrapping_add(seed);
    y = y.wrapping_mul((seed >> 16) | 1);
    y ^= y.wrapping_mul(0x0552_6c56);
    y ^= y.wrapping_mul(0x53a2_2864);
    y.reverse_bits()
}

/// Counter word 3 for Sobol' randomisation keys ("SOBL"), so they never coincide with the
/// Philox outputs that seed generator streams (`rng::streams`).
pub const SOBOL_TAG: u32 = 0x534f_424c;

/// The two keys of one dimension in one replicate: for [`owen_scramble`] and [`digital_shift`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct Randomisation {
    /// The seed of [`owen_scramble`].
    pub scramble: u32,
    /// The shift of [`digital_shift`].
    pub shift: u32,
}

/// The keys of dimension `dimension` (0-based, as the host's direction arrays) in replicate
/// `replicate` of a job seeded `seed`: words 0 and 1 of
/// `Philox4x32-10(counter = (dimension, replicate, 0, SOBOL_TAG), key = (seed mod 2^32, seed >> 32))`.
/// Philox is a bijection of the counter for each key, so no two (dimension, replicate) pairs
/// share both keys, and the keys are independent-looking across dimensions and replicates: each
/// replicate is a separate randomisation of the whole point set.
#[inline(always)]
pub fn randomisation(seed: u64, replicate: u32, dimension: u32) -> Randomisation {
    let w = philox4x32_10([dimension, replicate, 0, SOBOL_TAG], [seed as u32, (seed >> 32) as u32]);
    Randomisation { scramble: w[0], shift: w[1] }
}

/// `2^-32` as an `f64`.
pub const TWO_POW_M32_F64: f64 = 1.0 / 4_294_967_296.0;
/// `2^-23` as an `f32`.
pub const TWO_POW_M23_F32: f32 = 1.0 / 8_388_608.0;

/// `x` as a uniform in the open interval (0, 1): `(x + 1/2) 2^-32`, the midpoint of the cell of
/// width `2^-32` at `x 2^-32`. Exact (33 significant bits fit in 53), so the range is
/// `[2^-33, 1 - 2^-33]`, and the first `2^m` points of a net keep their one-per-cell property
/// for every `m <= 32`. (cuRAND's `curand_uniform_double` on Sobol32 gives `(x + 1) 2^-32`
/// instead, in `(0, 1]`.)
#[inline(always)]
pub fn to_unit_f64(x: u32) -> f64 {
    (x as f64 + 0.5) * TWO_POW_M32_F64
}

/// `x` as a uniform `f32` in the open interval (0, 1): `(floor(x / 2^9) + 1/2) 2^-23`, the
/// midpoint of the cell of width `2^-23` holding `x 2^-32`. The top 23 bits are kept, not 24,
/// because with 24 the top cell's midpoint, `1 - 2^-25`, lies halfway between `1 - 2^-24` (the
/// largest `f32` below 1) and 1.0, and rounds to 1.0 (ties to even); with 23 bits
/// `(2k + 1) 2^-24` needs 24 significant bits and is exact. Range `[2^-24, 1 - 2^-24]`; a net's one-point-per-cell property holds for
/// `m <= 23`. (cuRAND's `curand_uniform` gives `x 2^-32 + 2^-33` rounded, in `(0, 1]`.)
#[inline(always)]
pub fn to_unit_f32(x: u32) -> f32 {
    ((x >> 9) as f32 + 0.5) * TWO_POW_M23_F32
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows d = 2..=20 of new-joe-kuo-6.21201 as `(s, a, [m_1..m_s])`, as published on Joe and
    /// Kuo's site (the file's first lines; the same in the host's embedded table, whose tests
    /// compare all of it).
    const ROWS: [(u32, u32, &[u32]); 19] = [
        (1, 0, &[1]),
        (2, 1, &[1, 3]),
        (3, 1, &[1, 3, 1]),
        (3, 2, &[1, 1, 1]),
        (4, 1, &[1, 1, 3, 3]),
        (4, 4, &[1, 3, 5, 13]),
        (5, 2, &[1, 1, 5, 5, 17]),
        (5, 4, &[1, 1, 5, 5, 5]),
        (5, 7, &[1, 1, 7, 11, 19]),
        (5, 11, &[1, 1, 5, 1, 1]),
        (5, 13, &[1, 1, 1, 3, 11]),
        (5, 14, &[1, 3, 5, 5, 31]),
        (6, 1, &[1, 3, 3, 9, 7, 49]),
        (6, 13, &[1, 1, 1, 15, 21, 21]),
        (6, 16, &[1, 3, 1, 13, 27, 49]),
        (6, 19, &[1, 1, 1, 15, 7, 5]),
        (6, 22, &[1, 3, 1, 15, 13, 25]),
        (6, 25, &[1, 1, 5, 5, 19, 61]),
        (7, 1, &[1, 3, 7, 11, 23, 15, 103]),
    ];

    /// Direction numbers of dimensions 1..=20 (index 0 = dimension 1).
    fn dims() -> Vec<[u32; BITS]> {
        let mut out = vec![VAN_DER_CORPUT];
        for &(s, a, m) in &ROWS {
            let mut v = [0; BITS];
            directions(s, a, m, &mut v).unwrap();
            out.push(v);
        }
        out
    }

    #[test]
    fn direction_numbers_match_curand() {
        // curandGetDirectionVectors32(CURAND_DIRECTION_VECTORS_32_JOEKUO6), cuRAND 10.4
        // (CUDA 13.0), read on an H100: the first 8 of dimension 2 (the host's tests compare
        // all 32 of all 20000 dimensions cuRAND has).
        let d = dims();
        assert_eq!(
            d[1][..8],
            [0x8000_0000, 0xc000_0000, 0xa000_0000, 0xf000_0000, 0x8800_0000, 0xcc00_0000, 0xaa00_0000, 0xff00_0000]
        );
        assert_eq!(d[0][..4], [0x8000_0000, 0x4000_0000, 0x2000_0000, 0x1000_0000]);
        // Dimension 2 by hand: s = 1, a = 0, so V_k = V_(k-1) ^ (V_(k-1) >> 1): Pascal's
        // triangle mod 2, and V_32 = 2^32 - 1.
        assert_eq!(d[1][31], u32::MAX);
        // Each V_k has its lowest set bit at 2^(32-k) (m_k odd): what makes the points of one
        // dimension a permutation of the dyadic grid.
        for v in &d {
            for (k, &x) in v.iter().enumerate() {
                assert_eq!(x.trailing_zeros() as usize, 31 - k);
            }
        }
    }

    #[test]
    fn directions_refuse_invalid_input() {
        let mut v = [7; BITS];
        assert_eq!(directions(0, 0, &[], &mut v).unwrap_err().rule, "the degree s must be in 1..=32");
        assert_eq!(directions(33, 0, &[1; 33], &mut v).unwrap_err().value, 33);
        assert_eq!(directions(1, 1, &[1], &mut v).unwrap_err().value, 1);
        assert_eq!(directions(3, 4, &[1, 3, 1], &mut v).unwrap_err().value, 4);
        assert_eq!(directions(3, 1, &[1, 3], &mut v).unwrap_err().value, 2);
        let e = directions(3, 1, &[1, 3, 8], &mut v).unwrap_err();
        assert_eq!((e.i, e.value), (3, 8));
        let e = directions(3, 1, &[1, 3, 9], &mut v).unwrap_err();
        assert_eq!((e.i, e.value), (3, 9));
        assert_eq!(directions(2, 1, &[3, 3], &mut v).unwrap_err().i, 1);
        assert_eq!(v, [7; BITS], "a refused call leaves out untouched");
        // s = 32: all numbers from m, and m_32 may use all 32 bits.
        let m: Vec<u32> = (0..32).map(|i| if i == 31 { u32::MAX } else { 1 }).collect();
        directions(32, 0, &m, &mut v).unwrap();
        assert_eq!(v[31], u32::MAX);
        assert_eq!(v[30], 2);
    }

    #[test]
    fn first_points_match_curand_and_scipy() {
        // cuRAND 10.4 (CUDA 13.0), curandCreateGeneratorHost(CURAND_RNG_QUASI_SOBOL32), 4
        // dimensions, curandGenerate: the first 16 outputs of each dimension, read on an H100
        // (the device generator gave the same). SciPy 1.17.1's
        // `qmc.Sobol(d, scramble=False, bits=32).random(16)` gives the same (times 2^32).
        // Dimensions 1 and 2 as fractions: 0, .5, .75, .25, .375, .875, .625, .125, ... and
        // 0, .5, .25, .75, .375, .875, .125, .625, ... (SciPy's documented
        // `random_base2(m=3)` example in two dimensions).
        const CURAND: [[u32; 16]; 4] = [
            [0x0, 0x8, 0xc, 0x4, 0x6, 0xe, 0xa, 0x2, 0x3, 0xb, 0xf, 0x7, 0x5, 0xd, 0x9, 0x1],
            [0x0, 0x8, 0x4, 0xc, 0x6, 0xe, 0x2, 0xa, 0x5, 0xd, 0x1, 0x9, 0x3, 0xb, 0x7, 0xf],
            [0x0, 0x8, 0x4, 0xc, 0xa, 0x2, 0xe, 0x6, 0xf, 0x7, 0xb, 0x3, 0x5, 0xd, 0x1, 0x9],
            [0x0, 0x8, 0x4, 0xc, 0xe, 0x6, 0xa, 0x2, 0x7, 0xf, 0x3, 0xb, 0x9, 0x1, 0xd, 0x5],
        ];
        let d = dims();
        for (j, want) in CURAND.iter().enumerate() {
            for (i, &w) in want.iter().enumerate() {
                assert_eq!(point(i as u32, &d[j]), w << 28, "dimension {}, point {i}", j + 1);
            }
        }
        let fractions: Vec<f64> = (0..8).map(|i| point(i, &d[0]) as f64 * TWO_POW_M32_F64).collect();
        assert_eq!(fractions, [0.0, 0.5, 0.75, 0.25, 0.375, 0.875, 0.625, 0.125]);
        let fractions: Vec<f64> = (0..8).map(|i| point(i, &d[1]) as f64 * TWO_POW_M32_F64).collect();
        assert_eq!(fractions, [0.0, 0.5, 0.25, 0.75, 0.375, 0.875, 0.125, 0.625]);
    }

    #[test]
    fn deep_points_match_scipy() {
        // SciPy 1.17.1: `e = qmc.Sobol(d=8, scramble=False, bits=32); e.fast_forward(i);
        // e.random(1) * 2^32` (same direction numbers, an independent implementation), at
        // indices where many or all 32 bits of the Gray code are set.
        const SCIPY: [(u32, [u32; 8]); 6] = [
            (1000, [0x38400000, 0x18c00000, 0x84c00000, 0xad400000, 0x47c00000, 0xe8400000, 0x0bc00000, 0xe6400000]),
            (65535, [0x00010000, 0xffff0000, 0x90550000, 0xc3050000, 0x40bb0000, 0x8bbb0000, 0x84670000, 0xba490000]),
            (65536, [0x00018000, 0x7fff8000, 0x78d58000, 0xe38a8000, 0x623c8000, 0xc3bb8000, 0x421f8000, 0xa06d8000]),
            (
                123456789,
                [0xf9d46f20, 0xcadcd1a0, 0x01a3d160, 0xe8a64f20, 0xdff6b920, 0xd9f2c960, 0xf9adc120, 0xb138e220],
            ),
            (1 << 31, [0x00000003, 0x55555555, 0x4b00bbbb, 0x70070031, 0x90026de7, 0xc06d6d6d, 0x4030bc11, 0x4bf636c3]),
            (
                u32::MAX,
                [0x00000001, 0xffffffff, 0xc5005555, 0x50050093, 0xb00ddb9d, 0x40bbbbbb, 0xc0104477, 0x87639641],
            ),
        ];
        let d = dims();
        for (i, want) in SCIPY {
            for j in 0..8 {
                assert_eq!(point(i, &d[j]), want[j], "dimension {}, point {i}", j + 1);
            }
        }
    }

    #[test]
    fn incremental_equals_direct() {
        let d = dims();
        for v in &d {
            // The first 2^16 points one after another, then stretches around large indices and
            // across the wrap at 2^32 - 1 -> 0.
            let mut x = 0;
            for i in 0..(1u32 << 16) {
                assert_eq!(x, point(i, v));
                x = next(x, i, v);
            }
            for start in [(1u32 << 31) - 100, 0x89ab_cdef, u32::MAX - 300] {
                let mut x = point(start, v);
                let mut i = start;
                for _ in 0..600 {
                    x = next(x, i, v);
                    i = i.wrapping_add(1);
                    assert_eq!(x, point(i, v), "index {i}");
                }
            }
        }
        assert_eq!(next(point(u32::MAX, &d[5]), u32::MAX, &d[5]), 0);
    }

    /// Whether `xs` (2^m values) has exactly one point in each interval of width 2^-m.
    fn one_per_cell(xs: impl Iterator<Item = u32>, m: u32) -> bool {
        let mut seen = vec![false; 1 << m];
        let mut n = 0;
        for x in xs {
            let cell = if m == 0 { 0 } else { (x >> (32 - m)) as usize };
            if std::mem::replace(&mut seen[cell], true) {
                return false;
            }
            n += 1;
        }
        n == 1 << m
    }

    #[test]
    fn first_points_are_a_permutation_of_the_dyadic_grid() {
        // The first 2^m points of one dimension are {k 2^-m}: every V_k (k <= m) has its lowest
        // set bit at 2^-k, so the XORs of subsets are the 2^m multiples of 2^-m, each once.
        for v in &dims() {
            for m in 0..=16u32 {
                let xs: Vec<u32> = (0..1u32 << m).map(|i| point(i, v)).collect();
                assert!(xs.iter().all(|&x| x & (u32::MAX >> m) == 0), "m = {m}: not on the grid");
                assert!(one_per_cell(xs.into_iter(), m), "m = {m}");
            }
        }
    }

    /// The `t` of the first 2^m points of two dimensions as a `(t, m, 2)`-net: the smallest `t`
    /// for which every elementary interval `[a 2^-p, (a+1) 2^-p) x [b 2^-q, (b+1) 2^-q)` with
    /// `p + q = m - t` holds exactly 2^t points.
    fn net_t(x: &[u32], y: &[u32], m: u32) -> u32 {
        (0..=m)
            .find(|&t| {
                (0..=m - t).all(|p| {
                    let q = m - t - p;
                    let mut count = vec![0u32; 1 << (m - t)];
                    for (&a, &b) in x.iter().zip(y) {
                        let ca = if p == 0 { 0 } else { (a >> (32 - p)) as usize };
                        let cb = if q == 0 { 0 } else { (b >> (32 - q)) as usize };
                        count[(ca << q) | cb] += 1;
                    }
                    count.iter().all(|&c| c == 1 << t)
                })
            })
            .unwrap()
    }

    /// The degree of each of dimensions 1..=20, van der Corput's counted as 1: like a degree-1
    /// polynomial it adds 0 to t.
    fn degrees() -> Vec<u32> {
        core::iter::once(1).chain(ROWS.iter().map(|r| r.0)).collect()
    }

    #[test]
    fn two_dimensional_nets() {
        // The first 2^m points of a Sobol' sequence are a (t, m, s)-net with
        // t = sum over the dimensions of (s_j - 1) (Sobol' 1967; Niederreiter, "Random Number
        // Generation and Quasi-Monte Carlo Methods", SIAM 1992, section 4.5): for dimensions 1
        // and 2, t = 0. Checked for every pair of dimensions 1..=8 and m <= 12 (the actual t of a
        // projection can only be smaller; Joe and Kuo chose the m_i to make it small).
        let d = dims();
        let deg = degrees();
        for m in 0..=12u32 {
            let pts: Vec<Vec<u32>> = (0..8).map(|j| (0..1u32 << m).map(|i| point(i, &d[j])).collect()).collect();
            assert_eq!(net_t(&pts[0], &pts[1], m), 0, "dims 1, 2, m = {m}");
            for j in 0..8 {
                for k in j + 1..8 {
                    let bound = (deg[j] - 1 + deg[k] - 1).min(m);
                    assert!(net_t(&pts[j], &pts[k], m) <= bound, "dims {}, {}, m = {m}", j + 1, k + 1);
                }
            }
        }
    }

    #[test]
    fn randomisation_preserves_nets_and_changes_points() {
        let d = dims();
        let m = 10;
        let methods: [(&str, fn(u32, Randomisation) -> u32); 2] =
            [("owen", |x, r| owen_scramble(x, r.scramble)), ("shift", |x, r| digital_shift(x, r.shift))];
        let raw: Vec<Vec<u32>> = d.iter().map(|v| (0..1u32 << m).map(|i| point(i, v)).collect()).collect();
        for replicate in 0..8 {
            let keys: Vec<Randomisation> = (0..d.len() as u32).map(|j| randomisation(42, replicate, j)).collect();
            for (name, f) in methods {
                let scr: Vec<Vec<u32>> =
                    raw.iter().zip(&keys).map(|(xs, &k)| xs.iter().map(|&x| f(x, k)).collect()).collect();
                for j in 0..d.len() {
                    // Still one point per interval of width 2^-m' among the first 2^m' points,
                    // for every m' <= m.
                    for mm in 0..=m {
                        assert!(one_per_cell(scr[j][..1 << mm].iter().copied(), mm), "{name} dim {} m = {mm}", j + 1);
                    }
                    // And not the unscrambled points (a uniform randomisation leaves 1024
                    // points all unchanged with negligible probability).
                    assert_ne!(scr[j], raw[j], "{name} dim {}", j + 1);
                }
                // Randomising each coordinate keeps each 2-d projection's t.
                for (j, k) in [(0, 1), (2, 3), (5, 11)] {
                    assert_eq!(
                        net_t(&scr[j], &scr[k], m),
                        net_t(&raw[j], &raw[k], m),
                        "{name} dims {}, {}",
                        j + 1,
                        k + 1
                    );
                }
            }
        }
    }

    #[test]
    fn owen_scramble_is_nested() {
        // Owen's structure: the top p bits of the output depend only on the top p bits of the
        // input, and for each p the map of top-p prefixes is a permutation. Checked for p <= 12
        // over all 2^12 prefixes with random lower bits.
        let mut state = 0x1234_5678_9abc_def0u64;
        let mut rnd = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u32
        };
        for _ in 0..20 {
            let seed = rnd();
            for p in 1..=12u32 {
                let mut image = vec![u32::MAX; 1 << p];
                for prefix in 0..1u32 << p {
                    let low = rnd() >> p;
                    let out = owen_scramble((prefix << (32 - p)) | low, seed) >> (32 - p);
                    let again = owen_scramble((prefix << (32 - p)) | (rnd() >> p), seed) >> (32 - p);
                    assert_eq!(out, again, "top {p} bits depend on lower bits");
                    image[prefix as usize] = out;
                }
                image.sort_unstable();
                assert!(image.iter().enumerate().all(|(i, &o)| o == i as u32), "not a permutation at p = {p}");
            }
        }
    }

    #[test]
    fn scrambled_points_are_uniform_over_seeds() {
        // For a fixed point, the top 4 bits of owen_scramble(x, key) over 2^14 replicates' keys
        // fall in the 16 cells about equally (chi-square with 15 degrees of freedom; 50 is
        // beyond its 0.99999 quantile, about 44). Same for the shift.
        let d = dims();
        for &i in &[0u32, 1, 5, 1000] {
            for j in [0usize, 1, 7] {
                let x = point(i, &d[j]);
                let mut owen = [0u32; 16];
                let mut shift = [0u32; 16];
                let n = 1u32 << 14;
                for r in 0..n {
                    let k = randomisation(7, r, j as u32);
                    owen[(owen_scramble(x, k.scramble) >> 28) as usize] += 1;
                    shift[(digital_shift(x, k.shift) >> 28) as usize] += 1;
                }
                for counts in [owen, shift] {
                    let e = n as f64 / 16.0;
                    let chi2: f64 = counts.iter().map(|&c| (c as f64 - e).powi(2) / e).sum();
                    assert!(chi2 < 50.0, "point {i} dim {}: chi2 {chi2}", j + 1);
                }
            }
        }
    }

    #[test]
    fn replicates_are_independent_randomisations() {
        // Distinct (replicate, dimension) pairs get distinct keys; seeds matter in both halves.
        let mut seen = std::collections::HashSet::new();
        for r in 0..64 {
            for j in 0..64 {
                let k = randomisation(1, r, j);
                assert!(seen.insert((k.scramble, k.shift)));
            }
        }
        assert_ne!(randomisation(1, 0, 0), randomisation(1 << 32, 0, 0));
        assert_ne!(randomisation(1, 0, 0), randomisation(2, 0, 0));
        assert_eq!(randomisation(9, 3, 4), randomisation(9, 3, 4));

        // Randomised QMC does what it is for: the mean of x y z over [0,1]^3 (1/8) from 2^10
        // scrambled points, per replicate, is unbiased across 64 replicates and its spread is far
        // below plain Monte Carlo's (sd of x y z is sqrt(1/27 - 1/64) = 0.1454, so 0.00454 for
        // 1024 points).
        let d = dims();
        let reps = 64;
        let est: Vec<f64> = (0..reps)
            .map(|r| {
                let k: Vec<Randomisation> = (0..3).map(|j| randomisation(2024, r, j)).collect();
                (0..1024u32)
                    .map(|i| {
                        (0..3)
                            .map(|j| to_unit_f64(owen_scramble(point(i, &d[j as usize]), k[j as usize].scramble)))
                            .product::<f64>()
                    })
                    .sum::<f64>()
                    / 1024.0
            })
            .collect();
        let mean = est.iter().sum::<f64>() / reps as f64;
        let sd = (est.iter().map(|e| (e - mean).powi(2)).sum::<f64>() / (reps - 1) as f64).sqrt();
        assert!((mean - 0.125).abs() < 5.0 * sd / (reps as f64).sqrt() + 1e-12, "mean {mean}, sd {sd}");
        assert!(sd < 0.00454 / 10.0, "RQMC sd {sd} not well below MC's 0.00454");
    }

    #[test]
    fn conversions_stay_inside_the_open_interval() {
        assert_eq!(to_unit_f64(0), TWO_POW_M32_F64 / 2.0);
        assert_eq!(to_unit_f64(u32::MAX), 1.0 - TWO_POW_M32_F64 / 2.0);
        assert!(to_unit_f64(u32::MAX) < 1.0);
        assert_eq!(to_unit_f64(1 << 31), 0.5 + TWO_POW_M32_F64 / 2.0);
        assert_eq!(to_unit_f32(0), TWO_POW_M23_F32 / 2.0);
        assert_eq!(to_unit_f32(u32::MAX), 1.0 - TWO_POW_M23_F32 / 2.0);
        assert!(to_unit_f32(u32::MAX) < 1.0 && to_unit_f32(0) > 0.0);
        // Every one of the 2^23 f32 cells: exact midpoints, strictly increasing, inside (0, 1),
        // and the f32 is the f64 of the same cell's midpoint.
        let mut last = 0.0f32;
        for k in 0..1u32 << 23 {
            let f = to_unit_f32(k << 9);
            assert!(f > last && f < 1.0);
            assert_eq!(f as f64, (k as f64 + 0.5) / 8_388_608.0);
            assert_eq!(to_unit_f32((k << 9) | 0x1ff), f, "the low 9 bits do not matter");
            last = f;
        }
        // f64: exact for all x (the sum has at most 33 significant bits): spot-check the ends
        // and a spread of values against integer arithmetic.
        for x in (0..=u32::MAX).step_by(65_537).chain([u32::MAX - 1, 1, 2]) {
            let f = to_unit_f64(x);
            assert!(f > 0.0 && f < 1.0);
            assert_eq!(f * 8_589_934_592.0, (2 * x as u64 + 1) as f64);
        }
    }
}
