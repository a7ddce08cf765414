//! The long battery (`--battery long`): warpmc's own tests of PractRand's class, run over up to
//! 2^42 bytes of one stream or of interleaved streams and judged at every doubling of the length.
//!
//! PractRand (Doty-Humphrey) cannot be installed on the machines this project builds on (it is
//! distributed from SourceForge, and no registry they reach carries it), so warpmc tests in its
//! manner with code of its own. What makes PractRand's battery stronger than TestU01's for
//! modern generators is not one clever statistic but three habits, which this battery keeps:
//!
//! - **Length.** The tests stream: their memory does not grow with the data, so a run reads
//!   hundreds of gigabytes, and every statistic is evaluated again each time the length doubles
//!   (from 2^26 bytes on), so a defect is reported at the length where it first shows.
//! - **Hamming-weight dependencies at every scale** (PractRand's BCFN and DC6 are "frequency
//!   tests on overlapping sets of hamming weights", its documentation says). Here: the weight of
//!   each byte, of each 32-bit word, and of each block of `2^j` words for `j = 1, 2, ...` while at
//!   least 2^16 blocks have been read, each weight turned into one of four letters, and the
//!   overlapping 5-letter words counted. The statistic is Marsaglia's `Q5 − Q4` (DIEHARD's
//!   "count the 1s" test): the Pearson sums over the 5-letter and 4-letter overlapping words,
//!   whose difference is chi-square with `4^5 − 4^4 = 768` degrees of freedom for a random
//!   stream, whatever the letters' probabilities (computed exactly from the binomial law).
//!   Long-range correlations (lagged-Fibonacci and other large-lag generators) show in the
//!   large blocks; short-range ones in bytes and words.
//! - **Binary rank of large matrices** (PractRand's BRank): GF(2) ranks of square matrices whose
//!   rows are consecutive words (sizes 256, 1024, 4096 and 20480 bits), the low bytes of
//!   consecutive words (256, 1024, 4096) or their lowest bits (1024, 4096: PractRand tests the
//!   low bits apart by "folding"), the larger ones taken rarely so that elimination costs under
//!   one 64-bit operation per word tested. A generator that is linear over GF(2) with a
//!   state of `k` bits gives matrices of rank at most `k`: MT19937 (`k` = 19937) fails at 20480,
//!   which a run of 2^35 words (128 GiB) reaches; the Tausworthe family fails at once.
//! - **Floating-point frequency** (PractRand's FPF): each word read as a binary fraction, its
//!   exponent (leading zeros, 0 to 23, and a tail) and the 8 bits after its leading one; the
//!   exponents against their geometric law, and the fraction bits against uniformity at each
//!   exponent, so the low bits of small words are tested as hard as the high bits of large ones.
//!
//! **What is not PractRand.** The statistics are not PractRand's: its BCFN and DC6 use other
//! letterings and tuple sizes, its Gap-16 and its foldings (extra copies of the battery on the
//! low bits alone) are not reproduced, and its thresholds are its own. This battery's verdicts
//! use warpmc's thresholds (fail outside `[1e-10, 1 − 1e-10]`, suspect outside `[1e-4, 1 − 1e-4]`)
//! on p-values from the statistics' asymptotic laws; the rank statistics are one-sided (only too
//! low a rank fails). `tests` in this module check the laws by running the statistics on
//! independent Philox streams and testing the p-values for uniformity.
//!
//! **How it runs.** One thread generates the words (the tested order is exactly the
//! [`WordSource`]'s), in segments of 2^22 words; for each segment the Hamming-weight tests on
//! bytes, on words and blocks, and the floating-point test run side by side on the rayon pool,
//! and the rank eliminations run there as their matrices fill. The generating thread is the
//! bottleneck on many cores: on the 16-core host of an H100, with a second run beside it, 2^36
//! Philox words (256 GiB) took 543 s, and 4096 interleaved streams reached 2^35 words in 298 s.

use std::collections::VecDeque;
use std::sync::mpsc;
use std::time::Instant;

use super::{TestResult, Verdict, WordSource, chi_square, chi_square_upper};

/// Words read when `--words` is not given: 2^30 (4 GiB; about 10 s on 2 cores for Philox).
pub const LONG_WORDS_DEFAULT: u64 = 1 << 30;
/// Fewest words (`--words`): 2^24 (64 MiB), the first length at which results are reported.
pub const LONG_WORDS_MIN: u64 = 1 << 24;
/// Most words: 2^40 (4 TiB).
pub const LONG_WORDS_MAX: u64 = 1 << 40;
/// Words per segment handed from the generating thread to the tests.
const SEGMENT: usize = 1 << 22;
/// Segments in flight between the generating thread and the tests.
const SEGMENTS_IN_FLIGHT: usize = 3;
/// Fewest blocks (letters) before a Hamming-weight statistic is reported: the rarest of the
/// 1024 five-letter words then expects about 30.
const MIN_LETTERS: u64 = 1 << 16;
/// Fewest words of one exponent before its fraction bits are tested (10 per cell).
const FPF_MIN_PER_EXPONENT: u64 = 2560;
/// Exponents (leading zeros) tested one by one; words with more leading zeros form one tail
/// class.
const FPF_EXPONENTS: usize = 24;
/// Matrices up to this side are eliminated among the streaming tests; larger ones on threads
/// of their own.
const SMALL_MATRIX: usize = 1024;
/// Larger matrices being eliminated at once; the next waits for the oldest.
const LARGE_IN_FLIGHT: usize = 4;

/// The results at one length.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Checkpoint {
    /// Bytes tested (4 per word).
    pub bytes: u64,
    /// Every statistic available at this length.
    pub tests: Vec<TestResult>,
}

impl Checkpoint {
    /// The statistics that failed.
    pub fn failed(&self) -> impl Iterator<Item = &TestResult> {
        self.tests.iter().filter(|t| t.verdict == Verdict::Fail)
    }

    /// The statistic with the most extreme p-value (nearest 0 or 1).
    pub fn worst(&self) -> Option<&TestResult> {
        self.tests.iter().min_by(|a, b| extremity(a).total_cmp(&extremity(b)))
    }
}

fn extremity(t: &TestResult) -> f64 {
    if t.p_value.is_nan() {
        -1.0
    } else if t.one_sided {
        t.p_value
    } else {
        t.p_value.min(1.0 - t.p_value)
    }
}

/// Run the long battery on `words` words of `src`. At every doubling `progress` gets the
/// checkpoint as it stands then: the streaming statistics, and the rank statistics of the
/// matrices already eliminated. Returns the checkpoints (the last one at `words`), each with
/// the rank statistics of every matrix within its length.
pub fn run(mut src: WordSource, words: u64, progress: &mut dyn FnMut(&Checkpoint, f64)) -> Vec<Checkpoint> {
    let start = Instant::now();
    let mut bytes_test = ByteWeights::new();
    let mut blocks_test = BlockWeights::new(words);
    let mut fpf = Fpf::default();
    let mut ranks = Ranks::new(words);
    let mut rank_results = Vec::new();
    let mut streaming_checkpoints: Vec<(u64, Vec<TestResult>)> = Vec::new();

    let (full_tx, full_rx) = mpsc::sync_channel::<Vec<u32>>(SEGMENTS_IN_FLIGHT);
    let (empty_tx, empty_rx) = mpsc::channel::<Vec<u32>>();
    for _ in 0..SEGMENTS_IN_FLIGHT + 1 {
        empty_tx.send(vec![0u32; SEGMENT]).expect("receiver alive");
    }
    // The generator on a thread of its own; the tests on this thread through the rayon pool
    // (this thread is not one of the pool's, so it only waits while the pool runs them); each
    // large matrix's elimination on a thread of its own, so that a minute-long elimination
    // never holds up the streaming tests, and at most `LARGE_IN_FLIGHT` of them at a time, so
    // that matrices cannot pile up in memory on a busy machine.
    std::thread::scope(|threads| {
        threads.spawn(move || {
            let mut left = words;
            while left > 0 {
                let Ok(mut buf) = empty_rx.recv() else { return };
                let k = (SEGMENT as u64).min(left) as usize;
                buf.resize(k, 0);
                src.fill(&mut buf);
                left -= k as u64;
                if full_tx.send(buf).is_err() {
                    return;
                }
            }
        });
        let mut large_running: VecDeque<std::thread::ScopedJoinHandle<'_, RankResult>> = VecDeque::new();
        let mut done = 0u64;
        let mut next_checkpoint = LONG_WORDS_MIN;
        for seg in full_rx.iter() {
            let (mut small, mut large) = (Vec::new(), Vec::new());
            ranks.feed(&seg, done, |job| if job.size.n <= SMALL_MATRIX { small.push(job) } else { large.push(job) });
            for job in large {
                while large_running.len() >= LARGE_IN_FLIGHT {
                    let oldest = large_running.pop_front().expect("not empty");
                    rank_results.push(oldest.join().expect("an elimination does not panic"));
                }
                large_running.push_back(threads.spawn(move || job.eliminate()));
            }
            let (_, (_, small_results)) = rayon::join(
                || bytes_test.feed(&seg),
                || {
                    rayon::join(
                        || rayon::join(|| blocks_test.feed(&seg), || fpf.feed(&seg)),
                        || small.into_iter().map(RankJob::eliminate).collect::<Vec<_>>(),
                    )
                },
            );
            rank_results.extend(small_results);
            done += seg.len() as u64;
            let _ = empty_tx.send(seg);
            if done == next_checkpoint || done == words {
                while large_running.front().is_some_and(|h| h.is_finished()) {
                    let finished = large_running.pop_front().expect("not empty");
                    rank_results.push(finished.join().expect("an elimination does not panic"));
                }
                let mut tests = bytes_test.results();
                tests.extend(blocks_test.results());
                tests.extend(fpf.results());
                let mut so_far = Checkpoint { bytes: 4 * done, tests: tests.clone() };
                so_far.tests.extend(Ranks::results(&rank_results, done));
                progress(&so_far, start.elapsed().as_secs_f64());
                streaming_checkpoints.push((done, tests));
                while next_checkpoint <= done {
                    next_checkpoint *= 2;
                }
            }
        }
        for h in large_running {
            rank_results.push(h.join().expect("an elimination does not panic"));
        }
    });
    streaming_checkpoints
        .into_iter()
        .map(|(done, mut tests)| {
            tests.extend(Ranks::results(&rank_results, done));
            Checkpoint { bytes: 4 * done, tests }
        })
        .collect()
}

impl Checkpoint {
    /// One line: the length, how many statistics, how many failed, the most extreme p-value.
    pub fn summary(&self) -> String {
        let worst = self.worst();
        format!(
            "{} bytes: {} statistics, {} failed, most extreme p {} ({})",
            length_name(self.bytes),
            self.tests.len(),
            self.failed().count(),
            worst.map_or("-".into(), |t| super::format_p(t.p_value)),
            worst.map_or("-", |t| &t.name),
        )
    }
}

/// `2^33` for a power of two, else the number.
pub fn length_name(bytes: u64) -> String {
    if bytes.is_power_of_two() { format!("2^{}", bytes.trailing_zeros()) } else { bytes.to_string() }
}

// ------------------------------------------------------------------------------------------------
// Hamming weights in overlapping 5-letter words
// ------------------------------------------------------------------------------------------------

/// One stream of letters: weights of blocks of `bits` bits, each turned into a letter
/// `(w ≥ t0) + (w ≥ t1) + (w ≥ t2)`, and the overlapping 5-letter words counted.
struct Letters {
    name: String,
    thresholds: [u32; 3],
    probs: [f64; 4],
    /// The last five letters, two bits each, the newest lowest.
    window: u32,
    seen: u64,
    counts: Vec<u64>,
}

impl Letters {
    fn new(name: String, bits: u32) -> Self {
        let thresholds = letter_thresholds(bits);
        let cdf = |t: u32| binomial_half_cdf_below(u64::from(bits), u64::from(t));
        let (c0, c1, c2) = (cdf(thresholds[0]), cdf(thresholds[1]), cdf(thresholds[2]));
        let probs = [c0, c1 - c0, c2 - c1, 1.0 - c2];
        Self { name, thresholds, probs, window: 0, seen: 0, counts: vec![0; 1024] }
    }

    fn push_letter(&mut self, letter: u32) {
        self.window = ((self.window << 2) | letter) & 1023;
        self.seen += 1;
        if self.seen >= 5 {
            self.counts[self.window as usize] += 1;
        }
    }

    /// The letters of `weights`, in order.
    fn push_weights(&mut self, weights: &[u32]) {
        let mut rest = weights;
        let t = self.thresholds;
        while self.seen < 4 {
            let Some((&w, tail)) = rest.split_first() else { return };
            self.push_letter(letter(t, w));
            rest = tail;
        }
        let quads = rest.chunks_exact(4);
        let tail = quads.remainder();
        let mut window = self.window;
        let counts: &mut [u64; 1024] = (&mut self.counts[..]).try_into().expect("1024 counts");
        for q in quads {
            let code = letter(t, q[0]) << 6 | letter(t, q[1]) << 4 | letter(t, q[2]) << 2 | letter(t, q[3]);
            window = add_four_letters(counts, window, code);
        }
        self.window = window & 1023;
        self.seen += (rest.len() - tail.len()) as u64;
        for &w in tail {
            self.push_letter(letter(t, w));
        }
    }

    /// `Q5 − Q4` and its p-value, once [`MIN_LETTERS`] letters have been read.
    fn result(&self) -> Option<TestResult> {
        if self.seen < MIN_LETTERS {
            return None;
        }
        let (x, df) = q5_minus_q4(&self.counts, self.window, self.seen, &self.probs);
        Some(TestResult::new(self.name.clone(), x, chi_square_upper(x, df)))
    }
}

/// The letter of weight `w` under `thresholds`: how many of them it reaches.
#[inline(always)]
fn letter(thresholds: [u32; 3], w: u32) -> u32 {
    let [t0, t1, t2] = thresholds;
    u32::from(w >= t0) + u32::from(w >= t1) + u32::from(w >= t2)
}

/// Append four letters (`code`: two bits each, the oldest highest) to `window` (at least four
/// letters already seen) and count the four 5-letter words that end in them. Returns the new
/// window (only its low 10 bits matter). The four counts are independent of each other, which
/// is what makes this faster than four single steps.
#[inline(always)]
fn add_four_letters(counts: &mut [u64; 1024], window: u32, code: u32) -> u32 {
    let window = (window << 8) | code;
    counts[((window >> 6) & 1023) as usize] += 1;
    counts[((window >> 4) & 1023) as usize] += 1;
    counts[((window >> 2) & 1023) as usize] += 1;
    counts[(window & 1023) as usize] += 1;
    window
}

/// Marsaglia's `Q5 − Q4` for `seen` letters with probabilities `probs`, `counts5` counting
/// the overlapping 5-letter words (two bits a letter, the first letter highest) and `last` the
/// last five letters. The 4-letter words are the 5-letter words without their last letter, and
/// the last four letters. Returns the statistic and its degrees of freedom.
fn q5_minus_q4(counts5: &[u64], last: u32, seen: u64, probs: &[f64; 4]) -> (f64, f64) {
    let prob = |word: usize, letters: u32| -> f64 { (0..letters).map(|i| probs[(word >> (2 * i)) & 3]).product() };
    let mut counts4 = vec![0u64; 256];
    for (w, &c) in counts5.iter().enumerate() {
        counts4[w >> 2] += c;
    }
    counts4[(last & 255) as usize] += 1;
    let pearson = |counts: &[u64], letters: u32, windows: f64| -> f64 {
        counts
            .iter()
            .enumerate()
            .map(|(w, &o)| {
                let e = windows * prob(w, letters);
                (o as f64 - e) * (o as f64 - e) / e
            })
            .sum()
    };
    let q5 = pearson(counts5, 5, (seen - 4) as f64);
    let q4 = pearson(&counts4, 4, (seen - 3) as f64);
    (q5 - q4, 768.0)
}

/// Thresholds of the four letters for the weight `w` of `bits` fair bits, mean `m = bits / 2`:
/// `w < m − d`, `m − d ≤ w < m`, `m ≤ w < m + d`, `w ≥ m + d`, with `d` about 0.67 standard
/// deviations (at least 1), so that the letters are about equally likely (bytes: 37, 56, 70
/// and 93 in 256).
fn letter_thresholds(bits: u32) -> [u32; 3] {
    let half = bits / 2;
    let d = ((0.6745 * f64::from(bits).sqrt() / 2.0).round() as u32).max(1);
    [half - d, half, half + d]
}

/// `P(W < t)` for `W` binomial with `n` trials of probability 1/2: the terms within 40 standard
/// deviations of the mean (the rest is below 1e-300), each relative to the mode's by the ratio
/// of neighbouring terms, divided by their sum (so no factorial is ever formed).
fn binomial_half_cdf_below(n: u64, t: u64) -> f64 {
    let sd = (n as f64).sqrt() / 2.0;
    let lo = ((n / 2) as f64 - 40.0 * sd).max(0.0) as u64;
    let hi = (((n / 2) as f64 + 40.0 * sd) as u64).min(n);
    // Terms relative to the one at the mode, by the ratio pmf(k+1)/pmf(k) = (n-k)/(k+1),
    // outwards from the mode in both directions.
    let mode = n / 2;
    let mut below = 0.0;
    let mut total = 1.0; // the mode's term
    if t > mode {
        below += 1.0;
    }
    let mut term = 1.0;
    for k in (lo..mode).rev() {
        term *= (k + 1) as f64 / (n - k) as f64;
        total += term;
        if k < t {
            below += term;
        }
    }
    term = 1.0;
    for k in mode + 1..=hi {
        term *= (n - k + 1) as f64 / k as f64;
        total += term;
        if k < t {
            below += term;
        }
    }
    below / total
}

/// The Hamming-weight test of bytes (the first byte of a word, its lowest, the oldest letter).
struct ByteWeights {
    letters: Letters,
    /// Each byte value's letter.
    byte_letter: [u8; 256],
}

impl ByteWeights {
    fn new() -> Self {
        let letters = Letters::new("hamming-bytes".into(), 8);
        let byte_letter = std::array::from_fn(|b| letter(letters.thresholds, (b as u32).count_ones()) as u8);
        Self { letters, byte_letter }
    }

    fn feed(&mut self, words: &[u32]) {
        let letters = &mut self.letters;
        let mut rest = words;
        // Until four letters have been read, one letter at a time; then a word's four letters
        // at once: the four 5-letter words ending in its bytes are independent counts.
        while letters.seen < 4 {
            let Some((&w, tail)) = rest.split_first() else { return };
            for b in w.to_le_bytes() {
                letters.push_letter(u32::from(self.byte_letter[b as usize]));
            }
            rest = tail;
        }
        let l = |b: u32| u32::from(self.byte_letter[(b & 0xFF) as usize]);
        let mut window = letters.window;
        let counts: &mut [u64; 1024] = (&mut letters.counts[..]).try_into().expect("1024 counts");
        for &w in rest {
            window = add_four_letters(counts, window, l(w) << 6 | l(w >> 8) << 4 | l(w >> 16) << 2 | l(w >> 24));
        }
        letters.window = window & 1023;
        letters.seen += 4 * rest.len() as u64;
    }

    fn results(&self) -> Vec<TestResult> {
        self.letters.result().into_iter().collect()
    }
}

/// The Hamming-weight tests of words and of blocks of `2^j` words.
struct BlockWeights {
    /// Level `j` has blocks of `2^j` words.
    levels: Vec<Letters>,
    /// The weight of the first block of each level's pending pair.
    pending: Vec<Option<u32>>,
    /// Buffers of block weights (reused from segment to segment).
    scratch: [Vec<u32>; 2],
}

impl BlockWeights {
    /// Levels up to blocks of `2^j` words with at least [`MIN_LETTERS`] blocks in `words`.
    fn new(words: u64) -> Self {
        let top = (words / MIN_LETTERS).max(1).ilog2();
        let levels = (0..=top)
            .map(|j| {
                let name = if j == 0 { "hamming-words".to_string() } else { format!("hamming-blocks-of-2^{j}-words") };
                Letters::new(name, 32 << j)
            })
            .collect();
        Self { levels, pending: vec![None; top as usize + 1], scratch: Default::default() }
    }

    fn feed(&mut self, words: &[u32]) {
        // Level by level: the weights of this level's blocks, then their sums in pairs for the
        // next (a block left without its partner waits in `pending` for the next segment).
        let mut sums = std::mem::take(&mut self.scratch[0]);
        let mut next = std::mem::take(&mut self.scratch[1]);
        sums.clear();
        sums.extend(words.iter().map(|w| w.count_ones()));
        let top = self.levels.len() - 1;
        for (j, level) in self.levels.iter_mut().enumerate() {
            level.push_weights(&sums);
            if j == top {
                break;
            }
            next.clear();
            let mut pairs = &sums[..];
            if let Some(p) = self.pending[j + 1].take() {
                match pairs.split_first() {
                    Some((&s, tail)) => {
                        next.push(p + s);
                        pairs = tail;
                    }
                    None => self.pending[j + 1] = Some(p),
                }
            }
            let whole = pairs.chunks_exact(2);
            if let [last] = whole.remainder() {
                self.pending[j + 1] = Some(*last);
            }
            next.extend(whole.map(|p| p[0] + p[1]));
            std::mem::swap(&mut sums, &mut next);
        }
        self.scratch = [sums, next];
    }

    fn results(&self) -> Vec<TestResult> {
        self.levels.iter().filter_map(Letters::result).collect()
    }
}

// ------------------------------------------------------------------------------------------------
// Floating-point frequency
// ------------------------------------------------------------------------------------------------

/// Counts by exponent (leading zeros, `0 .. FPF_EXPONENTS`, then the tail) and the 8 fraction
/// bits after the leading one.
struct Fpf {
    counts: Vec<u64>,
}

impl Default for Fpf {
    fn default() -> Self {
        Self { counts: vec![0; (FPF_EXPONENTS + 1) * 256] }
    }
}

impl Fpf {
    fn feed(&mut self, words: &[u32]) {
        for &w in words {
            let z = w.leading_zeros() as usize;
            let cell = if z < FPF_EXPONENTS { z * 256 + ((w << z << 1) >> 24) as usize } else { FPF_EXPONENTS * 256 };
            self.counts[cell] += 1;
        }
    }

    fn results(&self) -> Vec<TestResult> {
        let by_exponent: Vec<u64> = self.counts.chunks(256).map(|c| c.iter().sum()).collect();
        let mut probs: Vec<f64> = (0..FPF_EXPONENTS).map(|z| (-(z as f64) - 1.0).exp2()).collect();
        probs.push((-(FPF_EXPONENTS as f64)).exp2());
        let (x, df) = chi_square(&by_exponent, &probs);
        let exponent = TestResult::new("fpf-exponents", x, chi_square_upper(x, df as f64));
        let (mut x, mut df) = (0.0, 0.0);
        for (z, cells) in self.counts.chunks(256).take(FPF_EXPONENTS).enumerate() {
            if by_exponent[z] < FPF_MIN_PER_EXPONENT {
                continue;
            }
            let e = by_exponent[z] as f64 / 256.0;
            x += cells.iter().map(|&o| (o as f64 - e) * (o as f64 - e) / e).sum::<f64>();
            df += 255.0;
        }
        vec![exponent, TestResult::new("fpf-fractions", x, chi_square_upper(x, df))]
    }
}

// ------------------------------------------------------------------------------------------------
// Binary ranks of large matrices
// ------------------------------------------------------------------------------------------------

/// Which bits of each word a rank matrix's rows take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RowBits {
    /// All 32.
    Full,
    /// The low byte.
    Low8,
    /// The lowest bit.
    Low1,
}

impl RowBits {
    fn per_word(self) -> usize {
        match self {
            RowBits::Full => 32,
            RowBits::Low8 => 8,
            RowBits::Low1 => 1,
        }
    }
}

/// One family of rank tests: `n × n` matrices whose rows are the chosen bits of consecutive
/// words, one matrix at the start of every `2^period_log2` words.
#[derive(Clone, Copy, Debug)]
struct RankSize {
    n: usize,
    bits: RowBits,
    period_log2: u32,
}

impl RankSize {
    fn words(self) -> u64 {
        (self.n * self.n / self.bits.per_word()) as u64
    }

    fn name(self) -> String {
        let bits = match self.bits {
            RowBits::Full => "",
            RowBits::Low8 => "low8-",
            RowBits::Low1 => "bit0-",
        };
        format!("binary-rank-{bits}{}x{}", self.n, self.n)
    }
}

/// The rank families. Eliminating an `n × n` matrix costs about `n^3 / 384` 64-bit operations;
/// the periods keep each family under about one operation per word tested.
const RANK_SIZES: [RankSize; 9] = [
    RankSize { n: 256, bits: RowBits::Full, period_log2: 18 },
    RankSize { n: 256, bits: RowBits::Low8, period_log2: 18 },
    RankSize { n: 1024, bits: RowBits::Full, period_log2: 22 },
    RankSize { n: 1024, bits: RowBits::Low8, period_log2: 22 },
    RankSize { n: 1024, bits: RowBits::Low1, period_log2: 22 },
    RankSize { n: 4096, bits: RowBits::Full, period_log2: 28 },
    RankSize { n: 4096, bits: RowBits::Low8, period_log2: 28 },
    RankSize { n: 4096, bits: RowBits::Low1, period_log2: 28 },
    RankSize { n: 20480, bits: RowBits::Full, period_log2: 35 },
];

/// A matrix being filled, or ready.
struct RankJob {
    family: usize,
    /// Words tested up to the end of this matrix.
    end: u64,
    size: RankSize,
    words: Vec<u32>,
}

/// One matrix's result.
struct RankResult {
    family: usize,
    end: u64,
    deficiency: usize,
}

impl RankJob {
    fn eliminate(mut self) -> RankResult {
        let n = self.size.n;
        let words = std::mem::take(&mut self.words);
        let pack = |ws: &[u32], bits: u32| {
            let mask = (1u64 << bits) - 1;
            ws.iter().enumerate().fold(0u64, |r, (j, &w)| r | (u64::from(w) & mask) << (bits as usize * j))
        };
        let rows: Vec<u64> = match self.size.bits {
            RowBits::Full => words.chunks_exact(2).map(|ws| pack(ws, 32)).collect(),
            RowBits::Low8 => words.chunks_exact(8).map(|ws| pack(ws, 8)).collect(),
            RowBits::Low1 => words.chunks_exact(64).map(|ws| pack(ws, 1)).collect(),
        };
        drop(words);
        let rank = gf2_rank_rows(rows, n);
        RankResult { family: self.family, end: self.end, deficiency: n - rank }
    }
}

/// The GF(2) rank of the `n × n` matrix whose row `i` is `rows[i * n/64 .. (i+1) * n/64]`,
/// by elimination on the calling thread. (Handing the row reductions to the rayon pool starved
/// them behind the streaming tests on a busy machine: the matrices piled up in memory.)
fn gf2_rank_rows(mut rows: Vec<u64>, n: usize) -> usize {
    let wpr = n / 64;
    let mut rank = 0;
    for col in 0..n {
        let (cw, bit) = (col / 64, 1u64 << (col % 64));
        let Some(pivot) = (rank..n).find(|&i| rows[i * wpr + cw] & bit != 0) else { continue };
        if pivot != rank {
            for k in cw..wpr {
                rows.swap(rank * wpr + k, pivot * wpr + k);
            }
        }
        let (above, below) = rows.split_at_mut((rank + 1) * wpr);
        let p = &above[rank * wpr + cw..(rank + 1) * wpr];
        for row in below.chunks_exact_mut(wpr) {
            if row[cw] & bit != 0 {
                for (r, &q) in row[cw..].iter_mut().zip(p) {
                    *r ^= q;
                }
            }
        }
        rank += 1;
    }
    rank
}

/// `P(n − rank ≥ d)` for a large square matrix of fair bits: with `P(n − rank = j) =
/// 2^{−j²} ∏_{i>j} (1 − 2^{−i}) / ∏_{i≤j} (1 − 2^{−i})` (the limit as `n` grows, within 2^{−n}).
fn deficiency_at_least(d: usize) -> f64 {
    let product = |from: usize, to: usize| (from..=to).map(|i| 1.0 - (-(i as f64)).exp2()).product::<f64>();
    let exactly = |j: usize| (-((j * j) as f64)).exp2() * product(j + 1, 200) / product(1, j);
    (d..d + 40).map(exactly).sum::<f64>().min(1.0)
}

/// The rank families run in a stream, and the matrices being filled.
struct Ranks {
    families: Vec<Family>,
}

/// A rank family in a run.
struct Family {
    /// Its index in [`RANK_SIZES`].
    index: usize,
    size: RankSize,
    /// Where its next matrix starts.
    next: u64,
    /// The matrix being filled.
    filling: Option<RankJob>,
}

impl Ranks {
    /// The families whose period fits in `words`.
    fn new(words: u64) -> Self {
        let families = RANK_SIZES
            .iter()
            .enumerate()
            .filter(|(_, s)| words >> s.period_log2 > 0)
            .map(|(index, &size)| Family { index, size, next: 0, filling: None })
            .collect();
        Self { families }
    }

    /// Take the words of `seg` (starting at word `offset` of the run) that belong to matrices;
    /// hand each full matrix to `ready`.
    fn feed(&mut self, seg: &[u32], offset: u64, mut ready: impl FnMut(RankJob)) {
        let seg_end = offset + seg.len() as u64;
        for Family { index, size, next, filling: slot } in &mut self.families {
            let (family, size) = (*index, *size);
            let period = 1u64 << size.period_log2;
            let len = size.words();
            loop {
                // A matrix under way from an earlier segment, or the next one to start.
                let job = match slot {
                    Some(job) => job,
                    None => {
                        let start = *next;
                        if start >= seg_end {
                            break;
                        }
                        *next += period;
                        slot.insert(RankJob { family, end: start + len, size, words: Vec::with_capacity(len as usize) })
                    }
                };
                let begin = job.end - len + job.words.len() as u64;
                let take_to = job.end.min(seg_end);
                job.words.extend_from_slice(&seg[(begin - offset) as usize..(take_to - offset) as usize]);
                if take_to < job.end {
                    break;
                }
                ready(slot.take().expect("a job"));
            }
        }
    }

    /// The statistic of each family over the matrices that end within the first `words` words:
    /// with many matrices, a chi-square over the deficiencies 0, 1, 2 and 3 or more; with few,
    /// the chance that the largest deficiency seen is reached or exceeded (one-sided).
    fn results(results: &[RankResult], words: u64) -> Vec<TestResult> {
        let mut out = Vec::new();
        for (family, size) in RANK_SIZES.iter().enumerate() {
            let defs: Vec<usize> =
                results.iter().filter(|r| r.family == family && r.end <= words).map(|r| r.deficiency).collect();
            if defs.is_empty() {
                continue;
            }
            let k = defs.len() as f64;
            let q3 = deficiency_at_least(3);
            if k * q3 >= 5.0 {
                let mut counts = [0u64; 4];
                for &d in &defs {
                    counts[d.min(3)] += 1;
                }
                let probs = [
                    1.0 - deficiency_at_least(1),
                    deficiency_at_least(1) - deficiency_at_least(2),
                    deficiency_at_least(2) - q3,
                    q3,
                ];
                let (x, df) = chi_square(&counts, &probs);
                out.push(TestResult::new(size.name(), x, chi_square_upper(x, df as f64)));
            } else {
                let dmax = *defs.iter().max().expect("not empty");
                let q = deficiency_at_least(dmax);
                let p = -(k * (-q).ln_1p()).exp_m1();
                out.push(TestResult::one_sided(size.name(), dmax as f64, p));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generators::GeneratorKind;

    #[test]
    fn binomial_cdf_matches_direct_sums() {
        // n = 8: P(W < 3) = (1 + 8 + 28) / 256.
        assert!((binomial_half_cdf_below(8, 3) - 37.0 / 256.0).abs() < 1e-15);
        // n = 32, P(W < 16): (1 - P(16)) / 2, P(16) = C(32,16) / 2^32.
        let p16 = 601_080_390.0 / 2f64.powi(32);
        assert!((binomial_half_cdf_below(32, 16) - (1.0 - p16) / 2.0).abs() < 1e-14);
        // Large n: symmetric about the mean.
        let n = 32u64 << 20;
        let below_mean = binomial_half_cdf_below(n, n / 2);
        let above = 1.0 - binomial_half_cdf_below(n, n / 2 + 1);
        assert!((below_mean - above).abs() < 1e-12, "{below_mean} {above}");
    }

    #[test]
    fn letters_are_near_quartiles() {
        for bits in [8u32, 32, 64, 1024, 32 << 20] {
            let l = Letters::new("x".into(), bits);
            assert!((l.probs.iter().sum::<f64>() - 1.0).abs() < 1e-12);
            for p in l.probs {
                assert!((0.1..0.4).contains(&p), "{bits} bits: {:?}", l.probs);
            }
        }
    }

    #[test]
    fn rank_deficiency_law() {
        // Known limits: P(full rank) = 0.288788..., P(deficiency 1) = 0.577576...
        assert!((1.0 - deficiency_at_least(1) - 0.288_788_095).abs() < 1e-8);
        assert!((deficiency_at_least(1) - deficiency_at_least(2) - 0.577_576_190).abs() < 1e-8);
        assert!(deficiency_at_least(40) == 0.0);
        // A matrix of rank n/2 and the identity.
        let n = 256;
        let wpr = n / 64;
        let mut rows = vec![0u64; n * wpr];
        for i in 0..n {
            rows[i * wpr + i / 64] = 1 << (i % 64);
        }
        assert_eq!(gf2_rank_rows(rows.clone(), n), n);
        for i in (0..n).step_by(2) {
            rows.copy_within(i * wpr..(i + 1) * wpr, (i + 1) * wpr);
        }
        assert_eq!(gf2_rank_rows(rows, n), n / 2);
    }

    #[test]
    fn rank_matrices_are_cut_at_their_periods_across_segments() {
        // Feed in odd-sized pieces: the matrices must hold exactly the words at their offsets.
        let words = 1u64 << 23;
        let data: Vec<u32> = (0..words as u32).collect();
        let mut ranks = Ranks::new(words);
        let mut jobs = Vec::new();
        let mut offset = 0u64;
        for piece in data.chunks(1_000_003) {
            ranks.feed(piece, offset, |j| jobs.push(j));
            offset += piece.len() as u64;
        }
        for j in &jobs {
            let first = j.end - j.size.words();
            assert_eq!(first % (1 << j.size.period_log2), 0);
            assert!(j.words.iter().enumerate().all(|(i, &w)| u64::from(w) == first + i as u64));
        }
        // 256 x 256: 32 matrices of each kind in 2^23 words; 1024: 2 of each (the bit-0 ones
        // 2^20 words long).
        let count = |n, bits| jobs.iter().filter(|j| j.size.n == n && j.size.bits == bits).count();
        let counts = [
            count(256, RowBits::Full),
            count(256, RowBits::Low8),
            count(1024, RowBits::Full),
            count(1024, RowBits::Low8),
            count(1024, RowBits::Low1),
        ];
        assert_eq!(counts, [32, 32, 2, 2, 2]);
    }

    /// The statistics' laws: on independent Philox streams the p-values of every statistic must
    /// look uniform (a Kolmogorov–Smirnov test over the replicates, failing at p < 1e-4).
    #[test]
    fn p_values_are_uniform_on_a_good_generator() {
        const REPLICATES: u64 = 48;
        let words = 1u64 << 21;
        let mut by_name: std::collections::BTreeMap<String, Vec<f64>> = Default::default();
        for r in 0..REPLICATES {
            let src = crate::quality::word_source(GeneratorKind::Philox4x32x10, 1000 + r, 1).expect("source");
            let mut bytes_test = ByteWeights::new();
            let mut blocks_test = BlockWeights::new(words);
            let mut fpf = Fpf::default();
            let mut src = src;
            let mut buf = vec![0u32; words as usize];
            src.fill(&mut buf);
            bytes_test.feed(&buf);
            blocks_test.feed(&buf);
            fpf.feed(&buf);
            for t in bytes_test.results().into_iter().chain(blocks_test.results()).chain(fpf.results()) {
                by_name.entry(t.name).or_default().push(t.p_value);
            }
        }
        assert!(by_name.len() >= 5, "{:?}", by_name.keys());
        for (name, mut ps) in by_name {
            ps.sort_by(f64::total_cmp);
            let n = ps.len() as f64;
            let d = ps
                .iter()
                .enumerate()
                .map(|(i, &p)| (p - i as f64 / n).abs().max(((i + 1) as f64 / n - p).abs()))
                .fold(0.0, f64::max);
            // Kolmogorov's limit law: P(sqrt(n) D > x) ≈ 2 Σ (-1)^{k-1} exp(-2 k² x²).
            let x = d * n.sqrt();
            let p = (1..100).map(|k| 2.0 * (-1f64).powi(k - 1) * (-2.0 * (k * k) as f64 * x * x).exp()).sum::<f64>();
            assert!(p > 1e-4, "{name}: KS D = {d:.3} over {n} replicates, p = {p:.2e}: {ps:?}");
        }
    }

    #[test]
    fn long_battery_passes_philox_and_fails_linear_and_lcg_generators() {
        let run_on = |g| {
            let src = crate::quality::word_source(g, 1, 1).expect("source");
            run(src, LONG_WORDS_MIN, &mut |_, _| {})
        };
        let good = run_on(GeneratorKind::Philox4x32x10);
        assert_eq!(good.len(), 1);
        assert_eq!(good[0].failed().count(), 0, "{:?}", good[0].tests);
        let names: Vec<&str> = good[0].tests.iter().map(|t| t.name.as_str()).collect();
        for expected in ["hamming-bytes", "hamming-words", "fpf-exponents", "fpf-fractions", "binary-rank-256x256"] {
            assert!(names.contains(&expected), "{expected} missing from {names:?}");
        }
        let taus = run_on(GeneratorKind::Taus88);
        let failed: Vec<&str> = taus[0].failed().map(|t| t.name.as_str()).collect();
        assert!(failed.contains(&"binary-rank-256x256"), "{failed:?}");
        let lcg = run_on(GeneratorKind::Lcg32);
        assert!(lcg[0].failed().count() >= 3, "{:?}", lcg[0].tests);
    }
}
