//! Integer to floating-point conversions with documented intervals.

/// `2^-32`.
pub const TWO_POW_M32: f32 = 1.0 / 4_294_967_296.0;
/// `2^-33`.
pub const TWO_POW_M33: f32 = 1.0 / 8_589_934_592.0;

/// A 32-bit word to a uniform `f32` in `(0, 1]`: `round(z) * 2^-32 + 2^-33`.
///
/// The same rule as cuRAND's `curand_uniform`, so a logarithm never sees zero. The smallest
/// value is `2^-33`; the top 128 words round to exactly `1.0`. Written as a separate multiply
/// and add (no fma), so both builds round identically.
#[inline(always)]
pub fn u32_to_unit_open_closed(z: u32) -> f32 {
    (z as f32) * TWO_POW_M32 + TWO_POW_M33
}

/// `2^-53`.
pub const TWO_POW_M53: f64 = 1.0 / 9_007_199_254_740_992.0;

/// Two consecutive words of a stream to a uniform `f64` with 53 random bits:
/// `(x ^ (y << 21)) * 2^-53 + 2^-54`, cuRAND's `curand_uniform_double` rule (its
/// `_curand_uniform_double_hq`), so warpmc's doubles of a cuRAND-compatible stream are cuRAND's.
///
/// The 53-bit integer `x ^ (y << 21)` (low 32 bits from `x`, top 21 from `y`, bits 21..31 the
/// XOR of both) is uniform when the words are. The product is exact and the one addition is
/// correctly rounded on both builds: values below 1/2 are `(2k + 1) 2^-54`, never 0; above, the
/// addition's tie rounds to even, and the largest integer gives exactly `1.0`. So the interval
/// is `(0, 1]`, as for [`u32_to_unit_open_closed`], with 2^53 equally likely integers behind it
/// (not the 2^32 of `z * 2^-32`, a known pitfall of converting one word to a double).
#[inline(always)]
pub fn u32_pair_to_unit_f64(x: u32, y: u32) -> f64 {
    let z = (x as u64) ^ ((y as u64) << 21);
    (z as f64) * TWO_POW_M53 + TWO_POW_M53 / 2.0
}

/// A 32-bit word read as a signed fraction of a turn, in `[-1/2, 1/2)`: `round(z as i32) * 2^-32`.
#[inline(always)]
pub fn u32_to_signed_turn(z: u32) -> f32 {
    (z as i32) as f32 * TWO_POW_M32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_interval_ends() {
        assert_eq!(u32_to_unit_open_closed(0), TWO_POW_M33);
        assert_eq!(u32_to_unit_open_closed(u32::MAX), 1.0);
        assert!(u32_to_unit_open_closed(u32::MAX - 200) < 1.0);
        assert_eq!(u32_to_signed_turn(0x8000_0000), -0.5);
        assert!(u32_to_signed_turn(0x7fff_ffff) <= 0.5);
        assert_eq!(u32_pair_to_unit_f64(0, 0), TWO_POW_M53 / 2.0);
        // The largest integer, 2^53 - 1: y's 32 bits on top, x's low 21 bits, x's bits 21..31
        // clear (they XOR with y's low bits).
        assert_eq!(u32_pair_to_unit_f64(0x001f_ffff, u32::MAX), 1.0);
        assert!(u32_pair_to_unit_f64(u32::MAX, u32::MAX) < 1.0);
        // 53 bits: the smallest step between values is 2^-53, from either word.
        assert_eq!(u32_pair_to_unit_f64(1, 0) - u32_pair_to_unit_f64(0, 0), TWO_POW_M53);
        // 2^52 * 2^-53 + 2^-54 = 1/2 + 2^-54: a tie, to even.
        assert_eq!(u32_pair_to_unit_f64(0, 1 << 31), 0.5);
        assert_eq!(u32_pair_to_unit_f64(0, 1), (1u64 << 21) as f64 * TWO_POW_M53 + TWO_POW_M53 / 2.0);
    }
}
