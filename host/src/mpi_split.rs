//! MPI ranks as the outer level of the integrator's split (the `mpi` feature, rsmpi over the
//! system's MPI library).
//!
//! Under `mpirun -n K`, every rank runs the same integrator loop. An iteration's points are cut
//! into `K` contiguous ranges in proportion to the ranks' measured speeds (all-gathered, so every
//! rank computes the same cut); each rank evaluates its range on its own devices (CPU workers or
//! GPUs) and the exact sums are combined by one `MPI_Allreduce`:
//! - each 192-bit two's-complement sum is sent as six 32-bit limbs in 64-bit words, so the
//!   element-wise `MPI_SUM` of up to 2^32 ranks cannot overflow and the reduction is exact in any
//!   order; the receiver propagates the carries;
//! - the largest value is reduced with `MPI_MAX`.
//!
//! Every rank then holds the same sums, bit for bit, so the grid refinement and the next plan,
//! computed from them on each rank, are identical everywhere: nothing else is broadcast. The
//! result equals a single process's bit for bit.

use std::ops::Range;
use std::sync::Mutex;
use std::time::Instant;

use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use warpmc_kernels::vegas::{self, VegasJob, VegasSums};

use warpmc_kernels::accum::PairMoments;
use warpmc_kernels::asian::AsianBasketSteps;
use warpmc_kernels::basket::{BasketJob, BasketLeg};
use warpmc_kernels::instrument::Legs;
use warpmc_kernels::qmc::QmcParams;

use crate::backend::{Executor, FillKind, Filler, StreamInit};
use crate::generators::GeneratorKind;
use crate::pricing::Mode;
use crate::integrate::{Integrand, VegasRunner, dest_offset, run_split, split_points, touched_end};
use crate::{Error, Result};

/// Whether this process was started by an MPI launcher (Open MPI's `mpirun`, or a PMI-based
/// one): only then is MPI initialised.
pub fn launched_by_mpirun() -> bool {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"].iter().any(|v| std::env::var_os(v).is_some())
}

/// Initialise MPI (once per process); the universe finalises MPI when dropped, so the caller
/// keeps it until the end.
pub fn initialize() -> Result<mpi::environment::Universe> {
    mpi::initialize().ok_or_else(|| Error::invalid("mpi", "initialise", "an MPI library that initialises once"))
}

/// Whether MPI is initialised in this process (by [`initialize`]).
pub fn active() -> bool {
    mpi::environment::is_initialized()
}

/// This process's rank (0 without MPI).
pub fn rank() -> usize {
    if active() { SimpleCommunicator::world().rank() as usize } else { 0 }
}

/// The communicator, used only on the thread that created it.
struct World {
    comm: SimpleCommunicator,
    owner: std::thread::ThreadId,
}

// SAFETY: MPI was initialised without thread support beyond the main thread, and `World` is only
// touched through `World::comm()`, which refuses any thread but the one that created it: no two
// threads ever use the communicator, so sharing the reference is sound.
unsafe impl Sync for World {}
// SAFETY: as above: moving the handle to another thread only makes its use there an error
// (`comm()` checks the owner); the world communicator is a predefined handle that dropping does
// not free.
unsafe impl Send for World {}

impl World {
    /// The world communicator (MPI initialised by [`initialize`]), owned by this thread.
    fn new() -> Self {
        Self { comm: SimpleCommunicator::world(), owner: std::thread::current().id() }
    }

    /// The communicator, on the thread that created it only.
    fn comm(&self) -> Result<&SimpleCommunicator> {
        if std::thread::current().id() != self.owner {
            return Err(Error::invalid("mpi", "another thread", "the thread that initialised MPI"));
        }
        Ok(&self.comm)
    }

    fn rank(&self) -> usize {
        self.comm().map(|w| w.rank() as usize).unwrap_or(0)
    }

    fn size(&self) -> usize {
        self.comm().map(|w| w.size() as usize).unwrap_or(1)
    }

    /// Every rank's `counts` and 192-bit sums `wide` (three words each) added exactly: the sums go
    /// through one `MPI_Allreduce` as 32-bit limbs in `u64`s (MPI_SUM cannot carry between words),
    /// carried back afterwards. Returns the counts' totals and each of `wide`'s totals.
    fn sum_exact(&self, counts: &[u64], wide: &[&[u64]]) -> Result<(Vec<u64>, Vec<Vec<u64>>)> {
        let (mut limbs, mut total) = (Vec::new(), Vec::new());
        self.sum_limbs(counts, wide, &mut limbs, &mut total)?;
        let mut at = counts.len();
        let wide_totals = wide
            .iter()
            .map(|w| {
                let part = from_limbs(&total[at..at + 2 * w.len()]);
                at += 2 * w.len();
                part
            })
            .collect();
        total.truncate(counts.len());
        Ok((total, wide_totals))
    }

    /// The reduction of [`Self::sum_exact`] into buffers the caller keeps: `total` holds the
    /// counts' totals, then each of `wide`'s totals as limbs (for [`from_limbs_into`]).
    fn sum_limbs(&self, counts: &[u64], wide: &[&[u64]], limbs: &mut Vec<u64>, total: &mut Vec<u64>) -> Result<()> {
        let comm = self.comm()?;
        limbs.clear();
        limbs.reserve(counts.len() + 2 * wide.iter().map(|w| w.len()).sum::<usize>());
        limbs.extend_from_slice(counts);
        for w in wide {
            to_limbs(w, limbs);
        }
        total.resize(limbs.len(), 0);
        comm.all_reduce_into(&limbs[..], &mut total[..], SystemOperation::sum());
        Ok(())
    }
}

/// The integrator's buffers on a rank, kept between iterations: at 390625 hypercubes an
/// iteration's sums are 18.75 MiB, and allocating them, their limbs and the reduction's result
/// afresh (page faults included) cost 0.11-0.16 s per iteration on a 2-core machine.
#[derive(Default)]
struct Scratch {
    local: Option<VegasSums>,
    limbs: Vec<u64>,
    total: Vec<u64>,
    cubes: Vec<u64>,
    bins: Vec<u64>,
}

/// The ranks of `world`, each running `local` (its devices).
pub struct MpiRunner<'a> {
    world: World,
    local: Vec<&'a dyn VegasRunner>,
    /// Points per second of each rank in the last iteration (the same on every rank).
    speeds: Mutex<Vec<f64>>,
    local_speeds: Mutex<Vec<f64>>,
    /// The integrator's buffers, kept between iterations.
    scratch: Mutex<Scratch>,
}

impl<'a> MpiRunner<'a> {
    /// The ranks of the world communicator (MPI initialised by [`initialize`]), each running
    /// `local`.
    pub fn new(local: Vec<&'a dyn VegasRunner>) -> Self {
        let world = World::new();
        let size = world.size();
        let n = local.len();
        Self {
            world,
            local,
            speeds: Mutex::new(vec![1.0; size]),
            local_speeds: Mutex::new(vec![1.0; n]),
            scratch: Mutex::new(Scratch::default()),
        }
    }

    pub fn rank(&self) -> usize {
        self.world.rank()
    }

    pub fn size(&self) -> usize {
        self.world.size()
    }
}

/// Six 32-bit limbs per 192-bit sum, each in a `u64`.
fn to_limbs(words: &[u64], out: &mut Vec<u64>) {
    for &w in words {
        out.push(w & 0xffff_ffff);
        out.push(w >> 32);
    }
}

/// Inverse of [`to_limbs`] after an element-wise sum: carries propagated within each group of
/// three words (one sum), modulo 2^192.
fn from_limbs(limbs: &[u64]) -> Vec<u64> {
    let mut out = Vec::new();
    from_limbs_into(limbs, &mut out);
    out
}

/// [`from_limbs`] into a buffer the caller keeps.
fn from_limbs_into(limbs: &[u64], out: &mut Vec<u64>) {
    out.clear();
    out.reserve(limbs.len() / 2);
    for group in limbs.chunks_exact(6) {
        let mut carry = 0u128;
        let mut half = [0u64; 6];
        for (h, &l) in half.iter_mut().zip(group) {
            let t = l as u128 + carry;
            *h = (t & 0xffff_ffff) as u64;
            carry = t >> 32;
        }
        out.push(half[0] | half[1] << 32);
        out.push(half[2] | half[3] << 32);
        out.push(half[4] | half[5] << 32);
    }
}

impl VegasRunner for MpiRunner<'_> {
    fn describe(&self) -> String {
        let local: Vec<String> = self.local.iter().map(|r| r.describe()).collect();
        format!("{} MPI ranks, each: {}", self.size(), local.join("; "))
    }

    /// The reduced sums up to the last hypercube `range` touches: [`Self::run_into`] with
    /// nothing written elsewhere.
    fn run(
        &self,
        job: &VegasJob,
        integrand: &Integrand<'_>,
        generator: GeneratorKind,
        edges: &[f64],
        offsets: &[u64],
        range: Range<u64>,
    ) -> Result<VegasSums> {
        let end = touched_end(offsets, &range);
        self.run_into(job, integrand, generator, edges, offsets, range, end, &mut [])
    }

    fn run_into(
        &self,
        job: &VegasJob,
        integrand: &Integrand<'_>,
        generator: GeneratorKind,
        edges: &[f64],
        offsets: &[u64],
        range: Range<u64>,
        from: u64,
        dest: &mut [u64],
    ) -> Result<VegasSums> {
        let end = touched_end(offsets, &range);
        let mut scratch = self.scratch.lock().unwrap();
        // Every rank reduces (a collective) before any checks its destination.
        let stats = self.reduce(job, integrand, generator, edges, offsets, range, &mut scratch)?;
        let at = dest_offset(from, dest.len(), 0..end)?;
        // `scratch` holds every hypercube (`reduce` fills them all), so `at..` covers `dest`.
        let Some(ours) = scratch.cubes.get(at..at + dest.len()) else {
            let held = scratch.cubes.len() / vegas::CUBE_WORDS;
            return Err(Error::invalid("hypercubes", format!("..{end}"), format!("the {held} the reduced sums hold")));
        };
        dest.copy_from_slice(ours);
        Ok(VegasSums { first_cube: 0, cubes: scratch.cubes[..at].to_vec(), bins: scratch.bins.clone(), stats })
    }
}

impl MpiRunner<'_> {
    /// This rank's share of `range` on its local runners, and every rank's sums added exactly
    /// into `s.cubes` (all hypercubes) and `s.bins`; returns the statistics.
    #[allow(clippy::too_many_arguments)]
    fn reduce(
        &self,
        job: &VegasJob,
        integrand: &Integrand<'_>,
        generator: GeneratorKind,
        edges: &[f64],
        offsets: &[u64],
        range: Range<u64>,
        s: &mut Scratch,
    ) -> Result<[u64; 3]> {
        let world = self.world.comm()?;
        let ranges = split_points(range, &self.speeds.lock().unwrap());
        let mine = ranges[self.rank()].clone();
        let start = Instant::now();
        let Scratch { local, limbs, total, cubes, bins } = s;
        let sums = local.get_or_insert_with(|| VegasSums::zeros(0, 0, 0));
        let result = {
            let mut speeds = self.local_speeds.lock().unwrap();
            run_split(job, integrand, generator, edges, offsets, &self.local, &mut speeds, mine.clone(), sums)
        };
        let secs = start.elapsed().as_secs_f64();
        // Every rank must reach the collectives, so an error is reduced too and reported after.
        let (failed, local_err) = match result {
            Ok(_) => (0u64, None),
            Err(e) => {
                *sums = VegasSums::zeros(job.cubes, job.dim, job.bins);
                (1, Some(e))
            }
        };
        self.world.sum_limbs(&[sums.stats[1], sums.stats[2], failed], &[&sums.cubes, &sums.bins], limbs, total)?;
        let cube_limbs = 2 * sums.cubes.len();
        from_limbs_into(&total[3..3 + cube_limbs], cubes);
        from_limbs_into(&total[3 + cube_limbs..], bins);
        let counts = [total[0], total[1], total[2]];
        let mut max = 0u64;
        world.all_reduce_into(&sums.stats[0], &mut max, SystemOperation::max());
        let rate = if secs > 0.0 { (mine.end - mine.start) as f64 / secs } else { 0.0 };
        let mut rates = vec![0.0f64; self.size()];
        world.all_gather_into(&rate, &mut rates[..]);
        if rates.iter().all(|&r| r > 0.0 && r.is_finite()) {
            *self.speeds.lock().unwrap() = rates;
        }
        if let Some(e) = local_err {
            return Err(e);
        }
        if counts[2] > 0 {
            return Err(Error::OutOfRange(format!("{} other MPI rank(s) failed to evaluate their points", counts[2])));
        }
        Ok([max, counts[0], counts[1]])
    }
}

impl MpiRunner<'_> {
    /// Fail on every rank unless every rank has the same `key` (the serialised integrand and
    /// settings): a rank started with other arguments would add sums of another integral.
    pub fn check_same_everywhere(&self, key: &[u8]) -> Result<()> {
        let mut h = 0xcbf2_9ce4_8422_2325u64; // FNV-1a
        for &b in key {
            h ^= b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        let world = self.world.comm()?;
        let (mut lo, mut hi) = (0u64, 0u64);
        world.all_reduce_into(&h, &mut lo, SystemOperation::min());
        world.all_reduce_into(&h, &mut hi, SystemOperation::max());
        if lo != hi {
            return Err(Error::invalid("mpi", "ranks", "the same integrand and settings on every rank"));
        }
        Ok(())
    }
}

/// A backend whose path sums are split between the MPI ranks (`mpirun -n K warpmc price ...`):
/// each call's paths are cut into `K` contiguous ranges, each rank runs its range on its own
/// backend, and the exact sums are combined with one `MPI_Allreduce` (as limbs, as in
/// [`MpiRunner`]), so every rank holds the single-process sums bit for bit. Generation
/// (`filler`) is not split: each rank runs it whole.
pub struct MpiExecutor {
    inner: Box<dyn Executor>,
    world: World,
}

impl MpiExecutor {
    /// `inner` on every rank of the world communicator (MPI initialised by [`initialize`]).
    pub fn new(inner: Box<dyn Executor>) -> Self {
        Self { inner, world: World::new() }
    }

    pub fn rank(&self) -> usize {
        self.world.rank()
    }

    pub fn size(&self) -> usize {
        self.world.size()
    }

    /// This rank's share of `paths` (contiguous, in rank order).
    fn mine(&self, paths: Range<u64>) -> Range<u64> {
        let speeds = vec![1.0; self.size()];
        split_points(paths, &speeds)[self.rank()].clone()
    }

    /// Combine every rank's sums (or error) into the whole range's.
    fn reduce(&self, local: Result<PairMoments>) -> Result<PairMoments> {
        let (m, failed, err) = match local {
            Ok(m) => (m, 0u64, None),
            Err(e) => (PairMoments::ZERO, 1, Some(e)),
        };
        let w = m.to_words();
        let (counts, wide) = self.world.sum_exact(&[w[0], w[1], failed], &[&w[2..]])?;
        if let Some(e) = err {
            return Err(e);
        }
        if counts[2] > 0 {
            return Err(Error::OutOfRange(format!("{} other MPI rank(s) failed to price their paths", counts[2])));
        }
        let mut words = [0u64; PairMoments::WORDS];
        words[..2].copy_from_slice(&counts[..2]);
        words[2..].copy_from_slice(&wide[0]);
        Ok(PairMoments::from_words(&words))
    }
}

impl Executor for MpiExecutor {
    fn kind(&self) -> &'static str {
        self.inner.kind()
    }

    fn description(&self) -> String {
        format!("{} MPI ranks, each: {}", self.size(), self.inner.description())
    }

    fn batch_paths(&self, steps: u32) -> u64 {
        self.inner.batch_paths(steps).saturating_mul(self.size() as u64)
    }

    fn asian_basket(
        &self,
        p: &AsianBasketSteps,
        generator: GeneratorKind,
        seed: u64,
        paths: Range<u64>,
        mode: Mode,
    ) -> Result<PairMoments> {
        self.reduce(self.inner.asian_basket(p, generator, seed, self.mine(paths), mode))
    }

    fn asian_basket_constant(&self, p: &AsianBasketSteps, paths: Range<u64>) -> Result<PairMoments> {
        self.reduce(self.inner.asian_basket_constant(p, self.mine(paths)))
    }

    fn instrument_legs(
        &self,
        legs: &Legs,
        generator: GeneratorKind,
        seed: u64,
        paths: Range<u64>,
        mode: Mode,
    ) -> Result<PairMoments> {
        self.reduce(self.inner.instrument_legs(legs, generator, seed, self.mine(paths), mode))
    }

    fn basket(
        &self,
        job: &BasketJob,
        legs: &[BasketLeg],
        generator: GeneratorKind,
        seed: u64,
        paths: Range<u64>,
        mode: Mode,
    ) -> Result<PairMoments> {
        self.reduce(self.inner.basket(job, legs, generator, seed, self.mine(paths), mode))
    }

    fn instrument_qmc(
        &self,
        legs: &Legs,
        q: &QmcParams,
        directions: &[u32],
        keys: &[u32],
        points: Range<u64>,
        mode: Mode,
    ) -> Result<PairMoments> {
        self.reduce(self.inner.instrument_qmc(legs, q, directions, keys, self.mine(points), mode))
    }

    fn filler(&self, kind: FillKind, init: &StreamInit) -> Result<Box<dyn Filler + '_>> {
        self.inner.filler(kind, init)
    }
}

/// Send this process's standard output to `/dev/null` (the ranks other than 0 under `mpirun`,
/// so that one report is printed).
pub fn silence_stdout() {
    if let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null") {
        use std::os::fd::AsRawFd;
        // SAFETY: dup2 on two open descriptors; descriptor 1 is replaced atomically and `null`
        // stays open until after the call.
        unsafe { libc::dup2(null.as_raw_fd(), 1) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limbs_sum_exactly_with_carries_and_signs() {
        // Three "ranks" adding 192-bit values, including a negative one (two's complement).
        let a = [u64::MAX, u64::MAX, 0u64]; // 2^128 - 1
        let b = [1u64, 0, 0];
        let c = [u64::MAX - 4, u64::MAX, u64::MAX]; // -5
        let mut sums = vec![0u64; 6];
        for v in [a, b, c] {
            let mut l = Vec::new();
            to_limbs(&v, &mut l);
            for (s, x) in sums.iter_mut().zip(l) {
                *s += x;
            }
        }
        // 2^128 - 1 + 1 - 5 = 2^128 - 5.
        assert_eq!(from_limbs(&sums), vec![u64::MAX - 4, u64::MAX, 0]);
    }
}
