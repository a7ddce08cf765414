//! The Asian basket on `N` correlated assets: its parameters, the factor of its correlation
//! matrix (nalgebra's Cholesky), the kernels' coefficient sets and its control's closed form.
//! The paths and payoffs are [`warpmc_kernels::basket`]'s; the instrument is
//! `asian-basket` of [`crate::instruments`].
//!
//! **Correlation.** A user gives one correlation for every pair (`corr`) or the whole matrix
//! (`correlation`, rows separated by `;`). Each entry must be finite and in `[-1, 1]`, the
//! diagonal exactly 1, the matrix symmetric (to `1e-12`) and positive semidefinite; an error
//! names the first entry that breaks a rule. Positive definite matrices are factored by
//! nalgebra's Cholesky decomposition. Semidefinite ones (correlation 1 between two assets, a
//! legitimate limit in which they move together) have no Cholesky factor in nalgebra's sense;
//! they get the factor of the same recursion with zero pivots allowed ([`semidefinite_factor`]),
//! which also finds, for a matrix that is not semidefinite, the pivot where it fails.

use nalgebra::DMatrix;
use serde::Serialize;
use warpmc_kernels::asian::{AsianBasketSteps, split_f64};
use warpmc_kernels::basket::{BasketLeg, MAX_ASSETS};

use crate::pricing::normal_cdf;
use crate::{Error, Result};

/// Tolerance of the symmetry check and of zero pivots in [`semidefinite_factor`].
pub const TOLERANCE: f64 = 1e-12;

/// The basket's payoff ([`warpmc_kernels::basket::payoff`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum BasketPayoff {
    /// GPU Gems 3's: `(mean_i max_k S_k(t_i) - max_k S_k(t_n))⁺`.
    Chapter,
    /// An arithmetic Asian on `Σ_k w_k S_k`, fixed strike, call or put.
    Average,
}

impl BasketPayoff {
    pub fn name(self) -> &'static str {
        match self {
            BasketPayoff::Chapter => "chapter",
            BasketPayoff::Average => "average",
        }
    }
}

/// The assets of a basket and how they move together (validated).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BasketSpec {
    pub payoff: BasketPayoff,
    pub spots: Vec<f64>,
    pub vols: Vec<f64>,
    pub dividends: Vec<f64>,
    pub weights: Vec<f64>,
    pub correlation: Vec<Vec<f64>>,
    /// `F` with `C = F Fᵀ`, lower triangular.
    #[serde(skip)]
    pub factor: Vec<Vec<f64>>,
}

/// `text` as one number per asset: `a,b,c`, or one number for all.
pub fn parse_list(field: &'static str, text: &str, assets: usize) -> Result<Vec<f64>> {
    let allowed = || format!("one number, or {assets} numbers separated by commas (one per asset)");
    let values: Vec<f64> = text
        .split(',')
        .map(|t| t.trim().parse::<f64>().ok().filter(|v| v.is_finite()))
        .collect::<Option<_>>()
        .ok_or_else(|| Error::invalid(field, text, allowed()))?;
    match values.len() {
        1 => Ok(vec![values[0]; assets]),
        n if n == assets => Ok(values),
        _ => Err(Error::invalid(field, text, allowed())),
    }
}

/// `text` as an `assets × assets` matrix: rows separated by `;`, entries by `,`.
pub fn parse_matrix(text: &str, assets: usize) -> Result<Vec<Vec<f64>>> {
    let allowed = || {
        format!(
            "{assets} rows separated by ';', each of {assets} numbers separated by ',' (e.g. 1,0.5;0.5,1 for two assets)"
        )
    };
    let rows: Vec<&str> = text.split(';').collect();
    if rows.len() != assets {
        return Err(Error::invalid("correlation", text, allowed()));
    }
    rows.iter()
        .map(|r| {
            let row: Vec<f64> = r
                .split(',')
                .map(|t| t.trim().parse::<f64>().ok())
                .collect::<Option<_>>()
                .ok_or_else(|| Error::invalid("correlation", text, allowed()))?;
            if row.len() == assets { Ok(row) } else { Err(Error::invalid("correlation", text, allowed())) }
        })
        .collect()
}

/// The matrix with `rho` off the diagonal and 1 on it.
pub fn uniform_correlation(assets: usize, rho: f64) -> Vec<Vec<f64>> {
    (0..assets).map(|i| (0..assets).map(|j| if i == j { 1.0 } else { rho }).collect()).collect()
}

fn entry_error(c: &[Vec<f64>], i: usize, j: usize, rule: &str) -> Error {
    Error::invalid("correlation", format!("entry ({}, {}) = {}", i + 1, j + 1, c[i][j]), rule)
}

/// Check a correlation matrix and return its lower-triangular factor `F` (`C = F Fᵀ`).
pub fn factor(c: &[Vec<f64>]) -> Result<Vec<Vec<f64>>> {
    let n = c.len();
    for i in 0..n {
        for j in 0..n {
            let v = c[i][j];
            if !(v.abs() <= 1.0) {
                return Err(entry_error(c, i, j, "[-1, 1]: a correlation (and finite)"));
            }
            if i == j && v != 1.0 {
                return Err(entry_error(c, i, j, "1: the diagonal of a correlation matrix"));
            }
            if j < i && (v - c[j][i]).abs() > TOLERANCE {
                return Err(entry_error(
                    c,
                    i,
                    j,
                    format!("{}, the entry ({}, {}): a correlation matrix is symmetric", c[j][i], j + 1, i + 1)
                        .as_str(),
                ));
            }
        }
    }
    let m = DMatrix::from_fn(n, n, |i, j| c[i][j]);
    if let Some(ch) = m.cholesky() {
        let l = ch.l();
        return Ok((0..n).map(|i| (0..n).map(|j| l[(i, j)]).collect()).collect());
    }
    semidefinite_factor(c).map_err(|(i, j, rest)| {
        Error::invalid(
            "correlation",
            format!("the matrix (at entry ({}, {}), {rest})", i + 1, j + 1),
            "a symmetric positive semidefinite matrix (the assets' correlations must be jointly possible)",
        )
    })
}

/// The Cholesky recursion with zero pivots allowed: `F` for a positive semidefinite `c`, or the
/// entry where `c` is found not to be one, with what was found there.
pub fn semidefinite_factor(c: &[Vec<f64>]) -> std::result::Result<Vec<Vec<f64>>, (usize, usize, String)> {
    let n = c.len();
    let mut l = vec![vec![0.0; n]; n];
    for j in 0..n {
        let d = c[j][j] - (0..j).map(|k| l[j][k] * l[j][k]).sum::<f64>();
        if d < -TOLERANCE {
            return Err((j, j, format!("a negative pivot {d:.3e}")));
        }
        if d <= TOLERANCE {
            // A zero pivot: column j must then be zero below it too.
            for i in j + 1..n {
                let r = c[i][j] - (0..j).map(|k| l[i][k] * l[j][k]).sum::<f64>();
                if r.abs() > 1e-9 {
                    return Err((i, j, format!("a zero pivot with a remainder {r:.3e}")));
                }
            }
            continue;
        }
        let p = d.sqrt();
        l[j][j] = p;
        for i in j + 1..n {
            l[i][j] = (c[i][j] - (0..j).map(|k| l[i][k] * l[j][k]).sum::<f64>()) / p;
        }
    }
    Ok(l)
}

impl BasketSpec {
    /// Build and validate: every list has one entry per asset (`1..=`[`MAX_ASSETS`]), spots and
    /// weights in `(0, 1e12]`, vols in `[0, 5]`, dividends in `[-1, 1]`, and the correlation
    /// matrix passes [`factor`].
    pub fn new(
        payoff: BasketPayoff,
        spots: Vec<f64>,
        vols: Vec<f64>,
        dividends: Vec<f64>,
        weights: Vec<f64>,
        correlation: Vec<Vec<f64>>,
    ) -> Result<Self> {
        let n = spots.len();
        if !(1..=MAX_ASSETS).contains(&n) {
            return Err(Error::invalid("assets", n, format!("[1, {MAX_ASSETS}]")));
        }
        let check = |field: &'static str, v: &[f64], ok: &dyn Fn(f64) -> bool, allowed: &str| -> Result<()> {
            if v.len() != n {
                return Err(Error::invalid(field, format!("{} values", v.len()), format!("{n}, one per asset")));
            }
            match v.iter().position(|&x| !ok(x)) {
                Some(k) => Err(Error::invalid(field, format!("{} (asset {})", v[k], k + 1), allowed)),
                None => Ok(()),
            }
        };
        let max = crate::pricing::limits::SPOT_MAX;
        check("spots", &spots, &|x| x > 0.0 && x <= max, "(0, 1e12]")?;
        check("vols", &vols, &|x| (0.0..=crate::pricing::limits::VOL_MAX).contains(&x), "[0, 5]")?;
        check("dividends", &dividends, &|x| x.abs() <= 1.0, "[-1, 1]")?;
        check("weights", &weights, &|x| x > 0.0 && x <= max, "(0, 1e12]")?;
        if correlation.len() != n || correlation.iter().any(|r| r.len() != n) {
            return Err(Error::invalid("correlation", format!("{} rows", correlation.len()), format!("{n} x {n}")));
        }
        let factor = factor(&correlation)?;
        Ok(Self { payoff, spots, vols, dividends, weights, correlation, factor })
    }

    pub fn assets(&self) -> usize {
        self.spots.len()
    }

    /// The unit `U` of the kernels' values: the largest spot or forward of any asset, and for
    /// the average payoff also the weighted basket's spot and forward and the strike.
    pub fn unit(&self, rate: f64, maturity: f64, strike: f64) -> f64 {
        let forward = |k: usize| self.spots[k] * ((rate - self.dividends[k]) * maturity).exp();
        let mut u = (0..self.assets()).map(|k| self.spots[k].max(forward(k))).fold(0.0, f64::max);
        if self.payoff == BasketPayoff::Average {
            let basket = |f: &dyn Fn(usize) -> f64| (0..self.assets()).map(|k| self.weights[k] * f(k)).sum::<f64>();
            u = u.max(basket(&|k| self.spots[k])).max(basket(&forward)).max(strike);
        }
        u
    }

    /// One leg's coefficients for `steps` dates in units of `u` (see
    /// [`warpmc_kernels::basket::BasketLeg`]), rounded once from `f64`.
    pub fn leg(&self, rate: f64, maturity: f64, steps: u32, u: f64, strike: f64, leg_weight: f64) -> BasketLeg {
        let dt = maturity / steps as f64;
        let sq = dt.sqrt();
        let total: f64 = self.weights.iter().sum();
        let mut c = BasketLeg::ZERO;
        for k in 0..self.assets() {
            let v = self.vols[k];
            c.ln_s0[k] = split_f64((self.spots[k] / u).ln());
            c.mu[k] = ((rate - self.dividends[k] - 0.5 * v * v) * dt) as f32;
            for j in 0..=k {
                c.chol[k * (k + 1) / 2 + j] = (v * self.factor[k][j] * sq) as f32;
            }
            c.weight[k] = self.weights[k];
            c.geo_weight[k] = self.weights[k] / total;
        }
        c.ln_total_weight = total.ln();
        c.strike = strike / u;
        c.leg_weight = leg_weight;
        c
    }

    /// `E[control]`, undiscounted, in units of `u`, where it has a closed form: the chapter's
    /// unfloored value for one asset (from the forwards) and for two (Margrabe's formula at each
    /// date, from the kernels' rounded coefficients, as the chapter's own check), and the
    /// geometric basket Asian for the average payoff ([`Self::geometric_log_moments`]).
    pub fn control_expectation(
        &self,
        rate: f64,
        maturity: f64,
        steps: u32,
        u: f64,
        strike: f64,
        put: bool,
    ) -> Option<f64> {
        match (self.payoff, self.assets()) {
            (BasketPayoff::Chapter, 1) => {
                let n = steps as f64;
                let g = (rate - self.dividends[0]) * maturity / n;
                let mean = (1..=steps).map(|i| (g * i as f64).exp()).sum::<f64>() / n;
                Some(self.spots[0] / u * (mean - (g * n).exp()))
            }
            (BasketPayoff::Chapter, 2) => {
                let leg = self.leg(rate, maturity, steps, u, strike, 1.0);
                let p = AsianBasketSteps {
                    ln_a0: leg.ln_s0[0],
                    ln_b0: leg.ln_s0[1],
                    mu_a: leg.mu[0],
                    sig_aa: leg.chol[0],
                    mu_b: leg.mu[1],
                    sig_ab: leg.chol[1],
                    sig_bb: leg.chol[2],
                    steps,
                    normals: 0,
                };
                Some(crate::pricing::unfloored_expectation(&p))
            }
            (BasketPayoff::Chapter, _) => None,
            (BasketPayoff::Average, _) => {
                let (m, s) = self.geometric_log_moments(rate, maturity, steps, u);
                Some(geometric_basket(m, s, strike / u, put))
            }
        }
    }

    /// Mean and standard deviation of `ln G` in units of `u`, `G = W exp((1/n) Σ_i Σ_k v_k ln
    /// S_k(t_i))`: with `t̄ = T (n + 1) / (2n)` the mean date and `Σ_{i,j} min(t_i, t_j) = dt
    /// n (n + 1) (2n + 1) / 6`,
    /// `m = ln W + Σ_k v_k (ln(S_k / u) + (r - q_k - σ_k²/2) t̄)` and
    /// `s² = (vᵀ Σ v) T (n + 1)(2n + 1) / (6 n²)`, `Σ_kl = σ_k σ_l C_kl`.
    pub fn geometric_log_moments(&self, rate: f64, maturity: f64, steps: u32, u: f64) -> (f64, f64) {
        let n = steps as f64;
        let total: f64 = self.weights.iter().sum();
        let v: Vec<f64> = self.weights.iter().map(|w| w / total).collect();
        let mean_t = maturity * (n + 1.0) / (2.0 * n);
        let mut m = total.ln();
        let mut var = 0.0;
        for k in 0..self.assets() {
            let sk = self.vols[k];
            m += v[k] * ((self.spots[k] / u).ln() + (rate - self.dividends[k] - 0.5 * sk * sk) * mean_t);
            for l in 0..self.assets() {
                var += v[k] * v[l] * sk * self.vols[l] * self.correlation[k][l];
            }
        }
        let s2 = var.max(0.0) * maturity * (n + 1.0) * (2.0 * n + 1.0) / (6.0 * n * n);
        (m, s2.sqrt())
    }
}

/// `E[(ω(G - K))⁺]` for `ln G ~ N(m, s²)`, undiscounted (Black's formula; `s = 0` gives the
/// payoff at `e^m`).
pub fn geometric_basket(m: f64, s: f64, k: f64, put: bool) -> f64 {
    let w = if put { -1.0 } else { 1.0 };
    if !(s > 0.0) {
        return (w * (m.exp() - k)).max(0.0);
    }
    let d1 = (m - k.ln() + s * s) / s;
    let d2 = d1 - s;
    w * ((m + 0.5 * s * s).exp() * normal_cdf(w * d1) - k * normal_cdf(w * d2))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(payoff: BasketPayoff, n: usize, rho: f64) -> BasketSpec {
        BasketSpec::new(
            payoff,
            vec![100.0; n],
            (0..n).map(|k| 0.2 + 0.05 * k as f64).collect(),
            vec![0.01; n],
            vec![1.0 / n as f64; n],
            uniform_correlation(n, rho),
        )
        .unwrap()
    }

    #[test]
    fn the_factor_reproduces_the_matrix() {
        let c = vec![vec![1.0, 0.5, 0.2], vec![0.5, 1.0, -0.3], vec![0.2, -0.3, 1.0]];
        let f = factor(&c).unwrap();
        for i in 0..3 {
            for j in 0..3 {
                let v: f64 = (0..3).map(|k| f[i][k] * f[j][k]).sum();
                assert!((v - c[i][j]).abs() < 1e-14, "({i}, {j}): {v}");
                if j > i {
                    assert_eq!(f[i][j], 0.0);
                }
            }
        }
        // Two assets: the chapter's coefficients, bit for bit.
        let f = factor(&uniform_correlation(2, 0.5)).unwrap();
        assert_eq!(f[1], vec![0.5, (1.0f64 - 0.5 * 0.5).sqrt()]);
    }

    #[test]
    fn semidefinite_matrices_factor_and_others_name_their_entry() {
        // Correlation 1: nalgebra finds no Cholesky factor; the semidefinite recursion does,
        // with every asset on the first one's Brownian motion.
        let f = factor(&uniform_correlation(3, 1.0)).unwrap();
        for row in &f {
            assert_eq!(row, &vec![1.0, 0.0, 0.0]);
        }
        // Rank 2 of 3: asset 3 = (asset 1 + asset 2) / sqrt(2 + 2 rho).
        let r: f64 = 0.2;
        let a = (1.0 + r) / (2.0 + 2.0 * r).sqrt();
        let c = vec![vec![1.0, r, a], vec![r, 1.0, a], vec![a, a, 1.0]];
        let f = factor(&c).unwrap();
        // (Rounding leaves its last pivot about 1e-16, which nalgebra factors: a last entry of
        // about 1e-8.)
        let v: f64 = (0..3).map(|k| f[2][k] * f[2][k]).sum();
        assert!((v - 1.0).abs() < 1e-12 && f[2][2].abs() < 1e-7, "{f:?}");
        // Not semidefinite: the error names the pivot's entry.
        let bad = vec![vec![1.0, 0.9, 0.9], vec![0.9, 1.0, -0.9], vec![0.9, -0.9, 1.0]];
        let e = factor(&bad).unwrap_err().to_string();
        assert!(e.contains("entry (3, 3)") && e.contains("positive semidefinite"), "{e}");
        let e = factor(&vec![vec![1.0, 0.5], vec![0.4, 1.0]]).unwrap_err().to_string();
        assert!(e.contains("entry (2, 1) = 0.4") && e.contains("symmetric"), "{e}");
        let e = factor(&vec![vec![0.9]]).unwrap_err().to_string();
        assert!(e.contains("entry (1, 1) = 0.9") && e.contains("diagonal"), "{e}");
    }

    #[test]
    fn lists_parse_one_value_or_one_per_asset() {
        assert_eq!(parse_list("spots", "100", 3).unwrap(), vec![100.0; 3]);
        assert_eq!(parse_list("spots", " 1, 2,3 ", 3).unwrap(), vec![1.0, 2.0, 3.0]);
        for bad in ["1,2", "1,x,3", "", "1,,3", "inf"] {
            assert!(
                matches!(parse_list("spots", bad, 3), Err(Error::InvalidParameter { field: "spots", .. })),
                "{bad}"
            );
        }
        assert_eq!(parse_matrix("1,0.5;0.5,1", 2).unwrap(), vec![vec![1.0, 0.5], vec![0.5, 1.0]]);
        assert!(parse_matrix("1,0.5;0.5", 2).is_err() && parse_matrix("1", 2).is_err());
    }

    #[test]
    fn one_asset_geometric_control_is_the_discrete_geometric_asian() {
        let b = BasketSpec::new(
            BasketPayoff::Average,
            vec![100.0],
            vec![0.3],
            vec![0.02],
            vec![1.0],
            uniform_correlation(1, 0.0),
        )
        .unwrap();
        let m = crate::closed_form::Market {
            spot: 100.0,
            rate: 0.05,
            dividend_yield: 0.02,
            volatility: 0.3,
            maturity: 2.0,
        };
        for (steps, put) in [(12u32, false), (50, true), (1, false)] {
            let kind = if put { crate::closed_form::OptionType::Put } else { crate::closed_form::OptionType::Call };
            let want = crate::closed_form::geometric_asian(&m, 95.0, steps, kind).unwrap().price;
            let u = b.unit(0.05, 2.0, 95.0);
            let got = (-0.05f64 * 2.0).exp() * u * b.control_expectation(0.05, 2.0, steps, u, 95.0, put).unwrap();
            assert!((got - want).abs() < 1e-10 * want, "{steps} {put}: {got} vs {want}");
        }
    }

    #[test]
    fn weights_and_correlation_enter_the_geometric_variance() {
        // Two equal assets: perfect correlation gives one asset's variance, independence half.
        let one = spec(BasketPayoff::Average, 1, 0.0);
        let (_, s1) = one.geometric_log_moments(0.05, 1.0, 10, 100.0);
        let pair = |rho| {
            let mut b = spec(BasketPayoff::Average, 2, rho);
            b.vols = vec![0.2, 0.2];
            b.geometric_log_moments(0.05, 1.0, 10, 100.0).1
        };
        assert!((pair(1.0) - s1).abs() < 1e-15);
        assert!((pair(0.0) * pair(0.0) - 0.5 * s1 * s1).abs() < 1e-15);
        // The chapter's payoff has a closed-form control for one and two assets only.
        let chapter = |n| spec(BasketPayoff::Chapter, n, 0.3).control_expectation(0.05, 1.0, 8, 100.0, 0.0, false);
        assert!(chapter(1).is_some() && chapter(2).is_some() && chapter(3).is_none());
    }
}
