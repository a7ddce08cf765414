//! The one place where the CPU and the GPU builds differ.
//!
//! Everything else in the crate is written once. What lives here:
//! - correctly rounded square root (`sqrt.rn.f32` on the GPU, `sqrtss` on the CPU: both IEEE
//!   correctly rounded, so they agree bit for bit);
//! - the fast-mode transcendental functions: the GPU's approximate instructions
//!   (`lg2.approx.ftz.f32`, `sin.approx.ftz.f32`, `cos.approx.ftz.f32`, `ex2.approx.ftz.f32`,
//!   `sqrt.approx.ftz.f32`) on the GPU and `std` on the CPU. These differ between the builds,
//!   which is why [`crate::Fast`] mode is only reproducible within a tolerance. The `.ftz` forms
//!   flush subnormal inputs and results to zero; without it each instruction carries a
//!   subnormal fix-up (a compare and two predicated operations in SASS). Fast mode's inputs are
//!   never subnormal (`u0 >= 2^-33`), and a subnormal `exp` result is a price below 1e-38 of the
//!   spot;
//! - on the GPU only, thread indexing, warp shuffles and warp barriers (in [`crate::gpu`]'s
//!   private helpers, via this module's `nvptx` items).

/// One PTX instruction `INS dst, src;` on an `f32` register (GPU build only).
#[cfg(target_arch = "nvptx64")]
macro_rules! ptx_unary_f32 {
    ($ins:literal, $x:expr) => {{
        let x: f32 = $x;
        let r: f32;
        // SAFETY: a pure arithmetic instruction on registers; no memory is touched.
        unsafe {
            core::arch::asm!(concat!($ins, " {r}, {x};"), r = out(reg32) r, x = in(reg32) x,
                options(pure, nomem, nostack));
        }
        r
    }};
}

/// Correctly rounded single-precision square root (the same bits on both builds).
#[inline(always)]
pub fn sqrt_f32(x: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    {
        // The IEEE square root instruction itself, rather than `core::intrinsics::sqrtf32`
        // (which lowered to the same instruction but is gone from newer nightlies).
        ptx_unary_f32!("sqrt.rn.f32", x)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        x.sqrt()
    }
}

/// The high and low words of the 64-bit product of two `u32` (exact on both builds).
///
/// On the GPU these are the `mul.hi.u32` and `mul.lo.u32` instructions: written as a `u64`
/// product, LLVM kept Philox's unrolled rounds in 64-bit multiplies (`mul.lo.s64`, several
/// 32-bit multiply-adds each on the hardware).
#[inline(always)]
pub fn mul_hi_lo_u32(a: u32, b: u32) -> (u32, u32) {
    #[cfg(target_arch = "nvptx64")]
    {
        let (hi, lo): (u32, u32);
        // SAFETY: pure arithmetic instructions on registers; no memory is touched.
        unsafe {
            core::arch::asm!("mul.hi.u32 {hi}, {a}, {b};", hi = out(reg32) hi, a = in(reg32) a, b = in(reg32) b,
                options(pure, nomem, nostack));
            core::arch::asm!("mul.lo.u32 {lo}, {a}, {b};", lo = out(reg32) lo, a = in(reg32) a, b = in(reg32) b,
                options(pure, nomem, nostack));
        }
        (hi, lo)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        let p = (a as u64) * (b as u64);
        ((p >> 32) as u32, p as u32)
    }
}

/// Fast natural logarithm: `lg2.approx.ftz.f32` times ln 2 on the GPU, `f32::ln` on the CPU.
#[inline(always)]
pub fn fast_ln(x: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let r = ptx_unary_f32!("lg2.approx.ftz.f32", x);
        r * core::f32::consts::LN_2
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        x.ln()
    }
}

/// Fast `exp`: `ex2.approx.ftz.f32` of `x * log2(e)` on the GPU, `f32::exp` on the CPU.
#[inline(always)]
pub fn fast_exp(x: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let y = x * core::f32::consts::LOG2_E;
        let r = ptx_unary_f32!("ex2.approx.ftz.f32", y);
        r
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        x.exp()
    }
}

/// Fast square root: `sqrt.approx.ftz.f32` on the GPU, `f32::sqrt` on the CPU.
#[inline(always)]
pub fn fast_sqrt(x: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let r = ptx_unary_f32!("sqrt.approx.ftz.f32", x);
        r
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        x.sqrt()
    }
}

/// Fast `sqrt(-2 ln u)`, Box-Muller's radius: one `lg2.approx.ftz.f32`, one multiply by
/// `-2 ln 2` and one `sqrt.approx.ftz.f32` on the GPU; `f32` `std` on the CPU.
#[inline(always)]
pub fn fast_box_muller_radius(u: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let l = ptx_unary_f32!("lg2.approx.ftz.f32", u);
        fast_sqrt(l * (-2.0 * core::f32::consts::LN_2))
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        (-2.0 * u.ln()).sqrt()
    }
}

/// Fast `(sin θ, cos θ)` for `θ` in radians, `|θ| <= π`: `sin.approx.ftz.f32`/`cos.approx.ftz.f32` on the
/// GPU, `f32::sin_cos` on the CPU.
#[inline(always)]
pub fn fast_sincos(theta: f32) -> (f32, f32) {
    #[cfg(target_arch = "nvptx64")]
    {
        (ptx_unary_f32!("sin.approx.ftz.f32", theta), ptx_unary_f32!("cos.approx.ftz.f32", theta))
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        theta.sin_cos()
    }
}
