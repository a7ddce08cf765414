//! One-asset instruments: European, Asian (arithmetic, geometric, knock-out barrier), lookbacks
//! under GBM (floating and fixed strike) and GPU Gems 3's lookback under GARCH(1,1) volatility.
//!
//! Data flows as in [`crate::pricing`]: an [`Instrument`] (named parameters, validated) -> the
//! kernels' [`PathSteps`] in units `U` -> a backend's exact sums of `(payoff, control)` ->
//! an [`InstrumentReport`] with the plain price, the control-variate price (coefficient
//! estimated in the same run) and, where one exists, a closed-form reference and its z-score.
//! The paths and payoffs are documented in [`warpmc_kernels::instrument`]; the `N`-asset
//! basket's in [`warpmc_kernels::basket`] and [`crate::basket`]. A run draws its normals from a
//! generator's streams (Monte Carlo) or from randomised Sobol' points ([`crate::qmc`]).

use std::collections::BTreeMap;
use std::time::Instant;

use serde::Serialize;
use warpmc_kernels::accum::PairMoments;
use warpmc_kernels::asian::split_f64;
use warpmc_kernels::basket::{self as kbasket, BasketJob, BasketLeg};
use warpmc_kernels::instrument::{Legs, PathSteps, flags, kind};

use crate::backend::Executor;
use crate::basket::{BasketPayoff, BasketSpec, parse_list, parse_matrix, uniform_correlation};
use crate::closed_form::{self, Market, OptionType};
use crate::distributions::Transform;
use crate::generators::GeneratorKind;
use crate::pricing::{Mode, Z_95, limits};
use crate::qmc::{QmcSettings, mean_se_of, replicate_means};
use crate::{Error, Result};

/// The instruments of this module, by their command-line names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum InstrumentName {
    AsianBasket,
    EuropeanCall,
    EuropeanPut,
    AsianArithmetic,
    AsianGeometric,
    AsianBarrier,
    LookbackFloating,
    LookbackFixed,
    LookbackGarch,
}

impl InstrumentName {
    pub const ALL: [InstrumentName; 9] = [
        InstrumentName::AsianBasket,
        InstrumentName::EuropeanCall,
        InstrumentName::EuropeanPut,
        InstrumentName::AsianArithmetic,
        InstrumentName::AsianGeometric,
        InstrumentName::AsianBarrier,
        InstrumentName::LookbackFloating,
        InstrumentName::LookbackFixed,
        InstrumentName::LookbackGarch,
    ];

    pub fn name(self) -> &'static str {
        match self {
            InstrumentName::AsianBasket => "asian-basket",
            InstrumentName::EuropeanCall => "european-call",
            InstrumentName::EuropeanPut => "european-put",
            InstrumentName::AsianArithmetic => "asian-arithmetic",
            InstrumentName::AsianGeometric => "asian-geometric",
            InstrumentName::AsianBarrier => "asian-barrier",
            InstrumentName::LookbackFloating => "lookback-floating",
            InstrumentName::LookbackFixed => "lookback-fixed",
            InstrumentName::LookbackGarch => "lookback-garch",
        }
    }

    /// The instrument called `name`, or an error listing the names.
    pub fn from_name(name: &str) -> Result<Self> {
        Self::ALL.into_iter().find(|i| i.name() == name).ok_or_else(|| {
            let names: Vec<_> = Self::ALL.iter().map(|i| i.name()).collect();
            Error::invalid("instrument", name, format!("one of {}", names.join(", ")))
        })
    }

    /// The parameters this instrument takes, with their defaults (see [`PARAMS`]).
    pub fn params(self) -> &'static [&'static str] {
        const EURO: &[&str] = &["spot", "strike", "rate", "vol", "maturity", "dividend", "steps"];
        const ASIAN: &[&str] = &["spot", "strike", "rate", "vol", "maturity", "dividend", "steps", "option"];
        const BARRIER: &[&str] =
            &["spot", "strike", "rate", "vol", "maturity", "dividend", "steps", "option", "barrier", "direction"];
        const FLOATING: &[&str] = &["spot", "rate", "vol", "maturity", "dividend", "steps", "option"];
        const GARCH: &[&str] = &["spot", "rate", "maturity", "steps", "a0", "a1", "a2", "vol0", "eps0"];
        const BASKET: &[&str] = &[
            "assets",
            "spots",
            "vols",
            "dividends",
            "weights",
            "corr",
            "correlation",
            "payoff",
            "strike",
            "option",
            "rate",
            "maturity",
            "steps",
            "spot_a",
            "spot_b",
            "vol_a",
            "vol_b",
        ];
        match self {
            InstrumentName::AsianBasket => BASKET,
            InstrumentName::EuropeanCall | InstrumentName::EuropeanPut => EURO,
            InstrumentName::AsianArithmetic | InstrumentName::AsianGeometric | InstrumentName::LookbackFixed => ASIAN,
            InstrumentName::AsianBarrier => BARRIER,
            InstrumentName::LookbackFloating => FLOATING,
            InstrumentName::LookbackGarch => GARCH,
        }
    }
}

/// Every parameter: name, default, allowed range in words, meaning. The defaults of `steps`
/// depend on the instrument (see [`default_steps`]).
pub const PARAMS: &[(&str, &str, &str, &str)] = &[
    ("spot", "100", "(0, 1e12]", "initial price S_0"),
    ("strike", "100", "(0, 1e12]", "strike K"),
    ("rate", "0.05", "[-1, 1]", "risk-free rate r, continuously compounded, per year"),
    ("vol", "0.2", "[0, 5]", "volatility σ per year (0 gives the deterministic payoff)"),
    ("maturity", "1", "(0, 100]", "time to maturity T in years"),
    ("dividend", "0", "[-1, 1]", "continuous dividend yield q per year"),
    ("steps", "see below", "[1, 1000000]", "monitoring dates t_i = i T / steps"),
    ("option", "call", "call or put", "the payoff's side"),
    ("barrier", "130", "(0, 1e12]", "knock-out level B"),
    ("direction", "up", "up or down", "knock out at or above B (up) or at or below it (down)"),
    ("a0", "2e-6", "(0, 1]", "GARCH constant A_0 (per-step variance)"),
    ("a1", "0.9", "[0, 1)", "GARCH weight A_1 of the last variance"),
    ("a2", "0.08", "[0, 1), a1 + a2 < 1", "GARCH weight A_2 of the last squared shock"),
    ("vol0", "0.01", "[0, 1]", "GARCH initial per-step volatility vol_0"),
    ("eps0", "0", "[-0.5, 0.5]", "GARCH initial shock ε_0"),
    ("assets", "2", "[1, 32]", "basket: the number of assets N (default: the lists' length, else 2)"),
    ("spots", "100", "(0, 1e12] each", "basket: initial prices, one for all or one per asset (a,b,...)"),
    ("vols", "0.2,0.3,0.2,...", "[0, 5] each", "basket: volatilities (default: the chapter's 0.2 and 0.3, repeated)"),
    ("dividends", "0", "[-1, 1] each", "basket: continuous dividend yields"),
    ("weights", "1/N each", "(0, 1e12] each", "basket: weights w_k of the average payoff"),
    ("corr", "0.5", "[-1, 1]", "basket: one correlation for every pair of assets"),
    (
        "correlation",
        "none",
        "N rows separated by ';' of N entries separated by ','",
        "basket: the correlation matrix (symmetric positive semidefinite, unit diagonal)",
    ),
    (
        "payoff",
        "chapter",
        "chapter or average",
        "basket: the chapter's (mean of the maximum - final maximum)⁺, or (ω(mean of Σ w_k S_k - K))⁺",
    ),
    ("spot_a", "100", "(0, 1e12]", "basket, two assets: spots = spot_a,spot_b (the chapter's names)"),
    ("spot_b", "100", "(0, 1e12]", "basket, two assets: the second spot"),
    ("vol_a", "0.2", "[0, 5]", "basket, two assets: vols = vol_a,vol_b"),
    ("vol_b", "0.3", "[0, 5]", "basket, two assets: the second volatility"),
];

/// Default number of dates: 1 for the European, 256 (the chapter's) for the others.
pub fn default_steps(name: InstrumentName) -> u32 {
    match name {
        InstrumentName::EuropeanCall | InstrumentName::EuropeanPut => 1,
        _ => 256,
    }
}

/// The `asian-basket`'s assets from its parameters (see [`PARAMS`]): lists of one value for all
/// assets or one per asset, the chapter's two-asset names as aliases, `corr` or `correlation`.
fn basket_params(params: &BTreeMap<String, String>) -> Result<BasketSpec> {
    let has = |k: &str| params.contains_key(k);
    let aliases = ["spot_a", "spot_b", "vol_a", "vol_b"];
    let list_len = |k: &str| params.get(k).map(|t| t.split(',').count()).filter(|&n| n > 1);
    let rows = params.get("correlation").map(|t| t.split(';').count());
    let assets = match params.get("assets") {
        Some(text) => {
            let v = number("assets", text)?;
            if v.fract() != 0.0 || !(1.0..=kbasket::MAX_ASSETS as f64).contains(&v) {
                return Err(Error::invalid("assets", text, format!("[1, {}], an integer", kbasket::MAX_ASSETS)));
            }
            v as usize
        }
        None if aliases.iter().any(|k| has(k)) => 2,
        None => {
            ["spots", "vols", "dividends", "weights"].iter().filter_map(|k| list_len(k)).chain(rows).max().unwrap_or(2)
        }
    };
    if aliases.iter().any(|k| has(k)) {
        if assets != 2 {
            return Err(Error::invalid(
                "assets",
                assets,
                "2 with spot_a, spot_b, vol_a or vol_b (the chapter's two assets)",
            ));
        }
        for (alias, list) in [("spot_a", "spots"), ("spot_b", "spots"), ("vol_a", "vols"), ("vol_b", "vols")] {
            if has(alias) && has(list) {
                return Err(Error::invalid("param", alias, format!("{alias} or {list}, not both")));
            }
        }
    }
    let pair = |a: &'static str, b: &'static str, d: [&str; 2]| -> Result<String> {
        let x =
            |k: &'static str, d: &str| params.get(k).map_or(Ok(d.parse::<f64>().expect("a default")), |t| number(k, t));
        Ok(format!("{},{}", x(a, d[0])?, x(b, d[1])?))
    };
    let spots_text = match params.get("spots") {
        Some(t) => t.clone(),
        None if has("spot_a") || has("spot_b") => pair("spot_a", "spot_b", ["100", "100"])?,
        None => "100".into(),
    };
    let vols_text = match params.get("vols") {
        Some(t) => t.clone(),
        None if has("vol_a") || has("vol_b") => pair("vol_a", "vol_b", ["0.2", "0.3"])?,
        None => (0..assets).map(|k| if k % 2 == 0 { "0.2" } else { "0.3" }).collect::<Vec<_>>().join(","),
    };
    let spots = parse_list("spots", &spots_text, assets)?;
    let vols = parse_list("vols", &vols_text, assets)?;
    let dividends = parse_list("dividends", params.get("dividends").map_or("0", |s| s.as_str()), assets)?;
    let weights = match params.get("weights") {
        Some(t) => parse_list("weights", t, assets)?,
        None => vec![1.0 / assets as f64; assets],
    };
    let correlation = match (params.get("corr"), params.get("correlation")) {
        (Some(_), Some(_)) => return Err(Error::invalid("param", "corr", "corr or correlation, not both")),
        (_, Some(text)) => parse_matrix(text, assets)?,
        (Some(text), None) => {
            let rho = number("corr", text)?;
            in_range("corr", rho, rho.abs() <= 1.0)?;
            uniform_correlation(assets, rho)
        }
        (None, None) => uniform_correlation(assets, 0.5),
    };
    let payoff = match params.get("payoff").map(|s| s.trim()) {
        None | Some("chapter") => BasketPayoff::Chapter,
        Some("average") => BasketPayoff::Average,
        Some(other) => return Err(Error::invalid("payoff", other, "chapter or average")),
    };
    if payoff == BasketPayoff::Chapter
        && let Some(k) = ["strike", "option"].into_iter().find(|k| has(k))
    {
        return Err(Error::invalid(
            "param",
            k,
            "strike and option with payoff=average only (the chapter's payoff has none)",
        ));
    }
    BasketSpec::new(payoff, spots, vols, dividends, weights, correlation)
}

/// What the kernels run for one sample: one-asset legs ([`Legs`]) or a basket's job and
/// coefficient sets.
#[derive(Clone, Debug, PartialEq)]
pub enum KernelLegs {
    Path(Legs),
    Basket(BasketJob, Vec<BasketLeg>),
}

impl KernelLegs {
    /// Legs per sample.
    fn count(&self) -> u32 {
        match self {
            KernelLegs::Path(l) => l.count.clamp(1, 3),
            KernelLegs::Basket(_, legs) => legs.len() as u32,
        }
    }
}

/// A contract with its parameters, validated.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Instrument {
    pub name: InstrumentName,
    pub spot: f64,
    pub strike: f64,
    pub rate: f64,
    pub vol: f64,
    pub maturity: f64,
    pub dividend: f64,
    pub steps: u32,
    pub put: bool,
    pub barrier: f64,
    pub barrier_up: bool,
    /// GARCH `A_0, A_1, A_2, vol_0, ε_0`.
    pub garch: [f64; 5],
    /// The `asian-basket`'s assets (its `spot`, `vol` and `dividend` above are asset 1's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub basket: Option<BasketSpec>,
}

fn param_entry(key: &str) -> Option<&'static (&'static str, &'static str, &'static str, &'static str)> {
    PARAMS.iter().find(|p| p.0 == key)
}

fn number(field: &'static str, text: &str) -> Result<f64> {
    let allowed = param_entry(field).map_or("a number", |p| p.2);
    match text.trim().parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err(Error::invalid(field, text, format!("{allowed} (a finite number)"))),
    }
}

fn in_range(field: &'static str, v: f64, ok: bool) -> Result<f64> {
    let allowed = param_entry(field).map_or("", |p| p.2);
    if ok { Ok(v) } else { Err(Error::invalid(field, v, allowed)) }
}

impl Instrument {
    /// Build `name` from `key = value` parameters (missing ones take their defaults). An unknown
    /// key, a value that does not parse, or one outside its range is an error naming the key.
    pub fn new(name: InstrumentName, params: &BTreeMap<String, String>) -> Result<Self> {
        let allowed = name.params();
        for key in params.keys() {
            if !allowed.contains(&key.as_str()) {
                return Err(Error::invalid(
                    "param",
                    key,
                    format!("a parameter of {}: {}", name.name(), allowed.join(", ")),
                ));
            }
        }
        let get = |field: &'static str| -> Result<f64> {
            match params.get(field) {
                Some(text) => number(field, text),
                None => number(field, param_entry(field).expect("every parameter has an entry").1),
            }
        };
        let word = |field: &'static str, yes: &str, no: &str, default: bool| -> Result<bool> {
            match params.get(field).map(|s| s.trim()) {
                None => Ok(default),
                Some(s) if s == yes => Ok(true),
                Some(s) if s == no => Ok(false),
                Some(s) => Err(Error::invalid(field, s, format!("{yes} or {no}"))),
            }
        };
        let spot = get("spot")?;
        let strike = get("strike")?;
        let rate = get("rate")?;
        let vol = get("vol")?;
        let maturity = get("maturity")?;
        let dividend = get("dividend")?;
        let steps = match params.get("steps") {
            None => default_steps(name),
            Some(text) => {
                let v = number("steps", text)?;
                if v.fract() != 0.0 || !(1.0..=limits::STEPS_MAX as f64).contains(&v) {
                    return Err(Error::invalid("steps", text, format!("[1, {}], an integer", limits::STEPS_MAX)));
                }
                v as u32
            }
        };
        let put = match name {
            InstrumentName::EuropeanCall => false,
            InstrumentName::EuropeanPut => true,
            _ => word("option", "put", "call", false)?,
        };
        let barrier = get("barrier")?;
        let barrier_up = word("direction", "up", "down", true)?;
        let garch = [get("a0")?, get("a1")?, get("a2")?, get("vol0")?, get("eps0")?];
        let basket = if name == InstrumentName::AsianBasket { Some(basket_params(params)?) } else { None };
        let (spot, vol, dividend) = match &basket {
            Some(b) => (b.spots[0], b.vols[0], b.dividends[0]),
            None => (spot, vol, dividend),
        };
        let i = Instrument {
            name,
            spot,
            strike,
            rate,
            vol,
            maturity,
            dividend,
            steps,
            put,
            barrier,
            barrier_up,
            garch,
            basket,
        };
        i.validate()?;
        Ok(i)
    }

    /// Check every field against its range (NaN is never in range).
    pub fn validate(&self) -> Result<()> {
        let pos = |f: &'static str, v: f64, hi: f64| in_range(f, v, v > 0.0 && v <= hi);
        pos("spot", self.spot, limits::SPOT_MAX)?;
        pos("strike", self.strike, limits::SPOT_MAX)?;
        in_range("rate", self.rate, self.rate.abs() <= limits::RATE_ABS_MAX)?;
        in_range("vol", self.vol, (0.0..=limits::VOL_MAX).contains(&self.vol))?;
        pos("maturity", self.maturity, limits::MATURITY_MAX)?;
        in_range("dividend", self.dividend, self.dividend.abs() <= limits::RATE_ABS_MAX)?;
        if !(1..=limits::STEPS_MAX).contains(&self.steps) {
            return Err(Error::invalid("steps", self.steps, format!("[1, {}]", limits::STEPS_MAX)));
        }
        pos("barrier", self.barrier, limits::SPOT_MAX)?;
        let [a0, a1, a2, vol0, eps0] = self.garch;
        pos("a0", a0, 1.0)?;
        in_range("a1", a1, (0.0..1.0).contains(&a1))?;
        in_range("a2", a2, (0.0..1.0).contains(&a2) && a1 + a2 < 1.0)?;
        in_range("vol0", vol0, (0.0..=1.0).contains(&vol0))?;
        in_range("eps0", eps0, eps0.abs() <= 0.5)?;
        if let Some(b) = &self.basket {
            BasketSpec::new(
                b.payoff,
                b.spots.clone(),
                b.vols.clone(),
                b.dividends.clone(),
                b.weights.clone(),
                b.correlation.clone(),
            )?;
        }
        Ok(())
    }

    pub(crate) fn market(&self) -> Market {
        Market {
            spot: self.spot,
            rate: self.rate,
            dividend_yield: self.dividend,
            volatility: self.vol,
            maturity: self.maturity,
        }
    }

    pub(crate) fn option_type(&self) -> OptionType {
        if self.put { OptionType::Put } else { OptionType::Call }
    }

    fn carry(&self) -> f64 {
        match self.name {
            InstrumentName::LookbackGarch => self.rate,
            _ => self.rate - self.dividend,
        }
    }

    /// Discount factor `e^{-rT}`.
    pub fn discount(&self) -> f64 {
        (-self.rate * self.maturity).exp()
    }

    /// The unit `U` of the kernels' values: the largest of the spot, the forward and the strike,
    /// so that payoffs and their squares sit well inside the exact sums' range.
    pub fn unit(&self) -> f64 {
        if let Some(b) = &self.basket {
            return b.unit(self.rate, self.maturity, self.strike);
        }
        let forward = self.spot * (self.carry() * self.maturity).exp();
        let mut u = self.spot.max(forward);
        if self.uses_strike() {
            u = u.max(self.strike);
        }
        u
    }

    fn uses_strike(&self) -> bool {
        match &self.basket {
            Some(b) => b.payoff == BasketPayoff::Average,
            None => !matches!(self.name, InstrumentName::LookbackFloating | InstrumentName::LookbackGarch),
        }
    }

    /// What the kernels run for one sample of the price: one leg of weight 1.
    pub fn kernel_legs(&self, transform: Transform, antithetic: bool) -> KernelLegs {
        match &self.basket {
            Some(_) => KernelLegs::Basket(
                self.basket_job(transform, antithetic, 1),
                vec![self.basket_leg_in(self.unit(), 1.0)],
            ),
            None => KernelLegs::Path(Legs::single(self.kernel_steps(transform, antithetic))),
        }
    }

    /// The basket kernels' shared input for `legs` legs (a basket only).
    pub fn basket_job(&self, transform: Transform, antithetic: bool, legs: u32) -> BasketJob {
        let b = self.basket.as_ref().expect("a basket");
        let mut f = 0;
        if self.put {
            f |= kbasket::flags::PUT;
        }
        if antithetic {
            f |= kbasket::flags::ANTITHETIC;
        }
        BasketJob {
            assets: b.assets() as u32,
            steps: self.steps,
            normals: transform.code(),
            flags: f,
            payoff: match b.payoff {
                BasketPayoff::Chapter => kbasket::payoff::CHAPTER,
                BasketPayoff::Average => kbasket::payoff::AVERAGE,
            },
            legs,
        }
    }

    /// This basket's coefficient set in units of `u`, with weight `w` in the sample.
    pub fn basket_leg_in(&self, u: f64, w: f64) -> BasketLeg {
        let b = self.basket.as_ref().expect("a basket");
        b.leg(self.rate, self.maturity, self.steps, u, self.strike, w)
    }

    /// The one-asset kernels' input: per-step coefficients rounded once from `f64` (the basket
    /// has its own, [`Self::kernel_legs`]; asked here, it gets a European's).
    pub fn kernel_steps(&self, transform: Transform, antithetic: bool) -> PathSteps {
        self.kernel_steps_in(transform, antithetic, self.unit())
    }

    /// [`Self::kernel_steps`] in units of `u` (the legs of a finite difference share the base
    /// contract's unit, so that their payoffs can be subtracted).
    pub fn kernel_steps_in(&self, transform: Transform, antithetic: bool, u: f64) -> PathSteps {
        let dt = self.maturity / self.steps as f64;
        let code = match self.name {
            InstrumentName::EuropeanCall | InstrumentName::EuropeanPut | InstrumentName::AsianBasket => kind::EUROPEAN,
            InstrumentName::AsianArithmetic => kind::ASIAN_ARITHMETIC,
            InstrumentName::AsianGeometric => kind::ASIAN_GEOMETRIC,
            InstrumentName::AsianBarrier => kind::ASIAN_BARRIER,
            InstrumentName::LookbackFloating => kind::LOOKBACK_FLOATING,
            InstrumentName::LookbackFixed => kind::LOOKBACK_FIXED,
            InstrumentName::LookbackGarch => kind::LOOKBACK_GARCH,
        };
        let garch = self.name == InstrumentName::LookbackGarch;
        let mut f = 0;
        if self.put {
            f |= flags::PUT;
        }
        if antithetic {
            f |= flags::ANTITHETIC;
        }
        if self.barrier_up {
            f |= flags::BARRIER_UP;
        }
        PathSteps {
            kind: code,
            steps: self.steps,
            normals: transform.code(),
            flags: f,
            ln_s0: split_f64((self.spot / u).ln()),
            mu: if garch { (self.rate * dt) as f32 } else { ((self.carry() - 0.5 * self.vol * self.vol) * dt) as f32 },
            sig: if garch { 0.0 } else { (self.vol * dt.sqrt()) as f32 },
            strike: self.strike / u,
            barrier: self.barrier / u,
            s0: self.spot / u,
            garch: self.garch.map(|x| x as f32),
            vega: [dt.sqrt() as f32, (self.vol * dt) as f32],
            pad: 0,
        }
    }

    /// `E[control]`, undiscounted, in units of `U` (see [`warpmc_kernels::instrument`]), or
    /// `None` where it has no closed form here (the geometric Asian at zero volatility is the
    /// deterministic value, computed directly).
    pub fn control_expectation(&self) -> Option<f64> {
        let u = self.unit();
        if let Some(b) = &self.basket {
            return b.control_expectation(self.rate, self.maturity, self.steps, u, self.strike, self.put);
        }
        match self.name {
            InstrumentName::AsianArithmetic | InstrumentName::AsianBarrier => {
                Some(self.geometric_price()? / self.discount() / u)
            }
            _ => Some(self.spot * (self.carry() * self.maturity).exp() / u),
        }
    }

    /// The discrete geometric Asian's price on this contract's dates and strike.
    fn geometric_price(&self) -> Option<f64> {
        if self.vol == 0.0 {
            // ln G = ln S + (r - q) τ1, τ1 = T (n + 1) / (2n): deterministic.
            let n = self.steps as f64;
            let g = self.spot * (self.carry() * self.maturity * (n + 1.0) / (2.0 * n)).exp();
            let w = if self.put { -1.0 } else { 1.0 };
            return Some(self.discount() * (w * (g - self.strike)).max(0.0));
        }
        closed_form::geometric_asian(&self.market(), self.strike, self.steps, self.option_type()).ok().map(|g| g.price)
    }

    /// A reference price: exact where a closed form covers the contract, approximate (BGK's
    /// continuity correction for discrete lookbacks) where said so, `None` otherwise.
    pub fn reference(&self) -> Option<Reference> {
        let exact = |price| Some(Reference { price, kind: "closed form" });
        if self.vol == 0.0 && self.name != InstrumentName::LookbackGarch {
            return None;
        }
        let m = self.market();
        let t = self.option_type();
        match self.name {
            InstrumentName::EuropeanCall | InstrumentName::EuropeanPut => {
                closed_form::black_scholes(&m, self.strike, t).ok().and_then(|g| exact(g.price))
            }
            InstrumentName::AsianGeometric => self.geometric_price().and_then(exact),
            InstrumentName::LookbackFloating => closed_form::lookback_floating_discrete_bgk(&m, self.steps, t)
                .ok()
                .map(|price| Reference { price, kind: "BGK-corrected continuous (approximate)" }),
            InstrumentName::LookbackFixed => closed_form::lookback_fixed_discrete_bgk(&m, self.strike, self.steps, t)
                .ok()
                .map(|price| Reference { price, kind: "BGK-corrected continuous (approximate)" }),
            InstrumentName::LookbackGarch => self.garch_constant_vol_reference().and_then(exact),
            InstrumentName::AsianArithmetic | InstrumentName::AsianBarrier | InstrumentName::AsianBasket => None,
        }
    }

    /// The GARCH lookback with `A_1 = A_2 = 0` is GBM with per-step variance `A_0`, and then
    /// `e^{-rT} E[(s_t - s_n)⁺] = S_0 P(τ)`, the Black-Scholes put on spot 1, strike 1, rate
    /// `r`, volatility `√(A_0/dt)` and maturity `τ = T - t`: `s_n / s_t` is independent of
    /// `s_t`, and `E[s_t] e^{-rt} = S_0`. The price is the sum over the dates `t = 0 .. n-1`.
    pub fn garch_constant_vol_reference(&self) -> Option<f64> {
        let [a0, a1, a2, ..] = self.garch;
        if self.name != InstrumentName::LookbackGarch || a1 != 0.0 || a2 != 0.0 {
            return None;
        }
        let n = self.steps;
        let dt = self.maturity / n as f64;
        let sigma = (a0 / dt).sqrt();
        let mut sum = 0.0;
        for t in 0..n {
            let m = Market {
                spot: 1.0,
                rate: self.rate,
                dividend_yield: 0.0,
                volatility: sigma,
                maturity: (n - t) as f64 * dt,
            };
            sum += closed_form::black_scholes(&m, 1.0, OptionType::Put).ok()?.price;
        }
        Some(self.spot * sum)
    }
}

/// A reference price and what kind of value it is.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Reference {
    pub price: f64,
    pub kind: &'static str,
}

/// How to run an instrument.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunSettings {
    pub paths: u64,
    pub seed: u64,
    pub mode: Mode,
    pub generator: GeneratorKind,
    pub transform: Transform,
    /// Antithetic variates: each of the `paths` samples averages a path and its mirror.
    pub antithetic: bool,
    /// Also estimate the Greeks ([`crate::greeks`]) on the same paths (read by the CLI and job
    /// files; [`price`] itself ignores it).
    pub greeks: bool,
    /// Randomised quasi-Monte Carlo instead of the generator's streams ([`crate::qmc`]).
    pub qmc: Option<QmcSettings>,
}

impl Default for RunSettings {
    fn default() -> Self {
        Self {
            paths: 1 << 18,
            seed: 1,
            mode: Mode::Exact,
            generator: GeneratorKind::default(),
            transform: Transform::BoxMuller,
            antithetic: false,
            greeks: false,
            qmc: None,
        }
    }
}

impl RunSettings {
    pub fn validate(&self, generator_check: bool) -> Result<()> {
        if !(limits::PATHS_MIN..=limits::PATHS_MAX).contains(&self.paths) {
            return Err(Error::invalid("paths", self.paths, format!("[{}, 2^40]", limits::PATHS_MIN)));
        }
        if generator_check
            && self.qmc.is_none()
            && let Some(allowed) = crate::backend::basket_transform_refusal(self.transform.code(), self.generator)
        {
            return Err(Error::invalid("transform", self.transform.name(), allowed));
        }
        Ok(())
    }

    /// [`Self::validate`] for instrument `i`: also the QMC settings against its dates (the
    /// basket has no QMC).
    pub fn validate_for(&self, i: &Instrument) -> Result<()> {
        self.validate(true)?;
        if let Some(q) = &self.qmc {
            if i.basket.is_some() {
                return Err(Error::invalid(
                    "qmc",
                    i.name.name(),
                    "the one-asset instruments (the basket's multi-asset Brownian bridge is not built)",
                ));
            }
            q.validate(self.paths, i.steps)?;
        }
        Ok(())
    }
}

/// Mean and standard error of `n` samples from their exact sums.
pub(crate) fn mean_se(n: f64, sum: f64, sum_sq: f64) -> (f64, f64) {
    let mean = sum / n;
    let var = ((sum_sq - n * mean * mean) / (n - 1.0)).max(0.0);
    (mean, (var / n).sqrt())
}

/// Mean and standard error of the samples' first quantity from a run's parts: one part is
/// Monte Carlo's ordinary estimate, several are QMC replicates (the mean of their means and its
/// standard error from their spread).
pub(crate) fn mean_and_se(parts: &[PairMoments]) -> (f64, f64) {
    match parts {
        [m] => mean_se(m.n as f64, m.sum_a.to_f64(), m.sum_aa.to_f64()),
        _ => mean_se_of(&replicate_means(parts).0),
    }
}

/// The control-variate estimate from the run's own sums.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ControlVariate {
    /// Discounted price `mean(payoff) - β (mean(control) - E[control])`.
    pub price: f64,
    pub std_error: f64,
    /// The coefficient `β = Cov(payoff, control) / Var(control)`, estimated in the same run.
    pub beta: f64,
    /// `Var(payoff) / Var(payoff - β control)`: how many times fewer samples it needs.
    pub variance_reduction: f64,
    /// The control's Monte Carlo mean against its expectation, in standard errors: a check of
    /// the generator, the transform and the path.
    pub check_z: f64,
}

/// A priced instrument.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct InstrumentReport {
    pub instrument: &'static str,
    pub price: f64,
    pub std_error: f64,
    pub ci95: [f64; 2],
    pub paths: u64,
    pub steps: u32,
    pub seed: u64,
    pub generator: GeneratorKind,
    pub transform: Transform,
    pub backend: String,
    pub device: String,
    pub mode: Mode,
    pub antithetic: bool,
    pub wall_seconds: f64,
    pub paths_per_second: f64,
    pub steps_per_second: f64,
    pub control_variate: Option<ControlVariate>,
    pub reference: Option<Reference>,
    /// `(price - reference) / std_error`.
    pub z: Option<f64>,
    /// Randomised QMC's points (the generator and transform then play no part: the normals
    /// are Sobol' coordinates by inversion), or null for Monte Carlo.
    pub qmc: Option<QmcReport>,
    pub contract: Instrument,
}

/// Where a QMC run's points came from, in its report.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct QmcReport {
    pub replicates: u32,
    pub points_per_replicate: u64,
    pub scramble: crate::qmc::Scramble,
    pub construction: crate::qmc::Construction,
    /// The direction numbers' table.
    pub directions: &'static str,
}

/// Price, standard error and control variate of one Monte Carlo run's sums, in units of the
/// kernels (times `scale` for the currency).
fn mc_estimates(m: &PairMoments, expected: Option<f64>, scale: f64) -> (f64, f64, Option<ControlVariate>) {
    let n = m.n as f64;
    let (sa, sb) = (m.sum_a.to_f64(), m.sum_b.to_f64());
    let (saa, sbb, sab) = (m.sum_aa.to_f64(), m.sum_bb.to_f64(), m.sum_ab.to_f64());
    let (mean, se) = mean_se(n, sa, saa);
    let control_variate = expected.and_then(|expected| {
        let (mb, seb) = mean_se(n, sb, sbb);
        let var_a = (saa - n * mean * mean) / (n - 1.0);
        let var_b = (sbb - n * mb * mb) / (n - 1.0);
        let cov = (sab - n * mean * mb) / (n - 1.0);
        // A control with no variance (zero volatility) has nothing to offer.
        if !(var_b > 0.0) || !(var_a > 0.0) {
            return None;
        }
        let beta = cov / var_b;
        let var_r = (var_a - 2.0 * beta * cov + beta * beta * var_b).max(0.0);
        Some(ControlVariate {
            price: scale * (mean - beta * (mb - expected)),
            std_error: scale * (var_r / n).sqrt(),
            beta,
            variance_reduction: if var_r > 0.0 { var_a / var_r } else { f64::INFINITY },
            check_z: (mb - expected) / seb,
        })
    });
    (scale * mean, scale * se, control_variate)
}

/// The same from independent replicates' sums (randomised QMC, [`crate::qmc`]): the mean of the
/// replicates' means and its standard error from their spread; the control variate's `β` from
/// all points pooled.
fn replicate_estimates(
    parts: &[PairMoments],
    pooled: &PairMoments,
    expected: Option<f64>,
    scale: f64,
) -> (f64, f64, Option<ControlVariate>) {
    let (ma, mb) = replicate_means(parts);
    let (mean, se) = mean_se_of(&ma);
    let control_variate = expected.and_then(|expected| {
        let n = pooled.n as f64;
        let (pa, pb) = (pooled.sum_a.to_f64() / n, pooled.sum_b.to_f64() / n);
        let var_a = (pooled.sum_aa.to_f64() - n * pa * pa) / (n - 1.0);
        let var_b = (pooled.sum_bb.to_f64() - n * pb * pb) / (n - 1.0);
        let cov = (pooled.sum_ab.to_f64() - n * pa * pb) / (n - 1.0);
        if !(var_b > 0.0) || !(var_a > 0.0) {
            return None;
        }
        let beta = cov / var_b;
        let adjusted: Vec<f64> = ma.iter().zip(&mb).map(|(a, b)| a - beta * (b - expected)).collect();
        let (price, se_cv) = mean_se_of(&adjusted);
        let (mean_b, se_b) = mean_se_of(&mb);
        Some(ControlVariate {
            price: scale * price,
            std_error: scale * se_cv,
            beta,
            variance_reduction: if se_cv > 0.0 { (se / se_cv) * (se / se_cv) } else { f64::INFINITY },
            check_z: (mean_b - expected) / se_b,
        })
    });
    (scale * mean, scale * se, control_variate)
}

/// Price, standard error and control variate of `i` from a run's parts (one for Monte Carlo,
/// one per replicate for QMC), in the currency.
pub(crate) fn estimates(i: &Instrument, parts: &[PairMoments]) -> (f64, f64, Option<ControlVariate>) {
    let scale = i.discount() * i.unit();
    let expected = i.control_expectation();
    match parts {
        [m] => mc_estimates(m, expected, scale),
        _ => {
            let mut pooled = PairMoments::ZERO;
            for p in parts {
                pooled.merge(p);
            }
            replicate_estimates(parts, &pooled, expected, scale)
        }
    }
}

/// Turn a run's exact sums into a report (`wall` seconds, on `exec`): one part for Monte
/// Carlo, one per replicate for QMC.
pub fn report(
    i: &Instrument,
    s: &RunSettings,
    parts: &[PairMoments],
    exec: &dyn Executor,
    wall: f64,
) -> Result<InstrumentReport> {
    let mut m = PairMoments::ZERO;
    for p in parts {
        m.merge(p);
    }
    if m.out_of_range > 0 {
        return Err(Error::OutOfRange(format!(
            "{} of {} samples of {} left the accumulators' range (|value| < 2^31 in units of {}): the price would \
             be biased; reduce vol or maturity",
            m.out_of_range,
            m.n,
            i.name.name(),
            i.unit()
        )));
    }
    let n = m.n as f64;
    let (price, std_error, control_variate) = estimates(i, parts);
    let reference = i.reference();
    let z = reference.and_then(|r| (std_error > 0.0).then(|| (price - r.price) / std_error));
    let qmc = s.qmc.map(|q| QmcReport {
        replicates: q.replicates,
        points_per_replicate: q.points(s.paths),
        scramble: q.scramble,
        construction: q.construction,
        directions: "Joe and Kuo, new-joe-kuo-6.21201",
    });
    Ok(InstrumentReport {
        instrument: i.name.name(),
        price,
        std_error,
        ci95: [price - Z_95 * std_error, price + Z_95 * std_error],
        paths: m.n,
        steps: i.steps,
        seed: s.seed,
        generator: s.generator,
        transform: if qmc.is_some() { Transform::Inversion } else { s.transform },
        backend: exec.kind().to_string(),
        device: exec.description(),
        mode: s.mode,
        antithetic: s.antithetic,
        wall_seconds: wall,
        paths_per_second: n / wall,
        steps_per_second: n * i.steps as f64 * if s.antithetic { 2.0 } else { 1.0 } / wall,
        control_variate,
        reference,
        z,
        qmc,
        contract: i.clone(),
    })
}

/// Price `i` on `exec`.
pub fn price(exec: &dyn Executor, i: &Instrument, s: &RunSettings) -> Result<InstrumentReport> {
    price_with_progress(exec, i, s, &mut |_, _| {})
}

/// [`price`], calling `progress(done, total)` after each batch of samples.
pub fn price_with_progress(
    exec: &dyn Executor,
    i: &Instrument,
    s: &RunSettings,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<InstrumentReport> {
    i.validate()?;
    s.validate_for(i)?;
    let legs = i.kernel_legs(s.transform, s.antithetic);
    let start = Instant::now();
    let parts = run_legs(exec, i, &legs, s, progress)?;
    report(i, s, &parts, exec, start.elapsed().as_secs_f64())
}

/// Exact sums of Monte Carlo samples `range` of `legs` with the generator, seed and mode of `s`.
pub fn run_range(
    exec: &dyn Executor,
    legs: &KernelLegs,
    s: &RunSettings,
    range: std::ops::Range<u64>,
) -> Result<PairMoments> {
    match legs {
        KernelLegs::Path(l) => exec.instrument_legs(l, s.generator, s.seed, range, s.mode),
        KernelLegs::Basket(job, coef) => exec.basket(job, coef, s.generator, s.seed, range, s.mode),
    }
}

/// Exact sums of `legs` over samples `0..s.paths` of instrument `i`, in batches the backend can
/// take (`progress(done, total)` after each): one part for Monte Carlo, one per replicate for
/// QMC. Every sample of a batch must be accounted for.
pub(crate) fn run_legs(
    exec: &dyn Executor,
    i: &Instrument,
    legs: &KernelLegs,
    s: &RunSettings,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Vec<PairMoments>> {
    // Path work per sample: the steps (times the assets), twice for antithetic pairs and for
    // the GARCH replay, once per leg.
    let passes = if s.antithetic { 2 } else { 1 } * if i.name == InstrumentName::LookbackGarch { 2 } else { 1 };
    let assets = i.basket.as_ref().map_or(1, |b| b.assets() as u32);
    let work = i.steps.saturating_mul(passes).saturating_mul(legs.count()).saturating_mul(assets);
    let batch = exec.batch_paths(work).max(1);
    // Samples `0..count` of one part, `run(range)` per batch; `done` counts across parts.
    let mut done = 0;
    let mut part =
        |count: u64, run: &mut dyn FnMut(std::ops::Range<u64>) -> Result<PairMoments>| -> Result<PairMoments> {
            let mut total = PairMoments::ZERO;
            let mut first = 0;
            while first < count {
                let end = (first + batch).min(count);
                total.merge(&run(first..end)?);
                done += end - first;
                first = end;
                progress(done, s.paths);
            }
            if total.n != count {
                return Err(Error::Gpu(format!("the backend accounted for {} of {} samples", total.n, count)));
            }
            Ok(total)
        };
    match (&s.qmc, legs) {
        (None, _) => Ok(vec![part(s.paths, &mut |r| run_range(exec, legs, s, r))?]),
        (Some(q), KernelLegs::Path(l)) => {
            let dims = q.dimensions(i.steps);
            let directions = q.directions(dims)?;
            let params = q.params(dims);
            (0..q.replicates)
                .map(|r| {
                    let keys = q.keys(s.seed, r, dims);
                    part(q.points(s.paths), &mut |range| {
                        exec.instrument_qmc(l, &params, &directions, &keys, range, s.mode)
                    })
                })
                .collect()
        }
        (Some(_), KernelLegs::Basket(..)) => Err(Error::invalid("qmc", i.name.name(), "the one-asset instruments")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(kv: &[(&str, &str)]) -> BTreeMap<String, String> {
        kv.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn names_round_trip() {
        for i in InstrumentName::ALL {
            assert_eq!(InstrumentName::from_name(i.name()).unwrap(), i);
        }
        let e = InstrumentName::from_name("asian-exotic").unwrap_err().to_string();
        assert!(e.contains("instrument") && e.contains("lookback-garch"), "{e}");
    }

    #[test]
    fn every_parameter_has_an_entry_and_defaults_validate() {
        for i in InstrumentName::ALL {
            for p in i.params() {
                assert!(param_entry(p).is_some(), "{p}");
            }
            Instrument::new(i, &BTreeMap::new()).unwrap();
        }
    }

    #[test]
    fn bad_input_names_the_field() {
        let cases: &[(InstrumentName, &[(&str, &str)], &str)] = &[
            (InstrumentName::EuropeanCall, &[("vol", "-0.1")], "vol"),
            (InstrumentName::EuropeanCall, &[("spot", "0")], "spot"),
            (InstrumentName::EuropeanCall, &[("spot", "NaN")], "spot"),
            (InstrumentName::EuropeanCall, &[("strike", "inf")], "strike"),
            (InstrumentName::EuropeanCall, &[("maturity", "0")], "maturity"),
            (InstrumentName::EuropeanCall, &[("maturity", "-1")], "maturity"),
            (InstrumentName::AsianArithmetic, &[("steps", "0")], "steps"),
            (InstrumentName::AsianArithmetic, &[("steps", "2.5")], "steps"),
            (InstrumentName::AsianArithmetic, &[("option", "straddle")], "option"),
            (InstrumentName::AsianBarrier, &[("direction", "sideways")], "direction"),
            (InstrumentName::EuropeanCall, &[("barrier", "120")], "param"),
            (InstrumentName::EuropeanCall, &[("volatility", "0.2")], "param"),
            (InstrumentName::LookbackGarch, &[("a1", "0.95"), ("a2", "0.1")], "a2"),
            (InstrumentName::LookbackGarch, &[("a0", "0")], "a0"),
            (InstrumentName::LookbackGarch, &[("vol", "0.2")], "param"),
        ];
        for (name, kv, field) in cases {
            let e = Instrument::new(*name, &params(kv)).unwrap_err();
            match &e {
                Error::InvalidParameter { field: f, .. } => assert_eq!(f, field, "{kv:?}: {e}"),
                _ => panic!("{kv:?}: {e}"),
            }
        }
        let s = RunSettings { paths: 1, ..Default::default() };
        assert!(matches!(s.validate(true), Err(Error::InvalidParameter { field: "paths", .. })));
    }

    #[test]
    fn garch_reference_is_the_sum_of_puts() {
        // One step: the payoff is (S_0 - S_T)⁺, a European put struck at the spot.
        let mut i = Instrument::new(
            InstrumentName::LookbackGarch,
            &params(&[("steps", "1"), ("a1", "0"), ("a2", "0"), ("a0", "0.04")]),
        )
        .unwrap();
        let m = Market { spot: 100.0, rate: 0.05, dividend_yield: 0.0, volatility: 0.2, maturity: 1.0 };
        let put = closed_form::black_scholes(&m, 100.0, OptionType::Put).unwrap().price;
        assert!((i.garch_constant_vol_reference().unwrap() - put).abs() < 1e-12);
        i.garch[1] = 0.5;
        assert_eq!(i.garch_constant_vol_reference(), None);
    }
}
