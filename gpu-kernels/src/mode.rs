//! Arithmetic modes: which transcendental functions a transform or a path uses.
//!
//! - [`Exact`]: the project's own portable functions ([`crate::math`]); the CPU and the GPU
//!   produce the same bits, so prices agree bit for bit between backends.
//! - [`Fast`]: the GPU's approximate special-function instructions on the GPU and `std` on the
//!   CPU ([`crate::platform`]); the backends agree within a stated tolerance only.

use crate::{math, platform};

/// The functions a transform or path step needs, chosen at compile time.
pub trait MathMode: Copy + Default + 'static {
    /// `"exact"` or `"fast"`.
    const NAME: &'static str;
    /// Natural logarithm.
    fn ln(x: f32) -> f32;
    /// Exponential.
    fn exp(x: f32) -> f32;
    /// Square root.
    fn sqrt(x: f32) -> f32;
    /// `(sin 2πt, cos 2πt)` with `t = z / 2^32` turns.
    fn sincos_turn(z: u32) -> (f32, f32);
    /// Box-Muller's radius `sqrt(-2 ln u)` for `u` in `(0, 1]`.
    #[inline(always)]
    fn box_muller_radius(u: f32) -> f32 {
        Self::sqrt(-2.0 * Self::ln(u))
    }
}

/// Bit-reproducible arithmetic: see [`crate::math`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Exact;

/// Hardware-approximate arithmetic on the GPU, `std` on the CPU.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Fast;

impl MathMode for Exact {
    const NAME: &'static str = "exact";
    #[inline(always)]
    fn ln(x: f32) -> f32 {
        math::ln_f32(x)
    }
    #[inline(always)]
    fn exp(x: f32) -> f32 {
        math::exp_f32(x)
    }
    #[inline(always)]
    fn sqrt(x: f32) -> f32 {
        platform::sqrt_f32(x)
    }
    #[inline(always)]
    fn sincos_turn(z: u32) -> (f32, f32) {
        math::sincos_turn(z)
    }
}

impl MathMode for Fast {
    const NAME: &'static str = "fast";
    #[inline(always)]
    fn ln(x: f32) -> f32 {
        platform::fast_ln(x)
    }
    #[inline(always)]
    fn exp(x: f32) -> f32 {
        platform::fast_exp(x)
    }
    #[inline(always)]
    fn sqrt(x: f32) -> f32 {
        platform::fast_sqrt(x)
    }
    #[inline(always)]
    fn sincos_turn(z: u32) -> (f32, f32) {
        // The same angle as `math::sincos_turn`, taken in [-π, π) where the approximate
        // instructions are most accurate: 2π (z as i32) 2^-32, one multiply.
        const RADIANS_PER_UNIT: f32 = (core::f64::consts::TAU / 4_294_967_296.0) as f32;
        platform::fast_sincos((z as i32) as f32 * RADIANS_PER_UNIT)
    }
    #[inline(always)]
    fn box_muller_radius(u: f32) -> f32 {
        platform::fast_box_muller_radius(u)
    }
}
