//! warpmc's numerics, written once for the CPU and the GPU.
//!
//! This crate is compiled twice:
//! - as an ordinary `std` rlib that the host crate (`warpmc`) calls from its CPU executor, and
//! - for `nvptx64-nvidia-cuda` (`no_std`), where `host/build.rs` asks rustc for its PTX and the
//!   host embeds and loads it. The GPU entry points in [`gpu`] exist only in that build.
//!
//! Everything numeric is a small pure function over `#[repr(C)]`, `Copy` state: a generator step
//! ([`rng::HybridTaus`]), a stream derivation ([`rng::streams`]), a transform
//! ([`normal::box_muller`]), a path and its payoff ([`asian`]), an exact accumulator
//! ([`accum::ExactSum`]). The GPU kernels are thin shells (indexing, a loop, a warp reduction)
//! around the same calls the CPU executor makes, so CPU/GPU parity follows from the structure.
//!
//! Floating-point results are bit-identical between the builds in [`Exact`] mode: only
//! correctly rounded IEEE operations (`+ - * /`, `sqrt`, conversions) are used, never an fma
//! the other side might not contract the same way, and the transcendental functions are the
//! project's own ([`math`]). [`Fast`] mode uses the GPU's approximate instructions on the GPU and
//! `std` on the CPU; the two agree within a stated tolerance only.
//!
//! Platform differences live in one module, [`platform`].

#![cfg_attr(target_arch = "nvptx64", no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, stdarch_nvptx, asm_experimental_arch, link_llvm_intrinsics))]
#![cfg_attr(target_arch = "nvptx64", allow(internal_features))]
#![deny(unsafe_op_in_unsafe_fn)]
// `!(x < bound)` is deliberate throughout: it sends NaN down the out-of-range path.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

pub mod accum;
pub mod asian;
pub mod basket;
pub mod buffered;
pub mod convert;
pub mod curand;
pub mod dist;
pub mod fill;
pub mod gamma;
pub mod instrument;
pub mod inverse_normal;
pub mod math;
pub mod math64;
pub mod mode;
pub mod normal;
pub mod platform;
pub mod poisson;
pub mod polar;
pub mod qmc;
pub mod real;
pub mod rng;
pub mod sobol;
pub mod tally;
pub mod vegas;
pub mod wallace;
pub mod ziggurat;

#[cfg(target_arch = "nvptx64")]
pub mod gpu;

pub use mode::{Exact, Fast, MathMode};
