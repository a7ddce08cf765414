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
    }
}
