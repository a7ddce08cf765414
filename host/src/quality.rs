//! Generator quality: warpmc's own quick battery of statistical tests, its long battery of
//! PractRand's kind ([`long`]: up to 2^40 words, judged at every doubling), and the external
//! batteries (TestU01's SmallCrush, Crush and BigCrush; dieharder) fed through a pipe.
//!
//! [`run`] takes a [`QualitySpec`] (generator, seed, battery, interleave) and returns a
//! [`QualityReport`]: one [`TestResult`] per statistic, with its p-value and a [`Verdict`].
//!
//! # The words tested
//!
//! The words come from the kernel crate's generators on the CPU ([`word_source`]), the same words
//! a GPU run draws. With `interleave = 1` they are stream 0 of the seed. With `interleave = K > 1`
//! they are streams `0 .. K` of the seed taken one word of each in turn: word `i` of the tested
//! sequence is word `i / K` of stream `i % K`. That is the order in which `K` threads of a GPU run
//! consume their streams, so a defect that only shows across streams (streams that start
//! correlated, or overlap) shows in every test. Each test takes fresh words from the sequence, in
//! the order listed below (the inter-stream tests use their own source of 64 interleaved streams).
//!
//! # Verdicts
//!
//! Every p-value is the probability, under the hypothesis of independent uniform words, of a
//! statistic at least as large as the one observed (for a z score, the upper tail `P(Z >= z)`).
//! Values near 1 mean "too good to be true" (a too-uniform histogram, too few collisions) and
//! are as damning as values near 0, so the thresholds are symmetric:
//!
//! - [`Verdict::Fail`]: `p < 1e-10` or `p > 1 - 1e-10`. TestU01's guide ("Rejecting H0") calls a
//!   p-value this close to 0 or 1 an obvious failure;
//! - [`Verdict::Suspect`]: otherwise outside `[1e-4, 1 - 1e-4]`: not a clear failure, to be
//!   rerun with another seed or more words until the failure is obvious or the suspicion goes
//!   away (TestU01's guide's advice for its example of a suspicious p = 0.0005);
//! - [`Verdict::Pass`]: in `[1e-4, 1 - 1e-4]`.
//!
//! With the quick battery's 13 statistics a perfect generator draws a Suspect with probability
//! about 0.26 %. TestU01's own battery summary lists every p-value outside `[0.001, 0.999]`
//! (its `gofw_Suspectp`), a wider net: a test it lists can still be a Pass here.
//! [`QualityReport::passed`] is "no test failed".
//!
//! # The quick battery
//!
//! 4.875 × 2^24 words (78 Mi words, 312 MiB) in all, on one core in release: about a second for
//! the fast generators (philox4x32-10: 1.0 s on the 2-core development machine), up to 6 s for
//! the 32-orbit GM generators.
//! `words` ([`QualitySpec::words`], at least 2^20) replaces the per-test size [`QUICK_WORDS`]
//! (2^24); the repeated tests scale with it, but never below the repetitions their chi-square
//! needs. Each chi-square merges neighbouring categories until every one expects at least 5
//! observations.
//!
//! 1. **`byte-frequency`**, **`high-byte-frequency`**, **`low-byte-frequency`** (one pass over
//!    2^24 words): chi-square of the 256 byte values, counted over all four bytes of each word,
//!    over the top byte only and over the low byte only (255 degrees of freedom). Detects biased
//!    bits and missing values; the low byte of a power-of-two LCG or a counter runs through a
//!    full period and comes out exactly uniform, which fails as "too good" (p = 1).
//! 2. **`high-byte-pairs`**, **`low-byte-pairs`** (2^24 words): chi-square of the 65536 pairs
//!    `(byte of w[2i], byte of w[2i+1])` of non-overlapping pairs, for the top and the low byte
//!    (65535 degrees of freedom). Detects dependence between consecutive words: a short-period
//!    low byte can only produce a few of the 65536 pairs.
//! 3. **`serial-correlation-lag1`** (2^24 words): `z = Σ x_i x_{i+1} / (sqrt(n - 1) σ²)` with
//!    `x = 2w + 1 - 2^32` (the word centred, exactly, in integers) and `σ² = (2^64 - 1) / 3` its
//!    variance; the products are uncorrelated under the hypothesis, so `z` is standard normal.
//!    Detects linear dependence between neighbours.
//! 4. **Birthday spacings** (Marsaglia): `m = 4096` birthdays in a year of `n = 2^32` days; sort
//!    them, take the `m` spacings between neighbours around the circle of the year, sort the
//!    spacings and count the collisions `J` (spacings equal to the previous one in sorted
//!    order). `J` is asymptotically Poisson with mean `λ = m (m - 1)² / (4n) ≈ m³ / (4n) = 4`
//!    (Marsaglia's `m³ / (4n)` is the first-order term). The test repeats this
//!    1024 times (scaled with `words`) and compares the total with Poisson(1024 λ). Three
//!    versions: **`birthday-spacings-32`** (a birthday is a whole word: 4 Mi words),
//!    **`birthday-spacings-high16x2`** and **`birthday-spacings-low16x2`** (a birthday is the
//!    top, or the low, 16 bits of two consecutive words: a point in two dimensions; 8 Mi words
//!    each). Detects lattice structure (LCGs) and short-period low bits.
//! 5. **`binary-rank-low8-128x128`** (1024 matrices, 2 Mi words): 128 × 128 matrices over
//!    GF(2), each row the low bytes of 16 consecutive words; chi-square of the ranks in the
//!    classes 128, 127, 126 and ≤ 125 against the exact probabilities for a random matrix,
//!    `P(rank r) = 2^{-(m-r)(n-r)} ∏_{i<r} (1 - 2^{i-m})(1 - 2^{i-n}) / (1 - 2^{i-r})`
//!    (0.2888, 0.5776, 0.1284, 0.0053). Detects low bits that are a GF(2)-linear function of a
//!    small state: a row is then a linear image of that state, so when the state has fewer than
//!    128 bits no matrix has full rank. Matrices must be larger than the state: the hybrid
//!    Tausworthe's low byte is taus88 (88 state bits, linear) XOR the low byte of an LCG (period
//!    256, so 16 distinct row patterns): its rows lie in a space of dimension at most 104, and
//!    every 128 × 128 matrix has rank ≤ 104. (A 32 × 32 or 64 × 64 rank test cannot see that.)
//! 6. **`linear-complexity-bit0`** (1024 blocks of 4096 bits, 4 Mi words): the linear
//!    complexity `L` (Berlekamp–Massey) of the lowest bit of 4096 consecutive words, per block;
//!    chi-square of `L - 2048` in the classes ≤ -3, -2, -1, 0, 1, 2, ≥ 3 against the exact
//!    distribution (a random sequence of even length `n` has complexity `L` with probability
//!    `2^{min(2n - 2L, 2L - 1) - n}`: 1/2 for `L = n/2`, 1/4 for `n/2 + 1`, 1/8 for `n/2 - 1`, ...).
//!    Detects a lowest bit produced by a short linear recurrence: its complexity is the
//!    recurrence's degree (taus88: 88, hybrid Tausworthe: at most 90, a power-of-two LCG: 2)
//!    instead of about 2048.
//! 7. **`interstream-correlation`**, **`interstream-hamming`** (64 streams × 2^16 words, 4 Mi
//!    words): streams 0 to 63 of the seed side by side; for each word index and each pair of
//!    neighbouring streams `k, k + 1`, the product of the centred words (a z score as in 3) and
//!    the number of differing bits `popcount(a ^ b)`, whose distribution is chi-square tested
//!    against Binomial(32, 1/2) (the XORs of neighbours are independent uniform words under the
//!    hypothesis). Detects streams that start correlated or are shifted copies of each other
//!    at a short distance.
//!
//! Statistics accumulate in integers (counts, the serial products in `i128`) and p-values are
//! computed in `f64` from the regularized incomplete gamma function written here (chi-square,
//! Poisson and, through `erfc(x) = Q(1/2, x²)`, normal tails).
//!
//! # External batteries
//!
//! `warpmc quality --generator philox4x32-10 --battery smallcrush` (or `crush`, `bigcrush`,
//! `dieharder`; `--seed`, `--interleave` as for the quick battery).
//!
//! `smallcrush`, `crush` and `bigcrush` (in one process, the default `--jobs 1`) stream the words
//! as raw little-endian `u32` into the stdin of `TestU01Drv --tests <Battery>` (crates.io crate `TestU01Drv`, which builds TestU01
//! 1.2.3); `dieharder` streams them into `dieharder -g 200 -a` (200: raw words on stdin). The
//! words are written from a thread until the program closes the pipe (the broken pipe is the
//! normal end). Every p-value in the program's output becomes a [`TestResult`] (TestU01 prints
//! two significant digits in its per-test details, `eps` for `p < 1e-300`, which is reported
//! as 0); [`QualityReport::external`] keeps the program's own summary (TestU01's "Summary
//! results" block, dieharder's whole table).
//!
//! **Test by test** (`--jobs N`, `--tests LIST`, `--resume`): a BigCrush is about three hours
//! of one core, and one process cannot use more. With `--jobs N > 1` each test of the battery
//! runs in its own process of `warpmc-testu01` (warpmc's own driver, `xtask/src/testu01_tests.c`,
//! built on TestU01's `bbattery_Repeat*` entry points), `N` at a time, each fed its own copy of
//! the tested words from their first word; the driver prints every p-value with 17 significant
//! digits (TestU01's details print two). What changes against one process: in TestU01's own run
//! test `k` reads the words after those of tests `1 .. k-1`; here every test reads the stream
//! from its start, so the tests see overlapping stretches of it instead of disjoint ones. Each
//! p-value is as valid as before (every test still reads one unbroken run of the tested words);
//! the tests are no longer independent of each other, which the verdicts do not assume. Test 1
//! reads the same words both ways, and a test checks that its p-value agrees. `--tests 1-50,77`
//! runs only some tests; with `--log FILE` each test's whole output is appended to the log when
//! it ends, and `--resume` takes the tests an earlier, stopped run of the same generator, seed,
//! interleave and battery logged (the log's first line names them) and runs only the rest;
//! without `--resume` such a log is refused, never overwritten.
//!
//! `cargo xtask setup --quality` installs both: `cargo install TestU01Drv --locked --root
//! target/tools/testu01` (a minute: it compiles TestU01's C code) and, as root, `apt-get install
//! -y dieharder`. warpmc looks for `TestU01Drv` in `$WARPMC_TESTU01DRV`, then in
//! `target/tools/testu01/bin` of the workspace it was built in, then on `PATH`; for `dieharder`
//! on `PATH`.
//!
//! Measured on the 2-core development machine (release build; the words are generated on one
//! core while the battery runs on the other):
//!
//! - SmallCrush runs its tests on one unbroken stream and reads about 227 M words (0.9 GB):
//!   6.3 s wall per generator (philox4x32-10 6.3 s, hybrid-taus 6.3 s, lcg32 5.8 s; TestU01
//!   reports 5.4 s of its own CPU time). philox4x32-10 and hybrid-taus pass it, lcg32 fails 12
//!   of its 15 statistics. SmallCrush does not see the hybrid Tausworthe's linear low bits, not
//!   even with the bits reversed (`TestU01Drv -r`); the quick battery's rank and
//!   linear-complexity tests do, and so does TestU01's own linear-complexity test on the
//!   lowest bit (`TestU01Drv -r -T LinComp-5000`: p = 1 - eps1 for the number of jumps);
//! - Crush (about 2^35 words) in one TestU01Drv process: 28 to 63 minutes per generator here;
//!   test by test with `--jobs 2`: about 10 minutes for a fast generator (kiss 10.2, lfsr113
//!   9.9, taus88 10.4 minutes), longer where generating the words dominates (the PRAND `gm`
//!   generators make 8 to 28 M words/s on one core, and every test makes its words afresh);
//! - BigCrush (about 2^38 words) on philox4x32-10 test by test with `--jobs 16` on the 16-core
//!   Xeon host of the lent H100, 2026-11-23: 15 minutes of wall time for one stream and for
//!   4096 interleaved streams (917 s and 921 s; 2 h 54 min and 2 h 41 min of TestU01's CPU time); both pass,
//!   every p-value in [0.014, 0.993]. In one process it never finished on this machine;
//! - `dieharder -a` on philox4x32-10: 41 minutes (2458 s), 114 p-values, all Pass here
//!   (dieharder itself called two WEAK, p = 0.9950 and 0.9995). Most of the time goes to
//!   `rgb_lagged_sum`, whose 33 variants read up to 3.3 G words each.

use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use warpmc_kernels::rng::Generator;

pub mod long;

use crate::generators::GeneratorKind;
use crate::{Error, Result};

// ------------------------------------------------------------------------------------------------
// The API
// ------------------------------------------------------------------------------------------------

/// A battery of statistical tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Battery {
    /// warpmc's own battery (13 statistics, a few seconds): frequencies, pairs, serial
    /// correlation, birthday spacings, binary rank and linear complexity of the low bits,
    /// correlation between neighbouring streams.
    #[default]
    Quick,
    /// TestU01's SmallCrush through TestU01Drv (15 statistics, about 6 s).
    #[value(name = "smallcrush")]
    SmallCrush,
    /// TestU01's Crush (144 statistics, about half an hour of one core).
    Crush,
    /// TestU01's BigCrush (160 statistics, about three hours of one core: use `jobs`).
    #[value(name = "bigcrush")]
    BigCrush,
    /// dieharder's whole battery (`dieharder -g 200 -a`, tens of minutes or more).
    Dieharder,
    /// warpmc's long battery, of PractRand's class (`--words`, default 2^30, up to 2^40):
    /// Hamming-weight dependencies in bytes, words and blocks up to megabytes, floating-point
    /// frequencies, GF(2) ranks of matrices up to 20480 x 20480, judged at every doubling.
    Long,
}

impl Battery {
    /// TestU01's name of the battery and its number of tests (as TestU01's guide numbers them),
    /// for TestU01's batteries.
    pub fn testu01_tests(self) -> Option<(&'static str, u32)> {
        match self {
            Battery::SmallCrush => Some(("SmallCrush", 10)),
            Battery::Crush => Some(("Crush", 96)),
            Battery::BigCrush => Some(("BigCrush", 106)),
            Battery::Quick | Battery::Dieharder | Battery::Long => None,
        }
    }

    /// The name users type (`--battery`).
    pub fn name(self) -> &'static str {
        match self {
            Battery::Quick => "quick",
            Battery::SmallCrush => "smallcrush",
            Battery::Crush => "crush",
            Battery::BigCrush => "bigcrush",
            Battery::Dieharder => "dieharder",
            Battery::Long => "long",
        }
    }
}

impl fmt::Display for Battery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Words per test of the quick battery (the frequency, pair and serial tests use this many;
/// the others scale from it, see the module docs).
pub const QUICK_WORDS: u64 = 1 << 24;
/// The quick battery's statistics, in the order they run.
pub const QUICK_TEST_NAMES: [&str; 13] = [
    "byte-frequency",
    "high-byte-frequency",
    "low-byte-frequency",
    "high-byte-pairs",
    "low-byte-pairs",
    "serial-correlation-lag1",
    "birthday-spacings-32",
    "birthday-spacings-high16x2",
    "birthday-spacings-low16x2",
    "binary-rank-low8-128x128",
    "linear-complexity-bit0",
    "interstream-correlation",
    "interstream-hamming",
];
/// Smallest `words`: below it the pair test expects fewer than 8 pairs per cell.
pub const WORDS_MIN: u64 = 1 << 20;
/// Largest `words` (the quick battery then reads about 300 Gi words).
pub const WORDS_MAX: u64 = 1 << 36;
/// Largest `interleave`.
pub const INTERLEAVE_MAX: u64 = 1 << 24;
/// Largest memory for the interleaved streams' states (mt19937 keeps 2.5 KB per stream).
pub const STATE_BYTES_MAX: u64 = 1 << 30;
/// p-values below this, or above 1 minus this, fail.
pub const FAIL_P: f64 = 1e-10;
/// p-values below this, or above 1 minus this, are suspect (if they do not fail).
pub const SUSPECT_P: f64 = 1e-4;
/// Most TestU01 processes side by side (`--jobs`).
pub const JOBS_MAX: u32 = 1024;

/// A quality run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QualitySpec {
    pub generator: GeneratorKind,
    pub seed: u64,
    pub battery: Battery,
    /// 1: stream 0 of the seed. `K > 1`: streams `0 .. K`, one word of each in turn (word `i` is
    /// word `i / K` of stream `i % K`), the order a GPU run consumes them in.
    pub interleave: u64,
    /// The quick battery's words per test ([`QUICK_WORDS`] when `None`), or the long battery's
    /// words in all ([`long::LONG_WORDS_DEFAULT`] when `None`); only for those two.
    pub words: Option<u64>,
    /// An external battery's output is also written to this file as it arrives, so that a run of
    /// hours leaves its finished tests behind if it is stopped.
    pub log: Option<PathBuf>,
    /// TestU01 processes side by side (`[1, 1024]`). 1: the battery in one TestU01Drv process,
    /// its tests one after the other on one unbroken stream (TestU01's own way). `N > 1`: each
    /// test of the battery in its own `warpmc-testu01` process, `N` at a time, every test on the
    /// tested words from their start (see the module docs). Only for TestU01's batteries.
    pub jobs: u32,
    /// Only these tests of a TestU01 battery (numbered from 1 as in TestU01's guide), each in
    /// its own process as with `jobs > 1`; `None`: all of them. For a battery split over several
    /// runs; the report says which tests it holds.
    pub tests: Option<Vec<u32>>,
    /// With `log`, in the test-by-test mode: take the tests the log already holds (from an
    /// earlier run of the same generator, seed, interleave and battery that was stopped) and run
    /// only the others, appending to the log.
    pub resume: bool,
}

impl Default for QualitySpec {
    /// The default generator, seed 1, the quick battery, one stream.
    fn default() -> Self {
        Self {
            generator: GeneratorKind::default(),
            seed: 1,
            battery: Battery::Quick,
            interleave: 1,
            words: None,
            log: None,
            jobs: 1,
            tests: None,
            resume: false,
        }
    }
}

impl QualitySpec {
    pub fn validate(&self) -> Result<()> {
        if !(1..=INTERLEAVE_MAX).contains(&self.interleave) {
            return Err(Error::invalid("interleave", self.interleave, "[1, 2^24]"));
        }
        if let Some(words) = self.words {
            match self.battery {
                Battery::Quick if !(WORDS_MIN..=WORDS_MAX).contains(&words) => {
                    return Err(Error::invalid("words", words, "[2^20, 2^36] for the quick battery"));
                }
                Battery::Long if !(long::LONG_WORDS_MIN..=long::LONG_WORDS_MAX).contains(&words) => {
                    return Err(Error::invalid("words", words, "[2^24, 2^40] for the long battery"));
                }
                Battery::Quick | Battery::Long => {}
                _ => {
                    return Err(Error::invalid(
                        "words",
                        words,
                        format!(
                            "none: --words sets the size of the quick and long batteries, and {} has its own",
                            self.battery
                        ),
                    ));
                }
            }
        }
        if !(1..=JOBS_MAX).contains(&self.jobs) {
            return Err(Error::invalid("jobs", self.jobs, format!("[1, {JOBS_MAX}]")));
        }
        if let Some(tests) = &self.tests {
            let Some((name, count)) = self.battery.testu01_tests() else {
                return Err(Error::invalid(
                    "tests",
                    format!("{tests:?}"),
                    format!("none for {}: only TestU01's batteries have numbered tests", self.battery),
                ));
            };
            if let Some(&t) = tests.iter().find(|&&t| !(1..=count).contains(&t)) {
                return Err(Error::invalid("tests", t, format!("[1, {count}] (the tests of {name})")));
            }
            if tests.is_empty() {
                return Err(Error::invalid("tests", "an empty list", format!("test numbers in [1, {count}]")));
            }
        }
        if self.resume && (self.log.is_none() || self.battery.testu01_tests().is_none()) {
            return Err(Error::invalid(
                "resume",
                "set",
                "only with --log and a TestU01 battery (it reads the tests the log already holds)",
            ));
        }
        if self.jobs > 1 && self.battery.testu01_tests().is_none() {
            return Err(Error::invalid(
                "jobs",
                self.jobs,
                format!("1 for {}: only TestU01's batteries run their tests side by side", self.battery),
            ));
        }
        Ok(())
    }
}

/// What a p-value says (thresholds in the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Pass,
    Suspect,
    Fail,
}

impl Verdict {
    /// The verdict on `p`: Fail outside `[1e-10, 1 - 1e-10]`, Suspect outside `[1e-4, 1 - 1e-4]`,
    /// else Pass. A NaN fails.
    pub fn of(p: f64) -> Self {
        if !(FAIL_P..=1.0 - FAIL_P).contains(&p) {
            Verdict::Fail
        } else if !(SUSPECT_P..=1.0 - SUSPECT_P).contains(&p) {
            Verdict::Suspect
        } else {
            Verdict::Pass
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verdict::Pass => "pass",
            Verdict::Suspect => "SUSPECT",
            Verdict::Fail => "FAIL",
        })
    }
}

/// One statistic of a battery.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct TestResult {
    pub name: String,
    /// The statistic (chi-square, z score, count; NaN, `null` in JSON, where the external
    /// program does not print it).
    pub statistic: f64,
    pub p_value: f64,
    pub verdict: Verdict,
    /// The p-value is one-sided: only a small one is evidence against the generator (the long
    /// battery's rank statistic on few matrices: the chance of a deficiency at least as large).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub one_sided: bool,
}

impl TestResult {
    pub fn new(name: impl Into<String>, statistic: f64, p_value: f64) -> Self {
        Self { name: name.into(), statistic, p_value, verdict: Verdict::of(p_value), one_sided: false }
    }

    /// A one-sided statistic: fails below 1e-10, suspect below 1e-4, whatever its upper tail.
    pub fn one_sided(name: impl Into<String>, statistic: f64, p_value: f64) -> Self {
        let verdict = Verdict::of(p_value.min(0.5));
        Self { name: name.into(), statistic, p_value, verdict, one_sided: true }
    }
}

/// The result of [`run`].
#[derive(Clone, Debug, serde::Serialize)]
pub struct QualityReport {
    pub generator: GeneratorKind,
    pub seed: u64,
    pub interleave: u64,
    pub battery: Battery,
    pub tests: Vec<TestResult>,
    /// Words generated (for an external battery: written to its pipe; it may have read up to
    /// a pipe buffer fewer).
    pub words_tested: u64,
    /// Wall-clock seconds of the whole run.
    pub seconds: f64,
    /// The external battery's own summary text.
    pub external: Option<String>,
    /// The long battery: its results at every doubling of the length (the last one is `tests`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub checkpoints: Vec<long::Checkpoint>,
}

impl QualityReport {
    /// No test failed.
    pub fn passed(&self) -> bool {
        self.tests.iter().all(|t| t.verdict != Verdict::Fail)
    }

    /// How many tests have verdict `v`.
    pub fn count(&self, v: Verdict) -> usize {
        self.tests.iter().filter(|t| t.verdict == v).count()
    }
}

/// A p-value in a few characters: 4 decimals in the middle, `1.2e-5` and `1 - 3.4e-7` in the
/// tails, `<1e-300` for an underflow to 0.
pub fn format_p(p: f64) -> String {
    if p.is_nan() {
        "NaN".into()
    } else if p <= 0.0 {
        "<1e-300".into()
    } else if p < 1e-3 {
        format!("{p:.1e}")
    } else if p >= 1.0 {
        "1 - <1e-16".into()
    } else if p > 0.999 {
        format!("1 - {:.1e}", 1.0 - p)
    } else {
        format!("{p:.4}")
    }
}

fn format_statistic(x: f64) -> String {
    if x.is_nan() {
        "-".into()
    } else if x == x.trunc() && x.abs() < 1e12 {
        format!("{x:.0}")
    } else if x.abs() >= 1e7 || x.abs() < 1e-3 {
        format!("{x:.4e}")
    } else {
        format!("{x:.4}")
    }
}

impl fmt::Display for QualityReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} battery on {}, seed {}, interleave {}: {} words in {:.1} s",
            self.battery, self.generator, self.seed, self.interleave, self.words_tested, self.seconds
        )?;
        let width = self.tests.iter().map(|t| t.name.len()).max().unwrap_or(4).max(4);
        writeln!(f, "  {:width$}  {:>14}  {:>12}  verdict", "test", "statistic", "p-value")?;
        for t in &self.tests {
            writeln!(
                f,
                "  {:width$}  {:>14}  {:>12}  {}",
                t.name,
                format_statistic(t.statistic),
                format_p(t.p_value),
                t.verdict
            )?;
        }
        let (fails, suspects) = (self.count(Verdict::Fail), self.count(Verdict::Suspect));
        if fails == 0 {
            write!(f, "passed: no test failed")?;
        } else {
            write!(f, "FAILED: {fails} of {} tests have p outside [1e-10, 1 - 1e-10]", self.tests.len())?;
        }
        if suspects > 0 {
            write!(f, " ({suspects} suspect: p outside [1e-4, 1 - 1e-4], rerun with another seed)")?;
        }
        writeln!(f)?;
        if let Some(text) = &self.external {
            writeln!(f, "\n{}'s own summary:\n{}", self.battery, text.trim_end())?;
        }
        if !self.checkpoints.is_empty() {
            writeln!(f, "\nby length:")?;
            for c in &self.checkpoints {
                let failed: Vec<&str> = c.failed().map(|t| t.name.as_str()).collect();
                let failed = if failed.is_empty() { String::new() } else { format!("; failed: {}", failed.join(" ")) };
                writeln!(f, "  {}{failed}", c.summary())?;
            }
            if let Some(first) = self.checkpoints.iter().find(|c| c.failed().next().is_some()) {
                writeln!(f, "first failure at {} bytes", long::length_name(first.bytes))?;
            }
        }
        Ok(())
    }
}

/// Run `spec`'s battery on its generator.
pub fn run(spec: &QualitySpec) -> Result<QualityReport> {
    spec.validate()?;
    let start = Instant::now();
    let source = word_source(spec.generator, spec.seed, spec.interleave)?;
    let mut checkpoints_out = Vec::new();
    let (tests, words_tested, external) = match spec.battery {
        Battery::Quick => {
            let (tests, words) = quick(source, spec)?;
            (tests, words, None)
        }
        Battery::SmallCrush | Battery::Crush | Battery::BigCrush
            if spec.jobs > 1 || spec.tests.is_some() || spec.resume =>
        {
            testu01_by_test(spec)?
        }
        Battery::SmallCrush | Battery::Crush | Battery::BigCrush => {
            let name = match spec.battery {
                Battery::SmallCrush => "SmallCrush",
                Battery::Crush => "Crush",
                _ => "BigCrush",
            };
            let out = pipe_words(&testu01_program(), &["--tests", name], source, spec.log.as_deref())?;
            let (tests, summary) = parse_testu01(&out.stdout);
            if tests.is_empty() || summary.is_none() {
                return Err(external_failed("TestU01Drv", "its output has no test results or no summary", &out));
            }
            (tests, out.words, summary)
        }
        Battery::Long => {
            let words = spec.words.unwrap_or(long::LONG_WORDS_DEFAULT);
            let mut log = spec.log.as_deref().map(create_log).transpose()?;
            let checkpoints = long::run(source, words, &mut |c, seconds| {
                eprintln!("long: {}, {seconds:.1} s", c.summary());
                if let Some(file) = &mut log {
                    // A run of hours leaves every finished length behind; a log that cannot be
                    // written is reported and dropped, and the run goes on.
                    let mut text = format!("== {}, {seconds:.1} s\n", c.summary());
                    for t in &c.tests {
                        let (x, p) = (format_statistic(t.statistic), format_p(t.p_value));
                        text += &format!("  {} {x} {p} {}\n", t.name, t.verdict);
                    }
                    if let Err(e) = file.write_all(text.as_bytes()).and_then(|()| file.flush()) {
                        eprintln!("warning: cannot write the log any more ({e}); the run goes on");
                        log = None;
                    }
                }
            });
            let last = checkpoints.last().expect("a checkpoint at the end").tests.clone();
            checkpoints_out = checkpoints;
            (last, words, None)
        }
        Battery::Dieharder => {
            let out = pipe_words(Path::new("dieharder"), &["-g", "200", "-a"], source, spec.log.as_deref())?;
            let tests = parse_dieharder(&out.stdout);
            if tests.is_empty() {
                return Err(external_failed("dieharder", "its output has no test results", &out));
            }
            (tests, out.words, Some(out.stdout))
        }
    };
    Ok(QualityReport {
        generator: spec.generator,
        seed: spec.seed,
        interleave: spec.interleave,
        battery: spec.battery,
        tests,
        words_tested,
        seconds: start.elapsed().as_secs_f64(),
        external,
        checkpoints: checkpoints_out,
    })
}

// ------------------------------------------------------------------------------------------------
// The words
// ------------------------------------------------------------------------------------------------

/// Words per refill of a [`WordSource`]'s buffer.
pub const SOURCE_BUFFER: usize = 1 << 16;

type Filler = Box<dyn FnMut(&mut [u32]) + Send>;

/// A generator's words on the CPU, one stream or several interleaved (see [`word_source`]). The
/// generator is monomorphised inside: one dynamic call per buffer, none per word.
pub struct WordSource {
    fill: Filler,
    buf: Box<[u32]>,
    pos: usize,
    produced: u64,
}

impl WordSource {
    /// The next word.
    #[inline]
    pub fn next_u32(&mut self) -> u32 {
        if self.pos == self.buf.len() {
            (self.fill)(&mut self.buf);
            self.pos = 0;
        }
        let w = self.buf[self.pos];
        self.pos += 1;
        self.produced += 1;
        w
    }

    /// The next `out.len()` words.
    pub fn fill(&mut self, out: &mut [u32]) {
        let buffered = (self.buf.len() - self.pos).min(out.len());
        out[..buffered].copy_from_slice(&self.buf[self.pos..self.pos + buffered]);
        self.pos += buffered;
        if buffered < out.len() {
            (self.fill)(&mut out[buffered..]);
        }
        self.produced += out.len() as u64;
    }

    /// Words handed out so far.
    pub fn words_produced(&self) -> u64 {
        self.produced
    }
}

impl Iterator for WordSource {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        Some(self.next_u32())
    }
}

/// The words of `generator` from `seed`: stream 0 when `interleave` is 1, else streams
/// `0 .. interleave` one word of each in turn (word `i` is word `i / interleave` of stream
/// `i % interleave`). Errors if `interleave` is outside `[1, 2^24]` or the streams' states
/// would take more than [`STATE_BYTES_MAX`].
pub fn word_source(generator: GeneratorKind, seed: u64, interleave: u64) -> Result<WordSource> {
    if !(1..=INTERLEAVE_MAX).contains(&interleave) {
        return Err(Error::invalid("interleave", interleave, "[1, 2^24]"));
    }
    let fill = crate::with_generator!(generator, G => filler::<G>(seed, interleave))?;
    Ok(WordSource { fill, buf: vec![0; SOURCE_BUFFER].into_boxed_slice(), pos: SOURCE_BUFFER, produced: 0 })
}

fn filler<G: Generator>(seed: u64, interleave: u64) -> Result<Filler> {
    if interleave == 1 {
        let mut g = G::stream(seed, 0);
        return Ok(Box::new(move |out: &mut [u32]| {
            for w in out {
                *w = g.next_u32();
            }
        }));
    }
    let bytes = interleave.saturating_mul(size_of::<G>() as u64);
    if bytes > STATE_BYTES_MAX {
        let most = STATE_BYTES_MAX / size_of::<G>() as u64;
        return Err(Error::invalid(
            "interleave",
            interleave,
            format!("[1, {most}] for {} ({} bytes of state per stream, 1 GiB in all)", G::NAME, size_of::<G>()),
        ));
    }
    let mut states: Vec<G> = (0..interleave).map(|k| G::stream(seed, k)).collect();
    let mut next = 0usize;
    Ok(Box::new(move |out: &mut [u32]| {
        for w in out {
            *w = states[next].next_u32();
            next += 1;
            if next == states.len() {
                next = 0;
            }
        }
    }))
}

/// Feed `n` words of `src` to `f`, a chunk at a time (chunks have an even length).
fn for_chunks(src: &mut WordSource, n: u64, mut f: impl FnMut(&[u32])) {
    let mut buf = vec![0u32; SOURCE_BUFFER.min(n as usize)];
    let mut left = n;
    while left > 0 {
        let k = (buf.len() as u64).min(left) as usize;
        src.fill(&mut buf[..k]);
        f(&buf[..k]);
        left -= k as u64;
    }
}

// ------------------------------------------------------------------------------------------------
// The quick battery
// ------------------------------------------------------------------------------------------------

/// Birthdays per repetition of the birthday-spacings tests.
const BIRTHDAYS: usize = 4096;
/// Repetitions of each birthday-spacings test at [`QUICK_WORDS`] (λ = 4 per repetition).
const BIRTHDAY_REPS: u64 = 1024;
/// Side of the binary-rank test's matrices (each row: the low bytes of 16 words).
const RANK_SIZE: usize = 128;
/// Matrices at [`QUICK_WORDS`], also the minimum (5.4 expected in the class rank ≤ 125).
const RANK_MATRICES: u64 = 1024;
/// Bits per block of the linear-complexity test (even).
const LC_BITS: usize = 4096;
/// Blocks at [`QUICK_WORDS`], also the minimum (10.7 expected in the class ≤ -3).
const LC_BLOCKS: u64 = 1024;
/// Streams side by side in the inter-stream tests.
const INTERSTREAM_STREAMS: u64 = 64;
/// Words per stream at [`QUICK_WORDS`].
const INTERSTREAM_ROWS: u64 = 1 << 16;
/// Smallest expected count of a chi-square category (smaller ones are merged).
const MIN_EXPECTED: f64 = 5.0;

/// `at_quick_words` scaled by `n / QUICK_WORDS`, at least `min`.
fn scaled(at_quick_words: u64, n: u64, min: u64) -> u64 {
    ((u128::from(at_quick_words) * u128::from(n) / u128::from(QUICK_WORDS)) as u64).max(min)
}

fn quick(mut src: WordSource, spec: &QualitySpec) -> Result<(Vec<TestResult>, u64)> {
    let n = spec.words.unwrap_or(QUICK_WORDS) & !1;
    let mut tests = Vec::new();
    tests.extend(frequency(&mut src, n));
    tests.extend(byte_pairs(&mut src, n));
    tests.push(serial_correlation(&mut src, n));
    let reps = scaled(BIRTHDAY_REPS, n, 64);
    tests.push(birthday_spacings(&mut src, reps, Birthday::Word));
    tests.push(birthday_spacings(&mut src, reps, Birthday::High16x2));
    tests.push(birthday_spacings(&mut src, reps, Birthday::Low16x2));
    tests.push(binary_rank_low8(&mut src, scaled(RANK_MATRICES, n, RANK_MATRICES)));
    tests.push(linear_complexity_bit0(&mut src, scaled(LC_BLOCKS, n, LC_BLOCKS)));
    let mut streams = word_source(spec.generator, spec.seed, INTERSTREAM_STREAMS)?;
    tests.extend(interstream(&mut streams, scaled(INTERSTREAM_ROWS, n, 1024)));
    Ok((tests, src.words_produced() + streams.words_produced()))
}

/// Chi-square of `counts` against equally likely categories.
fn chi_square_uniform(name: &str, counts: &[u64]) -> TestResult {
    let probs = vec![1.0 / counts.len() as f64; counts.len()];
    chi_square_test(name, counts, &probs)
}

/// Chi-square of `counts` against the probabilities `probs` (summing to 1), neighbouring
/// categories merged until each expects at least [`MIN_EXPECTED`].
fn chi_square_test(name: &str, counts: &[u64], probs: &[f64]) -> TestResult {
    let (x, df) = chi_square(counts, probs);
    TestResult::new(name, x, chi_square_upper(x, df as f64))
}

/// The statistic and its degrees of freedom (see [`chi_square_test`]).
fn chi_square(counts: &[u64], probs: &[f64]) -> (f64, usize) {
    assert_eq!(counts.len(), probs.len());
    let total: u64 = counts.iter().sum();
    let total = total as f64;
    // Merge left to right; a small remainder at the end joins the last category.
    let mut merged: Vec<(f64, f64)> = Vec::new();
    let (mut o, mut e) = (0.0, 0.0);
    for (&c, &p) in counts.iter().zip(probs) {
        o += c as f64;
        e += p * total;
        if e >= MIN_EXPECTED {
            merged.push((o, e));
            (o, e) = (0.0, 0.0);
        }
    }
    if e > 0.0 || o > 0.0 {
        match merged.last_mut() {
            Some(last) => {
                last.0 += o;
                last.1 += e;
            }
            None => merged.push((o, e)),
        }
    }
    let x = merged.iter().map(|&(o, e)| if e > 0.0 { (o - e) * (o - e) / e } else { 0.0 }).sum();
    (x, merged.len().saturating_sub(1).max(1))
}

/// Test 1: byte frequencies (all bytes, top byte, low byte) of `n` words.
fn frequency(src: &mut WordSource, n: u64) -> [TestResult; 3] {
    let (mut all, mut high, mut low) = ([0u64; 256], [0u64; 256], [0u64; 256]);
    for_chunks(src, n, |ws| {
        for &w in ws {
            for b in w.to_le_bytes() {
                all[b as usize] += 1;
            }
            high[(w >> 24) as usize] += 1;
            low[(w & 0xFF) as usize] += 1;
        }
    });
    [
        chi_square_uniform("byte-frequency", &all),
        chi_square_uniform("high-byte-frequency", &high),
        chi_square_uniform("low-byte-frequency", &low),
    ]
}

/// Test 2: non-overlapping pairs of top bytes and of low bytes, `n` words (`n / 2` pairs).
fn byte_pairs(src: &mut WordSource, n: u64) -> [TestResult; 2] {
    let (mut high, mut low) = (vec![0u64; 1 << 16], vec![0u64; 1 << 16]);
    for_chunks(src, n, |ws| {
        for p in ws.chunks_exact(2) {
            high[((p[0] >> 24) << 8 | p[1] >> 24) as usize] += 1;
            low[((p[0] & 0xFF) << 8 | p[1] & 0xFF) as usize] += 1;
        }
    });
    [chi_square_uniform("high-byte-pairs", &high), chi_square_uniform("low-byte-pairs", &low)]
}

/// A word centred exactly: `2w + 1 - 2^32`, odd, in `(-2^32, 2^32)`, mean 0 under the hypothesis.
#[inline(always)]
fn centred(w: u32) -> i64 {
    2 * i64::from(w) + 1 - (1i64 << 32)
}

/// The variance of [`centred`] for a uniform word: `4 (2^64 - 1) / 12`.
const CENTRED_VARIANCE: f64 = 18446744073709551615.0 / 3.0;

/// The upper-tail test of `Σ` of `pairs` products of centred words: `z = Σ / (sqrt(pairs) σ²)`.
fn product_z(name: &str, sum: i128, pairs: u64) -> TestResult {
    let z = sum as f64 / ((pairs as f64).sqrt() * CENTRED_VARIANCE);
    TestResult::new(name, z, normal_upper(z))
}

/// Test 3: serial correlation at lag 1 of `n` words.
fn serial_correlation(src: &mut WordSource, n: u64) -> TestResult {
    let mut sum = 0i128;
    let mut prev: Option<i64> = None;
    for_chunks(src, n, |ws| {
        for &w in ws {
            let x = centred(w);
            if let Some(p) = prev {
                sum += i128::from(p) * i128::from(x);
            }
            prev = Some(x);
        }
    });
    product_z("serial-correlation-lag1", sum, n - 1)
}

/// What a birthday is, in the birthday-spacings test.
#[derive(Clone, Copy)]
enum Birthday {
    /// A whole word.
    Word,
    /// The top 16 bits of two consecutive words.
    High16x2,
    /// The low 16 bits of two consecutive words.
    Low16x2,
}

/// Test 4: birthday spacings (definition in the module docs), `reps` repetitions.
fn birthday_spacings(src: &mut WordSource, reps: u64, kind: Birthday) -> TestResult {
    let (name, words_per_day) = match kind {
        Birthday::Word => ("birthday-spacings-32", 1),
        Birthday::High16x2 => ("birthday-spacings-high16x2", 2),
        Birthday::Low16x2 => ("birthday-spacings-low16x2", 2),
    };
    let mut raw = vec![0u32; BIRTHDAYS * words_per_day];
    let mut days = vec![0u32; BIRTHDAYS];
    let mut spacings = vec![0u32; BIRTHDAYS];
    let mut collisions = 0u64;
    for _ in 0..reps {
        src.fill(&mut raw);
        for (d, w) in days.iter_mut().zip(raw.chunks_exact(words_per_day)) {
            *d = match kind {
                Birthday::Word => w[0],
                Birthday::High16x2 => (w[0] & 0xFFFF_0000) | w[1] >> 16,
                Birthday::Low16x2 => (w[0] << 16) | (w[1] & 0xFFFF),
            };
        }
        days.sort_unstable();
        // The spacings around the circle of 2^32 days: the first one wraps around.
        spacings[0] = days[0].wrapping_sub(days[BIRTHDAYS - 1]);
        for j in 1..BIRTHDAYS {
            spacings[j] = days[j] - days[j - 1];
        }
        spacings.sort_unstable();
        collisions += spacings.windows(2).filter(|s| s[0] == s[1]).count() as u64;
    }
    // m (m - 1)^2 / (4n): the m(m - 1)/2 pairs of spacings, each two equal with probability
    // (m - 1) / (2n) (two spacings of m points on a circle have the joint density
    // (m - 1)(m - 2)(1 - s - t)^(m - 3)); m^3 / (4n) to first order.
    let m = BIRTHDAYS as f64;
    let lambda = reps as f64 * m * (m - 1.0) * (m - 1.0) / (4.0 * 2f64.powi(32));
    TestResult::new(name, collisions as f64, poisson_at_least(collisions, lambda))
}

/// Test 5: ranks of 128 × 128 GF(2) matrices whose rows are the low bytes of 16 words.
fn binary_rank_low8(src: &mut WordSource, matrices: u64) -> TestResult {
    const WORDS_PER_ROW: usize = RANK_SIZE / 8;
    let mut raw = vec![0u32; RANK_SIZE * WORDS_PER_ROW];
    let mut rows = [0u128; RANK_SIZE];
    // Classes: rank 128, 127, 126, <= 125.
    let mut counts = [0u64; 4];
    for _ in 0..matrices {
        src.fill(&mut raw);
        for (row, ws) in rows.iter_mut().zip(raw.chunks_exact(WORDS_PER_ROW)) {
            *row = ws.iter().enumerate().fold(0u128, |r, (j, &w)| r | u128::from(w & 0xFF) << (8 * j));
        }
        let deficit = RANK_SIZE - gf2_rank(&mut rows);
        counts[deficit.min(3)] += 1;
    }
    let p = rank_probabilities(RANK_SIZE, RANK_SIZE);
    let probs = [p[RANK_SIZE], p[RANK_SIZE - 1], p[RANK_SIZE - 2], p[..=RANK_SIZE - 3].iter().sum()];
    chi_square_test("binary-rank-low8-128x128", &counts, &probs)
}

/// Test 6: linear complexity of the lowest bit, `blocks` blocks of [`LC_BITS`] words.
fn linear_complexity_bit0(src: &mut WordSource, blocks: u64) -> TestResult {
    let mut raw = vec![0u32; LC_BITS];
    let mut bits = vec![0u64; LC_BITS / 64];
    let mut counts = [0u64; 7];
    for _ in 0..blocks {
        src.fill(&mut raw);
        bits.fill(0);
        for (i, &w) in raw.iter().enumerate() {
            bits[i / 64] |= u64::from(w & 1) << (i % 64);
        }
        let l = linear_complexity(&bits, LC_BITS) as i64;
        counts[((l - (LC_BITS / 2) as i64).clamp(-3, 3) + 3) as usize] += 1;
    }
    chi_square_test("linear-complexity-bit0", &counts, &linear_complexity_classes(LC_BITS))
}

/// Test 7: neighbouring streams word by word, `rows` words of each of the source's streams
/// (the source interleaves [`INTERSTREAM_STREAMS`] streams).
fn interstream(src: &mut WordSource, rows: u64) -> [TestResult; 2] {
    let mut row = vec![0u32; INTERSTREAM_STREAMS as usize];
    let mut sum = 0i128;
    let mut distance = [0u64; 33];
    for _ in 0..rows {
        src.fill(&mut row);
        for pair in row.windows(2) {
            sum += i128::from(centred(pair[0])) * i128::from(centred(pair[1]));
            distance[(pair[0] ^ pair[1]).count_ones() as usize] += 1;
        }
    }
    let pairs = rows * (INTERSTREAM_STREAMS - 1);
    let binomial: Vec<f64> = (0..=32).map(|k| binomial_coefficient(32, k) / 2f64.powi(32)).collect();
    [product_z("interstream-correlation", sum, pairs), chi_square_test("interstream-hamming", &distance, &binomial)]
}

fn binomial_coefficient(n: u64, k: u64) -> f64 {
    (0..k).fold(1.0, |c, i| c * (n - i) as f64 / (i + 1) as f64)
}

// ------------------------------------------------------------------------------------------------
// GF(2)
// ------------------------------------------------------------------------------------------------

/// The rank over GF(2) of a matrix of at most 128 columns, one row per `u128` (the rows are
/// destroyed).
fn gf2_rank(rows: &mut [u128]) -> usize {
    let mut rank = 0;
    for col in 0..128 {
        let bit = 1u128 << col;
        let Some(pivot) = (rank..rows.len()).find(|&i| rows[i] & bit != 0) else { continue };
        rows.swap(rank, pivot);
        let p = rows[rank];
        for r in &mut rows[rank + 1..] {
            if *r & bit != 0 {
                *r ^= p;
            }
        }
        rank += 1;
        if rank == rows.len() {
            break;
        }
    }
    rank
}

/// `P(rank = r)` for `r = 0 ..= min(m, n)`, for an `m × n` matrix of independent fair bits:
/// `2^{-(m-r)(n-r)} ∏_{i<r} (1 - 2^{i-m})(1 - 2^{i-n}) / (1 - 2^{i-r})`.
fn rank_probabilities(m: usize, n: usize) -> Vec<f64> {
    (0..=m.min(n))
        .map(|r| {
            let product: f64 = (0..r)
                .map(|i| {
                    let (i, m, n, r) = (i as f64, m as f64, n as f64, r as f64);
                    (1.0 - (i - m).exp2()) * (1.0 - (i - n).exp2()) / (1.0 - (i - r).exp2())
                })
                .product();
            (-(((m - r) * (n - r)) as f64)).exp2() * product
        })
        .collect()
}

/// The linear complexity (Berlekamp–Massey) of the first `n` bits of `bits` (bit `i` is bit
/// `i % 64` of `bits[i / 64]`): the degree of the shortest linear recurrence over GF(2) that
/// generates them.
fn linear_complexity(bits: &[u64], n: usize) -> usize {
    assert!(bits.len() * 64 >= n);
    let words = n / 64 + 2;
    // The sequence reversed, so that the discrepancy at step t is a dot product of the
    // connection polynomial with a contiguous window: rev bit j = s[n - 1 - j].
    let mut rev = vec![0u64; words];
    for j in 0..n {
        let i = n - 1 - j;
        rev[j / 64] |= ((bits[i / 64] >> (i % 64)) & 1) << (j % 64);
    }
    let window = |pos: usize| -> u64 {
        let (q, b) = (pos / 64, pos % 64);
        let lo = rev.get(q).copied().unwrap_or(0) >> b;
        if b == 0 { lo } else { lo | rev.get(q + 1).copied().unwrap_or(0) << (64 - b) }
    };
    // c: connection polynomial (bit i = coefficient of x^i), b: the one before the last length
    // change, shift: steps since then.
    let (mut c, mut b) = (vec![0u64; words], vec![0u64; words]);
    c[0] = 1;
    b[0] = 1;
    let (mut l, mut shift) = (0usize, 1usize);
    let mut saved = vec![0u64; words];
    for t in 0..n {
        // d = Σ_{i=0..=l} c_i s[t - i] = Σ c_i rev[(n - 1 - t) + i].
        let off = n - 1 - t;
        let mut d = 0u64;
        for (k, &ck) in c.iter().enumerate().take(l / 64 + 1) {
            d ^= ck & window(off + 64 * k);
        }
        if d.count_ones() & 1 == 0 {
            shift += 1;
            continue;
        }
        let grow = 2 * l <= t;
        if grow {
            saved.copy_from_slice(&c);
        }
        // c += x^shift b.
        let (q, s) = (shift / 64, shift % 64);
        for j in 0..words - q {
            c[j + q] ^= b[j] << s;
            if s != 0 && j + q + 1 < words {
                c[j + q + 1] ^= b[j] >> (64 - s);
            }
        }
        if grow {
            l = t + 1 - l;
            std::mem::swap(&mut b, &mut saved);
            shift = 1;
        } else {
            shift += 1;
        }
    }
    l
}

/// The probabilities of the linear-complexity classes `L - n/2 <= -3, -2, -1, 0, 1, 2, >= 3`
/// for `n` (even) random bits: `P(L) = 2^{min(2n - 2L, 2L - 1) - n}` for `L >= 1`, `2^-n` for 0.
fn linear_complexity_classes(n: usize) -> [f64; 7] {
    let mut classes = [0.0; 7];
    for l in 0..=n {
        let log2 = if l == 0 { -(n as f64) } else { (2 * (n - l)).min(2 * l - 1) as f64 - n as f64 };
        let class = (l as i64 - (n / 2) as i64).clamp(-3, 3) + 3;
        classes[class as usize] += log2.exp2();
    }
    classes
}

// ------------------------------------------------------------------------------------------------
// Distributions
// ------------------------------------------------------------------------------------------------

/// `ln Γ(x)` for `x > 0`: Stirling's series after shifting `x` up to at least 15
/// (`Γ(x) = Γ(x + k) / (x (x + 1) ... (x + k - 1))`); error about 1e-15.
fn ln_gamma(x: f64) -> f64 {
    debug_assert!(x > 0.0);
    let (mut y, mut product) = (x, 1.0);
    while y < 15.0 {
        product *= y;
        y += 1.0;
    }
    let inv = 1.0 / y;
    let inv2 = inv * inv;
    // 1/(12y) - 1/(360y^3) + 1/(1260y^5) - 1/(1680y^7) + 1/(1188y^9)
    let series =
        inv * (1.0 / 12.0 - inv2 * (1.0 / 360.0 - inv2 * (1.0 / 1260.0 - inv2 * (1.0 / 1680.0 - inv2 / 1188.0))));
    (y - 0.5) * y.ln() - y + 0.5 * (2.0 * std::f64::consts::PI).ln() + series - product.ln()
}

/// The regularized incomplete gamma functions `(P(a, x), Q(a, x))`, `Q = 1 - P`, for `a > 0`:
/// the power series of `P` below `x = a + 1`, the continued fraction of `Q` above (evaluated
/// with Lentz's method), each computed directly so that the small one keeps its relative
/// precision.
fn gamma_pq(a: f64, x: f64) -> (f64, f64) {
    if x <= 0.0 {
        return (0.0, 1.0);
    }
    if x.is_infinite() {
        return (1.0, 0.0);
    }
    // ln(x^a e^-x / Γ(a)).
    let ln_front = a * x.ln() - x - ln_gamma(a);
    const EPS: f64 = 1e-17;
    const MAX_TERMS: usize = 1_000_000;
    if x < a + 1.0 {
        // P = x^a e^-x / Γ(a) Σ_{k>=0} x^k / (a (a+1) ... (a+k)).
        let (mut term, mut ak) = (1.0 / a, a);
        let mut sum = term;
        for _ in 0..MAX_TERMS {
            ak += 1.0;
            term *= x / ak;
            sum += term;
            if term < sum * EPS {
                break;
            }
        }
        let p = (sum.ln() + ln_front).exp().min(1.0);
        (p, 1.0 - p)
    } else {
        // Q = x^a e^-x / Γ(a) · 1 / (x + 1 - a - 1 (1 - a) / (x + 3 - a - 2 (2 - a) / (x + 5 - a - ...))).
        const TINY: f64 = 1e-300;
        let mut b = x + 1.0 - a;
        let mut c = 1.0 / TINY;
        let mut d = 1.0 / b;
        let mut h = d;
        for i in 1..MAX_TERMS {
            let an = -(i as f64) * (i as f64 - a);
            b += 2.0;
            d = an * d + b;
            if d.abs() < TINY {
                d = TINY;
            }
            c = b + an / c;
            if c.abs() < TINY {
                c = TINY;
            }
            d = 1.0 / d;
            let delta = d * c;
            h *= delta;
            if (delta - 1.0).abs() < EPS {
                break;
            }
        }
        let q = (h.ln() + ln_front).exp().min(1.0);
        (1.0 - q, q)
    }
}

/// `erfc(x)`, through `erfc(x) = Q(1/2, x²)` for `x >= 0` (and `2 - erfc(-x)`), with full
/// relative precision in the upper tail.
pub fn erfc(x: f64) -> f64 {
    let (p, q) = gamma_pq(0.5, x * x);
    if x >= 0.0 { q } else { 1.0 + p }
}

/// `P(Z >= z)` for a standard normal `Z`.
pub fn normal_upper(z: f64) -> f64 {
    0.5 * erfc(z / std::f64::consts::SQRT_2)
}

/// `P(X >= x)` for a chi-square `X` with `df` degrees of freedom.
pub fn chi_square_upper(x: f64, df: f64) -> f64 {
    gamma_pq(0.5 * df, 0.5 * x).1
}

/// `P(X >= k)` for a Poisson `X` of mean `lambda`: `P(k, lambda)` (regularized lower gamma).
pub fn poisson_at_least(k: u64, lambda: f64) -> f64 {
    if k == 0 { 1.0 } else { gamma_pq(k as f64, lambda).0 }
}

// ------------------------------------------------------------------------------------------------
// External batteries
// ------------------------------------------------------------------------------------------------

/// Where `cargo xtask setup --quality` installs TestU01Drv, relative to the workspace root.
pub const TESTU01_ROOT: &str = "target/tools/testu01";
/// How to install the external batteries.
const INSTALL_HINT: &str = "install it with `cargo xtask setup --quality`";

/// TestU01Drv: `$WARPMC_TESTU01DRV`, else the workspace's `target/tools/testu01/bin/TestU01Drv`
/// if it exists, else `TestU01Drv` on `PATH`.
fn testu01_program() -> PathBuf {
    battery_program("WARPMC_TESTU01DRV", "TestU01Drv")
}

/// warpmc's TestU01 driver (`cargo xtask setup --quality` builds it from
/// xtask/src/testu01_tests.c): `$WARPMC_TESTU01_TESTS`, else the workspace's
/// `target/tools/testu01/bin/warpmc-testu01` if it exists, else `warpmc-testu01` on `PATH`.
fn testu01_tests_program() -> PathBuf {
    battery_program("WARPMC_TESTU01_TESTS", "warpmc-testu01")
}

/// A program of `cargo xtask setup --quality`: `$<env>`, else the workspace's
/// `target/tools/testu01/bin/<name>` if it exists, else `<name>` on `PATH`.
fn battery_program(env: &str, name: &str) -> PathBuf {
    if let Some(p) = std::env::var_os(env) {
        return p.into();
    }
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap_or(Path::new("."));
    let installed = workspace.join(TESTU01_ROOT).join("bin").join(name);
    if installed.is_file() { installed } else { name.into() }
}

/// The statistics of one test of a battery run alone: the driver's
/// `warpmc-testu01-result <test> <p> <name>` lines, named `"<test> <name>"`.
fn parse_testu01_tests(out: &str) -> Vec<TestResult> {
    out.lines()
        .filter_map(|l| l.strip_prefix("warpmc-testu01-result "))
        .filter_map(|rest| {
            let mut parts = rest.splitn(3, ' ');
            let (test, p, name) = (parts.next()?, parts.next()?, parts.next()?);
            let p: f64 = p.parse().ok()?;
            Some(TestResult::new(format!("{test} {}", name.trim()), f64::NAN, p))
        })
        .collect()
}

/// A p-value the way TestU01's summaries print it: `eps` below 1e-300, `1 - eps1` above
/// 1 - 1e-15, `1 - q` near 1.
fn testu01_p_text(p: f64) -> String {
    if p < 1e-300 {
        "eps".into()
    } else if p > 1.0 - 1e-15 {
        "1 - eps1".into()
    } else if p > 0.5 {
        format!("1 - {:.1e}", 1.0 - p)
    } else if p < 0.01 {
        format!("{p:.1e}")
    } else {
        format!("{p:.4}")
    }
}

/// `spec`'s TestU01 battery with each test in its own `warpmc-testu01` process, `spec.jobs` at a
/// time, each reading the tested words from their start. The results come in the battery's
/// order whatever order the tests finish in; the summary lists, as TestU01's does, the
/// statistics outside `[0.001, 0.999]`. The log gets each test's whole output when it finishes.
fn testu01_by_test(spec: &QualitySpec) -> Result<(Vec<TestResult>, u64, Option<String>)> {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
    let (battery, count) = spec.battery.testu01_tests().expect("validated: a TestU01 battery");
    let program = testu01_tests_program();
    // The log's first line names what it tests; `resume` takes only a log of the same words.
    let header = format!(
        "# warpmc quality: generator {}, seed {}, interleave {}, battery {}",
        spec.generator.name(),
        spec.seed,
        spec.interleave,
        spec.battery.name()
    );
    let mut earlier: Vec<TestRun> = Vec::new();
    let log = match &spec.log {
        Some(p) if spec.resume && p.exists() => {
            let text = std::fs::read_to_string(p)
                .map_err(|e| Error::io(format!("cannot read the log file {} to resume", p.display()), e))?;
            if text.lines().next() != Some(header.as_str()) {
                return Err(Error::invalid(
                    "resume",
                    p.display(),
                    format!("a log that starts with `{header}` (this one holds other words)"),
                ));
            }
            earlier = logged_tests(&text, battery);
            let f = std::fs::OpenOptions::new()
                .append(true)
                .open(p)
                .map_err(|e| Error::io(format!("cannot append to the log file {}", p.display()), e))?;
            Some(Mutex::new(f))
        }
        Some(p) => {
            // A test-by-test log may hold hours of results: never overwritten by a run that
            // forgot `--resume`.
            let existing = std::fs::read_to_string(p).unwrap_or_default();
            if existing.starts_with("# warpmc quality:") {
                return Err(Error::invalid(
                    "log",
                    p.display(),
                    "a file that is not the log of an earlier test-by-test run (this one is: add --resume to \
                     continue it, or remove it to start again)",
                ));
            }
            let mut f = create_log(p)?;
            writeln!(f, "{header}").map_err(|e| Error::io("cannot write the battery's log file", e))?;
            Some(Mutex::new(f))
        }
        None => None,
    };
    let chosen: Vec<u32> = match &spec.tests {
        Some(list) => {
            let mut l = list.clone();
            l.sort_unstable();
            l.dedup();
            l
        }
        None => (1..=count).collect(),
    };
    let to_run: Vec<u32> = chosen.iter().copied().filter(|t| !earlier.iter().any(|(e, ..)| e == t)).collect();
    earlier.retain(|(t, ..)| chosen.contains(t));
    let next = AtomicU32::new(0);
    let stop = AtomicBool::new(false);
    let done: Mutex<Vec<TestRun>> = Mutex::new(Vec::new());
    let first_error: Mutex<Option<Error>> = Mutex::new(None);
    let work = || {
        while !stop.load(Ordering::Relaxed) {
            let Some(&test) = to_run.get(next.fetch_add(1, Ordering::Relaxed) as usize) else { return };
            let one = || -> Result<(Vec<TestResult>, u64, f64)> {
                let source = word_source(spec.generator, spec.seed, spec.interleave)?;
                let arg = test.to_string();
                let out = pipe_words(&program, &[battery, &arg], source, None)?;
                if let Some(log) = &log {
                    let mut f = log.lock().expect("no thread panics holding the log");
                    writeln!(
                        f,
                        "==== {battery} test {test} ({}, {} words) ====\n{}",
                        out.command, out.words, out.stdout
                    )
                    .and_then(|()| f.flush())
                    .map_err(|e| Error::io("cannot write the battery's log file", e))?;
                }
                let tests = parse_testu01_tests(&out.stdout);
                if tests.is_empty() {
                    return Err(external_failed("warpmc-testu01", "its output has no test results", &out));
                }
                Ok((tests, out.words, testu01_cpu_seconds(&out.stdout).unwrap_or(0.0)))
            };
            match one() {
                Ok((tests, words, cpu)) => {
                    done.lock().expect("no thread panics holding the results").push((test, tests, words, cpu))
                }
                Err(e) => {
                    stop.store(true, Ordering::Relaxed);
                    first_error.lock().expect("no thread panics holding the error").get_or_insert(e);
                    return;
                }
            }
        }
    };
    let jobs = spec.jobs.min(to_run.len() as u32);
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(work);
        }
    });
    if let Some(e) = first_error.into_inner().expect("the workers have ended") {
        return Err(e);
    }
    let mut done = done.into_inner().expect("the workers have ended");
    let resumed = earlier.len();
    done.extend(earlier);
    done.sort_by_key(|(test, ..)| *test);
    let words = done.iter().map(|(_, _, w, _)| w).sum();
    let cpu: f64 = done.iter().map(|(.., c)| c).sum();
    let tests: Vec<TestResult> = done.into_iter().flat_map(|(_, t, ..)| t).collect();
    let mut which = if chosen.len() as u32 == count { String::new() } else { format!(" tests {}", test_list(&chosen)) };
    if resumed > 0 {
        which += &format!(" ({resumed} of them from the log of an earlier run)");
    }
    let mut summary = format!(
        "========= Summary results of {battery}{which}, each test alone ({} processes, up to {} at a time, \
         each on the words from their start) =========\n\n Generator:        {}, seed {}, {}\n \
         Number of statistics:  {}\n Total CPU time:   {}:{:02}:{:05.2} (TestU01's count, summed over the processes)\n",
        chosen.len(),
        spec.jobs,
        spec.generator.name(),
        spec.seed,
        if spec.interleave == 1 {
            "stream 0".to_string()
        } else {
            format!("streams 0..{} interleaved", spec.interleave)
        },
        tests.len(),
        (cpu / 3600.0).floor(),
        ((cpu / 60.0).floor() as u64) % 60,
        cpu % 60.0,
    );
    let outside: Vec<&TestResult> = tests.iter().filter(|t| !(0.001..=0.999).contains(&t.p_value)).collect();
    if outside.is_empty() {
        summary += "\n\n All tests were passed\n";
    } else {
        summary += "\n The following tests gave p-values outside [0.001, 0.9990]:\n\n       Test                          p-value\n \
                    ----------------------------------------------\n";
        for t in &outside {
            let (number, name) = t.name.split_once(' ').unwrap_or(("", &t.name));
            summary += &format!(" {number:>2}  {name:<30}{}\n", testu01_p_text(t.p_value));
        }
        summary += " ----------------------------------------------\n All other tests were passed\n";
    }
    Ok((tests, words, Some(summary)))
}

/// The seconds of TestU01's summary line ` Total CPU time:   00:01:23.45` (h:mm:ss.ss).
fn testu01_cpu_seconds(out: &str) -> Option<f64> {
    let line = out.lines().find_map(|l| l.trim().strip_prefix("Total CPU time:"))?;
    let mut seconds = 0.0;
    for part in line.trim().split(':') {
        seconds = seconds * 60.0 + part.trim().parse::<f64>().ok()?;
    }
    Some(seconds)
}

/// One test of a battery run alone: its number, its statistics, the words it read and
/// TestU01's CPU seconds.
type TestRun = (u32, Vec<TestResult>, u64, f64);

/// The tests a test-by-test log holds: each `==== <battery> test <n> (<command>, <w> words) ====`
/// block with its result lines (a block is written whole when its test ends).
fn logged_tests(log: &str, battery: &str) -> Vec<TestRun> {
    let prefix = format!("==== {battery} test ");
    let mut found: Vec<TestRun> = Vec::new();
    let mut block: Option<(u32, u64, String)> = None;
    let mut finish = |block: Option<(u32, u64, String)>| {
        if let Some((test, words, text)) = block {
            let tests = parse_testu01_tests(&text);
            if !tests.is_empty() && !found.iter().any(|(t, ..)| *t == test) {
                found.push((test, tests, words, testu01_cpu_seconds(&text).unwrap_or(0.0)));
            }
        }
    };
    for line in log.lines() {
        if let Some(rest) = line.strip_prefix(&prefix) {
            finish(block.take());
            let test = rest.split(' ').next().and_then(|n| n.parse().ok());
            let words = rest
                .rsplit_once(" words)")
                .and_then(|(head, _)| head.rsplit(' ').next())
                .and_then(|w| w.parse().ok())
                .unwrap_or(0);
            block = test.map(|t| (t, words, String::new()));
        } else if let Some((_, _, text)) = block.as_mut() {
            text.push_str(line);
            text.push('\n');
        }
    }
    finish(block);
    found
}

/// Test numbers as ranges: `[1, 2, 3, 7]` is `1-3,7`.
fn test_list(sorted: &[u32]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let mut j = i;
        while j + 1 < sorted.len() && sorted[j + 1] == sorted[j] + 1 {
            j += 1;
        }
        parts.push(if i == j { sorted[i].to_string() } else { format!("{}-{}", sorted[i], sorted[j]) });
        i = j + 1;
    }
    parts.join(",")
}

/// An external battery's output.
struct ExternalRun {
    command: String,
    stdout: String,
    stderr: String,
    words: u64,
}

/// Run `program args`, writing `src`'s words to its stdin as raw little-endian `u32` until it
/// closes the pipe, and collect its output (also appended to `log` as it arrives, when given). A
/// missing program is an error naming the command that installs it; so is a non-zero exit.
/// A new (or emptied) log file.
fn create_log(path: &Path) -> Result<std::fs::File> {
    std::fs::File::create(path).map_err(|e| Error::io(format!("cannot create the log file {}", path.display()), e))
}

fn pipe_words(program: &Path, args: &[&str], mut src: WordSource, log: Option<&Path>) -> Result<ExternalRun> {
    let command = std::iter::once(program.display().to_string())
        .chain(args.iter().map(|a| a.to_string()))
        .collect::<Vec<_>>()
        .join(" ");
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| {
            let what = if e.kind() == std::io::ErrorKind::NotFound {
                format!("cannot run `{command}`: {} is not installed ({INSTALL_HINT})", program.display())
            } else {
                format!("cannot run `{command}`")
            };
            Error::io(what, e)
        })?;
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let writer = std::thread::spawn(move || -> std::io::Result<u64> {
        let mut words = vec![0u32; SOURCE_BUFFER];
        let mut bytes = vec![0u8; 4 * SOURCE_BUFFER];
        let mut sent = 0u64;
        loop {
            src.fill(&mut words);
            for (b, w) in bytes.chunks_exact_mut(4).zip(&words) {
                b.copy_from_slice(&w.to_le_bytes());
            }
            match stdin.write_all(&bytes) {
                Ok(()) => sent += words.len() as u64,
                // The program has read all it wanted and exited: the normal end.
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return Ok(sent),
                Err(e) => return Err(e),
            }
        }
    });
    let mut log = log.map(create_log).transpose()?;
    let mut stdout_pipe = child.stdout.take().expect("stdout is piped");
    let mut stderr_pipe = child.stderr.take().expect("stderr is piped");
    let stderr_reader = std::thread::spawn(move || {
        let mut text = Vec::new();
        std::io::Read::read_to_end(&mut stderr_pipe, &mut text).map(|_| text)
    });
    let mut stdout = Vec::new();
    let mut chunk = vec![0u8; 1 << 14];
    loop {
        let n = std::io::Read::read(&mut stdout_pipe, &mut chunk)
            .map_err(|e| Error::io(format!("cannot read the output of `{command}`"), e))?;
        if n == 0 {
            break;
        }
        stdout.extend_from_slice(&chunk[..n]);
        if let Some(f) = log.as_mut() {
            f.write_all(&chunk[..n])
                .and_then(|()| f.flush())
                .map_err(|e| Error::io("cannot write the battery's log file", e))?;
        }
    }
    let status = child.wait().map_err(|e| Error::io(format!("waiting for `{command}`"), e))?;
    let stderr = stderr_reader
        .join()
        .expect("the reader thread does not panic")
        .map_err(|e| Error::io(format!("cannot read the errors of `{command}`"), e))?;
    let words = writer
        .join()
        .expect("the writer thread does not panic")
        .map_err(|e| Error::io(format!("cannot write words to `{command}`"), e))?;
    let run = ExternalRun {
        command,
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        words,
    };
    if !status.success() {
        return Err(external_failed(program.to_str().unwrap_or("the battery"), &format!("{status}"), &run));
    }
    Ok(run)
}

/// An external battery that ran but gave no usable result.
fn external_failed(program: &str, why: &str, run: &ExternalRun) -> Error {
    let tail = |s: &str| s.lines().rev().take(5).collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>().join(" | ");
    Error::io(
        format!("`{}` failed ({why}); stderr: {}; stdout ends: {}", run.command, tail(&run.stderr), tail(&run.stdout)),
        std::io::Error::other(format!("{program} gave no result")),
    )
}

/// A p-value as TestU01 prints it: `0.53`, `3.2e-12`, `eps` (below 1e-300: 0 here),
/// `1 - eps1` (above 1 - 1e-15: 1 here), `1 - 4.5e-7`; a trailing `*****` marks extremes.
fn parse_testu01_p(text: &str) -> Option<f64> {
    let t = text.trim().trim_end_matches('*').trim();
    if t == "eps" {
        Some(0.0)
    } else if let Some(rest) = t.strip_prefix("1 -") {
        let rest = rest.trim();
        if rest == "eps1" { Some(1.0) } else { rest.parse::<f64>().ok().map(|q| 1.0 - q) }
    } else {
        t.parse().ok()
    }
}

/// TestU01's output: every `p-value of test` of the per-test details, named after the test
/// (numbered as in TestU01's summary), and the "Summary results" block. Without details (a
/// quiet run) the results are the tests the summary lists.
fn parse_testu01(out: &str) -> (Vec<TestResult>, Option<String>) {
    let summary_at = out.find("========= Summary results of");
    let (details, summary) = match summary_at {
        Some(i) => (&out[..i], Some(out[i..].trim_end().to_string() + "\n")),
        None => (out, None),
    };
    let mut tests = Vec::new();
    let mut number = 0;
    let mut section = String::new();
    let mut caller: Option<String> = None;
    let mut heading: Option<String> = None;
    let mut statistic: Option<(String, f64)> = None;
    let mut in_section = 0;
    for line in details.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("Test ").filter(|r| r.contains(" calling ")) {
            caller = rest.split(" calling ").next().map(str::to_string);
        } else if let Some(name) = t.strip_suffix(" test:").filter(|n| !n.is_empty() && !n.contains(' ')) {
            number += 1;
            section = format!("{number} {}", caller.take().unwrap_or_else(|| name.to_string()));
            (heading, statistic, in_section) = (None, None, 0);
        } else if let Some(h) = t.strip_prefix("Test on the values of the Statistic ") {
            (heading, statistic) = (Some(h.trim().to_string()), None);
        } else if let Some((label, value)) = t.split_once(':') {
            let label = label.trim();
            if label == "p-value of test" {
                let Some(p) = parse_testu01_p(value) else { continue };
                let mut name = section.clone();
                if let Some(h) = &heading {
                    name += &format!(" {h}");
                }
                if let Some((l, _)) = statistic.as_ref().filter(|_| in_section > 0 && heading.is_none()) {
                    name += &format!(" ({l})");
                }
                let stat = statistic.take().map_or(f64::NAN, |(_, x)| x);
                tests.push(TestResult::new(name, stat, p));
                in_section += 1;
            } else if label.to_ascii_lowercase().contains("statistic")
                || label.to_ascii_lowercase().contains("observed number")
            {
                let value = value.trim().trim_end_matches('*').trim().parse().unwrap_or(f64::NAN);
                statistic = Some((label.to_string(), value));
            }
        }
    }
    if tests.is_empty()
        && let Some(s) = &summary
    {
        tests = parse_testu01_summary(s);
    }
    (tests, summary)
}

/// The tests a TestU01 summary lists (those outside `[0.001, 0.999]`): ` 1  BirthdaySpacings   eps`.
fn parse_testu01_summary(summary: &str) -> Vec<TestResult> {
    let mut tests = Vec::new();
    let mut in_table = false;
    for line in summary.lines() {
        if line.trim_start().starts_with("-----") {
            if in_table {
                break;
            }
            in_table = true;
            continue;
        }
        if !in_table || line.len() < 35 {
            continue;
        }
        let (head, p) = line.split_at(line.char_indices().nth(35).map_or(line.len(), |(i, _)| i));
        if let Some(p) = parse_testu01_p(p) {
            tests.push(TestResult::new(head.split_whitespace().collect::<Vec<_>>().join(" "), f64::NAN, p));
        }
    }
    tests
}

/// dieharder's table: `test_name|ntup|tsamples|psamples|p-value|Assessment`, one result per line.
fn parse_dieharder(out: &str) -> Vec<TestResult> {
    out.lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.split('|').map(str::trim).collect();
            if f.len() != 6 || !matches!(f[5], "PASSED" | "WEAK" | "FAILED") {
                return None;
            }
            let p: f64 = f[4].parse().ok()?;
            let name = if f[1] == "0" { f[0].to_string() } else { format!("{} (ntup {})", f[0], f[1]) };
            Some(TestResult::new(name, f64::NAN, p))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use warpmc_kernels::rng::{Generator, Philox4x32x10, Taus88, Uniform32};

    use super::*;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs().max(f64::MIN_POSITIVE)
    }

    #[test]
    fn quality_distributions_match_known_values() {
        // Chi-square critical values (df, x at upper tail 0.05).
        assert!(close(chi_square_upper(3.841458820694124, 1.0), 0.05, 1e-12));
        assert!(close(chi_square_upper(18.307038053275146, 10.0), 0.05, 1e-12));
        assert!(close(chi_square_upper(6.634896601021214, 1.0), 0.01, 1e-12));
        // df = 255 (the byte tests): 293.2478 is the 5% point to 7 digits.
        assert!((chi_square_upper(293.2478, 255.0) - 0.05).abs() < 1e-6);
        // df = 2: the tail is exactly exp(-x/2), also far out.
        for x in [0.1, 1.0, 10.0, 100.0, 1000.0] {
            assert!(close(chi_square_upper(x, 2.0), (-x / 2.0).exp(), 1e-13), "{x}");
        }
        // Large df (the pair tests): mean df, the tail at the mean is a little below 1/2, and
        // the normal approximation holds to 3 digits at +3 sd.
        let df = 65535.0;
        let at_mean = chi_square_upper(df, df);
        assert!(at_mean > 0.49 && at_mean < 0.5, "{at_mean}");
        let plus3 = chi_square_upper(df + 3.0 * (2.0 * df).sqrt(), df);
        assert!((plus3 - 0.00135).abs() < 2e-4, "{plus3}");
        // Normal tails and erfc, against libm's erfc and known values.
        assert!(close(normal_upper(1.959963984540054), 0.025, 1e-13));
        assert!(close(normal_upper(0.0), 0.5, 1e-15));
        assert!(close(normal_upper(6.0), 9.865876450376982e-10, 1e-12));
        assert!(close(normal_upper(-1.0), 0.8413447460685429, 1e-14));
        assert!(close(erfc(1.0), 0.1572992070502851, 1e-14));
        for i in -60..=260 {
            let x = i as f64 * 0.1;
            assert!(close(erfc(x), libm::erfc(x), 1e-12), "erfc({x}) = {} vs {}", erfc(x), libm::erfc(x));
        }
        // Poisson tails against direct sums.
        for lambda in [0.5f64, 4.0, 30.0] {
            let mut pmf = vec![(-lambda).exp()];
            for k in 1..300 {
                pmf.push(pmf[k - 1] * lambda / k as f64);
            }
            for k in 0..60 {
                let upper: f64 = pmf[k..].iter().rev().sum();
                assert!(close(poisson_at_least(k as u64, lambda), upper, 1e-12), "{k} {lambda}");
            }
        }
        assert!(close(poisson_at_least(1, 1.0), 1.0 - (-1.0f64).exp(), 1e-14));
        // ln Γ at integers and at 1/2.
        let mut fact = 1.0f64;
        for n in 1..30 {
            assert!(close(ln_gamma(n as f64), fact.ln(), 1e-14) || (n <= 2 && ln_gamma(n as f64).abs() < 1e-14));
            fact *= n as f64;
        }
        assert!(close(ln_gamma(0.5), std::f64::consts::PI.sqrt().ln(), 1e-14));
        // Tails far beyond f64: 0, not NaN.
        assert_eq!(chi_square_upper(1e6, 3.0), 0.0);
        assert_eq!(normal_upper(50.0), 0.0);
        assert_eq!(chi_square_upper(0.0, 255.0), 1.0);
    }

    #[test]
    fn quality_verdicts() {
        assert_eq!(Verdict::of(0.5), Verdict::Pass);
        assert_eq!(Verdict::of(1e-4), Verdict::Pass);
        assert_eq!(Verdict::of(9e-5), Verdict::Suspect);
        assert_eq!(Verdict::of(1.0 - 5e-5), Verdict::Suspect);
        assert_eq!(Verdict::of(1e-10), Verdict::Suspect);
        assert_eq!(Verdict::of(9e-11), Verdict::Fail);
        assert_eq!(Verdict::of(1.0), Verdict::Fail);
        assert_eq!(Verdict::of(0.0), Verdict::Fail);
        assert_eq!(Verdict::of(f64::NAN), Verdict::Fail);
        assert_eq!(format_p(0.5), "0.5000");
        assert_eq!(format_p(0.0), "<1e-300");
        assert_eq!(format_p(1.0 - 2e-7), "1 - 2.0e-7");
    }

    #[test]
    fn quality_rank_and_complexity_probabilities() {
        // Marsaglia's 32 x 32 values.
        let p = rank_probabilities(32, 32);
        for (r, want) in [(32, 0.2887880950866), (31, 0.5775761901732), (30, 0.1283502644829)] {
            assert!(close(p[r], want, 1e-9), "{r}: {}", p[r]);
        }
        assert!(close(p[..=29].iter().sum::<f64>(), 0.0052854502, 1e-6));
        for (m, n) in [(32, 32), (128, 128), (6, 8)] {
            assert!(close(rank_probabilities(m, n).iter().sum(), 1.0, 1e-12), "{m}x{n}");
        }
        let c = linear_complexity_classes(LC_BITS);
        assert!(close(c.iter().sum(), 1.0, 1e-12));
        let want = [1.0 / 96.0, 1.0 / 32.0, 1.0 / 8.0, 1.0 / 2.0, 1.0 / 4.0, 1.0 / 16.0, 1.0 / 48.0];
        for (got, want) in c.iter().zip(want) {
            assert!(close(*got, want, 1e-9), "{c:?}");
        }
    }

    /// Berlekamp–Massey the slow way, one bit per byte.
    fn complexity_by_definition(s: &[u8]) -> usize {
        let n = s.len();
        let (mut c, mut b) = (vec![0u8; n + 1], vec![0u8; n + 1]);
        (c[0], b[0]) = (1, 1);
        let (mut l, mut m) = (0usize, 1usize);
        for t in 0..n {
            let d = (0..=l).fold(0, |d, i| d ^ (c[i] & s[t - i]));
            if d == 0 {
                m += 1;
            } else if 2 * l <= t {
                let old = c.clone();
                for i in 0..=n - m {
                    c[i + m] ^= b[i];
                }
                (l, b, m) = (t + 1 - l, old, 1);
            } else {
                for i in 0..=n - m {
                    c[i + m] ^= b[i];
                }
                m += 1;
            }
        }
        l
    }

    fn pack(s: &[u8]) -> Vec<u64> {
        let mut bits = vec![0u64; s.len().div_ceil(64)];
        for (i, &b) in s.iter().enumerate() {
            bits[i / 64] |= u64::from(b) << (i % 64);
        }
        bits
    }

    #[test]
    fn quality_linear_complexity_and_rank() {
        // An LFSR of degree 7 (x^7 + x + 1, primitive): complexity 7.
        let mut s = vec![1u8, 0, 0, 1, 1, 0, 1];
        while s.len() < 1000 {
            let t = s.len();
            s.push(s[t - 7] ^ s[t - 6]);
        }
        assert_eq!(linear_complexity(&pack(&s), 1000), 7);
        assert_eq!(linear_complexity(&pack(&[0; 300]), 300), 0);
        let mut impulse = vec![0u8; 300];
        impulse[299] = 1;
        assert_eq!(linear_complexity(&pack(&impulse), 300), 300);
        // Random bits, every length from 1 to 300 and a long one: agrees with the slow version.
        let mut g = Philox4x32x10::stream(3, 0);
        let bits: Vec<u8> = (0..1000).map(|_| (g.next_u32() & 1) as u8).collect();
        for n in (1..300).chain([1000]) {
            assert_eq!(linear_complexity(&pack(&bits[..n]), n), complexity_by_definition(&bits[..n]), "{n}");
        }
        // taus88's lowest bit: the three components' degrees, 31 + 29 + 28.
        let mut g = Taus88::stream(1, 0);
        let s: Vec<u8> = (0..LC_BITS).map(|_| (g.next_u32() & 1) as u8).collect();
        assert_eq!(linear_complexity(&pack(&s), LC_BITS), 88);

        let mut identity: Vec<u128> = (0..128).map(|i| 1u128 << i).collect();
        assert_eq!(gf2_rank(&mut identity), 128);
        let mut rows = vec![0b011u128, 0b110, 0b101, 0b111];
        assert_eq!(gf2_rank(&mut rows), 3);
        assert_eq!(gf2_rank(&mut [0u128; 5]), 0);
    }

    #[test]
    fn quality_word_source_interleaves_streams() {
        for k in [1u64, 2, 5] {
            let mut src = word_source(GeneratorKind::Philox4x32x10, 9, k).unwrap();
            let mut streams: Vec<_> = (0..k).map(|s| Philox4x32x10::stream(9, s)).collect();
            let mut bulk = vec![0u32; 3 * SOURCE_BUFFER + 17];
            let single: Vec<u32> = (0..100).map(|_| src.next_u32()).collect();
            src.fill(&mut bulk);
            for (i, &w) in single.iter().chain(&bulk).enumerate() {
                assert_eq!(w, streams[i % k as usize].next_u32(), "interleave {k}, word {i}");
            }
            assert_eq!(src.words_produced(), 100 + bulk.len() as u64);
        }
        assert!(word_source(GeneratorKind::Philox4x32x10, 0, 0).is_err());
        assert!(word_source(GeneratorKind::Philox4x32x10, 0, INTERLEAVE_MAX + 1).is_err());
        let spec = QualitySpec { battery: Battery::SmallCrush, words: Some(1 << 22), ..Default::default() };
        assert!(spec.validate().is_err());
        assert!(QualitySpec { words: Some(1 << 10), ..Default::default() }.validate().is_err());
    }

    fn quick_run(generator: GeneratorKind, words: Option<u64>) -> QualityReport {
        let report = run(&QualitySpec { generator, seed: 12345, words, ..Default::default() }).unwrap();
        println!("{report}");
        report
    }

    fn verdict(r: &QualityReport, name: &str) -> Verdict {
        r.tests.iter().find(|t| t.name == name).unwrap_or_else(|| panic!("no test {name}")).verdict
    }

    /// A good generator passes everything, at full size.
    #[test]
    fn quality_quick_passes_philox() {
        let r = quick_run(GeneratorKind::Philox4x32x10, None);
        assert_eq!(r.tests.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), QUICK_TEST_NAMES);
        assert!(r.tests.iter().all(|t| t.verdict == Verdict::Pass), "{r}");
        assert!(r.passed());
        // Interleaved streams of a good generator are good too.
        let r = run(&QualitySpec {
            generator: GeneratorKind::Philox4x32x10,
            seed: 5,
            interleave: 1000,
            words: Some(1 << 22),
            ..Default::default()
        })
        .unwrap();
        assert!(r.passed(), "{r}");
    }

    /// The power-of-two LCG's low bits are periodic: the low-bit tests fail.
    #[test]
    fn quality_quick_fails_lcg32_low_bits() {
        let r = quick_run(GeneratorKind::Lcg32, Some(1 << 22));
        for name in [
            "low-byte-frequency",
            "low-byte-pairs",
            "birthday-spacings-low16x2",
            "binary-rank-low8-128x128",
            "linear-complexity-bit0",
        ] {
            assert_eq!(verdict(&r, name), Verdict::Fail, "{name}");
        }
        assert!(!r.passed());
    }

    /// A counter fails nearly everything.
    #[test]
    fn quality_quick_fails_adder() {
        let r = quick_run(GeneratorKind::Adder, Some(1 << 22));
        assert!(r.count(Verdict::Fail) >= 10, "{r}");
    }

    /// The hybrid Tausworthe's low bits are GF(2)-linear (taus88 XOR a period-256 LCG byte).
    #[test]
    fn quality_quick_fails_hybrid_taus_low_bits() {
        let r = quick_run(GeneratorKind::HybridTaus, Some(1 << 22));
        assert_eq!(verdict(&r, "binary-rank-low8-128x128"), Verdict::Fail);
        assert_eq!(verdict(&r, "linear-complexity-bit0"), Verdict::Fail);
        // Far beyond the threshold, within the first megabyte: 128 matrices, every one deficient.
        let mut src = word_source(GeneratorKind::HybridTaus, 12345, 1).unwrap();
        let t = binary_rank_low8(&mut src, 128);
        assert!(src.words_produced() * 4 <= 1 << 20);
        assert!(t.p_value < 1e-100, "{t:?}");
    }

    /// The quick battery on every generator at full size, seed 12345 (about a minute in
    /// release): the tests each generator fails are exactly those its structure predicts, and
    /// nothing else fails. Prints the table QUALITY.md quotes.
    #[test]
    fn quality_quick_every_generator() {
        const LOW_BITS_LINEAR: &[&str] = &["binary-rank-low8-128x128", "linear-complexity-bit0"];
        const LCG_LOW_BITS: &[&str] = &[
            "byte-frequency",
            "low-byte-frequency",
            "low-byte-pairs",
            "birthday-spacings-32",
            "birthday-spacings-high16x2",
            "birthday-spacings-low16x2",
            "binary-rank-low8-128x128",
            "linear-complexity-bit0",
        ];
        let expected_failures = |g: GeneratorKind| -> Vec<&'static str> {
            use GeneratorKind as K;
            match g {
                // GF(2)-linear low bits: taus88 and LFSR113 are linear, XORWOW's xorshift part is
                // (the Weyl counter's lowest bit only alternates), the hybrid Tausworthe's low
                // byte is taus88 XOR a period-256 LCG byte.
                K::HybridTaus | K::Taus88 | K::Lfsr113 | K::Xorwow => LOW_BITS_LINEAR.to_vec(),
                // The warp generator's lowest bit is the XOR of two state bits.
                K::Warp | K::WarpShfl => vec!["linear-complexity-bit0"],
                // Short-period low bits; their streams are blocks of one sequence (lcg32,
                // park-miller), whose neighbours' words are correlated in the Hamming test.
                K::Lcg32 | K::ParkMiller => [LCG_LOW_BITS, &["interstream-hamming"]].concat(),
                K::LcgPrime => LCG_LOW_BITS.to_vec(),
                // A counter.
                K::Adder => QUICK_TEST_NAMES.to_vec(),
                _ => vec![],
            }
        };
        for &g in GeneratorKind::ALL {
            let r = quick_run(g, None);
            let suspects: Vec<&str> =
                r.tests.iter().filter(|t| t.verdict == Verdict::Suspect).map(|t| t.name.as_str()).collect();
            let mut failed: Vec<&str> =
                r.tests.iter().filter(|t| t.verdict == Verdict::Fail).map(|t| t.name.as_str()).collect();
            println!(
                "| {g} | {:.1} s | {} | {} | {} |",
                r.seconds,
                failed.len(),
                failed.join(", "),
                suspects.join(", ")
            );
            let mut expected = expected_failures(g);
            failed.sort_unstable();
            expected.sort_unstable();
            assert_eq!(failed, expected, "{g}: the failed tests\n{r}");
        }
    }

    #[test]
    fn quality_parses_external_output() {
        let testu01 = "\
***********************************************************
Test sknuth_Collision calling smultin_Multinomial

smultin_Multinomial test:
-----------------------------------------------
Observed number of collisions         :     2856
p-value of test                       :    0.84
***********************************************************
sknuth_MaxOft test:
Chi-square statistic                  :99064.80
p-value of test                       :    0.98
Anderson-Darling statistic            :    0.15
p-value of test                       :    eps  *****
swalk_RandomWalk1 test:
Test on the values of the Statistic H
ChiSquare statistic                   :   42.74
p-value of test                       :    1 - 3.2e-12 *****

========= Summary results of SmallCrush =========

 Version:          TestU01 1.2.3
 Generator:        
 Number of statistics:  15
 Total CPU time:   00:00:05.34
 The following tests gave p-values outside [0.001, 0.9990]:
 (eps  means a value < 1.0e-300):
 (eps1 means a value < 1.0e-15):

       Test                          p-value
 ----------------------------------------------
"
        .to_string()
            + &format!(" {:2}  {:<30}{}\n", 6, "MaxOft AD", "   eps  ")
            + &format!(" {:2}  {:<30}{}\n", 8, "RandomWalk1 H", " 1 - 3.2e-12")
            + " ----------------------------------------------\n All other tests were passed\n";
        let (tests, summary) = parse_testu01(&testu01);
        let got: Vec<(&str, f64)> = tests.iter().map(|t| (t.name.as_str(), t.p_value)).collect();
        assert_eq!(
            got,
            [
                ("1 sknuth_Collision", 0.84),
                ("2 sknuth_MaxOft", 0.98),
                ("2 sknuth_MaxOft (Anderson-Darling statistic)", 0.0),
                ("3 swalk_RandomWalk1 H", 1.0 - 3.2e-12)
            ]
        );
        assert_eq!(tests[0].statistic, 2856.0);
        assert_eq!(tests[3].verdict, Verdict::Fail);
        let summary = summary.unwrap();
        assert!(summary.starts_with("========= Summary results of SmallCrush"));
        let flagged = parse_testu01_summary(&summary);
        let got: Vec<(&str, f64)> = flagged.iter().map(|t| (t.name.as_str(), t.p_value)).collect();
        assert_eq!(got, [("6 MaxOft AD", 0.0), ("8 RandomWalk1 H", 1.0 - 3.2e-12)]);

        let dieharder = "\
        test_name   |ntup| tsamples |psamples|  p-value |Assessment
#=============================================================================#
   diehard_birthdays|   0|       100|     100|0.47154095|  PASSED  
          sts_serial|   2|    100000|     100|0.00000000|  FAILED  
";
        let tests = parse_dieharder(dieharder);
        assert_eq!(tests.len(), 2);
        assert_eq!((tests[0].name.as_str(), tests[0].p_value), ("diehard_birthdays", 0.47154095));
        assert_eq!((tests[1].name.as_str(), tests[1].verdict), ("sts_serial (ntup 2)", Verdict::Fail));
    }

    #[test]
    fn quality_missing_program_names_the_install_command() {
        let src = word_source(GeneratorKind::Philox4x32x10, 1, 1).unwrap();
        let Err(e) = pipe_words(Path::new("warpmc-no-such-battery"), &[], src, None) else { panic!("ran") };
        assert!(e.to_string().contains("cargo xtask setup --quality"), "{e}");
    }

    fn external(generator: GeneratorKind, battery: Battery) -> QualityReport {
        let r = run(&QualitySpec { generator, seed: 12345, battery, ..Default::default() }).unwrap();
        println!("{r}");
        r
    }

    /// Needs TestU01Drv (`cargo xtask setup --quality`, which `cargo xtask test` runs); about 6 s
    /// for each of 3 generators.
    #[test]
    fn quality_smallcrush() {
        let r = external(GeneratorKind::Philox4x32x10, Battery::SmallCrush);
        assert!(r.tests.len() >= 15 && r.passed(), "{r}");
        let r = external(GeneratorKind::HybridTaus, Battery::SmallCrush);
        assert!(r.tests.len() >= 15, "{r}");
        let r = external(GeneratorKind::Lcg32, Battery::SmallCrush);
        assert!(!r.passed(), "{r}");
    }

    /// Needs warpmc-testu01 (`cargo xtask setup --quality` builds it); about 6 s for each of 2
    /// generators. Each test of SmallCrush alone, 3 processes at a time: the battery's 10 tests
    /// and 15 statistics in its order, the verdicts of the whole battery, and test 1 (which also
    /// starts at the stream's first word in the whole battery) with the whole battery's p-value.
    #[test]
    fn quality_smallcrush_by_test() {
        let spec = |generator, jobs| QualitySpec {
            generator,
            seed: 12345,
            battery: Battery::SmallCrush,
            jobs,
            ..Default::default()
        };
        let by_test = run(&spec(GeneratorKind::Philox4x32x10, 3)).unwrap();
        println!("{by_test}");
        assert_eq!(by_test.tests.len(), 15, "{by_test}");
        let numbers: Vec<u32> =
            by_test.tests.iter().map(|t| t.name.split(' ').next().unwrap().parse().unwrap()).collect();
        assert_eq!(numbers, [1, 2, 3, 4, 5, 6, 6, 7, 8, 9, 10, 10, 10, 10, 10]);
        assert_eq!(by_test.tests[0].name, "1 BirthdaySpacings");
        assert!(by_test.passed(), "{by_test}");
        let whole = run(&spec(GeneratorKind::Philox4x32x10, 1)).unwrap();
        let (p_whole, p_alone) = (whole.tests[0].p_value, by_test.tests[0].p_value);
        // TestU01 prints two decimals in its details (the whole battery's p); the driver all 17.
        assert!((p_whole - p_alone).abs() <= 0.0051, "test 1: whole battery p = {p_whole}, alone p = {p_alone}");
        let lcg = run(&spec(GeneratorKind::Lcg32, 2)).unwrap();
        assert!(!lcg.passed() && lcg.count(Verdict::Fail) >= 10, "{lcg}");
        assert!(lcg.external.as_deref().unwrap().contains(" 1  BirthdaySpacings              eps"), "{lcg}");

        for (jobs, battery) in
            [(0, Battery::SmallCrush), (JOBS_MAX + 1, Battery::Crush), (2, Battery::Quick), (2, Battery::Dieharder)]
        {
            let e = run(&QualitySpec { battery, jobs, ..Default::default() }).unwrap_err();
            assert!(e.to_string().contains("jobs"), "{e}");
        }
        let e =
            run(&QualitySpec { battery: Battery::Crush, tests: Some(vec![1, 97]), ..Default::default() }).unwrap_err();
        assert!(e.to_string().contains("tests") && e.to_string().contains("[1, 96]"), "{e}");
        assert_eq!(test_list(&[1, 2, 3, 7, 9, 10]), "1-3,7,9-10");

        // A run split in two: the second resumes from the first one's log and runs only the rest.
        let dir = std::env::temp_dir().join(format!("warpmc-resume-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let log = dir.join("smallcrush.log");
        let part = |tests: Option<Vec<u32>>, resume| QualitySpec {
            generator: GeneratorKind::Philox4x32x10,
            seed: 12345,
            battery: Battery::SmallCrush,
            jobs: 2,
            tests,
            resume,
            log: Some(log.clone()),
            ..Default::default()
        };
        let _ = std::fs::remove_file(&log);
        let first = run(&part(Some(vec![1, 2, 9]), false)).unwrap();
        assert_eq!(first.tests.len(), 3);
        let whole = run(&part(None, true)).unwrap();
        assert_eq!(whole.tests.len(), 15, "{whole}");
        assert!(whole.external.as_deref().unwrap().contains("(3 of them from the log of an earlier run)"), "{whole}");
        for (a, b) in by_test.tests.iter().zip(&whole.tests) {
            assert_eq!((&a.name, a.p_value), (&b.name, b.p_value), "resumed results equal one run's");
        }
        // Without --resume an earlier run's log is refused, not overwritten.
        let e = run(&part(Some(vec![1]), false)).unwrap_err();
        assert!(e.to_string().contains("log") && e.to_string().contains("--resume"), "{e}");
        assert_eq!(logged_tests(&std::fs::read_to_string(&log).unwrap(), "SmallCrush").len(), 10, "its 10 tests kept");
        let other = QualitySpec { seed: 1, ..part(None, true) };
        let e = run(&other).unwrap_err();
        assert!(e.to_string().contains("resume"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(testu01_cpu_seconds(" Total CPU time:   01:02:03.50\n"), Some(3723.5));
    }

    /// Needs dieharder (`cargo xtask setup --quality`, which `cargo xtask test` runs); about 30 s.
    #[test]
    fn quality_dieharder_few_tests() {
        // -d 0: birthdays, 2: 32x32 binary rank, 100: STS monobit, 15: runs.
        for (g, test, pass) in [
            (GeneratorKind::Philox4x32x10, "0", true),
            (GeneratorKind::Philox4x32x10, "2", true),
            (GeneratorKind::Philox4x32x10, "100", true),
            (GeneratorKind::HybridTaus, "2", true),
            (GeneratorKind::Adder, "0", false),
            (GeneratorKind::Adder, "15", false),
        ] {
            let start = Instant::now();
            let source = word_source(g, 12345, 1).unwrap();
            let out = pipe_words(Path::new("dieharder"), &["-g", "200", "-d", test], source, None).unwrap();
            let tests = parse_dieharder(&out.stdout);
            let line = tests.iter().map(|t| format!("{} p = {} ({})", t.name, format_p(t.p_value), t.verdict));
            println!(
                "{g} -d {test}: {:.1} s, {} words: {}",
                start.elapsed().as_secs_f64(),
                out.words,
                line.collect::<Vec<_>>().join(", ")
            );
            assert!(!tests.is_empty(), "{}", out.stdout);
            assert_eq!(tests.iter().all(|t| t.verdict != Verdict::Fail), pass, "{}", out.stdout);
        }
    }
}
