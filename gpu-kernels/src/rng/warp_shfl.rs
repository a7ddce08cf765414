//! Thomas's warp generator with its state in registers: `warp-shfl`. The same generator, seeding,
//! streams and outputs as [`super::warp`] (its module docs give the definition, period, stream
//! rule and quality); only the GPU form differs.
//!
//! **GPU form.** Each lane keeps its own word of the warp's state in a register and reads its
//! two taps with `shfl.sync.idx` (full mask): no shared memory and no barrier, since a shuffle
//! reads every lane's value before any lane's next instruction can change it. Per word: two
//! shuffles, two shifts, an XOR and an addition.
//!
//! **CPU form.** As [`super::warp::Warp`]: one lane's view of the whole 32-word state, stepped
//! whole on every draw.
//!
//! ```
//! use warpmc_kernels::rng::{Generator, Uniform32, warp::Warp, warp_shfl::WarpShfl};
//! let (mut a, mut b) = (WarpShfl::stream(9, 40), Warp::stream(9, 40));
//! assert_eq!(a.next_u32(), b.next_u32());
//! ```

use super::warp::{RAW_STATE, check_raw_state, lane_next};
use super::warp_algebra::LANES;
use super::{Generator, InvalidState, Uniform32};

/// One lane of the warp generator, with the state in registers on the GPU (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct WarpShfl {
    /// The warp's state, lane 0 first.
    pub s: [u32; LANES],
    /// The lane whose outputs this generator returns, in `[0, 31]`.
    pub lane: u32,
}

impl Uniform32 for WarpShfl {
    #[inline(always)]
    fn next_u32(&mut self) -> u32 {
        lane_next(&mut self.s, self.lane)
    }
}

// SAFETY: #[repr(C)] with fields [u32; 32] and u32 only.
unsafe impl Generator for WarpShfl {
    const NAME: &'static str = "warp-shfl";
    const RAW_STATE: &'static str = RAW_STATE;
    const RAW_STATE_WORDS: usize = LANES + 1;
    const PERIOD: &'static str = "2^1024 - 1";
    const LANES: u32 = LANES as u32;

    /// Lane `stream mod 32` of warp state `stream / 32`, as [`super::warp::Warp`].
    fn stream(seed: u64, stream: u64) -> Self {
        let w = super::warp::Warp::stream(seed, stream);
        Self { s: w.s, lane: w.lane }
    }

    fn from_raw_state(words: &[u32]) -> Result<Self, InvalidState> {
        let (s, lane) = check_raw_state(Self::NAME, words)?;
        Ok(Self { s, lane })
    }
}

#[cfg(not(target_arch = "nvptx64"))]
impl super::Skip for WarpShfl {
    /// `n` steps of the warp by one polynomial jump, as [`super::warp::Warp`].
    fn skip(&mut self, n: u64) {
        self.s = super::warp::skip_state(&self.s, n);
    }
}

#[cfg(target_arch = "nvptx64")]
mod gpu {
    use super::*;
    use crate::platform::nvptx::lane_id;
    use crate::rng::warp::gpu::{init_word, jump_word, shfl_step};
    use crate::rng::warp_algebra::{QA, QB, ZB};

    /// A lane of [`WarpShfl`] on the GPU: its word of the state and its taps, in registers.
    pub struct ShflLane {
        word: u32,
        qa: u32,
        qb: u32,
        zb: u32,
    }

    impl Uniform32 for ShflLane {
        #[inline(always)]
        fn next_u32(&mut self) -> u32 {
            // SAFETY: the lanes draw in lockstep (the collective kernels' contract).
            let (word, out) = unsafe { shfl_step(self.word, self.qa, self.qb, self.zb) };
            self.word = word;
            out
        }
    }

    impl crate::rng::Collective for WarpShfl {
        type Lane = ShflLane;

        #[inline(always)]
        unsafe fn lane(word: u32) -> ShflLane {
            let l = lane_id() as usize;
            ShflLane { word, qa: QA[l], qb: QB[l], zb: ZB[l] }
        }

        #[inline(always)]
        fn word(lane: &ShflLane) -> u32 {
            lane.word
        }

        #[inline(always)]
        unsafe fn init_word(seed: u64, warp: u64) -> u32 {
            // SAFETY: forwarded contract.
            unsafe { init_word(seed, warp) }
        }

        #[inline(always)]
        unsafe fn jump_word(word: u32, warps: u64) -> u32 {
            // SAFETY: forwarded contract.
            unsafe { jump_word(word, warps) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::super::warp::Warp;
    use super::*;

    /// The same streams as `warp`, lane by lane.
    #[test]
    fn same_stream_as_warp() {
        for (seed, k) in [(0u64, 0u64), (1, 31), (1, 32), (77, 1000), (u64::MAX, 12345)] {
            let (mut a, mut b) = (WarpShfl::stream(seed, k), Warp::stream(seed, k));
            assert_eq!(first(&mut a, 100), first(&mut b, 100), "seed {seed}, stream {k}");
        }
        let mut s = [7u32; 33];
        s[32] = 3;
        assert_eq!(
            first(&mut WarpShfl::from_raw_state(&s).unwrap(), 50),
            first(&mut Warp::from_raw_state(&s).unwrap(), 50)
        );
        assert!(WarpShfl::from_raw_state(&[0; 33]).is_err());
        let g = WarpShfl::stream(4, 9);
        skip_matches_stepping(g, &skip_lengths([3000]));
    }
}
