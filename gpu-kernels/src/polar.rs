//! Marsaglia's polar method: a pair of independent standard normals from a uniform point of the
//! unit disc (G. Marsaglia and T. A. Bray, "A convenient method for generating normal
//! variables", SIAM Review 6(3), 1964), in `f32` (exact and fast, [`Single<M>`]) and `f64`
//! ([`Double`]).
//!
//! [`Single<M>`]: crate::real::Single
//! [`Double`]: crate::real::Double

use crate::tally::Tally;
use crate::real::{Arith, Real};
use crate::rng::Uniform32;

/// A pair of independent standard normals by Marsaglia's polar method.
///
/// Each attempt draws `u` = [`Arith::signed_uniform`], then `v` = [`Arith::signed_uniform`]
/// (two words in `f32`, four in `f64`), and forms `s = u² + v²`; unless `0 < s < 1` (the point
/// lies inside the unit disc, probability π/4) it starts again. Then `f = sqrt(-2 ln s / s)` and
/// the pair is `(u f, v f)`. `iters` grows by one per attempt: `4/π` = 1.2732 per pair on average
/// (`8/π` = 2.55 words in `f32`, `16/π` = 5.09 in `f64`).
///
/// The uniforms are odd multiples of `2^-32` (`f32`) or `2^-53` (`f64`), never 0, so `s > 0`
/// always; `f32`'s can round to ±1, which `s < 1` rejects. Evaluated as written: `u*u + v*v`,
/// `(-2 ln s) / s`, one square root, two products (no fused multiply-add), so `f32` exact mode
/// gives the same bits on the CPU and the GPU.
///
/// Range: the smallest `s` is `2 · 2^-64 = 2^-63` (`f32`) or `2^-105` (`f64`), where
/// `|u| = |v|` and `|x| = sqrt(-ln s)` = 6.6082 (`f32`) or 8.5311 (`f64`). The largest `|x|` is
/// reached a little above that, where `-2 ln s` is nearly as large and `u² / s` closer to 1
/// (`|x|² = -2 ln s · u² / s` is largest at `u² / v² = t`, `2 t + 2 ln(t + 1) = -2 ln v²`,
/// `t` ≈ 40 and 70): at `|u| = 7 · 2^-32`, `|v| = 2^-32` in `f32`, `|x|` = 8.9040, and at
/// `|u| = 9 · 2^-53`, `|v| = 2^-53` in `f64`, `|x|` = 11.6811 (a unit test searches the grid).
/// (For comparison, one Box-Muller radius reaches 6.7637 in `f32`.)
#[inline(always)]
pub fn polar<A: Arith, G: Uniform32>(rng: &mut G, iters: &mut impl Tally) -> (A::R, A::R) {
    loop {
        iters.tick();
        if let Some(c) = polar_attempt::<A, G>(rng) {
            return polar_pair::<A>(c);
        }
    }
}

/// One attempt of [`polar`]: `(u, v, s)` when the point lies inside the unit disc.
#[inline(always)]
pub fn polar_attempt<A: Arith, G: Uniform32>(rng: &mut G) -> Option<(A::R, A::R, A::R)> {
    let u = A::signed_uniform(rng);
    let v = A::signed_uniform(rng);
    let s = u * u + v * v;
    if s < A::R::ONE && s > A::R::ZERO { Some((u, v, s)) } else { None }
}

/// The pair of an accepted attempt `(u, v, s)`: `(u f, v f)`, `f = sqrt((-2 ln s) / s)`.
#[inline(always)]
pub fn polar_pair<A: Arith>((u, v, s): (A::R, A::R, A::R)) -> (A::R, A::R) {
    let f = A::sqrt((A::R::from_f64(-2.0) * A::ln(s)) / s);
    (u * f, v * f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Exact;
    use crate::real::{Double, Single};

    /// Words from a slice, in order.
    struct Fixed<'a>(&'a [u32], usize);
    impl Uniform32 for Fixed<'_> {
        fn next_u32(&mut self) -> u32 {
            self.1 += 1;
            self.0[self.1 - 1]
        }
    }

    #[test]
    fn largest_values() {
        // f32: the word z gives u = (2 z + 1) 2^-32; z >= 0 small.
        let mut best = (0.0f32, 0, 0);
        for a in 0..64u32 {
            for b in 0..8u32 {
                let mut it = 0;
                let (x, _) = polar::<Single<Exact>, _>(&mut Fixed(&[a, b], 0), &mut it);
                assert_eq!(it, 1);
                if x > best.0 {
                    best = (x, 2 * a + 1, 2 * b + 1);
                }
            }
        }
        println!("f32: largest {} at u = {} 2^-32, v = {} 2^-32", best.0, best.1, best.2);
        assert_eq!((best.1, best.2), (7, 1));
        assert!((best.0 - 8.9040).abs() < 1e-4);
        let smallest_s = polar::<Single<Exact>, _>(&mut Fixed(&[0, 0], 0), &mut 0).0;
        println!("f32: at the smallest s: {smallest_s}");
        assert!((smallest_s - 6.6082).abs() < 1e-4);

        // f64: k = 0 and y = 2^31 give u = 2^-53 (see real.rs); the integer is
        // z = x ^ (y << 21) - 2^52, so x = j with y = 2^31 gives u = (2 j + 1) 2^-53.
        let mut best = (0.0f64, 0, 0);
        for a in 0..64u32 {
            for b in 0..8u32 {
                let w = [a, 1 << 31, b, 1 << 31];
                let (x, _) = polar::<Double, _>(&mut Fixed(&w, 0), &mut 0);
                if x > best.0 {
                    best = (x, 2 * a + 1, 2 * b + 1);
                }
            }
        }
        println!("f64: largest {} at u = {} 2^-53, v = {} 2^-53", best.0, best.1, best.2);
        assert_eq!((best.1, best.2), (9, 1));
        assert!((best.0 - 11.6811).abs() < 1e-4);
        let smallest_s = polar::<Double, _>(&mut Fixed(&[0, 1 << 31, 0, 1 << 31], 0), &mut 0).0;
        println!("f64: at the smallest s: {smallest_s}");
        assert!((smallest_s - 8.5311).abs() < 1e-4);
    }

    #[test]
    fn rejects_outside_the_disc() {
        // u = v = 1 (rounded) in f32: rejected, then a point inside.
        let mut it = 0;
        let (x, y) = polar::<Single<Exact>, _>(&mut Fixed(&[0x7fff_ffff, 0x7fff_ffff, 0x2000_0000, 0], 0), &mut it);
        assert_eq!(it, 2);
        assert!(x > 0.0 && y > 0.0 && y < 1e-8);
    }
}
