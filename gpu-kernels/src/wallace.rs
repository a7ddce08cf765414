//! Wallace's Gaussian pool generator (Wallace 1996; Brent 2003), in the form of GPU Gems 3
//! ch. 37.2.4: a pool of [`POOL`] = 2048 `f32` normals, owned by a block of [`THREADS`] = 256
//! threads, mixed by passes of a permuted 4x4 orthogonal transform, each batch scaled by a
//! chi-square correction. docs/ALGORITHMS.md ("Wallace's pool generator") states the method, its
//! constants and its weaknesses; this module is the one definition both backends run.
//!
//! # One pass
//! Thread `t` of the block (`0 <= t < 256`) starts an 8-bit LCG at `s = (t + o) mod 256`, `o` the
//! pass's offset, and reads its 8 values `v_j = pool[8 s_j + j]` with `s_j = L^(j+1)(s)`,
//! `L(s) = (241 s + 59) mod 256` (`j = 0..8`). `L` is a bijection of `0..256` (full period:
//! `c` odd, `a - 1` a multiple of 4), so for each `j` the 256 threads read the 256 addresses
//! `8 s + j` once each: a pass reads every value of the pool exactly once. Each group of four,
//! `(v_0..v_3)` and `(v_4..v_7)`, goes through [`transform4`]; then, after every thread has read
//! (a block barrier), thread `t` writes its `v_j` to `pool[t + 256 j]` (linear order).
//!
//! # A batch
//! Batch `b` of pool `p` takes one group of [`WORDS_PER_BATCH`] = 4 words `w` of stream `p`
//! (see [`BatchWords`]): `passes` passes (pass `k` with offset [`pass_offset`]`(w, k)`), then
//! the pool, scaled by the correction `S = C1 + C2 Z` ([`correction`]), is the batch's output,
//! value `i` of the batch being `post(S pool[i])` (`post`: the normal's mean and sd, or the
//! log-normal's `exp`). The pool itself is never scaled: its sum of squares stays `N` (to
//! rounding), as set by [`init_pool`].
//!
//! All arithmetic is IEEE `f32` `+ - *` (and an exact halving), `f64` `+ *` and a correctly
//! rounded `sqrt` and division in [`init_pool`], and the project's exact Box-Muller and `exp`:
//! the CPU ([`pass`], [`batch`]) and the GPU (`wallace_f32`) give the same bits.

use crate::Exact;
use crate::dist::{BoxMuller, DistParams, NormalSampler, kind};
use crate::normal::box_muller;
use crate::platform::sqrt_f64;
use crate::real::Single;

/// Values per pool (`N`).
pub const POOL: usize = 2048;
/// Threads of the block that owns a pool (and the LCG's modulus `m`).
pub const THREADS: usize = 256;
/// Values each thread reads and writes per pass: two groups of four.
pub const PER_THREAD: usize = POOL / THREADS;
/// The address permutation's LCG: `s -> (A s + C) mod 256`.
pub const LCG_A: u32 = 241;
pub const LCG_C: u32 = 59;
/// Words of the generator's stream per batch of a pool (one group of the interleaved fill).
pub const WORDS_PER_BATCH: usize = 4;
/// Passes per output batch unless the caller asks otherwise. Four: each output value is then a
/// combination of up to 256 values of the previous batch with coefficients of magnitude at most
/// 2^-4, against 4 values with coefficients ±1/2 for one pass (see the tests and
/// docs/ALGORITHMS.md for the measured correlations and why four).
pub const PASSES_DEFAULT: u32 = 4;
/// Most passes per batch: the offsets are the bytes of two words ([`pass_offset`]).
pub const PASSES_MAX: u32 = 8;
/// Dynamic shared memory of the batch kernel's block: the pool.
pub const SHARED_BYTES: u32 = (POOL * 4) as u32;

/// `c1 = (1 - 1/N)^(1/4)` for `N = 2048`, rounded to `f32` (the decimal is the exact value to 20
/// digits; the test `correction_constants` recomputes it).
pub const C1: f32 = 0.999_877_907_329_389_608_35;
/// `c2 = sqrt(1 - c1^2)`, rounded to `f32`.
pub const C2: f32 = 0.015_625_953_878_101_858_61;

/// The 8-bit LCG step.
#[inline(always)]
pub fn lcg(s: u32) -> u32 {
    (s.wrapping_mul(LCG_A).wrapping_add(LCG_C)) & (THREADS as u32 - 1)
}

/// The words of one batch of one pool: `w[0]` the offsets of passes 0-3 (its bytes, low byte
/// first), `w[1]` and `w[2]` the correction's normal `Z` (the first of their exact Box-Muller
/// pair; the second is not used), `w[3]` the offsets of passes 4-7.
pub type BatchWords = [u32; WORDS_PER_BATCH];

/// The permutation offset of pass `pass` (`< PASSES_MAX`) of a batch: byte `pass mod 4` of
/// `w[0]` for passes 0-3, of `w[3]` for passes 4-7.
#[inline(always)]
pub fn pass_offset(w: &BatchWords, pass: u32) -> u32 {
    let word = if pass < 4 { w[0] } else { w[3] };
    (word >> (8 * (pass & 3))) & 0xff
}

/// The 4x4 orthogonal (Walsh-Hadamard-type) transform of GPU Gems 3's `TransformBlock`:
/// `t = (p + q + r + s) / 2`, `(p - t, q - t, t - r, t - s)`. Its matrix has rows of four
/// `±1/2`, pairwise orthogonal, so the sum of squares is preserved up to rounding. The sum is
/// taken as `(p + q) + (r + s)` and halved exactly.
#[inline(always)]
pub fn transform4(v: [f32; 4]) -> [f32; 4] {
    let t = ((v[0] + v[1]) + (v[2] + v[3])) * 0.5;
    [v[0] - t, v[1] - t, t - v[2], t - v[3]]
}

/// Thread `t`'s part of a pass with offset `offset`: its 8 values read through the permuted
/// addresses (`read(address)`), transformed in two groups of four. Value `j` of the result goes
/// to [`home`]`(t, j)`.
#[inline(always)]
pub fn thread_pass(t: u32, offset: u32, read: impl Fn(usize) -> f32) -> [f32; PER_THREAD] {
    let mut s = (t + offset) & (THREADS as u32 - 1);
    let mut v = [0.0f32; PER_THREAD];
    let mut j = 0;
    while j < PER_THREAD {
        s = lcg(s);
        v[j] = read(((s << 3) as usize) + j);
        j += 1;
    }
    let a = transform4([v[0], v[1], v[2], v[3]]);
    let b = transform4([v[4], v[5], v[6], v[7]]);
    [a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3]]
}

/// Where thread `t` writes its value `j` of a pass (linear order: coalesced, and the same place
/// it later outputs from).
#[inline(always)]
pub const fn home(t: usize, j: usize) -> usize {
    t + THREADS * j
}

/// The chi-square correction `S = c1 + c2 Z` of a batch, `Z` the first value of the exact
/// Box-Muller pair of `w[1], w[2]`. `E[S^2] = c1^2 + c2^2 = 1`.
#[inline(always)]
pub fn correction(w: &BatchWords) -> f32 {
    let (z, _) = box_muller::<Exact>(w[1], w[2]);
    C1 + C2 * z
}

/// What is done to each corrected value: [`NormalSampler`]'s `post` (standard, `mean + sd x`,
/// or `exp(mean + sd x)`), in exact `f32`.
pub type Output = NormalSampler<Single<Exact>, BoxMuller>;

/// The [`Output`] of a normal or log-normal [`DistParams`] (`a` mean, `b` sd).
#[inline(always)]
pub fn output(p: &DistParams) -> Output {
    NormalSampler::new(p.a, p.b, p.kind == kind::LOGNORMAL)
}

/// Where value `m` of stream `stream` lies in an interleaved fill of `streams` streams
/// (`fill.rs`): `4 ((m / 4) streams + stream) + m % 4`, for a fill that starts at the streams'
/// first groups.
#[inline(always)]
pub const fn interleaved(m: usize, stream: usize, streams: usize) -> usize {
    ((m / 4) * streams + stream) * 4 + m % 4
}

/// A new pool from `N` normals (`normal(m)`, `m = 0..N`): each scaled by `sqrt(N / q)`, `q` the
/// sum of their squares, computed in `f64` in order `m = 0, 1, ...` (one thread does it on the
/// GPU), the scaled value rounded once to `f32` (`write(m, value)`). The pool's sum of squares
/// is then `N` to within the `f32` rounding of its values (relative 2^-24 each). A sum of 0 (no
/// such `N` normals exist) leaves the values as they are.
#[inline(always)]
pub fn init_pool(normal: impl Fn(usize) -> f32, mut write: impl FnMut(usize, f32)) {
    let mut q = 0.0f64;
    let mut m = 0;
    while m < POOL {
        let x = normal(m) as f64;
        q += x * x;
        m += 1;
    }
    let scale = if q > 0.0 { sqrt_f64(POOL as f64 / q) } else { 1.0 };
    let mut m = 0;
    while m < POOL {
        write(m, ((normal(m) as f64) * scale) as f32);
        m += 1;
    }
}

/// One pass over `pool` on the CPU, as the block does it: every thread's reads from the pool as
/// it was, then every thread's writes.
pub fn pass(pool: &mut [f32; POOL], offset: u32) {
    let mut staged = [[0.0f32; PER_THREAD]; THREADS];
    for (t, v) in staged.iter_mut().enumerate() {
        *v = thread_pass(t as u32, offset, |a| pool[a]);
    }
    for (t, v) in staged.iter().enumerate() {
        for (j, &x) in v.iter().enumerate() {
            pool[home(t, j)] = x;
        }
    }
}

/// One batch of a pool on the CPU: `passes` passes, then `out(i, post(S pool[i]))` for
/// `i = 0..N`.
pub fn batch(pool: &mut [f32; POOL], w: &BatchWords, passes: u32, post: &Output, mut out: impl FnMut(usize, f32)) {
    for k in 0..passes {
        pass(pool, pass_offset(w, k));
    }
    let s = correction(w);
    for (i, &y) in pool.iter().enumerate() {
        out(i, post.post(s * y));
    }
}

/// The GPU kernels (see `host/src/wallace.rs` for the launches).
///
/// - `wallace_init_f32(pools, normals, n_pools)`: `normals` holds the interleaved normal fill
///   of `n_pools` streams, `N n_pools` values (stream `p`'s first `N` normals are pool `p`'s);
///   `pools` receives `N n_pools` values, pool `p` at `pools[p N ..]`. Any launch shape: a
///   thread per pool, grid-stride.
/// - `wallace_f32(pools, words, out, n_pools, batches, passes, params)`: `batches` batches of
///   every pool; `words` holds the interleaved word fill of `n_pools` streams, `4 n_pools
///   batches` words (batch `b` of pool `p` takes `words[4 (b n_pools + p) ..][..4]`); `out`
///   receives `N n_pools batches` values, batch `b` of pool `p` at `out[(b n_pools + p) N ..]`;
///   `1 <= passes <= PASSES_MAX`. Blocks of exactly [`THREADS`] threads with [`SHARED_BYTES`]
///   of dynamic shared memory; block `k` takes pools `k, k + gridDim, ...` (any grid).
#[cfg(target_arch = "nvptx64")]
mod kernels {
    use core::arch::nvptx::{_block_dim_x, _block_idx_x, _grid_dim_x, _thread_idx_x};

    use super::*;
    use crate::platform::nvptx::{shared_address, shared_load, shared_store, syncthreads};

    #[unsafe(export_name = "wallace_init_f32")]
    pub unsafe extern "ptx-kernel" fn wallace_init_f32(pools: *mut f32, normals: *const f32, n_pools: u64) {
        // SAFETY: reading special registers has no preconditions.
        let (gtid, threads) = unsafe {
            let bdim = _block_dim_x() as u64;
            (_block_idx_x() as u64 * bdim + _thread_idx_x() as u64, _grid_dim_x() as u64 * bdim)
        };
        let n = n_pools as usize;
        let mut p = gtid;
        while p < n_pools {
            let pool = p as usize;
            // SAFETY: the host sizes `normals` and `pools` as documented above: every index is
            // below `N n_pools`.
            unsafe {
                init_pool(|m| normals.add(interleaved(m, pool, n)).read(), |m, x| pools.add(pool * POOL + m).write(x));
            }
            p += threads;
        }
    }

    #[unsafe(export_name = "wallace_f32")]
    pub unsafe extern "ptx-kernel" fn wallace_f32(
        pools: *mut f32,
        words: *const u32,
        out: *mut f32,
        n_pools: u64,
        batches: u64,
        passes: u32,
        params: DistParams,
    ) {
        // SAFETY: reading special registers has no preconditions.
        let (t, block, grid, bdim) =
            unsafe { (_thread_idx_x() as usize, _block_idx_x() as u64, _grid_dim_x() as u64, _block_dim_x()) };
        if bdim as usize != THREADS || passes > PASSES_MAX {
            return; // the host launches 256 threads and checks `passes`; never a partial pool
        }
        let post = output(&params);
        let at = |i: usize| shared_address(4 * i as u32);
        // SAFETY: `at(i)` for `i < POOL` is inside the block's SHARED_BYTES of dynamic shared
        // memory and 4-aligned.
        let read = |i: usize| f32::from_bits(unsafe { shared_load(at(i)) });
        let mut p = block;
        while p < n_pools {
            let base = p as usize * POOL;
            let mut j = 0;
            while j < PER_THREAD {
                // SAFETY: `pools` holds `N n_pools` values; shared address as above.
                unsafe { shared_store(at(home(t, j)), pools.add(base + home(t, j)).read().to_bits()) };
                j += 1;
            }
            let mut b = 0;
            let mut mine = [0.0f32; PER_THREAD];
            while b < batches {
                let row = (b * n_pools + p) as usize;
                // SAFETY: `words` holds `4 n_pools batches` words; `row < n_pools batches`.
                let w: BatchWords = unsafe { core::array::from_fn(|k| words.add(WORDS_PER_BATCH * row + k).read()) };
                let mut k = 0;
                while k < passes {
                    // SAFETY: every thread of the block reaches both barriers (the loops' bounds
                    // are the same for the whole block): the first orders the previous writes
                    // (or the load) before these reads, the second these reads before the writes.
                    unsafe { syncthreads() };
                    mine = thread_pass(t as u32, pass_offset(&w, k), read);
                    unsafe { syncthreads() };
                    let mut j = 0;
                    while j < PER_THREAD {
                        // SAFETY: shared address as above.
                        unsafe { shared_store(at(home(t, j)), mine[j].to_bits()) };
                        j += 1;
                    }
                    k += 1;
                }
                if passes == 0 {
                    // Not sent by the host; output the pool as it is.
                    let mut j = 0;
                    while j < PER_THREAD {
                        mine[j] = read(home(t, j));
                        j += 1;
                    }
                }
                let s = correction(&w);
                let mut j = 0;
                while j < PER_THREAD {
                    // SAFETY: `out` holds `N n_pools batches` values and `row < n_pools batches`.
                    // The thread's own values are at `home(t, j)`: no barrier needed.
                    unsafe { out.add(row * POOL + home(t, j)).write(post.post(s * mine[j])) };
                    j += 1;
                }
                b += 1;
            }
            let mut j = 0;
            while j < PER_THREAD {
                // SAFETY: as for the load; the thread's own values.
                unsafe { pools.add(base + home(t, j)).write(read(home(t, j))) };
                j += 1;
            }
            // The next pool's loads must not overwrite values another thread has yet to read.
            // SAFETY: reached by the whole block.
            unsafe { syncthreads() };
            p += grid;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use super::*;
    use crate::rng::{Generator, Philox4x32x10 as Philox4x32_10, Uniform32};

    /// The constants against their definitions, computed in `f64`: each is the `f32` nearest
    /// (within half an ulp, 2^-25 relative), and `E[S^2] = c1^2 + c2^2` is 1 to `f32` rounding.
    #[test]
    fn correction_constants() {
        let n = POOL as f64;
        let c1 = (1.0 - 1.0 / n).powf(0.25);
        let c2 = (1.0 - c1 * c1).sqrt();
        assert!(((C1 as f64) - c1).abs() <= c1 * 2f64.powi(-25), "C1 {C1} against {c1}");
        assert!(((C2 as f64) - c2).abs() <= c2 * 2f64.powi(-25), "C2 {C2} against {c2}");
        let s2 = (C1 as f64).powi(2) + (C2 as f64).powi(2);
        assert!((s2 - 1.0).abs() < 2e-7, "E[S^2] = {s2}");
        // From first principles (docs/ALGORITHMS.md): with u = c2^2, Var(S^2) = 4 c1^2 c2^2 +
        // 2 c2^4 = 4u - 2u^2, which is 2/N exactly when c1^2 = sqrt(1 - 1/N): S^2 N has the
        // chi-square's variance 2N.
        let u = c2 * c2;
        assert!(((4.0 * u - 2.0 * u * u) * n * n - 2.0 * n).abs() < 1e-9 * n, "Var(S^2 N) = 2N");
    }

    /// Every pass, whatever its offset, reads each of the pool's 2048 values exactly once, and
    /// the threads' writes (`home`) cover the pool once too.
    #[test]
    fn each_pass_is_a_permutation() {
        assert!((0..256).all(|s| (0..256).filter(|&x| lcg(x) == s).count() == 1), "the LCG is a bijection");
        for offset in 0..256 {
            let reads = RefCell::new(vec![0u32; POOL]);
            for t in 0..THREADS as u32 {
                thread_pass(t, offset, |a| {
                    reads.borrow_mut()[a] += 1;
                    0.0
                });
            }
            assert!(reads.borrow().iter().all(|&c| c == 1), "offset {offset}: an address read twice or never");
        }
        let mut writes = vec![0u32; POOL];
        (0..THREADS).for_each(|t| (0..PER_THREAD).for_each(|j| writes[home(t, j)] += 1));
        assert!(writes.iter().all(|&c| c == 1));
    }

    /// The 4x4 transform's matrix (its images of the unit vectors, exact: entries ±1/2) is
    /// orthogonal, exactly; on values, the sum of squares moves by rounding only.
    #[test]
    fn transform_is_orthogonal() {
        let cols: Vec<[f32; 4]> =
            (0..4).map(|k| transform4(core::array::from_fn(|i| if i == k { 1.0 } else { 0.0 }))).collect();
        for a in 0..4 {
            for b in 0..4 {
                let dot: f32 = (0..4).map(|i| cols[a][i] * cols[b][i]).sum();
                assert_eq!(dot, if a == b { 1.0 } else { 0.0 }, "columns {a}, {b}");
            }
        }
        let mut rng = Philox4x32_10::stream(3, 0);
        let mut worst = 0.0f64;
        for _ in 0..100_000 {
            let v: [f32; 4] = core::array::from_fn(|_| box_muller::<Exact>(rng.next_u32(), rng.next_u32()).0);
            let q = |v: &[f32; 4]| v.iter().map(|&x| (x as f64) * (x as f64)).sum::<f64>();
            worst = worst.max((q(&transform4(v)) - q(&v)).abs() / q(&v));
        }
        // Each output carries at most two roundings of about 2^-24 of the largest input.
        assert!(worst < 4.0 * 2f64.powi(-23), "relative change of the sum of squares {worst:e}");
    }

    /// A pool from Philox normals, as the fills make it.
    fn new_pool(stream: u64) -> Box<[f32; POOL]> {
        let mut rng = Philox4x32_10::stream(11, stream);
        let normals: Vec<f32> = (0..POOL / 2)
            .flat_map(|_| {
                let (a, b) = box_muller::<Exact>(rng.next_u32(), rng.next_u32());
                [a, b]
            })
            .collect();
        let mut pool = Box::new([0.0f32; POOL]);
        init_pool(|m| normals[m], |m, x| pool[m] = x);
        pool
    }

    fn sum_of_squares(pool: &[f32]) -> f64 {
        pool.iter().map(|&x| (x as f64) * (x as f64)).sum()
    }

    /// The initial pool's sum of squares is N to the rounding of its values, and passes keep it:
    /// after 10,000 passes it has drifted by rounding only (measured: printed).
    #[test]
    fn passes_preserve_the_sum_of_squares() {
        let mut pool = new_pool(0);
        let n = POOL as f64;
        let q0 = sum_of_squares(&pool[..]);
        assert!((q0 - n).abs() < n * 2f64.powi(-22), "initial sum of squares {q0}");
        let mut rng = Philox4x32_10::stream(12, 0);
        let mut worst = 0.0f64;
        for k in 0..10_000 {
            pass(&mut pool, rng.next_u32() & 0xff);
            let q = sum_of_squares(&pool[..]);
            worst = worst.max((q - n).abs() / n);
            if k == 0 {
                assert!((q - n).abs() / n < 1e-6, "one pass moved the sum of squares to {q}");
            }
        }
        println!("sum of squares over 10,000 passes: largest relative departure from N {worst:.3e}");
        assert!(worst < 1e-4, "rounding drift {worst:e}");
    }

    /// How a batch's values depend on the previous batch's (before the correction, which only
    /// scales): the passes are linear, so the map is a matrix `M` (rows: outputs, columns: the
    /// previous pool), found by pushing the unit vectors through. Its entries are dyadic and
    /// exact. One pass: every output is ±1/2 of 4 previous values. `k` passes: every output is
    /// ±2^-k of exactly 4^k previous values (no two paths meet: the 4 outputs of a group are
    /// written to one column `t mod 8` of the pool, which the next pass reads with one index
    /// `j`, so they go to 4 different groups). This correlation of 2^-k between an output and
    /// each of 4^k earlier values, at positions fixed by the batch's words, is the method's
    /// inter-batch dependence (docs/ALGORITHMS.md).
    #[test]
    fn mixing_of_consecutive_batches() {
        let mut rng = Philox4x32_10::stream(13, 0);
        for (passes, max_coefficient, min_terms) in [(1u32, 0.5f64, 4usize), (2, 0.25, 16), (4, 0.0625, 256)] {
            let w: BatchWords = core::array::from_fn(|_| rng.next_u32());
            // Column k of M: the batch of the unit vector e_k.
            let mut m = vec![0.0f32; POOL * POOL];
            for k in 0..POOL {
                let mut pool = Box::new([0.0f32; POOL]);
                pool[k] = 1.0;
                for p in 0..passes {
                    pass(&mut pool, pass_offset(&w, p));
                }
                for (i, &x) in pool.iter().enumerate() {
                    m[i * POOL + k] = x;
                }
            }
            let (mut largest, mut mean_row_max, mut fewest, mut mean_terms) = (0.0f64, 0.0f64, POOL, 0.0f64);
            for row in m.chunks_exact(POOL) {
                let row_max = row.iter().fold(0.0f64, |a, &x| a.max(x.abs() as f64));
                let terms = row.iter().filter(|&&x| x != 0.0).count();
                let norm: f64 = row.iter().map(|&x| (x as f64) * (x as f64)).sum();
                assert_eq!(norm, 1.0, "{passes} passes: a row of an orthogonal map has norm 1");
                largest = largest.max(row_max);
                mean_row_max += row_max / POOL as f64;
                fewest = fewest.min(terms);
                mean_terms += terms as f64 / POOL as f64;
            }
            println!(
                "{passes} passes: largest |corr(new_i, old_k)| {largest}, mean over i of max_k {mean_row_max:.4}, \
                 terms per output {fewest} to mean {mean_terms:.1}"
            );
            assert!(largest <= max_coefficient, "{passes} passes: coefficient {largest}");
            assert!(fewest >= min_terms, "{passes} passes: an output of {fewest} previous values");
        }
    }

    /// `pass_offset` takes the bytes of `w[0]` for passes 0-3 and of `w[3]` for 4-7.
    #[test]
    fn pass_offsets_are_the_documented_bytes() {
        let w = [0x4433_2211, 0, 0, 0x8877_6655];
        let got: Vec<u32> = (0..PASSES_MAX).map(|k| pass_offset(&w, k)).collect();
        assert_eq!(got, [0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88]);
    }
}
