//! Filling memory with a generator's output: the layout shared by `warpmc generate` and the
//! GPU fill kernels.
//!
//! Values come in groups of [`GROUP`] = 4 consecutive values of one stream (for normals, two
//! Box-Muller pairs; for `f64` uniforms, 8 consecutive words). With `S` streams the output is the streams' groups interleaved:
//! value `i` is value `4 (i / 4 / S) + i % 4` of stream `(i / 4) % S`. With `S = 1` it is simply
//! the stream. On the GPU each thread owns one stream and a warp writes 32 adjacent 16-byte
//! groups, so the stores are coalesced and vectorised.

use crate::tally::Tally;
use crate::MathMode;
use crate::convert::{u32_pair_to_unit_f64, u32_to_unit_open_closed};
use crate::normal::box_muller;
use crate::rng::Uniform32;

/// Values per group.
pub const GROUP: usize = 4;

/// Dynamic shared memory per thread that a fill with a warp per stream (`rng::WarpStream`)
/// takes for staging its stores: two areas of 32 bytes per thread (`gpu.rs`,
/// `fill_warp_stores`).
pub const STAGING_BYTES_PER_THREAD: u32 = 64;

/// What a group holds.
pub trait Group {
    type Item: Copy + Default + Send + Sync;
    /// Words of the generator a group takes.
    const WORDS: usize;
    /// The next group of a stream.
    fn next_group<G: Uniform32>(rng: &mut G) -> [Self::Item; GROUP];
}

/// Raw 32-bit words.
pub struct Words;
/// Uniform `f32` in `(0, 1]` ([`u32_to_unit_open_closed`]).
pub struct Uniforms;
/// Uniform `f64` in `(0, 1]` with 53 random bits from two consecutive words
/// ([`u32_pair_to_unit_f64`]).
pub struct UniformsF64;
/// Standard normal `f32` by Box-Muller in mode `M`.
pub struct Normals<M>(core::marker::PhantomData<M>);

impl Group for Words {
    const WORDS: usize = 4;
    type Item = u32;
    #[inline(always)]
    fn next_group<G: Uniform32>(rng: &mut G) -> [u32; GROUP] {
        rng.next_u32x4()
    }
}

impl Group for Uniforms {
    const WORDS: usize = 4;
    type Item = f32;
    #[inline(always)]
    fn next_group<G: Uniform32>(rng: &mut G) -> [f32; GROUP] {
        Words::next_group(rng).map(u32_to_unit_open_closed)
    }
}

impl Group for UniformsF64 {
    const WORDS: usize = 8;
    type Item = f64;
    #[inline(always)]
    fn next_group<G: Uniform32>(rng: &mut G) -> [f64; GROUP] {
        let a = Words::next_group(rng);
        let b = Words::next_group(rng);
        [
            u32_pair_to_unit_f64(a[0], a[1]),
            u32_pair_to_unit_f64(a[2], a[3]),
            u32_pair_to_unit_f64(b[0], b[1]),
            u32_pair_to_unit_f64(b[2], b[3]),
        ]
    }
}

impl<M: MathMode> Group for Normals<M> {
    const WORDS: usize = 4;
    type Item = f32;
    #[inline(always)]
    fn next_group<G: Uniform32>(rng: &mut G) -> [f32; GROUP] {
        let w = Words::next_group(rng);
        let (n0, n1) = box_muller::<M>(w[0], w[1]);
        let (n2, n3) = box_muller::<M>(w[2], w[3]);
        [n0, n1, n2, n3]
    }
}

/// Produce stream `stream`'s groups for an interleaved block of `len` values with `streams`
/// streams, from its group in row `from_row` on (row `r` holds group `r` of every stream):
/// `write(first_index, group, valid)` for each of those groups, where `valid` is 4 except
/// possibly for the block's last group, which may be cut short by `len`.
///
/// The number of groups is computed first, so the loop carries one counter and no bounds test.
#[inline(always)]
pub fn fill_stream<K: Group, G: Uniform32, W: FnMut(usize, [K::Item; GROUP], usize)>(
    rng: &mut G,
    stream: usize,
    streams: usize,
    len: usize,
    from_row: usize,
    mut write: W,
) {
    let groups = len.div_ceil(GROUP);
    let first = from_row * streams + stream;
    if first >= groups {
        return;
    }
    let mine = (groups - first).div_ceil(streams);
    let step = streams * GROUP;
    let mut base = first * GROUP;
    let mut i = 1;
    while i < mine {
        write(base, K::next_group(rng), GROUP);
        base += step;
        i += 1;
    }
    write(base, K::next_group(rng), (len - base).min(GROUP));
}

/// [`fill_stream`] with a run-time [`crate::dist::Sampler`] in place of a [`Group`] type: the
/// same layout, the groups from `sampler`, and `iters` counting its rejection attempts.
#[inline(always)]
pub fn fill_stream_sampled<S: crate::dist::Sampler, G: Uniform32, W: FnMut(usize, [S::Item; GROUP], usize)>(
    sampler: &S,
    rng: &mut G,
    stream: usize,
    streams: usize,
    len: usize,
    from_row: usize,
    iters: &mut impl Tally,
    mut write: W,
) {
    let groups = len.div_ceil(GROUP);
    let first = from_row * streams + stream;
    if first >= groups {
        return;
    }
    let mine = (groups - first).div_ceil(streams);
    let step = streams * GROUP;
    let mut base = first * GROUP;
    let mut i = 1;
    while i < mine {
        write(base, sampler.next_group(rng, iters), GROUP);
        base += step;
        i += 1;
    }
    write(base, sampler.next_group(rng, iters), (len - base).min(GROUP));
}
