//! # warpmc
//!
//! Monte Carlo on NVIDIA GPUs, with a CPU backend built from the same code.
//!
//! The numerics (generators, normal transforms, path and payoff steps, exact accumulators)
//! live once in the `no_std` crate [`warpmc_kernels`], re-exported as [`kernels`]. This crate
//! validates jobs, runs them on a backend ([`backend`]: the GPU through cudarc, or all CPU
//! cores through rayon) and turns exact sums into reports with error bars.
//!
//! ```no_run
//! use warpmc::backend::{self, BackendOptions};
//! use warpmc::pricing::{price_asian_basket, AsianBasket, Mode, PricingJob};
//!
//! let exec = backend::open(&BackendOptions::default())?; // GPU if present, else CPU
//! let job = PricingJob { paths: 1 << 20, seed: 1, mode: Mode::Exact, ..Default::default() }; // hybrid-taus
//! let report = price_asian_basket(exec.as_ref(), &job)?;
//! println!("{} ± {}", report.price, report.std_error);
//! # Ok::<(), warpmc::Error>(())
//! ```
//!
//! A report is only as good as its check: see [`pricing::PriceReport::check`].

// `!(x > 0.0)` is deliberate: it sends NaN down the degenerate branch.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

#[macro_use]
pub mod generators;

pub mod backend;
pub mod bench;
pub mod error;
pub mod generate;
pub mod pricing;
pub mod rngs;

pub use error::{Error, Result};
pub use warpmc_kernels as kernels;

/// The PTX module compiled from `gpu-kernels` at build time (see `build.rs`).
#[cfg(feature = "gpu")]
pub const PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/warpmc_kernels.ptx"));

/// The same module as machine code for compute capability 9.0 (H100, H200), assembled at build
/// time by the project's ptxas; empty when the build had no ptxas (the PTX is used instead).
#[cfg(feature = "gpu")]
pub const CUBIN_SM90: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/warpmc_kernels.sm_90.cubin"));
