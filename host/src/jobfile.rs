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
//! qmc = false                # randomised QMC (one-asset instruments), with:
//! replicates = 16
//! scramble = "owen"          # or "shift"
//! construction = "bridge"    # or "increments"
//!
//! [[instrument]]
//! name = "european-call"     # any name of `warpmc price --instrument`
//! strike = 110               # the instrument's parameters, as `--param` takes them
//! paths = 1000000            # run keys may be overridden per instrument
//! ```
//!
//! The `N`-asset basket is `name = "asian-basket"`; its lists are TOML arrays
//! (`spots = [100, 95, 110]`) and its matrix an array of rows (`correlation = [[1, 0.3], [0.3,
//! 1]]`); the chapter's keys `spot_a`, `spot_b`, `vol_a`, `vol_b` and `corr` still describe its
//! two-asset basket, whose defaults these are.
//!
//! Values are numbers, strings, booleans or (for the basket) arrays as the key expects;
//! `option = "put"`, `direction = "down"`. An unknown key, a value of the wrong type or outside its range, or
//! malformed TOML is an error naming the instrument (by position and name) and the key.

use std::collections::BTreeMap;

use clap::ValueEnum;

use crate::distributions::Transform;
use crate::generators::GeneratorKind;
use crate::instruments::{Instrument, InstrumentName, RunSettings};
use crate::pricing::Mode;
use crate::qmc::{Construction, QmcSettings, Scramble};
use crate::{Error, Result};

/// The run keys, in `[run]` and in each `[[instrument]]`.
pub const RUN_KEYS: [&str; 11] = [
    "paths",
    "seed",
    "mode",
    "generator",
    "transform",
    "antithetic",
    "greeks",
    "qmc",
    "replicates",
    "scramble",
    "construction",
];

/// One instrument of a job file, with its settings.
#[derive(Clone, Debug, PartialEq)]
pub struct JobEntry {
    pub instrument: Instrument,
    pub settings: RunSettings,
}

/// Where in the file an error is: `instrument 2 (asian-barrier)`.
fn place(index: usize, name: &str) -> String {
    format!("instrument {} ({name})", index + 1)
}

fn field_error(at: &str, key: &str, value: impl std::fmt::Display, allowed: impl Into<String>) -> Error {
    Error::InvalidParameter { field: "job", value: format!("{at}: {key} = {value}"), allowed: allowed.into() }
}

/// A TOML value as the text `--param` would take, for the instrument's own parser: an array
/// of numbers as `a,b,c`, an array of such rows as `a,b;c,d` (the basket's lists and matrix).
fn as_text(v: &toml::Value) -> Option<String> {
    match v {
        toml::Value::Integer(i) => Some(i.to_string()),
        toml::Value::Float(f) => Some(f.to_string()),
        toml::Value::String(s) => Some(s.clone()),
        toml::Value::Array(items) if !items.is_empty() => {
            let sep = if items.iter().all(|x| x.is_array()) { ";" } else { "," };
            let parts: Option<Vec<String>> = items
                .iter()
                .map(|x| match x {
                    toml::Value::Array(_) if sep == ";" => as_text(x).filter(|t| !t.contains(';')),
                    toml::Value::Integer(_) | toml::Value::Float(_) => as_text(x),
                    _ => None,
                })
                .collect();
            parts.map(|p| p.join(sep))
        }
        _ => None,
    }
}

/// Run keys as they are read: the QMC keys wait for the end of their table, since `qmc = true`
/// may come after `replicates` (the file's key order is not kept).
#[derive(Clone, Debug, Default)]
struct Run {
    s: RunSettings,
    qmc_on: bool,
    qmc: QmcSettings,
    /// A QMC key other than `qmc` that was set, for the error when `qmc` is off.
    qmc_key: Option<String>,
}

impl Run {
    /// The settings, with QMC's (an error if a QMC key was set without `qmc = true`).
    fn finish(&self, at: &str) -> Result<RunSettings> {
        if !self.qmc_on
            && let Some(k) = &self.qmc_key
        {
            return Err(field_error(at, k, "set", "with qmc = true only"));
        }
        Ok(RunSettings { qmc: self.qmc_on.then_some(self.qmc), ..self.s.clone() })
    }
}

fn apply_run_key(run: &mut Run, at: &str, key: &str, v: &toml::Value) -> Result<()> {
    let s = &mut run.s;
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
        "qmc" => run.qmc_on = v.as_bool().ok_or_else(|| field_error(at, key, v, "true or false"))?,
        "replicates" | "scramble" | "construction" => {
            run.qmc_key = Some(key.to_string());
            let q = &mut run.qmc;
            match key {
                "replicates" => match v.as_integer() {
                    Some(n) if (0..=u32::MAX as i64).contains(&n) => q.replicates = n as u32,
                    _ => return Err(field_error(at, key, v, "an integer in [2, 4096]")),
                },
                "scramble" => {
                    q.scramble = Scramble::from_str(&text(), false)
                        .map_err(|_| field_error(at, key, v, "\"owen\" or \"shift\""))?
                }
                _ => {
                    q.construction = Construction::from_str(&text(), false)
                        .map_err(|_| field_error(at, key, v, "\"bridge\" or \"increments\""))?
                }
            }
        }
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
    let mut defaults = Run::default();
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
        let name = InstrumentName::from_name(&name_text).map_err(|e| match e {
            Error::InvalidParameter { allowed, .. } => field_error(&at, "name", &name_text, allowed),
            other => other,
        })?;
        // Run keys set this entry's settings; the rest are the contract's parameters.
        let mut run = defaults.clone();
        let mut raw = BTreeMap::new();
        for (k, v) in table {
            if k == "name" {
                continue;
            }
            if RUN_KEYS.contains(&k.as_str()) {
                apply_run_key(&mut run, &at, k, v)?;
            } else {
                raw.insert(k.clone(), v);
            }
        }
        let mut params = BTreeMap::new();
        for (k, v) in raw {
            let text = as_text(v).ok_or_else(|| {
                field_error(&at, &k, v, "a number, a string, or (basket) an array of numbers or of rows")
            })?;
            params.insert(k, text);
        }
        let instrument = Instrument::new(name, &params).map_err(|e| match e {
            Error::InvalidParameter { field, value, allowed } => field_error(&at, field, value, allowed),
            other => other,
        })?;
        let settings = run.finish(&at)?;
        settings.validate_for(&instrument).map_err(|e| match e {
            Error::InvalidParameter { field, value, allowed } => field_error(&at, field, value, allowed),
            other => other,
        })?;
        out.push(JobEntry { instrument, settings });
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
        let (a, b) = (&jobs[0].instrument, &jobs[1].instrument);
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
        let (i, s) = (&jobs[0].instrument, &jobs[0].settings);
        let b = i.basket.as_ref().expect("the basket");
        assert_eq!((b.correlation[0][1], i.steps, s.paths, s.seed), (-0.3, 64, 4000, 9));
        assert_eq!((b.spots.clone(), b.vols.clone()), (vec![100.0, 100.0], vec![0.2, 0.3]));
        let e = err("[[instrument]]\nname = \"asian-basket\"\ncorr = 1.5\n");
        assert!(e.contains("instrument 1 (asian-basket): corr = 1.5") && e.contains("[-1, 1]"), "{e}");
        let e = err("[[instrument]]\nname = \"asian-basket\"\nstrike = 100\n");
        assert!(e.contains("strike") && e.contains("payoff=average"), "{e}");
        let e = err("[[instrument]]\nname = \"asian-basket\"\nsteps = 0\n");
        assert!(e.contains("steps"), "{e}");
        let e = err("[[instrument]]\nname = \"asian-basket\"\nspot_a = 90\nspots = [1, 2]\n");
        assert!(e.contains("spot_a or spots"), "{e}");
    }

    #[test]
    fn an_n_asset_basket_from_arrays() {
        let jobs = parse(
            r#"
            [[instrument]]
            name = "asian-basket"
            payoff = "average"
            spots = [100, 95, 110]
            vols = [0.2, 0.25, 0.3]
            weights = [0.5, 0.25, 0.25]
            correlation = [[1, 0.3, 0], [0.3, 1, 0.1], [0, 0.1, 1]]
            strike = 101
            option = "put"
            "#,
            "job.toml",
        )
        .unwrap();
        let i = &jobs[0].instrument;
        let b = i.basket.as_ref().unwrap();
        assert_eq!((b.assets(), b.correlation[1][2], i.strike, i.put), (3, 0.1, 101.0, true));
        let e = err("[[instrument]]\nname = \"asian-basket\"\ncorrelation = [[1, 0.9], [0.9, 1], [0, 0]]\n");
        assert!(e.contains("correlation"), "{e}");
        let e = err(
            "[[instrument]]\nname = \"asian-basket\"\ncorrelation = [[1, 0.9, 0.9], [0.9, 1, -0.9], [0.9, -0.9, 1]]\n",
        );
        assert!(e.contains("positive semidefinite") && e.contains("entry (3, 3)"), "{e}");
        let e = err("[[instrument]]\nname = \"asian-basket\"\nspots = [100, \"x\"]\n");
        assert!(e.contains("spots") && e.contains("array"), "{e}");
    }

    #[test]
    fn qmc_keys() {
        let jobs = parse(
            "[run]\nreplicates = 8\nqmc = true\npaths = 64\n[[instrument]]\nname = \"european-call\"\nscramble = \"shift\"\n",
            "job.toml",
        )
        .unwrap();
        let q = jobs[0].settings.qmc.expect("qmc on");
        assert_eq!((q.replicates, q.scramble, q.construction), (8, Scramble::Shift, Construction::Bridge));
        let e = err("[[instrument]]\nname = \"european-call\"\nreplicates = 8\n");
        assert!(e.contains("replicates") && e.contains("qmc = true"), "{e}");
        let e = err("[run]\nqmc = true\npaths = 1000\n[[instrument]]\nname = \"european-call\"\n");
        assert!(e.contains("paths") && e.contains("multiple"), "{e}");
        let e = err("[run]\nqmc = true\npaths = 64\n[[instrument]]\nname = \"asian-basket\"\n");
        assert!(e.contains("qmc") && e.contains("one-asset"), "{e}");
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
        assert!(e.contains("strike = 1,2") && e.contains("(0, 1e12]"), "{e}");
        let e = err("[[instrument]]\nname = \"european-call\"\nstrike = true\n");
        assert!(e.contains("strike") && e.contains("a number, a string"), "{e}");
        let e = err("[[instrument]\nname = 3");
        assert!(e.contains("job.toml") && e.contains("TOML") && e.contains("line 1"), "{e}");
        let e = err("[[instrument]]\nname = \"european-call\"\nspot = nan\n");
        assert!(e.contains("spot") && e.contains("(0, 1e12]"), "{e}");
    }
}
