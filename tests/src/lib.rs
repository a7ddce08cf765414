//! Helpers shared by warpmc's cross-crate tests (`tests/tests/*.rs`).
//!
//! GPU tests call [`gpu_or_skip`]: without a GPU they print a `SKIPPED` line and return early,
//! unless `WARPMC_REQUIRE_GPU=1`, in which case a missing GPU fails the test. The device bundle
//! (`cargo xtask device-bundle`) runs them with that variable set.

use warpmc::backend::{self, BackendKind, BackendOptions, Executor};

/// Whether `WARPMC_REQUIRE_GPU=1` is set.
pub fn gpu_required() -> bool {
    std::env::var("WARPMC_REQUIRE_GPU").is_ok_and(|v| v == "1")
}

/// Open the GPU with `opts` (kind forced to `gpu`), or skip the calling test.
///
/// Returns `None` (after printing `SKIPPED <test>: ...`) when no GPU is usable and a GPU is not
/// required; panics when one is required.
pub fn gpu_with(test: &str, opts: BackendOptions) -> Option<Box<dyn Executor>> {
    match backend::open(&BackendOptions { kind: BackendKind::Gpu, ..opts }) {
        Ok(exec) => Some(exec),
        Err(e) if gpu_required() => panic!("{test}: WARPMC_REQUIRE_GPU=1 but no GPU: {e}"),
        Err(e) => {
            eprintln!("SKIPPED {test}: {e} (set WARPMC_REQUIRE_GPU=1 to make this a failure)");
            None
        }
    }
}

/// [`gpu_with`] with the default launch shape.
pub fn gpu_or_skip(test: &str) -> Option<Box<dyn Executor>> {
    gpu_with(test, BackendOptions::default())
}

/// A CPU executor with `threads` workers.
pub fn cpu(threads: usize) -> Box<dyn Executor> {
    backend::open(&BackendOptions { kind: BackendKind::Cpu, cpu_threads: Some(threads), ..Default::default() })
        .expect("a CPU pool")
}

/// The standard normal CDF, in `f64` (for Kolmogorov-Smirnov tests).
pub fn normal_cdf(x: f64) -> f64 {
    warpmc::pricing::normal_cdf(x)
}
