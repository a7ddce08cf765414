//! Counting the attempts of rejection loops.
//!
//! Every sampler that may loop ticks a [`Tally`] once per attempt. The production fills pass a
//! `u32` that nothing reads (the compiler removes it); the GPU's diagnostic kernels pass one
//! that also counts, at the same program point, the iterations the warp executes (see
//! `gpu::WarpTally`), so that divergence is measured where it happens rather than assumed.

/// A counter of loop iterations.
pub trait Tally {
    /// One more attempt.
    fn tick(&mut self);
}

impl Tally for u32 {
    #[inline(always)]
    fn tick(&mut self) {
        *self = self.wrapping_add(1);
    }
}
