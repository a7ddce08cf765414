//! The standard normal quantile `Φ^-1` and normal variates by inversion.
//!
//! # The quantile
//! Wichura's algorithm AS 241 (M. J. Wichura, "Algorithm AS 241: The Percentage Points of the
//! Normal Distribution", Applied Statistics 37 (1988) 477-484): three rational approximations,
//! one in `t = 0.180625 - q^2` for `|q| <= 0.425` (`q = p - 1/2`), two in `r = sqrt(-ln p)`
//! for the tails (`r <= 5`: in `r - 1.6`; `r > 5`: in `r - 5`), which cover every `p` down to
//! the smallest subnormal. `f32` ([`Single`]) uses PPND7 (degree 3 over 3 or 2, relative error
//! about 1e-7), `f64` ([`Double`]) PPND16 (degree 7 over 7, about 1e-16). The coefficients are
//! the paper's, checked against its "hash sums" (the sums of the coefficients' decimal
//! mantissas, which the paper prints to catch transcription errors; see the tests).
//!
//! [`Quantile::normal_quantile_centered`] takes both `q` and `p`, so that callers that know the
//! probability as an integer form each without cancellation: the central formula uses only `q`
//! (relative error of `q` carries to `x` almost unchanged there), the tails only `p`, whose
//! logarithm keeps full relative precision however small `p` is. The rational functions are
//! evaluated as `n0 + t M(t) / D(t)` (the same functions, with smaller rounding errors) and
//! the decimal constants `0.180625` and `1.6` as two parts each, which took the largest `f32`
//! error from 4.8 to 3.8 ulps.
//!
//! Measured accuracy (`tests/tests/inversion.rs`, against a double-double reference): PPND16
//! in `f64`, relative error at most 4.6e-16 centrally, 4.9e-16 for `r <= 5` and 6.1e-16 beyond,
//! over `p` from 1e-300 to 1/2 (with `std`'s logarithm standing in for `math64::ln_f64` at
//! the time); PPND7 in `f32` exact mode at the reflected probabilities of 1.3 million words
//! (every 2^12-th and the 2^16 at each end and each side of the middle): at most 3.2 ulps
//! centrally and 3.8 in the tail, 78% of words within 1 ulp, 97.9% within 2. PPND7 itself is
//! within 1.8 ulps; the rest is `f32` rounding (of `ln p`, of `r`, which `x` follows with a
//! slope near 2, and of the evaluation).
//!
//! # Inversion with the reflection in integer form
//! The naive `x = Φ^-1(z 2^-32)` ([`inversion_naive`]) rounds the top 128 words to `u = 1`
//! (`x = +inf`), maps word 0 to `u = 0` (`-inf`), and leaves the upper tail (where `1 - u` is
//! formed in floating point) only the `2^24` spacing of `f32` near 1: the upper tail is coarser
//! than the lower one, so the output is asymmetric and its mean biased. [`inversion`] reflects
//! the word first, in integers (the reflection of D. B. Thomas, "Monte Carlo implementations
//! on GPUs"): a word `z >= 2^31` becomes `z' = 2^32 - 1 - z` with the sign remembered, so the
//! probability handed to `Φ^-1` is always `p = (z' + 1/2) 2^-32` in `(0, 1/2)`, formed from
//! the odd integer `2 z' + 1`, and `q = p - 1/2` from the odd integer `2^32 - 1 - 2 z'`: each
//! is one integer-to-float conversion and an exact scaling, never a difference of nearly equal
//! floats. Word `z` and its mirror `2^32 - 1 - z` give `x` and `-x`
//! exactly; the largest `|x|` is `-Φ^-1(2^-33) = 6.3379577545537893` (words 0 and `2^32 - 1`).
//! `f64` does the same with the 53-bit integer of [`crate::convert::u32_pair_to_unit_f64`]:
//! `p = (k' + 1/2) 2^-53`, exact, largest `|x| = -Φ^-1(2^-54) = 8.2923610758135955`.
//!
//! Draw rules: `f32`, one word per value; `f64`, two words per value (`x` then `y`, combined as
//! `x ^ (y << 21)`), for both transforms.

use crate::MathMode;
use crate::real::{Arith, Double, Real, Single};
use crate::rng::Uniform32;
use crate::{math64, platform};

/// A precision whose arithmetic computes the standard normal quantile `Φ^-1`, and the rules
/// that turn a stream's words into the probabilities [`inversion`] and [`inversion_naive`] use.
pub trait Quantile: Arith {
    /// `Φ^-1(p)` for `p` in `(0, 1/2]`, given also `q = p - 1/2` (in `[-1/2, 0]`), each exact or
    /// rounded once by the caller.
    ///
    /// The central region (`|q| <= 0.425`) reads only `q`, the tails (`p < 0.075`) only `p`.
    /// `p = 0` gives NaN (use [`normal_quantile`] for the ends); NaN gives NaN. `f32`: AS 241's
    /// PPND7 in `f32` with the mode's `ln` and `sqrt`; `f64`: PPND16 in `f64` with
    /// [`math64::ln_f64`] and a correctly rounded square root.
    fn normal_quantile_centered(q: Self::R, p: Self::R) -> Self::R;

    /// `Φ^-1(p)` for `p` in `(0, 1/2]`, with `q = p - 1/2` formed here (exact for `p >= 1/4`,
    /// rounded once below). Small `p` keeps full relative precision.
    #[inline(always)]
    fn normal_quantile_lower(p: Self::R) -> Self::R {
        Self::normal_quantile_centered(p - Self::R::from_f64(0.5), p)
    }

    /// The next word(s) of the stream as a reflected probability (see the module docs): `f32`
    /// one word ([`reflect_u32`]), `f64` two ([`reflect_u53`]).
    fn reflected_uniform<G: Uniform32>(rng: &mut G) -> Reflected<Self::R>;

    /// The next word(s) as the naive uniform in `[0, 1]`: `f32`, `(z as f32) 2^-32` rounded once
    /// (the top 128 words give exactly 1, word 0 gives 0); `f64`, `k 2^-53` for the 53-bit `k`
    /// of [`reflect_u53`] (exact, in `[0, 1)`).
    fn naive_uniform<G: Uniform32>(rng: &mut G) -> Self::R;
}

/// A probability reflected into the lower half: `Φ^-1` of the original probability is
/// `-Φ^-1(p)` if `upper`, else `Φ^-1(p)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reflected<R> {
    /// The reflected probability, in `(0, 1/2]`.
    pub p: R,
    /// `p - 1/2`, in `[-1/2, 0)`, formed without cancellation.
    pub q: R,
    /// Whether the original probability was in the upper half (the result is negated).
    pub upper: bool,
}

impl<R: Real> Reflected<R> {
    /// `Φ^-1` of the original probability: `±Φ^-1(p)`, exactly antisymmetric under reflection.
    #[inline(always)]
    pub fn normal<A: Quantile<R = R>>(self) -> R {
        let v = A::normal_quantile_centered(self.q, self.p);
        if self.upper { -v } else { v }
    }
}

/// A word `z` reflected: `z' = z` below `2^31`, else `2^32 - 1 - z` (`upper`);
/// `p = (2 z' + 1) 2^-33` and `q = -(2^32 - 1 - 2 z') 2^-33`, each one rounding of an odd
/// integer below `2^32` to `f32` and an exact scaling. `p` is exact for `z' < 2^23`
/// (`p < 2^-9`), so the tails lose nothing; it rounds to exactly `1/2` only for the middle
/// words, where the central formula reads `q` (never 0) instead.
#[inline(always)]
pub fn reflect_u32(z: u32) -> Reflected<f32> {
    const TWO_POW_M33: f32 = 1.0 / 8_589_934_592.0;
    let upper = z >> 31 != 0;
    // z' = z ^ (all ones if upper): 2^32 - 1 - z for the upper half.
    let zr = z ^ ((z as i32 >> 31) as u32);
    let twice = zr << 1; // < 2^32: zr < 2^31
    let p = ((twice | 1) as f32) * TWO_POW_M33;
    let q = -((!twice) as f32) * TWO_POW_M33;
    Reflected { p, q, upper }
}

/// A 53-bit integer `k` (below `2^53`) reflected: `k' = k` below `2^52`, else `2^53 - 1 - k`
/// (`upper`); `p = (2 k' + 1) 2^-54` and `q = -(2^53 - 1 - 2 k') 2^-54`, both exact.
#[inline(always)]
pub fn reflect_u53(k: u64) -> Reflected<f64> {
    const TWO_POW_M54: f64 = 1.0 / 18_014_398_509_481_984.0;
    const MASK53: u64 = (1 << 53) - 1;
    let k = k & MASK53;
    let upper = k >> 52 != 0;
    let kr = if upper { MASK53 - k } else { k };
    let twice = kr << 1; // < 2^53
    let p = ((twice | 1) as f64) * TWO_POW_M54;
    let q = -((MASK53 - twice) as f64) * TWO_POW_M54;
    Reflected { p, q, upper }
}

/// The 53-bit integer of two words, as [`crate::convert::u32_pair_to_unit_f64`] forms it.
#[inline(always)]
fn u53_of_pair(x: u32, y: u32) -> u64 {
    (x as u64) ^ ((y as u64) << 21)
}

/// A standard normal by inversion with the reflection in integer form (see the module docs):
/// `f32` from one word, `f64` from two (`x` then `y`). Finite, never more than
/// `6.3379577545537893` (`f32`) or `8.2923610758135955` (`f64`) in magnitude; word `z` and its
/// mirror give exactly opposite values.
#[inline(always)]
pub fn inversion<A: Quantile, G: Uniform32>(rng: &mut G) -> A::R {
    A::reflected_uniform(rng).normal::<A>()
}

/// A standard normal by naive inversion, kept to show the defects [`inversion`] fixes:
/// `u` = [`Quantile::naive_uniform`] (`f32`: one word, `z 2^-32` rounded; `f64`: two words,
/// `k 2^-53`), then `Φ^-1(u)` the textbook way: `u <= 1/2` directly, `u > 1/2` as
/// `-Φ^-1(1 - u)`; `u = 0` gives `-inf`, `u = 1` gives `+inf`. In `f32` the top 128 words give
/// `+inf`, and the upper tail takes only the `f32` values below 1 (spacing `2^-24`).
#[inline(always)]
pub fn inversion_naive<A: Quantile, G: Uniform32>(rng: &mut G) -> A::R {
    normal_quantile::<A>(A::naive_uniform(rng))
}

/// `Φ^-1(p)` for any `p` in `[0, 1]`, by symmetry: `p <= 1/2` directly, `p > 1/2` as
/// `-Φ^-1(1 - p)` (both `1 - p` and `p - 1/2` are exact there). `Φ^-1(0) = -inf`,
/// `Φ^-1(1) = +inf`, NaN outside `[0, 1]`. Accuracy as [`Quantile::normal_quantile_centered`],
/// with `q = p - 1/2` rounded once for `p < 1/4`.
#[inline(always)]
pub fn normal_quantile<A: Quantile>(p: A::R) -> A::R {
    let half = A::R::from_f64(0.5);
    let one = A::R::ONE;
    if p <= half {
        if p > A::R::ZERO {
            A::normal_quantile_centered(p - half, p)
        } else if p == A::R::ZERO {
            A::R::from_f64(f64::NEG_INFINITY)
        } else {
            A::R::from_f64(f64::NAN)
        }
    } else if p < one {
        -A::normal_quantile_centered(half - p, one - p)
    } else if p == one {
        A::R::from_f64(f64::INFINITY)
    } else {
        // p > 1 or NaN.
        A::R::from_f64(f64::NAN)
    }
}

// ------------------------------------------------------------------------------------------------
// AS 241
// ------------------------------------------------------------------------------------------------

/// `|q|` up to which the central formula is used.
const SPLIT1: f64 = 0.425;
/// `r` up to which the first tail formula is used.
const SPLIT2: f64 = 5.0;
/// `SPLIT1^2 = 0.180625 = 289/1600`: the central formula's variable is `CONST1 - q^2`.
const CONST1: f64 = 0.180625;
/// The first tail formula's variable is `r - CONST2`, `CONST2 = 1.6 = 8/5`.
const CONST2: f64 = 1.6;

/// `num / den - x`, the rounding error of a double `x` near `num / den` (`0 < x < 2`), from
/// integers: `x = mant 2^exp` and `num / den - x = (num 2^-exp - den mant) 2^exp / den`.
const fn rounding_gap(num: i128, den: i128, x: f64) -> f64 {
    let bits = x.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32 - 1075;
    let mant = ((bits & ((1 << 52) - 1)) | (1 << 52)) as i128;
    let diff = num * (1i128 << -exp) - den * mant;
    (diff as f64) * f64::from_bits(((exp + 1023) as u64) << 52) / den as f64
}

// The constants `0.180625` and `1.6` are not binary fractions: each is kept as its rounding
// `HI` and the rest `LO` (`HI + LO` within 1e-25 of the decimal), so that the variable `t`
// carries no systematic offset (`f32`'s `1.6` alone is off by 2.4e-8, which would move `x` by
// about 0.4 ulp near `x = -1.7`). `HI - q^2` and `r - HI` are exact or rounded once; adding
// `LO` costs one addition.
const CONST1_HI_F32: f32 = CONST1 as f32;
const CONST1_LO_F32: f32 = rounding_gap(289, 1600, CONST1_HI_F32 as f64) as f32;
const CONST2_HI_F32: f32 = CONST2 as f32;
const CONST2_LO_F32: f32 = rounding_gap(8, 5, CONST2_HI_F32 as f64) as f32;
const CONST1_LO: f64 = rounding_gap(289, 1600, CONST1);
const CONST2_LO: f64 = rounding_gap(8, 5, CONST2);

/// A rational function `N(t) / D(t)`, `N` of degree 3, `D = 1 + d1 t + d2 t^2 + d3 t^3`, kept
/// as `n0 + t M(t) / D(t)` with `M = (N - n0 D) / t` (degree 2): the same function, but the
/// roundings of `M / D` reach the result only through the correction `t M / D`, a fraction of
/// it.
#[derive(Clone, Copy)]
struct Rational3 {
    n0: f32,
    m: [f32; 3],
    d: [f32; 3],
}

impl Rational3 {
    /// From the paper's `N` (increasing degree) and `D` without its constant 1 (a missing
    /// `t^3` term as 0), in `f64`; each coefficient of `M` is formed in `f64` and rounded once
    /// to `f32`.
    const fn new(n: [f64; 4], d: [f64; 3]) -> Self {
        Rational3 {
            n0: n[0] as f32,
            m: [(n[1] - n[0] * d[0]) as f32, (n[2] - n[0] * d[1]) as f32, (n[3] - n[0] * d[2]) as f32],
            d: [d[0] as f32, d[1] as f32, d[2] as f32],
        }
    }

    /// `N(t) / D(t)` as `n0 + (t M(t)) / D(t)`, Horner's rule written out.
    #[inline(always)]
    fn eval(&self, t: f32) -> f32 {
        let m = (self.m[2] * t + self.m[1]) * t + self.m[0];
        let d = ((self.d[2] * t + self.d[1]) * t + self.d[0]) * t + 1.0;
        self.n0 + t * m / d
    }
}

/// A rational function of degree 7 over 7, kept as [`Rational3`] is.
#[derive(Clone, Copy)]
struct Rational7 {
    n0: f64,
    m: [f64; 7],
    d: [f64; 7],
}

impl Rational7 {
    /// From the paper's `N` (increasing degree) and `D` without its constant 1.
    const fn new(n: [f64; 8], d: [f64; 7]) -> Self {
        let mut m = [0.0; 7];
        let mut k = 0;
        while k < 7 {
            m[k] = n[k + 1] - n[0] * d[k];
            k += 1;
        }
        Rational7 { n0: n[0], m, d }
    }

    /// `N(t) / D(t)` as `n0 + (t M(t)) / D(t)`, Horner's rule written out.
    #[inline(always)]
    fn eval(&self, t: f64) -> f64 {
        let (m, d) = (&self.m, &self.d);
        let mt = (((((m[6] * t + m[5]) * t + m[4]) * t + m[3]) * t + m[2]) * t + m[1]) * t + m[0];
        let dt = ((((((d[6] * t + d[5]) * t + d[4]) * t + d[3]) * t + d[2]) * t + d[1]) * t + d[0]) * t + 1.0;
        self.n0 + t * mt / dt
    }
}

// PPND7, as printed in the paper (hash sums AB 32.3184577772, CD 15.7614929821,
// EF 19.4052910204). Kept in f64 for the hash-sum test; the evaluation rounds them to f32.
const PPND7_A: [f64; 4] = [3.3871327179e0, 5.0434271938e1, 1.5929113202e2, 5.9109374720e1];
const PPND7_B: [f64; 3] = [1.7895169469e1, 7.8757757664e1, 6.7187563600e1];
const PPND7_C: [f64; 4] = [1.4234372777e0, 2.7568153900e0, 1.3067284816e0, 1.7023821103e-1];
const PPND7_D: [f64; 2] = [7.3700164250e-1, 1.2021132975e-1];
const PPND7_E: [f64; 4] = [6.6579051150e0, 3.0812263860e0, 4.2868294337e-1, 1.7337203997e-2];
const PPND7_F: [f64; 2] = [2.4197894225e-1, 1.2258202635e-2];

/// PPND7's central formula (`t = 0.180625 - q^2`).
const PPND7_CENTRAL: Rational3 = Rational3::new(PPND7_A, PPND7_B);
/// PPND7's first tail formula (`t = r - 1.6`); its denominator is quadratic.
const PPND7_NEAR: Rational3 = Rational3::new(PPND7_C, [PPND7_D[0], PPND7_D[1], 0.0]);
/// PPND7's far tail formula (`t = r - 5`).
const PPND7_FAR: Rational3 = Rational3::new(PPND7_E, [PPND7_F[0], PPND7_F[1], 0.0]);

// PPND16, as printed in the paper (hash sums AB 55.8831928806149014439,
// CD 49.33206503301610289036, EF 47.52583317549289671629), with all 20 digits so that they can
// be compared with it; the compiler rounds each to the nearest double.
#[allow(clippy::excessive_precision)]
const PPND16_A: [f64; 8] = [
    3.3871328727963666080e0,
    1.3314166789178437745e+2,
    1.9715909503065514427e+3,
    1.3731693765509461125e+4,
    4.5921953931549871457e+4,
    6.7265770927008700853e+4,
    3.3430575583588128105e+4,
    2.5090809287301226727e+3,
];
#[allow(clippy::excessive_precision)]
const PPND16_B: [f64; 7] = [
    4.2313330701600911252e+1,
    6.8718700749205790830e+2,
    5.3941960214247511077e+3,
    2.1213794301586595867e+4,
    3.9307895800092710610e+4,
    2.8729085735721942674e+4,
    5.2264952788528545610e+3,
];
#[allow(clippy::excessive_precision)]
const PPND16_C: [f64; 8] = [
    1.42343711074968357734e0,
    4.63033784615654529590e0,
    5.76949722146069140550e0,
    3.64784832476320460504e0,
    1.27045825245236838258e0,
    2.41780725177450611770e-1,
    2.27238449892691845833e-2,
    7.74545014278341407640e-4,
];
#[allow(clippy::excessive_precision)]
const PPND16_D: [f64; 7] = [
    2.05319162663775882187e0,
    1.67638483018380384940e0,
    6.89767334985100004550e-1,
    1.48103976427480074590e-1,
    1.51986665636164571966e-2,
    5.47593808499534494600e-4,
    1.05075007164441684324e-9,
];
#[allow(clippy::excessive_precision)]
const PPND16_E: [f64; 8] = [
    6.65790464350110377720e0,
    5.46378491116411436990e0,
    1.78482653991729133580e0,
    2.96560571828504891230e-1,
    2.65321895265761230930e-2,
    1.24266094738807843860e-3,
    2.71155556874348757815e-5,
    2.01033439929228813265e-7,
];
#[allow(clippy::excessive_precision)]
const PPND16_F: [f64; 7] = [
    5.99832206555887937690e-1,
    1.36929880922735805310e-1,
    1.48753612908506148525e-2,
    7.86869131145613259100e-4,
    1.84631831751005468180e-5,
    1.42151175831644588870e-7,
    2.04426310338993978564e-15,
];

const PPND16_CENTRAL: Rational7 = Rational7::new(PPND16_A, PPND16_B);
const PPND16_NEAR: Rational7 = Rational7::new(PPND16_C, PPND16_D);
const PPND16_FAR: Rational7 = Rational7::new(PPND16_E, PPND16_F);

/// AS 241's PPND7 in `f32`: `Φ^-1(p)` for `p` in `(0, 1/2]`, `q = p - 1/2`.
///
/// Each region only chooses its variable `t`, a factor (`q` centrally, `-1` in the tails) and
/// its coefficients; one evaluation of the rational function and one division follow, so a
/// warp whose lanes fall in different regions diverges only over the tails' `ln` and `sqrt`.
/// The paper's `N / D` is evaluated as `n0 + t M / D` ([`Rational3`]; measured, the largest
/// error of the central formula dropped from 4.6 to 3.2 ulps and of the tail from 4.8 to 4.1,
/// and to 3.8 with `1.6` in two parts), with no fma, in a fixed order.
// A call in the GPU build: one copy per module instead of one per value drawn (see `real.rs`).
#[cfg_attr(target_arch = "nvptx64", inline(never))]
#[cfg_attr(not(target_arch = "nvptx64"), inline(always))]
fn ppnd7<M: MathMode>(q: f32, p: f32) -> f32 {
    // `!(q < -SPLIT1)` sends NaN to the central formula, which returns NaN.
    let (t, factor, c) = if !(q < -(SPLIT1 as f32)) {
        ((CONST1_HI_F32 - q * q) + CONST1_LO_F32, q, PPND7_CENTRAL)
    } else {
        let r = M::sqrt(-M::ln(p));
        if r <= SPLIT2 as f32 {
            ((r - CONST2_HI_F32) - CONST2_LO_F32, -1.0, PPND7_NEAR)
        } else {
            (r - SPLIT2 as f32, -1.0, PPND7_FAR)
        }
    };
    factor * c.eval(t)
}

/// AS 241's PPND16 in `f64`: `Φ^-1(p)` for `p` in `(0, 1/2]`, `q = p - 1/2`. Structured as
/// [`ppnd7`].
// A call in the GPU build: one copy per module instead of one per value drawn (see `real.rs`).
#[cfg_attr(target_arch = "nvptx64", inline(never))]
#[cfg_attr(not(target_arch = "nvptx64"), inline(always))]
fn ppnd16(q: f64, p: f64) -> f64 {
    let (t, factor, c) = if !(q < -SPLIT1) {
        ((CONST1 - q * q) + CONST1_LO, q, PPND16_CENTRAL)
    } else {
        let r = platform::sqrt_f64(-math64::ln_f64(p));
        if r <= SPLIT2 { ((r - CONST2) - CONST2_LO, -1.0, PPND16_NEAR) } else { (r - SPLIT2, -1.0, PPND16_FAR) }
    };
    factor * c.eval(t)
}

impl<M: MathMode + Send + Sync> Quantile for Single<M> {
    #[inline(always)]
    fn normal_quantile_centered(q: f32, p: f32) -> f32 {
        ppnd7::<M>(q, p)
    }
    #[inline(always)]
    fn reflected_uniform<G: Uniform32>(rng: &mut G) -> Reflected<f32> {
        reflect_u32(rng.next_u32())
    }
    #[inline(always)]
    fn naive_uniform<G: Uniform32>(rng: &mut G) -> f32 {
        (rng.next_u32() as f32) * crate::convert::TWO_POW_M32
    }
}

impl Quantile for Double {
    #[inline(always)]
    fn normal_quantile_centered(q: f64, p: f64) -> f64 {
        ppnd16(q, p)
    }
    #[inline(always)]
    fn reflected_uniform<G: Uniform32>(rng: &mut G) -> Reflected<f64> {
        let x = rng.next_u32();
        let y = rng.next_u32();
        reflect_u53(u53_of_pair(x, y))
    }
    #[inline(always)]
    fn naive_uniform<G: Uniform32>(rng: &mut G) -> f64 {
        let x = rng.next_u32();
        let y = rng.next_u32();
        (u53_of_pair(x, y) as f64) * crate::convert::TWO_POW_M53
    }
}

/// The exhaustive accuracy sweep of `f32` inversion: every word's [`inversion`] (exact mode)
/// against the `f64` PPND16 quantile at the word's exact reflected probability
/// `(z' + 1/2) 2^-32` (relative error about 5e-16: a reference to far below an `f32` ulp), and
/// every word's [`inversion_naive`]. The GPU runs it over all `2^32` words (`gpu.rs`,
/// `inverse_cdf_sweep`), the CPU over samples; both add words with [`Self::add`] and combine
/// threads with [`Self::merge`] in a fixed order.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct InversionSweep {
    /// Words added.
    pub words: f64,
    /// The largest error of `inversion` in `f32` ulps of the reference (`2^(e - 23)` for a
    /// reference in `[2^e, 2^(e+1))`), and a word where it occurs.
    pub max_ulps: f64,
    pub max_ulps_word: f64,
    /// Words whose error exceeds 1, 2 and 4 ulps.
    pub over_1: f64,
    pub over_2: f64,
    pub over_4: f64,
    /// `Σ x`, `Σ x³` and the largest `|x|` of `inversion`.
    pub sum: f64,
    pub sum_cubes: f64,
    pub max_abs: f64,
    /// `inversion_naive`: words giving a non-finite value; over the finite values, `Σ x`,
    /// `Σ x³`, the largest and the smallest value.
    pub naive_non_finite: f64,
    pub naive_sum: f64,
    pub naive_sum_cubes: f64,
    pub naive_max: f64,
    pub naive_min: f64,
}

impl InversionSweep {
    /// Add word `z`.
    #[inline(always)]
    pub fn add(&mut self, z: u32) {
        let x = inversion::<Single<crate::Exact>, _>(&mut Once(z));
        let zr = z ^ ((z as i32 >> 31) as u32);
        let twice = (zr as u64) << 1;
        const TWO_POW_M33: f64 = 1.0 / 8_589_934_592.0;
        let r = Reflected {
            p: (twice | 1) as f64 * TWO_POW_M33,
            q: -(((1u64 << 32) - 1 - twice) as f64) * TWO_POW_M33,
            upper: z >> 31 != 0,
        }
        .normal::<Double>();
        // The ulp of `r` in f32: 2^(e - 23) from the exponent of `r` rounded to f32 (the
        // rounding can only step up a binade where it loses less than half an ulp).
        let bits = (r as f32).to_bits() & 0x7f80_0000;
        let ulp = f32::from_bits(bits) as f64 * (1.0 / 8_388_608.0);
        let err = ((x as f64) - r).abs() / ulp;
        self.words += 1.0;
        if err > self.max_ulps {
            self.max_ulps = err;
            self.max_ulps_word = z as f64;
        }
        self.over_1 += (err > 1.0) as u32 as f64;
        self.over_2 += (err > 2.0) as u32 as f64;
        self.over_4 += (err > 4.0) as u32 as f64;
        let xd = x as f64;
        self.sum += xd;
        self.sum_cubes += xd * xd * xd;
        self.max_abs = self.max_abs.max(xd.abs());
        let n = inversion_naive::<Single<crate::Exact>, _>(&mut Once(z)) as f64;
        if n.is_finite() {
            self.naive_sum += n;
            self.naive_sum_cubes += n * n * n;
            self.naive_max = self.naive_max.max(n);
            self.naive_min = self.naive_min.min(n);
        } else {
            self.naive_non_finite += 1.0;
        }
    }

    /// Combine with `o` (the words of both).
    pub fn merge(&mut self, o: &Self) {
        self.words += o.words;
        if o.max_ulps > self.max_ulps {
            self.max_ulps = o.max_ulps;
            self.max_ulps_word = o.max_ulps_word;
        }
        self.over_1 += o.over_1;
        self.over_2 += o.over_2;
        self.over_4 += o.over_4;
        self.sum += o.sum;
        self.sum_cubes += o.sum_cubes;
        self.max_abs = self.max_abs.max(o.max_abs);
        self.naive_non_finite += o.naive_non_finite;
        self.naive_sum += o.naive_sum;
        self.naive_sum_cubes += o.naive_sum_cubes;
        self.naive_max = self.naive_max.max(o.naive_max);
        self.naive_min = self.naive_min.min(o.naive_min);
    }

    /// Its fields as `f64`s (what the GPU kernel writes per thread), and back.
    pub const FIELDS: usize = 15;
    pub fn to_array(&self) -> [f64; Self::FIELDS] {
        [
            self.words,
            self.max_ulps,
            self.max_ulps_word,
            self.over_1,
            self.over_2,
            self.over_4,
            self.sum,
            self.sum_cubes,
            self.max_abs,
            self.naive_non_finite,
            self.naive_sum,
            self.naive_sum_cubes,
            self.naive_max,
            self.naive_min,
            0.0,
        ]
    }
    pub fn from_array(a: &[f64]) -> Self {
        Self {
            words: a[0],
            max_ulps: a[1],
            max_ulps_word: a[2],
            over_1: a[3],
            over_2: a[4],
            over_4: a[5],
            sum: a[6],
            sum_cubes: a[7],
            max_abs: a[8],
            naive_non_finite: a[9],
            naive_sum: a[10],
            naive_sum_cubes: a[11],
            naive_max: a[12],
            naive_min: a[13],
        }
    }
}

/// A word source that gives one word (the sweep's).
struct Once(u32);
impl Uniform32 for Once {
    #[inline(always)]
    fn next_u32(&mut self) -> u32 {
        self.0
    }
}

#[cfg(test)]
#[allow(clippy::excessive_precision)] // reference values as published
mod tests {
    use super::*;
    use crate::{Exact, Fast};

    type S = Single<Exact>;

    struct Words<'a>(&'a [u32], usize);
    impl Uniform32 for Words<'_> {
        fn next_u32(&mut self) -> u32 {
            self.1 += 1;
            self.0[self.1 - 1]
        }
    }

    /// The paper's hash sum: the sum of the coefficients' decimal mantissas (in `[1, 10)`).
    fn hash_sum(groups: &[&[f64]]) -> f64 {
        let mut s = 0.0;
        for g in groups {
            for &c in *g {
                s += c / 10f64.powi(c.abs().log10().floor() as i32);
            }
        }
        s
    }

    #[test]
    fn coefficients_match_the_papers_hash_sums() {
        let cases: [(&[&[f64]], f64); 6] = [
            (&[&PPND7_A, &PPND7_B], 32.3184577772),
            (&[&PPND7_C, &PPND7_D], 15.7614929821),
            (&[&PPND7_E, &PPND7_F], 19.4052910204),
            (&[&PPND16_A, &PPND16_B], 55.8831928806149014439),
            (&[&PPND16_C, &PPND16_D], 49.33206503301610289036),
            (&[&PPND16_E, &PPND16_F], 47.52583317549289671629),
        ];
        for (groups, want) in cases {
            let got = hash_sum(groups);
            assert!((got - want).abs() < 1e-12, "{got} vs {want}");
        }
    }

    #[test]
    fn constant_splits() {
        // 1.6 = 0x3ff999999999999a - 2^-52 * 2/5 (the double rounds 8/5 up by 0.4 ulp).
        assert_eq!(CONST2_LO, -(2f64.powi(-52) * 0.4));
        assert_eq!(CONST2_LO_F32 as f64, -(2f64.powi(-23) * 0.2) as f32 as f64);
        assert!((CONST1_HI_F32 as f64 + CONST1_LO_F32 as f64 - 0.180625).abs() < 1e-16);
        assert!(CONST1_LO.abs() < 2f64.powi(-56) && CONST1_LO != 0.0);
    }

    #[test]
    fn known_quantiles() {
        // Reference values: ALGORITHMS.md (checked with 40-digit arithmetic).
        let refs = [
            (0.975, 1.9599639845400542),
            (1e-10, -6.3613409024040562),
            (2f64.powi(-32), -6.2302601379890432),
            (2f64.powi(-33), -6.3379577545537893),
        ];
        for (p, x) in refs {
            let d = normal_quantile::<Double>(p);
            assert!(((d - x) / x).abs() < 4e-16, "f64 {p}: {d} vs {x}");
            let s = normal_quantile::<S>(p as f32) as f64;
            assert!(((s - x) / x).abs() < 4e-7, "f32 {p}: {s} vs {x}");
        }
        assert_eq!(normal_quantile::<Double>(0.5), 0.0);
        assert_eq!(normal_quantile::<S>(0.0), f32::NEG_INFINITY);
        assert_eq!(normal_quantile::<S>(1.0), f32::INFINITY);
        assert!(normal_quantile::<Double>(1.5).is_nan());
        assert!(normal_quantile::<Double>(-0.0).is_infinite());
        assert!(normal_quantile::<Double>(f64::NAN).is_nan());
        assert!(S::normal_quantile_lower(f32::NAN).is_nan());
        // The far tails: the smallest subnormals still give finite values.
        assert!(normal_quantile::<S>(f32::from_bits(1)).is_finite());
        assert!(normal_quantile::<Double>(f64::from_bits(1)).is_finite());
    }

    #[test]
    fn reflection_ends_and_antisymmetry() {
        let r0 = reflect_u32(0);
        assert_eq!((r0.p, r0.q, r0.upper), (2f32.powi(-33), -0.5, false));
        assert_eq!(reflect_u32(u32::MAX), Reflected { upper: true, ..r0 });
        let mid = reflect_u32(0x7fff_ffff);
        assert_eq!((mid.p, mid.q), (0.5, -(2f32.powi(-33))));
        let top = Double::normal_quantile_centered(-0.5 + 2f64.powi(-54), 2f64.powi(-54));
        let k = reflect_u53((1 << 53) - 1);
        assert_eq!((k.p, k.q, k.upper), (2f64.powi(-54), -0.5 + 2f64.powi(-54), true));
        assert_eq!(k.normal::<Double>(), -top);
        for z in [0u32, 1, 127, 128, 0x1234_5678, 0x7fff_ffff, 0x4000_0000, 0x0133_7000] {
            let a = inversion::<S, _>(&mut Words(&[z], 0));
            let b = inversion::<S, _>(&mut Words(&[!z], 0));
            assert_eq!(a, -b, "{z:#x}");
            assert!(a < 0.0 && a.is_finite());
            let f = inversion::<Single<Fast>, _>(&mut Words(&[z], 0));
            assert_eq!(f, -inversion::<Single<Fast>, _>(&mut Words(&[!z], 0)));
            // The mirror of k = z ^ (y << 21) in 53 bits, k ^ (2^53 - 1), comes from the words
            // (z ^ (2^21 - 1), !y): bits 21..31 are flipped once, by y.
            let y = z.rotate_left(7);
            let d = inversion::<Double, _>(&mut Words(&[z, y], 0));
            let dm = inversion::<Double, _>(&mut Words(&[z ^ 0x001f_ffff, !y], 0));
            assert_eq!(d, -dm, "{z:#x}");
        }
        let lowest = inversion::<S, _>(&mut Words(&[0], 0)) as f64;
        assert!((lowest + 6.3379577545537893).abs() < 2.0 * 2f64.powi(-21), "{lowest}");
    }

    #[test]
    fn naive_ends() {
        let n = |z: u32| inversion_naive::<S, _>(&mut Words(&[z], 0));
        assert_eq!(n(0), f32::NEG_INFINITY);
        assert_eq!(n(u32::MAX), f32::INFINITY);
        assert_eq!(n(u32::MAX - 127), f32::INFINITY);
        assert!(n(u32::MAX - 128).is_finite());
        assert!(n(1).is_finite());
        let d = |x: u32, y: u32| inversion_naive::<Double, _>(&mut Words(&[x, y], 0));
        assert_eq!(d(0, 0), f64::NEG_INFINITY);
        assert!(d(0x001f_ffff, u32::MAX).is_finite());
    }
}
