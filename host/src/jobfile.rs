//! Job files: one or more instruments and their run settings in TOML (`warpmc price JOB.toml`).
//!
//! ```toml
//! [run]                      # every key optional; these are the defaults
//! paths = 262144
//! seed = 1
//! mode = "exact"             # or "fast"
//! generator = "philox4x32-10"
//! transform = "box-muller"
//! antithetic = false
//! greeks = false             # also delta, gamma and vega with their standard errors
//!
//! [[instrument]]
//! name = "european-call"     # any name of `warpmc price --instrument`
//! strike = 110               # the instrument's parameters, as `--param` takes them
//! paths = 1000000            # run keys may be overridden per instrument
//! ```
//!
//! The chapter's two-asset basket is `name = "asian-basket"` with the keys `spot_a`, `spot_b`,
//! `vol_a`, `vol_b`, `corr`, `rate`, `maturity` and `steps` (defaults: `warpmc price`'s); it
//! takes the run keys but `antithetic` and `greeks`, which it does not offer.
//!
//! Values are numbers, strings or booleans as the key expects; `option = "put"`,
//! `direction = "down"`. An unknown key, a value of the wrong type or outside its range, or
//! malformed TOML is an error naming the instrument (by position and name) and the key.

use std::collections::BTreeMap;

use clap::ValueEnum;

use crate::distributions::Transform;
use crate::generators::GeneratorKind;
use crate::instruments::{Instrument, InstrumentName, RunSettings};
use crate::pricing::{AsianBasket, Mode, PricingJob};
use crate::{Error, Result};

/// The keys of the chapter's basket in a job file.
pub const BASKET_KEYS: [&str; 8] = ["spot_a", "spot_b", "vol_a", "vol_b", "corr", "rate", "maturity", "steps"];

/// What one entry prices.
#[derive(Clone, Debug, PartialEq)]
pub enum Contract {
    /// A one-asset instrument (`warpmc::instruments`).
    Instrument(Instrument),
    /// The chapter's two-asset basket, with its number of dates.
    Basket(AsianBasket, u32),
}

impl Contract {
    pub fn name(&self) -> &'static str {
        match self {
            Contract::Instrument(i) => i.name.name(),
            Contract::Basket(..) => "asian-basket",
        }
    }
}

/// The run keys, in `[run]` and in each `[[instrument]]`.
pub const RUN_KEYS: [&str; 7] = ["paths", "seed", "mode", "generator", "transform", "antithetic", "greeks"];

/// One instrument of a job file, with its settings.
#[derive(Clone, Debug, PartialEq)]
pub struct JobEntry {
    pub contract: Contract,
    pub settings: RunSettings,
}

impl JobEntry {
    /// The basket's pricing job (`None` for a one-asset instrument).
    pub fn basket_job(&self) -> Option<PricingJob> {
        match self.contract {
            Contract::Basket(option, steps) => Some(PricingJob {
                option,
                steps,
                paths: self.settings.paths,
                seed: self.settings.seed,
                mode: self.settings.mode,
                generator: self.settings.generator,
                transform: self.settings.transform,
            }),
            Contract::Instrument(_) => None,
        }
    }
}

/// The basket's entry from its `key = value` table (run keys already removed).
fn basket(at: &str, params: &BTreeMap<String, &toml::Value>, settings: &RunSettings) -> Result<JobEntry> {
    let mut option = AsianBasket::default();
    let mut steps = 256u32;
    for (k, v) in params {
        let Some(x) = v.as_float().or_else(|| v.as_integer().map(|i| i as f64)) else {
            return Err(field_error(at, k, v, "a number"));
        };
        match k.as_str() {
            "spot_a" => option.spot_a = x,
            "spot_b" => option.spot_b = x,
            "vol_a" => option.vol_a = x,
            "vol_b" => option.vol_b = x,
            "corr" => option.corr = x,
            "rate" => option.rate = x,
            "maturity" => option.maturity = x,
            "steps" if x.fract() == 0.0 && (1.0..=crate::pricing::limits::STEPS_MAX as f64).contains(&x) => {
                steps = x as u32
            }
            "steps" => {
                return Err(field_error(at, k, v, format!("an integer in [1, {}]", crate::pricing::limits::STEPS_MAX)));
            }
            _ => return Err(field_error(at, k, v, format!("a key of asian-basket: {}", BASKET_KEYS.join(", ")))),
        }
    }
    if settings.antithetic || settings.greeks {
        let key = if settings.antithetic { "antithetic" } else { "greeks" };
        return Err(field_error(at, key, true, "false: the basket has its own control variate, and no Greeks yet"));
    }
    let entry = JobEntry { contract: Contract::Basket(option, steps), settings: settings.clone() };
    entry.basket_job().expect("a basket").validate().map_err(|e| match e {
        Error::InvalidParameter { field, value, allowed } => field_error(at, field, value, allowed),
        other => other,
    })?;
    Ok(entry)
}

/// Where in the file an error is: `instrument 2 (asian-barrier)`.
fn place(index: usize, name: &str) -> String {
    format!("instrument {} ({name})", index + 1)
}

fn field_error(at: &str, key: &str, value: impl std::fmt::Display, allowed: impl Into<String>) -> Error {
    Error::InvalidParameter { field: "job", value: format!("{at}: {key} = {value}"), allowed: allowed.into() }
}

/// A TOML value as the text `--param` would take, for the instrument's own parser.
fn as_text(v: &toml::Value) -> Option<String> {
    match v {
        toml::Value::Integer(i) => Some(i.to_string()),
        toml::Value::Float(f) => Some(f.to_string()),
        toml::Value::String(s) => Some(s.clone()),
        _ => None,
    }
}

fn apply_run_key(s: &mut RunSettings, at: &str, key: &str, v: &toml::Value) -> Result<()> {
    let text = || as_text(v).unwrap_or_else(|| v.to_string());
    match key {
        "paths" => match v.as_integer() {
            Some(n) if n >= 2 => s.paths = n as u64,
            _ => return Err(field_error(at, key, v, "an integer in [2, 2^40]")),
        },
        "seed" => match v.as_integer() {
            Some(n) if n >= 0 => s.seed = n as u64,
            _ => return Err(field_error(at, key, v, "an integer in [0, 2^63)")),
        },
        "mode" => {
            s.mode = Mode::from_str(&text(), false).map_err(|_| field_error(at, key, v, "\"exact\" or \"fast\""))?
        }
        "generator" => {
            s.generator = GeneratorKind::from_name(&text())
                .ok_or_else(|| field_error(at, key, v, "a generator name of `warpmc info`"))?
        }
        "transform" => {
            s.transform = Transform::from_str(&text(), false).map_err(|_| {
                field_error(at, key, v, "\"box-muller\", \"inversion\", \"inversion-naive\", \"polar\" or \"ziggurat\"")
            })?
        }
        "antithetic" => s.antithetic = v.as_bool().ok_or_else(|| field_error(at, key, v, "true or false"))?,
        "greeks" => s.greeks = v.as_bool().ok_or_else(|| field_error(at, key, v, "true or false"))?,
        _ => unreachable!("only RUN_KEYS are applied"),
    }
    Ok(())
}

/// Parse a job file's text (`what` names the file in errors).
pub fn parse(text: &str, what: &str) -> Result<Vec<JobEntry>> {
    let doc: toml::Table = text.parse().map_err(|e: toml::de::Error| Error::InvalidParameter {
        field: "job",
        value: what.to_string(),
        allowed: format!("a TOML file: {}", e.to_string().trim_end()),
    })?;
    let mut defaults = RunSettings::default();
    for (key, value) in &doc {
        match (key.as_str(), value) {
            ("run", toml::Value::Table(run)) => {
                for (k, v) in run {
                    if !RUN_KEYS.contains(&k.as_str()) {
                        return Err(field_error("[run]", k, v, format!("a run key: {}", RUN_KEYS.join(", "))));
                    }
                    apply_run_key(&mut defaults, "[run]", k, v)?;
                }
            }
            ("instrument", toml::Value::Array(_)) => {}
            _ => return Err(field_error("the file", key, value, "a [run] table and [[instrument]] tables only")),
        }
    }
    let Some(toml::Value::Array(list)) = doc.get("instrument") else {
        return Err(Error::InvalidParameter {
            field: "job",
            value: what.to_string(),
            allowed: "at least one [[instrument]] table".into(),
        });
    };
    let mut out = Vec::with_capacity(list.len());
    for (index, item) in list.iter().enumerate() {
        let Some(table) = item.as_table() else {
            return Err(field_error(&place(index, "?"), "instrument", item, "a table"));
        };
        let name_text = match table.get("name") {
            Some(toml::Value::String(s)) => s.clone(),
            other => {
                let shown = other.map_or("missing".to_string(), |v| v.to_string());
                return Err(field_error(&place(index, "?"), "name", shown, "an instrument name, as a string"));
            }
        };
        let at = place(index, &name_text);
        let name = if name_text == "asian-basket" {
            None
        } else {
            Some(InstrumentName::from_name(&name_text).map_err(|e| match e {
                Error::InvalidParameter { allowed, .. } => {
                    field_error(&at, "name", &name_text, format!("{allowed}, or asian-basket (the chapter's basket)"))
                }
                other => other,
            })?)
        };
        // Run keys set this entry's settings; the rest are the contract's parameters.
        let mut settings = defaults.clone();
        let mut raw = BTreeMap::new();
        for (k, v) in table {
            if k == "name" {
                continue;
            }
            if RUN_KEYS.contains(&k.as_str()) {
                apply_run_key(&mut settings, &at, k, v)?;
            } else {
                raw.insert(k.clone(), v);
            }
        }
        let Some(name) = name else {
            out.push(basket(&at, &raw, &settings)?);
            continue;
        };
        let mut params = BTreeMap::new();
        for (k, v) in raw {
            let text = as_text(v).ok_or_else(|| field_error(&at, &k, v, "a number or a string"))?;
            params.insert(k, text);
        }
        let instrument = Instrument::new(name, &params).map_err(|e| match e {
            Error::InvalidParameter { field, value, allowed } => field_error(&at, field, value, allowed),
            other => other,
        })?;
        settings.validate(true).map_err(|e| match e {
            Error::InvalidParameter { field, value, allowed } => field_error(&at, field, value, allowed),
            other => other,
        })?;
        out.push(JobEntry { contract: Contract::Instrument(instrument), settings });
    }
    Ok(out)
}

/// Read and parse the job file at `path`.
pub fn read(path: &std::path::Path) -> Result<Vec<JobEntry>> {
    let what = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(format!("cannot read job file {what}"), e))?;
    parse(&text, &what)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        match parse(text, "job.toml") {
            Err(Error::InvalidParameter { field, value, allowed }) => format!("{field}: {value} / {allowed}"),
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn a_job_with_defaults_and_overrides() {
        let jobs = parse(
            r#"
            [run]
            paths = 5000
            seed = 7
            transform = "inversion"

            [[instrument]]
            name = "european-put"
            strike = 90

            [[instrument]]
            name = "asian-barrier"
            barrier = 150.5
            direction = "up"
            option = "call"
            steps = 12
            paths = 100
            antithetic = true
            "#,
            "job.toml",
        )
        .unwrap();
        assert_eq!(jobs.len(), 2);
        let (Contract::Instrument(a), Contract::Instrument(b)) = (&jobs[0].contract, &jobs[1].contract) else {
            panic!("two instruments")
        };
        assert_eq!(a.strike, 90.0);
        assert_eq!((jobs[0].settings.paths, jobs[0].settings.seed), (5000, 7));
        assert_eq!(jobs[0].settings.transform, Transform::Inversion);
        assert_eq!((b.barrier, b.steps), (150.5, 12));
        assert_eq!((jobs[1].settings.paths, jobs[1].settings.antithetic), (100, true));
    }

    #[test]
    fn the_chapters_basket_in_a_job_file() {
        let jobs = parse(
            "[run]\npaths = 4000\n[[instrument]]\nname = \"asian-basket\"\ncorr = -0.3\nsteps = 64\nseed = 9\n",
            "job.toml",
        )
        .unwrap();
        let job = jobs[0].basket_job().expect("the basket");
        assert_eq!((job.option.corr, job.steps, job.paths, job.seed), (-0.3, 64, 4000, 9));
        assert_eq!(job.option.vol_b, AsianBasket::default().vol_b);
        let e = err("[[instrument]]\nname = \"asian-basket\"\ncorr = 1.5\n");
        assert!(e.contains("instrument 1 (asian-basket): corr = 1.5") && e.contains("[-1, 1]"), "{e}");
        let e = err("[[instrument]]\nname = \"asian-basket\"\nstrike = 100\n");
        assert!(e.contains("strike") && e.contains("spot_a"), "{e}");
        let e = err("[[instrument]]\nname = \"asian-basket\"\nantithetic = true\n");
        assert!(e.contains("antithetic"), "{e}");
        let e = err("[[instrument]]\nname = \"asian-basket\"\nsteps = 0\n");
        assert!(e.contains("steps"), "{e}");
    }

    #[test]
    fn errors_name_the_instrument_and_the_key() {
        let e = err("[[instrument]]\nname = \"european-call\"\nvol = -1\n");
        assert!(e.contains("instrument 1 (european-call): vol = -1") && e.contains("[0, 5]"), "{e}");
        let e =
            err("[[instrument]]\nname = \"european-call\"\n[[instrument]]\nname = \"lookback-fixed\"\nbarrier = 3\n");
        assert!(e.contains("instrument 2 (lookback-fixed)") && e.contains("barrier"), "{e}");
        let e = err("[[instrument]]\nname = \"asian-exotic\"\n");
        assert!(e.contains("name = asian-exotic") && e.contains("european-call"), "{e}");
        let e = err("[run]\npaths = 1\n[[instrument]]\nname = \"european-call\"\n");
        assert!(e.contains("[run]: paths = 1"), "{e}");
        let e = err("[run]\nthreads = 4\n[[instrument]]\nname = \"european-call\"\n");
        assert!(e.contains("threads") && e.contains("antithetic"), "{e}");
        let e = err("[run]\nmode = \"quick\"\n[[instrument]]\nname = \"european-call\"\n");
        assert!(e.contains("mode") && e.contains("exact"), "{e}");
        let e = err("[run]\n");
        assert!(e.contains("at least one [[instrument]]"), "{e}");
        let e = err("[[instrument]]\nname = \"european-call\"\nstrike = [1, 2]\n");
        assert!(e.contains("strike") && e.contains("a number or a string"), "{e}");
        let e = err("[[instrument]\nname = 3");
        assert!(e.contains("job.toml") && e.contains("TOML") && e.contains("line 1"), "{e}");
        let e = err("[[instrument]]\nname = \"european-call\"\nspot = nan\n");
        assert!(e.contains("spot") && e.contains("(0, 1e12]"), "{e}");
    }
}
