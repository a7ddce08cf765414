//! Portable single-precision math for [`crate::Exact`] mode.
//!
//! Built only from correctly rounded IEEE operations (`+ - * /`, integer and bit operations)
//! written out in a fixed order, with no fused multiply-add, so the CPU build and the PTX build
//! compute the same bits (rustc emits `mul.rn`/`add.rn` on the GPU, which ptxas never contracts).
//! The coefficients are Taylor coefficients (exact rationals, rounded once to `f32` at compile
//! time), so nothing here depends on a fitted table.
//!
//! Accuracy, measured against `f64` references over dense sweeps (`tests/tests/math_accuracy.rs`;
//! the figures are in README.md): each function is within a couple of ulps.

use core::f64::consts::TAU as TAU64;

/// `ln 2` split so that `k * LN2_HI` is exact for `|k| < 2^9`: the high part keeps 15
/// significant bits (`0x3f31_7200`).
const LN2_HI: f32 = f32::from_bits(0x3f31_7200); // 0.693145751953125
/// `ln 2 - LN2_HI`, rounded to `f32`.
const LN2_LO: f32 = (core::f64::consts::LN_2 - 0.693_145_751_953_125_f64) as f32;

// ln(1+f) = f - s (f - R(s^2)), s = f / (2 + f), R(z) = 2/3 z + 2/5 z^2 + 2/7 z^3 + 2/9 z^4
// (the atanh series: ln(1+f) = 2 atanh(s)). |s| <= 0.1716, so the first omitted term,
// 2/11 s^11, is below 2e-9 relative.
const L1: f32 = (2.0f64 / 3.0) as f32;
const L2: f32 = (2.0f64 / 5.0) as f32;
const L3: f32 = (2.0f64 / 7.0) as f32;
const L4: f32 = (2.0f64 / 9.0) as f32;

/// Natural logarithm, portable and bit-reproducible.
///
/// `ln(0) = -inf`, `ln(x < 0) = NaN`, `ln(inf) = inf`, `ln(NaN) = NaN`; subnormal inputs are
/// handled exactly.
#[inline(always)]
pub fn ln_f32(x: f32) -> f32 {
    if !(x > 0.0) {
        return if x == 0.0 { f32::NEG_INFINITY } else { f32::NAN };
    }
    if x == f32::INFINITY {
        return x;
    }
    let mut bits = x.to_bits();
    let mut e: i32 = 0;
    if bits < 0x0080_0000 {
        // Subnormal: scale by 2^23 (exact) into the normal range.
        bits = (x * 8_388_608.0).to_bits();
        e = -23;
    }
    e += ((bits >> 23) as i32) - 127;
    // Mantissa m in [1, 2); fold to (sqrt(1/2), sqrt(2)] so that |f| = |m - 1| <= 0.4143.
    let mut mbits = (bits & 0x007f_ffff) | 0x3f80_0000;
    if mbits > 0x3fb5_04f3 {
        mbits -= 0x0080_0000;
        e += 1;
    }
    let f = f32::from_bits(mbits) - 1.0; // exact (Sterbenz)
    let s = f / (2.0 + f);
    let z = s * s;
    let r = z * (L1 + z * (L2 + z * (L3 + z * L4)));
    let ln1pf = f - s * (f - r);
    let ef = e as f32;
    ef * LN2_HI + (ef * LN2_LO + ln1pf)
}

const LOG2E: f32 = core::f32::consts::LOG2_E;
/// Largest `x` with a finite `exp(x)` in `f32` is just below this (`0x42b1_7218`).
const EXP_OVERFLOW: f32 = f32::from_bits(0x42b1_7218); // 88.72283935546875
/// Below `ln(2^-150)` the result rounds to zero.
const EXP_UNDERFLOW: f32 = -103.972_08;

const E2: f32 = 0.5;
const E3: f32 = (1.0f64 / 6.0) as f32;
const E4: f32 = (1.0f64 / 24.0) as f32;
const E5: f32 = (1.0f64 / 120.0) as f32;
const E6: f32 = (1.0f64 / 720.0) as f32;
const E7: f32 = (1.0f64 / 5040.0) as f32;

/// `2^k` for `-126 <= k <= 127`.
#[inline(always)]
fn pow2i(k: i32) -> f32 {
    f32::from_bits(((k + 127) as u32) << 23)
}

/// Exponential function, portable and bit-reproducible.
///
/// Cody-Waite reduction `x = k ln 2 + r`, `|r| <= ln(2)/2`, a degree-7 Taylor polynomial for
/// `e^r` (first omitted term below 6e-9 relative), then an exact scaling by `2^k` (in two
/// steps where the result is subnormal, so it is rounded once).
#[inline(always)]
pub fn exp_f32(x: f32) -> f32 {
    if !(x < EXP_OVERFLOW) {
        return if x.is_nan() { x } else { f32::INFINITY };
    }
    if x < EXP_UNDERFLOW {
        return 0.0;
    }
    let t = x * LOG2E;
    // Round half away from zero; `as i32` truncates on both builds (|t| < 151).
    let k = (if t >= 0.0 { t + 0.5 } else { t - 0.5 }) as i32;
    let kf = k as f32;
    let r = (x - kf * LN2_HI) - kf * LN2_LO;
    let p = 1.0 + r * (1.0 + r * (E2 + r * (E3 + r * (E4 + r * (E5 + r * (E6 + r * E7))))));
    if (-126..=127).contains(&k) {
        p * pow2i(k)
    } else {
        let k1 = k / 2;
        p * pow2i(k1) * pow2i(k - k1)
    }
}

// sin(2 pi r) = r (S1 + S3 r^2 + ... + S9 r^8), cos(2 pi r) = 1 + C2 r^2 + ... + C10 r^10,
// with S_k = (-1)^((k-1)/2) (2 pi)^k / k!, C_k = (-1)^(k/2) (2 pi)^k / k!, |r| <= 1/8 turn.
// First omitted terms: (pi/4)^11/11! < 2e-9 and (pi/4)^12/12! < 2e-10.
const S1_HI: f32 = TAU64 as f32;
const S1_LO: f32 = (TAU64 - (TAU64 as f32) as f64) as f32;
const fn taylor(k: i32) -> f32 {
    let mut num = 1.0f64;
    let mut den = 1.0f64;
    let mut i = 1;
    while i <= k {
        num *= TAU64;
        den *= i as f64;
        i += 1;
    }
    let sign = if (k / 2) % 2 == 0 { 1.0 } else { -1.0 };
    (sign * num / den) as f32
}
const S3: f32 = taylor(3);
const S5: f32 = taylor(5);
const S7: f32 = taylor(7);
const S9: f32 = taylor(9);
const C2: f32 = taylor(2);
const C4: f32 = taylor(4);
const C6: f32 = taylor(6);
const C8: f32 = taylor(8);
const C10: f32 = taylor(10);

const SIGN: u32 = 0x8000_0000;

/// `(sin 2πt, cos 2πt)` for the angle `t = z / 2^32` of a turn, portable and bit-reproducible.
///
/// The reduction is done on the integer: the nearest quarter turn `q` is taken off `z` exactly,
/// leaving `r` in `[-1/8, 1/8]` of a turn, so there is no `π` rounding error to amplify near the
/// zeros of sine and cosine. The quadrant is applied with selects and sign flips (no branches
/// that could diverge on a warp).
#[inline(always)]
pub fn sincos_turn(z: u32) -> (f32, f32) {
    let q = z.wrapping_add(1 << 29) >> 30; // nearest quarter turn, 0..=3
    let rem = z.wrapping_sub(q << 30) as i32; // in [-2^29, 2^29)
    let r = rem as f32 * (1.0 / 4_294_967_296.0); // turns, exact scaling of the rounded rem
    let r2 = r * r;
    let s = r * S1_HI + r * (S1_LO + r2 * (S3 + r2 * (S5 + r2 * (S7 + r2 * S9))));
    let c = 1.0 + r2 * (C2 + r2 * (C4 + r2 * (C6 + r2 * (C8 + r2 * C10))));
    let (sin_abs, cos_abs) = if q & 1 == 0 { (s, c) } else { (c, s) };
    let sin_sign = if q & 2 == 0 { 0 } else { SIGN };
    let cos_sign = if (q + 1) & 2 == 0 { 0 } else { SIGN };
    (f32::from_bits(sin_abs.to_bits() ^ sin_sign), f32::from_bits(cos_abs.to_bits() ^ cos_sign))
}

#[cfg(test)]
mod tests {
    //! Spot values; the dense accuracy sweeps live in `tests/tests/math_accuracy.rs`.
    use super::*;

    fn ulps(a: f32, b: f64) -> f64 {
        let b32 = b as f32;
        let ulp = (f32::from_bits(b32.abs().to_bits() + 1) - b32.abs()) as f64;
        (a as f64 - b).abs() / ulp
    }

    #[test]
    fn ln_special_values() {
        assert_eq!(ln_f32(1.0), 0.0);
        assert_eq!(ln_f32(0.0), f32::NEG_INFINITY);
        assert!(ln_f32(-1.0).is_nan());
        assert!(ln_f32(f32::NAN).is_nan());
        assert_eq!(ln_f32(f32::INFINITY), f32::INFINITY);
        assert!(ulps(ln_f32(f32::from_bits(1)), -103.278_929_903_431_85) < 1.0);
        assert!(ulps(ln_f32(2.0), core::f64::consts::LN_2) < 1.0);
        assert!(ulps(ln_f32(1e-10), (1e-10f32 as f64).ln()) < 2.0);
    }

    #[test]
    fn exp_special_values() {
        assert_eq!(exp_f32(0.0), 1.0);
        assert_eq!(exp_f32(f32::INFINITY), f32::INFINITY);
        assert_eq!(exp_f32(f32::NEG_INFINITY), 0.0);
        assert!(exp_f32(f32::NAN).is_nan());
        assert_eq!(exp_f32(f32::from_bits(0x42b1_7218)), f32::INFINITY);
        assert!(exp_f32(f32::from_bits(0x42b1_7217)).is_finite());
        assert!(ulps(exp_f32(1.0), core::f64::consts::E) < 1.0);
        // Subnormal result: exp(-100) = 3.72e-44.
        let y = exp_f32(-100.0);
        assert!(y > 0.0 && y < f32::MIN_POSITIVE);
        assert!((y as f64 / (-100f64).exp() - 1.0).abs() < 0.02);
    }

    #[test]
    fn sincos_quadrants() {
        assert_eq!(sincos_turn(0), (0.0, 1.0));
        assert_eq!(sincos_turn(1 << 30), (1.0, -0.0));
        assert_eq!(sincos_turn(1 << 31), (-0.0, -1.0));
        assert_eq!(sincos_turn(3 << 30), (-1.0, 0.0));
        let (s, c) = sincos_turn(1 << 29); // 45 degrees
        let h = core::f64::consts::FRAC_1_SQRT_2;
        assert!(ulps(s, h) <= 1.0 && ulps(c, h) <= 1.0, "{s} {c}");
    }
}
