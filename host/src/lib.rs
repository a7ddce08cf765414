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
pub mod basket;
pub mod bench;
pub mod bulk;
pub mod closed_form;
pub mod convergence;
pub mod curand_host;
pub mod distributions;
pub mod divergence;
pub mod efficiency;
pub mod error;
pub mod generate;
pub mod greeks;
pub mod instruments;
pub mod integrands;
pub mod integrate;
pub mod integrate_plot;
pub mod jobfile;
#[cfg(feature = "mpi")]
pub mod mpi_split;
pub mod pipeline;
pub mod plot;
pub mod pricing;
pub mod qmc;
pub mod quality;
pub mod rngs;
pub mod sobol;
pub mod stream;
pub mod wallace;

pub use error::{Error, Result};
pub use warpmc_kernels as kernels;

/// The PTX module compiled from `gpu-kernels` at build time (see `build.rs`), deflated.
#[cfg(feature = "gpu")]
const PTX_DEFLATED: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/warpmc_kernels.ptx.deflate"));

/// The same module as machine code for compute capability 9.0 (H100, H200), assembled at build
/// time by the project's ptxas, deflated; it inflates to nothing when the build had no ptxas.
#[cfg(feature = "gpu")]
const CUBIN_SM90_DEFLATED: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/warpmc_kernels.sm_90.cubin.deflate"));

/// The PTX module compiled from `gpu-kernels` at build time.
#[cfg(feature = "gpu")]
pub fn ptx() -> String {
    let bytes = miniz_oxide::inflate::decompress_to_vec(PTX_DEFLATED).expect("build.rs deflated the PTX");
    String::from_utf8(bytes).expect("PTX is text")
}

/// The module as sm_90 machine code, if the build assembled it.
#[cfg(feature = "gpu")]
pub fn cubin_sm90() -> Option<Vec<u8>> {
    let bytes = miniz_oxide::inflate::decompress_to_vec(CUBIN_SM90_DEFLATED).expect("build.rs deflated the cubin");
    (!bytes.is_empty()).then_some(bytes)
}
