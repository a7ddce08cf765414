//! GPU entry points (PTX build only).
//!
//! Each kernel is a thin shell: it finds its global thread index, loops over the work it owns
//! (grid-stride, so any launch shape covers the job), calls the shared step functions, and
//! writes its result. Launch-shape contract, checked by the host before every launch:
//! `blockDim.x` is a multiple of 32 and only the x dimensions are used.
//!
//! Unsafe code here relies on one invariant each, stated at the block: the host allocated
//! every buffer with the length the kernel's documentation gives.

use core::arch::nvptx::{_block_dim_x, _block_idx_x, _grid_dim_x, _syncthreads, _thread_idx_x};

use crate::accum::{ExactSum, PairMoments};
use crate::asian::{
    AsianBasketSteps, accumulate_constant_paths, accumulate_paths, accumulate_paths_with, fixed_words, path, path_with,
};
use crate::basket::{BasketJob, BasketLeg};
use crate::curand::{CurandCall, CurandGenerator, CurandValue, lane_chunk};
use crate::instrument::Legs;
use crate::qmc::QmcParams;
use core::marker::PhantomData;

use crate::dist::{
    DistParams, Sampler, SamplerVisitor, WarpSampler, cached_step, dispatch, dispatch_counts, warp_lanes_in_round,
};
use crate::fill::{GROUP, Group, Normals, Uniforms, UniformsF64, Words, fill_stream, fill_stream_sampled};
use crate::normal::BoxMuller;
use crate::platform::nvptx::{
    active_mask, lane_id, lanemask_lt, shared_address, shared_load_group, shared_store_group, shfl_xor, vote_any,
};
use crate::real::{Double, Single};
use crate::rng::{Collective, Generator, WarpStream};
use crate::tally::Tally;
use crate::vegas;
use crate::{Exact, Fast, MathMode};

/// `(global thread index, total threads in the grid)`.
#[inline(always)]
fn grid_position() -> (u64, u64) {
    // SAFETY: reading special registers has no preconditions.
    unsafe {
        let tid = _thread_idx_x() as u64;
        let bid = _block_idx_x() as u64;
        let bdim = _block_dim_x() as u64;
        let gdim = _grid_dim_x() as u64;
        (bid * bdim + tid, gdim * bdim)
    }
}

#[inline(always)]
fn shfl_xor_u64(v: u64, lane_mask: i32) -> u64 {
    // SAFETY: called by all 32 lanes of the warp (full mask) at the same point: every kernel
    // below reaches its reduction unconditionally, and blockDim.x is a multiple of 32.
    unsafe {
        let lo = shfl_xor(v as u32, lane_mask as u32) as u64;
        let hi = shfl_xor((v >> 32) as u32, lane_mask as u32) as u64;
        lo | (hi << 32)
    }
}

#[inline(always)]
fn shfl_merge(s: &mut ExactSum, lane_mask: i32) {
    let theirs = ExactSum {
        w: [shfl_xor_u64(s.w[0], lane_mask), shfl_xor_u64(s.w[1], lane_mask), shfl_xor_u64(s.w[2], lane_mask)],
    };
    s.merge(&theirs);
}

/// Butterfly reduction of the warp's accumulators; every lane ends with the warp total. One
/// field at a time, so that only one sum of the partner lane is held in registers at once.
#[inline(always)]
fn warp_sum(acc: PairMoments) -> PairMoments {
    let mut acc = acc;
    let mut lane_mask = 16;
    while lane_mask >= 1 {
        acc.n += shfl_xor_u64(acc.n, lane_mask);
        acc.out_of_range += shfl_xor_u64(acc.out_of_range, lane_mask);
        shfl_merge(&mut acc.sum_a, lane_mask);
        shfl_merge(&mut acc.sum_b, lane_mask);
        shfl_merge(&mut acc.sum_aa, lane_mask);
        shfl_merge(&mut acc.sum_bb, lane_mask);
        shfl_merge(&mut acc.sum_ab, lane_mask);
        lane_mask /= 2;
    }
    acc
}

/// Lane 0 of each warp writes the warp's totals to `out[warp * WORDS ..]`.
///
/// # Safety
/// `out` holds `PairMoments::WORDS` words for each warp of the grid.
#[inline(always)]
unsafe fn write_warp_total(out: *mut u64, gtid: u64, acc: PairMoments) {
    let total = warp_sum(acc);
    if gtid % 32 == 0 {
        let words = total.to_words();
        let base = (gtid / 32) as usize * PairMoments::WORDS;
        let mut i = 0;
        while i < PairMoments::WORDS {
            // SAFETY: in bounds by the function's contract.
            unsafe { out.add(base + i).write(words[i]) };
            i += 1;
        }
    }
}

/// Asian basket paths `first..end` of `seed`, each drawing from its stream of `G`.
///
/// # Safety
/// `out` holds `PairMoments::WORDS` words per warp of the grid.
#[inline(always)]
unsafe fn asian_basket<G: Generator, M: MathMode>(p: AsianBasketSteps, seed: u64, first: u64, end: u64, out: *mut u64) {
    let (gtid, threads) = grid_position();
    let mut acc = PairMoments::ZERO;
    accumulate_paths::<G, M>(&p, seed, first + gtid, end, threads, &mut acc);
    // SAFETY: forwarded contract.
    unsafe { write_warp_total(out, gtid, acc) };
}

/// [`asian_basket`] with the normal transform `p.normals` names (`asian::path_with`).
///
/// # Safety
/// As [`asian_basket`].
#[inline(always)]
unsafe fn asian_basket_any<G: Generator, M: MathMode + Send + Sync>(
    p: AsianBasketSteps,
    seed: u64,
    first: u64,
    end: u64,
    out: *mut u64,
) where
    crate::real::Single<M>: crate::inverse_normal::Quantile + crate::ziggurat::Zig,
{
    let (gtid, threads) = grid_position();
    let mut acc = PairMoments::ZERO;
    accumulate_paths_with::<G, M>(&p, seed, first + gtid, end, threads, &mut acc);
    // SAFETY: forwarded contract.
    unsafe { write_warp_total(out, gtid, acc) };
}

/// One-asset instrument samples `first..end` of `seed` (`crate::instrument`), sample `k` from
/// stream `k`, one stream per thread on a grid-stride sequence.
///
/// # Safety
/// `out` holds `PairMoments::WORDS` words per warp of the grid.
#[inline(always)]
unsafe fn instrument_states<G: Generator, M: MathMode + Send + Sync>(
    legs: Legs,
    seed: u64,
    first: u64,
    end: u64,
    out: *mut u64,
) where
    crate::real::Single<M>: crate::inverse_normal::Quantile + crate::ziggurat::Zig,
{
    let (gtid, threads) = grid_position();
    let mut acc = PairMoments::ZERO;
    crate::instrument::accumulate::<G, M>(&legs, seed, first + gtid, end, threads, &mut acc);
    // SAFETY: forwarded contract.
    unsafe { write_warp_total(out, gtid, acc) };
}

/// [`instrument_states`] with a collective generator, as [`asian_collective`]: sample `k` is
/// lane `k mod 32` of warp state `k / 32`; the lane restarts its stream (the GARCH replay, the
/// antithetic half, each leg) from its saved word, all 32 lanes together.
///
/// # Safety
/// As [`instrument_states`].
#[inline(always)]
unsafe fn instrument_collective<G: Collective, M: MathMode + Send + Sync>(
    legs: Legs,
    seed: u64,
    first: u64,
    end: u64,
    out: *mut u64,
) where
    crate::real::Single<M>: crate::inverse_normal::Quantile + crate::ziggurat::Zig,
{
    let (gtid, threads) = grid_position();
    let lane = gtid % 32;
    let mut acc = PairMoments::ZERO;
    // A rejection transform would desynchronise the lanes (the host refuses it): nothing runs.
    let mut k = if !fixed_words(legs.legs[0].normals) { end + 32 } else { first - first % 32 + gtid };
    while k - lane < end {
        // SAFETY: the 32 lanes are here together with the same warp number `k / 32`.
        let word = unsafe { G::init_word(seed, k / 32) };
        // SAFETY: every lane runs the same legs, steps and fixed-word transform, so all 32 call
        // `fresh` together, the same number of times, and draw the same number of words.
        let (x, control) = crate::instrument::sample_legs_with::<_, M>(&legs, || unsafe { G::lane(word) });
        if k >= first && k < end {
            acc.push(x, control);
        }
        k += threads;
    }
    // SAFETY: forwarded contract.
    unsafe { write_warp_total(out, gtid, acc) };
}

/// Basket samples `first..end` of `seed` (`crate::basket`), sample `k` from stream `k`, one
/// stream per thread on a grid-stride sequence; the legs' coefficients are read from `legs`.
///
/// # Safety
/// `out` holds `PairMoments::WORDS` words per warp of the grid; `legs` holds `job.legs`
/// coefficient sets (1 to `basket::MAX_LEGS`).
#[inline(always)]
unsafe fn basket_states<G: Generator, M: MathMode + Send + Sync>(
    job: BasketJob,
    legs: *const BasketLeg,
    seed: u64,
    first: u64,
    end: u64,
    out: *mut u64,
) where
    crate::real::Single<M>: crate::inverse_normal::Quantile + crate::ziggurat::Zig,
{
    let (gtid, threads) = grid_position();
    // SAFETY: by the contract, `legs` holds this many sets (the host clamps as the kernel does).
    let legs = unsafe { core::slice::from_raw_parts(legs, (job.legs as usize).clamp(1, crate::basket::MAX_LEGS)) };
    let mut acc = PairMoments::ZERO;
    crate::basket::accumulate::<G, M>(&job, legs, seed, first + gtid, end, threads, &mut acc);
    // SAFETY: forwarded contract.
    unsafe { write_warp_total(out, gtid, acc) };
}

/// [`basket_states`] with a collective generator, as [`instrument_collective`].
///
/// # Safety
/// As [`basket_states`].
#[inline(always)]
unsafe fn basket_collective<G: Collective, M: MathMode + Send + Sync>(
    job: BasketJob,
    legs: *const BasketLeg,
    seed: u64,
    first: u64,
    end: u64,
    out: *mut u64,
) where
    crate::real::Single<M>: crate::inverse_normal::Quantile + crate::ziggurat::Zig,
{
    let (gtid, threads) = grid_position();
    let lane = gtid % 32;
    // SAFETY: as in `basket_states`.
    let legs = unsafe { core::slice::from_raw_parts(legs, (job.legs as usize).clamp(1, crate::basket::MAX_LEGS)) };
    let mut acc = PairMoments::ZERO;
    // A rejection transform would desynchronise the lanes (the host refuses it): nothing runs.
    let mut k = if !fixed_words(job.normals) { end + 32 } else { first - first % 32 + gtid };
    while k - lane < end {
        // SAFETY: the 32 lanes are here together with the same warp number `k / 32`.
        let word = unsafe { G::init_word(seed, k / 32) };
        // SAFETY: every lane runs the same legs, assets, steps and fixed-word transform, so all
        // 32 call `fresh` together, the same number of times, and draw the same number of words.
        let (x, control) = crate::basket::sample_with::<_, M>(&job, legs, || unsafe { G::lane(word) });
        if k >= first && k < end {
            acc.push(x, control);
        }
        k += threads;
    }
    // SAFETY: forwarded contract.
    unsafe { write_warp_total(out, gtid, acc) };
}

/// The constant-RNG baseline of the fast basket: [`basket_states`] with
/// `normal::ConstantNormals` (from `x0`, step `dx`) in place of a generator and transform.
///
/// # Safety
/// As [`basket_states`].
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn basket_constant_fast(
    job: BasketJob,
    legs: *const BasketLeg,
    x0: f32,
    dx: f32,
    first: u64,
    end: u64,
    out: *mut u64,
) {
    let (gtid, threads) = grid_position();
    // SAFETY: as in `basket_states`.
    let legs = unsafe { core::slice::from_raw_parts(legs, (job.legs as usize).clamp(1, crate::basket::MAX_LEGS)) };
    let mut acc = PairMoments::ZERO;
    let mut k = first + gtid;
    while k < end {
        let (x, control) =
            crate::basket::sample::<_, Fast>(&job, legs, || crate::normal::ConstantNormals { x: x0, dx });
        acc.push(x, control);
        k += threads;
    }
    // SAFETY: the host sizes `out` as documented.
    unsafe { write_warp_total(out, gtid, acc) };
}

/// Quasi-Monte Carlo instrument samples `first..end` of one replicate (`crate::qmc`): sample
/// `k` from point `k` of the randomised Sobol' set whose tables are `directions`
/// (`32 q.dims` words) and `keys` (`q.dims` words).
///
/// # Safety
/// `out` holds `PairMoments::WORDS` words per warp of the grid; the tables hold the words
/// stated; `end <= 2^32`.
#[inline(always)]
unsafe fn instrument_qmc<M: MathMode + Send + Sync>(
    legs: Legs,
    q: QmcParams,
    directions: *const u32,
    keys: *const u32,
    first: u64,
    end: u64,
    out: *mut u64,
) where
    crate::real::Single<M>: crate::inverse_normal::Quantile<R = f32>,
{
    let (gtid, threads) = grid_position();
    // SAFETY: the tables hold these many words by the contract.
    let set = unsafe {
        crate::qmc::SobolSet {
            directions: core::slice::from_raw_parts(directions, q.dims as usize * crate::sobol::BITS),
            keys: core::slice::from_raw_parts(keys, q.dims as usize),
            params: q,
        }
    };
    let mut acc = PairMoments::ZERO;
    crate::qmc::accumulate::<M>(&legs, set, first + gtid, end, threads, &mut acc);
    // SAFETY: forwarded contract.
    unsafe { write_warp_total(out, gtid, acc) };
}

/// [`instrument_qmc`] in exact mode.
///
/// # Safety
/// As [`instrument_qmc`].
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn instrument_qmc_exact(
    legs: Legs,
    q: QmcParams,
    directions: *const u32,
    keys: *const u32,
    first: u64,
    end: u64,
    out: *mut u64,
) {
    // SAFETY: forwarded contract.
    unsafe { instrument_qmc::<Exact>(legs, q, directions, keys, first, end, out) }
}

/// [`instrument_qmc`] in fast mode.
///
/// # Safety
/// As [`instrument_qmc`].
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn instrument_qmc_fast(
    legs: Legs,
    q: QmcParams,
    directions: *const u32,
    keys: *const u32,
    first: u64,
    end: u64,
    out: *mut u64,
) {
    // SAFETY: forwarded contract.
    unsafe { instrument_qmc::<Fast>(legs, q, directions, keys, first, end, out) }
}

/// The constant-RNG baseline of the fast instruments: [`instrument_states`] with
/// `normal::ConstantNormals` (from `x0`, step `dx`) in place of a generator and transform.
///
/// # Safety
/// As [`instrument_states`].
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn instrument_constant_fast(
    legs: Legs,
    x0: f32,
    dx: f32,
    first: u64,
    end: u64,
    out: *mut u64,
) {
    let (gtid, threads) = grid_position();
    let mut acc = PairMoments::ZERO;
    let mut k = first + gtid;
    while k < end {
        let (x, control) =
            crate::instrument::sample_legs::<_, Fast>(&legs, || crate::normal::ConstantNormals { x: x0, dx });
        acc.push(x, control);
        k += threads;
    }
    // SAFETY: the host sizes `out` as documented.
    unsafe { write_warp_total(out, gtid, acc) };
}

/// The fast GARCH lookback with Philox and Box-Muller, the path kept in global memory instead
/// of replayed (`instrument::garch_path_stored`), for the benchmark's comparison: thread `t`
/// of `T` keeps `s_i` at `scratch[(i - 1) T + t]`, `i = 1 .. n-1` (coalesced).
///
/// # Safety
/// As [`instrument_states`], and `scratch` holds `(p.steps - 1) T` values for the grid's `T`
/// threads.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn garch_stored_fast(
    p: crate::instrument::PathSteps,
    seed: u64,
    first: u64,
    end: u64,
    out: *mut u64,
    scratch: *mut f32,
) {
    type G = crate::rng::Philox4x32x10;
    let (gtid, threads) = grid_position();
    let mut acc = PairMoments::ZERO;
    let mut k = first + gtid;
    let at = |t: u32| ((t as u64 - 1) * threads + gtid) as usize;
    while k < end {
        let mut z = crate::instrument::Singles::new(BoxMuller::<G, Fast>::new(G::stream(seed, k)), false);
        // SAFETY: `at(t)` for `1 <= t < p.steps` is in bounds by the contract, and this thread's.
        let (x, control) = crate::instrument::garch_path_stored::<_, Fast>(
            &p,
            &mut z,
            |t, s| unsafe { scratch.add(at(t)).write(s) },
            |t| unsafe { scratch.add(at(t)).read() },
        );
        acc.push(x, control);
        k += threads;
    }
    // SAFETY: the host sizes `out` as documented.
    unsafe { write_warp_total(out, gtid, acc) };
}

/// The constant-RNG baseline of the fast Asian basket (see `normal::ConstantNormals`).
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn asian_basket_constant_fast(
    p: AsianBasketSteps,
    x0: f32,
    dx: f32,
    first: u64,
    end: u64,
    out: *mut u64,
) {
    let (gtid, threads) = grid_position();
    let mut acc = PairMoments::ZERO;
    accumulate_constant_paths::<Fast>(&p, x0, dx, first + gtid, end, threads, &mut acc);
    // SAFETY: the host sizes `out` as documented.
    unsafe { write_warp_total(out, gtid, acc) };
}

/// States of streams `first_stream .. first_stream + streams` of `seed` into `states`.
///
/// # Safety
/// `states` holds `streams` states.
#[inline(always)]
unsafe fn init_states<G: Generator>(states: *mut G, seed: u64, first_stream: u64, streams: u64) {
    let (gtid, threads) = grid_position();
    let mut s = gtid;
    while s < streams {
        // SAFETY: in bounds by the contract; `G`'s states are plain words (`Generator`'s
        // contract), so writing through a reference to memory not yet initialised is sound.
        unsafe { G::write_stream(seed, first_stream + s, &mut *states.add(s as usize)) };
        s += threads;
    }
}

#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct Vec4<T>([T; GROUP]);

/// Whether `out` is aligned for [`store_group`]'s vector store: a buffer from cuMemAlloc is
/// (256-byte aligned); a view starting elsewhere in a buffer need not be (the bulk API fills
/// whole rows after a part row).
#[inline(always)]
fn vector_aligned<T>(out: *mut T) -> bool {
    (out as usize) % align_of::<Vec4<T>>() == 0
}

/// `$f::<$T.., true>(args)` where `out` is [`vector_aligned`], `$f::<$T.., false>(args)` where it
/// is not: a fill's loop compiled for each case (see [`store_group`]).
macro_rules! by_alignment {
    ($out:expr, $f:ident::<$($T:ty),*>($($arg:expr),* $(,)?)) => {
        if vector_aligned($out) { $f::<$($T),*, true>($($arg),*) } else { $f::<$($T),*, false>($($arg),*) }
    };
}

/// Store a group of `valid` values at `out + base`: one 16-byte vector store per whole group
/// when `ALIGNED`, four scalar stores otherwise. The kernels decide `ALIGNED` once, from
/// [`vector_aligned`], and run a loop compiled for each case: a test inside the loop let the
/// compiler split the vector store (the shared fourth store sunk below both branches).
///
/// # Safety
/// `out` holds at least `base + valid` values, `base` is a multiple of 4 and `1 <= valid <= 4`;
/// with `ALIGNED`, `vector_aligned(out)`.
#[inline(always)]
unsafe fn store_group<const ALIGNED: bool, T: Copy>(out: *mut T, base: usize, g: [T; GROUP], valid: usize) {
    // SAFETY: in bounds by the contract. `base` is a multiple of 4, so `out + base` is 16-byte
    // aligned when `out` is (4 values of 4 or 8 bytes are 16 or 32 bytes).
    unsafe {
        if ALIGNED && valid == GROUP {
            (out.add(base) as *mut Vec4<T>).write(Vec4(g));
        } else if valid == GROUP {
            out.add(base).write(g[0]);
            out.add(base + 1).write(g[1]);
            out.add(base + 2).write(g[2]);
            out.add(base + 3).write(g[3]);
        } else {
            out.add(base).write(g[0]);
            if valid > 1 {
                out.add(base + 1).write(g[1]);
            }
            if valid > 2 {
                out.add(base + 2).write(g[2]);
            }
        }
    }
}

/// One block of the interleaved layout of `fill`: `len` values, `streams` states advanced, with
/// its stores chosen ([`store_group`]; the kernels pick `ALIGNED` by `by_alignment!`).
///
/// # Safety
/// `states` holds `streams` states and `out` at least `len` values; with `ALIGNED`,
/// `vector_aligned(out)`.
#[inline(always)]
unsafe fn fill_stores<K: Group, G: Generator, const ALIGNED: bool>(
    out: *mut K::Item,
    len: u64,
    states: *mut G,
    streams: u64,
) {
    let (gtid, threads) = grid_position();
    // Rows in which every stream's group is whole (`len` cuts none of them): the same number for
    // every thread.
    let whole_rows = (len / GROUP as u64) / streams.max(1);
    let mut s = gtid;
    while s < streams {
        // SAFETY: `states` holds `streams` states; `out` holds `len` values.
        unsafe {
            let mut rng = states.add(s as usize).read();
            let mut from_row = 0;
            // A warp whose 32 streams all exist writes their whole rows with paired stores: the
            // condition and the row count are the same for its 32 lanes, which all reach every
            // shuffle (the block size is a multiple of 32, so `s - s % 32` is the warp's first).
            if ALIGNED && size_of::<K::Item>() == 8 && s - s % 32 + 32 <= streams {
                let odd = s % 2 == 1;
                let mut r = 0;
                while r < whole_rows {
                    store_group_paired(out, ((r * streams + s) * GROUP as u64) as usize, K::next_group(&mut rng), odd);
                    r += 1;
                }
                from_row = whole_rows as usize;
            }
            fill_stream::<K, _, _>(&mut rng, s as usize, streams as usize, len as usize, from_row, |base, g, valid| {
                store_group::<ALIGNED, _>(out, base, g, valid)
            });
            states.add(s as usize).write(rng);
        }
        s += threads;
    }
}

/// Half of a 32-byte group of 8-byte values, for one 16-byte store.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct Half([u32; 4]);

/// Store the groups of a pair of lanes (`2k`, `2k + 1`, whose groups are adjacent: the odd
/// lane's at `base + 4`, seen from the even one) so that each of the warp's two store
/// instructions writes whole 32-byte groups: the first the even lanes' groups (the even lane
/// its first half, the odd lane the even one's second half), the second the odd lanes' groups.
/// Storing its own group in two halves, each instruction of a warp would write half of 32
/// sectors, completed only by the next one: the H100 wrote `f64` fills at about half the write
/// bandwidth that way, and at up to 97% with these stores (2026-11-24).
///
/// # Safety
/// All 32 lanes of the warp call it at the same point; `T` is 8 bytes; lane `l`'s `base` is
/// `base_0 + 4 l` for a multiple of 4 `base_0`, with `out + base_0 .. out + base_0 + 128`
/// inside the buffer, and `out` is 16-byte aligned.
#[inline(always)]
unsafe fn store_group_paired<T: Copy>(out: *mut T, base: usize, g: [T; GROUP], odd: bool) {
    // SAFETY: the caller's contract, and both lanes of every pair store.
    unsafe { store_group_paired_or_own::<true, T>(out, base, g, odd, true, false, GROUP) }
}

/// [`store_group_paired`] where `paired` (the same for both lanes of a pair: both have a whole
/// group to store, adjacent as there); otherwise the lane stores its own group of `valid` values
/// by [`store_group`] if `own`, and nothing if not. The shuffle is made whatever `paired` is.
///
/// # Safety
/// All 32 lanes of the warp call it at the same point; `T` is 8 bytes; with `paired`, as
/// [`store_group_paired`] for the pair; with `own`, as [`store_group`].
#[inline(always)]
unsafe fn store_group_paired_or_own<const ALIGNED: bool, T: Copy>(
    out: *mut T,
    base: usize,
    g: [T; GROUP],
    odd: bool,
    paired: bool,
    own: bool,
    valid: usize,
) {
    // SAFETY: `T` is 8 bytes (the caller's contract), so a group is 8 words.
    let w: [u32; 8] = unsafe { core::mem::transmute_copy(&g) };
    let (first, second) = ([w[0], w[1], w[2], w[3]], [w[4], w[5], w[6], w[7]]);
    // The partner needs the half this lane does not store itself: the even lane's second half,
    // the odd lane's first.
    let send = if odd { first } else { second };
    // SAFETY: all 32 lanes are here (the caller's contract).
    let got = unsafe { send.map(|x| shfl_xor(x, 1)) };
    if paired {
        let (a_at, a, b_at, b) = if odd { (base - 2, got, base + 2, second) } else { (base, first, base + 4, got) };
        // SAFETY: both halves lie in the pair's two groups, inside the buffer, at 16-byte aligned
        // addresses (`out` is, and offsets are multiples of 2 values of 8 bytes).
        unsafe {
            (out.add(a_at) as *mut Half).write(Half(a));
            (out.add(b_at) as *mut Half).write(Half(b));
        }
    } else if own {
        // SAFETY: the caller's contract.
        unsafe { store_group::<ALIGNED, _>(out, base, g, valid) }
    }
}

// ------------------------------------------------------------------------------------------------
// Warp-stream generators (MT19937): the states and layout of an ordinary generator, each stream
// set up and filled by a warp (`rng::WarpStream`). For set-up, warp `w` of the grid takes streams
// `w`, `w + warps`, ...; a fill block takes sets of consecutive streams (`fill_warp_stores`).
// Every loop bound is the same for the 32 lanes of a warp.
// ------------------------------------------------------------------------------------------------

/// `(global warp index, warps in the grid)`.
#[inline(always)]
fn warp_position() -> (u64, u64) {
    let (gtid, threads) = grid_position();
    (gtid / 32, threads / 32)
}

/// [`init_states`] with a warp per stream.
///
/// # Safety
/// `states` holds `streams` states.
#[inline(always)]
unsafe fn init_warp_streams<G: WarpStream>(states: *mut G, seed: u64, first_stream: u64, streams: u64) {
    let (w, warps) = warp_position();
    let mut s = w;
    while s < streams {
        // SAFETY: in bounds by the contract; the 32 lanes are here together with the same `s`.
        unsafe { G::init_warp(states.add(s as usize), seed, first_stream + s) };
        s += warps;
    }
}

/// [`fill_stores`] with a warp per stream, the same values in the same places, with its stores
/// chosen ([`store_group`]).
///
/// A block of `W` warps takes `W` consecutive streams at a time, one per warp, and their groups
/// in rounds of 32 rows: each warp draws its stream's next 32 groups (lane `l`, row `l`) into
/// the block's staging area, and then the block stores the rows, thread `t` the group of row
/// `t / W` and stream `t mod W`, so that a warp's stores cover whole runs of `W`
/// adjacent groups (128 bytes for 8 warps of `u32`). Without the staging, a warp's 32 lanes
/// wrote 32 groups of one stream, `16 S` bytes apart: half-sectors that the memory system
/// merged badly (8% of the write bandwidth on an H100).
///
/// The staging has two areas that rounds alternate between, so a round needs one block barrier
/// (between its staging writes and the stores that read them): round `q + 2` writes round `q`'s
/// area only after round `q + 1`'s barrier, which every thread reaches only when done with
/// round `q`'s reads. Row `r` of stream `c` (of the set) is at slot `r W + (c + r) mod W` of
/// an area: a rotation in place of padding keeps a warp's writes (32 rows of one stream) and
/// its reads (rows of adjacent streams) off shared banks, and an area within 32 bytes per
/// thread, the allowance's half, for groups of up to 32 bytes (f64).
///
/// Rounds in which every stream of the set has whole groups in all 32 rows (all but the last
/// one or two of a long fill) take a path with no bounds to check; the general rounds after
/// them finish the set.
///
/// # Safety
/// As [`fill_stores`]; the launch gives each thread `G::FILL_SHARED_BYTES_PER_THREAD` bytes of
/// dynamic shared memory.
#[inline(always)]
unsafe fn fill_warp_stores<K: Group, G: WarpStream, const ALIGNED: bool>(
    out: *mut K::Item,
    len: u64,
    states: *mut G,
    streams: u64,
) {
    // SAFETY: reading special registers has no preconditions.
    let (tid, bdim, bid, gdim) =
        unsafe { (_thread_idx_x() as u64, _block_dim_x() as u64, _block_idx_x() as u64, _grid_dim_x() as u64) };
    // `max(1)`: never 0 by the launch contract, and no division-by-zero panic path.
    let warps = (bdim / 32).max(1);
    let (w, lane) = (tid / 32, tid % 32);
    let groups = len.div_ceil(GROUP as u64);
    let ring = shared_address(w as u32 * G::WARP_SHARED_BYTES);
    let stage = shared_address(warps as u32 * G::WARP_SHARED_BYTES);
    let slot_bytes = core::mem::size_of::<[K::Item; GROUP]>() as u32;
    let area = 32 * warps as u32 * slot_bytes;
    let (row, col) = (tid / warps, tid % warps);
    // Slot offsets of this thread's writes (as lane `lane` of stream `w`, row `lane`) and reads
    // (row `row` of stream `col`).
    let slot = |r: u64, c: u64| (r * warps + (c + r) % warps) as u32 * slot_bytes;
    let (write_at, read_at) = (slot(lane, w), slot(row, col));
    let mut parity = 0u32;
    let mut set = bid;
    while set * warps < streams {
        let first = set * warps;
        let s = first + w;
        let mine = groups_of(s as i64, groups, streams);
        let theirs = groups_of((first + col) as i64, groups, streams);
        // The set's first stream has the most groups, its last the fewest (the last group of a
        // buffer may be partial): the same bounds for the whole block.
        let most = groups_of(first as i64, groups, streams);
        let least = groups_of((first + warps - 1) as i64, groups, streams);
        let full = least.saturating_sub(1) / 32;
        // SAFETY: the warp's stream is in bounds when it has groups, and this warp alone uses
        // it; the ring is this warp's part of the dynamic shared memory (the launch gives each
        // thread `G::FILL_SHARED_BYTES_PER_THREAD`: the rings, then the staging).
        let mut warp = if mine > 0 { Some(unsafe { G::open(states.add(s as usize), ring) }) } else { None };
        if let Some(wr) = warp.as_mut() {
            let mut base = (first + col + row * streams) * GROUP as u64;
            let step = 32 * streams * GROUP as u64;
            // `full > 0` only if every warp of the block has a stream (`mine >= least`), so
            // every thread of the block runs these rounds.
            let mut q = 0;
            while q < full {
                let slots = stage + parity * area;
                // SAFETY: the warp's lanes are here together; the slot is this thread's for the
                // round; every thread of the block reaches the barrier; row `32 q + row` of
                // stream `first + col` was staged by its warp and is a whole group of it
                // (`32 (q + 1) < least`), at `base`, in `out`.
                unsafe {
                    shared_store_group(slots + write_at, G::round::<K>(wr, 32));
                    _syncthreads();
                    store_group::<ALIGNED, _>(out, base as usize, shared_load_group(slots + read_at), GROUP);
                }
                parity ^= 1;
                base += step;
                q += 1;
            }
        }
        let mut r0 = full * 32;
        while r0 < most {
            let slots = stage + parity * area;
            if let Some(wr) = warp.as_mut() {
                if r0 < mine {
                    let k = (mine - r0).min(32) as u32;
                    // SAFETY: the warp's lanes are here together with the same `k`; the
                    // staging slot is this thread's for the round.
                    unsafe {
                        let g = G::round::<K>(wr, k);
                        if (lane as u32) < k {
                            shared_store_group(slots + write_at, g);
                        }
                    }
                }
            }
            // SAFETY: every thread of the block runs the same rounds (bounds the same for all)
            // and reaches the barrier of each.
            unsafe { _syncthreads() };
            let r = r0 + row;
            if r < theirs {
                let base = (first + col + r * streams) * GROUP as u64;
                let valid = if r + 1 < theirs { GROUP } else { (len - base).min(GROUP as u64) as usize };
                // SAFETY: the slot was written in this round by the warp of stream `first +
                // col` (its row `r` exists); `base` is group `r < theirs` of that stream: in
                // `out`.
                unsafe { store_group::<ALIGNED, _>(out, base as usize, shared_load_group(slots + read_at), valid) };
            }
            parity ^= 1;
            r0 += 32;
        }
        if let Some(wr) = warp.as_ref() {
            // SAFETY: as `open`.
            unsafe { G::close(wr, states.add(s as usize)) };
        }
        set += gdim;
    }
}

// ------------------------------------------------------------------------------------------------
// Collective generators (the warp generator): the 32 lanes of a hardware warp share one state.
//
// Stream `k` is lane `k mod 32` of warp state `k / 32`, so a hardware warp must hold the 32
// streams of one warp state: the host passes stream ranges *aligned* to 32 (`lanes`, a multiple
// of 32, words from stream `32 floor(first / 32)` on, the requested streams starting `pad`
// lanes in), and a lane outside the requested range still draws, in lockstep, without writing.
// Every loop bound below is the same for the 32 lanes of a warp (`lanes` and the grid size are
// multiples of 32, and the bounds are computed from the warp's first lane).
// ------------------------------------------------------------------------------------------------

/// Lane words of streams `first_lane .. first_lane + lanes` of `seed` into `words`.
///
/// # Safety
/// `words` holds `lanes` words; `first_lane` and `lanes` are multiples of 32.
#[inline(always)]
unsafe fn init_collective<G: Collective>(words: *mut u32, seed: u64, first_lane: u64, lanes: u64) {
    let (gtid, threads) = grid_position();
    let mut a = gtid;
    while a < lanes {
        // SAFETY: the 32 lanes of the warp are here together with the same warp number; `a` is
        // in bounds.
        unsafe {
            let w = G::init_word(seed, (first_lane + a) / 32);
            words.add(a as usize).write(w);
        }
        a += threads;
    }
}

/// Groups of stream `s` in an interleaved block of `groups` groups over `streams` streams
/// (as `fill::fill_stream` counts them); 0 outside `0..streams`.
#[inline(always)]
fn groups_of(s: i64, groups: u64, streams: u64) -> u64 {
    if s < 0 || s as u64 >= streams || s as u64 >= groups { 0 } else { (groups - s as u64).div_ceil(streams) }
}

/// One block of the interleaved fill layout from a collective generator: `len` values of
/// `streams` streams, the first of them `pad` lanes into `words` (`lanes` lane words, aligned).
///
/// # Safety
/// `words` holds `lanes` words, a multiple of 32, `pad < 32`; `out` holds `len` values.
#[inline(always)]
unsafe fn fill_collective<K: Group, G: Collective>(
    out: *mut K::Item,
    len: u64,
    words: *mut u32,
    streams: u64,
    pad: u64,
    lanes: u64,
) {
    // SAFETY: the caller's contract; `ALIGNED` is `vector_aligned(out)`.
    unsafe { by_alignment!(out, fill_collective_stores::<K, G>(out, len, words, streams, pad, lanes)) }
}

/// [`fill_collective`] with its stores chosen ([`store_group`]).
///
/// # Safety
/// As [`fill_collective`]; with `ALIGNED`, `vector_aligned(out)`.
#[inline(always)]
unsafe fn fill_collective_stores<K: Group, G: Collective, const ALIGNED: bool>(
    out: *mut K::Item,
    len: u64,
    words: *mut u32,
    streams: u64,
    pad: u64,
    lanes: u64,
) {
    let (gtid, threads) = grid_position();
    let groups = len.div_ceil(GROUP as u64);
    let mut a = gtid;
    while a < lanes {
        let s = a as i64 - pad as i64;
        let mine = groups_of(s, groups, streams);
        // The warp's most groups: those of its first requested stream (fewer for later ones).
        let warp_first = (a - a % 32) as i64 - pad as i64;
        let rounds = groups_of(warp_first.max(0), groups, streams);
        if rounds > 0 {
            // SAFETY: `a` is in bounds; all 32 lanes draw `rounds` groups together.
            unsafe {
                let mut rng = G::lane(words.add(a as usize).read());
                let mut base = s.max(0) as u64 * GROUP as u64;
                let step = streams * GROUP as u64;
                let mut r = 0;
                while r < rounds {
                    let g = K::next_group(&mut rng);
                    if ALIGNED && size_of::<K::Item>() == 8 {
                        // Every lane reaches the shuffle each round (`rounds` is the warp's); a
                        // pair stores together where both lanes have a whole group (adjacent
                        // streams in the same row).
                        let whole = r + 1 < mine;
                        let last = r + 1 == mine;
                        let partner = shfl_xor(whole as u32, 1) != 0;
                        let valid = if last { (len - base).min(GROUP as u64) as usize } else { GROUP };
                        store_group_paired_or_own::<ALIGNED, _>(
                            out,
                            base as usize,
                            g,
                            a % 2 == 1,
                            whole && partner,
                            whole || last,
                            valid,
                        );
                        if whole {
                            base += step;
                        }
                        r += 1;
                        continue;
                    }
                    // Whole groups but the stream's last, which `len` may cut short (a constant
                    // length keeps the 16-byte vector store).
                    if r + 1 < mine {
                        store_group::<ALIGNED, _>(out, base as usize, g, GROUP);
                        base += step;
                    } else if r + 1 == mine {
                        store_group::<ALIGNED, _>(out, base as usize, g, (len - base).min(GROUP as u64) as usize);
                    }
                    r += 1;
                }
                words.add(a as usize).write(G::word(&rng));
            }
        }
        a += threads;
    }
}

/// Asian basket paths `first..end` with a collective generator: path `k` is stream `k`, lane
/// `k mod 32` of warp state `k / 32`; each warp simulates 32 consecutive paths from one warp
/// state, those outside `first..end` without counting them.
///
/// # Safety
/// `out` holds `PairMoments::WORDS` words per warp of the grid.
#[inline(always)]
unsafe fn asian_collective<G: Collective, M: MathMode + Send + Sync, const ANY: bool>(
    p: AsianBasketSteps,
    seed: u64,
    first: u64,
    end: u64,
    out: *mut u64,
) where
    crate::real::Single<M>: crate::inverse_normal::Quantile + crate::ziggurat::Zig,
{
    let (gtid, threads) = grid_position();
    let lane = gtid % 32;
    let mut acc = PairMoments::ZERO;
    // A rejection transform's lanes would draw different numbers of words (the host refuses
    // it with a collective generator): nothing is simulated, and the totals count no path.
    let mut k = if ANY && !fixed_words(p.normals) { end + 32 } else { first - first % 32 + gtid };
    while k - lane < end {
        // SAFETY: the 32 lanes are here together with the same warp number `k / 32`, and every
        // path draws the same number of words (Box-Muller, or a fixed-word transform: `path`
        // has no data-dependent draws).
        let rng = unsafe { G::lane(G::init_word(seed, k / 32)) };
        let (payoff, unfloored) =
            if ANY { path_with::<_, M>(&p, rng) } else { path::<_, M>(&p, &mut BoxMuller::<_, M>::new(rng)) };
        if k >= first && k < end {
            acc.push(payoff, unfloored);
        }
        k += threads;
    }
    // SAFETY: forwarded contract.
    unsafe { write_warp_total(out, gtid, acc) };
}

// ------------------------------------------------------------------------------------------------
// Distribution fills (`crate::dist`): a sampler chosen at run time from `DistParams`, the
// interleaved layout of `fill.rs`, one stream per thread. A transform that rejects draws a
// variable number of words, so the lanes of a warp diverge in its loop and wait for the
// slowest (what the divergence study measures). MT19937's streams are filled one per thread
// here too (its warp-per-stream fill draws 32 groups of a stream in parallel, which needs a
// fixed number of words per group).
// ------------------------------------------------------------------------------------------------

/// The fill loop for the sampler [`crate::dist::dispatch`] picks, over per-thread states.
struct StatesFill<G> {
    out: *mut u32,
    len: u64,
    states: *mut G,
    streams: u64,
}

impl<G: Generator> SamplerVisitor for StatesFill<G> {
    type Out = ();
    #[inline(always)]
    fn visit<S: Sampler>(self, s: S) {
        let out = self.out as *mut S::Item;
        // SAFETY: the kernel's contract: `out` holds `len` values of the kernel's item type
        // (which is `S::Item`: the kernel's precision picks the sampler's) and is aligned for
        // vector stores, `states` holds `streams` states.
        unsafe { fill_sampled_stores::<S, G>(&s, out, self.len, self.states, self.streams, &mut 0u32) }
    }
    #[inline(always)]
    fn visit_warp<S: WarpSampler>(self, s: S) {
        let out = self.out as *mut S::Item;
        // SAFETY: as `visit`; the block is a multiple of 32 threads (the host checks every
        // launch), so each warp's lanes are 32 consecutive streams.
        unsafe { fill_cached_stores::<S, G>(&s, out, self.len, self.states, self.streams, &mut 0u32) }
    }
    #[inline(always)]
    fn unknown(self) {}
}

/// [`fill_stores`] with a sampler: one stream per thread, each group from `sampler`, stored
/// with 16-byte vector stores. Compiled once (not per alignment, and without the paired
/// stores of 8-byte values), to keep the module's size in check: the host passes buffers of
/// its own allocation, which are aligned, and checks.
///
/// # Safety
/// As [`fill_stores`], and `vector_aligned(out)`.
#[inline(always)]
unsafe fn fill_sampled_stores<S: Sampler, G: Generator>(
    sampler: &S,
    out: *mut S::Item,
    len: u64,
    states: *mut G,
    streams: u64,
    iters: &mut impl Tally,
) {
    let (gtid, threads) = grid_position();
    let mut s = gtid;
    while s < streams {
        // SAFETY: `states` holds `streams` states; `out` holds `len` values and is aligned.
        unsafe {
            let mut rng = states.add(s as usize).read();
            fill_stream_sampled(
                sampler,
                &mut rng,
                s as usize,
                streams as usize,
                len as usize,
                0,
                iters,
                |base, g, valid| store_group::<true, _>(out, base, g, valid),
            );
            states.add(s as usize).write(rng);
        }
        s += threads;
    }
}

/// [`fill_sampled_stores`] for a pre-cached warp sampler ([`WarpSampler`]): the lanes of a warp
/// are streams `32j .. 32j + 31` (the block is a multiple of 32 and the grid stride too), and
/// each call's loop runs until a `vote.sync.any` over the warp's lanes that still have a group
/// in this round finds none without a current candidate. The same lanes, draws and order as
/// [`crate::dist::fill_warp_cached`] on the CPU.
///
/// # Safety
/// As [`fill_sampled_stores`]; `blockDim.x` is a multiple of 32.
#[inline(always)]
unsafe fn fill_cached_stores<S: WarpSampler, G: Generator>(
    sampler: &S,
    out: *mut S::Item,
    len: u64,
    states: *mut G,
    streams: u64,
    iters: &mut impl Tally,
) {
    let (gtid, threads) = grid_position();
    let groups = len.div_ceil(GROUP as u64);
    let lane = lane_id() as u64;
    let mut s = gtid;
    while s < streams {
        let base = s - lane;
        let mine = groups_of(s as i64, groups, streams);
        // SAFETY: `states` holds `streams` states; `out` holds `len` values and is aligned;
        // every lane of `mask` runs the same rounds and calls, so reaches each vote.
        unsafe {
            let mut rng = states.add(s as usize).read();
            let mut state = sampler.lane();
            let mut cache: Option<S::Cand> = None;
            let mut base_at = s * GROUP as u64;
            let step = streams * GROUP as u64;
            let mut round = 0;
            while round < mine {
                let n = warp_lanes_in_round(base, round, groups, streams);
                let mask = if n >= 32 { u32::MAX } else { (1u32 << n) - 1 };
                let mut g = [S::Item::default(); GROUP];
                let mut at = 0;
                while at < GROUP {
                    let mut current = cache.take();
                    loop {
                        cached_step(sampler, &mut state, &mut rng, &mut current, &mut cache);
                        iters.tick();
                        if !vote_any(mask, current.is_none()) {
                            break;
                        }
                    }
                    if let Some(c) = current {
                        sampler.finish(&mut state, &mut rng, c, &mut g, at);
                    }
                    at += S::PER_CALL;
                }
                store_group::<true, _>(out, base_at as usize, g, (len - base_at).min(GROUP as u64) as usize);
                base_at += step;
                round += 1;
            }
            states.add(s as usize).write(rng);
        }
        s += threads;
    }
}

/// `inverse_cdf_sweep(first, count, out)`: words `first .. first + count` (below `2^32`)
/// through [`crate::inverse_normal::InversionSweep`], each thread a grid-stride share, its
/// fields written to `out[FIELDS gtid ..]` (`out` holds `FIELDS` f64s per thread of the grid).
#[unsafe(export_name = "inverse_cdf_sweep")]
pub unsafe extern "ptx-kernel" fn inverse_cdf_sweep(first: u64, count: u64, out: *mut f64) {
    use crate::inverse_normal::InversionSweep;
    let (gtid, threads) = grid_position();
    let mut acc = InversionSweep::default();
    let mut i = gtid;
    while i < count {
        acc.add((first + i) as u32);
        i += threads;
    }
    let a = acc.to_array();
    let mut k = 0;
    while k < InversionSweep::FIELDS {
        // SAFETY: `out` holds `FIELDS` values per thread of the grid.
        unsafe { out.add(InversionSweep::FIELDS * gtid as usize + k).write(a[k]) };
        k += 1;
    }
}

// ------------------------------------------------------------------------------------------------
// Divergence diagnostics: the distribution fills of one generator (philox4x32-10) with a tally
// that also counts the iterations each warp executes.
// ------------------------------------------------------------------------------------------------

/// A [`Tally`] for the diagnostic kernels: `lane` counts this thread's attempts, `warp` the
/// iterations its warp executes at the same point, each counted by the lowest active lane
/// (`activemask`), so the sum of `warp` over a warp's threads is the warp's iterations and the
/// warp's efficiency is `Σ lane / (32 Σ warp)`.
#[derive(Clone, Copy, Default)]
struct WarpTally {
    lane: u32,
    warp: u32,
}

impl Tally for WarpTally {
    #[inline(always)]
    fn tick(&mut self) {
        self.lane = self.lane.wrapping_add(1);
        if active_mask() & lanemask_lt() == 0 {
            self.warp = self.warp.wrapping_add(1);
        }
    }
}

/// The fill of [`StatesFill`] with a [`WarpTally`], written to `counts[2 gtid ..]` (`lane`,
/// `warp`) for every thread of the grid.
struct DiagFill<G> {
    fill: StatesFill<G>,
    counts: *mut u32,
}

impl<G: Generator> DiagFill<G> {
    #[inline(always)]
    fn write(&self, t: WarpTally) {
        let (gtid, _) = grid_position();
        // SAFETY: the kernel's contract: `counts` holds two words per thread of the grid.
        unsafe {
            self.counts.add(2 * gtid as usize).write(t.lane);
            self.counts.add(2 * gtid as usize + 1).write(t.warp);
        }
    }
}

impl<G: Generator> SamplerVisitor for DiagFill<G> {
    type Out = ();
    #[inline(always)]
    fn visit<S: Sampler>(self, s: S) {
        let f = &self.fill;
        let mut t = WarpTally::default();
        // SAFETY: as `StatesFill::visit`.
        unsafe { fill_sampled_stores::<S, G>(&s, f.out as *mut S::Item, f.len, f.states, f.streams, &mut t) }
        self.write(t);
    }
    #[inline(always)]
    fn visit_warp<S: WarpSampler>(self, s: S) {
        let f = &self.fill;
        let mut t = WarpTally::default();
        // SAFETY: as `StatesFill::visit_warp`.
        unsafe { fill_cached_stores::<S, G>(&s, f.out as *mut S::Item, f.len, f.states, f.streams, &mut t) }
        self.write(t);
    }
    #[inline(always)]
    fn unknown(self) {}
}

/// `diag_dist_f32__philox4x32_10(out, len, states, streams, params, counts)`: the f32 exact
/// distribution fill with per-thread attempt and warp-iteration counts (`counts` holds two
/// words per thread of the grid).
#[unsafe(export_name = "diag_dist_f32__philox4x32_10")]
pub unsafe extern "ptx-kernel" fn diag_dist_f32(
    out: *mut u32,
    len: u64,
    states: *mut crate::rng::Philox4x32x10,
    streams: u64,
    p: DistParams,
    counts: *mut u32,
) {
    dispatch::<Single<Exact>, _>(&p, DiagFill { fill: StatesFill { out, len, states, streams }, counts })
}

/// `diag_dist_u32__philox4x32_10`: [`diag_dist_f32`] for Poisson counts.
#[unsafe(export_name = "diag_dist_u32__philox4x32_10")]
pub unsafe extern "ptx-kernel" fn diag_dist_u32(
    out: *mut u32,
    len: u64,
    states: *mut crate::rng::Philox4x32x10,
    streams: u64,
    p: DistParams,
    counts: *mut u32,
) {
    dispatch_counts(&p, DiagFill { fill: StatesFill { out, len, states, streams }, counts })
}

/// The fill loop for a collective generator's lanes: in lockstep for a fixed-word sampler,
/// through each lane's word buffer for one that rejects (`crate::buffered`).
struct CollectiveFill<G> {
    out: *mut u32,
    len: u64,
    words: *mut u32,
    streams: u64,
    pad: u64,
    lanes: u64,
    generator: PhantomData<G>,
}

impl<G: Collective> SamplerVisitor for CollectiveFill<G> {
    type Out = ();
    #[inline(always)]
    fn visit<S: Sampler>(self, s: S) {
        let out = self.out as *mut S::Item;
        // SAFETY: the kernel's contract, as `fill_collective`'s, and `out` is aligned.
        unsafe {
            if S::FIXED_WORDS {
                fill_collective_sampled::<S, G>(&s, out, self.len, self.words, self.streams, self.pad, self.lanes)
            } else {
                fill_collective_buffered::<S, G>(&s, out, self.len, self.words, self.streams, self.pad, self.lanes)
            }
        }
    }
    #[inline(always)]
    fn unknown(self) {}
}

/// [`fill_collective_stores`] with a sampler that takes the same words for every group, with
/// vector stores only (as [`fill_sampled_stores`]).
///
/// # Safety
/// As [`fill_collective`]; `S::FIXED_WORDS`; `vector_aligned(out)`.
#[inline(always)]
unsafe fn fill_collective_sampled<S: Sampler, G: Collective>(
    sampler: &S,
    out: *mut S::Item,
    len: u64,
    words: *mut u32,
    streams: u64,
    pad: u64,
    lanes: u64,
) {
    let (gtid, threads) = grid_position();
    let groups = len.div_ceil(GROUP as u64);
    let mut a = gtid;
    while a < lanes {
        let s = a as i64 - pad as i64;
        let mine = groups_of(s, groups, streams);
        let warp_first = (a - a % 32) as i64 - pad as i64;
        let rounds = groups_of(warp_first.max(0), groups, streams);
        if rounds > 0 {
            // SAFETY: `a` is in bounds; all 32 lanes draw `rounds` groups of the same words
            // together (`S::FIXED_WORDS`).
            unsafe {
                let mut rng = G::lane(words.add(a as usize).read());
                let mut base = s.max(0) as u64 * GROUP as u64;
                let step = streams * GROUP as u64;
                let mut iters = 0u32;
                let mut r = 0;
                while r < rounds {
                    let g = sampler.next_group(&mut rng, &mut iters);
                    if r + 1 < mine {
                        store_group::<true, _>(out, base as usize, g, GROUP);
                        base += step;
                    } else if r + 1 == mine {
                        store_group::<true, _>(out, base as usize, g, (len - base).min(GROUP as u64) as usize);
                    }
                    r += 1;
                }
                words.add(a as usize).write(G::word(&rng));
            }
        }
        a += threads;
    }
}

/// The Asian basket kernels with any normal transform (`asian_basket_any_{exact,fast}__<gen>`,
/// the arguments of `asian_basket_*`; `p.normals` names the transform).
macro_rules! asian_any_kernels {
    ($id:ident, |$p:ident, $seed:ident, $first:ident, $end:ident, $out:ident, $M:ident| $call:expr) => {
        #[unsafe(export_name = concat!("asian_basket_any_exact__", stringify!($id)))]
        pub unsafe extern "ptx-kernel" fn asian_basket_any_exact(
            $p: AsianBasketSteps,
            $seed: u64,
            $first: u64,
            $end: u64,
            $out: *mut u64,
        ) {
            type $M = Exact;
            // SAFETY: as `asian_basket_exact`'s.
            unsafe { $call }
        }

        #[unsafe(export_name = concat!("asian_basket_any_fast__", stringify!($id)))]
        pub unsafe extern "ptx-kernel" fn asian_basket_any_fast(
            $p: AsianBasketSteps,
            $seed: u64,
            $first: u64,
            $end: u64,
            $out: *mut u64,
        ) {
            type $M = Fast;
            // SAFETY: as `asian_basket_fast`'s.
            unsafe { $call }
        }
    };
}

/// The one-asset instrument kernels (`instrument_{exact,fast}__<gen>`): arguments
/// `(legs: Legs, seed: u64, first: u64, end: u64, out: *mut u64)`, `PairMoments::WORDS` words
/// per warp of the grid in `out`.
macro_rules! instrument_kernels {
    ($id:ident, $f:ident) => {
        #[unsafe(export_name = concat!("instrument_exact__", stringify!($id)))]
        pub unsafe extern "ptx-kernel" fn instrument_exact(legs: Legs, seed: u64, first: u64, end: u64, out: *mut u64) {
            // SAFETY: the host sizes `out` as documented.
            unsafe { $f::<G, Exact>(legs, seed, first, end, out) }
        }

        #[unsafe(export_name = concat!("instrument_fast__", stringify!($id)))]
        pub unsafe extern "ptx-kernel" fn instrument_fast(legs: Legs, seed: u64, first: u64, end: u64, out: *mut u64) {
            // SAFETY: as above.
            unsafe { $f::<G, Fast>(legs, seed, first, end, out) }
        }
    };
}

/// The basket kernels (`basket_{exact,fast}__<gen>`): arguments `(job: BasketJob, legs: *const
/// BasketLeg, seed: u64, first: u64, end: u64, out: *mut u64)`, `PairMoments::WORDS` words per
/// warp of the grid in `out`, `job.legs` coefficient sets in `legs`.
macro_rules! basket_kernels {
    ($id:ident, $f:ident) => {
        #[unsafe(export_name = concat!("basket_exact__", stringify!($id)))]
        pub unsafe extern "ptx-kernel" fn basket_exact(
            job: BasketJob,
            legs: *const BasketLeg,
            seed: u64,
            first: u64,
            end: u64,
            out: *mut u64,
        ) {
            // SAFETY: the host sizes `out` and `legs` as documented.
            unsafe { $f::<G, Exact>(job, legs, seed, first, end, out) }
        }

        #[unsafe(export_name = concat!("basket_fast__", stringify!($id)))]
        pub unsafe extern "ptx-kernel" fn basket_fast(
            job: BasketJob,
            legs: *const BasketLeg,
            seed: u64,
            first: u64,
            end: u64,
            out: *mut u64,
        ) {
            // SAFETY: as above.
            unsafe { $f::<G, Fast>(job, legs, seed, first, end, out) }
        }
    };
}

/// [`fill_collective_sampled`] for a sampler that rejects: every lane of the warp draws rounds of
/// `ROUND_WORDS` words into its buffer in lockstep, and between rounds writes the groups its
/// buffered words complete, until no lane of the warp has groups left (`crate::buffered`).
///
/// # Safety
/// As [`fill_collective`]; `vector_aligned(out)`.
#[inline(always)]
unsafe fn fill_collective_buffered<S: Sampler, G: Collective>(
    sampler: &S,
    out: *mut S::Item,
    len: u64,
    words: *mut u32,
    streams: u64,
    pad: u64,
    lanes: u64,
) {
    use crate::buffered::{LaneWords, ROUND_WORDS};
    use crate::rng::Uniform32;
    let (gtid, threads) = grid_position();
    let groups = len.div_ceil(GROUP as u64);
    let mut a = gtid;
    while a < lanes {
        let s = a as i64 - pad as i64;
        let mine = groups_of(s, groups, streams);
        let warp_first = (a - a % 32) as i64 - pad as i64;
        if groups_of(warp_first.max(0), groups, streams) > 0 {
            // SAFETY: `a` is in bounds; the 32 lanes of the warp run the same rounds (the vote
            // is over all of them) and draw `ROUND_WORDS` words each in every round together;
            // the groups are stored where the lane alone writes.
            unsafe {
                let mut rng = G::lane(words.add(a as usize).read());
                let mut buf = LaneWords::new();
                let step = streams * GROUP as u64;
                let mut done = 0u64;
                while vote_any(u32::MAX, done < mine) {
                    let mut i = 0;
                    while i < ROUND_WORDS {
                        buf.push(rng.next_u32());
                        i += 1;
                    }
                    if done < mine {
                        let mut k = done;
                        done += buf.drain(sampler, mine - done, &mut 0u32, |g| {
                            let base = s as u64 * GROUP as u64 + k * step;
                            store_group::<true, _>(out, base as usize, g, (len - base).min(GROUP as u64) as usize);
                            k += 1;
                        });
                    }
                }
                words.add(a as usize).write(G::word(&rng));
            }
        }
        a += threads;
    }
}

/// Distribution fill entry points of one generator with per-thread states (see
/// `generator_kernels_of!`): `fill_dist_f32_exact`, `fill_dist_f32_fast`, `fill_dist_f64`
/// and `fill_dist_u32` (Poisson), each `(out, len, states, streams, params)`.
macro_rules! dist_kernels_states {
    ($id:ident) => {
        #[unsafe(export_name = concat!("fill_dist_f32_exact__", stringify!($id)))]
        pub unsafe extern "ptx-kernel" fn fill_dist_f32_exact(
            out: *mut u32,
            len: u64,
            states: *mut G,
            streams: u64,
            p: DistParams,
        ) {
            dispatch::<Single<Exact>, _>(&p, StatesFill { out, len, states, streams })
        }

        #[unsafe(export_name = concat!("fill_dist_f32_fast__", stringify!($id)))]
        pub unsafe extern "ptx-kernel" fn fill_dist_f32_fast(
            out: *mut u32,
            len: u64,
            states: *mut G,
            streams: u64,
            p: DistParams,
        ) {
            dispatch::<Single<Fast>, _>(&p, StatesFill { out, len, states, streams })
        }

        #[unsafe(export_name = concat!("fill_dist_f64__", stringify!($id)))]
        pub unsafe extern "ptx-kernel" fn fill_dist_f64(
            out: *mut u32,
            len: u64,
            states: *mut G,
            streams: u64,
            p: DistParams,
        ) {
            dispatch::<Double, _>(&p, StatesFill { out, len, states, streams })
        }

        #[unsafe(export_name = concat!("fill_dist_u32__", stringify!($id)))]
        pub unsafe extern "ptx-kernel" fn fill_dist_u32(
            out: *mut u32,
            len: u64,
            states: *mut G,
            streams: u64,
            p: DistParams,
        ) {
            dispatch_counts(&p, StatesFill { out, len, states, streams })
        }
    };
}

/// The collective generators' distribution fills: `(out, len, words, streams, pad, lanes,
/// params)`, fixed-word samplers only.
macro_rules! dist_kernels_collective {
    ($id:ident) => {
        #[unsafe(export_name = concat!("fill_dist_f32_exact__", stringify!($id)))]
        pub unsafe extern "ptx-kernel" fn fill_dist_f32_exact(
            out: *mut u32,
            len: u64,
            words: *mut u32,
            streams: u64,
            pad: u64,
            lanes: u64,
            p: DistParams,
        ) {
            dispatch::<Single<Exact>, _>(
                &p,
                CollectiveFill::<G> { out, len, words, streams, pad, lanes, generator: PhantomData },
            )
        }

        #[unsafe(export_name = concat!("fill_dist_f32_fast__", stringify!($id)))]
        pub unsafe extern "ptx-kernel" fn fill_dist_f32_fast(
            out: *mut u32,
            len: u64,
            words: *mut u32,
            streams: u64,
            pad: u64,
            lanes: u64,
            p: DistParams,
        ) {
            dispatch::<Single<Fast>, _>(
                &p,
                CollectiveFill::<G> { out, len, words, streams, pad, lanes, generator: PhantomData },
            )
        }

        #[unsafe(export_name = concat!("fill_dist_f64__", stringify!($id)))]
        pub unsafe extern "ptx-kernel" fn fill_dist_f64(
            out: *mut u32,
            len: u64,
            words: *mut u32,
            streams: u64,
            pad: u64,
            lanes: u64,
            p: DistParams,
        ) {
            dispatch::<Double, _>(
                &p,
                CollectiveFill::<G> { out, len, words, streams, pad, lanes, generator: PhantomData },
            )
        }

        #[unsafe(export_name = concat!("fill_dist_u32__", stringify!($id)))]
        pub unsafe extern "ptx-kernel" fn fill_dist_u32(
            out: *mut u32,
            len: u64,
            words: *mut u32,
            streams: u64,
            pad: u64,
            lanes: u64,
            p: DistParams,
        ) {
            dispatch_counts(&p, CollectiveFill::<G> { out, len, words, streams, pad, lanes, generator: PhantomData })
        }
    };
}

/// Add the 192-bit two's-complement value `w` to the three words at `p`, atomically word by
/// word with the carries propagated: after all the adds, the words hold the exact sum (mod
/// 2^192) whatever their order. Zero words are skipped (adding zero carries nothing).
///
/// # Safety
/// `p` points to three 8-aligned words of global memory the kernel may write.
#[inline(always)]
unsafe fn atomic_add_192(p: *mut u64, w: [u64; 3]) {
    use crate::platform::nvptx::global_atomic_add_u64 as add;
    let mut carry = 0u64;
    if w[0] != 0 {
        // SAFETY: the caller's contract.
        let old = unsafe { add(p, w[0]) };
        carry = old.overflowing_add(w[0]).1 as u64;
    }
    let (mid, c1) = w[1].overflowing_add(carry);
    let mut carry = c1 as u64;
    if mid != 0 {
        // SAFETY: as above.
        let old = unsafe { add(p.add(1), mid) };
        carry += old.overflowing_add(mid).1 as u64;
    }
    let high = w[2].wrapping_add(carry);
    if high != 0 {
        // SAFETY: as above.
        unsafe { add(p.add(2), high) };
    }
}

/// The GPU's [`vegas::Sink`]: hypercube runs straight to global memory (one atomic 192-bit add
/// per run, rare when a thread's points are consecutive), the bins to the block's shared memory
/// (or to global memory when the block's copy would not fit), the statistics kept in registers
/// until the thread ends.
struct GpuVegasSink {
    cubes: *mut u64,
    bins: *mut u64,
    bins_per_axis: u32,
    shared_bins: bool,
    /// The shared-space address of the block's bins (computed once: the address of the
    /// module's shared array costs a few instructions each time).
    shared_base: u32,
    /// Bytes from one word plane of the shared bins to the next ([`shared_bin_address`]).
    plane_bytes: u32,
    max: u64,
    out_of_range: u64,
    not_finite: u64,
}

impl vegas::Sink for GpuVegasSink {
    #[inline(always)]
    fn cube(&mut self, h: u64, sum: &ExactSum, sum_sq: &ExactSum, whole: bool) {
        let p = self.cubes.wrapping_add(h as usize * vegas::CUBE_WORDS);
        // SAFETY: the kernel's contract: `cubes` holds CUBE_WORDS words per hypercube and `h`
        // is a hypercube of the iteration, zeroed where the range's points add to it. A whole
        // run is the only one of its hypercube in any launch of the range (the ranges of
        // threads and launches cut the points into contiguous pieces, and the run holds all of
        // the hypercube's), so storing it is adding it to zero, with no other access to race:
        // plain stores, which a thread does not wait on, where an atomic's returned carry keeps
        // it waiting on global memory at every hypercube.
        unsafe {
            if whole {
                let [a, b, c] = sum.w;
                let [d, e, f] = sum_sq.w;
                p.write(a);
                p.add(1).write(b);
                p.add(2).write(c);
                p.add(3).write(d);
                p.add(4).write(e);
                p.add(5).write(f);
            } else {
                atomic_add_192(p, sum.w);
                atomic_add_192(p.add(3), sum_sq.w);
            }
        }
    }

    #[inline(always)]
    fn bin(&mut self, axis: usize, bin: u32, q: u64) {
        let i = axis as u32 * self.bins_per_axis + bin;
        if self.shared_bins {
            let a = shared_bin_address(self.shared_base, i, 0, self.plane_bytes);
            let (lo, hi) = (q as u32, (q >> 32) as u32);
            // SAFETY: the block's shared memory holds SHARED_BIN_BYTES per bin (`shared_bins`)
            // in four word planes of `plane_bytes`, so the bin's four words are inside it.
            unsafe { shared_bin_add(a, self.plane_bytes, lo, hi) };
        } else {
            // SAFETY: `bins` holds BIN_WORDS words per bin of every axis.
            unsafe { atomic_add_192(self.bins.wrapping_add(i as usize * vegas::BIN_WORDS), [q, 0, 0]) };
        }
    }

    /// In shared memory, one loop over the axes' bin addresses (the default's loop goes through
    /// `bin`, which recomputes each address and its branch on `shared_bins`). Issuing two axes'
    /// adds before awaiting either's result took the Philox kernel from 128 to 166 registers.
    #[inline(always)]
    fn point_bins(&mut self, bin: &[u16], q: u64) {
        if !self.shared_bins {
            for (j, &b) in bin.iter().enumerate() {
                self.bin(j, b as u32, q);
            }
            return;
        }
        let (lo, hi) = (q as u32, (q >> 32) as u32);
        let axis = self.bins_per_axis * 4;
        let mut a = self.shared_base;
        for &b in bin {
            // SAFETY: the block's shared memory holds SHARED_BIN_BYTES per bin of every axis
            // (`shared_bins`), in word planes axis-major from `shared_base`; `bin.len()` is the
            // dimension and each `bin[j] < bins_per_axis` (`vegas::map_point_from`), so the
            // address is word 0 of a bin's.
            unsafe { shared_bin_add(a + b as u32 * 4, self.plane_bytes, lo, hi) };
            a += axis;
        }
    }

    #[inline(always)]
    fn value(&mut self, abs_bits: u64, out_of_range: bool, not_finite: bool) {
        self.max = self.max.max(abs_bits);
        self.out_of_range += out_of_range as u64;
        self.not_finite += not_finite as u64;
    }
}

/// The shared address of word `w` (0 least significant) of bin `i` (counted over all axes,
/// axis-major) when the block's bins start at `base`, `plane_bytes = 4 dim bins`.
///
/// The words lie in four planes, word `w` of every bin in plane `w`, so that successive bins'
/// words of one plane are successive 32-bit words. Shared memory has 32 banks of 4 bytes: with a
/// bin's four words side by side (16 bytes a bin), bins `b` and `b + 8` shared a bank, and the
/// 32 lanes of a warp adding to random bins of an axis met only 8 banks (about 7 adds queued on
/// the busiest); in planes they meet all 32.
#[inline(always)]
fn shared_bin_address(base: u32, i: u32, w: u32, plane_bytes: u32) -> u32 {
    base + w * plane_bytes + 4 * i
}

/// [`vegas::quad_add`] of `hi 2^32 + lo` to the bin whose word 0 is at shared address `a`, its
/// word `w` at `a + w plane_bytes` ([`shared_bin_address`]). The bin's total stays below 2^128:
/// fewer than 2^64 adds, each below 2^64.
///
/// # Safety
/// `a` is 4-aligned, and the four words lie in the block's dynamic shared memory.
#[inline(always)]
unsafe fn shared_bin_add(a: u32, plane_bytes: u32, lo: u32, hi: u32) {
    use crate::platform::nvptx::shared_atomic_add_u32 as add;
    // SAFETY: the caller's contract; `w < 4`.
    vegas::quad_add(&mut |w, x| unsafe { add(a + w * plane_bytes, x) }, lo, hi)
}

/// Points `first..end` of one VEGAS iteration (`crate::vegas`), thread `t` of `T` taking the
/// contiguous share `first + [t P, (t + 1) P)`, `P = ceil((end - first) / T)`, so that a thread's
/// points mostly share a hypercube. The bins are summed in the block's dynamic shared memory when
/// `shared_bins` (`dim bins SHARED_BIN_BYTES` bytes, which the host sizes), else in global memory.
///
/// # Safety
/// `edges` holds `dim (bins + 1)` values, `offsets` `cubes + 1` non-decreasing values, those
/// from the hypercube of point `first` to the end of that of point `end - 1` the plan's (a host
/// that copies only that part sets the others to 0 before it and `u64::MAX` after); `cubes`
/// holds `CUBE_WORDS` words per hypercube, `bins` `BIN_WORDS` per bin of each axis, `stats`
/// `STAT_WORDS` words; `1 <= dim <= MAX_DIM`, `1 <= bins`, `1 <= strata`;
/// `first <= end <= points`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn vegas_points<G: Generator, F: vegas::Integrand + ?Sized>(
    job: vegas::VegasJob,
    f: &F,
    edges: *const f64,
    offsets: *const u64,
    cubes: *mut u64,
    bins: *mut u64,
    stats: *mut u64,
    shared_bins: u32,
    first: u64,
    end: u64,
) {
    let (gtid, threads) = grid_position();
    let dim = (job.dim as usize).clamp(1, vegas::MAX_DIM);
    // SAFETY: forwarded contract; the block's shared memory is the bins' alone.
    let (mut sink, shared) = unsafe { open_vegas_block(&job, cubes, bins, shared_bins, 0) };
    let end = end.min(job.points);
    let per = (end - first.min(end)).div_ceil(threads.max(1));
    let mine = (first + gtid * per).min(end);
    let (first, end) = (mine, (mine + per).min(end));
    // SAFETY: the kernel's contract gives the lengths.
    let (edges, offsets) = unsafe { vegas_tables(&job, dim, edges, offsets) };
    vegas::run_points::<G, F, _>(&job, f, edges, offsets, first, end, &mut sink);
    // SAFETY: forwarded contract; every thread of the block reaches it once.
    unsafe { close_vegas_block(&job, &sink, bins, stats, shared) };
}

/// The grid and the plan of `job` as slices.
///
/// # Safety
/// `edges` holds `dim (bins + 1)` values and `offsets` `cubes + 1`.
#[inline(always)]
unsafe fn vegas_tables<'a>(
    job: &vegas::VegasJob,
    dim: usize,
    edges: *const f64,
    offsets: *const u64,
) -> (&'a [f64], &'a [u64]) {
    // SAFETY: the caller's contract.
    unsafe {
        (
            core::slice::from_raw_parts(edges, dim * (job.bins as usize + 1)),
            core::slice::from_raw_parts(offsets, job.cubes as usize + 1),
        )
    }
}

/// A VEGAS block's start: its sink, with the bins in the block's dynamic shared memory from byte
/// `shared_from` on (zeroed here) when `shared_bins != 0`; returns whether they are.
///
/// # Safety
/// Every thread of the block calls it once; with `shared_bins`, the block has `shared_from +
/// dim bins SHARED_BIN_BYTES` bytes of dynamic shared memory, the bins' part used by nothing else.
#[inline(always)]
unsafe fn open_vegas_block(
    job: &vegas::VegasJob,
    cubes: *mut u64,
    bins: *mut u64,
    shared_bins: u32,
    shared_from: u32,
) -> (GpuVegasSink, bool) {
    use crate::platform::nvptx::shared_store_u64;
    // SAFETY: reading special registers has no preconditions.
    let (tid, bdim) = unsafe { (_thread_idx_x() as usize, _block_dim_x() as usize) };
    let dim = (job.dim as usize).clamp(1, vegas::MAX_DIM);
    let shared_words = dim * job.bins as usize * vegas::SHARED_BIN_BYTES / 8;
    let shared_bins = shared_bins != 0;
    let shared_base = shared_address(shared_from);
    if shared_bins {
        let mut i = tid;
        while i < shared_words {
            // SAFETY: inside the bins' part of the block's shared memory (the caller's contract).
            unsafe { shared_store_u64(shared_base + i as u32 * 8, 0) };
            i += bdim;
        }
        // SAFETY: every thread of the block reaches it once.
        unsafe { _syncthreads() };
    }
    let sink = GpuVegasSink {
        cubes,
        bins,
        bins_per_axis: job.bins,
        shared_bins,
        shared_base,
        plane_bytes: (dim * job.bins as usize * 4) as u32,
        max: 0,
        out_of_range: 0,
        not_finite: 0,
    };
    (sink, shared_bins)
}

/// A VEGAS block's end: the thread's statistics to `stats`, then (after the block's barrier) the
/// block's shared bins to `bins`.
///
/// # Safety
/// Every thread of the block calls it once, after [`open_vegas_block`] gave `sink` and `shared`;
/// `stats` holds STAT_WORDS words, `bins` BIN_WORDS words per bin of every axis.
#[inline(always)]
unsafe fn close_vegas_block(job: &vegas::VegasJob, sink: &GpuVegasSink, bins: *mut u64, stats: *mut u64, shared: bool) {
    use crate::platform::nvptx::{global_atomic_add_u64, global_atomic_max_u64, shared_load};
    // SAFETY: `stats` holds STAT_WORDS words.
    unsafe {
        if sink.max != 0 {
            global_atomic_max_u64(stats, sink.max);
        }
        if sink.out_of_range != 0 {
            global_atomic_add_u64(stats.add(1), sink.out_of_range);
        }
        if sink.not_finite != 0 {
            global_atomic_add_u64(stats.add(2), sink.not_finite);
        }
    }
    if shared {
        // SAFETY: reading special registers has no preconditions.
        let (tid, bdim) = unsafe { (_thread_idx_x() as usize, _block_dim_x() as usize) };
        let all_bins = (job.dim as usize).clamp(1, vegas::MAX_DIM) * job.bins as usize;
        // SAFETY: every thread of the block reaches it once.
        unsafe { _syncthreads() };
        let mut b = tid;
        while b < all_bins {
            // SAFETY: inside the block's shared bins (four word planes); `bins` holds
            // BIN_WORDS words per bin.
            unsafe {
                let word = |w| shared_load(shared_bin_address(sink.shared_base, b as u32, w, sink.plane_bytes)) as u64;
                let w = [word(0) | word(1) << 32, word(2) | word(3) << 32, 0];
                atomic_add_192(bins.add(b * vegas::BIN_WORDS), w);
            }
            b += bdim;
        }
    }
}

/// [`vegas_points`] for a collective generator (the warp generators): the points in tiles
/// (`vegas::TILE_ROUNDS`), each warp a contiguous share of the tiles touched by `first..end`,
/// its lane `l` taking point `32 r + l` of each round `r` of a tile, all 32 lanes drawing in
/// lockstep (a lane whose point is outside `first..end` draws and discards its words). A warp
/// sets up its first tile's warp state by the table jumps of its number and each next tile's
/// by one jump from the previous tile's start. The warps' states take the first
/// `blockDim SHARED_BYTES_PER_THREAD` bytes of the block's shared memory, the bins follow.
///
/// # Safety
/// As [`vegas_points`], and the block is a multiple of 32 threads with `blockDim
/// G::SHARED_BYTES_PER_THREAD` bytes of dynamic shared memory before the bins.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn vegas_collective_points<G: crate::rng::Collective, F: vegas::Integrand + ?Sized>(
    job: vegas::VegasJob,
    f: &F,
    edges: *const f64,
    offsets: *const u64,
    cubes: *mut u64,
    bins: *mut u64,
    stats: *mut u64,
    shared_bins: u32,
    first: u64,
    end: u64,
) {
    use crate::rng::Uniform32;
    use vegas::{TILE_POINTS, TILE_ROUNDS};
    let (gtid, threads) = grid_position();
    // SAFETY: reading special registers has no preconditions.
    let bdim = unsafe { _block_dim_x() };
    let dim = (job.dim as usize).clamp(1, vegas::MAX_DIM);
    let lane_bytes = bdim * G::SHARED_BYTES_PER_THREAD;
    // SAFETY: forwarded contract; the bins follow the warps' states.
    let (mut sink, shared) = unsafe { open_vegas_block(&job, cubes, bins, shared_bins, lane_bytes) };
    let end = end.min(job.points);
    let first = first.min(end);
    let (t0, t1) = if first < end { (first / TILE_POINTS, (end - 1) / TILE_POINTS + 1) } else { (0, 0) };
    let warps = (threads / 32).max(1);
    let per = (t1 - t0).div_ceil(warps);
    let ta = (t0 + (gtid / 32) * per).min(t1);
    let tb = (ta + per).min(t1);
    if ta < tb {
        // The same in all 32 lanes (`ta`, `tb` depend on the warp only): they draw together.
        // SAFETY: the kernel's contract gives the lengths.
        let (edges, offsets) = unsafe { vegas_tables(&job, dim, edges, offsets) };
        let lane = crate::platform::nvptx::lane_id() as u64;
        let words = 2 * dim as u64;
        let scale = vegas::pow2_neg(job.scale_exp);
        let bin_scale = vegas::bin_scale(&job);
        let mut x = [0.0f64; vegas::MAX_DIM];
        let mut bin = [0u16; vegas::MAX_DIM];
        let mut walk = vegas::CubeWalk::at(offsets, first.max(ta * TILE_POINTS), job.strata, dim, false);
        // SAFETY: all 32 lanes are here with the same arguments.
        let mut word = unsafe { G::init_word(job.seed, vegas::tile_warp(&job, ta)) };
        let mut t = ta;
        loop {
            let base = t * TILE_POINTS;
            let r0 = (first.max(base) - base) / 32;
            let r1 = (end.min(base + TILE_POINTS) - base).div_ceil(32);
            // SAFETY: all 32 lanes are here together.
            let mut rng = unsafe { G::lane(word) };
            for _ in 0..r0 * words {
                rng.next_u32();
            }
            for r in r0..r1 {
                let k = base + 32 * r + lane;
                let active = k >= first && k < end;
                if active {
                    walk.reach(offsets, k, dim, &mut sink);
                }
                // Every lane draws its point's words, in or out of the range.
                let jac = vegas::map_point_from(&job, edges, walk.digits(), &mut rng, &mut x, &mut bin);
                if active {
                    walk.add(f.eval(&x[..dim]) * jac * scale, &bin[..dim], bin_scale, &mut sink);
                }
            }
            t += 1;
            if t >= tb {
                break;
            }
            // SAFETY: as above; `word` is still the finished tile's first state.
            word = unsafe { G::jump_word(word, TILE_ROUNDS) };
        }
        walk.finish(dim, &mut sink);
    }
    // SAFETY: forwarded contract; every thread of the block reaches it once.
    unsafe { close_vegas_block(&job, &sink, bins, stats, shared) };
}

/// A generator's VEGAS kernel body: [`vegas_points`] for a generator with per-thread streams,
/// [`vegas_collective_points`] for a collective one. A user's `integrand_kernel!` names the
/// generators its module instantiates, and calls this for each.
pub trait VegasDraw: Generator {
    /// The body of a VEGAS kernel with this generator's streams.
    ///
    /// # Safety
    /// As [`vegas_points`] or [`vegas_collective_points`] (the generator's).
    #[allow(clippy::too_many_arguments)]
    unsafe fn vegas_kernel<F: vegas::Integrand + ?Sized>(
        job: vegas::VegasJob,
        f: &F,
        edges: *const f64,
        offsets: *const u64,
        cubes: *mut u64,
        bins: *mut u64,
        stats: *mut u64,
        shared_bins: u32,
        first: u64,
        end: u64,
    );
}

macro_rules! vegas_draw_impls {
    ([] $(($G:ident, $id:ident $(, $kind:ident)?)),* $(,)?) => { $(
        vegas_draw_impl!($G $(, $kind)?);
    )* };
}

macro_rules! vegas_draw_impl {
    ($G:ident, collective) => {
        vegas_draw_impl!(@with $G, vegas_collective_points);
    };
    ($G:ident $(, $kind:ident)?) => {
        vegas_draw_impl!(@with $G, vegas_points);
    };
    (@with $G:ident, $body:ident) => {
        impl VegasDraw for crate::rng::$G {
            #[inline(always)]
            unsafe fn vegas_kernel<F: vegas::Integrand + ?Sized>(
                job: vegas::VegasJob,
                f: &F,
                edges: *const f64,
                offsets: *const u64,
                cubes: *mut u64,
                bins: *mut u64,
                stats: *mut u64,
                shared_bins: u32,
                first: u64,
                end: u64,
            ) {
                // SAFETY: forwarded contract.
                unsafe { $body::<Self, F>(job, f, edges, offsets, cubes, bins, stats, shared_bins, first, end) }
            }
        }
    };
}

crate::for_each_generator!(vegas_draw_impls);

/// The grid's overhead made visible (the benchmark's baseline): points `first..end` of `job`
/// evaluated by `vegas::plain_points` with Philox4x32-10, each thread a contiguous share, its
/// `(Σv, Σv²)` added atomically to `sums[0..6]` and its count of values out of range to
/// `sums[6]`.
///
/// # Safety
/// `sums` holds 7 words; `params` points to one value.
#[unsafe(export_name = "vegas_plain__philox4x32_10")]
pub unsafe extern "ptx-kernel" fn vegas_plain(
    job: vegas::VegasJob,
    params: *const vegas::IntegrandParams,
    sums: *mut u64,
    first: u64,
    end: u64,
) {
    let (gtid, threads) = grid_position();
    let per = (end - first.min(end)).div_ceil(threads.max(1));
    let mine = (first + gtid * per).min(end);
    let (s1, s2, bad) =
        // SAFETY: `params` points to one value (the kernel's contract).
        vegas::plain_points::<crate::rng::Philox4x32x10, _>(&job, unsafe { &*params }, mine, (mine + per).min(end));
    // SAFETY: `sums` holds 7 words.
    unsafe {
        atomic_add_192(sums, s1.w);
        atomic_add_192(sums.add(3), s2.w);
        if bad != 0 {
            crate::platform::nvptx::global_atomic_add_u64(sums.add(6), bad);
        }
    }
}

/// The entry points of one generator, generated for every line of
/// [`crate::for_each_generator!`]: `init__<gen>`, `fill_u32__<gen>`, `fill_uniform__<gen>`,
/// `fill_uniform_f64__<gen>`, `fill_normal_exact__<gen>`, `fill_normal_fast__<gen>`, `asian_basket_exact__<gen>`,
/// `asian_basket_fast__<gen>`. Arguments, as the host passes them:
/// - `init(states, seed, first_stream, streams)`: `states` holds `streams` states;
/// - `fill_*(out, len, states, streams)`: one block of the interleaved fill layout, `out` holds
///   `len` values, `states` `streams` states, which the kernel advances;
/// - `asian_basket_*(p, seed, first, end, out)`: paths `first..end`, `out` holds 17 words per
///   warp of the grid.
///
/// A warp-stream generator's (`, warp_stream` in the list) have the same names and arguments;
/// its `init` and `fill_*` give each stream a warp (see `init_warp_streams`).
///
/// A collective generator's (`, collective` in the list) have the same names; its `init` and
/// `fill_*` take lane words aligned to 32 (see `init_collective` and `fill_collective`):
/// - `init(words, seed, first_lane, lanes)`;
/// - `fill_*(out, len, words, streams, pad, lanes)`.
/// The built-in integrands' VEGAS kernel `vegas__<id>` of the generator `G` in scope
/// ([`VegasDraw`]: per-thread streams or the collective form).
macro_rules! vegas_kernel {
    ($id:ident) => {
        #[unsafe(export_name = concat!("vegas__", stringify!($id)))]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "ptx-kernel" fn vegas(
            job: crate::vegas::VegasJob,
            params: *const crate::vegas::IntegrandParams,
            edges: *const f64,
            offsets: *const u64,
            cubes: *mut u64,
            bins: *mut u64,
            stats: *mut u64,
            shared_bins: u32,
            first: u64,
            end: u64,
        ) {
            // SAFETY: the host sizes the buffers and the shared memory as the generator's
            // `VegasDraw::vegas_kernel` documents; `params` points to one value.
            unsafe {
                <G as VegasDraw>::vegas_kernel::<_>(job, &*params, edges, offsets, cubes, bins, stats, shared_bins, first, end)
            }
        }
    };
}

macro_rules! generator_kernels {
    ([] $(($G:ident, $id:ident $(, $kind:ident)?)),* $(,)?) => { $(
        generator_kernels_of!($G, $id $(, $kind)?);
    )* };
}

macro_rules! generator_kernels_of {
    ($G:ident, $id:ident) => {
        generator_kernels_of!(@states $G, $id, init_states, fill_stores);
    };
    ($G:ident, $id:ident, warp_stream) => {
        generator_kernels_of!(@states $G, $id, init_warp_streams, fill_warp_stores);
    };
    (@states $G:ident, $id:ident, $init:ident, $fill:ident) => {
        pub mod $id {
            use super::*;
            type G = crate::rng::$G;

            #[unsafe(export_name = concat!("init__", stringify!($id)))]
            pub unsafe extern "ptx-kernel" fn init(states: *mut G, seed: u64, first: u64, streams: u64) {
                // SAFETY: the host sizes the buffers as documented above.
                unsafe { $init::<G>(states, seed, first, streams) }
            }

            #[unsafe(export_name = concat!("fill_u32__", stringify!($id)))]
            pub unsafe extern "ptx-kernel" fn fill_u32(out: *mut u32, len: u64, states: *mut G, streams: u64) {
                // SAFETY: as above.
                unsafe { by_alignment!(out, $fill::<Words, G>(out, len, states, streams)) }
            }

            #[unsafe(export_name = concat!("fill_uniform__", stringify!($id)))]
            pub unsafe extern "ptx-kernel" fn fill_uniform(out: *mut f32, len: u64, states: *mut G, streams: u64) {
                // SAFETY: as above.
                unsafe { by_alignment!(out, $fill::<Uniforms, G>(out, len, states, streams)) }
            }

            #[unsafe(export_name = concat!("fill_uniform_f64__", stringify!($id)))]
            pub unsafe extern "ptx-kernel" fn fill_uniform_f64(out: *mut f64, len: u64, states: *mut G, streams: u64) {
                // SAFETY: as above.
                unsafe { by_alignment!(out, $fill::<UniformsF64, G>(out, len, states, streams)) }
            }

            #[unsafe(export_name = concat!("fill_normal_exact__", stringify!($id)))]
            pub unsafe extern "ptx-kernel" fn fill_normal_exact(out: *mut f32, len: u64, states: *mut G, streams: u64) {
                // SAFETY: as above.
                unsafe { by_alignment!(out, $fill::<Normals<Exact>, G>(out, len, states, streams)) }
            }

            #[unsafe(export_name = concat!("fill_normal_fast__", stringify!($id)))]
            pub unsafe extern "ptx-kernel" fn fill_normal_fast(out: *mut f32, len: u64, states: *mut G, streams: u64) {
                // SAFETY: as above.
                unsafe { by_alignment!(out, $fill::<Normals<Fast>, G>(out, len, states, streams)) }
            }

            dist_kernels_states!($id);

            #[unsafe(export_name = concat!("asian_basket_exact__", stringify!($id)))]
            pub unsafe extern "ptx-kernel" fn asian_basket_exact(
                p: AsianBasketSteps,
                seed: u64,
                first: u64,
                end: u64,
                out: *mut u64,
            ) {
                // SAFETY: as above.
                unsafe { asian_basket::<G, Exact>(p, seed, first, end, out) }
            }

            #[unsafe(export_name = concat!("asian_basket_fast__", stringify!($id)))]
            pub unsafe extern "ptx-kernel" fn asian_basket_fast(
                p: AsianBasketSteps,
                seed: u64,
                first: u64,
                end: u64,
                out: *mut u64,
            ) {
                // SAFETY: as above.
                unsafe { asian_basket::<G, Fast>(p, seed, first, end, out) }
            }

            asian_any_kernels!($id, |p, seed, first, end, out, M| asian_basket_any::<G, M>(p, seed, first, end, out));

            instrument_kernels!($id, instrument_states);

            basket_kernels!($id, basket_states);

            vegas_kernel!($id);
        }
    };
    ($G:ident, $id:ident, collective) => {
        pub mod $id {
            use super::*;
            type G = crate::rng::$G;

            #[unsafe(export_name = concat!("init__", stringify!($id)))]
            pub unsafe extern "ptx-kernel" fn init(words: *mut u32, seed: u64, first_lane: u64, lanes: u64) {
                // SAFETY: the host sizes and aligns the buffers as documented above.
                unsafe { init_collective::<G>(words, seed, first_lane, lanes) }
            }

            dist_kernels_collective!($id);


            vegas_kernel!($id);

            #[unsafe(export_name = concat!("fill_u32__", stringify!($id)))]
            pub unsafe extern "ptx-kernel" fn fill_u32(
                out: *mut u32,
                len: u64,
                words: *mut u32,
                streams: u64,
                pad: u64,
                lanes: u64,
            ) {
                // SAFETY: as above.
                unsafe { fill_collective::<Words, G>(out, len, words, streams, pad, lanes) }
            }

            #[unsafe(export_name = concat!("fill_uniform__", stringify!($id)))]
            pub unsafe extern "ptx-kernel" fn fill_uniform(
                out: *mut f32,
                len: u64,
                words: *mut u32,
                streams: u64,
                pad: u64,
                lanes: u64,
            ) {
                // SAFETY: as above.
                unsafe { fill_collective::<Uniforms, G>(out, len, words, streams, pad, lanes) }
            }

            #[unsafe(export_name = concat!("fill_uniform_f64__", stringify!($id)))]
            pub unsafe extern "ptx-kernel" fn fill_uniform_f64(
                out: *mut f64,
                len: u64,
                words: *mut u32,
                streams: u64,
                pad: u64,
                lanes: u64,
            ) {
                // SAFETY: as above.
                unsafe { fill_collective::<UniformsF64, G>(out, len, words, streams, pad, lanes) }
            }

            #[unsafe(export_name = concat!("fill_normal_exact__", stringify!($id)))]
            pub unsafe extern "ptx-kernel" fn fill_normal_exact(
                out: *mut f32,
                len: u64,
                words: *mut u32,
                streams: u64,
                pad: u64,
                lanes: u64,
            ) {
                // SAFETY: as above.
                unsafe { fill_collective::<Normals<Exact>, G>(out, len, words, streams, pad, lanes) }
            }

            #[unsafe(export_name = concat!("fill_normal_fast__", stringify!($id)))]
            pub unsafe extern "ptx-kernel" fn fill_normal_fast(
                out: *mut f32,
                len: u64,
                words: *mut u32,
                streams: u64,
                pad: u64,
                lanes: u64,
            ) {
                // SAFETY: as above.
                unsafe { fill_collective::<Normals<Fast>, G>(out, len, words, streams, pad, lanes) }
            }

            #[unsafe(export_name = concat!("asian_basket_exact__", stringify!($id)))]
            pub unsafe extern "ptx-kernel" fn asian_basket_exact(
                p: AsianBasketSteps,
                seed: u64,
                first: u64,
                end: u64,
                out: *mut u64,
            ) {
                // SAFETY: as above.
                unsafe { asian_collective::<G, Exact, false>(p, seed, first, end, out) }
            }

            #[unsafe(export_name = concat!("asian_basket_fast__", stringify!($id)))]
            pub unsafe extern "ptx-kernel" fn asian_basket_fast(
                p: AsianBasketSteps,
                seed: u64,
                first: u64,
                end: u64,
                out: *mut u64,
            ) {
                // SAFETY: as above.
                unsafe { asian_collective::<G, Fast, false>(p, seed, first, end, out) }
            }

            asian_any_kernels!($id, |p, seed, first, end, out, M| asian_collective::<G, M, true>(p, seed, first, end, out));

            instrument_kernels!($id, instrument_collective);

            basket_kernels!($id, basket_collective);
        }
    };
}

crate::for_each_generator!(generator_kernels);

/// cuRAND's host-API layout (see [`crate::curand`]): thread `t` takes lane `t mod T`, chunk
/// `t / T` of its rounds (`rounds_per_chunk` rounds each, `chunks` per lane), and writes value
/// `m` of `call` to `out[m - first]`. Consecutive threads take consecutive lanes, whose groups are
/// `W` values apart, so the stores of a round are coalesced: one vector store per Philox group
/// (16 or 32 bytes) where `out[m - first]` is 16-byte aligned, i.e. where `first` is a multiple
/// of 4 and `out` is aligned (`store_group`), four scalar stores otherwise.
///
/// Lane `l`'s first group of the call starts at word `starts[l]` of its subsequence when
/// `starts` is not null, else at [`inline_start`]`(&inline, l)`: the host passes the step
/// function by value when it has at most `INLINE_STARTS` steps (no per-lane table to compute or
/// copy), a table of `T` words otherwise.
///
/// # Safety
/// `out` holds `end - first` values; `starts` is null or holds `T` words.
#[inline(always)]
unsafe fn curand_host<G: CurandGenerator, V: CurandValue>(
    out: *mut V,
    call: CurandCall,
    inline: crate::curand::InlineStarts,
    starts: *const u64,
    rounds_per_chunk: u64,
    chunks: u64,
) {
    let (gtid, threads) = grid_position();
    // `max(1)`: never 0 by the host's contract, and no division-by-zero panic path.
    let lanes = call.lanes.max(1);
    // Piece `chunk` of lane `lane`, whose rounds in the call are `r0..=r1` and whose round `r0`
    // starts at word `start0`.
    let piece = |lane: u64, chunk: u64, r0: u64, r1: u64, start0: u64| {
        let from = r0 + chunk * rounds_per_chunk;
        if from <= r1 {
            let to = (from + rounds_per_chunk - 1).min(r1);
            // SAFETY: `r0 <= from <= to <= r1`, the lane's rounds in the call, so `lane_chunk`
            // passes indices `i` with `i + G::GROUP <= end - first` to the first closure and
            // `i < end - first` to the second: inside `out`.
            lane_chunk::<G, V>(
                &call,
                lane,
                r0,
                start0,
                from,
                to,
                |i, g| unsafe {
                    if G::GROUP == GROUP as u64 && i % GROUP as u64 == 0 && vector_aligned(out) {
                        store_group::<true, _>(out, i as usize, g, GROUP);
                    } else {
                        let mut j = 0;
                        while j < G::GROUP as usize && j < GROUP {
                            out.add(i as usize + j).write(g[j]);
                            j += 1;
                        }
                    }
                },
                |i, v| unsafe { out.add(i as usize).write(v) },
            );
        }
    };
    let start_of = |lane: u64| {
        if starts.is_null() {
            crate::curand::inline_start(&inline, lane)
        } else {
            // SAFETY: `lane < T`, in bounds of `starts`.
            unsafe { starts.add(lane as usize).read() }
        }
    };
    if threads % lanes == 0 {
        // The host's usual grid: a whole number of threads per lane, so a thread keeps one lane
        // and takes every (threads / T)-th piece of it; the lane's rounds and start are found
        // once, not per piece (64-bit divisions, the start table), which keeps short pieces
        // cheap.
        let lane = gtid % lanes;
        if let Some((r0, r1)) = call.rounds(lane) {
            let start0 = start_of(lane);
            let mut chunk = gtid / lanes;
            let step = threads / lanes;
            while chunk < chunks {
                piece(lane, chunk, r0, r1, start0);
                chunk += step;
            }
        }
    } else {
        let mut t = gtid;
        while t < lanes * chunks {
            let (lane, chunk) = (t % lanes, t / lanes);
            if let Some((r0, r1)) = call.rounds(lane) {
                piece(lane, chunk, r0, r1, start_of(lane));
            }
            t += threads;
        }
    }
}

/// `curand_host_{u32,f32,f64}__<gen>(out, call, inline, starts, rounds_per_chunk, chunks)` for
/// the generators cuRAND's host API has.
macro_rules! curand_host_kernels {
    ($(($G:ident, $id:ident)),* $(,)?) => { $(
        pub mod $id {
            use super::*;
            type G = crate::rng::$G;

            #[unsafe(export_name = concat!("curand_host_u32__", stringify!($id)))]
            pub unsafe extern "ptx-kernel" fn u32s(
                out: *mut u32,
                call: CurandCall,
                inline: crate::curand::InlineStarts,
                starts: *const u64,
                r: u64,
                c: u64,
            ) {
                // SAFETY: the host sizes the buffers as documented at `curand_host`.
                unsafe { curand_host::<G, u32>(out, call, inline, starts, r, c) }
            }

            #[unsafe(export_name = concat!("curand_host_f32__", stringify!($id)))]
            pub unsafe extern "ptx-kernel" fn f32s(
                out: *mut f32,
                call: CurandCall,
                inline: crate::curand::InlineStarts,
                starts: *const u64,
                r: u64,
                c: u64,
            ) {
                // SAFETY: as above.
                unsafe { curand_host::<G, f32>(out, call, inline, starts, r, c) }
            }

            #[unsafe(export_name = concat!("curand_host_f64__", stringify!($id)))]
            pub unsafe extern "ptx-kernel" fn f64s(
                out: *mut f64,
                call: CurandCall,
                inline: crate::curand::InlineStarts,
                starts: *const u64,
                r: u64,
                c: u64,
            ) {
                // SAFETY: as above.
                unsafe { curand_host::<G, f64>(out, call, inline, starts, r, c) }
            }
        }
    )* };
}

/// The cuRAND host-API kernels, in their own module so their names do not collide with the
/// generators' modules.
pub mod curand_host_layout {
    use super::*;
    curand_host_kernels!((Xorwow, xorwow), (Mrg32k3aCurand, mrg32k3a_curand), (Philox4x32x10, philox4x32_10));
}
