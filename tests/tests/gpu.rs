//! GPU against CPU: the parity the project's structure promises.
//!
//! - Integer streams, uniforms and exact-mode normals: bit for bit, for several stream counts.
//! - Exact-mode Asian basket sums (hence prices): bit for bit, for several launch shapes.
//! - Fast mode: within stated tolerances (fast normals against an `f64` reference built from the
//!   same integer stream; fast prices against exact prices).
//!
//! Without a GPU every test prints `SKIPPED` and passes, unless `WARPMC_REQUIRE_GPU=1`, which
//! makes a missing GPU a failure (see `warpmc_tests::gpu_or_skip`).

use warpmc::backend::{BackendOptions, FillKind, StreamInit};
use warpmc::generate::generate_words;
use warpmc::generators::GeneratorKind;
use warpmc::pricing::{AsianBasket, CheckStatus, Mode, PricingJob, price_asian_basket};
use warpmc_tests::{cpu, gpu_or_skip, gpu_with};
use warpmc_kernels::asian::AsianBasketSteps;

/// Fast-mode normals: largest absolute error allowed against the `f64` Box-Muller of the same
/// words. The GPU's `lg2.approx.f32` has an absolute (not relative) error near 2^-22 around 1,
/// and `sqrt` turns an absolute error δ of `-2 ln u` into up to `sqrt(δ)` when `u` is close to
/// 1, so the bound is set by the smallest radii.
const FAST_NORMAL_ABS_TOL: f64 = 2e-3;
/// Fast-mode prices: largest relative difference from the exact-mode price of the same paths.
const FAST_PRICE_REL_TOL: f64 = 1e-4;

fn words(exec: &dyn warpmc::backend::Executor, kind: FillKind, init: &StreamInit, n: usize) -> Vec<u32> {
    generate_words(exec, kind, init, n).expect("generate")
}

fn explicit(generator: GeneratorKind, words: &[u32]) -> StreamInit {
    warpmc::generate::GenerateSpec::explicit(generator, words).expect("a valid state")
}

#[test]
fn gpu_known_answers() {
    let Some(gpu) = gpu_or_skip("gpu_known_answers") else { return };
    let init = explicit(GeneratorKind::HybridTaus, &[12345; 4]);
    assert_eq!(words(&*gpu, FillKind::Words, &init, 5), [1717149490, 1013719216, 2431227087, 838963927, 3550480589]);
    let init = explicit(GeneratorKind::HybridTaus, &[129, 130, 131, 132]);
    assert_eq!(words(&*gpu, FillKind::Words, &init, 5), [1217370641, 3227414615, 1904114233, 2387917307, 3549388247]);
    // Published values of other generators, on the GPU.
    let init = explicit(GeneratorKind::Mrg32k3a, &[12345; 6]);
    assert_eq!(words(&*gpu, FillKind::Words, &init, 3), [545508589, 1368065410, 1327943761]);
    let init = explicit(GeneratorKind::Philox4x32x10, &[0; 6]);
    assert_eq!(words(&*gpu, FillKind::Words, &init, 4), [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]);
    // The warp generator's published sample state, in both GPU forms: each lane drawn alone (the
    // other 31 lanes of the hardware warp step with it without writing), then the published XOR
    // and sum of the 32 lanes' first 1000 outputs.
    for generator in [GeneratorKind::Warp, GeneratorKind::WarpShfl] {
        let (mut x, mut sum) = (0u32, 0u32);
        for lane in 0..32 {
            let mut state = warpmc_kernels::rng::warp::SAMPLE_SEED.to_vec();
            state.push(lane);
            let w = words(&*gpu, FillKind::Words, &explicit(generator, &state), 1000);
            if lane == 0 {
                assert_eq!(w[..2], [0x0468a7d4, 0xc9b00219], "{generator}");
            }
            for v in w {
                x ^= v;
                sum = sum.wrapping_add(v);
            }
        }
        assert_eq!((x, sum), (0x4f1474d6, 0x8797fd84), "{generator}");
    }
}

#[test]
fn gpu_streams_match_cpu_bit_for_bit() {
    let Some(gpu) = gpu_or_skip("gpu_streams_match_cpu_bit_for_bit") else { return };
    let host = cpu(2);
    for &generator in GeneratorKind::ALL {
        for (streams, n) in [(1u64, 10_007usize), (3, 100_003), (4096, 1 << 22), (100_000, 1 << 22)] {
            let init = StreamInit::Seeded { generator, seed: 0xDEAD_BEEF, first: 17, count: streams };
            for kind in [FillKind::Words, FillKind::Uniforms, FillKind::UniformsF64, FillKind::Normals(Mode::Exact)] {
                let g = words(&*gpu, kind, &init, n);
                let c = words(&*host, kind, &init, n);
                let first_diff = g.iter().zip(&c).position(|(a, b)| a != b);
                assert_eq!(
                    first_diff, None,
                    "{generator}, {kind:?}, {streams} streams, {n} values: first difference at index {first_diff:?}"
                );
            }
        }
    }
}

/// The fills of 8-byte values store a pair of lanes' groups together (`store_group_paired`: a
/// shuffle between the lanes, for warps whose 32 streams exist, in rows where every group is
/// whole) and the rest one lane at a time: the values are the CPU's for launch shapes where
/// threads loop over streams, the last warp of streams is partial, and rows are cut.
#[test]
fn gpu_f64_fills_match_cpu_for_any_launch_shape() {
    let host = cpu(2);
    for (block, grid) in [(None, None), (Some(96), Some(3)), (Some(32), Some(1)), (Some(512), Some(2))] {
        let opts = BackendOptions { gpu_block: block, gpu_grid: grid, ..Default::default() };
        let Some(gpu) = gpu_with("gpu_f64_fills_match_cpu_for_any_launch_shape", opts) else { return };
        for generator in [
            GeneratorKind::Philox4x32x10,
            GeneratorKind::Xorwow,
            GeneratorKind::Mrg32k3a,
            GeneratorKind::Gm55,
            GeneratorKind::WarpShfl,
        ] {
            for (streams, n) in [(1000u64, 4 * 1000 * 5 + 3), (64, 4 * 64 * 7), (33, 100_003), (2048, 1 << 20)] {
                let init = StreamInit::Seeded { generator, seed: 99, first: 5, count: streams };
                let g = words(&*gpu, FillKind::UniformsF64, &init, n);
                let c = words(&*host, FillKind::UniformsF64, &init, n);
                let first_diff = g.iter().zip(&c).position(|(a, b)| a != b);
                assert_eq!(
                    first_diff, None,
                    "{generator}, {streams} streams, {n} values, block {block:?} grid {grid:?}: first difference at word {first_diff:?}"
                );
            }
        }
    }
}

/// MT19937's GPU kernels give each stream a warp (`rng::WarpStream`: a ring of two blocks in
/// shared memory, 32 groups per round, a twist when a round runs past the block). Its values
/// must still be the CPU's for every launch shape (a grid of one block loops over the streams;
/// a block of 512 takes 110 KiB of shared memory, over twice the default limit), from stream 0 (the
/// serial `init_genrand` / `init_by_array` on lane 0), and from raw states at any index
/// (groups that straddle a twist, f64 groups of 8 words from an odd index), over several
/// launches (the fill writes the state back and the next launch resumes from it).
#[test]
fn gpu_warp_stream_fills_match_cpu() {
    let host = cpu(2);
    let mut raw: Vec<u32> = (0..624u32).map(|k| k.wrapping_mul(2_654_435_761) ^ 0x5bd1_e995).collect();
    raw.push(0);
    let mut inits = vec![
        StreamInit::Seeded { generator: GeneratorKind::Mt19937, seed: 5489, first: 0, count: 5 },
        StreamInit::Seeded { generator: GeneratorKind::Mt19937, seed: (1 << 40) + 3, first: 0, count: 33 },
        StreamInit::Seeded { generator: GeneratorKind::Mt19937, seed: 9, first: 1000, count: 700 },
    ];
    for mti in [0u32, 1, 417, 621, 623, 624] {
        raw[624] = mti;
        inits.push(explicit(GeneratorKind::Mt19937, &raw));
    }
    for (block, grid) in [(None, None), (Some(32), Some(1)), (Some(512), Some(3)), (Some(96), Some(1000))] {
        let opts = BackendOptions { gpu_block: block, gpu_grid: grid, ..Default::default() };
        let Some(gpu) = gpu_with("gpu_warp_stream_fills_match_cpu", opts) else { return };
        for init in &inits {
            for kind in [FillKind::Words, FillKind::UniformsF64, FillKind::Normals(Mode::Exact)] {
                for n in [1usize, 4999, 300_001] {
                    let g = words(&*gpu, kind, init, n);
                    let c = words(&*host, kind, init, n);
                    let first_diff = g.iter().zip(&c).position(|(a, b)| a != b);
                    assert_eq!(
                        (first_diff, g.len()),
                        (None, c.len()),
                        "block {block:?}, grid {grid:?}, {init:?}, {kind:?}, {n} values"
                    );
                }
            }
        }
    }
}

/// Box-Muller in `f64` from the same two words (the reference for fast mode).
fn box_muller_f64(z0: u32, z1: u32) -> (f64, f64) {
    let u0 = warpmc_kernels::convert::u32_to_unit_open_closed(z0) as f64;
    let r = (-2.0 * u0.ln()).sqrt();
    let t = std::f64::consts::TAU * (z1 as f64 / 4_294_967_296.0);
    (r * t.sin(), r * t.cos())
}

#[test]
fn gpu_fast_normals_within_tolerance() {
    let Some(gpu) = gpu_or_skip("gpu_fast_normals_within_tolerance") else { return };
    let init = StreamInit::Seeded { generator: GeneratorKind::HybridTaus, seed: 99, first: 0, count: 1 };
    let n = 1 << 22;
    let raw = words(&*cpu(2), FillKind::Words, &init, n);
    let fast = words(&*gpu, FillKind::Normals(Mode::Fast), &init, n);
    let (mut max_abs, mut at, mut max_rel_big) = (0.0f64, 0usize, 0.0f64);
    for i in (0..n).step_by(2) {
        let (r0, r1) = box_muller_f64(raw[i], raw[i + 1]);
        for (j, r) in [(i, r0), (i + 1, r1)] {
            let e = (f32::from_bits(fast[j]) as f64 - r).abs();
            if e > max_abs {
                (max_abs, at) = (e, j);
            }
            if r.abs() > 1.0 {
                max_rel_big = max_rel_big.max(e / r.abs());
            }
        }
    }
    eprintln!(
        "fast normals on the GPU: max abs error {max_abs:.3e} (at index {at}, value {}), max rel error for |n| > 1: {max_rel_big:.3e}",
        f32::from_bits(fast[at])
    );
    assert!(max_abs < FAST_NORMAL_ABS_TOL, "max abs error {max_abs:e}");
    assert!(max_rel_big < 1e-5, "max relative error for |n| > 1: {max_rel_big:e}");
}

fn job(paths: u64, steps: u32, mode: Mode) -> PricingJob {
    PricingJob { option: AsianBasket::default(), steps, paths, seed: 2024, mode, ..Default::default() }
}

#[test]
fn gpu_exact_prices_match_cpu_for_any_launch_shape() {
    let Some(_) = gpu_or_skip("gpu_exact_prices_match_cpu_for_any_launch_shape") else { return };
    let j = job(100_003, 64, Mode::Exact);
    let steps = j.option.kernel_job(j.steps).steps;
    let reference = cpu(3).asian_basket(&steps, j.generator, j.seed, 0..j.paths, Mode::Exact).unwrap();
    assert_eq!(reference.n, j.paths);
    for (block, grid) in
        [(None, None), (Some(32), Some(1)), (Some(64), Some(7)), (Some(512), Some(3)), (Some(96), Some(20_000))]
    {
        let opts = BackendOptions { gpu_block: block, gpu_grid: grid, ..Default::default() };
        let gpu = gpu_with("gpu_exact_prices_match_cpu_for_any_launch_shape", opts).expect("GPU present above");
        let m = gpu.asian_basket(&steps, j.generator, j.seed, 0..j.paths, Mode::Exact).unwrap();
        assert_eq!(m, reference, "block {block:?}, grid {grid:?}");
        // And through the public pricing call, batching included.
        let g = price_asian_basket(&*gpu, &j).unwrap();
        let c = price_asian_basket(&*cpu(2), &j).unwrap();
        assert_eq!(g.price.to_bits(), c.price.to_bits());
        assert_eq!(g.std_error.to_bits(), c.std_error.to_bits());
    }
}

/// Every generator feeds the Asian basket on the GPU exactly as on the CPU (exact mode), and
/// fast mode prices agree with exact ones within the tolerance.
#[test]
fn gpu_every_generator_prices_like_the_cpu() {
    let Some(gpu) = gpu_or_skip("gpu_every_generator_prices_like_the_cpu") else { return };
    let host = cpu(2);
    for &generator in GeneratorKind::ALL {
        let j = PricingJob { steps: 64, paths: 20_011, seed: 5, generator, ..Default::default() };
        let p = j.option.kernel_job(j.steps).steps;
        let g = gpu.asian_basket(&p, generator, j.seed, 0..j.paths, Mode::Exact).unwrap();
        assert_eq!(g, host.asian_basket(&p, generator, j.seed, 0..j.paths, Mode::Exact).unwrap(), "{generator}");
        let exact = price_asian_basket(&*gpu, &j).unwrap();
        let fast = price_asian_basket(&*gpu, &PricingJob { mode: Mode::Fast, ..j }).unwrap();
        let rel = (fast.price - exact.price).abs() / exact.price;
        eprintln!("{generator}: GPU exact {} ± {}, fast rel diff {rel:.2e}", exact.price, exact.std_error);
        assert!(rel < FAST_PRICE_REL_TOL, "{generator}: fast vs exact {rel:e}");
    }
}

/// Every normal transform feeds the basket on the GPU (`asian_basket_any_*`) exactly as on the
/// CPU in exact mode, for per-thread and collective generators (the fixed-word transforms on
/// the latter); fast mode prices agree with exact ones within the tolerance.
#[test]
fn gpu_every_transform_prices_like_the_cpu() {
    use warpmc::distributions::Transform;
    let Some(gpu) = gpu_or_skip("gpu_every_transform_prices_like_the_cpu") else { return };
    let host = cpu(2);
    let transforms = [Transform::Inversion, Transform::InversionNaive, Transform::Polar, Transform::Ziggurat];
    for generator in [GeneratorKind::Philox4x32x10, GeneratorKind::HybridTaus, GeneratorKind::WarpShfl] {
        for t in transforms {
            let j = PricingJob { steps: 48, paths: 20_011, seed: 9, generator, transform: t, ..Default::default() };
            if j.validate().is_err() {
                // Rejection with a collective generator: refused by both backends alike.
                assert!(price_asian_basket(&*gpu, &j).is_err() && price_asian_basket(&*host, &j).is_err());
                continue;
            }
            let p = AsianBasketSteps { normals: t.code(), ..j.option.kernel_job(j.steps).steps };
            let g = gpu.asian_basket(&p, generator, j.seed, 0..j.paths, Mode::Exact).unwrap();
            assert_eq!(g.n, j.paths);
            assert_eq!(g, host.asian_basket(&p, generator, j.seed, 0..j.paths, Mode::Exact).unwrap(), "{generator} {}", t.name());
            let exact = price_asian_basket(&*gpu, &j).unwrap();
            let fast = price_asian_basket(&*gpu, &PricingJob { mode: Mode::Fast, ..j }).unwrap();
            let rel = (fast.price - exact.price).abs() / exact.price;
            eprintln!("{generator} {}: GPU exact {} ± {}, fast rel diff {rel:.2e}", t.name(), exact.price, exact.std_error);
            assert!(rel < FAST_PRICE_REL_TOL, "{generator} {}: fast vs exact {rel:e}", t.name());
            assert_eq!(exact.check.status, CheckStatus::Passed, "{generator} {}", t.name());
        }
    }
    // A launch shape does not change a rejection transform's sums.
    let p = AsianBasketSteps { normals: Transform::Ziggurat.code(), ..AsianBasket::default().kernel_job(16).steps };
    let reference = host.asian_basket(&p, GeneratorKind::Philox4x32x10, 3, 0..30_001, Mode::Exact).unwrap();
    for (block, grid) in [(Some(32), Some(1)), (Some(128), Some(9))] {
        let opts = BackendOptions { gpu_block: block, gpu_grid: grid, ..Default::default() };
        let gpu = gpu_with("gpu_every_transform_prices_like_the_cpu", opts).expect("GPU present above");
        let m = gpu.asian_basket(&p, GeneratorKind::Philox4x32x10, 3, 0..30_001, Mode::Exact).unwrap();
        assert_eq!(m, reference, "block {block:?}, grid {grid:?}");
    }
}

#[test]
fn gpu_fast_price_within_tolerance_of_exact() {
    let Some(gpu) = gpu_or_skip("gpu_fast_price_within_tolerance_of_exact") else { return };
    let exact = price_asian_basket(&*gpu, &job(1 << 20, 256, Mode::Exact)).unwrap();
    let fast = price_asian_basket(&*gpu, &job(1 << 20, 256, Mode::Fast)).unwrap();
    let cpu_fast = price_asian_basket(&*cpu(2), &job(1 << 16, 256, Mode::Fast)).unwrap();
    let gpu_fast_small = price_asian_basket(&*gpu, &job(1 << 16, 256, Mode::Fast)).unwrap();
    let rel = (fast.price - exact.price).abs() / exact.price;
    let rel_cpu = (cpu_fast.price - gpu_fast_small.price).abs() / cpu_fast.price;
    eprintln!(
        "GPU fast {} vs GPU exact {}: rel diff {rel:.2e} (std error {:.2e}); CPU fast vs GPU fast (2^16 paths): {rel_cpu:.2e}",
        fast.price, exact.price, exact.std_error
    );
    assert!(rel < FAST_PRICE_REL_TOL, "fast vs exact relative difference {rel:e}");
    assert!(rel_cpu < FAST_PRICE_REL_TOL, "CPU fast vs GPU fast relative difference {rel_cpu:e}");
    assert_eq!((fast.check.status, exact.check.status), (CheckStatus::Passed, CheckStatus::Passed));
}

/// Small volatilities, long paths (where the chapter's `f32` path was biased by 9% and 40%): the
/// GPU's exact sums equal the CPU's bit for bit, and fast mode agrees with exact mode on the same
/// paths to a small fraction of a standard error. (`tests/tests/precision.rs` ties exact mode to
/// an `f64` re-implementation of the same paths on the CPU.)
#[test]
fn gpu_small_volatility_prices_agree_across_modes_and_backends() {
    let Some(gpu) = gpu_or_skip("gpu_small_volatility_prices_agree_across_modes_and_backends") else { return };
    for (vol, steps, paths) in [(1e-4, 1000u32, 1u64 << 16), (0.01, 100_000, 1 << 14)] {
        let o = AsianBasket { vol_a: vol, vol_b: vol, rate: 0.0, ..Default::default() };
        let j = PricingJob { option: o, steps, paths, seed: 7, mode: Mode::Exact, ..Default::default() };
        let exact = price_asian_basket(&*gpu, &j).unwrap();
        let fast = price_asian_basket(&*gpu, &PricingJob { mode: Mode::Fast, ..j }).unwrap();
        let gap = (fast.price - exact.price) / exact.std_error;
        eprintln!(
            "vols {vol}, {steps} steps, {paths} paths: GPU exact {:.9e} ± {:.3e}, fast {:.9e}: {gap:+.4} std errors; \
             rounding bound {:.3e}",
            exact.price, exact.std_error, fast.price, exact.rounding_bound
        );
        assert!(gap.abs() < 0.1, "fast and exact differ by {gap} standard errors");
        assert_eq!((exact.check.status, fast.check.status), (CheckStatus::Passed, CheckStatus::Passed));
        if steps <= 1000 {
            let p = o.kernel_job(steps).steps;
            let g = gpu.asian_basket(&p, j.generator, 7, 0..paths, Mode::Exact).unwrap();
            assert_eq!(g, cpu(2).asian_basket(&p, j.generator, 7, 0..paths, Mode::Exact).unwrap());
        }
    }
}

#[test]
fn gpu_constant_baseline_covers_every_path() {
    let Some(gpu) = gpu_or_skip("gpu_constant_baseline_covers_every_path") else { return };
    let steps = AsianBasket::default().kernel_job(32).steps;
    let m = gpu.asian_basket_constant(&steps, 0..50_001).unwrap();
    assert_eq!((m.n, m.out_of_range), (50_001, 0));
    // With x = dx = 0 every path is the same deterministic path: the CPU's sum has the same
    // count and, within fast-math rounding, the same mean.
    let c = cpu(2).asian_basket_constant(&steps, 0..50_001).unwrap();
    let (g_mean, c_mean) = (m.sum_a.to_f64() / m.n as f64, c.sum_a.to_f64() / c.n as f64);
    assert!((g_mean - c_mean).abs() <= 1e-5 * c_mean.abs().max(1e-3), "{g_mean} vs {c_mean}");
}

#[test]
fn gpu_rejects_bad_launch_shapes() {
    if gpu_or_skip("gpu_rejects_bad_launch_shapes").is_none() {
        return;
    }
    for block in [0u32, 48, 2048] {
        let err = warpmc::backend::open(&BackendOptions {
            kind: warpmc::backend::BackendKind::Gpu,
            gpu_block: Some(block),
            ..Default::default()
        })
        .err()
        .expect("rejected");
        assert!(err.to_string().contains("gpu_block"), "{err}");
    }
}

/// A bulk generator of `generator` on `exec` with these settings.
fn bulk<'e>(
    exec: &'e dyn warpmc::backend::Executor,
    generator: GeneratorKind,
    seed: u64,
    offset: u64,
    ordering: warpmc::bulk::Ordering,
) -> warpmc::bulk::BulkGenerator<'e> {
    let mut b = warpmc::bulk::BulkGenerator::new(exec, generator);
    b.set_seed(seed);
    b.set_offset(offset);
    b.set_ordering(ordering).unwrap();
    b
}

/// cuRAND's host-API layout on the GPU (the `curand_host_*` kernels, into device memory) equals
/// the CPU's, which the unit tests of `warpmc::curand_host` tie to cuRAND's own output: every
/// generator cuRAND has, both orderings, offsets, every value type, successive and mixed calls,
/// and more values than one round of the lanes. Two launch shapes: the default grid, a whole
/// number of threads per lane (each thread keeps its lane), and a small odd grid of blocks of
/// 96, where threads take pieces of any lane.
#[test]
fn gpu_curand_host_layout_matches_cpu() {
    let Some(gpu) = gpu_or_skip("gpu_curand_host_layout_matches_cpu") else { return };
    curand_host_layout_matches_cpu_on(&*gpu);
    let shaped = BackendOptions { gpu_block: Some(96), gpu_grid: Some(7), ..Default::default() };
    let Some(gpu) = gpu_with("gpu_curand_host_layout_matches_cpu", shaped) else { return };
    curand_host_layout_matches_cpu_on(&*gpu);
}

fn curand_host_layout_matches_cpu_on(gpu: &dyn warpmc::backend::Executor) {
    use warpmc::bulk::Ordering;
    let host = cpu(2);
    let g = gpu.as_gpu().expect("a GPU executor");
    for generator in [GeneratorKind::Xorwow, GeneratorKind::Mrg32k3aCurand, GeneratorKind::Philox4x32x10] {
        for ordering in [Ordering::CurandLegacy, Ordering::CurandDefault] {
            for offset in [0u64, 77, 262_147] {
                let (mut on_gpu, mut on_cpu) =
                    (bulk(gpu, generator, 1234, offset, ordering), bulk(&*host, generator, 1234, offset, ordering));
                // u32, f64, f32, u32 in a row: the history rule of mixed calls.
                let (a, b, c, d) = (300_001usize, 5_003, 70_000, 17);
                let mut dev = g.stream().alloc_zeros::<u32>(a).unwrap();
                on_gpu.generate_device(&mut dev).unwrap();
                let got = g.stream().clone_dtoh(&dev).unwrap();
                let mut want = vec![0u32; a];
                on_cpu.generate(&mut want).unwrap();
                assert_eq!(got, want, "{generator} {ordering:?} offset {offset} u32");
                let mut dev = g.stream().alloc_zeros::<f64>(b).unwrap();
                on_gpu.generate_device(&mut dev).unwrap();
                let got = g.stream().clone_dtoh(&dev).unwrap();
                let mut want = vec![0f64; b];
                on_cpu.generate(&mut want).unwrap();
                assert_eq!(got, want, "{generator} {ordering:?} offset {offset} f64");
                let mut got = vec![0f32; c];
                on_gpu.generate(&mut got).unwrap(); // host memory through the GPU
                let mut want = vec![0f32; c];
                on_cpu.generate(&mut want).unwrap();
                assert_eq!(got, want, "{generator} {ordering:?} offset {offset} f32");
                let mut got = vec![0u32; d];
                on_gpu.generate(&mut got).unwrap();
                let mut want = vec![0u32; d];
                on_cpu.generate(&mut want).unwrap();
                assert_eq!(got, want, "{generator} {ordering:?} offset {offset} u32 after the others");
            }
        }
    }
}

/// The bulk API's streams ordering into device memory equals the CPU's, for every generator
/// (collective ones too), with an offset and calls of any size.
#[test]
fn gpu_bulk_streams_into_device_memory_match_cpu() {
    use warpmc::bulk::Ordering;
    let Some(gpu) = gpu_or_skip("gpu_bulk_streams_into_device_memory_match_cpu") else { return };
    let host = cpu(2);
    let g = gpu.as_gpu().expect("a GPU executor");
    for &generator in GeneratorKind::ALL {
        let ordering = Ordering::Streams(333);
        let (mut on_gpu, mut on_cpu) =
            (bulk(&*gpu, generator, 42, 1001, ordering), bulk(&*host, generator, 42, 1001, ordering));
        for n in [5usize, 4 * 333 * 3 + 7, 100_003] {
            let mut dev = g.stream().alloc_zeros::<f32>(n).unwrap();
            on_gpu.generate_device(&mut dev).unwrap();
            let got = g.stream().clone_dtoh(&dev).unwrap();
            let mut want = vec![0f32; n];
            on_cpu.generate(&mut want).unwrap();
            let first_diff = got.iter().zip(&want).position(|(a, b)| a.to_bits() != b.to_bits());
            assert_eq!(first_diff, None, "{generator}, call of {n}");
        }
    }
}

/// Wallace's pools (`--transform wallace`) on the GPU equal the CPU's bit for bit: every
/// generator, several pool counts and lengths (ending inside a round), the normal's parameters
/// and the log-normal, and launch shapes (the grid is free; the block is always 256, whatever
/// `gpu_block` says).
#[test]
fn gpu_wallace_matches_cpu_bit_for_bit() {
    use warpmc::distributions::{DistKind, DistSpec, Transform};
    use warpmc_kernels::wallace::POOL;
    let host = cpu(2);
    let standard = DistSpec::new(DistKind::Normal).with_transform(Transform::Wallace);
    let affine = DistSpec { mean: 1.5, sd: 2.0, ..standard };
    let log = DistSpec { mean: 0.1, sd: 0.5, ..DistSpec::new(DistKind::Lognormal).with_transform(Transform::Wallace) };
    for (block, grid) in [(None, None), (Some(96), Some(7)), (None, Some(1))] {
        let opts = BackendOptions { gpu_block: block, gpu_grid: grid, ..Default::default() };
        let Some(gpu) = gpu_with("gpu_wallace_matches_cpu_bit_for_bit", opts) else { return };
        for &generator in GeneratorKind::ALL {
            for (pools, n) in [(1u64, 3 * POOL + 5), (3, 1), (37, 2 * 37 * POOL - 1), (300, 300 * POOL + 4097)] {
                let init = StreamInit::Seeded { generator, seed: 0xC0FFEE, first: 3, count: pools };
                for d in [standard, affine, log] {
                    if (d != standard || grid.is_some())
                        && !matches!(generator, GeneratorKind::Philox4x32x10 | GeneratorKind::Warp)
                    {
                        continue; // the parameters and launch shapes on two generators; the layout on all
                    }
                    let kind = FillKind::Dist(d.fill());
                    let (g, c) = (words(&*gpu, kind, &init, n), words(&*host, kind, &init, n));
                    let first_diff = g.iter().zip(&c).position(|(a, b)| a != b);
                    assert_eq!(
                        first_diff,
                        None,
                        "{generator}, {} {pools} pools, {n} values, block {block:?} grid {grid:?}: first difference at {first_diff:?}",
                        d.kind.name()
                    );
                }
            }
        }
    }
}

/// The pools persist across the fills of one filler on the GPU as on the CPU: fills of uneven
/// lengths give the CPU's values, and the same values as one fill of their total; with 1 and 8
/// passes too.
#[test]
fn gpu_wallace_pools_persist_across_fills() {
    use warpmc::backend::Filler;
    use warpmc::distributions::{DistKind, DistSpec, Transform};
    use warpmc::wallace::{cpu_filler, gpu_filler};
    use warpmc_kernels::wallace::POOL;
    let Some(gpu) = gpu_or_skip("gpu_wallace_pools_persist_across_fills") else { return };
    let g = gpu.as_gpu().expect("a GPU executor");
    let host = warpmc::backend::cpu::CpuExecutor::new(Some(2)).unwrap();
    let d = DistSpec::new(DistKind::Normal).with_transform(Transform::Wallace).fill();
    let run = |f: &mut dyn Filler, lens: &[usize]| -> Vec<u32> {
        let mut out = Vec::new();
        for &n in lens {
            let mut buf = vec![0u32; n];
            f.fill(&mut buf).unwrap();
            out.extend(buf);
        }
        out
    };
    for generator in [GeneratorKind::Philox4x32x10, GeneratorKind::Mt19937, GeneratorKind::WarpShfl] {
        for (pools, passes) in [(5u64, 1u32), (64, 4), (2, 8)] {
            let init = StreamInit::Seeded { generator, seed: 11, first: 0, count: pools };
            let round = pools as usize * POOL;
            let lens = [round / 2 + 3, round, 2 * round + 1, 7];
            let on_gpu = run(gpu_filler(g, d, passes, &init).unwrap().as_mut(), &lens);
            let on_cpu = run(cpu_filler(&host, d, passes, &init).unwrap().as_mut(), &lens);
            let whole = run(gpu_filler(g, d, passes, &init).unwrap().as_mut(), &[lens.iter().sum()]);
            let what = format!("{generator}, {pools} pools, {passes} passes");
            assert_eq!(on_gpu.iter().zip(&on_cpu).position(|(a, b)| a != b), None, "{what}: GPU against CPU");
            assert_eq!(on_gpu, whole, "{what}: split fills against one fill");
        }
    }
}

/// Issue 10: the GPU's streaming pipeline (page-locked buffers, a copy stream each) hands out
/// the direct fill's values bit for bit, which equal the CPU's, for several block sizes and
/// buffer counts; Wallace's pools stream through the producer thread; dropping an endless
/// stream stops the GPU's work.
#[test]
fn gpu_streams_equal_the_direct_fill() {
    use std::sync::Arc;
    use std::sync::atomic::Ordering;

    use warpmc::distributions::{DistKind, DistSpec, Transform};
    use warpmc::stream::{BlockStream, Producer, StreamSpec};
    let Some(gpu) = gpu_or_skip("gpu_streams_equal_the_direct_fill") else { return };
    let gpu: Arc<dyn warpmc::backend::Executor> = Arc::from(gpu);
    let on_cpu = cpu(2);
    let dist = |t: Transform| {
        FillKind::Dist(DistSpec { transform: Some(t), ..DistSpec::new(DistKind::Normal) }.with_mode(Mode::Exact).fill())
    };
    let seeded = |generator, first, count| StreamInit::Seeded { generator, seed: 5, first, count };
    let cases = [
        (FillKind::Words, seeded(GeneratorKind::Philox4x32x10, 0, 4096), Producer::GpuPipeline),
        (FillKind::Words, seeded(GeneratorKind::WarpShfl, 37, 100), Producer::GpuPipeline),
        (FillKind::UniformsF64, seeded(GeneratorKind::Mrg32k3a, 1, 777), Producer::GpuPipeline),
        (FillKind::Normals(Mode::Exact), seeded(GeneratorKind::HybridTaus, 0, 512), Producer::GpuPipeline),
        (dist(Transform::Polar), seeded(GeneratorKind::LcgPrime, 0, 1024), Producer::GpuPipeline),
        (dist(Transform::Wallace), seeded(GeneratorKind::Philox4x32x10, 0, 256), Producer::Thread),
    ];
    let count = 300_007usize;
    for (kind, init, producer) in &cases {
        let want = words(&*gpu, *kind, init, count);
        assert!(want == words(&*on_cpu, *kind, init, count), "{kind:?} {init:?}: the GPU's fill is not the CPU's");
        for (block, buffers) in [(1, 2), (70_000, 3), (1 << 16, 8), (1 << 20, 2)] {
            let spec = StreamSpec { kind: *kind, init: init.clone(), count: Some(count as u64), block, buffers };
            let mut s = BlockStream::open(gpu.clone(), &spec).unwrap();
            assert_eq!(s.producer(), *producer);
            let mut got = Vec::with_capacity(want.len());
            while let Some(b) = s.next_block() {
                got.extend_from_slice(b.unwrap());
            }
            assert!(got == want, "{kind:?} {init:?} block {block} buffers {buffers}");
        }
    }
    let spec = StreamSpec {
        kind: FillKind::Words,
        init: seeded(GeneratorKind::Philox4x32x10, 0, 1 << 14),
        count: None,
        block: 1 << 20,
        buffers: 4,
    };
    let mut s = BlockStream::open(gpu, &spec).unwrap();
    let counter = s.produced_counter();
    for _ in 0..10 {
        assert!(s.advance().unwrap());
    }
    drop(s);
    let n = counter.load(Ordering::Acquire);
    std::thread::sleep(std::time::Duration::from_millis(100));
    assert_eq!(counter.load(Ordering::Acquire), n);
    assert!((10..=14).contains(&n), "{n} blocks launched");
}

/// The integrator on the GPU gives the CPU's result bit for bit (estimate, error, final grid) for
/// several integrands, generators and dimensions, for the default and an odd launch shape, with
/// the bins summed in shared memory (32 dimensions x 128 bins: 64 KiB, above the 48 KiB a launch
/// takes without opting in) and (32 x 512 bins, 256 KiB, above what a block may opt in to) in
/// global memory, and with the
/// points split between two executors (the second GPU where there is one, else a second context
/// on the same GPU).
#[test]
fn gpu_integration_matches_the_cpu_bit_for_bit() {
    use warpmc::backend::BackendKind;
    use warpmc::backend::gpu::GpuExecutor;
    use warpmc::integrands::{Family, IntegrandSpec};
    use warpmc::integrate::{Integrand, IntegrateSpec, VegasRunner, integrate};
    let Some(g) = gpu_or_skip("gpu_integration_matches_the_cpu_bit_for_bit") else { return };
    let gpu = g.as_gpu().expect("a GPU executor");
    let shaped = GpuExecutor::new(&BackendOptions {
        kind: BackendKind::Gpu,
        gpu_block: Some(64),
        gpu_grid: Some(7),
        ..Default::default()
    })
    .unwrap();
    let devices = cudarc_device_count();
    let second =
        GpuExecutor::new(&BackendOptions { kind: BackendKind::Gpu, gpu_device: devices.min(2) - 1, ..Default::default() })
            .unwrap();
    let cpu = warpmc::backend::cpu::CpuExecutor::new(Some(3)).unwrap();
    let cases = [
        (Family::Gaussian, 4, GeneratorKind::Philox4x32x10, 64),
        (Family::NarrowGaussians, 8, GeneratorKind::Mrg32k3a, 128),
        (Family::Oscillatory, 32, GeneratorKind::Xorwow, 512),
        (Family::Oscillatory, 32, GeneratorKind::Philox4x32x10, 128),
        (Family::CornerPeak, 3, GeneratorKind::HybridTaus, 32),
        (Family::Discontinuous, 5, GeneratorKind::Mt19937, 16),
        (Family::ProductPeak, 2, GeneratorKind::Gm31, 256),
        (Family::Continuous, 6, GeneratorKind::Kiss, 50),
        // The warp generators' collective kernel: tiles of 32768 points, a warp's lanes drawing
        // together (`warp` keeps the warp's state in shared memory before the bins).
        (Family::Gaussian, 9, GeneratorKind::Warp, 100),
        (Family::Oscillatory, 32, GeneratorKind::WarpShfl, 128),
        (Family::ProductPeak, 3, GeneratorKind::Warp, 512),
    ];
    for (family, dim, generator, bins) in cases {
        let is = IntegrandSpec::new(family, dim).unwrap();
        let p = is.params();
        let spec = IntegrateSpec {
            generator,
            bins,
            evals_per_iteration: if generator == GeneratorKind::Mt19937 { 8_000 } else { 60_000 },
            max_iterations: 5,
            ..IntegrateSpec::new(dim)
        };
        let run = |runners: &[&dyn VegasRunner]| integrate(&spec, &Integrand::Builtin(&p), runners, |_| {}).unwrap();
        let want = run(&[&cpu]);
        for (label, runners) in
            [("one GPU", vec![gpu as &dyn VegasRunner]), ("block 64 x 7", vec![&shaped as &dyn VegasRunner]), ("two executors", vec![gpu as &dyn VegasRunner, &second])]
        {
            let got = run(&runners);
            let what = format!("{} d={dim} {generator:?} on {label}", family.name());
            assert_eq!(got.estimate.to_bits(), want.estimate.to_bits(), "{what}: {} vs {}", got.estimate, want.estimate);
            assert_eq!(got.std_error.to_bits(), want.std_error.to_bits(), "{what}");
            assert_eq!(got.grid, want.grid, "{what}: the grids differ");
        }
        let z = (want.estimate - is.exact()) / want.std_error;
        assert!(z.abs() < 5.0, "{} d={dim}: {} ± {} vs {} (z = {z:.2})", family.name(), want.estimate, want.std_error, is.exact());
    }
    // The baseline kernel evaluates the same integrand: its mean agrees with the integral.
    let is = IntegrandSpec::new(Family::Gaussian, 2).unwrap();
    let p = is.params();
    let job = warpmc_kernels::vegas::VegasJob { seed: 3, points: 1 << 20, dim: 2, scale_exp: -20, ..Default::default() };
    let (_, s1, _, bad) = gpu.time_vegas_plain(&job, &p, 1 << 20, 1).unwrap();
    assert_eq!(bad, 0);
    let mean = s1 / (1u64 << 20) as f64 * 2f64.powi(-20);
    assert!((mean - is.exact()).abs() < 0.02 * is.exact(), "baseline mean {mean} vs {}", is.exact());
}

/// CUDA devices present (at least 1 where a GPU test runs).
fn cudarc_device_count() -> usize {
    warpmc::integrate::gpu_count().unwrap_or(1).max(1)
}

/// A user's integrand crate compiled to PTX (examples/user-integrand, `cargo xtask
/// build-integrand`) gives on the GPU the bits its Rust function gives on the CPU, and the closed
/// form within 4 standard errors. The module is `$WARPMC_EXAMPLE_PTX`, else the one `cargo xtask
/// build-integrand` writes; with a GPU required, a missing module is a failure.
#[test]
fn gpu_runs_a_compiled_user_integrand() {
    use warpmc::integrate::{CompiledIntegrand, Integrand, IntegrateSpec, VegasRunner, integrate};
    use warpmc_example_integrand::Ridge;
    use warpmc_kernels::vegas::Integrand as _;
    let Some(g) = gpu_or_skip("gpu_runs_a_compiled_user_integrand") else { return };
    let gpu = g.as_gpu().expect("a GPU executor");
    let path = std::env::var("WARPMC_EXAMPLE_PTX").unwrap_or_else(|_| {
        concat!(env!("CARGO_MANIFEST_DIR"), "/../target/integrands/warpmc_example_integrand.ptx").to_string()
    });
    let ptx = match std::fs::read_to_string(&path) {
        Ok(p) => p,
        Err(e) if warpmc_tests::gpu_required() => panic!("WARPMC_REQUIRE_GPU=1 but no example module at {path}: {e}"),
        Err(e) => {
            eprintln!("SKIPPED gpu_runs_a_compiled_user_integrand: no module at {path} ({e}; run `cargo xtask build-integrand`)");
            return;
        }
    };
    for dim in [3u32, 9] {
        let mut ridge = Ridge { k: 2.0, dim, pad: 0, m: [0.0; warpmc_kernels::vegas::MAX_DIM] };
        for (i, m) in ridge.m[..dim as usize].iter_mut().enumerate() {
            *m = 0.2 + 0.07 * i as f64;
        }
        let f = |x: &[f64]| ridge.eval(x);
        let spec = IntegrateSpec { evals_per_iteration: 50_000, max_iterations: 5, ..IntegrateSpec::new(dim) };
        let cpu = warpmc::backend::cpu::CpuExecutor::new(Some(2)).unwrap();
        let want = integrate(&spec, &Integrand::Closure(&f), &[&cpu as &dyn VegasRunner], |_| {}).unwrap();
        let compiled = CompiledIntegrand { ptx: &ptx, kernel: "ridge_vegas", params: ridge.as_bytes(), dim, cpu: &f };
        let got = integrate(&spec, &Integrand::Compiled(&compiled), &[gpu as &dyn VegasRunner], |_| {}).unwrap();
        assert_eq!(got.estimate.to_bits(), want.estimate.to_bits(), "d={dim}: {} vs {}", got.estimate, want.estimate);
        assert_eq!(got.std_error.to_bits(), want.std_error.to_bits(), "d={dim}");
        // The same module on the CPU path (the compiled integrand's `cpu` function).
        let again = integrate(&spec, &Integrand::Compiled(&compiled), &[&cpu as &dyn VegasRunner], |_| {}).unwrap();
        assert_eq!(again.estimate.to_bits(), want.estimate.to_bits());
        let z = (want.estimate - ridge.exact()) / want.std_error;
        assert!(z.abs() < 4.0, "d={dim}: {} ± {} vs {} (z = {z:.2})", want.estimate, want.std_error, ridge.exact());
        // The generators the example lists (`ridge_vegas__mrg32k3a`, `ridge_vegas__warp_shfl`,
        // the collective kernel): the CPU's bits; one it does not list is an error naming it.
        if dim != 3 {
            continue;
        }
        for generator in [GeneratorKind::Mrg32k3a, GeneratorKind::WarpShfl] {
            let spec = IntegrateSpec { generator, ..spec.clone() };
            let want = integrate(&spec, &Integrand::Closure(&f), &[&cpu as &dyn VegasRunner], |_| {}).unwrap();
            let got = integrate(&spec, &Integrand::Compiled(&compiled), &[gpu as &dyn VegasRunner], |_| {}).unwrap();
            assert_eq!(got.estimate.to_bits(), want.estimate.to_bits(), "{generator:?}: {} vs {}", got.estimate, want.estimate);
            assert_eq!(got.std_error.to_bits(), want.std_error.to_bits(), "{generator:?}");
            let z = (want.estimate - ridge.exact()) / want.std_error;
            assert!(z.abs() < 4.0, "{generator:?}: {} ± {} vs {} (z = {z:.2})", want.estimate, want.std_error, ridge.exact());
        }
        let spec = IntegrateSpec { generator: GeneratorKind::Xorwow, ..spec.clone() };
        let err = integrate(&spec, &Integrand::Compiled(&compiled), &[gpu as &dyn VegasRunner], |_| {}).unwrap_err();
        assert!(err.to_string().contains("ridge_vegas__xorwow"), "{err}");
    }
}
