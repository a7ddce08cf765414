//! Warp divergence and Thomas's pre-caching: the iterations a warp of 32 lanes runs, from the
//! CPU's lockstep emulation of the pre-cached fill and (on a GPU) from the diagnostic kernels'
//! device-side counters, against `warpmc::divergence`'s models: E[L_32] (the maximum of 32
//! geometric variables) without the cache, the steady state of the cached Markov chain with it.

use warpmc::backend::{FillKind, StreamInit};
use warpmc::distributions::{DistKind, DistSpec, Transform};
use warpmc::divergence::{Loop, cached_model, expected_max_geometric};
use warpmc::generate::generate_words;
use warpmc::generators::GeneratorKind;
use warpmc_kernels::dist::{BoxMuller, CachedGamma, CachedPolar, WarpSampler, fill_warp_cached};
use warpmc_kernels::gamma::{Gamma, acceptance};
use warpmc_kernels::polar::polar_attempt;
use warpmc_kernels::real::Single;
use warpmc_kernels::rng::{Generator, Philox4x32x10};
use warpmc_kernels::{Exact, fill::GROUP};
use warpmc_tests::gpu_or_skip;

const K: usize = 32;

/// Mean warp iterations per call of `s` over one full warp of 32 streams filling `rows` groups
/// each (the CPU emulation's tally counts the warp's iterations).
fn emulated_iterations<S: WarpSampler>(s: &S, rows: usize) -> f64 {
    let mut states: Vec<Philox4x32x10> = (0..K as u64).map(|k| Philox4x32x10::stream(99, k)).collect();
    let mut iters = 0u32;
    let mut written = 0usize;
    fill_warp_cached(s, &mut states, 0, K, K * GROUP * rows, &mut iters, |_, _, valid| written += valid);
    assert_eq!(written, K * GROUP * rows);
    let calls = rows * GROUP / S::PER_CALL;
    iters as f64 / calls as f64
}

/// Mean over `values` calls of the most attempts any of 32 independent lanes needs for one
/// accepted candidate (what a warp runs without the cache).
fn plain_iterations(values: usize, mut attempt: impl FnMut(&mut Philox4x32x10) -> bool) -> f64 {
    let mut states: Vec<Philox4x32x10> = (0..K as u64).map(|k| Philox4x32x10::stream(98, k)).collect();
    let mut total = 0u64;
    for _ in 0..values {
        let most = states
            .iter_mut()
            .map(|rng| {
                let mut n = 1u64;
                while !attempt(rng) {
                    n += 1;
                }
                n
            })
            .max()
            .unwrap();
        total += most;
    }
    total as f64 / values as f64
}

/// Gamma of `shape` (Box-Muller normals): its acceptance, the emulated pre-cached warp's
/// iterations per call and the plain warp's.
fn gamma_case(name: &'static str, shape: f64) -> (&'static str, f64, f64, f64) {
    let cached = emulated_iterations(&CachedGamma::<Single<Exact>, BoxMuller>::new(shape), 1 << 13);
    let g = Gamma::<f32>::new(shape);
    let plain = plain_iterations(1 << 15, |rng| {
        let mut normal = |r: &mut Philox4x32x10| <Single<Exact> as warpmc_kernels::real::Arith>::box_muller(r).0;
        g.attempt::<Single<Exact>, _>(rng, &mut normal).is_some()
    });
    (name, acceptance(shape), cached, plain)
}

#[test]
fn lockstep_iterations_match_the_models() {
    // 2^15 calls: the per-call standard deviation is about 1 (polar) and 0.5 (gamma), so the
    // mean's error is about 0.6% and 0.3% (the calls are a Markov chain, mildly correlated);
    // the bound is 2.5%, and the cached/uncached difference it must resolve is 35-40%.
    let polar_p = std::f64::consts::FRAC_PI_4;
    let cases: [(&str, f64, f64, f64); 3] = [
        (
            "polar",
            polar_p,
            emulated_iterations(&CachedPolar::<Single<Exact>>::new(0.0, 1.0, false), 1 << 14),
            plain_iterations(1 << 14, |rng| polar_attempt::<Single<Exact>, _>(rng).is_some()),
        ),
        gamma_case("gamma shape 1", 1.0),
        gamma_case("gamma shape 0.3", 0.3),
    ];
    for (name, p, cached, plain) in cases {
        let model_cached = cached_model(p, 32, Loop::DoWhile).unwrap().expected_iterations;
        let model_plain = expected_max_geometric(p, 32);
        eprintln!(
            "{name:<16} p {p:.6}: cached {cached:.4} (model {model_cached:.4}), plain {plain:.4} (model {model_plain:.4}), \
             ratio {:.3} (model {:.3})",
            plain / cached,
            model_plain / model_cached
        );
        assert!((cached / model_cached - 1.0).abs() < 0.025, "{name}: cached {cached} against {model_cached}");
        assert!((plain / model_plain - 1.0).abs() < 0.025, "{name}: plain {plain} against {model_plain}");
    }
}

fn philox(streams: u64) -> StreamInit {
    StreamInit::Seeded { generator: GeneratorKind::Philox4x32x10, seed: 17, first: 0, count: streams }
}

/// The diagnostic kernels give the production kernels' values, and the pre-cached loop's warp
/// iterations equal what the CPU's emulation counts (the same lockstep, by construction) and the
/// model's steady state; the plain loops' measured efficiency is printed beside the model.
#[test]
fn gpu_diagnostic_counts_warp_iterations() {
    let Some(exec) = gpu_or_skip("gpu_diagnostic_counts_warp_iterations") else { return };
    let gpu = exec.as_gpu().expect("a GPU executor");
    let streams = 32 * 1024;
    // 32 rows: one block of `generate_words` (4 Mi values), so that the production fill below is
    // one kernel launch as the diagnostic is (a pre-cached fill drops its caches at its end).
    let len = streams * 4 * 32;
    let specs = [
        (DistSpec::new(DistKind::Normal).with_transform(Transform::Polar), std::f64::consts::FRAC_PI_4),
        (DistSpec { shape: Some(1.0), ..DistSpec::new(DistKind::Gamma) }, acceptance(1.0)),
    ];
    for (spec, p) in specs {
        for cached in [false, true] {
            let d = spec.with_pre_cache(cached);
            let fill = d.fill();
            let run = gpu.diag_dist(fill, len, 17, streams).unwrap();
            let production = generate_words(&*exec, FillKind::Dist(fill), &philox(streams), len as usize).unwrap();
            assert!(run.values == production, "{}: the diagnostic kernel's values differ", fill.describe());
            let calls_per_lane = (len / streams) as f64 / if d.kind == DistKind::Normal { 2.0 } else { 1.0 };
            let warps = (streams / 32) as f64;
            let per_call = run.warp_iterations as f64 / (warps * calls_per_lane);
            let efficiency = run.lane_attempts as f64 / (32.0 * run.warp_iterations as f64);
            let model = if cached {
                cached_model(p, 32, Loop::DoWhile).unwrap().expected_iterations
            } else {
                expected_max_geometric(p, 32)
            };
            eprintln!(
                "{:<40} warp iterations per call {per_call:.4} (model {model:.4}), lane efficiency {efficiency:.4}",
                fill.describe()
            );
            if cached {
                // Every lane runs every iteration of its warp.
                assert_eq!(run.lane_attempts, 32 * run.warp_iterations, "{}", fill.describe());
                assert!((per_call / model - 1.0).abs() < 0.02, "{}: {per_call} against {model}", fill.describe());
            } else {
                // Measured, not assumed: the lanes of a plain fill are separate threads, and how
                // long a warp waits depends on where the hardware reconverges them (the model
                // assumes after every value). Only what must hold: no lane runs an iteration its
                // warp does not, and a warp runs at least the mean attempts per value, 1/p.
                assert!(efficiency <= 1.0, "{}: efficiency {efficiency}", fill.describe());
                assert!(per_call >= 0.98 / p, "{}: {per_call} against 1/p = {}", fill.describe(), 1.0 / p);
            }
        }
    }
}
