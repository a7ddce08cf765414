//! Ziggurat samplers for the standard normal and the standard exponential (Marsaglia and Tsang,
//! "The Ziggurat Method for Generating Random Variables", J. Stat. Softw. 5(8), 2000), in `f32`
//! (exact and fast, [`Single<M>`]) and `f64` ([`Double`]).
//!
//! # The ziggurat
//!
//! A decreasing density `f` on `[0, inf)` (unnormalised: the normal's `f(x) = e^{-x²/2}` with
//! `N = 128` layers, the exponential's `f(x) = e^{-x}` with `N = 256`) is covered by `N` strips
//! of equal area `v`. With `x_0 = 0` and `x_{N-1} = r`:
//! - layer `i` (`1 <= i < N`) is the box `[0, x_i] × [f(x_i), f(x_{i-1})]`, whose area
//!   `x_i (f(x_{i-1}) - f(x_i)) = v` defines `x_{i-1} = f^-1(v / x_i + f(x_i))`, from
//!   `x_{N-1} = r` upwards;
//! - layer 0, the base, is the box `[0, r] × [0, f(r)]` together with the tail `x > r` under `f`:
//!   `v = r f(r) + ∫_r^∞ f`. It is drawn as a box of width `q = v / f(r)`: a point beyond `r`
//!   stands for the tail.
//!
//! `r` is the root of the top layer's closure, `v / x_1 + f(x_1) = f(0) = 1`, found by bisection
//! in `const fn` ([`NORMAL`], [`EXPONENTIAL`]; the residual is in [`Ziggurat::closure`]). The
//! transcendental functions of the tables are this module's own `f64` series, evaluated by the
//! compiler; the normal's tail integral is `e^{-r²/2}` times Mills' ratio by Laplace's continued
//! fraction. The roots agree with those found in 40-digit arithmetic to 3e-16 (normal
//! `r = 3.442 619 855 896 652`, `v = 9.912 563 035 336 461e-3`; exponential
//! `r = 7.697 117 470 131 050`, `v = 3.949 659 822 581 557e-3`), and with the published values
//! (normal `r = 3.442619855899`, `v = 9.91256303526217e-3`; exponential
//! `r = 7.697117470131487`, `v = 3.949659822581572e-3`) to 2.3e-12 and 4.4e-13 in `r` (the
//! published normal `v` is `v` at the published `r`). `tests/tests/ziggurat_polar.rs` checks
//! these, the closure and every layer's area against `std`'s functions.
//!
//! # The sampler
//!
//! Each attempt of the main loop draws a layer `i` uniformly and a uniform grid point
//! `u = m 2^-b` in `[0, 1)` (`b = 24` in `f32`, `53` in `f64`) and forms `x = u x_i` (`u q` in the
//! base), as `m w_i` with `w_i = x_i 2^-b` (`q 2^-b` for the base) rounded to the precision:
//! - fast path: if `m < k_i = ceil(2^b x_{i-1} / x_i)` (`ceil(2^b r / q)` for the base), that is
//!   `x < x_{i-1}` (`x < r`), the point lies under `f` and `x` is returned;
//! - wedge (`i >= 1`): with one more uniform `U` ([`Arith::uniform`]), `x` is returned if
//!   `f(x_i) + U (f(x_{i-1}) - f(x_i)) < f(x)`, else the loop starts again;
//! - tail (`i = 0`): the normal uses Marsaglia's tail method, `x = -ln(U1) / r`,
//!   `y = -ln(U2)`, accepted when `2y > x²` (otherwise two new uniforms), and returns `r + x`;
//!   the exponential, being memoryless, adds `r` to the result and starts the main loop again
//!   (`r` plus a fresh exponential).
//!
//! The normal's sign comes from its own bit. `iters` counts every attempt of the main loop (so
//! each tail visit of the exponential) and each retry of the normal's tail loop.
//!
//! # Draw rules
//!
//! - `f32`, one word `z` per attempt: normal: layer `z & 127`, sign bit 7 (set: negative),
//!   `m = z >> 8`; exponential: layer `z & 255`, `m = z >> 8`. (Not the paper's signed 32-bit
//!   form, whose low bits pick the layer and also enter `x`.)
//! - `f64`, two words `a`, `b` per attempt: the layer and the normal's sign from `a` as in `f32`,
//!   `m = (b << 21) | (a >> 11)` (53 bits: all of `b`, the top 21 bits of `a`; bits 8..10 of `a`
//!   are unused).
//! - A wedge test then takes one [`Arith::uniform`] (one word in `f32`, two in `f64`); each try of
//!   the normal's tail takes two ([`Arith::uniform`] for `U1`, then for `U2`).
//!
//! # Figures, from the tables
//!
//! | | normal | exponential |
//! |---|---|---|
//! | attempts taking the fast path | 0.972 440 | 0.977 780 |
//! | `iters` per value | 1.012 405 | 1.011 572 |
//! | largest value | 10.0869 (`f32`), 12.0946 (`f64`) | none fixed (see below) |
//!
//! The fast-path fraction is `Σ k_i / (N 2^b)` ([`Zig::NORMAL_FAST_FRACTION`]; `f32` and `f64`
//! differ by 3e-8, the rounding up of `k_i` on 24 bits); the rest are wedge or tail attempts.
//! An attempt's point is uniform over the strips (area `N v`) and all the area under `f` is
//! accepted, so the normal makes `N v / sqrt(π/2)` = 1.012 362 attempts per value, plus
//! `erfc(r/√2) (1/p - 1)` = 4.3e-5 tail retries, where `p = r e^{r²/2} ∫_r^∞ e^{-t²/2} dt` =
//! 0.9311 is the tail method's acceptance; the exponential makes `N v / (1 - e^{-r})` =
//! 1.011 572 (a tail visit, area `e^{-r}`, restarts the loop).
//!
//! The normal's largest `|x|` comes from the tail: `r + x` with `x = -ln(U1) / r`, `U1 >= 2^-33`
//! (`f32`) or `2^-54` (`f64`), and `x² < 2y <= -2 ln 2^-33` (or `2^-54`): `f32` is limited by `U1`
//! (`x <= 22.87 / r` = 6.644, accepted), `f64` by the acceptance test (`x < sqrt(108 ln 2)` =
//! 8.652). The fast and wedge paths stay below `r`. The exponential has no fixed bound: a value
//! of at least `j r` takes `j` tail visits, probability `e^{-jr}` (to the grid), as for an exact
//! exponential (`j = 5`, a value above 38.5, has probability 2e-17).
//!
//! # Precision and reproducibility
//!
//! `f32` exact mode uses only IEEE operations and [`Single<Exact>`](crate::real::Single)'s
//! portable `exp` and `ln`, written in a fixed order, so the CPU and the GPU produce the same
//! bits; fast mode uses the GPU's approximate `exp` and `ln` in the wedge and tail tests and
//! for the tail's values. The grid of `x` is `x_i 2^-24` in `f32`: the values carry about 24 random bits,
//! as [`Arith::uniform`] does.

use crate::tally::Tally;
use crate::MathMode;
use crate::real::{Arith, Double, Real, Single};
use crate::rng::Uniform32;

// ---------------------------------------------------------------------------------------------
// Const f64 functions for the tables (evaluated by the compiler; accurate to a few ulps).

const LN2: f64 = core::f64::consts::LN_2;
/// `ln 2` in two parts: `k LN2_HI` is exact for `|k| < 2^11`.
const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000); // 0.6931471803691238
/// `ln 2 - LN2_HI`, rounded.
const LN2_LO: f64 = f64::from_bits(0x3dea_39ef_3579_3c76); // 1.9082149292705877e-10

/// `2^k` for `-1022 <= k <= 1023`.
const fn pow2(k: i64) -> f64 {
    f64::from_bits(((k + 1023) as u64) << 52)
}

/// `e^x` for `-700 < x < 700`: `x = k ln 2 + t`, `|t| <= ln(2)/2`, the Taylor series of `e^t` to
/// degree 18 (first omitted term below 1e-24), times `2^k`.
const fn c_exp(x: f64) -> f64 {
    let s = x / LN2;
    let k = if s >= 0.0 { (s + 0.5) as i64 } else { (s - 0.5) as i64 };
    let kf = k as f64;
    let t = (x - kf * LN2_HI) - kf * LN2_LO;
    let mut p = 1.0;
    let mut n = 18;
    while n >= 1 {
        p = 1.0 + p * t / (n as f64);
        n -= 1;
    }
    p * pow2(k)
}

/// `ln x` for a positive normal `x`: `x = 2^e m`, `m` in `[sqrt(1/2), sqrt(2))`,
/// `ln m = 2 atanh(s)`, `s = (m - 1) / (m + 1)`, `|s| <= 0.1716`, to `s^27` (first omitted term
/// below 1e-21).
const fn c_ln(x: f64) -> f64 {
    let bits = x.to_bits();
    let mut e = ((bits >> 52) & 0x7ff) as i64 - 1023;
    let mut m = f64::from_bits((bits & 0x000f_ffff_ffff_ffff) | 0x3ff0_0000_0000_0000);
    if m > core::f64::consts::SQRT_2 {
        m *= 0.5;
        e += 1;
    }
    let s = (m - 1.0) / (m + 1.0);
    let s2 = s * s;
    let mut sum = 0.0;
    let mut k = 13;
    while k >= 0 {
        sum = 1.0 / ((2 * k + 1) as f64) + s2 * sum;
        k -= 1;
    }
    let ef = e as f64;
    ef * LN2_HI + (ef * LN2_LO + 2.0 * s * sum)
}

/// `sqrt x` for a positive normal `x`: a first guess from halving the exponent, then Newton.
const fn c_sqrt(x: f64) -> f64 {
    let mut y = f64::from_bits((x.to_bits() >> 1) + 0x1ff8_0000_0000_0000);
    let mut i = 0;
    while i < 7 {
        y = 0.5 * (y + x / y);
        i += 1;
    }
    y
}

/// `e^{r²/2} ∫_r^∞ e^{-t²/2} dt` (Mills' ratio) for `r >= 1`, by Laplace's continued fraction
/// `1 / (r + 1 / (r + 2 / (r + 3 / (r + ...))))`, 400 terms from the bottom.
const fn mills(r: f64) -> f64 {
    let mut t = r;
    let mut k = 400;
    while k >= 1 {
        t = r + (k as f64) / t;
        k -= 1;
    }
    1.0 / t
}

const fn c_abs(x: f64) -> f64 {
    if x < 0.0 { -x } else { x }
}

/// The density (unnormalised): `e^{-x²/2}` or `e^{-x}`.
const fn density(normal: bool, x: f64) -> f64 {
    if normal { c_exp(-0.5 * x * x) } else { c_exp(-x) }
}

/// Its inverse on `(0, 1]`.
const fn density_inverse(normal: bool, y: f64) -> f64 {
    if normal { c_sqrt(-2.0 * c_ln(y)) } else { -c_ln(y) }
}

/// `∫_r^∞ f`.
const fn tail_area(normal: bool, r: f64) -> f64 {
    if normal { density(true, r) * mills(r) } else { c_exp(-r) }
}

/// The common area `v` for a given `r`.
const fn strip_area(normal: bool, r: f64) -> f64 {
    r * density(normal, r) + tail_area(normal, r)
}

/// The top layer's closure `v / x_1 + f(x_1) - 1` for `r`, or `1.0` when the layers reach the
/// top (`f(0) = 1`) before layer 1: positive means `r` is too small.
const fn closure(normal: bool, n: usize, r: f64) -> f64 {
    let v = strip_area(normal, r);
    let mut x = r;
    let mut i = n - 1;
    while i > 1 {
        let y = v / x + density(normal, x);
        if y >= 1.0 {
            return 1.0;
        }
        x = density_inverse(normal, y);
        i -= 1;
    }
    v / x + density(normal, x) - 1.0
}

/// The ziggurat of `N` layers for the normal (`normal`) or exponential density: `r` by bisection
/// on [`closure`] over `[1, 20]` until the interval cannot shrink, then the layers.
const fn solve<const N: usize>(normal: bool) -> Ziggurat<N> {
    let (mut lo, mut hi) = (1.0, 20.0);
    loop {
        let mid = 0.5 * (lo + hi);
        if !(mid > lo && mid < hi) {
            break;
        }
        if closure(normal, N, mid) > 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    // Of the two ends, the one whose top layer closes better.
    let (c_lo, c_hi) = (closure(normal, N, lo), closure(normal, N, hi));
    let r = if c_abs(c_lo) < c_abs(c_hi) { lo } else { hi };
    let v = strip_area(normal, r);
    let mut x = [0.0; N];
    let mut f = [0.0; N];
    x[N - 1] = r;
    f[N - 1] = density(normal, r);
    let mut i = N - 1;
    while i > 1 {
        let y = v / x[i] + f[i];
        x[i - 1] = density_inverse(normal, y);
        f[i - 1] = density(normal, x[i - 1]);
        i -= 1;
    }
    f[0] = 1.0;
    Ziggurat { r, v, x, f, closure: v / x[1] + f[1] - 1.0 }
}

/// A ziggurat of `N` layers in `f64`, as the tables are built from it (see the module docs).
#[derive(Clone, Copy, Debug)]
pub struct Ziggurat<const N: usize> {
    /// Where the tail starts: `x_{N-1}`.
    pub r: f64,
    /// The area of every layer: `r f(r) + ∫_r^∞ f`.
    pub v: f64,
    /// `x[i] = x_i`, the right edge of layer `i` for `1 <= i < N`; `x[0] = 0`, the top layer's
    /// inner edge.
    pub x: [f64; N],
    /// `f[i] = f(x_i)`; `f[0] = f(0) = 1`.
    pub f: [f64; N],
    /// `v / x_1 + f(x_1) - 1`: how far the top layer is from closing (0 ideally).
    pub closure: f64,
}

impl<const N: usize> Ziggurat<N> {
    /// The width of the base drawn as a box: `q = v / f(r)`.
    pub const fn base_width(&self) -> f64 {
        self.v / self.f[N - 1]
    }
}

/// The normal's ziggurat: `f(x) = e^{-x²/2}`, 128 layers.
pub const NORMAL: Ziggurat<128> = solve::<128>(true);
/// The exponential's ziggurat: `f(x) = e^{-x}`, 256 layers.
pub const EXPONENTIAL: Ziggurat<256> = solve::<256>(false);

// ---------------------------------------------------------------------------------------------
// Per-precision tables.

/// One ziggurat's tables in one precision: an attempt in layer `i` with grid integer `m` is
/// `x = m w[i]`, accepted at once if `m < k[i]`; its wedge test reads `f[i]` and `f[i - 1]`.
#[derive(Clone, Copy, Debug)]
pub struct Layers<K, R, const N: usize> {
    /// `ceil(2^b x_{i-1} / x_i)` (`k[1] = 0`: the top layer is all wedge); `k[0] = ceil(2^b r / q)`.
    pub k: [K; N],
    /// `x_i 2^-b`; `w[0] = q 2^-b`.
    pub w: [R; N],
    /// `f(x_i)`, `f[0] = 1`.
    pub f: [R; N],
}

/// `ceil(2^b ratio)` for `0 <= ratio <= 1`, `2^b` given as `scale`.
const fn ceil_scaled(ratio: f64, scale: f64) -> u64 {
    let t = ratio * scale;
    let k = t as u64;
    if (k as f64) < t { k + 1 } else { k }
}

const fn fast_ratio<const N: usize>(z: &Ziggurat<N>, i: usize) -> f64 {
    if i == 0 { z.r / z.base_width() } else { z.x[i - 1] / z.x[i] }
}

const fn width<const N: usize>(z: &Ziggurat<N>, i: usize) -> f64 {
    if i == 0 { z.base_width() } else { z.x[i] }
}

/// `2^24`.
const SCALE_24: f64 = 16_777_216.0;
/// `2^53`.
const SCALE_53: f64 = 9_007_199_254_740_992.0;

const fn layers_f32<const N: usize>(z: &Ziggurat<N>) -> Layers<u32, f32, N> {
    let mut t = Layers { k: [0; N], w: [0.0; N], f: [0.0; N] };
    let mut i = 0;
    while i < N {
        t.k[i] = ceil_scaled(fast_ratio(z, i), SCALE_24) as u32;
        t.w[i] = (width(z, i) / SCALE_24) as f32;
        t.f[i] = z.f[i] as f32;
        i += 1;
    }
    t
}

const fn layers_f64<const N: usize>(z: &Ziggurat<N>) -> Layers<u64, f64, N> {
    let mut t = Layers { k: [0; N], w: [0.0; N], f: [0.0; N] };
    let mut i = 0;
    while i < N {
        t.k[i] = ceil_scaled(fast_ratio(z, i), SCALE_53);
        t.w[i] = width(z, i) / SCALE_53;
        t.f[i] = z.f[i];
        i += 1;
    }
    t
}

/// The normal's tables in `f32` (`b = 24`).
pub static NORMAL_F32: Layers<u32, f32, 128> = layers_f32(&NORMAL);
/// The normal's tables in `f64` (`b = 53`).
pub static NORMAL_F64: Layers<u64, f64, 128> = layers_f64(&NORMAL);
/// The exponential's tables in `f32` (`b = 24`).
pub static EXPONENTIAL_F32: Layers<u32, f32, 256> = layers_f32(&EXPONENTIAL);
/// The exponential's tables in `f64` (`b = 53`).
pub static EXPONENTIAL_F64: Layers<u64, f64, 256> = layers_f64(&EXPONENTIAL);

/// `Σ k_i / (N 2^b)` (`b < 64`): the fraction of attempts that take the fast path.
pub const fn fast_fraction<const N: usize>(k: &[u64; N], b: u32) -> f64 {
    let mut s = 0.0;
    let mut i = 0;
    while i < N {
        s += k[i] as f64;
        i += 1;
    }
    s / (N as f64) / ((1u64 << b) as f64)
}

// ---------------------------------------------------------------------------------------------
// The samplers.

/// One attempt's draw: the layer, the normal's sign, whether the fast path accepts it, and
/// `x = m w[layer]` (non-negative).
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct Attempt<R> {
    pub layer: u32,
    pub negative: bool,
    pub fast: bool,
    pub x: R,
}

/// A precision with ziggurat tables: see the module docs for the draw rules.
pub trait Zig: Arith {
    /// Fraction of the normal's attempts that take the fast path (`Σ k_i / (N 2^b)`).
    const NORMAL_FAST_FRACTION: f64;
    /// Fraction of the exponential's attempts that take the fast path.
    const EXPONENTIAL_FAST_FRACTION: f64;
    /// Draws one attempt of the normal (one word in `f32`, two in `f64`).
    #[doc(hidden)]
    fn normal_attempt<G: Uniform32>(rng: &mut G) -> Attempt<Self::R>;
    /// Draws one attempt of the exponential (one word in `f32`, two in `f64`).
    #[doc(hidden)]
    fn exponential_attempt<G: Uniform32>(rng: &mut G) -> Attempt<Self::R>;
    /// The normal's `f(x_{i & 127})`.
    #[doc(hidden)]
    fn normal_f(i: u32) -> Self::R;
    /// The exponential's `f(x_{i & 255})`.
    #[doc(hidden)]
    fn exponential_f(i: u32) -> Self::R;
}

const fn k64<const N: usize>(k: &[u32; N]) -> [u64; N] {
    let mut out = [0; N];
    let mut i = 0;
    while i < N {
        out[i] = k[i] as u64;
        i += 1;
    }
    out
}

impl<M: MathMode + Send + Sync> Zig for Single<M> {
    const NORMAL_FAST_FRACTION: f64 = fast_fraction(&k64(&layers_f32(&NORMAL).k), 24);
    const EXPONENTIAL_FAST_FRACTION: f64 = fast_fraction(&k64(&layers_f32(&EXPONENTIAL).k), 24);
    #[inline(always)]
    fn normal_attempt<G: Uniform32>(rng: &mut G) -> Attempt<f32> {
        let z = rng.next_u32();
        let i = (z & 127) as usize;
        let m = z >> 8;
        Attempt { layer: i as u32, negative: z & 0x80 != 0, fast: m < NORMAL_F32.k[i], x: (m as f32) * NORMAL_F32.w[i] }
    }
    #[inline(always)]
    fn exponential_attempt<G: Uniform32>(rng: &mut G) -> Attempt<f32> {
        let z = rng.next_u32();
        let i = (z & 255) as usize;
        let m = z >> 8;
        Attempt {
            layer: i as u32,
            negative: false,
            fast: m < EXPONENTIAL_F32.k[i],
            x: (m as f32) * EXPONENTIAL_F32.w[i],
        }
    }
    #[inline(always)]
    fn normal_f(i: u32) -> f32 {
        NORMAL_F32.f[(i & 127) as usize]
    }
    #[inline(always)]
    fn exponential_f(i: u32) -> f32 {
        EXPONENTIAL_F32.f[(i & 255) as usize]
    }
}

/// The 53-bit grid integer of an `f64` attempt: all of `b` above the top 21 bits of `a`.
#[inline(always)]
fn grid53(a: u32, b: u32) -> u64 {
    ((b as u64) << 21) | ((a >> 11) as u64)
}

impl Zig for Double {
    const NORMAL_FAST_FRACTION: f64 = fast_fraction(&layers_f64(&NORMAL).k, 53);
    const EXPONENTIAL_FAST_FRACTION: f64 = fast_fraction(&layers_f64(&EXPONENTIAL).k, 53);
    #[inline(always)]
    fn normal_attempt<G: Uniform32>(rng: &mut G) -> Attempt<f64> {
        let a = rng.next_u32();
        let b = rng.next_u32();
        let i = (a & 127) as usize;
        let m = grid53(a, b);
        Attempt { layer: i as u32, negative: a & 0x80 != 0, fast: m < NORMAL_F64.k[i], x: (m as f64) * NORMAL_F64.w[i] }
    }
    #[inline(always)]
    fn exponential_attempt<G: Uniform32>(rng: &mut G) -> Attempt<f64> {
        let a = rng.next_u32();
        let b = rng.next_u32();
        let i = (a & 255) as usize;
        let m = grid53(a, b);
        Attempt {
            layer: i as u32,
            negative: false,
            fast: m < EXPONENTIAL_F64.k[i],
            x: (m as f64) * EXPONENTIAL_F64.w[i],
        }
    }
    #[inline(always)]
    fn normal_f(i: u32) -> f64 {
        NORMAL_F64.f[(i & 127) as usize]
    }
    #[inline(always)]
    fn exponential_f(i: u32) -> f64 {
        EXPONENTIAL_F64.f[(i & 255) as usize]
    }
}

/// A standard normal by the ziggurat (128 layers; see the module docs for the algorithm, the
/// draw rule and the figures).
///
/// Per attempt one word (`f32`) or two (`f64`); a wedge test adds one [`Arith::uniform`], each
/// tail try two. `iters` grows by one per attempt and per tail retry (1.0124 per value on
/// average). Largest `|x|`: 10.0869 (`f32`), 12.0946 (`f64`). Every value in `(-r, r)` is
/// `±m w_i`, `m` on the layer's grid of `2^24` (`f32`) or `2^53` (`f64`) points (so `±0` has
/// probability about 2^-24 in `f32`); beyond `r` the values come from the tail's logarithms.
#[inline(always)]
pub fn ziggurat_normal<A: Zig, G: Uniform32>(rng: &mut G, iters: &mut impl Tally) -> A::R {
    ziggurat_normal_variant::<A, G, false, false>(rng, iters)
}

/// [`ziggurat_normal`], or with a flaw for the negative controls of the tests: `SKIP_WEDGE`
/// accepts every wedge point, `SKIP_TAIL_TEST` accepts every tail point (`r + Exp(r)`).
#[doc(hidden)]
#[inline(always)]
pub fn ziggurat_normal_variant<A: Zig, G: Uniform32, const SKIP_WEDGE: bool, const SKIP_TAIL_TEST: bool>(
    rng: &mut G,
    iters: &mut impl Tally,
) -> A::R {
    loop {
        iters.tick();
        let a = A::normal_attempt(rng);
        let magnitude = if a.fast {
            a.x
        } else {
            match normal_slow::<A, G, SKIP_WEDGE, SKIP_TAIL_TEST>(a, rng, iters) {
                Some(x) => x,
                None => continue,
            }
        };
        return if a.negative { -magnitude } else { magnitude };
    }
}

/// The normal's rare paths (2.8% of attempts): the tail (layer 0) and the wedge test; `None`
/// when the wedge rejects. A call in the GPU build (one copy per generator and precision, not
/// one per place a value is drawn, which made the module several times larger).
#[cfg_attr(target_arch = "nvptx64", inline(never))]
#[cfg_attr(not(target_arch = "nvptx64"), inline(always))]
fn normal_slow<A: Zig, G: Uniform32, const SKIP_WEDGE: bool, const SKIP_TAIL_TEST: bool>(
    a: Attempt<A::R>,
    rng: &mut G,
    iters: &mut impl Tally,
) -> Option<A::R> {
    let r = A::R::from_f64(NORMAL.r);
    let half = A::R::from_f64(0.5);
    if a.layer == 0 {
        // Marsaglia's tail method: x = E1 / r, y = E2, accept 2y > x²; r + x.
        loop {
            let x = -A::ln(A::uniform(rng)) / r;
            let y = -A::ln(A::uniform(rng));
            if SKIP_TAIL_TEST || y + y > x * x {
                return Some(r + x);
            }
            iters.tick();
        }
    }
    let f_out = A::normal_f(a.layer);
    let f_in = A::normal_f(a.layer.wrapping_sub(1));
    let u = A::uniform(rng);
    let y = f_out + u * (f_in - f_out);
    let fx = A::exp(-((a.x * a.x) * half));
    if SKIP_WEDGE || y < fx { Some(a.x) } else { None }
}

/// A standard exponential by the ziggurat (256 layers; see the module docs for the algorithm,
/// the draw rule and the figures).
///
/// Per attempt one word (`f32`) or two (`f64`); a wedge test adds one [`Arith::uniform`].
/// A tail visit (probability `e^{-r}` per value, `r` = 7.697) adds `r` and starts again, so
/// `iters` (one per attempt, 1.0116 per value on average) counts it. Values are non-negative
/// and 0 is possible (the grid point `m = 0`: probability about 2^-24 in `f32`, 2^-53 in
/// `f64`); there is no fixed largest value (see the module docs).
#[inline(always)]
pub fn ziggurat_exponential<A: Zig, G: Uniform32>(rng: &mut G, iters: &mut impl Tally) -> A::R {
    ziggurat_exponential_variant::<A, G, false>(rng, iters)
}

/// [`ziggurat_exponential`], or with `SKIP_WEDGE` accepting every wedge point (a flaw for the
/// negative controls of the tests).
#[doc(hidden)]
#[inline(always)]
pub fn ziggurat_exponential_variant<A: Zig, G: Uniform32, const SKIP_WEDGE: bool>(
    rng: &mut G,
    iters: &mut impl Tally,
) -> A::R {
    let r = A::R::from_f64(EXPONENTIAL.r);
    let mut offset = A::R::ZERO;
    loop {
        iters.tick();
        let a = A::exponential_attempt(rng);
        if a.fast {
            return offset + a.x;
        }
        if a.layer == 0 {
            offset = offset + r;
            continue;
        }
        if exponential_wedge::<A, G, SKIP_WEDGE>(a, rng) {
            return offset + a.x;
        }
    }
}

/// The exponential's wedge test (2.2% of attempts), a call in the GPU build (see
/// `normal_slow`).
#[cfg_attr(target_arch = "nvptx64", inline(never))]
#[cfg_attr(not(target_arch = "nvptx64"), inline(always))]
fn exponential_wedge<A: Zig, G: Uniform32, const SKIP_WEDGE: bool>(a: Attempt<A::R>, rng: &mut G) -> bool {
    let f_out = A::exponential_f(a.layer);
    let f_in = A::exponential_f(a.layer.wrapping_sub(1));
    let u = A::uniform(rng);
    let y = f_out + u * (f_in - f_out);
    SKIP_WEDGE || y < A::exp(-a.x)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Exact;

    /// Words from a slice, in order, then `2^31` (uniforms near 1/2).
    struct Fixed<'a>(&'a [u32], usize);
    impl Uniform32 for Fixed<'_> {
        fn next_u32(&mut self) -> u32 {
            self.1 += 1;
            self.0.get(self.1 - 1).copied().unwrap_or(1 << 31)
        }
    }

    #[test]
    fn const_functions() {
        for x in [1e-3, 0.1, 0.5, 1.0, 3.0, 7.5, 30.0, 200.0] {
            for y in [x, -x] {
                assert!((c_exp(y) / y.exp() - 1.0).abs() < 4e-16, "exp {y}");
            }
            assert!((c_ln(x) - x.ln()).abs() <= 2.3e-16 * x.ln().abs().max(0.5), "ln {x}");
            assert!((c_sqrt(x) / x.sqrt() - 1.0).abs() < 2.3e-16, "sqrt {x}");
        }
    }

    #[test]
    fn tables_are_ordered_and_masked() {
        for (i, w) in NORMAL.x.windows(2).enumerate() {
            assert!(w[0] < w[1], "{i}");
        }
        for (i, w) in EXPONENTIAL.x.windows(2).enumerate() {
            assert!(w[0] < w[1], "{i}");
        }
        assert_eq!((NORMAL_F32.k[1], NORMAL_F64.k[1], EXPONENTIAL_F32.k[1], EXPONENTIAL_F64.k[1]), (0, 0, 0, 0));
        assert!(NORMAL_F32.k.iter().all(|&k| k < 1 << 24) && NORMAL_F64.k.iter().all(|&k| k < 1 << 53));
        assert!(EXPONENTIAL_F32.k.iter().all(|&k| k < 1 << 24) && EXPONENTIAL_F64.k.iter().all(|&k| k < 1 << 53));
        println!(
            "fast: normal {} {}, exponential {} {}",
            Single::<Exact>::NORMAL_FAST_FRACTION,
            Double::NORMAL_FAST_FRACTION,
            Single::<Exact>::EXPONENTIAL_FAST_FRACTION,
            Double::EXPONENTIAL_FAST_FRACTION
        );
    }

    #[test]
    fn largest_normals() {
        // f32: layer 0, sign +, m = 2^24 - 1 (the tail), then U1 = U2 = 2^-33: x = 22.87 / r,
        // 2y = 45.7 > x² = 44.1, accepted.
        let mut it = 0;
        let x = ziggurat_normal::<Single<Exact>, _>(&mut Fixed(&[0xffff_ff00, 0, 0], 0), &mut it);
        println!("f32 largest: {x}");
        assert_eq!(it, 1);
        assert!((x - 10.0869).abs() < 1e-4, "{x}");
        let y = ziggurat_normal::<Single<Exact>, _>(&mut Fixed(&[0xffff_ff80, 0, 0], 0), &mut it);
        assert_eq!(y, -x);
        // The largest non-tail value: layer 127, m = 2^24 - 1 through the wedge (U = 2^-33).
        let w = ziggurat_normal::<Single<Exact>, _>(&mut Fixed(&[0xffff_ff7f, 0], 0), &mut it);
        assert!(w < NORMAL.r as f32 && w > 3.44, "{w}");

        // f64: the largest accepted tail x is limited by y <= -ln 2^-54: the smallest U1 whose
        // x = -ln(U1) / r has x² < 2 * 37.43. U1's 53-bit integer is k (first word k, second 0).
        let tail = |k: u32| {
            let mut it = 0;
            let v = ziggurat_normal::<Double, _>(&mut Fixed(&[0xffff_f800, u32::MAX, k, 0, 0, 0], 0), &mut it);
            (v, it)
        };
        let k = (0..1 << 20).find(|&k| tail(k).1 == 1).unwrap();
        let (x, _) = tail(k);
        println!("f64 largest: {x} (U1 = ({k} + 1/2) 2^-53)");
        assert!((x - 12.0946).abs() < 1e-4, "{x}");
    }

    #[test]
    fn exponential_tail_adds_r() {
        // Layer 0 beyond k[0]: + r; then layer 5, m = 0: 0.
        let mut it = 0;
        let x = ziggurat_exponential::<Single<Exact>, _>(&mut Fixed(&[0xffff_ff00, 5], 0), &mut it);
        assert_eq!((x, it), (EXPONENTIAL.r as f32, 2));
        let mut it = 0;
        let x = ziggurat_exponential::<Double, _>(
            &mut Fixed(&[0xffff_f800, u32::MAX, 0xffff_f800, u32::MAX, 5, 0], 0),
            &mut it,
        );
        assert_eq!((x, it), (2.0 * EXPONENTIAL.r, 3));
    }
}
