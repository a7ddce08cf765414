//! Transforms from uniform words to standard normal variates.
//!
//! Box-Muller (Box and Muller, 1958; GPU Gems 3 ch. 37 Listing 37-5): from two words `z0, z1`,
//! `u0 = z0 * 2^-32 + 2^-33` in `(0, 1]` (so `ln u0` is finite), `t = z1 / 2^32` turns, and
//! `r = sqrt(-2 ln u0)`, `(n0, n1) = (r sin 2πt, r cos 2πt)`. Branch-free, so every lane of a
//! warp does the same work: the reason the chapter prefers it on GPUs.
//!
//! The largest `|n|` it can produce is `sqrt(-2 ln 2^-33) = sqrt(66 ln 2) = 6.7637`.

use core::marker::PhantomData;

use crate::MathMode;
use crate::convert::u32_to_unit_open_closed;
use crate::rng::Uniform32;

/// One Box-Muller pair from two uniform words.
#[inline(always)]
pub fn box_muller<M: MathMode>(z0: u32, z1: u32) -> (f32, f32) {
    let u0 = u32_to_unit_open_closed(z0);
    let r = M::box_muller_radius(u0);
    let (s, c) = M::sincos_turn(z1);
    (r * s, r * c)
}

/// A source of standard normal pairs, as a path simulation consumes them.
pub trait NormalPairs {
    /// The next pair of independent standard normal variates.
    fn next_pair(&mut self) -> (f32, f32);
}

/// Box-Muller over a uniform generator: each pair uses two consecutive words.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct BoxMuller<G, M> {
    pub rng: G,
    mode: PhantomData<M>,
}

impl<G: Uniform32, M: MathMode> BoxMuller<G, M> {
    #[inline(always)]
    pub fn new(rng: G) -> Self {
        Self { rng, mode: PhantomData }
    }
}

impl<G: Uniform32, M: MathMode> NormalPairs for BoxMuller<G, M> {
    #[inline(always)]
    fn next_pair(&mut self) -> (f32, f32) {
        let z0 = self.rng.next_u32();
        let z1 = self.rng.next_u32();
        box_muller::<M>(z0, z1)
    }
}

/// The "constant RNG" of GPU Gems 3's Table 37-1: no random numbers at all, used to measure how
/// much of a simulation's time the generator takes.
///
/// It returns `(x, -x)` and then adds `dx` to `x`. Both come from the caller at run time, so the
/// compiler can neither fold the values nor hoist the path's `exp` out of the step loop (a plain
/// constant would let it do the latter and make the baseline meaningless). Its own cost is one
/// add and one negation per pair.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct ConstantNormals {
    pub x: f32,
    pub dx: f32,
}

impl NormalPairs for ConstantNormals {
    #[inline(always)]
    fn next_pair(&mut self) -> (f32, f32) {
        let v = self.x;
        self.x += self.dx;
        (v, -v)
    }
}
