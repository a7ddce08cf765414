//! The `warpmc` command line as users run it: known answers through `generate`, the JSON of
//! `price`, and error messages that name the flag and its allowed range.
//!
//! The binary is cargo's build of `warpmc`, or `$WARPMC_BIN` (the device bundle sets it, since
//! the path cargo compiles in does not exist on the GPU machine).

use std::process::{Command, Output};

fn warpmc(args: &[&str]) -> Output {
    let bin = std::env::var("WARPMC_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_warpmc").to_string());
    Command::new(bin).args(args).output().expect("run warpmc")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn gpu_present() -> bool {
    warpmc::backend::gpu_status().is_ok()
}

#[test]
fn generate_known_answers() {
    for (state, want) in [
        ("12345,12345,12345,12345", "1717149490\n1013719216\n2431227087\n838963927\n3550480589\n"),
        ("129,130,131,132", "1217370641\n3227414615\n1904114233\n2387917307\n3549388247\n"),
    ] {
        for backend in ["cpu", "auto"] {
            let o = warpmc(&[
                "generate",
                "--backend",
                backend,
                "--generator",
                "hybrid-taus",
                "--count",
                "5",
                "--state",
                state,
            ]);
            assert!(o.status.success(), "{}", stderr(&o));
            assert_eq!(stdout(&o), want, "--state {state} --backend {backend}");
        }
    }
}

#[test]
fn generate_rejects_invalid_states_naming_the_constraint() {
    for (state, component, min) in [("1,8,16,0", "z1", ">= 2"), ("2,7,16,0", "z2", ">= 8"), ("2,8,15,0", "z3", ">= 16")]
    {
        let o = warpmc(&["generate", "--generator", "hybrid-taus", "--count", "1", "--state", state]);
        assert_eq!(o.status.code(), Some(2), "{state}");
        let e = stderr(&o);
        assert!(e.contains(component) && e.contains(min), "{state}: {e}");
    }
    let o = warpmc(&["generate", "--count", "1", "--state", "1,2,3"]);
    assert!(!o.status.success() && stderr(&o).contains("--state"));
}

#[test]
fn generate_binary_matches_text_and_streams_interleave() {
    let text = warpmc(&["generate", "--backend", "cpu", "--distribution", "uniform", "--count", "10", "--seed", "4"]);
    let bin = warpmc(&[
        "generate",
        "--backend",
        "cpu",
        "--distribution",
        "uniform",
        "--count",
        "10",
        "--seed",
        "4",
        "--format",
        "binary",
    ]);
    let from_text: Vec<f32> = stdout(&text).lines().map(|l| l.parse().unwrap()).collect();
    let from_bin: Vec<f32> = bin.stdout.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect();
    assert_eq!(from_text, from_bin);
    assert!(from_text.iter().all(|&u| u > 0.0 && u <= 1.0));
    // Two interleaved streams: values 4..8 are stream 1's first four.
    let both = stdout(&warpmc(&["generate", "--backend", "cpu", "--count", "8", "--streams", "2", "--seed", "4"]));
    let one = stdout(&warpmc(&["generate", "--backend", "cpu", "--count", "4", "--stream", "1", "--seed", "4"]));
    assert_eq!(both.lines().skip(4).collect::<Vec<_>>(), one.lines().collect::<Vec<_>>());
}

#[test]
fn generate_f64_uniforms_in_text_and_binary() {
    let args = ["generate", "--backend", "cpu", "--distribution", "uniform", "--precision", "f64", "--count", "7"];
    let text = warpmc(&args);
    assert!(text.status.success(), "{}", stderr(&text));
    let bin = warpmc(&[&args[..], &["--format", "binary"]].concat());
    assert_eq!(bin.stdout.len(), 7 * 8, "eight bytes per value");
    let from_text: Vec<f64> = stdout(&text).lines().map(|l| l.parse().unwrap()).collect();
    let from_bin: Vec<f64> = bin.stdout.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap())).collect();
    assert_eq!(from_text, from_bin);
    // Each is cuRAND's double of two consecutive words of the stream.
    let words: Vec<u32> = stdout(&warpmc(&["generate", "--backend", "cpu", "--count", "14"]))
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    let pairs: Vec<f64> =
        words.chunks_exact(2).map(|p| warpmc::kernels::convert::u32_pair_to_unit_f64(p[0], p[1])).collect();
    assert_eq!(from_text, pairs);
    let o = warpmc(&["generate", "--count", "1", "--distribution", "u32", "--precision", "f64"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--precision"), "{}", stderr(&o));
    // Distributions take f64 (since the distributions issue).
    let o = warpmc(&["generate", "--backend", "cpu", "--count", "3", "--distribution", "normal", "--precision", "f64"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).lines().all(|l| l.parse::<f64>().is_ok_and(f64::is_finite)), "{}", stdout(&o));
}

#[test]
fn generate_normals_are_the_same_on_every_backend() {
    if !gpu_present() {
        eprintln!("SKIPPED generate_normals_are_the_same_on_every_backend: no GPU");
        assert!(std::env::var("WARPMC_REQUIRE_GPU").as_deref() != Ok("1"), "WARPMC_REQUIRE_GPU=1 but no GPU");
        return;
    }
    let args = [
        "generate",
        "--distribution",
        "normal",
        "--mode",
        "exact",
        "--count",
        "100003",
        "--streams",
        "77",
        "--format",
        "binary",
    ];
    let cpu = warpmc(&[&args[..], &["--backend", "cpu"]].concat());
    let gpu = warpmc(&[&args[..], &["--backend", "gpu"]].concat());
    assert!(cpu.status.success() && gpu.status.success());
    assert!(cpu.stdout == gpu.stdout, "exact normals differ between CPU and GPU");
}

#[test]
fn price_json_has_the_documented_keys() {
    let o = warpmc(&["price", "--backend", "cpu", "--paths", "2^12", "--steps", "16", "--seed", "9", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("one JSON object");
    for key in
        ["price", "std_error", "paths", "steps", "seed", "backend", "mode", "ci95", "wall_seconds", "msteps_per_second"]
    {
        assert!(v.get(key).is_some(), "missing {key}");
    }
    assert_eq!(v["paths"], 4096);
    assert_eq!(v["steps"], 16);
    assert_eq!(v["seed"], 9);
    assert_eq!(v["backend"], "cpu");
    assert_eq!(v["mode"], "exact");
    let (p, se) = (v["price"].as_f64().unwrap(), v["std_error"].as_f64().unwrap());
    assert!(p.is_finite() && p > 0.0 && se > 0.0);
    let ci = v["ci95"].as_array().unwrap();
    assert!(ci[0].as_f64().unwrap() < p && p < ci[1].as_f64().unwrap());
}

#[test]
fn price_table_shows_the_job() {
    let o = warpmc(&["price", "--backend", "cpu", "--paths", "1000", "--steps", "8", "--mode", "fast"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let t = stdout(&o);
    for word in [
        "backend",
        "paths",
        "steps",
        "seed",
        "mode",
        "price",
        "std error",
        "95% CI",
        "wall time",
        "paths/s",
        "MSteps/s",
        "fast",
    ] {
        assert!(t.contains(word), "missing {word} in\n{t}");
    }
}

#[test]
fn price_instrument_json_has_the_documented_keys() {
    let o = warpmc(&[
        "price",
        "--instrument",
        "european-call",
        "--param",
        "strike=110",
        "--param",
        "vol=0.25",
        "--paths",
        "2^14",
        "--seed",
        "4",
        "--backend",
        "cpu",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("one JSON object");
    for key in [
        "instrument",
        "price",
        "std_error",
        "ci95",
        "paths",
        "steps",
        "seed",
        "backend",
        "mode",
        "generator",
        "transform",
        "wall_seconds",
        "paths_per_second",
        "steps_per_second",
        "control_variate",
        "reference",
        "z",
        "contract",
    ] {
        assert!(v.get(key).is_some(), "missing {key}");
    }
    assert_eq!(v["instrument"], "european-call");
    assert_eq!(v["paths"], 16384);
    assert_eq!(v["steps"], 1);
    assert_eq!(v["backend"], "cpu");
    assert_eq!(v["contract"]["strike"], 110.0);
    let z = v["z"].as_f64().unwrap();
    assert!(z.abs() < 4.0, "z = {z}");
    // The same job through --steps and --antithetic, as a table.
    let o = warpmc(&["price", "--instrument", "lookback-garch", "--steps", "32", "--paths", "1000", "--antithetic"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let t = stdout(&o);
    for word in ["lookback-garch", "A0", "antithetic", "control variate", "steps/s", "reference"] {
        assert!(t.contains(word), "missing {word} in\n{t}");
    }
}

/// `--greeks`: delta, gamma and vega with standard errors and, for a European, closed forms.
#[test]
fn price_instrument_greeks_in_json_and_table() {
    let args = ["price", "--instrument", "european-put", "--param", "strike=95", "--paths", "2^15", "--greeks"];
    let o = warpmc(&[&args[..], &["--json"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("one JSON object");
    let g = v["greeks"].as_array().expect("a greeks list");
    let names: Vec<_> = g.iter().map(|e| e["greek"].as_str().unwrap()).collect();
    assert_eq!(names, ["delta", "gamma", "vega"]);
    for e in g {
        let (value, se, r) =
            (e["value"].as_f64().unwrap(), e["std_error"].as_f64().unwrap(), e["reference"].as_f64().unwrap());
        assert!((value - r).abs() < 5.0 * se + 1e-3 * r.abs(), "{e}");
    }
    assert!(g[0]["value"].as_f64().unwrap() < 0.0, "a put's delta is negative");
    let o = warpmc(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let t = stdout(&o);
    for word in ["Greeks", "delta", "gamma", "vega", "pathwise", "closed form"] {
        assert!(t.contains(word), "missing {word} in\n{t}");
    }
    // Greeks need a volatility, and belong to --instrument.
    let o = warpmc(&["price", "--instrument", "european-call", "--param", "vol=0", "--paths", "100", "--greeks"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("vol"), "{}", stderr(&o));
    let o = warpmc(&["price", "--greeks"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

/// `--suite` (what `cargo xtask run-pricing` runs): the basket and eight instruments, one table.
#[test]
fn price_suite_prices_the_two_options_and_the_validation_instruments() {
    let o = warpmc(&["price", "--suite", "--paths", "4096", "--backend", "cpu", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("a JSON array");
    let v = v.as_array().expect("a JSON array");
    assert_eq!(v.len(), 12);
    assert!(v[0].get("check").is_some(), "the basket first");
    let with_reference = v[1..].iter().filter(|r| !r["reference"].is_null()).count();
    assert_eq!(
        with_reference, 8,
        "every instrument but the chapter's GARCH, the arithmetic Asian and the 4-asset basket has a reference"
    );
    let qmc = v.iter().filter(|r| r["qmc"].is_object()).count();
    assert_eq!(qmc, 2, "two QMC rows");
    let o = warpmc(&["price", "--suite", "--paths", "2048", "--backend", "cpu"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let t = stdout(&o);
    for word in ["Asian basket", "GARCH", "European call", "floating lookback", "| z |", "4 assets", "QMC"] {
        assert!(t.contains(word), "missing {word} in\n{t}");
    }
    let o = warpmc(&["price", "--suite", "--instrument", "european-call"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

/// `--efficiency`: plain, antithetic and control-variate estimators with their speed-ups.
#[test]
fn price_instrument_efficiency_compares_the_estimators() {
    let o = warpmc(&[
        "price",
        "--instrument",
        "asian-arithmetic",
        "--param",
        "steps=16",
        "--paths",
        "2^14",
        "--backend",
        "cpu",
        "--json",
        "--efficiency",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("one JSON object");
    let e = v["estimators"].as_array().expect("estimators");
    let names: Vec<_> = e.iter().map(|e| e["estimator"].as_str().unwrap()).collect();
    assert_eq!(names, ["plain", "antithetic", "control-variate", "qmc"]);
    assert_eq!(e[1]["paths_simulated"], 2 * 16384);
    // The geometric control removes most of the arithmetic Asian's variance, at no extra time.
    assert!(e[2]["speedup_at_equal_time"].as_f64().unwrap() > 50.0, "{v}");
    assert!(e[1]["variance_reduction"].as_f64().unwrap() > 1.0, "{v}");
    let o = warpmc(&["price", "--instrument", "european-call", "--efficiency", "--antithetic"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

/// `--instrument asian-basket`: its defaults are the chapter's basket (the same price as `warpmc
/// price` to rounding), N assets and a correlation matrix through --param, errors by name.
#[test]
fn price_the_n_asset_basket() {
    let price = |args: &[&str]| -> serde_json::Value {
        let o = warpmc(args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        serde_json::from_str(&stdout(&o)).expect("one JSON object")
    };
    let common = ["--paths", "2^13", "--steps", "32", "--backend", "cpu", "--json"];
    let chapter = price(&[&["price"][..], &common[..]].concat());
    let basket = price(&[&["price", "--instrument", "asian-basket"][..], &common[..]].concat());
    let (a, b) = (chapter["price"].as_f64().unwrap(), basket["price"].as_f64().unwrap());
    assert!((a - b).abs() < 1e-5 * a, "{a} vs {b}");
    assert_eq!(basket["contract"]["basket"]["spots"], serde_json::json!([100.0, 100.0]));
    let four = price(&[
        "price",
        "--instrument",
        "asian-basket",
        "--param",
        "payoff=average",
        "--param",
        "spots=100,90,110,105",
        "--param",
        "correlation=1,0.2,0,0;0.2,1,0,0;0,0,1,0.5;0,0,0.5,1",
        "--param",
        "strike=95",
        "--paths",
        "2^12",
        "--backend",
        "cpu",
        "--json",
        "--greeks",
    ]);
    assert!(four["control_variate"]["check_z"].as_f64().unwrap().abs() < 4.0, "{four}");
    assert_eq!(four["greeks"].as_array().unwrap().len(), 3);
    let o = warpmc(&["price", "--instrument", "asian-basket", "--param", "correlation=1,0.9;0.8,1", "--paths", "100"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("correlation") && stderr(&o).contains("entry (2, 1)"), "{}", stderr(&o));
    let o = warpmc(&["price", "--instrument", "asian-basket", "--param", "assets=40"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("assets") && stderr(&o).contains("[1, 32]"), "{}", stderr(&o));
}

/// `--qmc`: the report names the points and replicates; a --paths that is not a multiple of the
/// replicates is refused by name.
#[test]
fn price_with_qmc() {
    let o =
        warpmc(&["price", "--instrument", "european-call", "--qmc", "--paths", "2^14", "--backend", "cpu", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("one JSON object");
    assert_eq!(v["qmc"]["replicates"], 16);
    assert_eq!(v["qmc"]["points_per_replicate"], 1024);
    assert!(v["z"].as_f64().unwrap().abs() < 4.0, "{v}");
    let o = warpmc(&[
        "price",
        "--instrument",
        "asian-arithmetic",
        "--qmc",
        "--replicates",
        "8",
        "--scramble",
        "shift",
        "--paths",
        "2^12",
        "--backend",
        "cpu",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("randomised QMC") && stdout(&o).contains("8 replicates of 512 points"),
        "{}",
        stdout(&o)
    );
    let o = warpmc(&["price", "--instrument", "european-call", "--qmc", "--paths", "1000"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--paths") && stderr(&o).contains("multiple of --replicates"), "{}", stderr(&o));
    let o = warpmc(&["price", "--qmc"]);
    assert_eq!(o.status.code(), Some(2), "the chapter's basket has no QMC");
}

/// `--plot FILE.svg`: the convergence of the four estimators and the payoff histogram.
#[test]
fn price_plot_draws_the_estimators() {
    let dir = std::env::temp_dir().join(format!("warpmc-plot-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let svg = dir.join("asian.svg");
    let o = warpmc(&[
        "price",
        "--instrument",
        "asian-arithmetic",
        "--param",
        "steps=16",
        "--paths",
        "2^13",
        "--backend",
        "cpu",
        "--plot",
        svg.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&svg).expect("the plot");
    for label in ["plain", "antithetic", "control variate", "QMC"] {
        assert!(text.contains(label), "no {label} in the plot");
    }
    let png = dir.join("european.png");
    let o = warpmc(&[
        "price",
        "--instrument",
        "european-call",
        "--paths",
        "4096",
        "--backend",
        "cpu",
        "--plot",
        png.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::read(&png).unwrap().starts_with(b"\x89PNG"));
    let o = warpmc(&["price", "--instrument", "european-call", "--plot", dir.join("x.jpg").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--plot") && stderr(&o).contains(".svg"), "{}", stderr(&o));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn every_example_job_file_runs() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/jobs");
    let mut files: Vec<_> = std::fs::read_dir(&dir).expect("examples/jobs").map(|e| e.unwrap().path()).collect();
    files.retain(|p| p.extension().is_some_and(|e| e == "toml"));
    files.sort();
    assert!(files.len() >= 2, "{files:?}");
    for f in files {
        let o = warpmc(&["price", f.to_str().unwrap(), "--backend", "cpu", "--json"]);
        assert!(o.status.success(), "{}: {}", f.display(), stderr(&o));
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("a JSON array");
        let list = v.as_array().expect("one object per instrument");
        assert!(!list.is_empty());
        for r in list {
            let (p, se) = (r["price"].as_f64().unwrap(), r["std_error"].as_f64().unwrap());
            assert!(p.is_finite() && se > 0.0, "{}: {r}", f.display());
            // Exact references within 4 standard errors; BGK's approximation is allowed 0.5%
            // more (at 250 dates its error is about 0.06%).
            if let Some(reference) = r["reference"]["price"].as_f64() {
                let tol = if r["reference"]["kind"].as_str().unwrap().contains("approximate") {
                    5e-3 * reference
                } else {
                    0.0
                };
                assert!((p - reference).abs() <= 4.0 * se + tol, "{}: {r}", f.display());
            }
        }
    }
    // A malformed file and a missing one are errors naming the file.
    let bad = std::env::temp_dir().join(format!("warpmc-bad-job-{}.toml", std::process::id()));
    std::fs::write(&bad, "[[instrument]\nname = 3\n").unwrap();
    let o = warpmc(&["price", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("warpmc-bad-job") && stderr(&o).contains("TOML"), "{}", stderr(&o));
    std::fs::remove_file(&bad).unwrap();
    let o = warpmc(&["price", "/nonexistent/job.toml"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("/nonexistent/job.toml"), "{}", stderr(&o));
}

#[test]
fn price_instrument_errors_name_the_parameter() {
    let cases: &[(&[&str], &[&str])] = &[
        (&["--instrument", "european-call", "--param", "vol=-0.2"], &["--param", "vol=-0.2", "[0, 5]"]),
        (&["--instrument", "european-call", "--param", "spot=0"], &["--param", "spot=0", "(0, 1e12]"]),
        (&["--instrument", "european-call", "--param", "spot=nan"], &["--param", "spot=nan"]),
        (&["--instrument", "european-call", "--param", "volatility=0.2"], &["--param", "volatility", "vol"]),
        (&["--instrument", "asian-geometric", "--param", "steps=0"], &["--param", "steps=0", "[1, 1000000]"]),
        (&["--instrument", "asian-geometric", "--steps", "0"], &["--steps", "[1, 1000000]"]),
        (&["--instrument", "asian-barrier", "--param", "direction=left"], &["direction=left", "up or down"]),
        (&["--instrument", "lookback-garch", "--param", "a1=0.5", "--param", "a2=0.6"], &["a2=0.6", "a1 + a2 < 1"]),
        (&["--instrument", "european-cal"], &["--instrument", "european-call"]),
        (&["--instrument", "european-call", "--param", "strike"], &["--param", "KEY=VALUE"]),
        (&["--instrument", "european-call", "--vol-a", "0.3"], &["--vol-a", "--param"]),
        (&["--param", "strike=3"], &["--param", "--instrument"]),
    ];
    for (flags, words) in cases {
        let o = warpmc(&[&["price", "--backend", "cpu", "--paths", "100"][..], flags].concat());
        assert_eq!(o.status.code(), Some(2), "{flags:?}: {}", stderr(&o));
        let e = stderr(&o);
        for w in *words {
            assert!(e.contains(w), "{flags:?}: missing {w} in {e}");
        }
        assert!(!e.contains("panicked"), "{flags:?}: {e}");
    }
}

#[test]
fn invalid_flags_are_named_with_their_range() {
    let cases: &[(&[&str], &str, &str)] = &[
        (&["--vol-a", "0"], "--vol-a", "(0, 5]"),
        (&["--vol-b", "-0.3"], "--vol-b", "(0, 5]"),
        (&["--vol-b", "nan"], "--vol-b", "(0, 5]"),
        (&["--corr", "1.5"], "--corr", "[-1, 1]"),
        (&["--maturity", "0"], "--maturity", "(0, 100]"),
        (&["--maturity", "-1"], "--maturity", "(0, 100]"),
        (&["--spot-a", "0"], "--spot-a", "(0, 1000000000000]"),
        (&["--rate", "3"], "--rate", "[-1, 1]"),
        (&["--paths", "0"], "--paths", "[2, 2^40]"),
        (&["--paths", "-5"], "--paths", "[2, 2^40]"),
        (&["--steps", "0"], "--steps", "[1, 1000000]"),
        (&["--steps", "-3"], "--steps", "[1, 1000000]"),
        (&["--threads", "0"], "--threads", "[1, 4096]"),
        (&["--threads", "100000"], "--threads", "[1, 4096]"),
    ];
    for (flags, name, range) in cases {
        let o = warpmc(&[&["price", "--backend", "cpu"][..], flags].concat());
        assert_eq!(o.status.code(), Some(2), "{flags:?}");
        let e = stderr(&o);
        assert!(e.contains(name) && e.contains(range), "{flags:?}: {e}");
        assert!(!e.contains("panicked"), "{flags:?}: {e}");
    }
    let o = warpmc(&["generate", "--count", "0"]);
    assert!(stderr(&o).contains("--count") && stderr(&o).contains("[1, 2^50]"));
    let o = warpmc(&["generate", "--count", "5", "--streams", "0"]);
    assert!(stderr(&o).contains("--streams") && stderr(&o).contains("[1, 2^26]"));
}

#[test]
fn gpu_backend_without_a_gpu_is_a_clear_error() {
    if gpu_present() {
        eprintln!("SKIPPED gpu_backend_without_a_gpu_is_a_clear_error: a GPU is present");
        return;
    }
    let o = warpmc(&["price", "--backend", "gpu", "--paths", "100"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no usable GPU"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("panicked"));
    // `auto` falls back to the CPU.
    let o = warpmc(&["price", "--backend", "auto", "--paths", "100", "--steps", "4", "--json"]);
    assert!(o.status.success());
    assert!(stdout(&o).contains("\"backend\": \"cpu\""));
}

#[test]
fn a_failed_check_prints_the_report_and_exits_3() {
    // Asset b at a tenth of asset a: only rare paths matter and 16 paths miss them.
    let args = [
        "price",
        "--backend",
        "cpu",
        "--spot-b",
        "10",
        "--vol-a",
        "0.000001",
        "--vol-b",
        "1",
        "--corr",
        "0",
        "--rate",
        "0",
        "--paths",
        "16",
        "--steps",
        "16",
        "--seed",
        "1",
    ];
    let o = warpmc(&args);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let (out, err) = (stdout(&o), stderr(&o));
    assert!(out.contains("FAILED") && out.contains("price"), "{out}");
    assert!(out.contains("with control variate  not reported"), "{out}");
    assert!(err.contains("not trustworthy") && err.contains("--paths"), "{err}");
    // JSON too: the report, then the same exit status.
    let o = warpmc(&[&args[..], &["--json"]].concat());
    assert_eq!(o.status.code(), Some(3));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("one JSON object");
    assert_eq!(v["check"]["status"], "failed");
    assert!(v["price_control_variate"].is_null());
}

#[test]
fn unsampleable_parameters_are_refused_before_the_run() {
    let o = warpmc(&["price", "--backend", "cpu", "--vol-a", "5", "--vol-b", "5", "--maturity", "100"]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.contains("--vol-a") && e.contains("--maturity") && !e.contains("panicked"), "{e}");
    assert!(stdout(&o).is_empty(), "no price is printed: {}", stdout(&o));
}

#[test]
fn one_date_says_the_check_has_no_information() {
    let o = warpmc(&["price", "--backend", "cpu", "--steps", "1", "--paths", "1000"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("no information") && out.contains("one date"), "{out}");
    assert!(!out.contains("z = +0.00"), "{out}");
}

#[test]
fn file_errors_name_the_file_and_the_operation() {
    let o = warpmc(&["generate", "--backend", "cpu", "--count", "3", "--output", "/nonexistent/dir/x"]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.contains("cannot create the output file /nonexistent/dir/x"), "{e}");
    let o = warpmc(&["bench", "--quick", "--only", "cpu", "--json-out", "/nonexistent/dir/b.json"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("cannot write /nonexistent/dir/b.json"), "{}", stderr(&o));
}

#[test]
fn one_cpu_thread_is_one_thread() {
    let o = warpmc(&["price", "--backend", "cpu", "--threads", "1", "--paths", "100", "--steps", "2", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["device"], "CPU, 1 thread");
}

#[test]
fn generate_reproduces_published_outputs_of_every_generator() {
    let cases: &[(&str, &str, &str)] = &[
        // L'Ecuyer 1999 / RngStreams: seed 12345 x6.
        ("mrg32k3a", "12345,12345,12345,12345,12345,12345", "545508589\n1368065410\n1327943761\n3546985096\n"),
        // Random123's known-answer vector: counter 0, key 0.
        ("philox4x32-10", "0,0,0,0,0,0", "1713891541\n3781805453\n3159862348\n2600524760\n"),
        // Park and Miller from x = 1: 16807, 16807^2 (each word is x << 1, see the generator).
        ("park-miller", "1", "33614\n564950498\n"),
        // Numerical Recipes' LCG from 0.
        ("lcg32", "0", "1013904223\n1196435762\n"),
        // Marsaglia 2003's XORWOW starting values (d first): its first outputs.
        ("xorwow", "6615241,123456789,362436069,521288629,88675123,5783321", "246875399\n3690007200\n1264581005\n"),
    ];
    for (generator, state, want) in cases {
        let n = want.lines().count().to_string();
        let o = warpmc(&["generate", "--backend", "cpu", "--generator", generator, "--state", state, "--count", &n]);
        assert!(o.status.success(), "{generator}: {}", stderr(&o));
        assert_eq!(stdout(&o), *want, "{generator}");
    }
    let words = |args: &[&str]| -> Vec<u32> {
        let o = warpmc(&[&["generate", "--backend", "cpu"][..], args].concat());
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        stdout(&o).lines().map(|l| l.parse().unwrap()).collect()
    };
    // MT19937's reference seeding: seed 5489 is std::mt19937, whose 10,000th output is 4123659995.
    let mt = words(&["--generator", "mt19937", "--seed", "5489", "--count", "10000"]);
    assert_eq!((mt[..3].to_vec(), mt[9999]), (vec![3499211612, 581869302, 3890346734], 4123659995));
    // cuRAND's MRG32k3a from its seed-0 state 12345 x6: L'Ecuyer's first z through cuRAND's conversion.
    assert_eq!(
        words(&["--generator", "mrg32k3a-curand", "--seed", "0", "--count", "3"]),
        [545508615, 1368065476, 1327943825]
    );
    // LFSR113, L'Ecuyer's check: seeds 987654321 x4, 10,000 outputs discarded, then these.
    let l =
        words(&["--generator", "lfsr113", "--state", "987654321,987654321,987654321,987654321", "--count", "10008"]);
    assert_eq!(
        l[10000..],
        [0xFFC82E32, 0x36428E7D, 0x87B8571B, 0xFF169F0F, 0x930EDB4F, 0xA10D951E, 0xF28102A2, 0x4FC27B17]
    );
    // taus88, ISO 28640:2010: seeds continued from 19660809 by s = 1664525 s + 1 (values with a
    // nonzero s & 0xFFFFFFF0); the 5000th output >> 1 is 262361229.
    let mut s: u32 = 19_660_809;
    let mut z = vec![s];
    while z.len() < 3 {
        s = s.wrapping_mul(1_664_525).wrapping_add(1);
        if s & 0xFFFF_FFF0 != 0 {
            z.push(s);
        }
    }
    let state = z.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
    assert_eq!(words(&["--generator", "taus88", "--state", &state, "--count", "5000"])[4999] >> 1, 262361229);
    // Marsaglia's KISS check (sci.stat.math, 1999): from the post's seeds, after 256 outputs,
    // the millionth further output is 1372460312.
    let k = words(&["--generator", "kiss", "--state", "12345,65435,34221,12345", "--count", "1000256"]);
    assert_eq!(k[1_000_255], 1_372_460_312);
    // The warp generator's published sample state, lane 0: its first two outputs.
    let sample = warpmc::kernels::rng::warp::SAMPLE_SEED.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
    for g in ["warp", "warp-shfl"] {
        assert_eq!(
            words(&["--generator", g, "--state", &format!("{sample},0"), "--count", "2"]),
            [0x0468a7d4, 0xc9b00219]
        );
    }
    // PRAND's published initial states (seed 0, stream 0): their first outputs (ALGORITHMS.md).
    for (g, first) in [
        ("gm19", [2481458146u32, 742541813, 499751709]),
        ("gm29", [3860964450, 3418542724, 505840115]),
        ("gm31", [4293320464, 2011781859, 517669476]),
        ("gm55", [3939088052, 502966821, 308800831]),
        ("gm61", [2004337331, 822000079, 377781725]),
        ("gq58-1", [1547866605, 1085749288, 1305642223]),
        ("gq58-3", [2890017627, 190198786, 3174723463]),
        ("gq58-4", [3992599244, 2916225011, 1367819961]),
    ] {
        assert_eq!(words(&["--generator", g, "--seed", "0", "--count", "3"]), first, "{g}");
    }
}

#[test]
fn every_generator_generates_and_checks_its_state_word_count() {
    let info = stdout(&warpmc(&["info"]));
    let listed: Vec<(String, usize)> = info
        .lines()
        .skip_while(|l| !l.starts_with("generators"))
        .skip(1)
        .map(|l| {
            let mut it = l.split_whitespace();
            let name = it.next().unwrap().to_string();
            let names = it.next().unwrap();
            // Long raw states are shortened: `mt[0],mt[1],mt[2],...,mt[623],mti (625 words)`.
            let words = match it.next() {
                Some(n) => n.trim_start_matches('(').parse().unwrap(),
                None => names.split(',').count(),
            };
            (name, words)
        })
        .collect();
    assert!(listed.len() >= 6, "{info}");
    for (g, words) in &listed {
        let o = warpmc(&["generate", "--backend", "cpu", "--generator", g, "--count", "9", "--streams", "3"]);
        assert!(o.status.success(), "{g}: {}", stderr(&o));
        assert_eq!(stdout(&o).lines().count(), 9, "{g}");
        let wrong = vec!["5"; words + 1].join(",");
        let o = warpmc(&["generate", "--backend", "cpu", "--generator", g, "--count", "1", "--state", &wrong]);
        assert_eq!(o.status.code(), Some(2), "{g}");
        assert!(stderr(&o).contains(&format!("exactly {words} words for {g}")), "{g}: {}", stderr(&o));
    }
    let o =
        warpmc(&["price", "--backend", "cpu", "--generator", "mrg32k3a", "--paths", "1000", "--steps", "8", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["generator"], "mrg32k3a");
}

/// cuRAND's host-API layout through the CLI: cuRAND's own published and recorded outputs, and the
/// combinations that have no meaning refused with the flag named.
#[test]
fn generate_reproduces_curand_host_api_outputs() {
    // An NVIDIA forum thread (2016) quotes curandGenerate's first XORWOW words for seed 0.
    let o = warpmc(&[
        "generate",
        "--backend",
        "cpu",
        "--generator",
        "xorwow",
        "--ordering",
        "curand-legacy",
        "--seed",
        "0",
        "--count",
        "4",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "3179217846\n3955638199\n167591721\n4161663997\n");
    // cuRAND 10.4.0 on an H100: Philox, seed 1234, offset 77, curandGenerateUniformDouble's first value.
    let o = warpmc(&[
        "generate",
        "--backend",
        "cpu",
        "--generator",
        "philox4x32-10",
        "--ordering",
        "curand-legacy",
        "--seed",
        "1234",
        "--offset",
        "77",
        "--count",
        "1",
        "--distribution",
        "uniform",
        "--precision",
        "f64",
        "--format",
        "binary",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(u64::from_le_bytes(o.stdout[..8].try_into().unwrap()), 4600547726707553531);
    for (args, flag) in [
        (&["--generator", "kiss", "--ordering", "curand-legacy"][..], "--ordering"),
        (&["--generator", "xorwow", "--offset", "3"][..], "--offset"),
        (&["--generator", "xorwow", "--ordering", "curand-legacy", "--streams", "2"][..], "--ordering"),
        (&["--generator", "xorwow", "--ordering", "curand-default", "--distribution", "normal"][..], "--ordering"),
    ] {
        let o = warpmc(&[&["generate", "--backend", "cpu", "--count", "1"][..], args].concat());
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains(flag), "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn quality_long_battery_through_the_command_line() {
    // A GF(2)-linear generator fails at the first length reported, and the report says where.
    let o = warpmc(&["quality", "--generator", "taus88", "--battery", "long", "--words", "2^24"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("binary-rank-256x256") && out.contains("first failure at 2^26 bytes"), "{out}");
    assert!(stderr(&o).contains("long: 2^26 bytes"), "{}", stderr(&o));
    // JSON carries the checkpoints.
    let o = warpmc(&["quality", "--battery", "long", "--words", "2^25", "--json", "--interleave", "64"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON");
    let bytes: Vec<u64> =
        v["checkpoints"].as_array().expect("checkpoints").iter().map(|c| c["bytes"].as_u64().unwrap()).collect();
    assert_eq!(bytes, [1 << 26, 1 << 27]);
    // Sizes outside the battery's range name the flag and the range.
    for (battery, words, range) in [("long", "2^23", "[2^24, 2^40]"), ("quick", "2^37", "[2^20, 2^36]")] {
        let o = warpmc(&["quality", "--battery", battery, "--words", words]);
        assert_eq!(o.status.code(), Some(2), "{battery} {words}");
        assert!(stderr(&o).contains("words") && stderr(&o).contains(range), "{}", stderr(&o));
    }
    let o = warpmc(&["quality", "--battery", "crush", "--words", "2^24"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("none: --words sets the size of the quick and long batteries"), "{}", stderr(&o));
}

fn warpmc_bin() -> String {
    std::env::var("WARPMC_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_warpmc").to_string())
}

/// `warpmc generate --count inf | head -c N`: the reader closes the pipe and warpmc ends with
/// status 0, on each backend present.
#[test]
fn generate_without_end_stops_quietly_when_the_reader_closes() {
    use std::io::Read;
    let mut backends = vec!["cpu"];
    if gpu_present() {
        backends.push("gpu");
    }
    for backend in backends {
        for format in ["binary", "text"] {
            let mut child = Command::new(warpmc_bin())
                .args(["generate", "--count", "inf", "--format", format, "--backend", backend])
                .args(["--generator", "philox4x32-10", "--streams", "64", "--distribution", "normal"])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("run warpmc");
            let mut head = vec![0u8; 3 << 20];
            child.stdout.take().unwrap().read_exact(&mut head).expect("3 MiB from the pipe");
            // The pipe's read end is closed here (dropped above).
            let o = child.wait_with_output().expect("wait for warpmc");
            assert!(o.status.success(), "{backend} {format}: {:?} {}", o.status, stderr(&o));
            assert!(stderr(&o).is_empty(), "{backend} {format}: {}", stderr(&o));
        }
    }
}

#[test]
fn generate_streams_the_same_values_whatever_the_block_and_buffers() {
    let base = ["generate", "--backend", "cpu", "--generator", "lcg-prime", "--streams", "5"];
    let dist = ["--distribution", "normal", "--transform", "polar", "--count", "10007"];
    let want = warpmc(&[&base[..], &dist[..]].concat());
    assert!(want.status.success(), "{}", stderr(&want));
    assert_eq!(stdout(&want).lines().count(), 10007);
    // --progress draws only on a terminal (stderr is a pipe here): it must not change stdout.
    let extras: [&[&str]; 3] =
        [&["--block", "1", "--buffers", "2"], &["--block", "333", "--progress", "--buffers", "7"], &["--block", "2^20", "--buffers", "3"]];
    for extra in extras {
        let o = warpmc(&[&base[..], &dist[..], &extra[..], &["--threads", "1"][..]].concat());
        assert!(o.status.success(), "{extra:?}: {}", stderr(&o));
        assert!(o.stdout == want.stdout, "{extra:?}");
    }
    for (flags, field, allowed) in [
        (["--block", "0"], "--block", "[1, 2^28]"),
        (["--buffers", "1"], "--buffers", "[2, 64]"),
        (["--count", "0"], "--count", "[1, 2^50], or inf"),
    ] {
        let count: &[&str] = if flags[0] == "--count" { &[] } else { &["--count", "10"] };
        let o = warpmc(&[&base[..], &flags[..], count].concat());
        assert!(!o.status.success(), "{flags:?}");
        let e = stderr(&o);
        assert!(e.contains(field) && e.contains(allowed), "{flags:?}: {e}");
    }
    let o = warpmc(&["generate", "--count", "lots"]);
    assert!(!o.status.success() && stderr(&o).contains("or inf"), "{}", stderr(&o));
}

#[test]
fn demo_pipeline_reports_each_way_with_the_same_tally() {
    for consumer in ["sign", "histogram"] {
        let o = warpmc(&[
            "demo", "pipeline", "--backend", "cpu", "--threads", "2", "--count", "2^18", "--streams", "256", "--block",
            "2^14", "--consumer", consumer, "--json",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON");
        assert_eq!(v["elements"], 1 << 18);
        assert_eq!(v["rows"].as_array().unwrap().len(), 3);
        let t = &v["tally"];
        let n = t["positive"].as_u64().unwrap() + t["negative"].as_u64().unwrap() + t["zero"].as_u64().unwrap();
        assert_eq!(n, 1 << 18);
        // Normal values: each sign about half (5 standard deviations of 2^18 coin flips: 1280).
        assert!(t["positive"].as_u64().unwrap().abs_diff(1 << 17) < 1280, "{t}");
        for r in v["rows"].as_array().unwrap().iter().chain(v["stages"].as_array().unwrap()) {
            assert!(r["ns_per_element"].as_f64().unwrap() > 0.0, "{r}");
        }
        if consumer == "histogram" {
            let bins = t["bins"].as_array().unwrap();
            assert_eq!(bins.iter().map(|b| b.as_u64().unwrap()).sum::<u64>(), 1 << 18);
            // Σ x² over n standard normals: n within 5 sqrt(2n).
            let ss = t["sum_squares"].as_f64().unwrap();
            assert!((ss - 262144.0).abs() < 5.0 * (2.0f64 * 262144.0).sqrt(), "{ss}");
        }
    }
    let o = warpmc(&["demo", "pipeline", "--backend", "cpu", "--streams", "0"]);
    assert!(!o.status.success() && stderr(&o).contains("--streams"), "{}", stderr(&o));
}

fn integrate_json(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["integrate", "--json"];
    all.extend_from_slice(args);
    let o = warpmc(&all);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    serde_json::from_str(&stdout(&o)).expect("integrate --json prints JSON")
}

#[test]
fn integrate_reports_the_estimate_against_the_closed_form() {
    let common = ["--integrand", "gaussian", "--dim", "3", "--evals-per-iteration", "20000", "--iterations", "6"];
    let one = integrate_json(&[&common[..], &["--backend", "cpu", "--threads", "1"]].concat());
    for key in ["estimate", "std_error", "chi2_per_dof", "dof", "evals", "iterations", "exact", "z", "wall_seconds", "evals_per_second"] {
        assert!(one.get(key).is_some(), "integrate --json lacks {key}: {one}");
    }
    let z = one["z"].as_f64().unwrap();
    assert!(z.abs() < 4.0, "z = {z}: {one}");
    assert_eq!(one["iterations"], 6);
    assert_eq!(one["dof"], 3, "6 iterations less 2 warm-up give 3 degrees of freedom");
    // Bit for bit the same with 7 threads, and on the GPU where there is one.
    let seven = integrate_json(&[&common[..], &["--backend", "cpu", "--threads", "7"]].concat());
    assert_eq!(one["estimate"], seven["estimate"]);
    assert_eq!(one["std_error"], seven["std_error"]);
    if gpu_present() {
        let gpu = integrate_json(&[&common[..], &["--backend", "gpu", "--gpus", "all"]].concat());
        assert_eq!(one["estimate"], gpu["estimate"], "GPU: {gpu}");
        assert_eq!(one["std_error"], gpu["std_error"]);
    }
    // The table names what it shows.
    let o = warpmc(&[&["integrate"][..], &common[..], &["--backend", "cpu"]].concat());
    let out = stdout(&o);
    for want in ["estimate", "exact", "chi2/dof", "evals", "wall"] {
        assert!(out.contains(want), "the table lacks {want}: {out}");
    }
}

#[test]
fn integrate_errors_name_the_field_and_range() {
    let base = ["integrate", "--backend", "cpu", "--integrand", "gaussian"];
    for (extra, want) in [
        (&["--dim", "0"][..], "invalid --dim: 0 is outside the allowed range [1, 32]"),
        (&["--dim", "33"], "invalid --dim: 33"),
        (&["--dim", "2", "--target-rel-error", "-1"], "invalid --target-rel-error"),
        (&["--dim", "2", "--target-rel-error", "0"], "invalid --target-rel-error"),
        (&["--dim", "2", "--param", "b=1"], "invalid --param"),
        (&["--dim", "2", "--param", "a=-3"], "invalid --param a"),
        (&["--dim", "2", "--evals", "10"], "invalid --evals"),
        (&["--dim", "2", "--bins", "1"], "invalid --bins"),
    ] {
        let o = warpmc(&[&base[..], extra].concat());
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{extra:?}: {}", stderr(&o));
    }
    let o = warpmc(&["integrate", "--integrand", "nope", "--dim", "2"]);
    assert!(stderr(&o).contains("invalid --integrand: nope"), "{}", stderr(&o));
}

/// Two and three MPI ranks give a single process's integral, and two its prices, bit for bit
/// (the `mpi` feature; CI builds it and runs this test under Open MPI).
#[cfg(feature = "mpi")]
#[test]
fn integrate_under_mpirun_matches_one_process() {
    let bin = std::env::var("WARPMC_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_warpmc").to_string());
    let args = [
        "integrate",
        "--json",
        "--backend",
        "cpu",
        "--integrand",
        "narrow-gaussians",
        "--dim",
        "4",
        "--evals-per-iteration",
        "40000",
        "--iterations",
        "6",
    ];
    let one = integrate_json(&args[2..]);
    for ranks in ["2", "3"] {
        let o = Command::new("mpirun")
            .args(["--oversubscribe", "--allow-run-as-root", "-n", ranks, &bin])
            .args(args)
            .output()
            .expect("run mpirun (Open MPI; `cargo xtask setup` installs it)");
        assert!(o.status.success(), "mpirun -n {ranks}: {}", stderr(&o));
        let many: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("rank 0 prints one JSON report");
        assert_eq!(many["ranks"], ranks.parse::<u64>().unwrap(), "{many}");
        for key in ["estimate", "std_error", "chi2_per_dof", "evals"] {
            assert_eq!(one[key], many[key], "{key} differs with {ranks} ranks");
        }
    }
    // `warpmc price` splits its paths between the ranks: the same price, bit for bit.
    for job in [&["--paths", "30000", "--steps", "16"][..], &["--instrument", "european-call", "--paths", "50000"]] {
        let args = [&["price", "--json", "--backend", "cpu"][..], job].concat();
        let single = warpmc(&args);
        assert!(single.status.success(), "{}", stderr(&single));
        let o = Command::new("mpirun")
            .args(["--oversubscribe", "--allow-run-as-root", "-n", "2", &bin])
            .args(&args)
            .output()
            .expect("run mpirun");
        assert!(o.status.success(), "mpirun price: {}", stderr(&o));
        let (a, b): (serde_json::Value, serde_json::Value) =
            (serde_json::from_str(&stdout(&single)).unwrap(), serde_json::from_str(&stdout(&o)).expect("one report"));
        assert_eq!(a["price"], b["price"], "{job:?}: {a} vs {b}");
        assert_eq!(a["std_error"], b["std_error"], "{job:?}");
    }
}

#[test]
fn integrate_plot_draws_the_iterations_and_the_grid() {
    let dir = std::env::temp_dir().join(format!("warpmc-integrate-plot-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let svg = dir.join("run.svg");
    let base = ["integrate", "--backend", "cpu", "--integrand", "narrow-gaussians", "--dim", "3"];
    let o = warpmc(&[&base[..], &["--evals-per-iteration", "20000", "--iterations", "5", "--plot", svg.to_str().unwrap(), "--plot-axes", "2,0"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.contains("<svg") && text.contains("adapted grid: axes 2 and 0") && text.contains("exact"), "{}", &text[..text.len().min(400)]);
    for (axes, want) in [("0,3", "invalid --plot-axes"), ("1,1", "invalid --plot-axes"), ("x", "invalid --plot-axes")] {
        let o = warpmc(&[&base[..], &["--plot", svg.to_str().unwrap(), "--plot-axes", axes]].concat());
        assert!(stderr(&o).contains(want), "{axes}: {}", stderr(&o));
    }
    let o = warpmc(&[&base[..], &["--plot", dir.join("run.pdf").to_str().unwrap()]].concat());
    assert!(stderr(&o).contains("invalid --plot"), "{}", stderr(&o));
    std::fs::remove_dir_all(&dir).ok();
}
