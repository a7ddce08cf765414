//! Distributions composed with generators, through the library's fills (the path of `warpmc
//! generate` and of device buffers): the target law for every distribution and transform in
//! every precision and mode, the same values for any CPU thread count, and (on a GPU) the same
//! bits as the CPU in exact mode for every generator, within the stated tolerance in fast mode.
//!
//! The samplers' own accuracy and law tests are beside them (`inversion.rs`,
//! `ziggurat_polar.rs`, `gamma_poisson.rs`); these test the composition.

use warpmc::backend::{BackendOptions, FillKind, StreamInit};
use warpmc::distributions::{DistKind, DistSpec, Precision, Transform};
use warpmc::generate::{Distribution, Format, GenerateSpec, generate_words};
use warpmc::generators::GeneratorKind;
use warpmc::pricing::Mode;
use warpmc::quality::chi_square_upper;
use warpmc_tests::{chi_square_test, cpu, gpu_or_skip, gpu_with, ks_test, normal_cdf};

fn seeded(generator: GeneratorKind, seed: u64, streams: u64) -> StreamInit {
    StreamInit::Seeded { generator, seed, first: 0, count: streams }
}

/// Every distribution, transform and precision the library offers, in `mode`.
fn every_spec(mode: Mode) -> Vec<DistSpec> {
    let mut out = Vec::new();
    for kind in [DistKind::Normal, DistKind::Lognormal, DistKind::Exponential, DistKind::Gamma, DistKind::Poisson] {
        let transforms: Vec<Option<Transform>> =
            if kind == DistKind::Poisson { vec![None] } else { kind.transforms().iter().map(|&t| Some(t)).collect() };
        for t in transforms {
            for precision in [Precision::F32, Precision::F64] {
                if kind == DistKind::Poisson && precision == Precision::F64 {
                    continue;
                }
                let mut d = DistSpec::new(kind).with_precision(precision).with_mode(mode);
                d.transform = t;
                match kind {
                    DistKind::Normal => (d.mean, d.sd) = (1.5, 2.0),
                    DistKind::Lognormal => (d.mean, d.sd) = (0.1, 0.5),
                    DistKind::Exponential => d.lambda = Some(2.0),
                    DistKind::Gamma => d.shape = Some(0.7),
                    DistKind::Poisson => d.lambda = Some(13.5),
                }
                d.validate().expect("a valid spec");
                out.push(d);
                if d.can_pre_cache() {
                    out.push(d.with_pre_cache(true));
                }
            }
        }
    }
    out
}

fn label(d: &DistSpec) -> String {
    let cached = if d.pre_cache { " pre-cached" } else { "" };
    format!("{} {}{cached} {:?} {:?}", d.kind.name(), d.transform().map_or("-", Transform::name), d.precision, d.mode)
}

/// `n` values of `d` as f64 (counts converted).
fn values(exec: &dyn warpmc::backend::Executor, d: &DistSpec, init: &StreamInit, n: usize) -> Vec<f64> {
    let fill = d.fill();
    let words = generate_words(exec, FillKind::Dist(fill), init, n).expect("a fill");
    if fill.is_counts() {
        words.iter().map(|&w| w as f64).collect()
    } else if fill.words_per_value() == 2 {
        words.chunks_exact(2).map(|p| f64::from_bits(p[0] as u64 | (p[1] as u64) << 32)).collect()
    } else {
        words.iter().map(|&w| f32::from_bits(w) as f64).collect()
    }
}

/// The distribution's CDF (continuous ones).
fn cdf(d: &DistSpec) -> Box<dyn Fn(f64) -> f64> {
    let d = *d;
    match d.kind {
        DistKind::Normal => Box::new(move |x| normal_cdf((x - d.mean) / d.sd)),
        DistKind::Lognormal => Box::new(move |x| if x <= 0.0 { 0.0 } else { normal_cdf((x.ln() - d.mean) / d.sd) }),
        DistKind::Exponential => {
            let l = d.lambda.unwrap_or(1.0);
            Box::new(move |x| if x <= 0.0 { 0.0 } else { -(-l * x).exp_m1() })
        }
        DistKind::Gamma => {
            let k = d.shape.unwrap();
            Box::new(move |x| if x <= 0.0 { 0.0 } else { 1.0 - chi_square_upper(2.0 * x, 2.0 * k) })
        }
        DistKind::Poisson => unreachable!("discrete"),
    }
}

/// The p-value of `x` against `d`'s law: Kolmogorov-Smirnov, or chi-square on the counts.
fn law_p(d: &DistSpec, x: &mut [f64]) -> f64 {
    if d.kind == DistKind::Poisson {
        let l = d.lambda.unwrap();
        let top = (l + 12.0 * l.sqrt() + 20.0) as usize;
        let mut counts = vec![0u64; top + 1];
        for &v in x.iter() {
            counts[(v as usize).min(top)] += 1;
        }
        let at_least = |k: usize| warpmc::quality::poisson_at_least(k as u64, l);
        let probs: Vec<f64> =
            (0..=top).map(|k| if k == top { at_least(k) } else { at_least(k) - at_least(k + 1) }).collect();
        chi_square_test(&counts, &probs).2
    } else {
        ks_test(x, cdf(d)).1
    }
}

#[test]
fn every_distribution_follows_its_law_on_the_cpu() {
    let exec = cpu(2);
    let n = 1 << 17;
    let mut failed = Vec::new();
    for mode in [Mode::Exact, Mode::Fast] {
        for d in every_spec(mode) {
            if mode == Mode::Fast && d.precision == Precision::F64 {
                continue; // the same fill as exact mode
            }
            let mut x = values(&*exec, &d, &seeded(GeneratorKind::Philox4x32x10, 7, 64), n);
            let finite = x.iter().all(|v| v.is_finite());
            let p = law_p(&d, &mut x);
            eprintln!("{:<40} p = {p:.4}{}", label(&d), if finite { "" } else { " (non-finite values)" });
            if !(p > 1e-4) || !finite {
                failed.push(format!("{} (p = {p:e}, finite {finite})", label(&d)));
            }
        }
    }
    assert!(failed.is_empty(), "failed: {failed:?}");
}

#[test]
fn a_broken_law_is_caught() {
    // The same check on values scaled by 1.02 (a normal's sd 2% high): it must fail.
    let exec = cpu(2);
    let d = DistSpec::new(DistKind::Normal);
    let mut x = values(&*exec, &d, &seeded(GeneratorKind::Philox4x32x10, 7, 64), 1 << 17);
    x.iter_mut().for_each(|v| *v *= 1.02);
    let p = law_p(&d, &mut x);
    assert!(p < 1e-4, "p = {p}");
}

#[test]
fn values_do_not_depend_on_the_thread_count() {
    for d in every_spec(Mode::Exact) {
        let init = seeded(GeneratorKind::HybridTaus, 3, 37);
        let fill = FillKind::Dist(d.fill());
        let one = generate_words(&*cpu(1), fill, &init, 10_001).unwrap();
        let many = generate_words(&*cpu(7), fill, &init, 10_001).unwrap();
        assert_eq!(one, many, "{}", label(&d));
    }
}

#[test]
fn a_stream_is_the_same_in_any_interleaving() {
    // Stream 5 of 8 interleaved streams equals stream 5 alone, for a transform that rejects.
    let exec = cpu(2);
    for d in every_spec(Mode::Exact) {
        if d.pre_cache {
            continue; // a lane's draws depend on its warp's (`pre_cached_streams_depend_on_their_warp_only`)
        }
        let fill = FillKind::Dist(d.fill());
        let w = fill.words_per_value();
        let all = generate_words(&*exec, fill, &seeded(GeneratorKind::Philox4x32x10, 11, 8), 8 * 400).unwrap();
        let alone = generate_words(
            &*exec,
            fill,
            &StreamInit::Seeded { generator: GeneratorKind::Philox4x32x10, seed: 11, first: 5, count: 1 },
            400,
        )
        .unwrap();
        let picked: Vec<u32> = (0..100).flat_map(|r| all[(r * 8 + 5) * 4 * w..][..4 * w].to_vec()).collect();
        assert_eq!(picked, alone, "{}", label(&d));
    }
}

#[test]
fn pre_cached_streams_depend_on_their_warp_only() {
    // A pre-cached fill's warps are its streams 0-31, 32-63, ...: streams 32-63 of a 64-stream
    // fill equal a 32-stream fill of the same streams (and do not depend on streams 0-31), while a
    // stream filled in another warp (alone) draws other values.
    let exec = cpu(3);
    for d in every_spec(Mode::Exact).into_iter().filter(|d| d.pre_cache) {
        let fill = FillKind::Dist(d.fill());
        let w = fill.words_per_value();
        let rows = 50;
        let all = generate_words(&*exec, fill, &seeded(GeneratorKind::Philox4x32x10, 5, 64), 64 * 4 * rows).unwrap();
        let upper = generate_words(
            &*exec,
            fill,
            &StreamInit::Seeded { generator: GeneratorKind::Philox4x32x10, seed: 5, first: 32, count: 32 },
            32 * 4 * rows,
        )
        .unwrap();
        let picked: Vec<u32> = (0..rows).flat_map(|r| all[(r * 64 + 32) * 4 * w..][..32 * 4 * w].to_vec()).collect();
        assert_eq!(picked, upper, "{}", label(&d));
        let alone = generate_words(
            &*exec,
            fill,
            &StreamInit::Seeded { generator: GeneratorKind::Philox4x32x10, seed: 5, first: 37, count: 1 },
            4 * rows,
        )
        .unwrap();
        let stream_37: Vec<u32> = (0..rows).flat_map(|r| all[(r * 64 + 37) * 4 * w..][..4 * w].to_vec()).collect();
        assert_ne!(stream_37, alone, "{}: a lane alone must draw no ghosts", label(&d));
    }
}

#[test]
fn the_general_fill_gives_the_foundation_s_normals() {
    // `warpmc generate` sends standard f32 Box-Muller normals through the foundation's tuned
    // fill; the general one must give the same values.
    let exec = cpu(2);
    let init = seeded(GeneratorKind::Philox4x32x10, 5, 16);
    for mode in [Mode::Exact, Mode::Fast] {
        let d = DistSpec::new(DistKind::Normal).with_mode(mode);
        let general = generate_words(&*exec, FillKind::Dist(d.fill()), &init, 4096).unwrap();
        let tuned = generate_words(&*exec, FillKind::Normals(mode), &init, 4096).unwrap();
        assert_eq!(general, tuned, "{mode:?}");
    }
}

fn spec(distribution: Distribution, d: DistSpec) -> GenerateSpec {
    GenerateSpec {
        distribution,
        dist: d,
        curand: None,
        precision: d.precision,
        mode: d.mode,
        count: Some(10),
        init: seeded(GeneratorKind::Philox4x32x10, 1, 1),
        format: Format::Text,
        block: warpmc::stream::DEFAULT_BLOCK,
        buffers: warpmc::stream::DEFAULT_BUFFERS,
    }
}

#[test]
fn bad_parameters_are_errors_naming_the_flag_and_range() {
    let cases: Vec<(Distribution, DistSpec, &str, &str)> = vec![
        (Distribution::Normal, DistSpec { sd: 0.0, ..DistSpec::new(DistKind::Normal) }, "--sd", "(0, inf)"),
        (Distribution::Normal, DistSpec { sd: -1.0, ..DistSpec::new(DistKind::Normal) }, "--sd", "(0, inf)"),
        (Distribution::Normal, DistSpec { sd: f64::NAN, ..DistSpec::new(DistKind::Normal) }, "--sd", "(0, inf)"),
        (Distribution::Normal, DistSpec { mean: f64::NAN, ..DistSpec::new(DistKind::Normal) }, "--mean", "finite"),
        (
            Distribution::Lognormal,
            DistSpec { sd: f64::INFINITY, ..DistSpec::new(DistKind::Lognormal) },
            "--sd",
            "(0, inf)",
        ),
        (Distribution::Gamma, DistSpec { shape: Some(0.0), ..DistSpec::new(DistKind::Gamma) }, "--shape", "(0, 1e9]"),
        (Distribution::Gamma, DistSpec { shape: Some(-2.0), ..DistSpec::new(DistKind::Gamma) }, "--shape", "(0, 1e9]"),
        (
            Distribution::Gamma,
            DistSpec { shape: Some(f64::NAN), ..DistSpec::new(DistKind::Gamma) },
            "--shape",
            "(0, 1e9]",
        ),
        (Distribution::Gamma, DistSpec::new(DistKind::Gamma), "--shape", "(0, 1e9]"),
        (
            Distribution::Poisson,
            DistSpec { lambda: Some(-0.5), ..DistSpec::new(DistKind::Poisson) },
            "--lambda",
            "[0, 2^31]",
        ),
        (
            Distribution::Poisson,
            DistSpec { lambda: Some(f64::NAN), ..DistSpec::new(DistKind::Poisson) },
            "--lambda",
            "[0, 2^31]",
        ),
        (
            Distribution::Poisson,
            DistSpec { lambda: Some(3e9), ..DistSpec::new(DistKind::Poisson) },
            "--lambda",
            "[0, 2^31]",
        ),
        (
            Distribution::Exponential,
            DistSpec { lambda: Some(0.0), ..DistSpec::new(DistKind::Exponential) },
            "--lambda",
            "(0, inf)",
        ),
        (
            Distribution::Exponential,
            DistSpec::new(DistKind::Exponential).with_transform(Transform::BoxMuller),
            "--transform",
            "inversion, ziggurat",
        ),
        (
            Distribution::Poisson,
            DistSpec { lambda: Some(1.0), transform: Some(Transform::Polar), ..DistSpec::new(DistKind::Poisson) },
            "--transform",
            "none",
        ),
        (
            Distribution::Gamma,
            DistSpec { shape: Some(2.0), mean: 1.0, ..DistSpec::new(DistKind::Gamma) },
            "--mean",
            "normal and lognormal",
        ),
        (
            Distribution::Normal,
            DistSpec { lambda: Some(2.0), ..DistSpec::new(DistKind::Normal) },
            "--lambda",
            "exponential and poisson",
        ),
        (
            Distribution::Uniform,
            DistSpec::new(DistKind::Normal).with_transform(Transform::Polar),
            "--distribution",
            "normal",
        ),
    ];
    for (dist, d, flag, range) in cases {
        let e = spec(dist, d).validate().expect_err(&format!("{dist:?} {d:?} must be refused")).to_string();
        // The library names the field; the CLI prints it as the flag (`--sd`).
        let field = format!("invalid {}", flag.trim_start_matches("--"));
        assert!(e.contains(&field) && e.contains(range), "{dist:?} {d:?}: {e}");
    }
    // A collective generator runs every transform, but not pre-cached (its warps are its own).
    for t in [Transform::Ziggurat, Transform::Inversion, Transform::Polar] {
        let mut s = spec(Distribution::Normal, DistSpec::new(DistKind::Normal).with_transform(t));
        s.init = seeded(GeneratorKind::Warp, 1, 32);
        s.validate().expect("warp + any transform");
    }
    let mut s = spec(
        Distribution::Normal,
        DistSpec::new(DistKind::Normal).with_transform(Transform::Polar).with_pre_cache(true),
    );
    s.init = seeded(GeneratorKind::WarpShfl, 1, 32);
    let e = s.validate().expect_err("warp-shfl + pre-cache").to_string();
    let mut a = spec(Distribution::Normal, DistSpec::new(DistKind::Normal).with_transform(Transform::Polar));
    a.init = seeded(GeneratorKind::Adder, 1, 32);
    let ae = a.validate().expect_err("adder + polar").to_string();
    assert!(ae.contains("invalid generator") && ae.contains("counter"), "{ae}");
    assert!(e.contains("invalid pre-cache") || e.contains("invalid pre_cache"), "{e}");
    assert!(e.contains("lockstep"), "{e}");
}

/// A rejection method on a collective generator (`warpmc_kernels::buffered`): within a fill,
/// each stream's values are the sampler's over that lane's own words in order, exactly what the
/// same sampler makes from any generator's stream, whatever the other lanes of its warp do; and
/// the values do not depend on the CPU's thread count.
#[test]
fn collective_rejection_streams_are_the_lanes_own_words() {
    use warpmc_kernels::dist::{GammaSampler, NormalSampler, Polar, PoissonSampler, Sampler, Ziggurat};
    use warpmc_kernels::real::Single;
    use warpmc_kernels::rng::{Generator, WarpShfl};
    use warpmc_kernels::Exact;
    let (first, streams, seed) = (5u64, 70u64, 17u64);
    let init = StreamInit::Seeded { generator: GeneratorKind::WarpShfl, seed, first, count: streams };
    let n = 4 * streams as usize * 23 + 3;
    // The expected words of stream `s`: its plain sampler's groups, laid out as the fill does.
    fn expect<S: Sampler>(s: &S, seed: u64, first: u64, streams: u64, n: usize) -> Vec<u32>
    where
        S::Item: warpmc_kernels::dist::Value,
    {
        use warpmc_kernels::dist::Value;
        let w = <S::Item as Value>::WORDS;
        let mut out = vec![0u32; n * w];
        for st in 0..streams as usize {
            let mut rng = WarpShfl::stream(seed, first + st as u64);
            let mut base = st * 4;
            while base < n {
                let g = s.next_group(&mut rng, &mut 0u32);
                for (i, v) in g.iter().enumerate().take((n - base).min(4)) {
                    out[(base + i) * w..][..w].copy_from_slice(&v.words()[..w]);
                }
                base += streams as usize * 4;
            }
        }
        out
    }
    let cases: Vec<(DistSpec, Vec<u32>)> = vec![
        (
            DistSpec::new(DistKind::Normal).with_transform(Transform::Polar),
            expect(&NormalSampler::<Single<Exact>, Polar>::new(0.0, 1.0, false), seed, first, streams, n),
        ),
        (
            DistSpec::new(DistKind::Normal).with_transform(Transform::Ziggurat),
            expect(&NormalSampler::<Single<Exact>, Ziggurat>::new(0.0, 1.0, false), seed, first, streams, n),
        ),
        (
            DistSpec { shape: Some(0.5), ..DistSpec::new(DistKind::Gamma) },
            expect(&GammaSampler::<Single<Exact>, warpmc_kernels::dist::BoxMuller>::new(0.5), seed, first, streams, n),
        ),
        (
            DistSpec { lambda: Some(250.0), ..DistSpec::new(DistKind::Poisson) },
            expect(&PoissonSampler { poisson: warpmc_kernels::poisson::Poisson::new(250.0) }, seed, first, streams, n),
        ),
    ];
    for (d, want) in cases {
        let fill = FillKind::Dist(d.fill());
        for threads in [1, 3] {
            let got = generate_words(&*cpu(threads), fill, &init, n).unwrap();
            let diff = got.iter().zip(&want).position(|(a, b)| a != b);
            assert_eq!(diff, None, "{}, {threads} threads: first difference at word {diff:?}", label(&d));
            assert_eq!(got.len(), want.len());
        }
    }
}

/// The generators on the GPU with every distribution: exact mode bit for bit with the CPU, for
/// several stream counts.
#[test]
fn gpu_distributions_match_cpu_bit_for_bit() {
    let Some(gpu) = gpu_or_skip("gpu_distributions_match_cpu_bit_for_bit") else { return };
    let exec = cpu(4);
    let mut checked = 0;
    for &g in GeneratorKind::ALL {
        for d in every_spec(Mode::Exact) {
            if d.check_generator(g).is_err() {
                continue;
            }
            for streams in [1u64, 67] {
                let init = seeded(g, 21, streams);
                let fill = FillKind::Dist(d.fill());
                let n = 4 * 67 * 9 + 3;
                let c = generate_words(&*exec, fill, &init, n).unwrap();
                let gv = generate_words(&*gpu, fill, &init, n).unwrap();
                let first_diff = c.iter().zip(&gv).position(|(a, b)| a != b);
                assert_eq!(first_diff, None, "{g} {} with {streams} streams", label(&d));
                checked += 1;
            }
        }
    }
    eprintln!("{checked} generator x distribution x stream-count fills bit-identical");
}

/// Launch shapes do not change the values (rejection loops diverge differently per shape).
#[test]
fn gpu_distributions_do_not_depend_on_the_launch_shape() {
    let Some(reference) = gpu_or_skip("gpu_distributions_do_not_depend_on_the_launch_shape") else { return };
    let init = seeded(GeneratorKind::Philox4x32x10, 8, 1000);
    for (block, grid) in [(32u32, 1u32), (96, 3), (352, 7)] {
        let gpu = gpu_with(
            "gpu_distributions_do_not_depend_on_the_launch_shape",
            BackendOptions { gpu_block: Some(block), gpu_grid: Some(grid), ..Default::default() },
        )
        .unwrap();
        for d in every_spec(Mode::Exact) {
            let fill = FillKind::Dist(d.fill());
            let a = generate_words(&*reference, fill, &init, 40_000).unwrap();
            let b = generate_words(&*gpu, fill, &init, 40_000).unwrap();
            assert_eq!(a, b, "{} with block {block}, grid {grid}", label(&d));
        }
    }
}

/// Fast mode: the GPU's approximate functions against the CPU's exact mode. A transform that
/// rejects can take another decision where a test lands within the functions' error of its
/// bound, and then that stream's later values differ: so the tolerance is stated on values
/// (relative 2e-3 where |x| > 1, absolute 2e-3 below) and on the share of values within it
/// (at least 99.9%).
#[test]
fn gpu_fast_distributions_within_tolerance() {
    let Some(gpu) = gpu_or_skip("gpu_fast_distributions_within_tolerance") else { return };
    let exec = cpu(4);
    let init = seeded(GeneratorKind::Philox4x32x10, 4, 256);
    for d in every_spec(Mode::Fast) {
        if d.precision == Precision::F64 || d.kind == DistKind::Poisson {
            continue; // one mode
        }
        let n = 1 << 18;
        if d.pre_cache {
            // One decision taken otherwise changes how long its whole warp loops, and so the
            // ghost draws of 31 other lanes: the tolerance is the law, not the values.
            let mut fast = values(&*gpu, &d, &init, n);
            let p = law_p(&d, &mut fast);
            eprintln!("{:<40} law p = {p:.4}", label(&d));
            assert!(p > 1e-4 && fast.iter().all(|v| v.is_finite()), "{}: p = {p}", label(&d));
            continue;
        }
        let exact = values(&*exec, &d.with_mode(Mode::Exact), &init, n);
        let fast = values(&*gpu, &d, &init, n);
        let within = exact.iter().zip(&fast).filter(|&(&e, &f)| (e - f).abs() <= 2e-3 * e.abs().max(1.0)).count();
        let share = within as f64 / n as f64;
        eprintln!("{:<40} {:.5}% within tolerance", label(&d), 100.0 * share);
        assert!(share >= 0.999, "{}: {:.4}% within", label(&d), 100.0 * share);
    }
}

/// A rejection method on a collective generator on the GPU (per-lane word buffers): the CPU's
/// bits for streams that start inside a warp, over several fills of uneven lengths through one
/// filler (so the state each fill leaves matters), and for any launch shape.
#[test]
fn gpu_collective_rejection_matches_cpu() {
    let Some(gpu) = gpu_or_skip("gpu_collective_rejection_matches_cpu") else { return };
    let host = cpu(3);
    let specs = [
        DistSpec::new(DistKind::Normal).with_transform(Transform::Polar),
        DistSpec { precision: Precision::F64, ..DistSpec::new(DistKind::Normal).with_transform(Transform::Ziggurat) },
        DistSpec { shape: Some(0.5), ..DistSpec::new(DistKind::Gamma).with_transform(Transform::Ziggurat) },
        DistSpec { lambda: Some(250.0), ..DistSpec::new(DistKind::Poisson) },
        DistSpec { lambda: Some(3.0), ..DistSpec::new(DistKind::Poisson) },
    ];
    let compare = |gpu: &dyn warpmc::backend::Executor, g: GeneratorKind, d: &DistSpec, what: &str| {
        let init = StreamInit::Seeded { generator: g, seed: 9, first: 37, count: 75 };
        let fill = FillKind::Dist(d.fill());
        let (mut a, mut b) = (gpu.filler(fill, &init).unwrap(), host.filler(fill, &init).unwrap());
        let wpv = d.words_per_value();
        for len in [4 * 75 * 10 + 1, 333, 4 * 75 * 3] {
            let (mut x, mut y) = (vec![0u32; len * wpv], vec![1u32; len * wpv]);
            a.fill(&mut x).unwrap();
            b.fill(&mut y).unwrap();
            let diff = x.iter().zip(&y).position(|(p, q)| p != q);
            assert_eq!(diff, None, "{g} {}, fill of {len} ({what})", label(d));
        }
    };
    for g in [GeneratorKind::Warp, GeneratorKind::WarpShfl] {
        for d in &specs {
            compare(&*gpu, g, d, "default launch");
        }
    }
    for (block, grid) in [(32u32, 1u32), (96, 5)] {
        let opts = BackendOptions { gpu_block: Some(block), gpu_grid: Some(grid), ..Default::default() };
        let gpu = gpu_with("gpu_collective_rejection_matches_cpu", opts).expect("GPU present above");
        compare(&*gpu, GeneratorKind::WarpShfl, &specs[0], &format!("block {block}, grid {grid}"));
        compare(&*gpu, GeneratorKind::Warp, &specs[3], &format!("block {block}, grid {grid}"));
    }
}
