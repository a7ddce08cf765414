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

/// The Kolmogorov-Smirnov test of `x` against the continuous CDF `cdf`: `(D, p)`, with `p`
/// from the asymptotic Kolmogorov law with Stephens's small-sample correction
/// (`sqrt(n) + 0.12 + 0.11 / sqrt(n)`). Sorts `x`; a NaN in `x` is a failure (p = 0).
pub fn ks_test(x: &mut [f64], cdf: impl Fn(f64) -> f64) -> (f64, f64) {
    if x.iter().any(|v| v.is_nan()) {
        return (1.0, 0.0);
    }
    x.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = x.len() as f64;
    let mut d: f64 = 0.0;
    for (i, &v) in x.iter().enumerate() {
        let f = cdf(v);
        d = d.max(f - i as f64 / n).max((i + 1) as f64 / n - f);
    }
    (d, kolmogorov_upper((n.sqrt() + 0.12 + 0.11 / n.sqrt()) * d))
}

/// `P(K > t)` for the Kolmogorov distribution: `2 sum_{k>=1} (-1)^(k-1) exp(-2 k^2 t^2)`.
pub fn kolmogorov_upper(t: f64) -> f64 {
    if t < 0.2 {
        return 1.0;
    }
    let mut s = 0.0;
    for k in 1..=100 {
        let term = (-2.0 * (k * k) as f64 * t * t).exp();
        s += if k % 2 == 1 { term } else { -term };
        if term < 1e-18 {
            break;
        }
    }
    (2.0 * s).clamp(0.0, 1.0)
}

/// Pearson's chi-square test of `counts` against the cell probabilities `probs` (which sum to
/// 1): `(statistic, degrees of freedom, p)`. Cells whose expected count is below 5 are merged
/// with their neighbours (in order) first.
pub fn chi_square_test(counts: &[u64], probs: &[f64]) -> (f64, f64, f64) {
    assert_eq!(counts.len(), probs.len());
    let n: u64 = counts.iter().sum();
    let mut cells: Vec<(f64, f64)> = Vec::new();
    let (mut o, mut e) = (0.0, 0.0);
    for (&c, &p) in counts.iter().zip(probs) {
        o += c as f64;
        e += p * n as f64;
        if e >= 5.0 {
            cells.push((o, e));
            (o, e) = (0.0, 0.0);
        }
    }
    if e > 0.0 || o > 0.0 {
        match cells.last_mut() {
            Some(last) => {
                last.0 += o;
                last.1 += e;
            }
            None => cells.push((o, e)),
        }
    }
    let stat: f64 = cells.iter().map(|&(o, e)| (o - e) * (o - e) / e).sum();
    let df = (cells.len() as f64 - 1.0).max(1.0);
    (stat, df, warpmc::quality::chi_square_upper(stat, df))
}
