//! Warp divergence of rejection loops: the maximum of K geometric variables, and the pre-caching
//! model of D. B. Thomas, "Rejection methods on GPUs".
//!
//! # The lockstep rejection loop
//!
//! A warp of `K` lanes runs a rejection loop in lockstep. In each iteration every lane draws one
//! candidate, accepted with probability `p` independently of everything else (`q = 1 - p`). A lane
//! that has accepted keeps executing the loop body (its work is masked off), and the warp leaves
//! the loop only when every lane has accepted. The number of iterations the warp executes is
//! therefore `L_K = max(G_1, ..., G_K)` for independent geometric variables `G_i` on `{1, 2, ...}`:
//!
//! ```text
//! P(L_K <= n) = (1 - q^n)^K,   E[L_K] = sum_{n>=0} (1 - (1 - q^n)^K).
//! ```
//!
//! One lane alone needs `1/p` iterations on average; the warp needs `E[L_K]`, which grows like
//! `H_K / -ln q` (`H_K` the harmonic number) for small `p`. See [`expected_max_geometric`],
//! [`variance_max_geometric`], [`max_geometric_cdf`], [`max_geometric_sf`] and
//! [`max_geometric_pmf`].
//!
//! # Pre-caching
//!
//! The candidates that finished lanes compute while they wait are not wasted if the lane keeps the
//! first accepted one for its next call ("pre-caching"). Each lane holds at most one cached value
//! between calls. One call of the sampler (one value per lane) works as in the seed's code:
//!
//! * at entry a lane that holds a cached value makes it its current value (the cache is emptied);
//! * in each iteration every lane draws one candidate. A lane without a current value takes an
//!   accepted candidate as its current value; a lane that had a current value *before* this
//!   iteration and has no cached value takes an accepted candidate as its cache; a lane that has
//!   both discards it. A lane that gets its current value in an iteration does not also cache in
//!   that iteration (one candidate per lane per iteration);
//! * the loop ends when every lane has a current value.
//!
//! Two loop shapes are modelled ([`Loop`]): [`Loop::DoWhile`] (the seed's `do { } while (!__all(..))`:
//! the body runs at least once, even when every lane entered with a cached value) and
//! [`Loop::While`] (the vote is taken before each iteration, so a call in which every lane entered
//! with a cached value runs zero iterations).
//!
//! Within a call the state is `(r, c)`: `r` lanes still without a current value and `c` lanes
//! holding a cached value, `0 <= r`, `0 <= c <= K - r`. One iteration maps it to
//!
//! ```text
//! r' = r - Binomial(r, p),   c' = c + Binomial(K - r - c, p)   (independent),
//! ```
//!
//! and the states with `r = 0` are absorbing (the loop has ended). A call that ends with `c` cached
//! values starts the next call in state `(r, c) = (K - c, 0)`: the cached values become current
//! values. (The seed's prose maps the output state `(0, c)` to the input state `(K, c)`; that
//! contradicts its own code, where `currentSample = cachedSample` at entry, and the code is what is
//! modelled here.) The very first call starts with an empty cache, `(K, 0)`.
//!
//! The cache count between calls is therefore a Markov chain on `0..=K` whose transition matrix
//! `P[m][j]` (entry cache count `m`, exit cache count `j`) is the absorption distribution of the
//! within-call chain started from `(K - m, 0)`. [`cached_model`] computes `P`, the expected number
//! of iterations `e[m]` of a call entered with `m` cached values, the stationary distribution `pi`
//! of the cache count, and the steady-state cost per call `E_cached = sum_m pi[m] e[m]`.
//!
//! ## Consequences worth knowing
//!
//! * A call that runs at least one iteration with `r >= 1` at entry ends with at most `K - 1`
//!   cached values: the lanes that obtain their current value in the final iteration cannot cache
//!   in it. So the entry state `m = K` (every lane entered with a cached value) is never reached
//!   from the first call, and the two loop shapes have the same stationary distribution
//!   (`pi[K] = 0`) and the same `E_cached`. They differ only in the row `m = K` of `P` and in
//!   `e[K]` (1 for `DoWhile`, 0 for `While`), i.e. only if a warp could be started with a full
//!   cache.
//! * With one lane (`K = 1`) caching never happens, so `E_cached = 1/p`; with `p = 1` every call
//!   takes exactly one iteration and nothing is ever cached.
//!
//! # Numerical methods
//!
//! * `E[L_K]` is summed term by term from `1 - (1 - q^n)^K = -expm1(K ln1p(-q^n))` (no
//!   cancellation), with a rigorous tail bound as the stopping rule; the textbook alternating form
//!   `sum_j (-1)^{j+1} C(K, j) / (1 - q^j)` loses most of its digits for `K = 32` and is not used.
//!   For `p < 1e-4` an Euler-Maclaurin form is used instead (the sum would need `~40/p` terms).
//! * The within-call chain only moves to states with `r' <= r` and `c' >= c`, so it is acyclic
//!   apart from self-loops. The absorption distribution and the first two moments of the number of
//!   iterations are computed exactly by back-substitution in that order, dividing by
//!   `1 - P(stay) = -expm1((r + K - r - c) ln q)`: all terms are non-negative, there is no truncation
//!   and the cost (`~K^5/24` multiply-adds, 5e7 for `K = 64`) does not depend on `p`.
//! * [`call_distribution`] iterates the probability mass forwards instead (the seed's method) until
//!   the mass still in the loop is below a tolerance, and also yields the distribution of the
//!   number of iterations of a call; it reports an error if the iteration cap is reached first.
//! * The stationary distribution is solved directly with the GTH (Grassmann-Taksar-Heyman)
//!   elimination, which uses no subtractions, on the class of cache counts reachable from the
//!   first call (an empty cache); the residual `|pi P - pi|_1` is reported.
//!
//! # The other samplers' acceptance
//!
//! The lockstep model needs each method's per-attempt acceptance probability, computed here
//! from the kernels' own constants rather than quoted:
//!
//! * **Ziggurat** ([`ziggurat_acceptance`]): an attempt's point is uniform over the `N` strips
//!   of area `v`, and the accepted region is the area under `f` (normal: all of it, `sqrt(π/2)`,
//!   the tail being finished by its own inner loop; exponential: `1 - e^{-r}`, a tail visit
//!   restarting the main loop), so `p = sqrt(π/2) / (128 v)` and `(1 - e^{-r}) / (256 v)`.
//!   The normal's tail retries (4.3e-5 per value) are not modelled.
//! * **Poisson, `λ < 10`** ([`poisson_inversion_model`]): sequential search makes `k + 1`
//!   comparisons for the value `k`, so a warp executes `max_i (k_i + 1)` iterations:
//!   `E = sum_{n>=0} (1 - F(n - 1)^K)` with `F` the Poisson CDF ([`expected_max_iid`]). Not a
//!   rejection loop, but the same lockstep cost.
//! * **Poisson, `λ >= 10`, PTRS** ([`ptrs_acceptance`]): given the attempt's `u`, the
//!   attempt accepts with probability `P(v <= h(u))` where `v` is uniform and `h` the region
//!   the tests cut out of `(0, 1)` (the squeeze `v <= v_r` where `us >= 0.07`, `v <= us` where
//!   `us < 0.013`, and `v <= exp(ln_pmf(k)) (a/us² + b) / (1/α)`); integrating over `u` (midpoint
//!   rule) gives `p`, and the accepted mass per `k`, which must be the Poisson pmf times `p` if
//!   the transcription of the method is right (a test checks it).

use std::fmt::Write as _;

/// The largest warp size the cached model accepts (`k <= 64`).
pub const MAX_LANES: u32 = 64;

/// Below this acceptance probability [`expected_max_geometric`] and [`variance_max_geometric`]
/// switch from direct summation (about `40/p` terms) to their Euler-Maclaurin forms.
pub const SMALL_P: f64 = 1e-4;

/// The shape of the warp's rejection loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loop {
    /// `do { body } while (!__all(done))`, as in the seed's code: the body runs at least once per
    /// call, even when every lane entered with a cached value.
    DoWhile,
    /// `while (!__all(done)) { body }`: the vote is taken before each iteration, so a call in which
    /// every lane entered with a cached value runs zero iterations.
    While,
}

fn valid_p(p: f64) -> bool {
    p > 0.0 && p <= 1.0 // false for NaN
}

/// `q^n` from `ln q`, with `q^0 = 1` also when `q = 0`.
fn q_pow(ln_q: f64, n: u64) -> f64 {
    if n == 0 { 1.0 } else { (ln_q * n as f64).exp() }
}

/// Neumaier's compensated sum.
#[derive(Clone, Copy, Default)]
struct Sum {
    s: f64,
    c: f64,
}

impl Sum {
    fn add(&mut self, x: f64) {
        let t = self.s + x;
        if self.s.abs() >= x.abs() {
            self.c += (self.s - t) + x;
        } else {
            self.c += (x - t) + self.s;
        }
        self.s = t;
    }
    fn value(&self) -> f64 {
        self.s + self.c
    }
}

/// CDF of the warp's iteration count: `P(L_K <= n) = (1 - q^n)^K`, `q = 1 - p`.
///
/// The probability that a warp of `k` lanes, each accepting with probability `p` per iteration,
/// has finished its rejection loop within `n` iterations. Computed as `exp(K ln1p(-q^n))`.
/// Returns NaN if `p` is not in `(0, 1]` or `k == 0`.
pub fn max_geometric_cdf(p: f64, k: u32, n: u64) -> f64 {
    if !valid_p(p) || k == 0 {
        return f64::NAN;
    }
    if n == 0 {
        return 0.0;
    }
    let x = q_pow((-p).ln_1p(), n);
    (k as f64 * (-x).ln_1p()).exp()
}

/// Survival function of the warp's iteration count: `P(L_K > n) = 1 - (1 - q^n)^K`.
///
/// The probability that the warp still needs more than `n` iterations; computed as
/// `-expm1(K ln1p(-q^n))`, accurate far into the tail where the CDF rounds to 1.
/// Returns NaN if `p` is not in `(0, 1]` or `k == 0`.
pub fn max_geometric_sf(p: f64, k: u32, n: u64) -> f64 {
    if !valid_p(p) || k == 0 {
        return f64::NAN;
    }
    if n == 0 {
        return 1.0;
    }
    let x = q_pow((-p).ln_1p(), n);
    -(k as f64 * (-x).ln_1p()).exp_m1()
}

/// Probability mass of the warp's iteration count:
/// `P(L_K = n) = (1 - q^n)^K - (1 - q^(n-1))^K` (0 for `n = 0`, `p^K` for `n = 1`).
///
/// The probability that the warp's loop runs exactly `n` iterations. Evaluated without
/// cancellation as `(1 - q^n)^K * (1 - (1 - p q^(n-1) / (1 - q^n))^K)`, using `ln1p`/`expm1`.
/// Returns NaN if `p` is not in `(0, 1]` or `k == 0`.
pub fn max_geometric_pmf(p: f64, k: u32, n: u64) -> f64 {
    if !valid_p(p) || k == 0 {
        return f64::NAN;
    }
    let kf = k as f64;
    match n {
        0 => 0.0,
        1 => (kf * p.ln()).exp(),
        _ => {
            let ln_q = (-p).ln_1p();
            let x_n = q_pow(ln_q, n);
            let one_minus_x_n = -(ln_q * n as f64).exp_m1();
            let ratio = p * q_pow(ln_q, n - 1) / one_minus_x_n; // < 1 for n >= 2
            let cdf_n = (kf * (-x_n).ln_1p()).exp();
            cdf_n * -(kf * (-ratio).ln_1p()).exp_m1()
        }
    }
}

/// `(H_K, sum_{i<=K} 1/i^2)`: mean and variance of the maximum of `K` unit exponentials.
fn harmonic(k: u32) -> (f64, f64) {
    let (mut h1, mut h2) = (Sum::default(), Sum::default());
    for i in (1..=k).rev() {
        let x = 1.0 / i as f64;
        h1.add(x);
        h2.add(x * x);
    }
    (h1.value(), h2.value())
}

/// `E[L_K]` by direct summation of `sum_{n>=0} P(L_K > n)`.
fn expected_max_geometric_sum(p: f64, k: u32) -> f64 {
    let kf = k as f64;
    let ln_q = (-p).ln_1p();
    let q = 1.0 - p;
    let mut sum = Sum::default();
    sum.add(1.0); // n = 0
    let mut n: u64 = 1;
    loop {
        let x = q_pow(ln_q, n);
        sum.add(-(kf * (-x).ln_1p()).exp_m1());
        // P(L_K > m) <= K q^m, so the rest of the sum is at most K q^(n+1) / p.
        if kf * x * q / p <= 1e-17 * sum.value() {
            return sum.value();
        }
        n += 1;
    }
}

/// `E[L_K]` for small `p` by Euler-Maclaurin: `H_K / -ln q + 1/2`; the neglected terms are
/// `O(p^3)` for `K = 2, 3` and `O(p^(K-1))` beyond (`K >= 2`).
fn expected_max_geometric_small_p(p: f64, k: u32) -> f64 {
    let a = -(-p).ln_1p();
    harmonic(k).0 / a + 0.5
}

/// Expected iteration count of a warp of `k` lanes: `E[L_K] = sum_{n>=0} (1 - (1 - q^n)^K)`.
///
/// `L_K = max(G_1, ..., G_K)` with `G_i` geometric on `{1, 2, ...}` with success probability `p`:
/// the mean number of lockstep iterations of a rejection loop whose per-lane acceptance
/// probability is `p` (`1/p` for one lane). Equal to the alternating form
/// `sum_{j=1..K} (-1)^{j+1} C(K, j) / (1 - q^j)`, which is not used because it cancels badly.
/// Each term is `-expm1(K ln1p(-q^n))`; the sum stops when the tail bound `K q^(n+1) / p` is below
/// `1e-17` of the sum. For `K = 1` the exact `1/p` is returned; for `p <` [`SMALL_P`] the
/// Euler-Maclaurin form `H_K / -ln(1 - p) + 1/2` (neglected terms `O(p^3)` absolute; it agrees
/// with the direct sum to about `1e-15` relative at the switch).
/// Returns NaN if `p` is not in `(0, 1]` or `k == 0`.
pub fn expected_max_geometric(p: f64, k: u32) -> f64 {
    if !valid_p(p) || k == 0 {
        return f64::NAN;
    }
    if k == 1 {
        1.0 / p
    } else if p < SMALL_P {
        expected_max_geometric_small_p(p, k)
    } else {
        expected_max_geometric_sum(p, k)
    }
}

/// `Var[L_K]` by direct summation.
fn variance_max_geometric_sum(p: f64, k: u32) -> f64 {
    let kf = k as f64;
    let ln_q = (-p).ln_1p();
    let q = 1.0 - p;
    let (mut t, mut w) = (Sum::default(), Sum::default());
    let mut n: u64 = 1;
    loop {
        let x = q_pow(ln_q, n);
        let s = -(kf * (-x).ln_1p()).exp_m1();
        t.add(s);
        w.add((2 * n - 1) as f64 * s);
        // sum_{m>n} 2 m K q^m = 2 K q^(n+1) ((n+1)/p + q/p^2) bounds the rest of w (and of t).
        let nf = n as f64;
        if 2.0 * kf * x * q * ((nf + 1.0) / p + q / (p * p)) <= 1e-17 * w.value() {
            break;
        }
        n += 1;
    }
    let t = t.value();
    (w.value() - t * t).max(0.0)
}

/// Variance of the warp's iteration count:
/// `Var[L_K] = sum_{n>=1} (2n - 1) S_n - (sum_{n>=1} S_n)^2`, `S_n = P(L_K > n) = 1 - (1 - q^n)^K`.
///
/// This arrangement of `E[L^2] - E[L]^2` (with `E[L] = 1 + sum_{n>=1} S_n` and
/// `E[L^2] = sum_{n>=0} (2n + 1) S_n`) does not cancel when `p` is close to 1 (`Var ~ K q`). For
/// `K = 1` the exact `q/p^2` is returned; for `p <` [`SMALL_P`] the Euler-Maclaurin form
/// `(sum_{i<=K} 1/i^2) / a^2 + 1/12`, `a = -ln(1 - p)` (`K >= 2`).
/// Returns NaN if `p` is not in `(0, 1]` or `k == 0`.
pub fn variance_max_geometric(p: f64, k: u32) -> f64 {
    if !valid_p(p) || k == 0 {
        return f64::NAN;
    }
    if k == 1 {
        (1.0 - p) / (p * p)
    } else if p < SMALL_P {
        variance_max_geometric_small_p(p, k)
    } else {
        variance_max_geometric_sum(p, k)
    }
}

/// `Var[L_K]` for small `p` by Euler-Maclaurin (`K >= 2`).
fn variance_max_geometric_small_p(p: f64, k: u32) -> f64 {
    let a = -(-p).ln_1p();
    harmonic(k).1 / (a * a) + 1.0 / 12.0
}

/// Binomial probabilities `t[n][j] = C(n, j) s^j f^(n-j)` for `n <= n_max`, built by the
/// recurrence `t[n][j] = s t[n-1][j-1] + f t[n-1][j]` (no cancellation); `f = 1 - s` is passed in
/// separately so that neither is rounded through the other.
fn binomial_table(n_max: usize, s: f64, f: f64) -> Vec<Vec<f64>> {
    let mut t: Vec<Vec<f64>> = Vec::with_capacity(n_max + 1);
    t.push(vec![1.0]);
    for n in 1..=n_max {
        let prev = &t[n - 1];
        let mut row = vec![0.0; n + 1];
        for (j, slot) in row.iter_mut().enumerate() {
            let from_fail = if j < n { f * prev[j] } else { 0.0 };
            let from_succ = if j > 0 { s * prev[j - 1] } else { 0.0 };
            *slot = from_fail + from_succ;
        }
        t.push(row);
    }
    t
}

/// The within-call chain on states `(r, c)`, `r + c <= K`.
struct Chain {
    k: usize,
    ln_q: f64,
    caching: bool,
    /// `offset[r]`: index of state `(r, 0)`; state `(r, c)` is `offset[r] + c`.
    offset: Vec<usize>,
    /// `stay_binom[r][r']`: probability that `r'` of `r` lanes reject, `Binomial(r, q)`.
    stay_binom: Vec<Vec<f64>>,
    /// `acc_binom[n][g]`: probability that `g` of `n` lanes accept, `Binomial(n, p)`.
    acc_binom: Vec<Vec<f64>>,
}

impl Chain {
    fn new(p: f64, k: u32, caching: bool) -> Chain {
        let k = k as usize;
        let q = 1.0 - p;
        let mut offset = Vec::with_capacity(k + 2);
        let mut acc = 0;
        for r in 0..=k + 1 {
            offset.push(acc);
            if r <= k {
                acc += k - r + 1;
            }
        }
        Chain {
            k,
            ln_q: (-p).ln_1p(),
            caching,
            offset,
            stay_binom: binomial_table(k, q, p),
            acc_binom: binomial_table(k, p, q),
        }
    }

    fn n_states(&self) -> usize {
        self.offset[self.k + 1]
    }

    fn idx(&self, r: usize, c: usize) -> usize {
        self.offset[r] + c
    }

    /// Lanes that can take a cache in this iteration: current value before it, no cache yet.
    fn free(&self, r: usize, c: usize) -> usize {
        if self.caching { self.k - r - c } else { 0 }
    }

    /// Exit distribution over the cache count when the loop body runs once with every lane
    /// already holding a current value (entry state `(0, 0)` under `DoWhile`).
    fn one_idle_iteration(&self) -> Vec<f64> {
        if self.caching {
            self.acc_binom[self.k].clone()
        } else {
            let mut v = vec![0.0; self.k + 1];
            v[0] = 1.0;
            v
        }
    }
}

/// Exact absorption quantities of the within-call chain, by back-substitution.
struct Absorption {
    /// `exit[s * (K + 1) + j]`: probability that the loop started in state `s` ends with `j` caches.
    exit: Vec<f64>,
    /// Expected number of iterations from each state.
    mean: Vec<f64>,
    /// Second moment of the number of iterations from each state.
    second: Vec<f64>,
}

fn absorb(ch: &Chain) -> Absorption {
    let k = ch.k;
    let w = k + 1;
    let ns = ch.n_states();
    let mut exit = vec![0.0; ns * w];
    let mut mean = vec![0.0; ns];
    let mut second = vec![0.0; ns];
    for c in 0..=k {
        exit[ch.idx(0, c) * w + c] = 1.0;
    }
    let mut acc_exit = vec![0.0; w];
    for r in 1..=k {
        for c in (0..=k - r).rev() {
            let s = ch.idx(r, c);
            let nf = ch.free(r, c);
            // P(stay) = q^r q^nf; 1 - P(stay) without cancellation.
            let leave = -(ch.ln_q * (r + nf) as f64).exp_m1();
            acc_exit.iter_mut().for_each(|x| *x = 0.0);
            let (mut acc_mean, mut acc_second) = (Sum::default(), Sum::default());
            for (r2, &wr) in ch.stay_binom[r].iter().enumerate() {
                if wr == 0.0 {
                    continue;
                }
                for (g, &wg) in ch.acc_binom[nf].iter().enumerate() {
                    if (r2 == r && g == 0) || wg == 0.0 {
                        continue;
                    }
                    let wt = wr * wg;
                    let c2 = c + g;
                    let s2 = ch.idx(r2, c2);
                    // The loop can only end with at least c2 caches.
                    for (a, &e) in acc_exit[c2..].iter_mut().zip(&exit[s2 * w + c2..s2 * w + w]) {
                        *a += wt * e;
                    }
                    acc_mean.add(wt * mean[s2]);
                    acc_second.add(wt * second[s2]);
                }
            }
            let m = (1.0 + acc_mean.value()) / leave;
            mean[s] = m;
            second[s] = (2.0 * m - 1.0 + acc_second.value()) / leave;
            for (dst, &a) in exit[s * w..s * w + w].iter_mut().zip(&acc_exit) {
                *dst = a / leave;
            }
        }
    }
    Absorption { exit, mean, second }
}

/// The steady state of a warp's rejection loop with pre-caching (see the module documentation).
///
/// Cache counts run over `0..=K`; "entry" is the number of lanes that start a call with a cached
/// value, "exit" the number that end it holding one (the next call's entry).
#[derive(Clone, Debug)]
pub struct CachedModel {
    /// Per-lane acceptance probability of one candidate.
    pub p: f64,
    /// Lanes in the warp (`1..=64`).
    pub k: u32,
    /// The loop shape.
    pub lp: Loop,
    /// Whether lanes cache (false for [`uncached_model`], where every call starts from `(K, 0)`).
    pub caching: bool,
    /// `transition[m][j]`: probability that a call entered with `m` cached values ends with `j`
    /// (rows sum to 1). For `m < K` this is the absorption distribution of the within-call chain
    /// from `(K - m, 0)`; row `K` is `Binomial(K, p)` for `DoWhile` (one idle iteration) and
    /// `j = 0` with certainty for `While`.
    pub transition: Vec<Vec<f64>>,
    /// `iterations_from[m]`: expected iterations of a call entered with `m` cached values
    /// (`iterations_from[0] = E[L_K]`; `iterations_from[K]` is 1 for `DoWhile`, 0 for `While`).
    pub iterations_from: Vec<f64>,
    /// `second_moment_from[m]`: `E[N^2]` for the iteration count `N` of a call entered with `m`.
    pub second_moment_from: Vec<f64>,
    /// `stationary_cache[m]`: long-run fraction of calls entered with `m` cached values, i.e. the
    /// stationary distribution `pi = pi P` reached from the first call (empty cache). Sums to 1;
    /// `stationary_cache[K] = 0` (see the module documentation).
    pub stationary_cache: Vec<f64>,
    /// `|pi P - pi|_1` for the computed `pi`: a check on the solve.
    pub stationary_residual: f64,
    /// `E_cached = sum_m pi[m] iterations_from[m]`: steady-state expected iterations per call.
    pub expected_iterations: f64,
    /// Steady-state variance of the iteration count of one call,
    /// `sum_m pi[m] second_moment_from[m] - E_cached^2`.
    pub variance_iterations: f64,
    /// `sum_m m pi[m]`: mean number of lanes that start a call with a cached value.
    pub mean_cached_at_entry: f64,
    /// `E[L_K]` ([`expected_max_geometric`]): expected iterations per call without caching.
    pub expected_uncached: f64,
}

impl CachedModel {
    /// `E[L_K] / E_cached`: how many times more loop iterations per call the loop takes without
    /// caching than in the steady state with it (`>= 1`).
    pub fn uncached_over_cached(&self) -> f64 {
        self.expected_uncached / self.expected_iterations
    }

    /// The distribution of the number of iterations of one call in the steady state (entry cache
    /// count drawn from `stationary_cache`), by forward iteration of the probability mass; see
    /// [`call_distribution`] for `tol` and `max_iterations`.
    pub fn steady_state_call(&self, tol: f64, max_iterations: usize) -> Result<CallDistribution, String> {
        call_distribution_impl(self.p, self.k, self.lp, self.caching, &self.stationary_cache, tol, max_iterations)
    }
}

fn check_inputs(p: f64, k: u32) -> Result<(), String> {
    if !valid_p(p) {
        return Err(format!("acceptance probability p = {p} is not in (0, 1]"));
    }
    if k == 0 || k > MAX_LANES {
        return Err(format!("warp size k = {k} is not in 1..={MAX_LANES}"));
    }
    Ok(())
}

/// The model of the rejection loop with pre-caching, for per-lane acceptance probability `p` in
/// `(0, 1]`, `k` lanes (`1..=64`) and loop shape `lp`.
///
/// Computes the per-call transition matrix of the cache count (exactly, by back-substitution in
/// the acyclic within-call chain), the expected iterations and their second moment from each entry
/// state, the stationary cache-count distribution (GTH elimination) and the steady-state expected
/// iterations per call `E_cached = sum_m pi[m] e[m]` (see the module documentation for the model).
/// Errors if `p` is not in `(0, 1]` (or NaN), `k == 0` or `k > 64`, or (not expected) if the
/// stationary solve fails.
pub fn cached_model(p: f64, k: u32, lp: Loop) -> Result<CachedModel, String> {
    build_model(p, k, lp, true)
}

/// The same machinery as [`cached_model`] with caching disabled: no lane ever stores a candidate,
/// every call starts from `(K, 0)`, and `expected_iterations` equals `E[L_K]`
/// ([`expected_max_geometric`]) up to rounding. A check on the machinery; same errors.
pub fn uncached_model(p: f64, k: u32, lp: Loop) -> Result<CachedModel, String> {
    build_model(p, k, lp, false)
}

/// `E[L_K] / E_cached` for [`cached_model`]`(p, k, lp)`: the factor by which caching reduces the
/// steady-state iterations per call (1 means no gain). NaN if the inputs are invalid.
pub fn uncached_over_cached(p: f64, k: u32, lp: Loop) -> f64 {
    cached_model(p, k, lp).map(|m| m.uncached_over_cached()).unwrap_or(f64::NAN)
}

fn build_model(p: f64, k: u32, lp: Loop, caching: bool) -> Result<CachedModel, String> {
    check_inputs(p, k)?;
    let ch = Chain::new(p, k, caching);
    let ab = absorb(&ch);
    let kk = ch.k;
    let w = kk + 1;
    let mut transition = Vec::with_capacity(w);
    let mut iterations_from = Vec::with_capacity(w);
    let mut second_moment_from = Vec::with_capacity(w);
    for m in 0..kk {
        let s = ch.idx(kk - m, 0);
        transition.push(ab.exit[s * w..s * w + w].to_vec());
        iterations_from.push(ab.mean[s]);
        second_moment_from.push(ab.second[s]);
    }
    match lp {
        Loop::DoWhile => {
            transition.push(ch.one_idle_iteration());
            iterations_from.push(1.0);
            second_moment_from.push(1.0);
        }
        Loop::While => {
            let mut row = vec![0.0; w];
            row[0] = 1.0;
            transition.push(row);
            iterations_from.push(0.0);
            second_moment_from.push(0.0);
        }
    }
    let stationary_cache = stationary_from_empty(&transition)?;
    let stationary_residual = residual(&transition, &stationary_cache);
    let (mut e, mut e2, mut mc) = (Sum::default(), Sum::default(), Sum::default());
    for m in 0..w {
        e.add(stationary_cache[m] * iterations_from[m]);
        e2.add(stationary_cache[m] * second_moment_from[m]);
        mc.add(stationary_cache[m] * m as f64);
    }
    let expected_iterations = e.value();
    Ok(CachedModel {
        p,
        k,
        lp,
        caching,
        transition,
        iterations_from,
        second_moment_from,
        stationary_cache,
        stationary_residual,
        expected_iterations,
        variance_iterations: (e2.value() - expected_iterations * expected_iterations).max(0.0),
        mean_cached_at_entry: mc.value(),
        expected_uncached: expected_max_geometric(p, k),
    })
}

/// `sum_j |(pi P)_j - pi_j|`.
fn residual(pm: &[Vec<f64>], pi: &[f64]) -> f64 {
    let n = pi.len();
    (0..n)
        .map(|j| {
            let mut s = Sum::default();
            for i in 0..n {
                s.add(pi[i] * pm[i][j]);
            }
            (s.value() - pi[j]).abs()
        })
        .sum()
}

/// Stationary distribution of the chain `pm` reached from state 0: GTH elimination on the set of
/// states reachable from 0 (a closed class), zero elsewhere.
fn stationary_from_empty(pm: &[Vec<f64>]) -> Result<Vec<f64>, String> {
    let n = pm.len();
    let mut seen = vec![false; n];
    let mut stack = vec![0usize];
    seen[0] = true;
    while let Some(i) = stack.pop() {
        for (j, &x) in pm[i].iter().enumerate() {
            if x > 0.0 && !seen[j] {
                seen[j] = true;
                stack.push(j);
            }
        }
    }
    let states: Vec<usize> = (0..n).filter(|&i| seen[i]).collect();
    let ns = states.len();
    let mut a: Vec<Vec<f64>> = states.iter().map(|&i| states.iter().map(|&j| pm[i][j]).collect()).collect();
    for l in (1..ns).rev() {
        let mut s = Sum::default();
        for &x in &a[l][..l] {
            s.add(x);
        }
        let s = s.value();
        if !(s > 0.0) {
            return Err(format!(
                "stationary distribution: cache count {} cannot reach a lower one (reducible chain)",
                states[l]
            ));
        }
        for row in a.iter_mut().take(l) {
            row[l] /= s;
        }
        let (upper, lower) = a.split_at_mut(l);
        let row_l = &lower[0];
        for row in upper.iter_mut() {
            let f = row[l];
            if f == 0.0 {
                continue;
            }
            for (x, &y) in row[..l].iter_mut().zip(&row_l[..l]) {
                *x += f * y;
            }
        }
    }
    let mut pi_sub = vec![0.0; ns];
    pi_sub[0] = 1.0;
    for l in 1..ns {
        let mut s = Sum::default();
        for i in 0..l {
            s.add(pi_sub[i] * a[i][l]);
        }
        pi_sub[l] = s.value();
    }
    let total: f64 = pi_sub.iter().sum();
    let mut pi = vec![0.0; n];
    for (&i, &x) in states.iter().zip(&pi_sub) {
        pi[i] = x / total;
    }
    Ok(pi)
}

/// One call of the sampler, by forward iteration of the probability mass.
#[derive(Clone, Debug)]
pub struct CallDistribution {
    /// `iterations_pmf[n]`: probability that the call runs exactly `n` iterations (`n = 0` only
    /// for `Loop::While` entered with every lane cached). Sums to `1 - remaining_mass`.
    pub iterations_pmf: Vec<f64>,
    /// `exit_cache[j]`: probability that the call ends with `j` cached values (absorbed mass only).
    pub exit_cache: Vec<f64>,
    /// Probability mass still inside the loop when the iteration stopped (`<= tol`).
    pub remaining_mass: f64,
    /// `sum_n n iterations_pmf[n]`: expected iterations, short by less than the missing tail.
    pub mean_iterations: f64,
}

/// Distribution of one call's iteration count and exit cache count when the entry cache count
/// has distribution `entry` (length `k + 1`, non-negative, summing to 1), by forward iteration of
/// the within-call chain `(r, c) -> (r - Binomial(r, p), c + Binomial(K - r - c, p))`.
///
/// Iterates until the probability mass still in the loop is at most `tol` (e.g. `1e-15`); if that
/// has not happened after `max_iterations` iterations it returns an error saying how much mass was
/// left (small `p` needs about `ln(K / tol) / p` iterations). Each iteration costs `~K^3/3`
/// operations. `entry = [1, 0, ...]` gives the uncached distribution of `L_K`;
/// [`CachedModel::steady_state_call`] uses the stationary distribution. Also errors on invalid
/// `p`, `k` or `entry`.
pub fn call_distribution(
    p: f64,
    k: u32,
    lp: Loop,
    entry: &[f64],
    tol: f64,
    max_iterations: usize,
) -> Result<CallDistribution, String> {
    call_distribution_impl(p, k, lp, true, entry, tol, max_iterations)
}

fn call_distribution_impl(
    p: f64,
    k: u32,
    lp: Loop,
    caching: bool,
    entry: &[f64],
    tol: f64,
    max_iterations: usize,
) -> Result<CallDistribution, String> {
    check_inputs(p, k)?;
    let ch = Chain::new(p, k, caching);
    let kk = ch.k;
    if entry.len() != kk + 1 {
        return Err(format!("entry distribution has {} entries, expected k + 1 = {}", entry.len(), kk + 1));
    }
    let total: f64 = entry.iter().sum();
    if entry.iter().any(|&x| !(x >= 0.0)) || (total - 1.0).abs() > 1e-9 {
        return Err(format!("entry distribution must be non-negative and sum to 1 (sum = {total})"));
    }
    if !(tol >= 0.0) {
        return Err(format!("tolerance {tol} must be non-negative"));
    }
    let ns = ch.n_states();
    let mut mass = vec![0.0; ns];
    let mut mid = vec![0.0; ns];
    let mut exit_cache = vec![0.0; kk + 1];
    let mut pmf = vec![0.0];
    for (m, &x) in entry.iter().enumerate().take(kk) {
        mass[ch.idx(kk - m, 0)] += x;
    }
    let full = entry[kk];
    if full > 0.0 {
        match lp {
            Loop::DoWhile => {
                pmf.push(full);
                for (e, b) in exit_cache.iter_mut().zip(ch.one_idle_iteration()) {
                    *e += full * b;
                }
            }
            Loop::While => {
                pmf[0] += full;
                exit_cache[0] += full;
            }
        }
    }
    let mut n = 0;
    loop {
        let remaining: f64 = mass.iter().sum(); // states with r = 0 are kept empty
        if remaining <= tol {
            let mut mean = Sum::default();
            for (i, &x) in pmf.iter().enumerate() {
                mean.add(i as f64 * x);
            }
            return Ok(CallDistribution {
                iterations_pmf: pmf,
                exit_cache,
                remaining_mass: remaining,
                mean_iterations: mean.value(),
            });
        }
        if n >= max_iterations {
            let mut msg = String::new();
            let _ = write!(
                msg,
                "forward iteration did not converge: probability mass {remaining:e} still in the loop after \
                 {n} iterations (tolerance {tol:e}, p = {p}, k = {k}); raise max_iterations or tol"
            );
            return Err(msg);
        }
        n += 1;
        // Cache step (uses the old r): (r, c) -> (r, c + g), g ~ Binomial(free, p).
        mid.iter_mut().for_each(|x| *x = 0.0);
        for r in 1..=kk {
            for c in 0..=kk - r {
                let x = mass[ch.idx(r, c)];
                if x == 0.0 {
                    continue;
                }
                let nf = ch.free(r, c);
                for (g, &wg) in ch.acc_binom[nf].iter().enumerate() {
                    mid[ch.idx(r, c + g)] += x * wg;
                }
            }
        }
        // Acceptance step: (r, c') -> (r', c'), r' ~ Binomial(r, q) lanes still rejecting.
        mass.iter_mut().for_each(|x| *x = 0.0);
        let mut absorbed = Sum::default();
        for r in 1..=kk {
            for c in 0..=kk - r {
                let x = mid[ch.idx(r, c)];
                if x == 0.0 {
                    continue;
                }
                for (r2, &wr) in ch.stay_binom[r].iter().enumerate() {
                    let y = x * wr;
                    if r2 == 0 {
                        exit_cache[c] += y;
                        absorbed.add(y);
                    } else {
                        mass[ch.idx(r2, c)] += y;
                    }
                }
            }
        }
        if pmf.len() <= n {
            pmf.push(0.0);
        }
        pmf[n] += absorbed.value();
    }
}

// ------------------------------------------------------------------------------------------------
// The other samplers' acceptance (module docs, "The other samplers' acceptance").
// ------------------------------------------------------------------------------------------------

/// `E[max(X_1, ..., X_K)]` for `K` independent copies of a variable on `{0, 1, 2, ...}` with
/// survival function `sf(n) = P(X > n)`: `sum_{n>=0} (1 - (1 - sf(n))^K)`, each term as
/// `-expm1(K ln1p(-sf(n)))` (no cancellation), summed until a term is below `1e-17` (at most
/// `max_terms` terms; `None` if the sum has not converged by then).
pub fn expected_max_iid(sf: impl Fn(u64) -> f64, k: u32, max_terms: u64) -> Option<f64> {
    let mut s = Sum::default();
    for n in 0..max_terms {
        let term = -(k as f64 * (-sf(n).clamp(0.0, 1.0)).ln_1p()).exp_m1();
        s.add(term);
        if term < 1e-17 {
            return Some(s.value());
        }
    }
    None
}

/// The warp's iterations per call of the Poisson sampler's inversion (`0 < λ < 10`, `k + 1`
/// comparisons for the value `k`) on `lanes` lanes: `E[max_i (X_i + 1)]`, `X_i ~ Poisson(λ)`.
/// NaN outside `0 < λ < 10` or for `lanes = 0`.
pub fn poisson_inversion_model(lambda: f64, lanes: u32) -> f64 {
    if !(lambda > 0.0 && lambda < warpmc_kernels::poisson::SMALL_MEAN_LIMIT) || lanes == 0 {
        return f64::NAN;
    }
    // P(X + 1 > n) = P(X >= n): the pmf by its recurrence (λ < 10: e^-λ does not underflow, and
    // the pmf is below 1e-300 long before j = 400), summed from the top (no cancellation).
    let mut pmf = vec![(-lambda).exp()];
    for j in 1..400 {
        let next = pmf[j - 1] * lambda / j as f64;
        pmf.push(next);
    }
    let mut sf = vec![0.0; pmf.len() + 1];
    for j in (0..pmf.len()).rev() {
        sf[j] = sf[j + 1] + pmf[j];
    }
    expected_max_iid(|n| sf.get(n as usize).copied().unwrap_or(0.0), lanes, 400).unwrap_or(f64::NAN)
}

/// Per-attempt acceptance probability of the ziggurat sampler (`normal`: the 128-layer normal,
/// else the 256-layer exponential), from the kernels' tables: `sqrt(π/2) / (128 v)` and
/// `(1 - e^{-r}) / (256 v)` (module docs).
pub fn ziggurat_acceptance(normal: bool) -> f64 {
    use warpmc_kernels::ziggurat::{EXPONENTIAL, NORMAL};
    if normal {
        (std::f64::consts::PI / 2.0).sqrt() / (128.0 * NORMAL.v)
    } else {
        -(-EXPONENTIAL.r).exp_m1() / (256.0 * EXPONENTIAL.v)
    }
}

/// PTRS's per-attempt acceptance for one mean, from [`ptrs_acceptance`].
#[derive(Clone, Debug)]
pub struct PtrsAcceptance {
    /// The probability that one attempt accepts.
    pub p: f64,
    /// The value `accepted[0]` stands for: `max(0, λ - 40 sqrt(λ) - 100)`, rounded down.
    pub first: u32,
    /// `accepted[i]`: the probability that one attempt accepts the value `first + i` (values
    /// within `40 sqrt(λ) + 100` of the mean); `accepted[i] / p` is the sampler's pmf there,
    /// which should be Poisson's.
    pub accepted: Vec<f64>,
}

/// PTRS's per-attempt acceptance probability for mean `lambda` (`10 <= λ <= LAMBDA_MAX`), with
/// the kernels' own constants and `ln_pmf` ([`warpmc_kernels::poisson::Poisson`]), by the
/// midpoint rule over `points` values of `u` in `(-1/2, 1/2)` (module docs). The integrand is
/// piecewise smooth with a jump wherever `k` changes, so the error is about the number of jumps
/// (`~3 sqrt(λ)` in the bulk) over `points`. `None` outside the range or for `points = 0`.
pub fn ptrs_acceptance(lambda: f64, points: u32) -> Option<PtrsAcceptance> {
    use warpmc_kernels::poisson::{LAMBDA_MAX, Poisson, SMALL_MEAN_LIMIT};
    if !(SMALL_MEAN_LIMIT..=LAMBDA_MAX).contains(&lambda) || points == 0 {
        return None;
    }
    Some(ptrs_acceptance_of(&Poisson::new(lambda), points))
}

/// [`ptrs_acceptance`] for the sampler `s` as given (its constants unchecked), so that a test
/// can hand it a deliberately wrong one.
fn ptrs_acceptance_of(s: &warpmc_kernels::poisson::Poisson, points: u32) -> PtrsAcceptance {
    let lambda = s.lambda;
    let reach = 40.0 * lambda.sqrt() + 100.0;
    let first = (lambda - reach).max(0.0) as u32;
    let mut accepted = vec![0.0; (lambda + reach) as usize - first as usize];
    let mut total = Sum::default();
    let w = 1.0 / points as f64;
    for i in 0..points {
        let u = -0.5 + (i as f64 + 0.5) * w;
        let us = 0.5 - u.abs();
        let t = (2.0 * s.a / us + s.b) * u + lambda + 0.43;
        if !(0.0..4_294_967_296.0).contains(&t) {
            continue;
        }
        let k = t as u32;
        // v is uniform on (0, 1): the probability of each way the attempt accepts.
        let h = (s.ln_pmf(k).exp() * (s.a / (us * us) + s.b) / s.inv_alpha).min(1.0);
        let prob = if us >= 0.07 {
            h.max(s.v_r.clamp(0.0, 1.0))
        } else if us < 0.013 {
            h.min(us)
        } else {
            h
        };
        total.add(prob * w);
        if let Some(a) = k.checked_sub(first).and_then(|i| accepted.get_mut(i as usize)) {
            *a += prob * w;
        }
    }
    PtrsAcceptance { p: total.value(), first, accepted }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f64::consts::PI;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs().max(1e-300)
    }

    /// The alternating closed form, accurate only for small K.
    fn alternating(p: f64, k: u32) -> f64 {
        let q = 1.0 - p;
        let mut binom = 1.0;
        let mut s = 0.0;
        for j in 1..=k {
            binom = binom * (k - j + 1) as f64 / j as f64;
            let sign = if j % 2 == 1 { 1.0 } else { -1.0 };
            s += sign * binom / (1.0 - q.powi(j as i32));
        }
        s
    }

    #[test]
    fn known_values_k32() {
        let cases = [
            (PI / 4.0, 3.134775),
            (0.5, 6.355176),
            (0.9, 2.275742),
            (0.95, 1.887467),
            (0.99, 1.278247),
            (0.999, 1.031541),
        ];
        for (p, want) in cases {
            let got = expected_max_geometric(p, 32);
            assert!((got - want).abs() < 5e-7, "p = {p}: {got} vs {want}");
        }
    }

    #[test]
    fn known_values_pi_over_4() {
        let want = [1.273240, 1.498202, 1.841097, 2.267284, 2.698313, 3.134775, 3.585212];
        for (i, w) in want.iter().enumerate() {
            let k = 1u32 << i;
            let got = expected_max_geometric(PI / 4.0, k);
            assert!((got - w).abs() < 5e-7, "K = {k}: {got} vs {w}");
        }
    }

    #[test]
    fn matches_alternating_form_for_small_k() {
        for k in 1..=8 {
            for &p in &[0.05, 0.2, 0.5, PI / 4.0, 0.9, 0.99] {
                let a = alternating(p, k);
                let b = expected_max_geometric(p, k);
                let direct = expected_max_geometric_sum(p, k);
                assert!(close(a, b, 1e-11), "K = {k}, p = {p}: {a} vs {b}");
                assert!(close(a, direct, 1e-11), "K = {k}, p = {p}: {a} vs {direct}");
            }
        }
    }

    #[test]
    fn cdf_sf_pmf_consistent() {
        for &(p, k) in &[(0.3, 5u32), (PI / 4.0, 32), (0.99, 64), (1.0, 7)] {
            let mut total = Sum::default();
            let mut mean = Sum::default();
            let mut second = Sum::default();
            for n in 0..2000u64 {
                let f = max_geometric_pmf(p, k, n);
                assert!(f >= 0.0);
                if n > 0 {
                    let d = max_geometric_cdf(p, k, n) - max_geometric_cdf(p, k, n - 1);
                    assert!((f - d).abs() < 1e-14, "pmf {p} {k} {n}");
                }
                assert!((max_geometric_cdf(p, k, n) + max_geometric_sf(p, k, n) - 1.0).abs() < 1e-15);
                total.add(f);
                mean.add(n as f64 * f);
                second.add((n * n) as f64 * f);
            }
            assert!((total.value() - 1.0).abs() < 1e-13);
            let e = expected_max_geometric(p, k);
            assert!(close(mean.value(), e, 1e-12), "{} vs {e}", mean.value());
            let v = second.value() - mean.value() * mean.value();
            assert!((v - variance_max_geometric(p, k)).abs() < 1e-11 * e * e, "variance {p} {k}");
        }
        assert_eq!(max_geometric_pmf(1.0, 32, 1), 1.0);
        assert_eq!(max_geometric_cdf(1.0, 32, 1), 1.0);
        assert_eq!(expected_max_geometric(1.0, 32), 1.0);
        assert_eq!(variance_max_geometric(1.0, 32), 0.0);
        assert!(close(max_geometric_pmf(0.5, 3, 1), 0.125, 1e-15));
        // Deep tail: sf stays accurate where the cdf is 1.
        let sf = max_geometric_sf(0.5, 32, 80);
        assert!(close(sf, 32.0 * 0.5f64.powi(80), 1e-12));
    }

    #[test]
    fn variance_geometric_and_near_one() {
        for &p in &[0.1, 0.5, 0.9] {
            assert!(close(variance_max_geometric_sum(p, 1), (1.0 - p) / (p * p), 1e-12));
        }
        // p close to 1: Var ~ K q, no cancellation.
        let q = 1e-9;
        let v = variance_max_geometric(1.0 - q, 32);
        assert!(close(v, 32.0 * q, 1e-6), "{v}");
    }

    #[test]
    fn small_p_forms_match_direct_sums() {
        for &k in &[2u32, 3, 5, 32, 64] {
            for &p in &[2e-3, 4e-4] {
                let (a, b) = (expected_max_geometric_small_p(p, k), expected_max_geometric_sum(p, k));
                assert!(close(a, b, 1e-12), "E: K = {k}, p = {p}: {a} vs {b}");
                let (a, b) = (variance_max_geometric_small_p(p, k), variance_max_geometric_sum(p, k));
                assert!(close(a, b, 1e-10), "Var: K = {k}, p = {p}: {a} vs {b}");
            }
        }
        assert!(expected_max_geometric(1e-9, 32).is_finite());
    }

    #[test]
    fn uncached_machinery_matches_max_geometric() {
        for &k in &[1u32, 2, 5, 32, 64] {
            for &p in &[1e-3, 0.1, 0.5, PI / 4.0, 0.951668, 0.999, 1.0] {
                if k == 64 && p != 0.5 && p != 0.999 {
                    continue; // keep debug runs short
                }
                for lp in [Loop::DoWhile, Loop::While] {
                    let m = uncached_model(p, k, lp).unwrap();
                    let e = expected_max_geometric(p, k);
                    assert!(
                        (m.expected_iterations - e).abs() <= 1e-9 * e,
                        "K {k} p {p}: {} vs {e}",
                        m.expected_iterations
                    );
                    let v = variance_max_geometric(p, k);
                    assert!((m.variance_iterations - v).abs() <= 1e-8 * e * e, "var K {k} p {p}");
                    assert_eq!(m.stationary_cache[0], 1.0);
                    assert!(close(m.uncached_over_cached(), 1.0, 1e-9));
                }
            }
        }
    }

    /// Independent derivation of the per-call exit distribution by conditioning on the lanes:
    /// with `T` the last acceptance time of the `r0 = K - m` uncached lanes,
    /// `P(T <= t, X_n = j) = [z^j] (B + A z)^r0 (q^n + (1 - q^n) z)^m` with
    /// `A = 1 - q^t - t p q^(n-1)`, `B = t p q^(n-1)`, and `P(T = n, X_T = j)` the difference in `t`.
    fn lane_conditioning(p: f64, k: usize, m: usize) -> (Vec<f64>, f64) {
        assert!(m < k);
        let q = 1.0 - p;
        let r0 = k - m;
        let binom = |n: usize, j: usize| -> f64 { (0..j).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64) };
        let poly = |b: f64, a: f64, n: usize| -> Vec<f64> {
            (0..=n).map(|j| binom(n, j) * a.powi(j as i32) * b.powi((n - j) as i32)).collect()
        };
        let mul = |x: &[f64], y: &[f64]| -> Vec<f64> {
            let mut z = vec![0.0; x.len() + y.len() - 1];
            for (i, &a) in x.iter().enumerate() {
                for (j, &b) in y.iter().enumerate() {
                    z[i + j] += a * b;
                }
            }
            z
        };
        let mut exit = vec![0.0; k + 1];
        let mut mean = 0.0;
        let mut n = 1;
        loop {
            let qn1 = q.powi(n as i32 - 1);
            let qn = q.powi(n as i32);
            let a_b = |t: usize| {
                let b = t as f64 * p * qn1;
                (b, 1.0 - q.powi(t as i32) - b)
            };
            let (b1, a1) = a_b(n);
            let (b0, a0) = a_b(n - 1);
            let hi = poly(b1, a1, r0);
            let lo = poly(b0, a0, r0);
            let diff: Vec<f64> = hi.iter().zip(&lo).map(|(x, y)| x - y).collect();
            let full = mul(&diff, &poly(qn, 1.0 - qn, m));
            let mut tot = 0.0;
            for (j, &x) in full.iter().enumerate() {
                exit[j] += x;
                tot += x;
            }
            mean += n as f64 * tot;
            if (k as f64) * qn < 1e-18 {
                return (exit, mean);
            }
            n += 1;
        }
    }

    #[test]
    fn exit_distribution_matches_lane_conditioning() {
        for &k in &[1u32, 2, 3, 6] {
            for &p in &[0.3, 0.5, PI / 4.0, 0.95] {
                let model = cached_model(p, k, Loop::DoWhile).unwrap();
                for m in 0..k as usize {
                    let (exit, mean) = lane_conditioning(p, k as usize, m);
                    for (j, (x, y)) in exit.iter().zip(&model.transition[m]).enumerate() {
                        assert!((x - y).abs() < 1e-12, "K {k} p {p} m {m} j {j}: {x} vs {y}");
                    }
                    assert!(close(mean, model.iterations_from[m], 1e-11));
                }
            }
        }
    }

    #[test]
    fn forward_iteration_matches_back_substitution() {
        for &(p, k) in &[(0.5, 9u32), (PI / 4.0, 32), (0.951668, 32), (0.9, 64)] {
            for lp in [Loop::DoWhile, Loop::While] {
                let model = cached_model(p, k, lp).unwrap();
                let kk = k as usize;
                for &m in &[0, 1, kk / 2, kk - 1, kk] {
                    let mut entry = vec![0.0; kk + 1];
                    entry[m] = 1.0;
                    let d = call_distribution(p, k, lp, &entry, 1e-15, 10_000).unwrap();
                    assert!(d.remaining_mass <= 1e-15);
                    for j in 0..=kk {
                        assert!((d.exit_cache[j] - model.transition[m][j]).abs() < 1e-13, "exit {p} {k} {m} {j}");
                    }
                    assert!((d.mean_iterations - model.iterations_from[m]).abs() < 1e-11);
                }
                let ss = model.steady_state_call(1e-15, 10_000).unwrap();
                assert!((ss.mean_iterations - model.expected_iterations).abs() < 1e-11);
                // The exit distribution of a steady-state call is the stationary distribution.
                for j in 0..=kk {
                    assert!((ss.exit_cache[j] - model.stationary_cache[j]).abs() < 1e-12);
                }
                let mut second = Sum::default();
                for (n, &x) in ss.iterations_pmf.iter().enumerate() {
                    second.add((n * n) as f64 * x);
                }
                let v = second.value() - ss.mean_iterations * ss.mean_iterations;
                assert!((v - model.variance_iterations).abs() < 1e-10);
            }
        }
    }

    #[test]
    fn forward_iteration_reports_non_convergence() {
        let mut entry = vec![0.0; 33];
        entry[0] = 1.0;
        let err = call_distribution(0.01, 32, Loop::DoWhile, &entry, 1e-15, 100).unwrap_err();
        assert!(err.contains("did not converge"), "{err}");
        assert!(call_distribution(0.5, 32, Loop::DoWhile, &entry[..5], 1e-15, 100).is_err());
        let mut bad = entry.clone();
        bad[1] = 0.5;
        assert!(call_distribution(0.5, 32, Loop::DoWhile, &bad, 1e-15, 100).is_err());
    }

    #[test]
    fn stationary_solution_checks() {
        for &(p, k) in &[(0.1, 32u32), (0.5, 32), (0.999, 32), (PI / 4.0, 64), (0.5, 2)] {
            let a = cached_model(p, k, Loop::DoWhile).unwrap();
            let b = cached_model(p, k, Loop::While).unwrap();
            let kk = k as usize;
            for m in [&a, &b] {
                let s: f64 = m.stationary_cache.iter().sum();
                assert!((s - 1.0).abs() < 1e-14);
                assert!(m.stationary_residual < 1e-13, "residual {}", m.stationary_residual);
                assert_eq!(m.stationary_cache[kk], 0.0);
                for row in &m.transition {
                    let rs: f64 = row.iter().sum();
                    assert!((rs - 1.0).abs() < 1e-12);
                }
                // No call entered with r >= 1 ends with K caches.
                for row in &m.transition[..kk] {
                    assert_eq!(row[kk], 0.0);
                }
                // The distribution after 2^15 calls from the empty cache (P squared 15 times) agrees.
                let mut pw = m.transition.clone();
                for _ in 0..15 {
                    let mut sq = vec![vec![0.0; kk + 1]; kk + 1];
                    for (sq_row, pw_row) in sq.iter_mut().zip(&pw) {
                        for (&a, pw_l) in pw_row.iter().zip(&pw) {
                            for (x, &y) in sq_row.iter_mut().zip(pw_l) {
                                *x += a * y;
                            }
                        }
                    }
                    pw = sq;
                }
                for (j, (x, y)) in pw[0].iter().zip(&m.stationary_cache).enumerate() {
                    assert!((x - y).abs() < 1e-10, "p {p} K {k} j {j}: {x} vs {y}");
                }
            }
            // The loop shapes differ only in the unreachable entry state K.
            assert!((a.expected_iterations - b.expected_iterations).abs() < 1e-13);
            assert_eq!(a.iterations_from[kk], 1.0);
            assert_eq!(b.iterations_from[kk], 0.0);
        }
    }

    #[test]
    fn caching_never_hurts() {
        for i in 1..=20 {
            let p = i as f64 / 20.0;
            for &k in &[1u32, 2, 7, 32] {
                let m = cached_model(p, k, Loop::DoWhile).unwrap();
                assert!(m.expected_iterations <= m.expected_uncached * (1.0 + 1e-12), "p {p} K {k}");
                assert!(m.expected_iterations >= 1.0 - 1e-12);
            }
        }
        for &p in &[0.05, 0.999] {
            let m = cached_model(p, 64, Loop::While).unwrap();
            assert!(m.expected_iterations <= m.expected_uncached);
        }
        // One lane never caches.
        let m = cached_model(0.3, 1, Loop::DoWhile).unwrap();
        assert!(close(m.expected_iterations, 1.0 / 0.3, 1e-13));
    }

    #[test]
    fn p_one_is_one_iteration_per_call() {
        for &k in &[1u32, 32, 64] {
            for lp in [Loop::DoWhile, Loop::While] {
                let m = cached_model(1.0, k, lp).unwrap();
                assert_eq!(m.expected_iterations, 1.0);
                assert_eq!(m.variance_iterations, 0.0);
                assert_eq!(m.stationary_cache[0], 1.0);
                if lp == Loop::DoWhile {
                    assert!(m.iterations_from.iter().all(|&e| e == 1.0));
                }
                assert_eq!(uncached_over_cached(1.0, k, lp), 1.0);
            }
        }
    }

    #[test]
    fn input_validation() {
        for p in [0.0, -0.1, 1.0 + 1e-12, f64::NAN, f64::INFINITY] {
            assert!(cached_model(p, 32, Loop::DoWhile).is_err());
            assert!(uncached_model(p, 32, Loop::While).is_err());
            assert!(uncached_over_cached(p, 32, Loop::DoWhile).is_nan());
            assert!(expected_max_geometric(p, 32).is_nan());
            assert!(variance_max_geometric(p, 32).is_nan());
            assert!(max_geometric_cdf(p, 32, 3).is_nan());
        }
        assert!(cached_model(0.5, 0, Loop::DoWhile).is_err());
        assert!(cached_model(0.5, 65, Loop::DoWhile).is_err());
        assert!(cached_model(0.5, 64, Loop::DoWhile).is_ok());
        assert!(expected_max_geometric(0.5, 0).is_nan());
        assert!(max_geometric_pmf(0.5, 0, 1).is_nan());
    }

    struct SplitMix64(u64);

    impl SplitMix64 {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }
    }

    /// Simulates `calls` calls of `k` lockstep lanes; returns (mean iterations per call, standard
    /// error from batch means) after a warm-up of 1000 calls.
    fn simulate(p: f64, k: u32, lp: Loop, caching: bool, calls: usize, seed: u64) -> (f64, f64) {
        let mut rng = SplitMix64(seed);
        let threshold = (p * (1u64 << 53) as f64) as u64; // accept iff 53-bit uniform < threshold
        let full: u64 = if k == 64 { !0 } else { (1u64 << k) - 1 };
        let mut cached: u64 = 0;
        let batches = 200;
        let per_batch = calls / batches;
        let mut batch_means = Vec::with_capacity(batches);
        let mut count = 0u64;
        for call in 0..1000 + per_batch * batches {
            let mut cur = if caching { cached } else { 0 };
            cached = 0;
            let mut it = 0u64;
            loop {
                if lp == Loop::While && cur == full {
                    break;
                }
                it += 1;
                let mut acc = 0u64;
                for lane in 0..k {
                    if (rng.next() >> 11) < threshold {
                        acc |= 1 << lane;
                    }
                }
                let had = cur;
                cur |= acc;
                if caching {
                    cached |= acc & had;
                }
                if lp == Loop::DoWhile && cur == full {
                    break;
                }
            }
            if call >= 1000 {
                count += it;
                if (call - 1000 + 1) % per_batch == 0 {
                    batch_means.push(count as f64 / per_batch as f64);
                    count = 0;
                }
            }
        }
        let b = batch_means.len() as f64;
        let mean = batch_means.iter().sum::<f64>() / b;
        let var = batch_means.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (b - 1.0);
        (mean, (var / b).sqrt())
    }

    #[test]
    fn monte_carlo_agrees_with_model() {
        let calls = if cfg!(debug_assertions) { 200_000 } else { 1_000_000 };
        let mut seed = 1;
        for &p in &[PI / 4.0, 0.5, 0.951668] {
            let k = 32;
            for lp in [Loop::DoWhile, Loop::While] {
                let model = cached_model(p, k, lp).unwrap();
                seed += 1;
                let (mean, se) = simulate(p, k, lp, true, calls, seed);
                let z = (mean - model.expected_iterations) / se;
                assert!(z.abs() < 5.0, "cached p {p} {lp:?}: sim {mean} ± {se}, model {}", model.expected_iterations);
                // The batch-means error bar is close to the i.i.d. one from the model's variance
                // (calls are only weakly correlated through the cache).
                let iid = (model.variance_iterations / calls as f64).sqrt();
                assert!(se < 3.0 * iid && se > iid / 3.0, "se {se} vs {iid}");
            }
            seed += 1;
            let (mean, se) = simulate(p, k, Loop::DoWhile, false, calls, seed);
            let e = expected_max_geometric(p, k);
            assert!(((mean - e) / se).abs() < 5.0, "uncached p {p}: sim {mean} ± {se}, E {e}");
        }
    }

    #[test]
    fn expected_max_iid_agrees_with_the_geometric_model() {
        // The geometric variable on {1, 2, ...}: P(G <= n) = 1 - q^n.
        for p in [0.3, 0.785, 0.95] {
            let q: f64 = 1.0 - p;
            let e = expected_max_iid(|n| q.powi(n as i32), 32, 100_000).unwrap();
            assert!(close(e, expected_max_geometric(p, 32), 1e-13), "{p}: {e}");
        }
        // One lane: the mean. A variable that never settles: no answer.
        assert!(close(expected_max_iid(|n| if n >= 3 { 0.0 } else { 1.0 }, 1, 10).unwrap(), 3.0, 1e-15));
        assert!(expected_max_iid(|_| 1.0, 32, 1000).is_none());
    }

    #[test]
    fn poisson_inversion_model_values() {
        // One lane: E[X + 1] = λ + 1.
        for l in [0.5, 4.0, 9.5] {
            assert!(close(poisson_inversion_model(l, 1), l + 1.0, 1e-13), "{l}: {}", poisson_inversion_model(l, 1));
        }
        // 32 lanes, mean 4: by an independent sum with the pmf from lgamma-free products.
        let mut cdf = Vec::new();
        let mut c = 0.0;
        for j in 0..80 {
            let mut pj = (-4.0f64).exp();
            for i in 1..=j {
                pj *= 4.0 / i as f64;
            }
            c += pj;
            cdf.push(c);
        }
        let direct: f64 = (0..100).map(|n: usize| 1.0 - if n == 0 { 0.0 } else { cdf[(n - 1).min(79)] }.powi(32)).sum();
        assert!(close(poisson_inversion_model(4.0, 32), direct, 1e-12));
        assert!((poisson_inversion_model(4.0, 32) - 9.6464).abs() < 1e-4);
        assert!(poisson_inversion_model(10.0, 32).is_nan() && poisson_inversion_model(0.0, 32).is_nan());
    }

    #[test]
    fn ziggurat_acceptance_matches_the_kernels_figures() {
        // The kernels' documented attempts per value (ziggurat.rs: 1.012 362 and 1.011 572).
        assert!((1.0 / ziggurat_acceptance(true) - 1.012_362).abs() < 1e-6);
        assert!((1.0 / ziggurat_acceptance(false) - 1.011_572).abs() < 1e-6);
    }

    /// The attempts per value of the kernels' own PTRS on the CPU, against `1/p`.
    fn ptrs_attempts(lambda: f64, n: u32) -> f64 {
        use warpmc_kernels::rng::{Generator, Philox4x32x10};
        let s = warpmc_kernels::poisson::Poisson::new(lambda);
        let mut rng = Philox4x32x10::stream(29, 0);
        let mut ticks = 0u32;
        for _ in 0..n {
            s.sample(&mut rng, &mut ticks);
        }
        ticks as f64 / n as f64
    }

    #[test]
    fn ptrs_acceptance_is_the_kernels() {
        for lambda in [10.0, 100.0, 1000.0, 1e6] {
            let a = ptrs_acceptance(lambda, 1 << 20).unwrap();
            // The accepted mass per k is p times Poisson's pmf (the method is exact), to the
            // midpoint rule's accuracy.
            let s = warpmc_kernels::poisson::Poisson::new(lambda);
            let worst = (0..a.accepted.len() as u32)
                .map(|i| (a.accepted[i as usize] / a.p - s.ln_pmf(a.first + i).exp()).abs())
                .fold(0.0, f64::max);
            assert!(worst < 2e-5, "{lambda}: pmf off by {worst}");
            // More points change p by less than the stated accuracy.
            let b = ptrs_acceptance(lambda, 1 << 22).unwrap();
            assert!((a.p - b.p).abs() < 1e-5, "{lambda}: {} {}", a.p, b.p);
            // The sampler's attempts per value agree with 1/p (200,000 variates: standard
            // error of the mean about sqrt(q)/p/447, under 1e-3).
            let mean = ptrs_attempts(lambda, 200_000);
            assert!((mean - 1.0 / a.p).abs() < 4e-3, "{lambda}: {mean} attempts, 1/p = {}", 1.0 / a.p);
        }
        assert!((ptrs_acceptance(100.0, 1 << 20).unwrap().p - 0.852_14).abs() < 1e-4);
        assert!(ptrs_acceptance(9.9, 1000).is_none() && ptrs_acceptance(100.0, 0).is_none());
    }

    #[test]
    fn ptrs_acceptance_sees_a_wrong_hat() {
        // A negative control: a hat 20% too low (1/α scaled up) clips the acceptance test at 1
        // near the mode, and the accepted mass is no longer the pmf.
        let mut s = warpmc_kernels::poisson::Poisson::new(100.0);
        s.inv_alpha *= 1.2;
        let a = ptrs_acceptance_of(&s, 1 << 18);
        let worst = (0..a.accepted.len() as u32)
            .map(|i| (a.accepted[i as usize] / a.p - s.ln_pmf(a.first + i).exp()).abs())
            .fold(0.0, f64::max);
        assert!(worst > 1e-3, "the wrong hat went unnoticed: {worst}");
    }
}
