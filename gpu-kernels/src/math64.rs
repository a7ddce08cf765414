//! Portable double-precision math for [`crate::Exact`] mode (the `f64` precision,
//! [`crate::real::Double`]).
//!
//! The same design as the single-precision [`crate::math`]: built only from correctly rounded
//! IEEE operations (`+ - * /`, integer and bit operations, integer/float conversions) written out
//! in a fixed order, with no fused multiply-add, so the CPU build and the PTX build compute the
//! same bits. The polynomial coefficients are Taylor (or atanh-series) coefficients, exact
//! rationals rounded once to `f64` at compile time. The two irrational constants, `ln 2` and
//! `2π`, are computed at compile time in 128-bit fixed point from their series (`ln 2 =
//! Σ 1/(k 2^k)`; Machin's `π = 16 atan(1/5) - 4 atan(1/239)`) and split into a short high part
//! (so that its products are exact) and a low part rounded once; the unit tests check them
//! against the published values.
//!
//! Where `f64` alone would lose the last bit, the error terms are carried explicitly: `ln`
//! keeps `f - f²/2` apart from the small correction (the fdlibm arrangement), `exp` keeps the
//! exact part of its reduced argument apart from the rounded `k ln2_lo`, and `sincos` forms the
//! reduced angle as a double-double and squares it exactly (Dekker's product, built from
//! Veltkamp's splitting since there is no fma).
//!
//! Accuracy, measured against double-double references over dense sweeps
//! (`tests/tests/math_accuracy.rs`, about 4.5M inputs): every result is within 1 ulp of the exact
//! value (faithfully rounded). Measured maxima: `ln_f64` 0.86 ulp, `exp_f64` 0.67 ulp (0.78 of
//! a subnormal step for subnormal results), `sincos_turn_f64` 0.80 ulp.

// ---------------------------------------------------------------------------------------------
// Compile-time constants
// ---------------------------------------------------------------------------------------------

/// `2^n` for `-1022 <= n <= 1023` (exact).
#[inline(always)]
const fn pow2(n: i32) -> f64 {
    f64::from_bits(((n + 1023) as u64) << 52)
}

/// `ln 2 · 2^127` in fixed point, from `ln 2 = Σ_{k≥1} 1 / (k 2^k)`; each term is truncated, so
/// the value is low by at most 128 units of `2^-127` (relative error below `2^-119`).
const LN2_FIX: u128 = {
    let mut sum: u128 = 0;
    let mut k: u32 = 1;
    while k <= 127 {
        sum += (1u128 << (127 - k)) / k as u128;
        k += 1;
    }
    sum
};

/// `ln 2` with 32 significant bits (truncated), so that `k · LN2_HI` is exact for `|k| < 2^21`.
/// Equals `0x3fe6_2e42_fee0_0000`.
const LN2_HI: f64 = (LN2_FIX >> 95) as f64 * pow2(-32);
/// `ln 2 - LN2_HI`, rounded once to `f64` (1.9082149292705877e-10).
const LN2_LO: f64 = (LN2_FIX & ((1u128 << 95) - 1)) as f64 * pow2(-127);

/// `atan(1/n) · 2^125` in fixed point (alternating series, terms truncated; off by at most a
/// few units per term).
const fn atan_inv_fix(n: u32) -> i128 {
    let n2 = (n as i128) * (n as i128);
    let mut p: i128 = (1i128 << 125) / n as i128; // 2^125 / n^(2k+1)
    let mut sum: i128 = 0;
    let mut k: i128 = 0;
    while p > 0 {
        let t = p / (2 * k + 1);
        sum = if k % 2 == 0 { sum + t } else { sum - t };
        p /= n2;
        k += 1;
    }
    sum
}

/// `2π · 2^125` (in `[2^127, 2^128)`), from Machin's formula; error below `2^-112` relative.
const TAU_FIX: u128 = ((16 * atan_inv_fix(5) - 4 * atan_inv_fix(239)) as u128) << 1;

/// `2π` with 27 significant bits (truncated): its product with a 26-bit number is exact.
const TAU_HI: f64 = (TAU_FIX >> 101) as f64 * pow2(-24);
/// `2π - TAU_HI`, rounded once to `f64`.
const TAU_LO: f64 = (TAU_FIX & ((1u128 << 101) - 1)) as f64 * pow2(-125);

/// Veltkamp's splitting constant `2^27 + 1`: `x = hi + lo` with `hi` of at most 26 significant
/// bits and `lo` of at most 26 (exact under round-to-nearest, no fma needed).
const SPLIT: f64 = 134_217_729.0;

/// `1 / n!`, rounded once (`n!` is exact in `f64` for `n <= 22`).
const fn inv_factorial(n: u32) -> f64 {
    let mut f = 1.0f64;
    let mut i = 2;
    while i <= n {
        f *= i as f64;
        i += 1;
    }
    1.0 / f
}

// ---------------------------------------------------------------------------------------------
// ln
// ---------------------------------------------------------------------------------------------

// ln(1+f) = 2 atanh(s), s = f / (2 + f), = f - f²/2 + s (f²/2 + R(s²)),
// R(z) = Σ_{k=1..10} 2/(2k+1) z^k. |s| <= 0.1716 (f in (sqrt(1/2) - 1, sqrt(2) - 1]), z <= 0.02944,
// so the first omitted term, 2/23 s^23, is below 2^-60 relative to ln(1+f) ≈ 2s.
const L1: f64 = 2.0 / 3.0;
const L2: f64 = 2.0 / 5.0;
const L3: f64 = 2.0 / 7.0;
const L4: f64 = 2.0 / 9.0;
const L5: f64 = 2.0 / 11.0;
const L6: f64 = 2.0 / 13.0;
const L7: f64 = 2.0 / 15.0;
const L8: f64 = 2.0 / 17.0;
const L9: f64 = 2.0 / 19.0;
const L10: f64 = 2.0 / 21.0;

/// `sqrt(2)` rounded to `f64`, as bits: mantissas above it are folded into `(sqrt(1/2), 1)`.
const SQRT2_BITS: u64 = 0x3ff6_a09e_667f_3bcd;
const EXP_MASK_SHIFT: u32 = 52;
const MANT_MASK: u64 = (1 << 52) - 1;
const ONE_BITS: u64 = 0x3ff0_0000_0000_0000;

/// Natural logarithm, portable and bit-reproducible.
///
/// `x = 2^e (1 + f)` with `1 + f` in `(sqrt(1/2), sqrt(2)]`, `ln x = e ln 2 + ln(1 + f)`, with
/// `ln(1 + f) = f - f²/2 + s (f²/2 + R(s²))`, `s = f / (2 + f)` and `R` the atanh series
/// (degree 10 in `s²`; the dominant part `f - f²/2` is formed last so that the rounding errors of
/// `s` and `R` are scaled down by `|s| <= 0.17`). `e ln 2` uses a 32-bit high part of `ln 2`
/// (exact product) and a low part; for `|e| <= 1` the sum `e ln2_hi + f` is exact and formed
/// first, which avoids a second rounding at the scale of the result where they cancel.
///
/// `ln(±0) = -inf`, `ln(x < 0) = NaN`, `ln(inf) = inf`, `ln(NaN) = NaN`, `ln(1) = +0`; subnormal
/// inputs are scaled by `2^54` (exact). Measured error: below 1 ulp (faithful).
#[inline(always)]
pub fn ln_f64(x: f64) -> f64 {
    if !(x > 0.0) {
        return if x == 0.0 { f64::NEG_INFINITY } else { f64::NAN };
    }
    if x == f64::INFINITY {
        return x;
    }
    let mut bits = x.to_bits();
    let mut e: i32 = 0;
    if bits < (1 << EXP_MASK_SHIFT) {
        // Subnormal: scale by 2^54 (exact) into the normal range.
        bits = (x * 18_014_398_509_481_984.0).to_bits();
        e = -54;
    }
    e += ((bits >> EXP_MASK_SHIFT) as i32) - 1023;
    // Mantissa m in [1, 2); fold to (sqrt(1/2), sqrt(2)] so that |f| = |m - 1| <= 0.4143.
    let mut mbits = (bits & MANT_MASK) | ONE_BITS;
    if mbits > SQRT2_BITS {
        mbits -= 1 << EXP_MASK_SHIFT;
        e += 1;
    }
    let f = f64::from_bits(mbits) - 1.0; // exact (Sterbenz)
    let hfsq = 0.5 * (f * f);
    let s = f / (2.0 + f);
    let z = s * s;
    let r = z * (L1 + z * (L2 + z * (L3 + z * (L4 + z * (L5 + z * (L6 + z * (L7 + z * (L8 + z * (L9 + z * L10)))))))));
    let ef = e as f64;
    let small = hfsq - (s * (hfsq + r) + ef * LN2_LO);
    // ln x = e ln2_hi + f - small, with e ln2_hi exact. For |e| <= 1, e ln2_hi + f is exact (at
    // most 53 significant bits) and is formed first: near x = sqrt(1/2), ln x = -ln 2 + 0.3466
    // cancels, and rounding f - small first would cost up to half an ulp of the result. For
    // |e| >= 2 the result is at least 1.04 and f - small is formed first (its rounding is at
    // most 1/8 ulp of the result).
    if (-1..=1).contains(&e) { (ef * LN2_HI + f) - small } else { ef * LN2_HI - (small - f) }
}

// ---------------------------------------------------------------------------------------------
// exp
// ---------------------------------------------------------------------------------------------

const LOG2E: f64 = core::f64::consts::LOG2_E;
/// The first input whose exponential overflows (`0x4086_2e42_fefa_39f0`); the one below,
/// 709.782712893384, has `exp = 1.7976931348622732e308`, finite.
const EXP_OVERFLOW: f64 = f64::from_bits(0x4086_2e42_fefa_39f0);
/// Below this, `exp(x) < 2^-1075 · e^-0.006`, whose correct rounding is +0. Between it and
/// `ln 2^-1075 = -745.1332...` the computation itself gives +0.
const EXP_UNDERFLOW: f64 = -745.14;

// e^r = 1 + r + r² Q(r), Q(r) = Σ_{n=2..14} r^(n-2) / n!. |r| <= ln(2)/2 + 2^-40, so the first
// omitted term, r^15/15!, is below 2^-62.
const E2: f64 = inv_factorial(2);
const E3: f64 = inv_factorial(3);
const E4: f64 = inv_factorial(4);
const E5: f64 = inv_factorial(5);
const E6: f64 = inv_factorial(6);
const E7: f64 = inv_factorial(7);
const E8: f64 = inv_factorial(8);
const E9: f64 = inv_factorial(9);
const E10: f64 = inv_factorial(10);
const E11: f64 = inv_factorial(11);
const E12: f64 = inv_factorial(12);
const E13: f64 = inv_factorial(13);
const E14: f64 = inv_factorial(14);

/// `2^k` for `-1022 <= k <= 1023`.
#[inline(always)]
fn pow2i(k: i32) -> f64 {
    f64::from_bits(((k + 1023) as u64) << 52)
}

/// Exponential function, portable and bit-reproducible.
///
/// Cody-Waite reduction `x = k ln 2 + r`, `|r| <= ln(2)/2`: `x - k ln2_hi` is exact and
/// `k ln2_lo` is kept apart from it until the last additions; `e^r = 1 + (r + r² Q(r))` with `Q`
/// the Taylor series to `r^14/14!`; `1 + (x - k ln2_hi)` is formed exactly as a sum of two
/// doubles and the small terms are added to its error, so that only the last addition rounds at
/// the scale of the result; then an exact scaling by `2^k` (in two steps where the result is
/// subnormal, so that it is rounded once, or where `k = 1024`).
///
/// `exp(NaN) = NaN`; `exp(x) = inf` for `x` above 709.782712893384 (`0x4086_2e42_fefa_39ef`, the
/// last input with a finite result, as with correct rounding); `+0` below `-745.14` and wherever
/// the computed result is below half the smallest subnormal (`ln 2^-1075 = -745.1332`). Measured error: below 1 ulp
/// for normal results, below one subnormal step (`2^-1074`) for subnormal ones.
#[inline(always)]
pub fn exp_f64(x: f64) -> f64 {
    if !(x < EXP_OVERFLOW) {
        return if x.is_nan() { x } else { f64::INFINITY };
    }
    if x < EXP_UNDERFLOW {
        return 0.0;
    }
    let t = x * LOG2E;
    // Round half away from zero; `as i32` truncates on both builds (|t| < 1076).
    let k = (if t >= 0.0 { t + 0.5 } else { t - 0.5 }) as i32;
    let kf = k as f64;
    let hi = x - kf * LN2_HI; // exact: k ln2_hi is exact and close to x
    let lo = kf * LN2_LO;
    let r = hi - lo;
    let q = E2
        + r * (E3
            + r * (E4
                + r * (E5
                    + r * (E6
                        + r * (E7 + r * (E8 + r * (E9 + r * (E10 + r * (E11 + r * (E12 + r * (E13 + r * E14)))))))))));
    // 1 + hi = s1 + e1 exactly (Fast2Sum, |hi| < 1), so only the last addition rounds at the
    // scale of the result.
    let s1 = 1.0 + hi;
    let e1 = (1.0 - s1) + hi;
    let p = s1 + (e1 + ((r * r) * q - lo));
    if (-1022..=1023).contains(&k) {
        p * pow2i(k)
    } else {
        // k in [-1075, -1023] (subnormal result: p 2^k1 is normal and exact, the second product
        // rounds once) or k = 1024.
        let k1 = k / 2;
        p * pow2i(k1) * pow2i(k - k1)
    }
}

// ---------------------------------------------------------------------------------------------
// sincos
// ---------------------------------------------------------------------------------------------

// sin a = a + a z S(z), S(z) = Σ_{k=1..8} (-1)^k z^(k-1) / (2k+1)!, and
// cos a = 1 - z/2 + z² C(z), C(z) = Σ_{k=2..9} (-1)^k z^(k-2) / (2k)!, z = a², |a| <= π/4.
// First omitted terms: (π/4)^19/19! < 2^-62 relative to sin, (π/4)^20/20! < 2^-68.
const S3: f64 = -inv_factorial(3);
const S5: f64 = inv_factorial(5);
const S7: f64 = -inv_factorial(7);
const S9: f64 = inv_factorial(9);
const S11: f64 = -inv_factorial(11);
const S13: f64 = inv_factorial(13);
const S15: f64 = -inv_factorial(15);
const S17: f64 = inv_factorial(17);
const C4: f64 = inv_factorial(4);
const C6: f64 = -inv_factorial(6);
const C8: f64 = inv_factorial(8);
const C10: f64 = -inv_factorial(10);
const C12: f64 = inv_factorial(12);
const C14: f64 = -inv_factorial(14);
const C16: f64 = inv_factorial(16);
const C18: f64 = -inv_factorial(18);

/// `2^-64`.
const TWO_POW_M64: f64 = 1.0 / 18_446_744_073_709_551_616.0;
const SIGN: u64 = 0x8000_0000_0000_0000;

/// `(sin 2πt, cos 2πt)` for the angle `t = z / 2^64` of a turn, portable and bit-reproducible.
///
/// The reduction is done on the integer, as [`crate::math::sincos_turn`] does: the nearest
/// quarter turn `q` is taken off `z` exactly, leaving `rem` in `[-2^61, 2^61)`, i.e. at most 1/8
/// of a turn. `rem` (62 bits) does not fit in an `f64`: it is converted (rounded to 53 bits) and
/// the integer residual (at most 2^7) kept; the angle `a = 2π rem 2^-64` is then formed as a
/// double-double `ah + al` (relative error about `2^-78`) from a 27-bit high part of `2π` times
/// a 26-bit part of `rem` (exact) plus the smaller cross terms. `sin` and `cos` of `ah + al` are
/// Taylor polynomials with the `al` terms added (`al cos ah ≈ al (1 - z/2)`, `-al sin ah ≈ -ah
/// al`); for the cosine `ah²` is formed exactly (Dekker's product) and `1 - ah²/2` is kept as an
/// exact sum until the last addition. The quadrant is applied with selects and sign flips.
///
/// Exact at the quarter turns (`sincos_turn_f64(1 << 62) = (1, -0)`); `sin` keeps its relative
/// accuracy near the zeros (no `π` rounding to amplify). Measured error: below 1 ulp.
#[inline(always)]
pub fn sincos_turn_f64(z: u64) -> (f64, f64) {
    let q = z.wrapping_add(1 << 61) >> 62; // nearest quarter turn, 0..=3
    let rem = z.wrapping_sub(q << 62) as i64; // in [-2^61, 2^61)
    // rem = x + rl, x = rem rounded to 53 bits, |rl| <= 2^7 (exact integers).
    let xr = rem as f64;
    let rl = rem.wrapping_sub(xr as i64) as f64;
    let x = xr * TWO_POW_M64; // exact scaling
    // Veltkamp: x = xh + xm, xh of at most 26 significant bits.
    let cx = SPLIT * x;
    let xh = cx - (cx - x);
    let xm = x - xh;
    let xt = xm + rl * TWO_POW_M64; // exact: at most 35 significant bits
    // a = 2π rem 2^-64 = TAU_HI xh (exact) + (TAU_HI xt + TAU_LO x) (+ terms below 2^-80 of a).
    let a1 = TAU_HI * xh;
    let a2 = TAU_HI * xt + TAU_LO * x;
    let ah = a1 + a2;
    let al = a2 - (ah - a1); // exact (Fast2Sum, |a1| >= |a2|)
    // ah² = zh + zl exactly (Dekker's product).
    let ca = SPLIT * ah;
    let ahh = ca - (ca - ah);
    let ahl = ah - ahh;
    let zh = ah * ah;
    let zl = ((ahh * ahh - zh) + 2.0 * (ahh * ahl)) + ahl * ahl;
    // sin(ah + al) = ah + (al (1 - z/2) + ah z S(z)).
    let ps = S3 + zh * (S5 + zh * (S7 + zh * (S9 + zh * (S11 + zh * (S13 + zh * (S15 + zh * S17))))));
    let s = ah + ((al - (0.5 * zh) * al) + ah * (zh * ps));
    // cos(ah + al) = (1 - zh/2) + (z² C(z) - (zl/2 + ah al)); w + e1 = 1 - zh/2 exactly.
    let hz = 0.5 * zh;
    let w = 1.0 - hz;
    let e1 = (1.0 - w) - hz;
    let pc = C4 + zh * (C6 + zh * (C8 + zh * (C10 + zh * (C12 + zh * (C14 + zh * (C16 + zh * C18))))));
    let c = w + (e1 + ((zh * zh) * pc - (0.5 * zl + ah * al)));
    let (sin_abs, cos_abs) = if q & 1 == 0 { (s, c) } else { (c, s) };
    let sin_sign = if q & 2 == 0 { 0 } else { SIGN };
    let cos_sign = if (q + 1) & 2 == 0 { 0 } else { SIGN };
    (f64::from_bits(sin_abs.to_bits() ^ sin_sign), f64::from_bits(cos_abs.to_bits() ^ cos_sign))
}

#[cfg(test)]
mod tests {
    //! Special values, the compile-time constants, spot values; the dense accuracy sweeps
    //! (against double-double references) live in `tests/tests/math_accuracy.rs`.
    use super::*;

    /// `|a - (hi + lo)|` in ulps of `hi` (hi + lo a double-double reference).
    fn ulps(a: f64, hi: f64, lo: f64) -> f64 {
        let ulp = f64::from_bits(hi.abs().to_bits() + 1) - hi.abs();
        ((a - hi) - lo).abs() / ulp
    }

    /// `|a - b|` in ulps of `b`, for a `std` reference (itself within about 1 ulp).
    fn ulps_std(a: f64, b: f64) -> f64 {
        ulps(a, b, 0.0)
    }

    #[test]
    fn math64_constants() {
        // Published values: fdlibm's ln2_hi / ln2_lo, and 2π = 6.283185307179586 +
        // 2.4492935982947064e-16 (twice π's double-double split).
        assert_eq!(LN2_HI.to_bits(), 0x3fe6_2e42_fee0_0000);
        assert_eq!(LN2_LO, 1.908_214_929_270_587_7e-10);
        assert_eq!(LN2_HI + LN2_LO, core::f64::consts::LN_2);
        assert_eq!(TAU_HI + TAU_LO, core::f64::consts::TAU);
        // 2π - TAU_HI - TAU_LO's f64 part: TAU = 6.283185307179586 + 2.4492935982947064e-16.
        // (TAU_LO's last bit is 2^-76, so the tail is known to that precision.)
        let tail = (TAU_HI - core::f64::consts::TAU) + TAU_LO; // exact
        assert!((tail - 2.449_293_598_294_706_4e-16).abs() <= 2f64.powi(-76), "{tail:e}");
        assert_eq!((TAU_HI.to_bits() & ((1 << 26) - 1)), 0, "TAU_HI has 27 significant bits");
        assert!(core::f64::consts::TAU - TAU_HI < 2f64.powi(-24) && core::f64::consts::TAU - TAU_HI > 0.0);
        assert_eq!(E14, 1.0 / 87_178_291_200.0);
        assert_eq!(C18, -1.0 / 6_402_373_705_728_000.0);
    }

    #[test]
    fn ln64_special_values() {
        assert_eq!(ln_f64(1.0).to_bits(), 0, "ln(1) must be +0");
        assert_eq!(ln_f64(0.0), f64::NEG_INFINITY);
        assert_eq!(ln_f64(-0.0), f64::NEG_INFINITY);
        assert!(ln_f64(-1.0).is_nan());
        assert!(ln_f64(-f64::MIN_POSITIVE).is_nan());
        assert!(ln_f64(f64::NEG_INFINITY).is_nan());
        assert!(ln_f64(f64::NAN).is_nan());
        assert_eq!(ln_f64(f64::INFINITY), f64::INFINITY);
        // ln 2 and ln 10 (double-double values), ln of the smallest subnormal, -1074 ln 2.
        assert_eq!(ln_f64(2.0), core::f64::consts::LN_2);
        assert!(ulps(ln_f64(10.0), core::f64::consts::LN_10, -2.170_756_223_382_249_4e-16) < 0.6);
        // -1074 ln 2 = -744.4400719213812 - 0.389 ulp.
        assert!(ulps(ln_f64(f64::from_bits(1)), -744.440_071_921_381_2, -0.389 * 2f64.powi(-43)) < 0.6);
        assert!(ulps(ln_f64(f64::MAX), 709.782_712_893_384, 0.0) < 1.0);
        // E is e - 1.4456468917292502e-16, so ln E = 1 - 1.4456468917292502e-16 / e.
        let lo = -1.445_646_891_729_250_2e-16 / core::f64::consts::E;
        assert!(ulps(ln_f64(core::f64::consts::E), 1.0, lo) < 0.6);
        for x in [1e-300, 1e-10, 0.3, 0.7, 0.999_999_9, 1.000_000_1, 1.5, 3.0, 1e10, 1e300, 5e-320] {
            let e = ulps_std(ln_f64(x), x.ln());
            assert!(e <= 1.5, "ln({x:e}): {e} ulp from std");
        }
        // Near 1: ln(1 + d) = d - d²/2 to full relative accuracy.
        let d = 2f64.powi(-40);
        assert!(ulps(ln_f64(1.0 + d), d, -d * d / 2.0) < 0.6);
        assert!(ulps(ln_f64(1.0 - d), -d, -d * d / 2.0) < 0.6);
    }

    #[test]
    fn exp64_special_values() {
        assert_eq!(exp_f64(0.0), 1.0);
        assert_eq!(exp_f64(-0.0), 1.0);
        assert!(exp_f64(f64::NAN).is_nan());
        assert_eq!(exp_f64(f64::INFINITY), f64::INFINITY);
        assert_eq!(exp_f64(f64::NEG_INFINITY).to_bits(), 0);
        assert_eq!(exp_f64(f64::MAX), f64::INFINITY);
        assert_eq!(exp_f64(f64::MIN).to_bits(), 0);
        assert_eq!(exp_f64(f64::from_bits(0x4086_2e42_fefa_39f0)), f64::INFINITY);
        let top = exp_f64(f64::from_bits(0x4086_2e42_fefa_39ef));
        assert!(top.is_finite() && ulps(top, 1.797_693_134_862_273_2e308, 0.0) < 1.0, "{top:e}");
        // e (double-double) and e^-1.
        assert!(ulps(exp_f64(1.0), core::f64::consts::E, 1.445_646_891_729_250_2e-16) < 1.0);
        assert!(ulps_std(exp_f64(-1.0), (-1f64).exp()) <= 1.0);
        // Subnormal results: the smallest subnormal 2^-1074 at x = -744.44 and zero below
        // ln 2^-1075 = -745.1332.
        assert_eq!(exp_f64(-744.440_071_921_381_3).to_bits(), 1);
        assert_eq!(exp_f64(-745.0).to_bits(), 1); // 2^-1074 · 0.64 rounds up
        assert_eq!(exp_f64(-745.14).to_bits(), 0);
        let y = exp_f64(-740.0);
        assert!(y > 0.0 && y < f64::MIN_POSITIVE);
        assert!((y - (-740f64).exp()).abs() <= f64::from_bits(1));
        for x in [-700.0, -100.0, -1e-5, 1e-300, 1e-10, 0.34, 0.35, 10.0, 300.0, 709.0] {
            let e = ulps_std(exp_f64(x), x.exp());
            assert!(e <= 1.5, "exp({x:e}): {e} ulp from std");
        }
        // Tiny arguments: 1 + x rounds to 1 (or the neighbour below for negative x).
        assert_eq!(exp_f64(1e-20), 1.0);
        assert_eq!(exp_f64(-1e-20), 1.0);
        assert_eq!(exp_f64(-2f64.powi(-53)), 1.0 - 2f64.powi(-53));
    }

    #[test]
    fn sincos64_quadrants_and_spot_values() {
        assert_eq!(sincos_turn_f64(0), (0.0, 1.0));
        assert_eq!(sincos_turn_f64(1 << 62), (1.0, -0.0));
        assert_eq!(sincos_turn_f64(1 << 63), (-0.0, -1.0));
        assert_eq!(sincos_turn_f64(3 << 62), (-1.0, 0.0));
        // 45 degrees: sqrt(1/2) = 0.7071067811865476 - 4.833646656726457e-17.
        let h = (core::f64::consts::FRAC_1_SQRT_2, -4.833_646_656_726_457e-17);
        for z in [1u64 << 61, 3 << 61, 5 << 61, 7 << 61] {
            let (s, c) = sincos_turn_f64(z);
            assert!(ulps(s.abs(), h.0, h.1) < 0.6 && ulps(c.abs(), h.0, h.1) < 0.6, "{s} {c}");
        }
        // 30 degrees is not a word; one turn / 12 rounded: sin = 1/2 + 2π δ cos(π/6).
        let z = 0x1555_5555_5555_5555u64; // 2^64/12 - 1/3
        let (s, c) = sincos_turn_f64(z);
        let d = -1.0 / 3.0 * core::f64::consts::TAU * TWO_POW_M64;
        assert!(ulps(s, 0.5, d * 0.75f64.sqrt()) < 0.6, "{s}");
        assert!(ulps(c, 0.75f64.sqrt(), 0.0) < 1.0, "{c}");
        // Tiny angles: sin = 2π z 2^-64 to full relative accuracy, cos = 1.
        for z in [1u64, 2, 1 << 10, 1 << 20] {
            let (s, c) = sincos_turn_f64(z);
            let a = core::f64::consts::TAU * (z as f64) * TWO_POW_M64; // exact (powers of two)
            assert!(ulps(s, a, 2.449_293_598_294_706_4e-16 * (z as f64) * TWO_POW_M64) < 0.6, "{z}: {s:e}");
            assert_eq!(c, 1.0);
            let (s, c) = sincos_turn_f64(z.wrapping_neg());
            assert!(ulps(-s, a, 2.449_293_598_294_706_4e-16 * (z as f64) * TWO_POW_M64) < 0.6);
            assert_eq!(c, 1.0);
        }
        // Against std on a few angles (std's own error is below 1 ulp; the angle 2π z 2^-64
        // rounded in f64 adds about 1 ulp).
        for z in [0x1234_5678_9abc_def0u64, 0x9e37_79b9_7f4a_7c15, u64::MAX, 0x7fff_ffff_ffff_ffff] {
            let a = core::f64::consts::TAU * (z as f64 * TWO_POW_M64);
            let (s, c) = sincos_turn_f64(z);
            assert!((s - a.sin()).abs() < 4e-16 && (c - a.cos()).abs() < 4e-16, "{z:#x}");
        }
    }
}
