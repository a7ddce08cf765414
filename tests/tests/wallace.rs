//! Wallace's pool generator (`--transform wallace`) on the CPU, through the library's fillers:
//! the fill against its definition (pool `p` from stream `p`'s words), the same values for any
//! thread count and any split into fills, the output's law, the chi-square law of each batch's
//! sum of squares, the correlation of consecutive batches for 1, 2 and 4 passes, composition
//! with the normal's and log-normal's parameters, and bad input. The GPU's parity with the CPU
//! is in `gpu.rs`.
//!
//! Statistics are accumulated in `f64`; each bound is a few standard errors of its statistic.

use warpmc::backend::cpu::CpuExecutor;
use warpmc::backend::{FillKind, Filler, StreamInit};
use warpmc::distributions::{DistFill, DistKind, DistSpec, Precision, Transform};
use warpmc::generate::generate_words;
use warpmc::generators::GeneratorKind;
use warpmc::pricing::Mode;
use warpmc::wallace::{POOLS_MAX, cpu_filler};
use warpmc_kernels::Exact;
use warpmc_kernels::normal::box_muller;
use warpmc_kernels::real::{Arith, Single};
use warpmc_kernels::rng::{Generator, HybridTaus, Philox4x32x10, Uniform32, Xorwow};
use warpmc_kernels::wallace::{self, BatchWords, PASSES_DEFAULT, POOL};
use warpmc_tests::{cpu, ks_test, normal_cdf};

fn spec() -> DistSpec {
    DistSpec::new(DistKind::Normal).with_transform(Transform::Wallace)
}

fn seeded(generator: GeneratorKind, seed: u64, first: u64, streams: u64) -> StreamInit {
    StreamInit::Seeded { generator, seed, first, count: streams }
}

fn executor(threads: usize) -> CpuExecutor {
    CpuExecutor::new(Some(threads)).expect("a CPU pool")
}

/// `lens` consecutive fills of one filler, concatenated, as `f32`.
fn fills(filler: &mut dyn Filler, lens: &[usize]) -> Vec<f32> {
    let mut out = Vec::new();
    for &n in lens {
        let mut buf = vec![0u32; n];
        filler.fill(&mut buf).expect("a fill");
        out.extend(buf.iter().map(|&w| f32::from_bits(w)));
    }
    out
}

/// `rounds` rounds of `pools` pools with `passes` passes, standard normal, from Philox.
fn rounds(exec: &CpuExecutor, seed: u64, pools: u64, rounds: usize, passes: u32) -> Vec<f32> {
    let init = seeded(GeneratorKind::Philox4x32x10, seed, 0, pools);
    let mut f = cpu_filler(exec, spec().fill(), passes, &init).expect("a filler");
    fills(f.as_mut(), &[rounds * pools as usize * POOL])
}

/// The definition, from the streams themselves: stream `p`'s first N words make N exact
/// Box-Muller normals (pairs of consecutive words), which become pool `p`; batch `b` of the
/// pool takes the stream's next 4 words `N + 4b ..`; round `b` holds batch `b` of every pool,
/// pool after pool.
fn reference<G: Generator>(
    seed: u64,
    first: u64,
    pools: usize,
    n_rounds: usize,
    d: &DistFill,
    passes: u32,
) -> Vec<f32> {
    let post = wallace::output(&d.params());
    let mut out = vec![0.0f32; n_rounds * pools * POOL];
    for p in 0..pools {
        let mut rng = G::stream(seed, first + p as u64);
        let normals: Vec<f32> = (0..POOL / 2)
            .flat_map(|_| {
                let (a, b) = box_muller::<Exact>(rng.next_u32(), rng.next_u32());
                [a, b]
            })
            .collect();
        let mut pool = Box::new([0.0f32; POOL]);
        wallace::init_pool(|m| normals[m], |m, x| pool[m] = x);
        for b in 0..n_rounds {
            let w: BatchWords = std::array::from_fn(|_| rng.next_u32());
            let at = (b * pools + p) * POOL;
            wallace::batch(&mut pool, &w, passes, &post, |i, x| out[at + i] = x);
        }
    }
    out
}

fn assert_bits(got: &[f32], want: &[f32], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    let diff = got.iter().zip(want).position(|(a, b)| a.to_bits() != b.to_bits());
    assert_eq!(diff, None, "{what}: first difference at {diff:?}");
}

/// The filler's values are the definition's, for several generators, pool counts, pass counts
/// and thread counts, with fills that end inside rounds (the rest of the round comes first in
/// the next fill).
#[test]
fn fill_is_its_definition() {
    for threads in [1, 2] {
        let exec = executor(threads);
        for (pools, passes) in [(1usize, 4u32), (3, 1), (8, PASSES_DEFAULT), (5, 8)] {
            let round = pools * POOL;
            let lens = [1, round - 1, 2 * round + 17, round - 17, 3];
            let n_rounds = lens.iter().sum::<usize>().div_ceil(round);
            let d = spec().fill();
            for g in [GeneratorKind::Philox4x32x10, GeneratorKind::Xorwow, GeneratorKind::HybridTaus] {
                let init = seeded(g, 42, 7, pools as u64);
                let mut f = cpu_filler(&exec, d, passes, &init).expect("a filler");
                let got = fills(f.as_mut(), &lens);
                let want = match g {
                    GeneratorKind::Philox4x32x10 => reference::<Philox4x32x10>(42, 7, pools, n_rounds, &d, passes),
                    GeneratorKind::Xorwow => reference::<Xorwow>(42, 7, pools, n_rounds, &d, passes),
                    _ => reference::<HybridTaus>(42, 7, pools, n_rounds, &d, passes),
                };
                let what = format!("{g}, {pools} pools, {passes} passes, {threads} threads");
                assert_bits(&got, &want[..got.len()], &what);
            }
        }
    }
}

/// Through the executors' `filler` (what `warpmc generate` runs, with the default passes): the
/// same values on 1, 2 and 3 threads, in one fill or several, for a collective generator too.
#[test]
fn same_values_for_any_threads_and_fills() {
    for g in [GeneratorKind::Philox4x32x10, GeneratorKind::Warp, GeneratorKind::Mt19937] {
        let init = seeded(g, 5, 0, 6);
        let kind = FillKind::Dist(spec().fill());
        let n = 3 * 6 * POOL + 1001;
        let one = generate_words(cpu(1).as_ref(), kind, &init, n).unwrap();
        for threads in [2, 3] {
            let exec = cpu(threads);
            assert_eq!(one, generate_words(exec.as_ref(), kind, &init, n).unwrap(), "{g}, {threads} threads");
            let mut f = exec.filler(kind, &init).unwrap();
            let split: Vec<u32> =
                fills(f.as_mut(), &[999, 6 * POOL, 2, n - 6 * POOL - 1001]).iter().map(|x| x.to_bits()).collect();
            assert_eq!(one, split, "{g}, {threads} threads, split fills");
        }
        // The default passes through the executor equal cpu_filler's with PASSES_DEFAULT.
        let exec = executor(2);
        let mut f = cpu_filler(&exec, spec().fill(), PASSES_DEFAULT, &init).unwrap();
        let direct: Vec<u32> = fills(f.as_mut(), &[n]).iter().map(|x| x.to_bits()).collect();
        assert_eq!(one, direct, "{g}: executor filler against cpu_filler");
    }
}

/// Mean, variance, excess kurtosis and the Kolmogorov-Smirnov statistic of 2^22 values (32
/// pools, 64 batches each, default passes) against the standard normal.
#[test]
fn output_is_standard_normal() {
    let x = rounds(&executor(2), 1, 32, 64, PASSES_DEFAULT);
    let n = x.len() as f64;
    let mean = x.iter().map(|&v| v as f64).sum::<f64>() / n;
    let m2 = x.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / n;
    let m4 = x.iter().map(|&v| (v as f64 - mean).powi(4)).sum::<f64>() / n;
    let kurt = m4 / (m2 * m2) - 3.0;
    println!("wallace: n {n}, mean {mean:.2e}, variance {m2:.6}, excess kurtosis {kurt:.4}");
    assert!(mean.abs() < 5.0 / n.sqrt(), "mean {mean}");
    assert!((m2 - 1.0).abs() < 5.0 * (2.0 / n).sqrt(), "variance {m2}");
    assert!(kurt.abs() < 5.0 * (24.0 / n).sqrt(), "excess kurtosis {kurt}");
    let mut v: Vec<f64> = x.iter().map(|&v| v as f64).collect();
    let (d, p) = ks_test(&mut v, normal_cdf);
    println!("wallace: KS D {d:.2e}, p {p:.3}");
    assert!(p > 1e-4, "KS D {d}, p {p}");
}

/// Each batch's sum of squares `T = S^2 q`, `q` the pool's (N to rounding): over 12,000
/// batches (one pass each: the correction does not depend on the passes) its mean is N and its
/// variance 2N, a chi-square's, within 5 standard errors. Uncorrected (`T / S^2`, with `S`
/// recomputed from the batch's words of the stream) it is N in every batch to rounding: the
/// passes preserve it.
#[test]
fn batch_sums_of_squares_are_chi_square() {
    let (pools, n_rounds) = (12usize, 1000usize);
    let x = rounds(&executor(2), 3, pools as u64, n_rounds, 1);
    let t: Vec<f64> = x.chunks_exact(POOL).map(|b| b.iter().map(|&v| (v as f64) * (v as f64)).sum()).collect();
    let (n, b) = (POOL as f64, t.len() as f64);
    let mean = t.iter().sum::<f64>() / b;
    let var = t.iter().map(|&v| (v - mean).powi(2)).sum::<f64>() / (b - 1.0);
    let k3 = t.iter().map(|&v| (v - mean).powi(3)).sum::<f64>() / b;
    println!(
        "wallace: batch sums of squares over {b} batches: mean {mean:.2} (N = {n}), variance {var:.1} (2N = {}), \
         third central moment {k3:.0} (chi-square: 8N = {}; the correction gives 6N = {})",
        2.0 * n,
        8.0 * n,
        6.0 * n
    );
    assert!((mean - n).abs() < 5.0 * (2.0 * n / b).sqrt(), "mean {mean}");
    // The variance's standard error: sqrt((mu4 - sigma^4) / B), mu4 = 3 sigma^4 nearly.
    assert!((var - 2.0 * n).abs() < 5.0 * 2.0 * n * (2.0 / b).sqrt(), "variance {var}");
    // Uncorrected: T / S^2 with S from words N + 4b .. of stream p.
    let mut worst = 0.0f64;
    for p in 0..pools {
        let mut rng = Philox4x32x10::stream(3, p as u64);
        (0..POOL).for_each(|_| {
            rng.next_u32();
        });
        for r in 0..n_rounds {
            let w: BatchWords = std::array::from_fn(|_| rng.next_u32());
            let s = wallace::correction(&w) as f64;
            let q = t[r * pools + p] / (s * s);
            worst = worst.max((q - n).abs() / n);
        }
    }
    println!("wallace: uncorrected sums of squares: largest relative departure from N {worst:.2e}");
    assert!(worst < 1e-5, "uncorrected sum of squares departs from N by {worst:e} (relative)");
}

/// Pearson correlation of paired samples, in `f64`.
fn correlation(pairs: impl Iterator<Item = (f64, f64)>) -> (f64, f64) {
    let (mut n, mut sx, mut sy, mut sxx, mut syy, mut sxy) = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    for (x, y) in pairs {
        n += 1.0;
        sx += x;
        sy += y;
        sxx += x * x;
        syy += y * y;
        sxy += x * y;
    }
    let cov = sxy / n - (sx / n) * (sy / n);
    (cov / ((sxx / n - (sx / n).powi(2)) * (syy / n - (sy / n).powi(2))).sqrt(), n)
}

/// Lag-1 correlations between consecutive batches of a pool, for 1, 2 and 4 passes: of the
/// values at the same position, of their squares, and of the batch sums of squares. Each must
/// be within 5 standard errors (1/sqrt(pairs)) of 0. (The passes' real dependence is not at
/// the same position: each output is ±2^-k of 4^k earlier values, see the kernel crate's
/// `mixing_of_consecutive_batches`.)
#[test]
fn lag_correlation_of_consecutive_batches() {
    let (pools, n_rounds) = (8usize, 600usize);
    for passes in [1u32, 2, 4] {
        let x = rounds(&executor(2), 9, pools as u64, n_rounds, passes);
        let batch = |r: usize, p: usize| &x[(r * pools + p) * POOL..][..POOL];
        let pairs = || {
            (0..pools).flat_map(move |p| {
                (1..n_rounds)
                    .flat_map(move |r| batch(r - 1, p).iter().zip(batch(r, p)).map(|(&a, &b)| (a as f64, b as f64)))
            })
        };
        let (same, n) = correlation(pairs());
        let (squares, _) = correlation(pairs().map(|(a, b)| (a * a, b * b)));
        let ss = |r: usize, p: usize| batch(r, p).iter().map(|&v| (v as f64) * (v as f64)).sum::<f64>();
        let (sums, m) = correlation((0..pools).flat_map(|p| (1..n_rounds).map(move |r| (ss(r - 1, p), ss(r, p)))));
        println!(
            "wallace, {passes} passes: lag-1 correlation at the same position {same:+.2e}, of squares {squares:+.2e} \
             ({n} pairs, standard error {:.1e}); of batch sums of squares {sums:+.3} ({m} pairs, standard error {:.3})",
            n.sqrt().recip(),
            m.sqrt().recip()
        );
        assert!(same.abs() < 5.0 / n.sqrt(), "{passes} passes: same-position correlation {same}");
        assert!(squares.abs() < 5.0 / n.sqrt(), "{passes} passes: squares' correlation {squares}");
        assert!(sums.abs() < 5.0 / m.sqrt(), "{passes} passes: sums of squares' correlation {sums}");
    }
}

/// `--mean`/`--sd` and the log-normal go through the normal samplers' own post-processing:
/// each value is `mean + sd x` or `exp(mean + sd x)` (exact `f32`) of the standard fill's `x`
/// of the same streams.
#[test]
fn normal_parameters_and_lognormal_compose() {
    let exec = executor(2);
    let init = seeded(GeneratorKind::Xorwow, 8, 0, 3);
    let n = 3 * POOL * 2 + 5;
    let standard = fills(cpu_filler(&exec, spec().fill(), 2, &init).unwrap().as_mut(), &[n]);
    for (kind, mean, sd) in [(DistKind::Normal, 1.5f64, 2.0f64), (DistKind::Lognormal, 0.1, 0.5)] {
        let d = DistSpec { mean, sd, ..DistSpec::new(kind).with_transform(Transform::Wallace) };
        d.validate().unwrap();
        let got = fills(cpu_filler(&exec, d.fill(), 2, &init).unwrap().as_mut(), &[n]);
        let (m, s) = (mean as f32, sd as f32);
        let want: Vec<f32> = standard
            .iter()
            .map(|&x| if kind == DistKind::Lognormal { Single::<Exact>::exp(m + s * x) } else { m + s * x })
            .collect();
        assert_bits(&got, &want, kind.name());
    }
}

/// Bad input is an error naming the field and its range, never a panic.
#[test]
fn bad_input_is_an_error() {
    let field = |e: warpmc::Error| match e {
        warpmc::Error::InvalidParameter { field, allowed, .. } => (field, allowed),
        other => panic!("expected an invalid parameter, got {other}"),
    };
    let (f, allowed) = field(spec().with_precision(Precision::F64).validate().unwrap_err());
    assert_eq!(f, "precision");
    assert!(allowed.contains("f32"), "{allowed}");
    let (f, allowed) = field(DistSpec::new(DistKind::Gamma).with_transform(Transform::Wallace).validate().unwrap_err());
    assert_eq!(f, "transform");
    assert!(allowed.contains("box-muller"), "{allowed}");
    assert!(!allowed.contains("wallace"), "gamma does not take wallace: {allowed}");
    let (f, allowed) =
        field(DistSpec::new(DistKind::Exponential).with_transform(Transform::Wallace).validate().unwrap_err());
    assert_eq!(f, "transform");
    assert!(!allowed.contains("wallace"), "{allowed}");
    let exec = executor(1);
    let d = spec().fill();
    let init = seeded(GeneratorKind::Philox4x32x10, 1, 0, 2);
    for passes in [0, 9] {
        let (f, allowed) = field(cpu_filler(&exec, d, passes, &init).err().unwrap());
        assert_eq!(f, "passes");
        assert!(allowed.contains("[1, 8]"), "{allowed}");
    }
    let too_many = seeded(GeneratorKind::Philox4x32x10, 1, 0, POOLS_MAX + 1);
    let (f, allowed) = field(cpu_filler(&exec, d, 4, &too_many).err().unwrap());
    assert_eq!(f, "streams");
    assert!(allowed.contains("16384"), "{allowed}");
    let f64_fill = DistFill { precision: Precision::F64, ..d };
    assert_eq!(field(cpu_filler(&exec, f64_fill, 4, &init).err().unwrap()).0, "precision");
    // A Wallace filler asked for other values refuses, rather than filling them wrongly.
    let mut f = cpu_filler(&exec, d, 4, &init).unwrap();
    f.set_kind(FillKind::Normals(Mode::Exact));
    assert_eq!(field(f.fill(&mut [0u32; 8]).unwrap_err()).0, "fill kind");
}
