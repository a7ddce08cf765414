//! Thomas's warp generator ("WarpStandard", D. B. Thomas, Imperial College, 2009-10; described in
//! his talk "Monte Carlo implementations on GPUs", the project's seed document 000), with its
//! state in shared memory as published: `warp`. [`super::warp_shfl`] is the same generator with
//! the state in registers.
//!
//! **Definition.** The 32 lanes of a warp share one state of 32 words, one per lane, `s[0..32]`
//! (1024 bits). In one step every lane `l` reads two words, then every lane writes its own:
//!
//! ```text
//! ta = s[QA[l]], tb = s[QB[l]];   new s[l] = (ta << 2) ^ (tb >> ZB[l]);   output_l = ta + tb (mod 2^32)
//! ```
//!
//! with the lane tables `QA`, `QB` (permutations of 0..31 without fixed points) and `ZB` of
//! [`super::warp_algebra`]. All reads of a step come before any write. The addition is the
//! tempering: it makes the output non-linear over GF(2) except for its lowest bit (the XOR of
//! two state bits). The published code relies on the 32 lanes executing in lockstep; since Volta
//! they need not, so the shared-memory form here orders the reads and the writes with
//! `__syncwarp` (`bar.warp.sync`) on both sides of the write.
//!
//! **Period.** The step is a linear map of the 1024-bit state whose characteristic polynomial
//! (found by Berlekamp–Massey, [`super::warp_algebra::characteristic_polynomial`]) has degree
//! 1024 and is primitive: `x^(2^1024 - 1) = 1` modulo it, and `x^((2^1024 - 1) / r) != 1` for
//! each prime factor `r` of `2^1024 - 1` (the factors of the Fermat numbers `F_0 .. F_9`; the
//! test `period_is_2_pow_1024_minus_1` checks both). So every non-zero state is on one cycle of
//! `2^1024 - 1` steps; each lane's stream has that period.
//!
//! **A lane is the unit of consumption.** A GPU thread is one lane and draws its lane's outputs:
//! warpmc's *stream* `k` of a seed is lane `k mod 32` of *warp state* `k / 32`. On the GPU the
//! 32 lanes of a warp state are the 32 threads of one hardware warp, which must draw in lockstep
//! (every lane calls `next_u32` together: each call is one step of the shared state). On the CPU
//! a [`Warp`] value is one lane's view of the whole warp: it keeps all 32 words and steps all of
//! them on every call, so a lane's stream is defined without a GPU (and costs 32 lane updates
//! per word on the CPU).
//!
//! **Seeding and streams.** The base state of a seed `s` is 32 words of Philox4x32-10
//! (`counter = (j, 0, 0, "WARP")`, `key = (s mod 2^32, s >> 32)`, `j = 0..8`, four words each;
//! if all 1024 bits were zero, `j = 8..16`, and so on). Warp state `w` is the base state
//! advanced by `w 2^128` steps, by a polynomial jump: one precomputed polynomial per non-zero
//! hexadecimal digit of `w` (`x^(d 16^q 2^128) mod P`, computed at build time by
//! `gpu-kernels/build.rs` from the definition), each applied in 1024 steps. Within a seed the
//! warp states are disjoint segments of the cycle, each `2^128` steps long, for all `2^59`
//! warps (`2^64` streams): no two lanes of different warp states ever run over the same state
//! while each draws fewer than `2^128` words. Different seeds start at pseudo-random points of
//! the cycle: their segments overlap with probability below `n^2 2^128 / 2^1024` for `n` seeds.
//! There is no published seeding routine to follow (the reference code takes its 1024 bits from
//! the host).
//!
//! **Raw state** (`--state`): `w0,...,w31,lane`, the warp's 32 words and the lane whose outputs
//! to draw (in `[0, 31]`). A state with all 32 words zero is rejected (it stays zero).
//!
//! **Cost.** GPU: two shared-memory reads, one write and two warp barriers per word (`warp`), or
//! two shuffles (`warp-shfl`); a few integer operations. Stream set-up is a jump of up to one
//! 1024-step polynomial per hexadecimal digit of the warp number (four for a million streams).
//! CPU: 32 lane updates per word, and the same jumps (cached: consecutive lanes of one warp state
//! reuse it).
//!
//! **Quality.** The lowest output bit is the XOR of two state bits: a GF(2)-linear sequence
//! of linear complexity 1024, which TestU01's LinearComp on that bit detects; the author reports
//! that the generator passes SmallCrush and that the top bit passes LinearComp. warpmc's own
//! measurements are in QUALITY.md.
//!
//! ```
//! use warpmc_kernels::rng::{Generator, Uniform32, warp::Warp};
//! // Lane 0 of the published sample state: its first output (ALGORITHMS.md's known answer).
//! let mut s = [0u32; 33];
//! s[..32].copy_from_slice(&warpmc_kernels::rng::warp::SAMPLE_SEED);
//! let mut g = Warp::from_raw_state(&s).unwrap();
//! assert_eq!(g.next_u32(), 0x0468a7d4);
//! ```

use super::warp_algebra::{LANES, QA, QB, ZA, ZB};
use super::{Generator, InvalidState, Uniform32};

include!(concat!(env!("OUT_DIR"), "/warp_jumps.rs"));

/// The sample seed published with the generator (lanes 0..31), for the known answers.
pub const SAMPLE_SEED: [u32; LANES] = [
    0x8cf35fea, 0xe1dd819e, 0x4a7d0a8e, 0xe0c05911, 0xfd053b8d, 0x30643089, 0x6f6ac111, 0xc4869595, 0x9416b7be,
    0xe6d329e8, 0x5af0f5bf, 0xc5c742b5, 0x7197e922, 0x71aa35b4, 0x2070b9d1, 0x2bb34804, 0x7754a517, 0xe725315e,
    0x7f9dd497, 0x043b58bf, 0x83ffa33d, 0x2532905a, 0xbdfe0c8a, 0x16f68671, 0x0d14da2e, 0x847efd5f, 0x1edeec64,
    0x1bebdf9b, 0xf74d4ff3, 0xd404774b, 0x8ee32599, 0xefe0c405,
];

/// Counter word 3 of the Philox blocks of a seed's base state ("WARP").
pub const WARP_TAG: u32 = 0x5741_5250;

/// The raw state's names.
pub const RAW_STATE: &str = "w0,w1,w2,w3,w4,w5,w6,w7,w8,w9,w10,w11,w12,w13,w14,w15,w16,w17,w18,w19,w20,w21,w22,w23,\
                             w24,w25,w26,w27,w28,w29,w30,w31,lane";

/// One step of the whole warp: the new state in `s`, the 32 lanes' outputs returned.
#[inline(always)]
pub fn step(s: &mut [u32; LANES]) -> [u32; LANES] {
    let old = *s;
    let mut out = [0u32; LANES];
    let mut l = 0;
    while l < LANES {
        let (ta, tb) = (old[QA[l] as usize], old[QB[l] as usize]);
        s[l] = (ta << ZA) ^ (tb >> ZB[l]);
        out[l] = ta.wrapping_add(tb);
        l += 1;
    }
    out
}

/// The lane's output of the next step, and the step (the CPU form of a lane's draw).
#[inline(always)]
pub fn lane_next(s: &mut [u32; LANES], lane: u32) -> u32 {
    let l = (lane as usize) % LANES;
    let out = s[QA[l] as usize].wrapping_add(s[QB[l] as usize]);
    *s = super::warp_algebra::advance(s);
    out
}

/// The base state of `seed` (see the module docs): never all zero.
pub fn base_state(seed: u64) -> [u32; LANES] {
    let key = [seed as u32, (seed >> 32) as u32];
    let mut j = 0u32;
    loop {
        let mut s = [0u32; LANES];
        let mut b = 0;
        while b < LANES / 4 {
            let w = super::philox::philox4x32_10([j, 0, 0, WARP_TAG], key);
            s[4 * b..4 * b + 4].copy_from_slice(&w);
            j = j.wrapping_add(1);
            b += 1;
        }
        if s.iter().any(|&w| w != 0) {
            return s;
        }
    }
}

/// `g(T) s` for a polynomial in the GPU's layout (32 words, bit `i % 32` of word `i / 32` the
/// coefficient of `x^i`): Horner's rule, 1024 steps.
#[inline(always)]
pub fn apply_words(g: &[u32; LANES], s: &[u32; LANES]) -> [u32; LANES] {
    let mut r = [0u32; LANES];
    let mut i = 32 * LANES;
    while i > 0 {
        i -= 1;
        r = super::warp_algebra::advance(&r);
        if (g[i / 32] >> (i % 32)) & 1 == 1 {
            let mut l = 0;
            while l < LANES {
                r[l] ^= s[l];
                l += 1;
            }
        }
    }
    r
}

/// Warp state `warp` of `seed`: the base state advanced by `warp 2^128` steps (one table jump per
/// non-zero hexadecimal digit of `warp`).
pub fn warp_state(seed: u64, warp: u64) -> [u32; LANES] {
    let mut s = base_state(seed);
    let mut q = 0;
    while q < WARP_JUMP_POSITIONS {
        let d = ((warp >> (4 * q)) & 15) as usize;
        if d != 0 {
            s = apply_words(&WARP_JUMPS[q][d - 1], &s);
        }
        q += 1;
    }
    s
}

/// Warp state `warp` of `seed`, remembered per CPU thread: the lanes of one warp state follow
/// each other when streams are taken in order, and each would otherwise repeat the jumps.
#[cfg(not(target_arch = "nvptx64"))]
pub fn warp_state_cached(seed: u64, warp: u64) -> [u32; LANES] {
    use std::cell::Cell;
    thread_local! {
        static LAST: Cell<Option<(u64, u64, [u32; LANES])>> = const { Cell::new(None) };
    }
    LAST.with(|last| match last.get() {
        Some((s, w, state)) if (s, w) == (seed, warp) => state,
        _ => {
            let state = warp_state(seed, warp);
            last.set(Some((seed, warp, state)));
            state
        }
    })
}

/// Check a raw state `w0..w31, lane` (see the module docs).
pub fn check_raw_state(name: &'static str, words: &[u32]) -> Result<([u32; LANES], u32), InvalidState> {
    let Some((&lane, block)) = words.split_last() else {
        return Err(InvalidState::word_count(name, "it has exactly 33 words, w0,...,w31 then lane"));
    };
    let s: [u32; LANES] = block
        .try_into()
        .map_err(|_| InvalidState::word_count(name, "it has exactly 33 words, w0,...,w31 then lane"))?;
    if lane >= LANES as u32 {
        return Err(InvalidState {
            generator: name,
            word: Some(LANES as u8),
            value: lane,
            rule: "lane (word 33) must be in [0, 31]: the warp has 32 lanes",
        });
    }
    if s.iter().all(|&w| w == 0) {
        return Err(InvalidState {
            generator: name,
            word: None,
            value: 0,
            rule: "the 32 state words must not all be zero: the recurrence would produce only zeros",
        });
    }
    Ok((s, lane))
}

/// One lane of the warp generator, with the state in shared memory on the GPU.
///
/// On the CPU (and as the state the host and the tests see) it is the whole warp state and the
/// lane: each `next_u32` steps all 32 words and returns this lane's output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct Warp {
    /// The warp's state, lane 0 first.
    pub s: [u32; LANES],
    /// The lane whose outputs this generator returns, in `[0, 31]`.
    pub lane: u32,
}

impl Uniform32 for Warp {
    #[inline(always)]
    fn next_u32(&mut self) -> u32 {
        lane_next(&mut self.s, self.lane)
    }
}

// SAFETY: #[repr(C)] with fields [u32; 32] and u32 only.
unsafe impl Generator for Warp {
    const NAME: &'static str = "warp";
    const RAW_STATE: &'static str = RAW_STATE;
    const RAW_STATE_WORDS: usize = LANES + 1;
    const PERIOD: &'static str = "2^1024 - 1";
    const LANES: u32 = LANES as u32;
    const SHARED_BYTES_PER_THREAD: u32 = 4;

    /// Lane `stream mod 32` of warp state `stream / 32` (see the module docs).
    fn stream(seed: u64, stream: u64) -> Self {
        #[cfg(not(target_arch = "nvptx64"))]
        let s = warp_state_cached(seed, stream / LANES as u64);
        #[cfg(target_arch = "nvptx64")]
        let s = warp_state(seed, stream / LANES as u64);
        Self { s, lane: (stream % LANES as u64) as u32 }
    }

    fn from_raw_state(words: &[u32]) -> Result<Self, InvalidState> {
        let (s, lane) = check_raw_state(Self::NAME, words)?;
        Ok(Self { s, lane })
    }
}

#[cfg(not(target_arch = "nvptx64"))]
impl super::Skip for Warp {
    /// `n` steps of the warp by one polynomial jump (`x^n mod P`, about a millisecond).
    fn skip(&mut self, n: u64) {
        self.s = skip_state(&self.s, n);
    }
}

/// The state `n` steps after `s`: `n` steps directly when `n < 2048`, else `(x^n mod P)(T) s`.
#[cfg(not(target_arch = "nvptx64"))]
pub fn skip_state(s: &[u32; LANES], n: u64) -> [u32; LANES] {
    use super::warp_algebra::{advance, apply, x_pow_mod};
    if n < 2048 {
        let mut s = *s;
        for _ in 0..n {
            s = advance(&s);
        }
        return s;
    }
    apply(&x_pow_mod(n as u128, &WARP_CHARPOLY), s)
}

/// The GPU forms shared by [`Warp`] and [`super::warp_shfl::WarpShfl`]: collective stream set-up.
#[cfg(target_arch = "nvptx64")]
pub mod gpu {
    use super::*;
    use crate::platform::nvptx::{lane_id, shfl_idx, shfl_xor};

    /// One step of the warp with one word per lane: the lane's new word and its output.
    ///
    /// # Safety
    /// All 32 lanes call it together.
    #[inline(always)]
    pub unsafe fn shfl_step(word: u32, qa: u32, qb: u32, zb: u32) -> (u32, u32) {
        // SAFETY: the caller's contract.
        let (ta, tb) = unsafe { (shfl_idx(word, qa), shfl_idx(word, qb)) };
        ((ta << ZA) ^ (tb >> zb), ta.wrapping_add(tb))
    }

    /// This lane's word of warp state `warp` of `seed`, computed by the 32 lanes together: each
    /// lane one Philox block of the base state (keeping its word), then the table jumps with
    /// the state in registers and the taps read by shuffles.
    ///
    /// # Safety
    /// All 32 lanes call it together, with the same `seed` and `warp`.
    #[inline(always)]
    pub unsafe fn init_word(seed: u64, warp: u64) -> u32 {
        let lane = lane_id();
        let key = [seed as u32, (seed >> 32) as u32];
        let mut j = 0u32;
        let s = loop {
            let w = crate::rng::philox::philox4x32_10([j + lane / 4, 0, 0, WARP_TAG], key);
            let mine = w[(lane % 4) as usize];
            // Whether any lane's word is non-zero (the same answer in every lane).
            let mut any = mine;
            let mut m = 16;
            while m >= 1 {
                // SAFETY: all lanes are here together (the caller's contract; `any` is uniform
                // after the reduction, so the loop exits in every lane at once).
                any |= unsafe { shfl_xor(any, m) };
                m /= 2;
            }
            if any != 0 {
                break mine;
            }
            j = j.wrapping_add(LANES as u32 / 4);
        };
        // SAFETY: the caller's contract.
        unsafe { jump_word(s, warp) }
    }

    /// This lane's word of the warp state `warps` warp states (`warps 2^128` steps) after the
    /// one whose word is `word`: one table jump (a 1024-step polynomial) per non-zero
    /// hexadecimal digit of `warps`, the state in registers and the taps read by shuffles.
    ///
    /// # Safety
    /// All 32 lanes call it together, with the same `warps`.
    #[inline(always)]
    pub unsafe fn jump_word(word: u32, warps: u64) -> u32 {
        let lane = lane_id();
        let (qa, qb, zb) = (QA[lane as usize], QB[lane as usize], ZB[lane as usize]);
        let mut s = word;
        let mut q = 0;
        while q < WARP_JUMP_POSITIONS {
            let d = ((warps >> (4 * q)) & 15) as usize;
            if d != 0 {
                let g = &WARP_JUMPS[q][d - 1];
                let mut r = 0u32;
                let mut i = 32 * LANES;
                while i > 0 {
                    i -= 1;
                    // SAFETY: the caller's contract; the loop bounds are the same in every lane.
                    r = unsafe { shfl_step(r, qa, qb, zb) }.0;
                    if (g[i / 32] >> (i % 32)) & 1 == 1 {
                        r ^= s;
                    }
                }
                s = r;
            }
            q += 1;
        }
        s
    }

    /// A lane of [`Warp`] on the GPU: the warp's 32 words in the block's dynamic shared memory
    /// (4 bytes per thread, this warp's words at `32 * 4 * warp_in_block`), two reads and one
    /// write per step, with `__syncwarp` between the reads and the write and after the write.
    pub struct SharedLane {
        own: u32,
        qa: u32,
        qb: u32,
        zb: u32,
    }

    impl SharedLane {
        /// The lane's form from its word (stored into shared memory).
        ///
        /// # Safety
        /// All 32 lanes call it together; the launch gives each thread 4 bytes of dynamic shared
        /// memory.
        #[inline(always)]
        pub unsafe fn new(word: u32) -> Self {
            use crate::platform::nvptx::{shared_address, shared_store, syncwarp, warp_in_block};
            let lane = lane_id() as usize;
            let base = shared_address(warp_in_block() * 4 * LANES as u32);
            let own = base + 4 * lane as u32;
            // SAFETY: `own` is this thread's 4 bytes of the warp's words (the launch sizes the
            // shared memory); the barrier makes every lane's word visible before any read.
            unsafe {
                syncwarp();
                shared_store(own, word);
                syncwarp();
            }
            Self { own, qa: base + 4 * QA[lane], qb: base + 4 * QB[lane], zb: ZB[lane] }
        }

        /// The lane's current word of the state.
        #[inline(always)]
        pub fn word(&self) -> u32 {
            // SAFETY: `own` is in bounds (see `new`); the last write to it was this lane's own,
            // followed by a barrier.
            unsafe { crate::platform::nvptx::shared_load(self.own) }
        }
    }

    impl Uniform32 for SharedLane {
        #[inline(always)]
        fn next_u32(&mut self) -> u32 {
            use crate::platform::nvptx::{shared_load, shared_store, syncwarp};
            // SAFETY: every address is one of the warp's 32 words (see `new`); the lanes draw in
            // lockstep (the collective kernels' contract), so all 32 reach both barriers.
            unsafe {
                let ta = shared_load(self.qa);
                let tb = shared_load(self.qb);
                syncwarp();
                shared_store(self.own, (ta << ZA) ^ (tb >> self.zb));
                syncwarp();
                ta.wrapping_add(tb)
            }
        }
    }

    impl crate::rng::Collective for Warp {
        type Lane = SharedLane;

        #[inline(always)]
        unsafe fn lane(word: u32) -> SharedLane {
            // SAFETY: forwarded contract.
            unsafe { SharedLane::new(word) }
        }

        #[inline(always)]
        fn word(lane: &SharedLane) -> u32 {
            lane.word()
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
    use super::super::warp_algebra::{self, STATE_BITS};
    use super::*;

    fn sample(lane: u32) -> Warp {
        Warp { s: SAMPLE_SEED, lane }
    }

    /// ALGORITHMS.md's known answers from the published sample seed.
    #[test]
    fn reference() {
        let mut s = SAMPLE_SEED;
        let step1 = step(&mut s);
        assert_eq!(
            step1[..8],
            [0x0468a7d4, 0x2d8593ff, 0x27b1807c, 0x240b609f, 0x24ac1290, 0x90892218, 0x52baa29f, 0xd705f563]
        );
        assert_eq!(step1[31], 0x071011f8);
        let step2 = step(&mut s);
        assert_eq!(step2[..4], [0xc9b00219, 0xe1ebd087, 0x9093fb5b, 0x9d32a66d]);
        step(&mut s);
        assert_eq!(
            s[..8],
            [0x9733b2de, 0x2a104313, 0xce816d34, 0x0d6fa292, 0x6899871b, 0x942b8e7c, 0x121fd6be, 0x5db8954a]
        );
        // 1000 steps, 32,000 outputs: XOR and sum.
        let mut s = SAMPLE_SEED;
        let (mut x, mut sum) = (0u32, 0u32);
        for _ in 0..1000 {
            for o in step(&mut s) {
                x ^= o;
                sum = sum.wrapping_add(o);
            }
        }
        assert_eq!((x, sum), (0x4f1474d6, 0x8797fd84));
        // The same through the lanes' generators.
        let (mut x, mut sum) = (0u32, 0u32);
        for lane in 0..32 {
            let mut g = sample(lane);
            for _ in 0..1000 {
                let o = g.next_u32();
                x ^= o;
                sum = sum.wrapping_add(o);
            }
        }
        assert_eq!((x, sum), (0x4f1474d6, 0x8797fd84));
    }

    #[test]
    fn value_stability() {
        // Pinned: a change here changes every stream of `warp` and `warp-shfl`.
        let pinned = [first(&mut Warp::stream(1, 0), 3), first(&mut Warp::stream(1, 33), 3)];
        assert_eq!(pinned, [[4247612988, 2852337763, 1615101018], [799737765, 2011740018, 1080017547]]);
    }

    #[test]
    fn characteristic_polynomial_annihilates_the_state_sequence() {
        let p = warp_algebra::characteristic_polynomial();
        assert_eq!(p, WARP_CHARPOLY, "the build script's polynomial is the algebra's");
        // P(T) s = T^1024 s + sum_{j < 1024} p_j T^j s = 0 for every state s: check on a few.
        for seed in [1u64, 2, 99] {
            let s0 = base_state(seed);
            let mut powers = vec![s0];
            for _ in 0..STATE_BITS {
                powers.push(warp_algebra::advance(powers.last().unwrap()));
            }
            let mut acc = powers[STATE_BITS];
            for (j, pj) in powers.iter().enumerate().take(STATE_BITS) {
                if (p[j / 64] >> (j % 64)) & 1 == 1 {
                    for l in 0..LANES {
                        acc[l] ^= pj[l];
                    }
                }
            }
            assert_eq!(acc, [0; LANES], "seed {seed}");
        }
    }

    /// Prime factors of 2^1024 - 1 = F_0 F_1 ... F_9 (Fermat numbers), from the known complete
    /// factorisations of F_5 .. F_9 (F_0 .. F_4 are prime).
    const FACTORS: [&str; 16] = [
        "3",
        "5",
        "17",
        "257",
        "65537",
        "641",
        "6700417",
        "274177",
        "67280421310721",
        "59649589127497217",
        "5704689200685129054721",
        "1238926361552897",
        "93461639715357977769163558199606896584051237541638188580280321",
        "2424833",
        "7455602825647884208337395736200454918783366342657",
        "741640062627530801524787141901937474059940781097519023905821316144415759504705008092818711693940737",
    ];

    /// Decimal string to little-endian 64-bit words.
    fn parse(dec: &str) -> Vec<u64> {
        let mut n: Vec<u64> = vec![0];
        for c in dec.bytes() {
            let mut carry = (c - b'0') as u128;
            for w in &mut n {
                let v = *w as u128 * 10 + carry;
                *w = v as u64;
                carry = v >> 64;
            }
            if carry > 0 {
                n.push(carry as u64);
            }
        }
        n
    }

    /// x^e mod P for a multi-word exponent.
    fn x_pow(e: &[u64], p: &warp_algebra::Poly) -> warp_algebra::Poly {
        let mut r = warp_algebra::ONE;
        for i in (0..64 * e.len()).rev() {
            r = warp_algebra::mul_mod(&r, &r, p);
            if (e[i / 64] >> (i % 64)) & 1 == 1 {
                r = warp_algebra::mul_mod(&r, &warp_algebra::X, p);
            }
        }
        r
    }

    fn mul_small(a: &[u64], b: &[u64]) -> Vec<u64> {
        let mut r = vec![0u64; a.len() + b.len()];
        for (i, &x) in a.iter().enumerate() {
            let mut carry = 0u128;
            for (j, &y) in b.iter().enumerate() {
                let v = r[i + j] as u128 + x as u128 * y as u128 + carry;
                r[i + j] = v as u64;
                carry = v >> 64;
            }
            r[i + b.len()] = carry as u64;
        }
        while r.len() > 1 && *r.last().unwrap() == 0 {
            r.pop();
        }
        r
    }

    /// `P` is primitive: x has order exactly 2^1024 - 1 modulo P, so the period of every non-zero
    /// state is 2^1024 - 1. The product of the factors is checked to be 2^1024 - 1.
    #[test]
    fn period_is_2_pow_1024_minus_1() {
        let factors: Vec<Vec<u64>> = FACTORS.iter().map(|f| parse(f)).collect();
        let mut product = vec![1u64];
        for f in &factors {
            product = mul_small(&product, f);
        }
        assert_eq!(product, vec![u64::MAX; 16], "the factors multiply to 2^1024 - 1");
        let p = WARP_CHARPOLY;
        let order = vec![u64::MAX; 16];
        assert_eq!(x_pow(&order, &p), warp_algebra::ONE, "x^(2^1024 - 1) = 1");
        for (i, factor) in FACTORS.iter().enumerate().take(factors.len()) {
            let cofactor =
                factors.iter().enumerate().filter(|&(j, _)| j != i).fold(vec![1u64], |a, (_, g)| mul_small(&a, g));
            assert_ne!(x_pow(&cofactor, &p), warp_algebra::ONE, "x^((2^1024 - 1) / {factor})");
        }
    }

    #[test]
    fn skip_equals_stepping() {
        let g = Warp::stream(5, 70);
        skip_matches_stepping(g, &skip_lengths([2047, 2048, 5000]));
        skips_compose_for(g, &[(1, 2), (3000, 5000), (1 << 40, 1 << 41), (u64::MAX / 2, u64::MAX / 2)]);
    }

    /// The stream rule: lanes of one warp state share it; warp `w` is the base advanced by
    /// `w 2^128` steps, whatever digits `w` has; the table entries are the powers they claim.
    #[test]
    fn stream_rule() {
        let p = WARP_CHARPOLY;
        let base = base_state(7);
        assert_eq!(Warp::stream(7, 0).s, base);
        for k in 0..64u64 {
            let g = Warp::stream(7, k);
            assert_eq!((g.s, g.lane), (warp_state(7, k / 32), (k % 32) as u32));
        }
        // Table entries against polynomial arithmetic done here: x^(d 16^q 2^128) mod P.
        for (q, d) in [(0usize, 1u32), (0, 15), (1, 1), (3, 7), (14, 1)] {
            let e = (d as u128) << (4 * q);
            let g = warp_algebra::square_times(&warp_algebra::x_pow_mod(e, &p), WARP_SPACING_LOG2, &p);
            assert_eq!(WARP_JUMPS[q][d as usize - 1], warp_algebra::to_words(&g), "q {q}, d {d}");
        }
        // Jumps compose: warp 0x12 = 0x10 + 0x2, and warp 3 is warp 1 jumped twice more.
        let j = |w: u64, s: &[u32; LANES]| {
            let mut s = *s;
            for (q, jumps) in WARP_JUMPS.iter().enumerate().take(WARP_JUMP_POSITIONS) {
                let d = ((w >> (4 * q)) & 15) as usize;
                if d != 0 {
                    s = apply_words(&jumps[d - 1], &s);
                }
            }
            s
        };
        assert_eq!(warp_state(7, 0x12), j(0x2, &j(0x10, &base)));
        assert_eq!(warp_state(7, 3), j(1, &j(1, &warp_state(7, 1))));
        // The first entry is x^(2^128) = (x^(2^64))^(2^64), found another way.
        let x64 = warp_algebra::x_pow_mod(1 << 64, &p);
        assert_eq!(warp_algebra::to_words(&warp_algebra::square_times(&x64, 64, &p)), WARP_JUMPS[0][0]);
    }

    #[test]
    fn streams() {
        streams_start_distinct::<Warp>(3, 200);
        seed_and_stream_halves_matter::<Warp>();
    }

    #[test]
    fn invalid_states() {
        let mut w = [1u32; 33];
        w[32] = 32;
        let e = Warp::from_raw_state(&w).unwrap_err();
        assert_eq!((e.word, e.value), (Some(32), 32));
        let z = [0u32; 33];
        assert!(Warp::from_raw_state(&z).unwrap_err().rule.contains("all be zero"));
        assert!(Warp::from_raw_state(&[1; 32]).is_err());
        let mut ok = [0u32; 33];
        ok[5] = 1;
        ok[32] = 31;
        assert_eq!(Warp::from_raw_state(&ok).unwrap(), Warp { s: ok[..32].try_into().unwrap(), lane: 31 });
        assert_eq!(RAW_STATE.split(',').count(), 33);
    }
}
