//! Integrate the example's [`Ridge`] with warpmc on the CPU (the Rust function itself) and, given
//! its PTX module (`cargo xtask build-integrand`) and a GPU, on the GPU; check both against the
//! closed form and against each other (bit for bit).
//!
//! Usage: `example-integrand [--ptx target/integrands/warpmc_example_integrand.ptx] [--dim D]
//! [--require-gpu]`. Prints one JSON object; exits 1 when a check fails.

use warpmc::backend::BackendOptions;
use warpmc::backend::cpu::CpuExecutor;
use warpmc::integrate::{CompiledIntegrand, Integrand, IntegrateSpec, VegasRunner, integrate};
use warpmc_example_integrand::Ridge;
use warpmc_kernels::vegas::{Integrand as _, MAX_DIM};

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let value = |flag: &str| args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1)).cloned();
    let dim: u32 = value("--dim").and_then(|d| d.parse().ok()).unwrap_or(5);
    let require_gpu = args.iter().any(|a| a == "--require-gpu");
    let mut ridge = Ridge { k: 3.0, dim, pad: 0, m: [0.0; MAX_DIM] };
    for (i, m) in ridge.m[..dim as usize].iter_mut().enumerate() {
        *m = 0.3 + 0.05 * i as f64;
    }
    let spec = IntegrateSpec { evals_per_iteration: 200_000, max_iterations: 8, ..IntegrateSpec::new(dim) };
    let f = |x: &[f64]| ridge.eval(x);
    let cpu = CpuExecutor::new(None).expect("a CPU pool");
    let on_cpu = integrate(&spec, &Integrand::Closure(&f), &[&cpu as &dyn VegasRunner], |_| {}).expect("the CPU run");
    let exact = ridge.exact();
    let z_cpu = (on_cpu.estimate - exact) / on_cpu.std_error;
    let mut ok = z_cpu.abs() < 4.0;
    let mut report = serde_json::json!({
        "exact": exact,
        "cpu": { "estimate": on_cpu.estimate, "std_error": on_cpu.std_error, "z": z_cpu, "chi2_per_dof": on_cpu.chi2_per_dof },
    });
    let gpu = value("--ptx").map(|path| -> Result<serde_json::Value, String> {
        let ptx = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {path}: {e}"))?;
        let compiled = CompiledIntegrand { ptx: &ptx, kernel: "ridge_vegas", params: ridge.as_bytes(), dim, cpu: &f };
        let runners = warpmc::integrate::Runners::open(
            &BackendOptions { kind: warpmc::backend::BackendKind::Gpu, ..Default::default() },
            None,
        )
        .map_err(|e| e.to_string())?;
        let r =
            integrate(&spec, &Integrand::Compiled(&compiled), &runners.list(), |_| {}).map_err(|e| e.to_string())?;
        let same =
            r.estimate.to_bits() == on_cpu.estimate.to_bits() && r.std_error.to_bits() == on_cpu.std_error.to_bits();
        Ok(serde_json::json!({ "estimate": r.estimate, "std_error": r.std_error, "same_bits_as_cpu": same }))
    });
    match gpu {
        Some(Ok(g)) => {
            ok &= g["same_bits_as_cpu"] == true;
            report["gpu"] = g;
        }
        Some(Err(e)) => {
            ok &= !require_gpu;
            report["gpu"] = serde_json::json!({ "not_run": e });
        }
        None => {
            ok &= !require_gpu;
            report["gpu"] = serde_json::json!({ "not_run": "no --ptx module given" });
        }
    }
    report["passed"] = ok.into();
    println!("{}", serde_json::to_string_pretty(&report).unwrap());
    if ok { std::process::ExitCode::SUCCESS } else { std::process::ExitCode::FAILURE }
}
