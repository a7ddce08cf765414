//! Adaptive multidimensional integration (VEGAS with adaptive stratification, "VEGAS+"): the
//! per-point work, shared by the CPU executor and the GPU kernel.
//!
//! One iteration samples `points` points of the unit cube `[0, 1]^d` in `y` space:
//! - `y` space is cut into `strata^d` equal hypercubes; hypercube `h` gets `n_h` points, the
//!   points `offsets[h] .. offsets[h + 1]` of the iteration (the host allocates them);
//! - point `k` draws its `d` coordinates inside its hypercube from stream `first_stream + k` of
//!   `seed` (two words per coordinate, a 53-bit uniform in `(0, 1]`), so a point's value does not
//!   depend on which thread, block, device or process evaluates it. A collective generator (the
//!   warp generators, `Generator::LANES = 32`) is drawn in tiles instead ([`TILE_ROUNDS`]): its
//!   streams cost a jump each to set up, and its 32 lanes must draw together on the GPU;
//! - each `y_j` is mapped to `x_j` through axis `j`'s adaptive grid (`bins` increments with
//!   edges `edges[j (bins + 1) ..]`, piecewise linear), with Jacobian `J = Π bins Δx_j`;
//! - `v = f(x) J 2^-s` (`s` = `scale_exp`, a power of two chosen by the host so that `|v| < 2^31`)
//!   is rounded once to fixed point and added to its hypercube's exact sums `Σv`, `Σv²`, and
//!   `v² (1 / n_h)`, rounded to a multiple of `2^-bin_frac_bits` ([`bin_quantum`]), to the exact
//!   sum of each axis's bin that the point fell in (the grid's training data: an estimate of
//!   `∫ (f J)²` over that bin, whose scale does not matter to the refinement).
//!
//! Every sum is an [`ExactSum`] (fixed point, integer addition), so the result is the same bit
//! for bit whatever the order in which points are added: launch shape, thread count, device
//! count, MPI ranks.
//!
//! Integrands ([`Integrand`]): the six Genz test families and Lepage's pair of narrow Gaussians,
//! written with correctly rounded operations and [`crate::math64`] only, so both builds evaluate
//! them to the same bits.

use crate::accum::{ExactSum, MAX_ABS, to_fixed64};
use crate::convert::u32_pair_to_unit_f64;
use crate::math64::{exp_f64, sincos_turn_f64};
use crate::rng::{Generator, Uniform32};

/// Most dimensions.
pub const MAX_DIM: usize = 32;
/// Most grid increments per axis.
pub const MAX_BINS: u32 = 512;
/// Most hypercubes of the stratification.
pub const MAX_CUBES: u64 = 1 << 22;
/// Words of a hypercube's sums in the output (`Σv`, then `Σv²`).
pub const CUBE_WORDS: usize = 6;
/// Words of one bin's sum (a sum of [`bin_quantum`]s: below `points 2^64`, so the third word
/// stays zero; the layout is an [`ExactSum`]'s, so the host merges bins and hypercubes alike).
pub const BIN_WORDS: usize = 3;
/// A point adds `round(v² / n_h 2^F)` to each of its bins, a single `u64` (`F` =
/// `VegasJob::bin_frac_bits`, chosen from the plan by [`bin_frac_bits`]): one 64-bit add per bin
/// instead of three on the GPU. The host keeps the largest `|v|` of an iteration near `2^28`
/// (and redoes an iteration whose values stay below `2^16`), so that the quanta resolve the
/// bins' weights far more finely than the grid needs.
/// Bytes of one bin's sum in a block's shared memory on the GPU: 128 bits as four `u32`, each
/// added with the hardware's native 32-bit shared atomic (there is no 64-bit one: PTX's
/// `atom.shared.add.u64` is a compare-and-swap loop, which retried several times per add under
/// the block's conflicts). A bin's total stays below `2^128`. The four words lie in four planes
/// of the block's bins (word `w` of every bin in plane `w`), which spreads a warp's adds to
/// random bins over all 32 banks of shared memory.
pub const SHARED_BIN_BYTES: usize = 16;
/// Words of the statistics block: `[max |v| bits, values out of range, values not finite]`.
pub const STAT_WORDS: usize = 3;

/// Rounds of a collective generator's tile. For a generator whose streams are the lanes of a
/// shared warp state (`Generator::LANES = 32`: setting one up is a 1024-step polynomial jump per
/// hexadecimal digit of its warp number, where a point draws `2 d` words), the iteration's points
/// are cut into tiles of [`TILE_POINTS`] = 32 lanes x `TILE_ROUNDS` rounds: point `k` is lane
/// `l = k mod 32` of round `r = (k mod TILE_POINTS) / 32` of tile `t = k / TILE_POINTS`, and draws
/// words `2 d r .. 2 d (r + 1)` of stream `32 (tile_warp(job, 0) + t) + l` ([`tile_warp`]). The
/// 32 points of a round are then the 32 lanes of one warp drawing in lockstep, and a warp sets
/// up one warp state per 32768 points (one table jump from the previous tile's). A point's
/// coordinates still depend only on the seed, the iteration and `k`.
pub const TILE_ROUNDS: u64 = 1024;
/// Points of a collective generator's tile.
pub const TILE_POINTS: u64 = 32 * TILE_ROUNDS;

/// The warp state of tile `t` of `job` for a collective generator: `ceil(first_stream / 32) + t`.
/// The iterations' first streams grow by their point counts, and a tile of 32768 points takes one
/// warp state (32 streams), so the warp states of different iterations do not meet.
#[inline(always)]
pub fn tile_warp(job: &VegasJob, t: u64) -> u64 {
    job.first_stream.div_ceil(32) + t
}

/// The integrand families, by number (`IntegrandParams::family`).
pub mod family {
    /// Genz 1: `cos(2π u_1 + Σ a_i x_i)`.
    pub const OSCILLATORY: u32 = 0;
    /// Genz 2: `Π 1 / (a_i^-2 + (x_i - u_i)²)`.
    pub const PRODUCT_PEAK: u32 = 1;
    /// Genz 3: `(1 + Σ a_i x_i)^-(d+1)`.
    pub const CORNER_PEAK: u32 = 2;
    /// Genz 4: `exp(-Σ a_i² (x_i - u_i)²)`.
    pub const GAUSSIAN: u32 = 3;
    /// Genz 5: `exp(-Σ a_i |x_i - u_i|)`.
    pub const CONTINUOUS: u32 = 4;
    /// Genz 6: `0` where `x_1 > u_1` or `x_2 > u_2`, else `exp(Σ a_i x_i)`.
    pub const DISCONTINUOUS: u32 = 5;
    /// Lepage's test: `norm (exp(-Σ (x_i - 1/3)² / w²) + exp(-Σ (x_i - 2/3)² / w²)) / 2`, with
    /// `w = c` and `norm = (w √π)^-d` (`scale`), whose integral is close to 1 for narrow `w`.
    pub const NARROW_GAUSSIANS: u32 = 6;
    /// Families defined.
    pub const COUNT: u32 = 7;
}

/// An integrand's parameters, read by the GPU kernels from device memory (by pointer: taken by
/// value, every thread would copy the whole block to its own local memory).
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct IntegrandParams {
    pub family: u32,
    pub dim: u32,
    /// A family's scalar (the narrow Gaussians' width `w`).
    pub c: f64,
    /// A family's precomputed factor (the narrow Gaussians' normalisation).
    pub scale: f64,
    /// Genz's difficulty parameters `a_i` (only the first `dim` are read).
    pub a: [f64; MAX_DIM],
    /// Genz's shift parameters `u_i`.
    pub u: [f64; MAX_DIM],
}

/// `1 / (2π)` rounded once, to write `cos(θ)` as the cosine of `θ / 2π` turns.
const INV_TWO_PI: f64 = 0.159_154_943_091_895_35;
/// `2^64` as `f64`.
const TWO_POW_64: f64 = 18_446_744_073_709_551_616.0;

/// `floor(w)` for `|w| < 2^62` (truncation, one correction).
#[inline(always)]
fn floor_f64(w: f64) -> f64 {
    let t = w as i64 as f64;
    if t > w { t - 1.0 } else { t }
}

/// `cos(2π t)`: `t` reduced to `[0, 1)` turns (exact) and evaluated by `sincos_turn_f64`.
#[inline(always)]
fn cos_turns(t: f64) -> f64 {
    if !(t.abs() < 4.0e18) {
        return f64::NAN;
    }
    let frac = t - floor_f64(t); // exact, in [0, 1]
    let z = frac * TWO_POW_64; // exact (a power of two)
    // `frac` can round up to 1.0 only in theory (it is exact); the conversion saturates then.
    let z = if z >= TWO_POW_64 { 0 } else { z as u64 };
    sincos_turn_f64(z).1
}

/// A function of a point of the unit cube, evaluated with the same operations on both builds.
pub trait Integrand {
    fn eval(&self, x: &[f64]) -> f64;
}

impl Integrand for IntegrandParams {
    #[inline(always)]
    fn eval(&self, x: &[f64]) -> f64 {
        genz(self, x)
    }
}

/// The built-in integrand `p.family` at `x` (`x.len() == p.dim`); NaN for an unknown family.
/// Written with iterators only (no index that could panic: the GPU build has no unwinding).
#[inline(always)]
pub fn genz(p: &IntegrandParams, x: &[f64]) -> f64 {
    let axes = || x.iter().zip(&p.a).zip(&p.u).map(|((&x, &a), &u)| (x, a, u));
    match p.family {
        family::OSCILLATORY => {
            let mut s = 0.0;
            for (x, a, _) in axes() {
                s += a * x;
            }
            cos_turns(p.u[0] + s * INV_TWO_PI)
        }
        family::PRODUCT_PEAK => {
            let mut prod = 1.0;
            for (x, a, u) in axes() {
                let t = x - u;
                prod *= 1.0 / (1.0 / (a * a) + t * t);
            }
            prod
        }
        family::CORNER_PEAK => {
            let mut s = 1.0;
            let mut n = 0;
            for (x, a, _) in axes() {
                s += a * x;
                n += 1;
            }
            let r = 1.0 / s;
            let mut out = r;
            for _ in 0..n {
                out *= r;
            }
            out
        }
        family::GAUSSIAN => {
            let mut s = 0.0;
            for (x, a, u) in axes() {
                let t = a * (x - u);
                s += t * t;
            }
            exp_f64(-s)
        }
        family::CONTINUOUS => {
            let mut s = 0.0;
            for (x, a, u) in axes() {
                s += a * (x - u).abs();
            }
            exp_f64(-s)
        }
        family::DISCONTINUOUS => {
            let beyond = |i: usize| x.get(i).is_some_and(|&xi| xi > p.u[i & (MAX_DIM - 1)]);
            if beyond(0) || beyond(1) {
                return 0.0;
            }
            let mut s = 0.0;
            for (x, a, _) in axes() {
                s += a * x;
            }
            exp_f64(s)
        }
        family::NARROW_GAUSSIANS => {
            let inv_w2 = 1.0 / (p.c * p.c);
            let (mut s1, mut s2) = (0.0, 0.0);
            for (xi, _, _) in axes() {
                let t1 = xi - 1.0 / 3.0;
                let t2 = xi - 2.0 / 3.0;
                s1 += t1 * t1;
                s2 += t2 * t2;
            }
            p.scale * 0.5 * (exp_f64(-s1 * inv_w2) + exp_f64(-s2 * inv_w2))
        }
        _ => f64::NAN,
    }
}

/// The GPU entry point of a user's integrand, for a crate of the user's that is compiled to PTX
/// like this one (README, "Your own integrand on the GPU"):
///
/// ```ignore
/// #[repr(C)]
/// #[derive(Clone, Copy)]
/// pub struct MyParams { pub k: f64 }
/// impl warpmc_kernels::vegas::Integrand for MyParams {
///     fn eval(&self, x: &[f64]) -> f64 { /* core operations and warpmc_kernels::math64 only */ }
/// }
/// warpmc_kernels::integrand_kernel!(my_integrand, MyParams);
/// ```
///
/// On the PTX build it defines the kernel `my_integrand` (Philox4x32-10 streams), with the
/// built-in kernel's arguments, the parameters by pointer as there: `(job, params: *const
/// MyParams, edges, offsets, cubes, bins, stats, shared_bins, first, end)`, and declares the
/// block's dynamic shared memory that the kernel sums the bins in (invoke it once per crate).
/// On the CPU build it defines nothing: the host evaluates `MyParams::eval` itself.
///
/// Other generators are listed after the type, each as `suffix: Type` with the suffix of the
/// built-in kernels (the `--generator` name with `_` for `-`; checked when the module compiles):
///
/// ```ignore
/// warpmc_kernels::integrand_kernel!(my_integrand, MyParams, mrg32k3a: Mrg32k3a, warp_shfl: WarpShfl);
/// ```
///
/// adds the kernels `my_integrand__mrg32k3a` and `my_integrand__warp_shfl`, which the host
/// launches for `--generator mrg32k3a` and `warp-shfl` (each kernel is compiled when the module
/// is loaded, so list only the generators you use).
#[macro_export]
macro_rules! integrand_kernel {
    ($name:ident, $F:ty, $($id:ident : $G:ident),+ $(,)?) => {
        $crate::integrand_kernel!($name, $F);

        /// The kernels of `integrand_kernel!`'s other generators, one module each.
        #[cfg(target_arch = "nvptx64")]
        #[allow(non_snake_case)]
        pub mod $name {
            $(
                pub mod $id {
                    #[allow(unused_imports)]
                    use super::super::*;
                    const _: () = assert!(
                        $crate::rng::is_kernel_suffix(<$crate::rng::$G as $crate::rng::Generator>::NAME, stringify!($id)),
                        concat!("integrand_kernel!: `", stringify!($id), "` is not the kernel suffix of ", stringify!($G)),
                    );

                    /// `integrand_kernel!`'s kernel for this generator.
                    ///
                    /// # Safety
                    /// As `warpmc_kernels::gpu::VegasDraw::vegas_kernel`, and `params` points to one value.
                    #[unsafe(export_name = concat!(stringify!($name), "__", stringify!($id)))]
                    #[allow(clippy::too_many_arguments)]
                    pub unsafe extern "ptx-kernel" fn kernel(
                        job: $crate::vegas::VegasJob,
                        params: *const $F,
                        edges: *const f64,
                        offsets: *const u64,
                        cubes: *mut u64,
                        bins: *mut u64,
                        stats: *mut u64,
                        shared_bins: u32,
                        first: u64,
                        end: u64,
                    ) {
                        // SAFETY: the host sizes the buffers and the shared memory as the
                        // generator's kernel documents.
                        unsafe {
                            <$crate::rng::$G as $crate::gpu::VegasDraw>::vegas_kernel::<$F>(
                                job, &*params, edges, offsets, cubes, bins, stats, shared_bins, first, end,
                            )
                        }
                    }
                }
            )+
        }
    };
    ($name:ident, $F:ty) => {
        // The module's dynamic shared memory (`platform::nvptx::shared_address` names it); the
        // user's module is compiled on its own, so it declares it too.
        #[cfg(target_arch = "nvptx64")]
        core::arch::global_asm!(".extern .shared .align 16 .b8 warpmc_shared[];");

        /// A VEGAS kernel for this crate's integrand (`warpmc_kernels::integrand_kernel!`).
        ///
        /// # Safety
        /// As `warpmc_kernels::gpu::vegas_points`, and `params` points to one value.
        #[cfg(target_arch = "nvptx64")]
        #[unsafe(no_mangle)]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "ptx-kernel" fn $name(
            job: $crate::vegas::VegasJob,
            params: *const $F,
            edges: *const f64,
            offsets: *const u64,
            cubes: *mut u64,
            bins: *mut u64,
            stats: *mut u64,
            shared_bins: u32,
            first: u64,
            end: u64,
        ) {
            // SAFETY: the host sizes the buffers as `vegas_points` documents.
            unsafe {
                $crate::gpu::vegas_points::<$crate::rng::Philox4x32x10, $F>(
                    job,
                    &*params,
                    edges,
                    offsets,
                    cubes,
                    bins,
                    stats,
                    shared_bins,
                    first,
                    end,
                )
            }
        }
    };
}

/// One iteration's sampling plan, passed to the GPU by value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct VegasJob {
    pub seed: u64,
    /// The stream of the iteration's point 0.
    pub first_stream: u64,
    /// Points of the iteration (`offsets[cubes]`).
    pub points: u64,
    /// Hypercubes (`strata^dim`).
    pub cubes: u64,
    pub dim: u32,
    /// Grid increments per axis.
    pub bins: u32,
    /// Strata per axis.
    pub strata: u32,
    /// Values are `f J 2^-scale_exp`, `-1000 <= scale_exp <= 1000`.
    pub scale_exp: i32,
    /// Fractional bits of the bins' quanta ([`bin_quantum`]): at most `2 + floor(log2(n_min))`,
    /// `n_min` the fewest points of a hypercube, so that a quantum fits 64 bits.
    pub bin_frac_bits: u32,
    /// Zero (keeps the layout free of padding).
    pub reserved: u32,
}

/// The most fractional bits the bins' quanta can have for a plan whose smallest hypercube has
/// `n_min` points: `v² / n_h < 2^62 / n_min`, so `2 + floor(log2(n_min))` keeps a quantum below
/// `2^64`. Relative to the largest possible value, a quantum is then `2^-64`: a hypercube of
/// `n_h` points loses only values whose `v² / n_h` is below that.
pub fn bin_frac_bits(n_min: u64) -> u32 {
    2 + (63 - n_min.max(1).leading_zeros())
}

/// `2^-s` for `-1000 <= s <= 1000` (exact, built from its bits).
#[inline(always)]
pub fn pow2_neg(s: i32) -> f64 {
    let e = (1023 - s.clamp(-1000, 1000)) as u64;
    f64::from_bits(e << 52)
}

/// A point's contribution to its bins, `w = v² / n_h`, as a count of `2^-F` (`scale = 2^F`,
/// [`bin_frac_bits`]; rounded half up; the scaling is exact, a power of two).
#[inline(always)]
pub fn bin_quantum(w: f64, scale: f64) -> u64 {
    // Below 2^64 for `F` within `bin_frac_bits`; the conversion saturates (NaN is not reached:
    // the caller checks the range).
    crate::platform::f64_to_u64(w * scale + 0.5)
}

/// The hypercube that point `k` belongs to: the `h` with `offsets[h] <= k < offsets[h + 1]`
/// (binary search; `offsets` is non-decreasing with `cubes + 1` entries).
#[inline(always)]
pub fn cube_of(offsets: &[u64], k: u64) -> u64 {
    let (mut lo, mut hi) = (0usize, offsets.len().saturating_sub(1)); // offsets[lo] <= k < offsets[hi]
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if offsets.get(mid).is_some_and(|&o| o <= k) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo as u64
}

/// `offsets[i]`, or `u64::MAX` beyond the end (the host checks the plan; no panic on the GPU).
#[inline(always)]
fn offset(offsets: &[u64], i: u64) -> u64 {
    offsets.get(i as usize).copied().unwrap_or(u64::MAX)
}

/// Where a point's results go: the hypercube sums (flushed once per run of points in the same
/// hypercube), the bins' sums and the statistics.
pub trait Sink {
    /// Add a run of one hypercube's sums. `whole`: the run holds all of the hypercube's points,
    /// so no other run adds to it (a sink whose totals start at zero may store them).
    fn cube(&mut self, h: u64, sum: &ExactSum, sum_sq: &ExactSum, whole: bool);
    /// Add `q` quanta ([`bin_quantum`]: one point's, or a run's total) to bin `bin` of axis
    /// `axis`.
    fn bin(&mut self, axis: usize, bin: u32, q: u64);
    /// Add one point's `q` quanta to its bin `bin[j]` of every axis `j` (above [`RUN_AXES`],
    /// where points are not summed by runs): [`Sink::bin`] for each axis, unless the sink has a
    /// tighter loop of its own.
    #[inline(always)]
    fn point_bins(&mut self, bin: &[u16], q: u64) {
        for (j, &b) in bin.iter().enumerate() {
            self.bin(j, b as u32, q);
        }
    }
    /// A value of magnitude `abs_bits` (the bits of `|v|`, ordered as the magnitudes are; 0 for
    /// a value that is not finite): in range, out of range (`|v| >= 2^31`, left out), or not
    /// finite (left out).
    fn value(&mut self, abs_bits: u64, out_of_range: bool, not_finite: bool);
}

/// A hypercube's position along each axis (its base-`strata` digits, axis 0 first), packed
/// into one word, `width` bits a digit: kept in a register, where an array indexed by the axis
/// would live in the GPU thread's local memory. `strata^dim <= MAX_CUBES = 2^22` gives
/// `dim width <= 22 + dim <= 54` bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CubeDigits {
    packed: u64,
    width: u32,
    strata: u32,
}

impl CubeDigits {
    /// The digits of hypercube `h` (division: once per run of points, at its first hypercube).
    #[inline(always)]
    pub fn of(h: u64, strata: u32, dim: usize) -> Self {
        let ns = strata.max(1);
        // Bits of the largest digit, `strata - 1`.
        let width = 32 - (ns - 1).leading_zeros();
        // 32-bit arithmetic: at most MAX_CUBES = 2^22 hypercubes (a 64-bit division costs a
        // GPU dozens of instructions).
        let (mut rem, mut packed, mut shift) = (h as u32, 0u64, 0u32);
        for _ in 0..dim.min(MAX_DIM) {
            packed |= ((rem % ns) as u64).wrapping_shl(shift);
            rem /= ns;
            shift += width;
        }
        Self { packed, width, strata: ns }
    }

    /// Digit `j` (axis `j`'s position, `< strata`).
    #[inline(always)]
    pub fn get(&self, j: usize) -> u32 {
        (self.packed.wrapping_shr(j as u32 * self.width) as u32) & self.mask()
    }

    /// The mask of one digit's bits.
    #[inline(always)]
    fn mask(&self) -> u32 {
        ((1u64 << self.width) - 1) as u32 // width <= 32
    }

    /// The digits of the next hypercube (an odometer over the first `dim` digits: no division,
    /// which a GPU does in dozens of instructions; hypercubes change every few points).
    #[inline(always)]
    pub fn advance(&mut self, dim: usize) {
        let mut shift = 0u32;
        for j in 0..dim.min(MAX_DIM) {
            let c = self.get(j);
            if c + 1 < self.strata {
                self.packed = self.packed.wrapping_add(1u64.wrapping_shl(shift));
                return;
            }
            self.packed &= !(((1u64 << self.width) - 1).wrapping_shl(shift));
            shift += self.width;
        }
    }
}

/// The unit uniforms of a point's `d` axes, two axes at a time: `pair(j, u_j, Some(u_{j+1}))`
/// for `j = 0, 2, 4, ...`, and `pair(d - 1, u_{d-1}, None)` last when `d` is odd. Two words an
/// axis (a 53-bit uniform in `(0, 1]`), drawn four at a time
/// ([`crate::rng::Uniform32::next_u32x4`]: one block of a counter-based generator, with no
/// bookkeeping of a partly used block): the same words as two `next_u32` calls an axis.
#[inline(always)]
pub fn axis_uniform_pairs<U: Uniform32>(rng: &mut U, d: usize, mut pair: impl FnMut(usize, f64, Option<f64>)) {
    let mut j = 0;
    while j + 1 < d {
        let [a, b, c, e] = rng.next_u32x4();
        pair(j, u32_pair_to_unit_f64(a, b), Some(u32_pair_to_unit_f64(c, e)));
        j += 2;
    }
    if j < d {
        let a = rng.next_u32();
        let b = rng.next_u32();
        pair(j, u32_pair_to_unit_f64(a, b), None);
    }
}

/// The unit uniforms of a point's `d` axes, one axis at a time in order ([`axis_uniform_pairs`]).
#[inline(always)]
pub fn axis_uniforms<U: Uniform32>(rng: &mut U, d: usize, mut each: impl FnMut(usize, f64)) {
    axis_uniform_pairs(rng, d, |j, a, b| {
        each(j, a);
        if let Some(b) = b {
            each(j + 1, b);
        }
    });
}

/// The point's `x` (first `dim` entries), the bin of each axis, and the Jacobian, for a point of
/// the hypercube whose digits are `digits`.
#[inline(always)]
pub fn map_point<G: Generator>(
    job: &VegasJob,
    edges: &[f64],
    digits: &CubeDigits,
    k: u64,
    x: &mut [f64; MAX_DIM],
    bin: &mut [u16; MAX_DIM],
) -> f64 {
    map_point_from(job, edges, digits, &mut G::stream(job.seed, job.first_stream + k), x, bin)
}

/// One axis of a point located in the grid: its increment `i`, the fraction `frac` of the way
/// through it, and the increment's edges `lo` and `hi`.
#[derive(Clone, Copy)]
struct AxisCell {
    i: u32,
    frac: f64,
    lo: f64,
    hi: f64,
}

/// The axes of a point two at a time: both axes' positions (`ypos` of their uniforms, in axis
/// order) and cells (`fetch`, which loads the increment's edges) before either is `put`. So a
/// GPU thread issues both axes' edge loads before it waits on the first. Measured on an H200
/// (2026-11-29, 2^26 points an iteration, Philox, the default plan; BENCHMARKS.md) against one
/// axis at a time: 0.7 to 5.7 points more of the plain kernel's rate from d = 22 to 32, up to
/// 1.7 points less at d = 8 and 16, with the same registers (128) and the same bits. Pairs on
/// the one-stratum path only, one axis at a time with the digits, was slower than either.
#[inline(always)]
fn map_axes<U: Uniform32>(
    rng: &mut U,
    d: usize,
    mut ypos: impl FnMut(f64) -> f64,
    fetch: impl Fn(usize, f64) -> AxisCell,
    put: &mut impl FnMut(usize, AxisCell),
) {
    axis_uniform_pairs(rng, d, |j, a, b| {
        let ya = ypos(a);
        match b {
            Some(b) => {
                let yb = ypos(b);
                let (ca, cb) = (fetch(j, ya), fetch(j + 1, yb));
                put(j, ca);
                put(j + 1, cb);
            }
            None => put(j, fetch(j, ya)),
        }
    });
}

/// [`map_point`] with the point's words drawn from `rng` (`2 dim` words, [`axis_uniform_pairs`]).
#[inline(always)]
pub fn map_point_from<U: Uniform32>(
    job: &VegasJob,
    edges: &[f64],
    digits: &CubeDigits,
    rng: &mut U,
    x: &mut [f64; MAX_DIM],
    bin: &mut [u16; MAX_DIM],
) -> f64 {
    let d = (job.dim as usize).min(MAX_DIM);
    let bins = job.bins;
    let nb = bins as f64;
    let inv_ns = 1.0 / job.strata as f64;
    // 32-bit index arithmetic: `dim (bins + 1) <= 32 * 513`.
    let stride = bins + 1;
    // Whether the grid holds its `d (bins + 1)` edges (the host checks that it does): known
    // once, so that each axis reads its increment's edges without a bounds check of its own.
    // A grid too short reads (1, 1) everywhere instead (no panic on the GPU).
    let full = bins >= 1 && edges.len() >= d * stride as usize;
    let mut jac = 1.0;
    // Axis `j` at `y` (the point's position in the unit cube before the grid): its increment
    // `i`, `t = y bins - i` within it, and the increment's edges.
    let fetch = |j: usize, y: f64| -> AxisCell {
        let t = y * nb; // in [0, bins (1 + 2^-52)]: finite and not negative
        let i = crate::platform::f64_to_u32(t).min(bins.wrapping_sub(1));
        let e = (j as u32 * stride + i) as usize;
        let (lo, hi) = if full {
            // SAFETY: `full`, `i <= bins - 1` (the `min`, with `bins >= 1`) and `j < d` give
            // `e + 1 <= (d - 1)(bins + 1) + bins < d (bins + 1) <= edges.len()`.
            unsafe { (*edges.get_unchecked(e), *edges.get_unchecked(e + 1)) }
        } else {
            (1.0, 1.0)
        };
        AxisCell { i, frac: t - i as f64, lo, hi }
    };
    // Axis `j`'s coordinate, bin and Jacobian factor from its cell.
    let mut put = |j: usize, c: AxisCell| {
        let width = c.hi - c.lo;
        // `j < d <= MAX_DIM` (the mask only spares the GPU a bounds check).
        x[j & (MAX_DIM - 1)] = c.lo + c.frac * width;
        bin[j & (MAX_DIM - 1)] = c.i as u16; // i < bins <= MAX_BINS = 512
        jac *= nb * width;
    };
    if digits.width == 0 {
        // One stratum an axis (the default plan from 23 dimensions on): every digit is 0 and
        // `inv_ns` 1, so `y` is `u`, the same bits as `(0 + u) 1`, without the digits' work.
        map_axes(rng, d, |u| u, fetch, &mut put);
    } else {
        // The digits in axis order, taken from the packed word as the axes come (a shift by
        // the digits' width, where `CubeDigits::get` shifts by `j width` on 64 bits).
        let (mut rest, mask) = (digits.packed, digits.mask());
        let ypos = |u: f64| {
            let digit = rest as u32 & mask;
            rest >>= digits.width;
            (digit as f64 + u) * inv_ns
        };
        map_axes(rng, d, ypos, fetch, &mut put);
    }
    jac
}

/// Add a quantum `hi 2^32 + lo` to a 128-bit sum kept as four `u32` words (least significant
/// first) by 32-bit atomic adds, as a GPU block sums its bins in shared memory (it has no native
/// 64-bit shared add). `add(w, x)` adds `x` to word `w` atomically and returns the word's old
/// value. Each add that wraps its word adds its carry to the next word, so the 128-bit total is
/// exact whatever the order of the adds of all threads: each word's adds are exact modulo 2^32,
/// and what a wrap loses is added one word up.
///
/// Word 1's add waits on word 0's result (it adds `hi` and word 0's carry in one add). Adding
/// `hi` at once, before that result, and the carry by a third add when there is one, was
/// measured slower (2026-11-28, H200, d = 32: 34.0% of the plain kernel's rate against 37.1%):
/// the extra adds cost more than the wait.
#[inline(always)]
pub fn quad_add(add: &mut impl FnMut(u32, u32) -> u32, lo: u32, hi: u32) {
    let old = add(0, lo);
    let (h, mut carry) = hi.overflowing_add(old.overflowing_add(lo).1 as u32);
    if h != 0 {
        // `h != 0` means `hi + carry` did not wrap: at most one carry goes on.
        carry = add(1, h).overflowing_add(h).1;
    }
    if carry && add(2, 1) == u32::MAX {
        add(3, 1);
    }
}

/// Dimensions up to which a point's bins pack into one word ([`CubeWalk`]'s bin runs), 9 bits
/// an axis (`bin < MAX_BINS = 512`).
pub const RUN_AXES: usize = 7;

/// A thread's walk through the hypercubes of its points, in increasing order: the current
/// hypercube, where its points end, and the exact sums of the run of its points seen so far,
/// sent to the sink as one run when the walk leaves it.
///
/// Up to [`RUN_AXES`] dimensions the bins' quanta are sent by runs too: successive points that
/// fall in the same bin on every axis add their quanta in a register, sent once when a point
/// falls elsewhere (or the sum would pass `2^64`). With at least as many strata as bins a
/// hypercube lies in one bin per axis (in `y`, where the bins are even), so a thread's run spans
/// many hypercubes: at `d = 2` and the default plan (2048 strata, 128 bins) one add per axis
/// stands for hundreds of points, where one per point made the 32 lanes of a GPU warp (whose
/// points share a row of hypercubes) queue on the same shared-memory bin. The totals are exact
/// integers, so the result is the same bits either way.
#[derive(Clone, Copy)]
pub struct CubeWalk {
    h: u64,
    next: u64,
    inv_n: f64,
    digits: CubeDigits,
    sum: ExactSum,
    sum_sq: ExactSum,
    /// The pending bin run's bins, 9 bits an axis, axis 0 lowest.
    run_bins: u64,
    /// Its quanta so far; 0 when nothing is pending.
    run_q: u64,
    /// Whether the walk visits every point of its range (not every 32nd, as a lane of a
    /// collective kernel does).
    contiguous: bool,
    /// Whether the current hypercube's run holds all of its points: it was entered at its
    /// first point by a contiguous walk (not the walk's first hypercube, which its range may
    /// start inside of), and is left before the range ends (not the last).
    whole: bool,
}

impl CubeWalk {
    /// At the hypercube of point `k` (a binary search), with empty sums; `contiguous`: the walk
    /// will visit every point from `k` to the end of its range.
    #[inline(always)]
    pub fn at(offsets: &[u64], k: u64, strata: u32, d: usize, contiguous: bool) -> Self {
        let h = cube_of(offsets, k);
        let next = offset(offsets, h + 1);
        Self {
            h,
            next,
            inv_n: 1.0 / next.wrapping_sub(offset(offsets, h)) as f64,
            digits: CubeDigits::of(h, strata, d),
            sum: ExactSum::ZERO,
            sum_sq: ExactSum::ZERO,
            run_bins: 0,
            run_q: 0,
            contiguous,
            whole: false,
        }
    }

    /// The current hypercube's digits.
    #[inline(always)]
    pub fn digits(&self) -> &CubeDigits {
        &self.digits
    }

    /// Move on to the hypercube of point `k` (at or after the current one's points), sending
    /// the current run's sums when it is left.
    #[inline(always)]
    pub fn reach<S: Sink>(&mut self, offsets: &[u64], k: u64, d: usize, sink: &mut S) {
        if k >= self.next {
            sink.cube(self.h, &self.sum, &self.sum_sq, self.whole);
            self.whole = self.contiguous;
            self.sum = ExactSum::ZERO;
            self.sum_sq = ExactSum::ZERO;
            while k >= self.next {
                self.h += 1;
                self.digits.advance(d);
                let start = self.next;
                self.next = offset(offsets, self.h + 1);
                self.inv_n = 1.0 / self.next.wrapping_sub(start) as f64;
            }
        }
    }

    /// Add a point's value `v` (its bins `bin`; `bin_scale = 2^F`) to the current hypercube's
    /// sums and to the bins, and its size to the statistics.
    #[inline(always)]
    pub fn add<S: Sink>(&mut self, v: f64, bin: &[u16], bin_scale: f64, sink: &mut S) {
        let mag = v.abs();
        if !(mag < MAX_ABS) {
            // A finite value out of range still reports its size (the host rescales from it).
            let finite = v.is_finite();
            sink.value(if finite { mag.to_bits() } else { 0 }, finite, !finite);
        } else {
            sink.value(mag.to_bits(), false, false);
            let sq = v * v;
            // In range, `|v| < 2^31` and `v² < 2^62`: no conversion fails.
            self.sum.add_fixed(to_fixed64(v).unwrap_or(0));
            self.sum_sq.add_fixed(to_fixed64(sq).unwrap_or(0));
            let w = bin_quantum(sq * self.inv_n, bin_scale);
            if w == 0 {
                return;
            }
            if bin.len() > RUN_AXES {
                // No runs: each point's quanta to its bins.
                sink.point_bins(bin, w);
                return;
            }
            // Up to RUN_AXES: the pending run grows, or is sent when this point starts another.
            let mut key = 0u64;
            for (j, &b) in bin.iter().enumerate() {
                key |= (b as u64) << (9 * j as u32);
            }
            if key == self.run_bins
                && let Some(q) = self.run_q.checked_add(w)
            {
                self.run_q = q;
                return;
            }
            let (sent_bins, sent_q) = (self.run_bins, self.run_q);
            (self.run_bins, self.run_q) = (key, w);
            if sent_q != 0 {
                for j in 0..bin.len() {
                    sink.bin(j, ((sent_bins >> (9 * j as u32)) & (MAX_BINS as u64 - 1)) as u32, sent_q);
                }
            }
        }
    }

    /// Send the current run's sums and the pending bin run (`d`: the dimension).
    #[inline(always)]
    pub fn finish<S: Sink>(&self, d: usize, sink: &mut S) {
        sink.cube(self.h, &self.sum, &self.sum_sq, false);
        if d <= RUN_AXES && self.run_q != 0 {
            for j in 0..d {
                sink.bin(j, ((self.run_bins >> (9 * j as u32)) & (MAX_BINS as u64 - 1)) as u32, self.run_q);
            }
        }
    }
}

/// `2^F` for the bins' quanta of `job` ([`bin_quantum`]).
#[inline(always)]
pub fn bin_scale(job: &VegasJob) -> f64 {
    pow2_neg(-(job.bin_frac_bits.min(66) as i32))
}

/// Evaluate points `first..end` of the iteration (all inside `0..job.points`) and send their
/// sums to `sink`. `edges` holds `dim (bins + 1)` values, `offsets` `cubes + 1`. A collective
/// generator's points are drawn in tiles ([`TILE_ROUNDS`]).
#[inline(always)]
pub fn run_points<G: Generator, F: Integrand + ?Sized, S: Sink>(
    job: &VegasJob,
    f: &F,
    edges: &[f64],
    offsets: &[u64],
    first: u64,
    end: u64,
    sink: &mut S,
) {
    if first >= end {
        return;
    }
    if G::LANES > 1 {
        return run_tiled::<G, F, S>(job, f, edges, offsets, first, end, sink);
    }
    let d = (job.dim as usize).min(MAX_DIM);
    let scale = pow2_neg(job.scale_exp);
    let bin_scale = bin_scale(job);
    let mut walk = CubeWalk::at(offsets, first, job.strata, d, true);
    let mut x = [0.0f64; MAX_DIM];
    let mut bin = [0u16; MAX_DIM];
    let mut k = first;
    while k < end {
        walk.reach(offsets, k, d, sink);
        let jac = map_point::<G>(job, edges, &walk.digits, k, &mut x, &mut bin);
        walk.add(f.eval(&x[..d]) * jac * scale, &bin[..d], bin_scale, sink);
        k += 1;
    }
    walk.finish(d, sink);
}

/// [`run_points`] for a collective generator on the CPU: the 32 lanes of each tile as 32 lane
/// views ([`Generator::stream`]), each advanced past the rounds before the first point taken
/// from it. The same points, in the same order, as the GPU's warps draw them in lockstep.
#[inline(always)]
fn run_tiled<G: Generator, F: Integrand + ?Sized, S: Sink>(
    job: &VegasJob,
    f: &F,
    edges: &[f64],
    offsets: &[u64],
    first: u64,
    end: u64,
    sink: &mut S,
) {
    const L: usize = 32;
    let d = (job.dim as usize).min(MAX_DIM);
    let scale = pow2_neg(job.scale_exp);
    let bin_scale = bin_scale(job);
    let words = 2 * d as u64;
    let mut walk = CubeWalk::at(offsets, first, job.strata, d, false);
    let mut x = [0.0f64; MAX_DIM];
    let mut bin = [0u16; MAX_DIM];
    let mut lanes = [G::stream(job.seed, 32 * tile_warp(job, first / TILE_POINTS)); L];
    let mut tile = u64::MAX;
    let mut k = first;
    while k < end {
        let t = k / TILE_POINTS;
        if t != tile {
            // The tile's lanes, each at the round of its first point from `k` on.
            tile = t;
            let pos = k - t * TILE_POINTS;
            let (round, lane) = (pos / L as u64, pos % L as u64);
            for (l, g) in lanes.iter_mut().enumerate() {
                *g = G::stream(job.seed, 32 * tile_warp(job, t) + l as u64);
                for _ in 0..(round + (l < lane as usize) as u64) * words {
                    g.next_u32();
                }
            }
        }
        walk.reach(offsets, k, d, sink);
        let jac = map_point_from(job, edges, &walk.digits, &mut lanes[(k % L as u64) as usize], &mut x, &mut bin);
        walk.add(f.eval(&x[..d]) * jac * scale, &bin[..d], bin_scale, sink);
        k += 1;
    }
    walk.finish(d, sink);
}

/// The baseline the grid's cost is measured against: points `first..end` at plain uniform
/// coordinates (no strata, no grid, no bins), each drawing from its stream as [`map_point`] does;
/// returns `(Σv, Σv², values out of range or not finite)` with `v = f(x) 2^-scale_exp`.
#[inline(always)]
pub fn plain_points<G: Generator, F: Integrand + ?Sized>(
    job: &VegasJob,
    f: &F,
    first: u64,
    end: u64,
) -> (ExactSum, ExactSum, u64) {
    let d = (job.dim as usize).min(MAX_DIM);
    let scale = pow2_neg(job.scale_exp);
    let (mut sum, mut sum_sq, mut bad) = (ExactSum::ZERO, ExactSum::ZERO, 0u64);
    let mut x = [0.0f64; MAX_DIM];
    let mut k = first;
    while k < end {
        let mut rng = G::stream(job.seed, job.first_stream + k);
        axis_uniforms(&mut rng, d, |j, u| x[j & (MAX_DIM - 1)] = u);
        let v = f.eval(&x[..d]) * scale;
        if v.abs() < MAX_ABS {
            sum.add_fixed(to_fixed64(v).unwrap_or(0));
            sum_sq.add_fixed(to_fixed64(v * v).unwrap_or(0));
        } else {
            bad += 1;
        }
        k += 1;
    }
    (sum, sum_sq, bad)
}

/// The sums of an iteration (or of part of one), laid out as the GPU writes them (CPU build):
/// the hypercubes `first_cube ..` that a range of points touched, and every bin.
#[cfg(not(target_arch = "nvptx64"))]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VegasSums {
    /// The first hypercube that `cubes` holds.
    pub first_cube: u64,
    /// `CUBE_WORDS` per hypercube, from `first_cube` on.
    pub cubes: std::vec::Vec<u64>,
    /// `BIN_WORDS` per bin, axis-major (`(axis bins + bin) BIN_WORDS`).
    pub bins: std::vec::Vec<u64>,
    /// `[max |v| bits, out of range, not finite]`.
    pub stats: [u64; STAT_WORDS],
}

/// Add 192-bit two's-complement `b` into `a` (word-wise with carries): the layout's merge.
#[cfg(not(target_arch = "nvptx64"))]
#[inline(always)]
pub fn add_words(a: &mut [u64], b: &[u64]) {
    let mut x = ExactSum { w: [a[0], a[1], a[2]] };
    x.merge(&ExactSum { w: [b[0], b[1], b[2]] });
    a[..3].copy_from_slice(&x.w);
}

#[cfg(not(target_arch = "nvptx64"))]
impl VegasSums {
    /// Zero sums of all `cubes` hypercubes.
    pub fn zeros(cubes: u64, dim: u32, bins: u32) -> Self {
        Self {
            first_cube: 0,
            cubes: vec![0; cubes as usize * CUBE_WORDS],
            bins: vec![0; dim as usize * bins as usize * BIN_WORDS],
            stats: [0; STAT_WORDS],
        }
    }

    /// The hypercubes this part holds.
    pub fn cube_range(&self) -> core::ops::Range<u64> {
        self.first_cube..self.first_cube + (self.cubes.len() / CUBE_WORDS) as u64
    }

    /// These sums over all `cubes` hypercubes (the ones outside the part are zero).
    pub fn into_full(mut self, cubes: u64) -> Self {
        let full = cubes as usize * CUBE_WORDS;
        if self.first_cube == 0 && self.cubes.len() == full {
            return self;
        }
        let mut all = if self.first_cube == 0 { core::mem::take(&mut self.cubes) } else { vec![0; full] };
        all.resize(full, 0);
        if self.first_cube != 0 {
            let at = self.first_cube as usize * CUBE_WORDS;
            all[at..at + self.cubes.len()].copy_from_slice(&self.cubes);
        }
        Self { first_cube: 0, cubes: all, ..self }
    }

    /// Add another part's sums (integer addition: the order does not matter). `self` must hold
    /// every hypercube that `o` holds.
    pub fn merge(&mut self, o: &Self) {
        let at = (o.first_cube - self.first_cube) as usize * CUBE_WORDS;
        for (a, b) in self.cubes[at..at + o.cubes.len()].chunks_exact_mut(3).zip(o.cubes.chunks_exact(3)) {
            add_words(a, b);
        }
        for (a, b) in self.bins.chunks_exact_mut(BIN_WORDS).zip(o.bins.chunks_exact(BIN_WORDS)) {
            add_words(a, b);
        }
        self.stats[0] = self.stats[0].max(o.stats[0]);
        self.stats[1] += o.stats[1];
        self.stats[2] += o.stats[2];
    }

    /// Hypercube `h`'s `(Σv, Σv²)` (`h` inside [`Self::cube_range`]).
    pub fn cube(&self, h: usize) -> (ExactSum, ExactSum) {
        let i = (h - self.first_cube as usize) * CUBE_WORDS;
        let w = &self.cubes[i..i + CUBE_WORDS];
        (ExactSum { w: [w[0], w[1], w[2]] }, ExactSum { w: [w[3], w[4], w[5]] })
    }

    /// Bin `b` of axis `j`'s sum, for `bins` increments per axis.
    pub fn bin(&self, j: usize, b: usize, bins: usize) -> ExactSum {
        let i = (j * bins + b) * BIN_WORDS;
        ExactSum { w: [self.bins[i], self.bins[i + 1], self.bins[i + 2]] }
    }
}

/// A CPU sink: the sums of a contiguous range of points, whose hypercubes are the contiguous
/// range starting at `first_cube`.
#[cfg(not(target_arch = "nvptx64"))]
pub struct RangeSink {
    pub first_cube: u64,
    pub cubes: std::vec::Vec<u64>,
    pub bins: std::vec::Vec<u64>,
    pub stats: [u64; STAT_WORDS],
    bins_per_axis: usize,
}

#[cfg(not(target_arch = "nvptx64"))]
impl RangeSink {
    pub fn new(first_cube: u64, dim: u32, bins: u32) -> Self {
        Self {
            first_cube,
            cubes: std::vec::Vec::new(),
            bins: vec![0; dim as usize * bins as usize * BIN_WORDS],
            stats: [0; STAT_WORDS],
            bins_per_axis: bins as usize,
        }
    }
}

#[cfg(not(target_arch = "nvptx64"))]
impl Sink for RangeSink {
    fn cube(&mut self, h: u64, sum: &ExactSum, sum_sq: &ExactSum, _whole: bool) {
        let i = (h - self.first_cube) as usize * CUBE_WORDS;
        if self.cubes.len() < i + CUBE_WORDS {
            self.cubes.resize(i + CUBE_WORDS, 0);
        }
        add_words(&mut self.cubes[i..i + 3], &sum.w);
        add_words(&mut self.cubes[i + 3..i + 6], &sum_sq.w);
    }

    fn bin(&mut self, axis: usize, bin: u32, q: u64) {
        let i = (axis * self.bins_per_axis + bin as usize) * BIN_WORDS;
        let mut s = ExactSum { w: [self.bins[i], self.bins[i + 1], self.bins[i + 2]] };
        s.add_fixed(q as i128);
        self.bins[i..i + 3].copy_from_slice(&s.w);
    }

    fn value(&mut self, abs_bits: u64, out_of_range: bool, not_finite: bool) {
        self.stats[0] = self.stats[0].max(abs_bits);
        self.stats[1] += out_of_range as u64;
        self.stats[2] += not_finite as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cube_of_finds_the_owner_and_skips_empty_cubes() {
        let offsets = [0u64, 2, 2, 5, 9];
        let owners: std::vec::Vec<u64> = (0..9).map(|k| cube_of(&offsets, k)).collect();
        assert_eq!(owners, [0, 0, 2, 2, 2, 3, 3, 3, 3]);
    }

    #[test]
    fn parts_over_their_own_hypercubes_merge_into_the_whole() {
        // A 2-d job of 9 hypercubes, its points cut at 7 and 15: each part holds only the
        // hypercubes its points touched, and the parts merge into the one-range sums.
        let job = VegasJob { seed: 3, first_stream: 0, points: 20, cubes: 9, dim: 2, bins: 4, strata: 3, scale_exp: 0, bin_frac_bits: 3, reserved: 0 };
        let edges: std::vec::Vec<f64> = (0..2).flat_map(|_| [0.0, 0.1, 0.3, 0.6, 1.0]).collect();
        let offsets = [0u64, 2, 4, 6, 8, 10, 12, 14, 17, 20];
        let f = |x: &[f64]| 1.0 + x[0] * x[1];
        struct F<'a>(&'a dyn Fn(&[f64]) -> f64);
        impl Integrand for F<'_> {
            fn eval(&self, x: &[f64]) -> f64 {
                (self.0)(x)
            }
        }
        let sums = |first: u64, end: u64| {
            let mut sink = RangeSink::new(cube_of(&offsets, first), 2, 4);
            run_points::<crate::rng::Philox4x32x10, _, _>(&job, &F(&f), &edges, &offsets, first, end, &mut sink);
            VegasSums { first_cube: sink.first_cube, cubes: sink.cubes, bins: sink.bins, stats: sink.stats }
        };
        let whole = sums(0, 20).into_full(9);
        let parts = [sums(0, 7), sums(7, 15), sums(15, 20)];
        assert_eq!(parts.iter().map(|p| p.cube_range()).collect::<std::vec::Vec<_>>(), [0..4, 3..8, 7..9]);
        let mut total = parts[1].clone().into_full(9);
        total.merge(&parts[0]);
        total.merge(&parts[2]);
        assert_eq!(total, whole);
        assert!(whole.bins.chunks(3).all(|b| b[2] == 0) && whole.bins.iter().any(|&w| w != 0));
    }

    /// A run is called whole exactly when it holds all of its hypercube's points: for a range
    /// cut anywhere, every hypercube strictly inside it is whole and the first and last are
    /// not; a collective generator's runs (every 32nd point, a lane's) never are.
    #[test]
    fn whole_runs_are_exactly_the_hypercubes_inside_the_range() {
        struct Rec(std::vec::Vec<(u64, bool)>);
        impl Sink for Rec {
            fn cube(&mut self, h: u64, _: &ExactSum, _: &ExactSum, whole: bool) {
                self.0.push((h, whole));
            }
            fn bin(&mut self, _: usize, _: u32, _: u64) {}
            fn value(&mut self, _: u64, _: bool, _: bool) {}
        }
        let p = IntegrandParams { family: family::GAUSSIAN, dim: 2, c: 0.0, scale: 1.0, a: [1.0; MAX_DIM], u: [0.5; MAX_DIM] };
        // 4 x 4 hypercubes, some empty, of 0 to 9 points.
        let mut offsets = std::vec![0u64];
        for h in 0..16u64 {
            offsets.push(offsets[h as usize] + (h * 5) % 10 * (h % 3).min(1));
        }
        let points = *offsets.last().unwrap();
        let job = VegasJob { seed: 1, first_stream: 0, points, cubes: 16, dim: 2, bins: 4, strata: 4, scale_exp: 0, bin_frac_bits: 8, reserved: 0 };
        let edges: std::vec::Vec<f64> = (0..2).flat_map(|_| [0.0, 0.25, 0.5, 0.75, 1.0]).collect();
        for first in 0..points {
            for end in first + 1..=points {
                let mut rec = Rec(std::vec::Vec::new());
                run_points::<crate::rng::Philox4x32x10, _, _>(&job, &p, &edges, &offsets, first, end, &mut rec);
                let (h0, h1) = (cube_of(&offsets, first), cube_of(&offsets, end - 1));
                let want: std::vec::Vec<(u64, bool)> =
                    (h0..=h1).filter(|&h| offsets[h as usize] < offsets[h as usize + 1]).map(|h| (h, h != h0 && h != h1)).collect();
                assert_eq!(rec.0, want, "points {first}..{end}");
                if h1 > h0 + 1 {
                    let mut rec = Rec(std::vec::Vec::new());
                    run_points::<crate::rng::Warp, _, _>(&job, &p, &edges, &offsets, first, end, &mut rec);
                    assert!(rec.0.iter().all(|&(_, whole)| !whole), "warp, points {first}..{end}");
                }
            }
        }
    }

    /// The bins get every point's quanta whether they are sent point by point or by runs
    /// ([`CubeWalk`]): at `d <= RUN_AXES` with runs long (more strata than bins), short (fewer)
    /// and cut by the `2^64` limit (quanta near `2^62`), and above `RUN_AXES`. The reference
    /// adds each point's quantum on its own.
    #[test]
    fn bin_runs_add_up_to_each_points_quanta() {
        let mut p = IntegrandParams { family: family::GAUSSIAN, dim: 0, c: 0.0, scale: 1.0, a: [2.0; MAX_DIM], u: [0.4; MAX_DIM] };
        // (dim, strata, bins, bin_frac_bits)
        for (dim, strata, bins, frac) in [(1u32, 64u32, 8u32, 20u32), (2, 16, 4, 20), (2, 3, 16, 20), (2, 16, 4, 62), (3, 5, 5, 30), (7, 2, 2, 20), (8, 2, 3, 20)] {
            p.dim = dim;
            let d = dim as usize;
            let cubes = (strata as u64).pow(dim);
            // 3 to 7 points a hypercube.
            let mut offsets = std::vec![0u64];
            for h in 0..cubes {
                offsets.push(offsets[h as usize] + 3 + (h * 7919) % 5);
            }
            let points = *offsets.last().unwrap();
            let job = VegasJob { seed: 5, first_stream: 9, points, cubes, dim, bins, strata, scale_exp: 0, bin_frac_bits: frac, reserved: 0 };
            // An uneven grid: increments growing along each axis.
            let nb = bins as usize;
            let edges: std::vec::Vec<f64> =
                (0..d).flat_map(|_| (0..=nb).map(move |i| ((i * i) as f64 + i as f64) / ((nb * nb + nb) as f64))).collect();
            let mut sink = RangeSink::new(0, dim, bins);
            run_points::<crate::rng::Philox4x32x10, _, _>(&job, &p, &edges, &offsets, 0, points, &mut sink);
            let mut want = std::vec![ExactSum::ZERO; d * nb];
            let (mut x, mut bin) = ([0.0; MAX_DIM], [0u16; MAX_DIM]);
            let mut sends = 0u64;
            for k in 0..points {
                let h = cube_of(&offsets, k);
                let digits = CubeDigits::of(h, strata, d);
                let jac = map_point::<crate::rng::Philox4x32x10>(&job, &edges, &digits, k, &mut x, &mut bin);
                let v = genz(&p, &x[..d]) * jac;
                let inv_n = 1.0 / (offsets[h as usize + 1] - offsets[h as usize]) as f64;
                let q = bin_quantum(v * v * inv_n, bin_scale(&job));
                for j in 0..d {
                    want[j * nb + bin[j] as usize].add_fixed(q as i128);
                }
                sends += (q != 0) as u64;
            }
            let got: std::vec::Vec<ExactSum> = sink.bins.chunks(3).map(|w| ExactSum { w: [w[0], w[1], w[2]] }).collect();
            assert_eq!(got, want, "d = {dim}, {strata} strata, {bins} bins, 2^-{frac} quanta");
            assert!(sends > 0);
            if frac == 62 {
                // Quanta near 2^62 and above: runs are cut by the limit, and the totals pass 2^64.
                assert!(got.iter().any(|b| b.w[1] != 0), "d = {dim}: no bin passed 2^64");
            }
        }
    }

    /// A collective generator's points come in tiles: point `k` is round `(k mod TILE_POINTS) /
    /// 32` of lane `k mod 32` of tile `k / TILE_POINTS`'s warp state (its words `2 d r ..` of
    /// stream `32 tile_warp + lane`), and a range cut anywhere (mid-round, mid-tile) gives the
    /// same sums as the whole.
    #[test]
    fn collective_points_are_drawn_in_tiles() {
        use crate::rng::{Generator, Uniform32, Warp};
        use core::cell::RefCell;
        struct Rec<'a>(&'a RefCell<std::vec::Vec<std::vec::Vec<f64>>>);
        impl Integrand for Rec<'_> {
            fn eval(&self, x: &[f64]) -> f64 {
                self.0.borrow_mut().push(x.to_vec());
                1.0 + x[0] - 0.5 * x[2]
            }
        }
        let d = 3usize;
        let points = 2 * TILE_POINTS + 1000;
        // One hypercube and a uniform grid: x is the point's uniforms themselves.
        let job = VegasJob { seed: 11, first_stream: 70, points, cubes: 1, dim: 3, bins: 2, strata: 1, scale_exp: 0, bin_frac_bits: 3, reserved: 0 };
        let edges: std::vec::Vec<f64> = (0..d).flat_map(|_| [0.0, 0.5, 1.0]).collect();
        let offsets = [0u64, points];
        let seen = RefCell::new(std::vec::Vec::new());
        let sums = |first: u64, end: u64| {
            let mut sink = RangeSink::new(0, 3, 2);
            run_points::<Warp, _, _>(&job, &Rec(&seen), &edges, &offsets, first, end, &mut sink);
            VegasSums { first_cube: sink.first_cube, cubes: sink.cubes, bins: sink.bins, stats: sink.stats }
        };
        let whole = sums(0, points);
        let xs = seen.borrow().clone();
        assert_eq!(xs.len() as u64, points);
        // Tile warp states start at ceil(70 / 32) = 3.
        assert_eq!(tile_warp(&job, 2), 5);
        for k in [0u64, 1, 31, 32, 33, 1000, TILE_POINTS - 1, TILE_POINTS, TILE_POINTS + 77, 2 * TILE_POINTS + 999] {
            let (t, r, l) = (k / TILE_POINTS, (k % TILE_POINTS) / 32, k % 32);
            let mut g = Warp::stream(11, 32 * (3 + t) + l);
            for _ in 0..2 * d as u64 * r {
                g.next_u32();
            }
            let want: std::vec::Vec<f64> = (0..d)
                .map(|_| {
                    let (a, b) = (g.next_u32(), g.next_u32());
                    u32_pair_to_unit_f64(a, b)
                })
                .collect();
            assert_eq!(xs[k as usize], want, "point {k}");
        }
        // Cut mid-round, mid-tile and at a tile's end: the parts add up to the whole.
        let mut total = VegasSums::zeros(1, 3, 2);
        for (a, b) in [(0, 45), (45, 5000), (5000, TILE_POINTS), (TILE_POINTS, TILE_POINTS + 1), (TILE_POINTS + 1, points)] {
            total.merge(&sums(a, b));
        }
        assert_eq!(total, whole);
        assert!(whole.cubes.iter().any(|&w| w != 0));
    }

    #[test]
    fn quad_adds_carry_into_every_word() {
        // Quanta added to one 128-bit sum, the words starting near a wrap and the quanta large,
        // so that carries reach words 2 and 3; against `u128` arithmetic.
        struct SplitMix(u64);
        impl SplitMix {
            fn next_u64(&mut self) -> u64 {
                crate::rng::testing::splitmix64(&mut self.0)
            }
            fn next_u32(&mut self) -> u32 {
                (self.next_u64() >> 32) as u32
            }
        }
        let mut rng = SplitMix(7);
        let mut carried = [0u32; 4];
        for round in 0..300 {
            let start: u128 = match round % 3 {
                0 => u128::MAX - (rng.next_u64() as u128),
                1 => (u64::MAX as u128) - (rng.next_u32() as u128),
                _ => ((rng.next_u64() as u128) << 64) | rng.next_u64() as u128,
            };
            let mut words = [start as u32, (start >> 32) as u32, (start >> 64) as u32, (start >> 96) as u32];
            let mut total = start;
            for t in 0..1 + rng.next_u32() % 40 {
                let q = match t % 4 {
                    0 => u64::MAX - (rng.next_u32() as u64),
                    1 => rng.next_u32() as u64,
                    2 => (rng.next_u32() as u64) << 32,
                    _ => rng.next_u64() >> (rng.next_u32() % 64),
                };
                quad_add(
                    &mut |w: u32, x: u32| {
                        carried[w as usize] += 1;
                        let old = words[w as usize];
                        words[w as usize] = old.wrapping_add(x);
                        old
                    },
                    q as u32,
                    (q >> 32) as u32,
                );
                total = total.wrapping_add(q as u128);
            }
            let got = words.iter().rev().fold(0u128, |s, &w| (s << 32) | w as u128);
            assert_eq!(got, total, "round {round} from {start:#x}");
        }
        assert!(carried.iter().all(|&n| n > 0), "adds per word {carried:?}: some word never reached");
    }

    #[test]
    fn odometer_digits_follow_the_division() {
        for (strata, dim) in [(3u32, 4usize), (2, 22), (5, 9), (1, 32), (1 << 22, 1), (7, 7)] {
            let cubes = (strata as u64).pow(dim as u32).min(5000);
            let mut d = CubeDigits::of(0, strata, dim);
            for h in 0..cubes {
                let want = CubeDigits::of(h, strata, dim);
                assert_eq!(d, want, "strata {strata}, dim {dim}, hypercube {h}");
                let mut rem = h;
                for j in 0..dim {
                    assert_eq!(d.get(j) as u64, rem % strata as u64, "strata {strata}, hypercube {h}, axis {j}");
                    rem /= strata as u64;
                }
                d.advance(dim);
            }
        }
        // The last hypercube's successor wraps to the first.
        let mut last = CubeDigits::of(3u64.pow(4) - 1, 3, 4);
        last.advance(4);
        assert_eq!(last, CubeDigits::of(0, 3, 4));
    }

    /// Drawing four words at a time gives every axis the same two words as drawing them one by
    /// one, for odd and even dimensions.
    #[test]
    fn axis_uniforms_are_the_stream_in_order() {
        use crate::rng::{Generator, Philox4x32x10 as P, Uniform32};
        for d in [1usize, 2, 3, 8, 31, 32] {
            let mut got = std::vec::Vec::new();
            let mut a = P::stream(9, 1234);
            axis_uniforms(&mut a, d, |j, u| got.push((j, u)));
            let mut b = P::stream(9, 1234);
            let want: std::vec::Vec<(usize, f64)> = (0..d)
                .map(|j| {
                    let (w0, w1) = (b.next_u32(), b.next_u32());
                    (j, u32_pair_to_unit_f64(w0, w1))
                })
                .collect();
            assert_eq!(got, want, "d = {d}");
        }
    }

    #[test]
    fn pow2_neg_is_exact() {
        assert_eq!(pow2_neg(0), 1.0);
        assert_eq!(pow2_neg(3), 0.125);
        assert_eq!(pow2_neg(-40), 1_099_511_627_776.0);
    }

    #[test]
    fn cos_turns_matches_std() {
        for t in [0.0, 0.1, 0.25, -0.3, 1.75, 12.345, -7.89] {
            let want = (t * std::f64::consts::TAU).cos();
            assert!((cos_turns(t) - want).abs() < 1e-14, "{t}: {} vs {want}", cos_turns(t));
        }
    }

    #[test]
    fn families_match_their_definitions_at_a_point() {
        let mut p = IntegrandParams { family: 0, dim: 3, c: 0.1, scale: 2.0, a: [0.0; MAX_DIM], u: [0.0; MAX_DIM] };
        p.a[..3].copy_from_slice(&[1.5, 2.0, 0.5]);
        p.u[..3].copy_from_slice(&[0.3, 0.6, 0.2]);
        let x = [0.2, 0.7, 0.9];
        let sa: f64 = (0..3).map(|i| p.a[i] * x[i]).sum();
        let want = [
            (std::f64::consts::TAU * p.u[0] + sa).cos(),
            (0..3).map(|i| 1.0 / (p.a[i].powi(-2) + (x[i] - p.u[i]).powi(2))).product(),
            (1.0 + sa).powi(-4),
            (-(0..3).map(|i| (p.a[i] * (x[i] - p.u[i])).powi(2)).sum::<f64>()).exp(),
            (-(0..3).map(|i| p.a[i] * (x[i] - p.u[i]).abs()).sum::<f64>()).exp(),
            0.0, // x_1 = 0.7 > u_2 = 0.6
        ];
        for (fam, w) in want.iter().enumerate() {
            p.family = fam as u32;
            let got = genz(&p, &x);
            assert!((got - w).abs() <= 1e-13 * w.abs().max(1e-300), "family {fam}: {got} vs {w}");
        }
        p.family = family::DISCONTINUOUS;
        let inside = [0.1, 0.5, 0.9];
        let want = (0..3).map(|i| p.a[i] * inside[i]).sum::<f64>().exp();
        assert!((genz(&p, &inside) - want).abs() < 1e-13 * want);
        p.family = family::NARROW_GAUSSIANS;
        let g = |c: f64| (-(0..3).map(|i| (x[i] - c).powi(2)).sum::<f64>() / 0.01).exp();
        let want = 2.0 * 0.5 * (g(1.0 / 3.0) + g(2.0 / 3.0));
        assert!((genz(&p, &x) - want).abs() < 1e-13 * want.max(1e-300));
        p.family = family::COUNT;
        assert!(genz(&p, &x).is_nan());
    }

    /// The map, which works on two axes at a time, gives every axis what its definition does
    /// one axis at a time: `y = (digit + u) / strata`, the increment `i = ⌊y bins⌋`, `x` linear
    /// inside it, `J = Π bins (hi - lo)`; bit for bit, for odd and even dimensions, with and
    /// without strata digits, on an uneven grid.
    #[test]
    fn the_paired_map_is_the_axis_by_axis_definition() {
        use crate::rng::{Generator, Philox4x32x10 as P, Uniform32};
        let bins = 5u32;
        for (dim, strata) in [(1u32, 3u32), (2, 1), (3, 2), (5, 3), (8, 1), (9, 2), (32, 1)] {
            let cubes = (strata as u64).pow(dim);
            let job = VegasJob { seed: 11, first_stream: 40, points: 0, cubes, dim, bins, strata, scale_exp: 0, bin_frac_bits: 2, reserved: 0 };
            // Axis j's edges: 0, then increasing steps that differ by axis, then 1.
            let edges: std::vec::Vec<f64> = (0..dim)
                .flat_map(|j| {
                    let steps: std::vec::Vec<f64> = (0..bins).map(|i| 1.0 + ((i + j) % 3) as f64).collect();
                    let total: f64 = steps.iter().sum();
                    let mut at = 0.0;
                    let mut e = std::vec![0.0];
                    for s in &steps[..bins as usize - 1] {
                        at += s;
                        e.push(at / total);
                    }
                    e.push(1.0);
                    e
                })
                .collect();
            // Hypercubes whose digits differ from axis to axis (and the corners).
            for h in [0, 1, cubes / 3 + 1, cubes - 2, cubes - 1].into_iter().filter(|&h| h < cubes) {
                let digits = CubeDigits::of(h, strata, dim as usize);
                for k in [0u64, 1, 77] {
                    let (mut x, mut bin) = ([0.0; MAX_DIM], [0u16; MAX_DIM]);
                    let jac = map_point::<P>(&job, &edges, &digits, k, &mut x, &mut bin);
                    let mut rng = P::stream(job.seed, job.first_stream + k);
                    let mut want_jac = 1.0;
                    for j in 0..dim as usize {
                        let (w0, w1) = (rng.next_u32(), rng.next_u32());
                        let u = u32_pair_to_unit_f64(w0, w1);
                        let y = (digits.get(j) as f64 + u) * (1.0 / strata as f64);
                        let t = y * bins as f64;
                        let i = (t.floor() as u32).min(bins - 1);
                        let (lo, hi) = (edges[j * (bins as usize + 1) + i as usize], edges[j * (bins as usize + 1) + i as usize + 1]);
                        assert_eq!(bin[j], i as u16, "d {dim} h {h} k {k} axis {j}");
                        assert_eq!(x[j].to_bits(), (lo + (t - i as f64) * (hi - lo)).to_bits(), "d {dim} h {h} k {k} axis {j}");
                        want_jac *= bins as f64 * (hi - lo);
                    }
                    assert_eq!(jac.to_bits(), want_jac.to_bits(), "d {dim} h {h} k {k}");
                }
            }
        }
    }

    #[test]
    fn a_uniform_grid_maps_y_to_itself_with_unit_jacobian() {
        let job = VegasJob { seed: 7, first_stream: 0, points: 4, cubes: 4, dim: 2, bins: 4, strata: 2, scale_exp: 0, bin_frac_bits: 2, reserved: 0 };
        let edges: std::vec::Vec<f64> = (0..2).flat_map(|_| (0..=4).map(|i| i as f64 / 4.0)).collect();
        let (mut x, mut bin) = ([0.0; MAX_DIM], [0u16; MAX_DIM]);
        for h in 0..4u64 {
            let digits = CubeDigits::of(h, 2, 2);
            let jac = map_point::<crate::rng::Philox4x32x10>(&job, &edges, &digits, h, &mut x, &mut bin);
            assert_eq!(jac, 1.0);
            // Hypercube h = c0 + 2 c1 covers [c0/2, (c0+1)/2] x [c1/2, (c1+1)/2].
            let (c0, c1) = ((h % 2) as f64, (h / 2) as f64);
            assert!(x[0] > c0 / 2.0 && x[0] <= (c0 + 1.0) / 2.0, "{h}: {:?}", &x[..2]);
            assert!(x[1] > c1 / 2.0 && x[1] <= (c1 + 1.0) / 2.0);
            assert_eq!(bin[0] as u32, (x[0] * 4.0).ceil() as u32 - 1);
        }
    }
}
