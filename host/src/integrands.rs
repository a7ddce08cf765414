//! The built-in integrands of `warpmc integrate`: the six Genz test families and Lepage's narrow
//! Gaussians ([`warpmc_kernels::vegas::genz`] evaluates them on both backends), their parameters
//! and their closed-form integrals over the unit cube.

use warpmc_kernels::vegas::{IntegrandParams, MAX_DIM, family};

use crate::{Error, Result};

/// A built-in integrand family, by the name users type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Family {
    /// Genz 1: cos(2π u_1 + Σ a_i x_i).
    Oscillatory,
    /// Genz 2: Π 1 / (a_i^-2 + (x_i - u_i)^2).
    ProductPeak,
    /// Genz 3: (1 + Σ a_i x_i)^-(d+1).
    CornerPeak,
    /// Genz 4: exp(-Σ a_i^2 (x_i - u_i)^2).
    Gaussian,
    /// Genz 5: exp(-Σ a_i |x_i - u_i|).
    Continuous,
    /// Genz 6: 0 where x_1 > u_1 or x_2 > u_2, else exp(Σ a_i x_i).
    Discontinuous,
    /// Lepage's test: two narrow Gaussians of width w on the diagonal (at 1/3 and 2/3),
    /// normalised so that each integrates to about 1/2 over the cube.
    NarrowGaussians,
}

impl Family {
    pub const ALL: [Family; 7] = [
        Family::Oscillatory,
        Family::ProductPeak,
        Family::CornerPeak,
        Family::Gaussian,
        Family::Continuous,
        Family::Discontinuous,
        Family::NarrowGaussians,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Family::Oscillatory => "oscillatory",
            Family::ProductPeak => "product-peak",
            Family::CornerPeak => "corner-peak",
            Family::Gaussian => "gaussian",
            Family::Continuous => "continuous",
            Family::Discontinuous => "discontinuous",
            Family::NarrowGaussians => "narrow-gaussians",
        }
    }

    pub fn parse(name: &str) -> Result<Self> {
        Self::ALL.into_iter().find(|f| f.name() == name).ok_or_else(|| {
            let names: Vec<&str> = Self::ALL.iter().map(|f| f.name()).collect();
            Error::invalid("integrand", name, format!("one of {}", names.join(", ")))
        })
    }

    fn id(self) -> u32 {
        match self {
            Family::Oscillatory => family::OSCILLATORY,
            Family::ProductPeak => family::PRODUCT_PEAK,
            Family::CornerPeak => family::CORNER_PEAK,
            Family::Gaussian => family::GAUSSIAN,
            Family::Continuous => family::CONTINUOUS,
            Family::Discontinuous => family::DISCONTINUOUS,
            Family::NarrowGaussians => family::NARROW_GAUSSIANS,
        }
    }

    /// The default `a_i` in `dim` dimensions: moderate difficulty at any dimension (the sum
    /// `Σ a_i` fixed where the family's scale grows with it).
    pub fn default_a(self, dim: u32) -> f64 {
        let d = dim as f64;
        match self {
            Family::Oscillatory => 9.0 / d,
            Family::ProductPeak => 5.0,
            Family::CornerPeak => 1.0 / d,
            Family::Gaussian => 5.0,
            Family::Continuous => 5.0,
            Family::Discontinuous => 5.0 / d,
            Family::NarrowGaussians => 0.0,
        }
    }
}

/// The default shifts: `u_i = 0.1 + 0.8 frac((i + 1) / φ)`, spread over `[0.1, 0.9]`.
pub fn default_u(i: usize) -> f64 {
    let t = (i as f64 + 1.0) * 0.618_033_988_749_894_9;
    0.1 + 0.8 * (t - t.floor())
}

/// A built-in integrand and its parameters.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct IntegrandSpec {
    pub family: Family,
    pub dim: u32,
    /// `a_i` (length `dim`).
    pub a: Vec<f64>,
    /// `u_i` (length `dim`).
    pub u: Vec<f64>,
    /// The narrow Gaussians' width.
    pub width: f64,
}

impl IntegrandSpec {
    /// `family` in `dim` dimensions with its default parameters.
    pub fn new(family: Family, dim: u32) -> Result<Self> {
        check_dim(dim)?;
        Ok(Self {
            family,
            dim,
            a: vec![family.default_a(dim); dim as usize],
            u: (0..dim as usize).map(default_u).collect(),
            width: 0.1,
        })
    }

    /// Apply `NAME=VALUE` settings: `a=X` (every `a_i`), `a=X1:X2:..` (one per axis), the same
    /// for `u`, and `width=W` (the narrow Gaussians).
    pub fn set(&mut self, setting: &str) -> Result<()> {
        let (name, value) = setting
            .split_once('=')
            .ok_or_else(|| Error::invalid("param", setting, "NAME=VALUE with NAME one of a, u, width"))?;
        let mut next = self.clone();
        let values = || -> Result<Vec<f64>> {
            let v: Vec<f64> = value
                .split(':')
                .map(|s| s.trim().parse::<f64>())
                .collect::<std::result::Result<_, _>>()
                .map_err(|_| Error::invalid("param", setting, "numbers separated by ':'"))?;
            match v.len() {
                1 => Ok(vec![v[0]; self.dim as usize]),
                n if n == self.dim as usize => Ok(v),
                n => Err(Error::invalid("param", setting, format!("1 or {} values (dim), not {n}", self.dim))),
            }
        };
        match name.trim() {
            "a" => next.a = values()?,
            "u" => next.u = values()?,
            "width" => next.width = value.trim().parse().map_err(|_| Error::invalid("param", setting, "a number"))?,
            other => return Err(Error::invalid("param", other, "one of a, u, width")),
        }
        // Nothing changes unless the whole set is valid.
        next.validate()?;
        *self = next;
        Ok(())
    }

    pub fn validate(&self) -> Result<()> {
        check_dim(self.dim)?;
        let d = self.dim as usize;
        if self.a.len() != d || self.u.len() != d {
            return Err(Error::invalid(
                "param",
                format!("{} a, {} u", self.a.len(), self.u.len()),
                format!("{d} each"),
            ));
        }
        let a_ok = |x: f64| match self.family {
            Family::NarrowGaussians => true,
            // a_i > 0 keeps the closed forms finite (a_i^-2, 1/a_i) and the peaks peaked.
            _ => x.is_finite() && x > 0.0 && x <= 1e6,
        };
        if let Some(x) = self.a.iter().find(|&&x| !a_ok(x)) {
            return Err(Error::invalid("param a", x, "(0, 1e6]"));
        }
        if let Some(x) = self.u.iter().find(|&&x| !(0.0..=1.0).contains(&x)) {
            return Err(Error::invalid("param u", x, "[0, 1]"));
        }
        if !(self.width > 1e-3 && self.width <= 10.0) {
            return Err(Error::invalid("param width", self.width, "(0.001, 10]"));
        }
        Ok(())
    }

    /// The parameter block the kernels read.
    pub fn params(&self) -> IntegrandParams {
        let mut p = IntegrandParams {
            family: self.family.id(),
            dim: self.dim,
            c: self.width,
            scale: 0.0,
            a: [0.0; MAX_DIM],
            u: [0.0; MAX_DIM],
        };
        p.a[..self.a.len()].copy_from_slice(&self.a);
        p.u[..self.u.len()].copy_from_slice(&self.u);
        if self.family == Family::NarrowGaussians {
            // (w √π)^-d: data, computed once here and read by both backends.
            p.scale = (self.width * std::f64::consts::PI.sqrt()).powi(-(self.dim as i32));
        }
        p
    }

    /// The exact integral over `[0, 1]^d`.
    pub fn exact(&self) -> f64 {
        let d = self.dim as usize;
        let (a, u) = (&self.a[..d], &self.u[..d]);
        match self.family {
            Family::Oscillatory => {
                // Re[e^{2πi u_1} Π (e^{i a_j} - 1) / (i a_j)], (e^{ia} - 1)/(ia) = sin a / a + i (1 - cos a) / a.
                let (mut re, mut im) = ((std::f64::consts::TAU * u[0]).cos(), (std::f64::consts::TAU * u[0]).sin());
                for &aj in a {
                    let (fr, fi) = (aj.sin() / aj, (1.0 - aj.cos()) / aj);
                    (re, im) = (re * fr - im * fi, re * fi + im * fr);
                }
                re
            }
            Family::ProductPeak => {
                a.iter().zip(u).map(|(&a, &u)| a * (libm::atan(a * (1.0 - u)) + libm::atan(a * u))).product()
            }
            Family::CornerPeak => corner_peak_integral(a),
            Family::Gaussian => a
                .iter()
                .zip(u)
                .map(|(&a, &u)| std::f64::consts::PI.sqrt() / (2.0 * a) * (libm::erf(a * (1.0 - u)) + libm::erf(a * u)))
                .product(),
            Family::Continuous => {
                a.iter().zip(u).map(|(&a, &u)| (-(-a * u).exp_m1() - (-a * (1.0 - u)).exp_m1()) / a).product()
            }
            Family::Discontinuous => a
                .iter()
                .zip(u)
                .enumerate()
                .map(|(j, (&a, &u))| (a * if j < 2 { u } else { 1.0 }).exp_m1() / a)
                .product(),
            Family::NarrowGaussians => {
                let w = self.width;
                let one =
                    |c: f64| -> f64 { (0..d).map(|_| (libm::erf((1.0 - c) / w) + libm::erf(c / w)) / 2.0).product() };
                0.5 * (one(1.0 / 3.0) + one(2.0 / 3.0))
            }
        }
    }
}

fn check_dim(dim: u32) -> Result<()> {
    if dim == 0 || dim as usize > MAX_DIM {
        return Err(Error::invalid("dim", dim, format!("[1, {MAX_DIM}]")));
    }
    Ok(())
}

/// `∫_{[0,1]^d} (1 + a·x)^-(d+1) dx` through `(1 + s)^-(d+1) = (1/d!) ∫_0^∞ t^d e^{-t(1+s)} dt`:
/// `(1 / (d! Π a_j)) ∫_0^∞ e^{-t} Π (1 - e^{-t a_j}) dt`, a smooth one-dimensional integral (no
/// cancellation, unlike the `2^d`-term inclusion-exclusion), by the exp-sinh rule
/// `t = exp(π/2 sinh τ)`.
pub fn corner_peak_integral(a: &[f64]) -> f64 {
    let g = |t: f64| -> f64 { (-t).exp() * a.iter().map(|&aj| -(-t * aj).exp_m1()).product::<f64>() };
    let h = 1.0 / 128.0;
    let mut sum = 0.0;
    for k in -640i32..=640 {
        let tau = k as f64 * h;
        let s = std::f64::consts::FRAC_PI_2 * tau.sinh();
        let t = s.exp();
        if !(t.is_finite()) || t > 800.0 {
            continue;
        }
        sum += g(t) * t * std::f64::consts::FRAC_PI_2 * tau.cosh();
    }
    let mut norm = 1.0;
    for (j, &aj) in a.iter().enumerate() {
        norm *= (j as f64 + 1.0) * aj;
    }
    sum * h / norm
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Inclusion-exclusion: (1/(d! Π a)) Σ_v (-1)^|v| / (1 + a·v), fine for small d.
    fn corner_by_inclusion_exclusion(a: &[f64]) -> f64 {
        let d = a.len();
        let mut s = 0.0;
        for v in 0u32..1 << d {
            let dot: f64 = (0..d).filter(|j| v >> j & 1 == 1).map(|j| a[j]).sum();
            let sign = if v.count_ones() % 2 == 0 { 1.0 } else { -1.0 };
            s += sign / (1.0 + dot);
        }
        let norm: f64 = a.iter().enumerate().map(|(j, &aj)| (j as f64 + 1.0) * aj).product();
        s / norm
    }

    #[test]
    fn corner_peak_closed_form_agrees_with_inclusion_exclusion() {
        for a in [vec![1.0], vec![0.5, 2.0], vec![0.3, 0.7, 1.1], vec![0.25; 4]] {
            let (q, ie) = (corner_peak_integral(&a), corner_by_inclusion_exclusion(&a));
            assert!((q - ie).abs() < 1e-12 * ie, "{a:?}: {q} vs {ie}");
        }
        // d = 1: ∫ (1 + a x)^-2 = 1 / (1 + a).
        assert!((corner_peak_integral(&[3.0]) - 0.25).abs() < 1e-14);
    }

    /// A midpoint rule in one dimension checks the one-dimensional closed forms.
    #[test]
    fn one_dimensional_closed_forms_match_a_midpoint_rule() {
        for fam in Family::ALL {
            let spec = IntegrandSpec::new(fam, 1).unwrap();
            let p = spec.params();
            let n = 400_000;
            let mid: f64 =
                (0..n).map(|i| warpmc_kernels::vegas::genz(&p, &[(i as f64 + 0.5) / n as f64])).sum::<f64>() / n as f64;
            let exact = spec.exact();
            // The discontinuous family's jump inside one midpoint cell costs O(1/n); the others'
            // error is O(1/n^2) (the continuous family's kink included).
            let tol = if fam == Family::Discontinuous { 1e-5 } else { 1e-9 };
            assert!((mid - exact).abs() < tol * exact.abs().max(1e-3), "{}: midpoint {mid} vs {exact}", fam.name());
        }
    }

    #[test]
    fn products_of_two_dimensions_match_a_midpoint_rule() {
        for fam in Family::ALL {
            let spec = IntegrandSpec::new(fam, 2).unwrap();
            let p = spec.params();
            let n = 1500;
            let mut s = 0.0;
            for i in 0..n {
                for j in 0..n {
                    s += warpmc_kernels::vegas::genz(&p, &[(i as f64 + 0.5) / n as f64, (j as f64 + 0.5) / n as f64]);
                }
            }
            let mid = s / (n * n) as f64;
            let exact = spec.exact();
            assert!((mid - exact).abs() < 2e-4 * exact.abs().max(1e-3), "{}: midpoint {mid} vs {exact}", fam.name());
        }
    }

    #[test]
    fn bad_parameters_are_named() {
        assert!(IntegrandSpec::new(Family::Gaussian, 0).unwrap_err().to_string().contains("dim"));
        assert!(IntegrandSpec::new(Family::Gaussian, 33).unwrap_err().to_string().contains("dim"));
        let mut s = IntegrandSpec::new(Family::Gaussian, 3).unwrap();
        assert!(s.set("a=-1").unwrap_err().to_string().contains("param a"));
        assert!(s.set("u=1.5").unwrap_err().to_string().contains("param u"));
        assert!(s.set("a=1:2").unwrap_err().to_string().contains("1 or 3 values"));
        assert!(s.set("b=1").unwrap_err().to_string().contains("one of a, u, width"));
        assert!(Family::parse("nope").unwrap_err().to_string().contains("integrand"));
        s.set("a=1:2:3").unwrap();
        assert_eq!(s.a, [1.0, 2.0, 3.0]);
    }
}
