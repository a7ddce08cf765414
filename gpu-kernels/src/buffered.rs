//! Rejection samplers on a collective generator (`warp`, `warp-shfl`): each lane's words through
//! a buffer, so that the 32 lanes of a warp can step their shared state in lockstep while each
//! consumes its own words at its own rate.
//!
//! A collective generator's lane can only draw a word when all 32 lanes draw one together, but a
//! rejection sampler takes a data-dependent number of words per value. So a warp works in
//! *rounds*: in each round every lane draws [`ROUND_WORDS`] words into its [`LaneWords`] (in
//! lockstep), then, on its own, turns the buffered words into as many groups as they complete
//! ([`LaneWords::drain`]). A group is drawn by the ordinary sampler reading the buffer in order;
//! if the buffer runs out before the group is complete, the attempt is abandoned (the sampler
//! finishes on throw-away words of a fixed [`Fallback`] generator, and its result is dropped),
//! nothing is consumed, and the group is drawn again, from its start, after the next round. The
//! warp stops when no lane has groups left to write.
//!
//! **What a stream's values are.** A lane consumes its own words in order, exactly as a
//! sampler consumes any generator's stream: group `i` of a lane is the sampler applied to the
//! lane's words following those groups `0..i` took. The other lanes, the rounds and the launch
//! shape do not enter (a lane's buffer receives [`ROUND_WORDS`] of its words per round whatever
//! happens elsewhere, and its consumption depends only on its own words). The one exception is a
//! full buffer: a word arriving while [`LANE_BUFFER`] words wait is dropped. The lane's
//! consumption alone decides when that happens, so the rule is still the lane's own, but it
//! needs one group to take more than `LANE_BUFFER - ROUND_WORDS` = 192 words, which no
//! transform here comes near (polar would need 96 rejected attempts in one group: probability
//! below 10^-60).
//!
//! **Where a fill leaves the state.** Every lane of the warp draws `R` rounds, `R` the most any
//! of its lanes needed, and the words left in the buffers are dropped at the end of the fill. So
//! the next fill of the same streams starts where the warp stopped: values after the first fill
//! depend on how the request was cut into fills and on which streams shared the warp (as with
//! pre-caching), though always bit for bit the same on the CPU and the GPU.

use crate::dist::Sampler;
use crate::fill::GROUP;
use crate::rng::Uniform32;
use crate::tally::Tally;

/// Words each lane draws per round.
pub const ROUND_WORDS: u32 = 64;

/// A lane's buffer, in words (a power of two).
pub const LANE_BUFFER: usize = 256;

/// The words a lane has drawn and not yet consumed: a ring of [`LANE_BUFFER`] words.
#[derive(Clone, Debug)]
pub struct LaneWords {
    buf: [u32; LANE_BUFFER],
    head: usize,
    len: usize,
}

impl Default for LaneWords {
    fn default() -> Self {
        Self::new()
    }
}

impl LaneWords {
    #[inline(always)]
    pub const fn new() -> Self {
        Self { buf: [0; LANE_BUFFER], head: 0, len: 0 }
    }

    /// Words waiting.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Append the lane's next word (dropped if the buffer is full: see the module docs).
    #[inline(always)]
    pub fn push(&mut self, w: u32) {
        if self.len < LANE_BUFFER {
            self.buf[(self.head + self.len) % LANE_BUFFER] = w;
            self.len += 1;
        }
    }

    /// Up to `want` groups of `sampler` from the waiting words, each handed to `emit` in order;
    /// returns how many. A group the words do not complete is not drawn (and nothing of it is
    /// consumed).
    #[inline(always)]
    pub fn drain<S: Sampler>(
        &mut self,
        sampler: &S,
        want: u64,
        iters: &mut impl Tally,
        mut emit: impl FnMut([S::Item; GROUP]),
    ) -> u64 {
        let mut n = 0;
        while n < want {
            let mut words = Replay { lane: self, pos: 0, short: false, fallback: Fallback::new() };
            let g = sampler.next_group(&mut words, iters);
            if words.short {
                break;
            }
            let used = words.pos;
            self.head = (self.head + used) % LANE_BUFFER;
            self.len -= used;
            emit(g);
            n += 1;
        }
        n
    }
}

/// The waiting words in order, then (marking the attempt short) the fallback's.
struct Replay<'a> {
    lane: &'a LaneWords,
    pos: usize,
    short: bool,
    fallback: Fallback,
}

impl Uniform32 for Replay<'_> {
    #[inline(always)]
    fn next_u32(&mut self) -> u32 {
        if self.pos < self.lane.len {
            let w = self.lane.buf[(self.lane.head + self.pos) % LANE_BUFFER];
            self.pos += 1;
            w
        } else {
            self.short = true;
            self.fallback.next_u32()
        }
    }
}

/// Throw-away words that let an abandoned attempt's loops end: Marsaglia's xorshift32 from a
/// fixed nonzero seed (full period; its results are never used).
#[derive(Clone, Copy, Debug)]
pub struct Fallback(u32);

impl Fallback {
    #[inline(always)]
    pub const fn new() -> Self {
        Self(0x9e37_79b9)
    }
}

impl Default for Fallback {
    fn default() -> Self {
        Self::new()
    }
}

impl Uniform32 for Fallback {
    #[inline(always)]
    fn next_u32(&mut self) -> u32 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.0 = x;
        x
    }
}

/// One lane's whole part of a fill, as a GPU lane does it but without the lockstep: rounds of
/// [`ROUND_WORDS`] words from `rng` until `mine` groups are written (`write(i, group)` for
/// group `i`). Returns the rounds it took; the caller draws `(R - rounds) ROUND_WORDS` more
/// words from `rng`, `R` the most any lane of its warp took, to leave the state where the GPU
/// leaves it.
#[inline(always)]
pub fn lane_fill<S: Sampler, G: Uniform32>(
    sampler: &S,
    rng: &mut G,
    mine: u64,
    iters: &mut impl Tally,
    mut write: impl FnMut(u64, [S::Item; GROUP]),
) -> u64 {
    let mut words = LaneWords::new();
    let (mut done, mut rounds) = (0u64, 0u64);
    while done < mine {
        let mut i = 0;
        while i < ROUND_WORDS {
            words.push(rng.next_u32());
            i += 1;
        }
        rounds += 1;
        let mut k = done;
        done += words.drain(sampler, mine - done, iters, |g| {
            write(k, g);
            k += 1;
        });
    }
    rounds
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dist::{NormalSampler, Polar};
    use crate::real::Single;
    use crate::Exact;

    /// A counter stream: word `i` is `f(i)`.
    struct Counter(u32);
    impl Uniform32 for Counter {
        fn next_u32(&mut self) -> u32 {
            self.0 = self.0.wrapping_add(1);
            self.0.wrapping_mul(0x2c1b_3c6d) ^ (self.0 >> 7).wrapping_mul(0x297a_2d39)
        }
    }

    /// The buffered lane's groups are the sampler's groups over the same words in order.
    #[test]
    fn buffered_groups_are_the_plain_streams() {
        let s = NormalSampler::<Single<Exact>, Polar>::new(0.0, 1.0, false);
        let mut plain = Counter(7);
        let want: Vec<[f32; GROUP]> = (0..5000).map(|_| s.next_group(&mut plain, &mut 0u32)).collect();
        let mut got = Vec::new();
        let rounds = lane_fill(&s, &mut Counter(7), 5000, &mut 0u32, |i, g| {
            assert_eq!(i as usize, got.len());
            got.push(g)
        });
        assert_eq!(got.len(), 5000);
        for (a, b) in got.iter().zip(&want) {
            assert_eq!(a.map(f32::to_bits), b.map(f32::to_bits));
        }
        // The buffer ends with fewer words than a round plus one group's worth.
        assert!(rounds * ROUND_WORDS as u64 >= 5000 * 4);
    }

    #[test]
    fn a_full_buffer_drops_words() {
        let mut w = LaneWords::new();
        for i in 0..(LANE_BUFFER as u32 + 10) {
            w.push(i);
        }
        assert_eq!(w.len(), LANE_BUFFER);
    }
}
