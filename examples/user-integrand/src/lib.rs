//! A user's integrand for `warpmc integrate`, written once for the CPU and the GPU.
//!
//! Three things make a crate an integrand module:
//! 1. a `#[repr(C)]`, `Copy` parameter block (here [`Ridge`]) that the host copies to the GPU as
//!    bytes, so only plain numbers and arrays of them, no pointers, no padding surprises;
//! 2. `warpmc_kernels::vegas::Integrand` for it: a pure function of the point, written with
//!    correctly rounded operations (`+ - * /`, `sqrt` via `warpmc_kernels::platform`) and
//!    `warpmc_kernels::math64`'s functions only, so that the CPU build and the PTX build
//!    compute the same bits (`f64::exp` would be the C library's on the CPU);
//! 3. `warpmc_kernels::integrand_kernel!(NAME, Params)`, which defines the GPU kernel `NAME` on
//!    the PTX build (and nothing on the CPU build) for Philox4x32-10; other generators are
//!    listed after it as `suffix: Type` (here MRG32k3a and the warp generator `warp-shfl`),
//!    each adding the kernel `NAME__suffix`.
//!
//! `cargo xtask build-integrand --manifest-path examples/user-integrand/Cargo.toml` compiles it
//! to `target/integrands/warpmc_example_integrand.ptx`.

#![cfg_attr(target_arch = "nvptx64", no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]

use warpmc_kernels::vegas::{Integrand, MAX_DIM};

/// `f(x) = k (Σ_i (x_i - m_i))²`: a valley along the hyperplane `Σ x_i = Σ m_i`, not a product of
/// one-dimensional functions (VEGAS's separable grid cannot fit it exactly; the stratification
/// helps), with a closed form to check against: `∫ f = k (d / 12 + (Σ_i (1/2 - m_i))²)`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ridge {
    pub k: f64,
    pub dim: u32,
    pub pad: u32,
    pub m: [f64; MAX_DIM],
}

impl Integrand for Ridge {
    #[inline(always)]
    fn eval(&self, x: &[f64]) -> f64 {
        let mut s = 0.0;
        for (xi, mi) in x.iter().zip(&self.m) {
            s += xi - mi;
        }
        self.k * s * s
    }
}

impl Ridge {
    /// The exact integral over the unit cube.
    pub fn exact(&self) -> f64 {
        let d = self.dim as usize;
        let shift: f64 = self.m[..d].iter().map(|m| 0.5 - m).sum();
        self.k * (d as f64 / 12.0 + shift * shift)
    }

    /// The parameter block's bytes, as the GPU kernel reads them.
    pub fn as_bytes(&self) -> &[u8] {
        // SAFETY: `Ridge` is `#[repr(C)]`: an f64, two u32 and f64s, no padding (8 + 8 + 256
        // bytes), so every byte is initialised.
        unsafe { core::slice::from_raw_parts((self as *const Self).cast::<u8>(), core::mem::size_of::<Self>()) }
    }
}

warpmc_kernels::integrand_kernel!(ridge_vegas, Ridge, mrg32k3a: Mrg32k3a, warp_shfl: WarpShfl);
