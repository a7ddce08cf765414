//! Precision and arithmetic, chosen together at compile time: what a transform (`dist` and the
//! modules it composes) is generic over, so that each is written once for `f32` and `f64`.
//!
//! - [`Real`]: the floating-point type (`f32`, `f64`) and the conversions a transform needs.
//! - [`Arith`]: a precision with a mode's functions (`ln`, `exp`, `sqrt`) and the rules that turn
//!   a stream's words into uniforms of that precision. [`Single<M>`] is `f32` in mode `M`
//!   ([`crate::Exact`]: the project's portable functions, the same bits on both builds;
//!   [`crate::Fast`]: the GPU's approximate instructions); [`Double`] is `f64` with the portable
//!   functions of [`crate::math64`]. There is no fast `f64` mode: the GPU has no approximate
//!   `f64` logarithm or exponential, so `--mode fast --precision f64` is exact mode.
//!
//! Draw rules (the number of words is part of each transform's definition):
//! - [`Arith::uniform`]: in `(0, 1]`, never 0. `f32`: one word, `z 2^-32 + 2^-33`
//!   ([`u32_to_unit_open_closed`]); `f64`: two words, 53 bits ([`u32_pair_to_unit_f64`]).
//! - [`Arith::signed_uniform`]: in `(-1, 1)`, symmetric about 0 and never 0. `f32`: one word,
//!   `(2 (z as i32) + 1) 2^-32`, rounded once (a 33-bit odd integer does not fit in 24 bits, so
//!   values near ±1 round to ±1: callers that must exclude ±1 test for it); `f64`: two words,
//!   `(2 k + 1) 2^-53` for a signed 53-bit `k`, exact.

use core::fmt::Debug;
use core::marker::PhantomData;
use core::ops::{Add, Div, Mul, Neg, Sub};

use crate::convert::{TWO_POW_M32, u32_pair_to_unit_f64, u32_to_unit_open_closed};
use crate::rng::Uniform32;
use crate::{MathMode, math64, platform};

/// A value a sampler produces: `u32`, `f32` or `f64`.
pub trait Value: Copy + Default + Send + Sync + 'static {
    /// 32-bit words of its bits (1 or 2).
    const WORDS: usize;
    /// Its bits as words, low word first (the second is 0 for one-word values).
    fn words(self) -> [u32; 2];
}

impl Value for u32 {
    const WORDS: usize = 1;
    #[inline(always)]
    fn words(self) -> [u32; 2] {
        [self, 0]
    }
}

impl Value for f32 {
    const WORDS: usize = 1;
    #[inline(always)]
    fn words(self) -> [u32; 2] {
        [self.to_bits(), 0]
    }
}

impl Value for f64 {
    const WORDS: usize = 2;
    #[inline(always)]
    fn words(self) -> [u32; 2] {
        let b = self.to_bits();
        [b as u32, (b >> 32) as u32]
    }
}

/// A floating-point type a transform computes in.
pub trait Real:
    Copy
    + Debug
    + Default
    + PartialOrd
    + Send
    + Sync
    + 'static
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + Value
{
    const ZERO: Self;
    const ONE: Self;
    /// `"f32"` or `"f64"`.
    const NAME: &'static str;
    /// Bits of the significand, with the implicit one (24 or 53).
    const MANTISSA_BITS: u32;
    /// `x` rounded to this type (for constants: folded at compile time after inlining).
    fn from_f64(x: f64) -> Self;
    fn to_f64(self) -> f64;
    /// Exact for `|i| < 2^24` in `f32`, always in `f64`.
    fn from_i32(i: i32) -> Self;
    /// Rounded once.
    fn from_u32(u: u32) -> Self;
    /// Rounded once.
    fn from_u64(u: u64) -> Self;
    /// Truncation toward zero of a value in `[0, 2^32)`.
    fn to_u32(self) -> u32;
    fn is_nan(self) -> bool;
    /// `|x|`, by clearing the sign bit.
    fn abs(self) -> Self;
}

impl Real for f32 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    const NAME: &'static str = "f32";
    const MANTISSA_BITS: u32 = 24;
    #[inline(always)]
    fn from_f64(x: f64) -> Self {
        x as f32
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self as f64
    }
    #[inline(always)]
    fn from_i32(i: i32) -> Self {
        i as f32
    }
    #[inline(always)]
    fn from_u32(u: u32) -> Self {
        u as f32
    }
    #[inline(always)]
    fn from_u64(u: u64) -> Self {
        u as f32
    }
    #[inline(always)]
    fn to_u32(self) -> u32 {
        self as u32
    }
    #[inline(always)]
    fn is_nan(self) -> bool {
        f32::is_nan(self)
    }
    #[inline(always)]
    fn abs(self) -> Self {
        f32::from_bits(self.to_bits() & 0x7fff_ffff)
    }
}

impl Real for f64 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    const NAME: &'static str = "f64";
    const MANTISSA_BITS: u32 = 53;
    #[inline(always)]
    fn from_f64(x: f64) -> Self {
        x
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self
    }
    #[inline(always)]
    fn from_i32(i: i32) -> Self {
        i as f64
    }
    #[inline(always)]
    fn from_u32(u: u32) -> Self {
        u as f64
    }
    #[inline(always)]
    fn from_u64(u: u64) -> Self {
        u as f64
    }
    #[inline(always)]
    fn to_u32(self) -> u32 {
        self as u32
    }
    #[inline(always)]
    fn is_nan(self) -> bool {
        f64::is_nan(self)
    }
    #[inline(always)]
    fn abs(self) -> Self {
        f64::from_bits(self.to_bits() & 0x7fff_ffff_ffff_ffff)
    }
}

/// A precision with its arithmetic mode. See the module docs for the draw rules.
pub trait Arith: Copy + Default + Send + Sync + 'static {
    type R: Real;
    /// `"exact"` or `"fast"`.
    const MODE: &'static str;
    /// Words one [`Self::uniform`] takes (1 or 2).
    const WORDS_PER_UNIFORM: u32;
    fn ln(x: Self::R) -> Self::R;
    fn exp(x: Self::R) -> Self::R;
    /// Correctly rounded in exact mode.
    fn sqrt(x: Self::R) -> Self::R;
    /// A uniform in `(0, 1]` from the stream's next word(s).
    fn uniform<G: Uniform32>(rng: &mut G) -> Self::R;
    /// A uniform in `(-1, 1)` (see the module docs for `f32`'s rounding to ±1) from the next
    /// word(s).
    fn signed_uniform<G: Uniform32>(rng: &mut G) -> Self::R;
    /// One Box-Muller pair from the stream: `f32` two words (radius, angle; the foundation's
    /// [`crate::normal::box_muller`]), `f64` four words (two for the radius's uniform, two for
    /// the angle's 64 bits).
    fn box_muller<G: Uniform32>(rng: &mut G) -> (Self::R, Self::R);
}

/// `f32` in mode `M`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Single<M>(PhantomData<M>);

/// `f64`, portable (one mode).
#[derive(Clone, Copy, Debug, Default)]
pub struct Double;

impl<M: MathMode + Send + Sync> Arith for Single<M> {
    type R = f32;
    const MODE: &'static str = M::NAME;
    const WORDS_PER_UNIFORM: u32 = 1;
    #[inline(always)]
    fn ln(x: f32) -> f32 {
        ln32::<M>(x)
    }
    #[inline(always)]
    fn exp(x: f32) -> f32 {
        exp32::<M>(x)
    }
    #[inline(always)]
    fn sqrt(x: f32) -> f32 {
        M::sqrt(x)
    }
    #[inline(always)]
    fn uniform<G: Uniform32>(rng: &mut G) -> f32 {
        u32_to_unit_open_closed(rng.next_u32())
    }
    #[inline(always)]
    fn signed_uniform<G: Uniform32>(rng: &mut G) -> f32 {
        // 2 (z as i32) + 1 is odd and in [-2^32 + 1, 2^32 - 1]: as i64 it is exact; one rounding
        // to f32, then an exact scaling.
        let k = 2 * (rng.next_u32() as i32 as i64) + 1;
        (k as f32) * TWO_POW_M32
    }
    #[inline(always)]
    fn box_muller<G: Uniform32>(rng: &mut G) -> (f32, f32) {
        let z0 = rng.next_u32();
        let z1 = rng.next_u32();
        crate::normal::box_muller::<M>(z0, z1)
    }
}

/// `2^-53`.
const TWO_POW_M53: f64 = 1.0 / 9_007_199_254_740_992.0;

impl Arith for Double {
    type R = f64;
    const MODE: &'static str = "exact";
    const WORDS_PER_UNIFORM: u32 = 2;
    #[inline(always)]
    fn ln(x: f64) -> f64 {
        ln64(x)
    }
    #[inline(always)]
    fn exp(x: f64) -> f64 {
        exp64(x)
    }
    #[inline(always)]
    fn sqrt(x: f64) -> f64 {
        platform::sqrt_f64(x)
    }
    #[inline(always)]
    fn uniform<G: Uniform32>(rng: &mut G) -> f64 {
        let x = rng.next_u32();
        let y = rng.next_u32();
        u32_pair_to_unit_f64(x, y)
    }
    #[inline(always)]
    fn signed_uniform<G: Uniform32>(rng: &mut G) -> f64 {
        // A signed 53-bit k from the two words as u32_pair_to_unit_f64 combines them, then
        // (2k + 1) 2^-53: exact, odd multiples of 2^-53 in (-1, 1).
        let x = rng.next_u32();
        let y = rng.next_u32();
        let z = ((x as u64) ^ ((y as u64) << 21)) as i64 - (1i64 << 52);
        ((2 * z + 1) as f64) * TWO_POW_M53
    }
    #[inline(always)]
    fn box_muller<G: Uniform32>(rng: &mut G) -> (f64, f64) {
        let u = Self::uniform(rng);
        let lo = rng.next_u32();
        let hi = rng.next_u32();
        let r = platform::sqrt_f64(-2.0 * ln64(u));
        let (s, c) = sincos64(((hi as u64) << 32) | lo as u64);
        (r * s, r * c)
    }
}

// The `f64` functions are calls in the GPU build (`.func`), not inlined into every transform
// of every generator's kernels: each is some 100 instructions, called from dozens of places per
// kernel, and inlined they made the module several times larger (and its assembly minutes
// longer) for a call overhead that is small beside their own cost.
// The same for `f32` through [`Arith`] (the transforms' uses; Box-Muller's radius and the
// foundation's kernels call `MathMode` directly and stay inlined).
#[cfg_attr(target_arch = "nvptx64", inline(never))]
#[cfg_attr(not(target_arch = "nvptx64"), inline(always))]
fn ln32<M: MathMode>(x: f32) -> f32 {
    M::ln(x)
}

#[cfg_attr(target_arch = "nvptx64", inline(never))]
#[cfg_attr(not(target_arch = "nvptx64"), inline(always))]
fn exp32<M: MathMode>(x: f32) -> f32 {
    M::exp(x)
}

#[cfg_attr(target_arch = "nvptx64", inline(never))]
#[cfg_attr(not(target_arch = "nvptx64"), inline(always))]
fn ln64(x: f64) -> f64 {
    math64::ln_f64(x)
}

#[cfg_attr(target_arch = "nvptx64", inline(never))]
#[cfg_attr(not(target_arch = "nvptx64"), inline(always))]
fn exp64(x: f64) -> f64 {
    math64::exp_f64(x)
}

#[cfg_attr(target_arch = "nvptx64", inline(never))]
#[cfg_attr(not(target_arch = "nvptx64"), inline(always))]
fn sincos64(z: u64) -> (f64, f64) {
    math64::sincos_turn_f64(z)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Exact;

    struct Fixed<'a>(&'a [u32], usize);
    impl Uniform32 for Fixed<'_> {
        fn next_u32(&mut self) -> u32 {
            self.1 += 1;
            self.0[self.1 - 1]
        }
    }

    #[test]
    fn signed_uniforms_are_symmetric_and_never_zero() {
        type S = Single<Exact>;
        let v = |z: u32| S::signed_uniform(&mut Fixed(&[z], 0));
        assert_eq!(v(0), TWO_POW_M32);
        assert_eq!(v(u32::MAX), -TWO_POW_M32);
        assert_eq!(v(0x7fff_ffff), 1.0); // rounds to 1 (documented)
        assert_eq!(v(0x8000_0000), -1.0);
        for z in [1u32, 77, 0x1234_5678, 0x7000_0000] {
            assert_eq!(v(z), -v(!z), "{z}");
        }
        let d = |x: u32, y: u32| Double::signed_uniform(&mut Fixed(&[x, y], 0));
        let (lo, hi) = (d(0, 0), d(0x001f_ffff, u32::MAX));
        assert_eq!(lo, -1.0 + TWO_POW_M53);
        assert_eq!(hi, 1.0 - TWO_POW_M53);
        assert!(d(0, 1 << 31).abs() == TWO_POW_M53);
    }
}
