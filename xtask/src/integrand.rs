//! `cargo xtask build-integrand`: compile a user's integrand crate to a PTX module with the
//! toolchain and flags the project's own kernels use (host/build.rs), and check it with ptxas.
//!
//! The crate depends on `warpmc-kernels`, implements `warpmc_kernels::vegas::Integrand` for a
//! `#[repr(C)]` parameter block and invokes `warpmc_kernels::integrand_kernel!(NAME, Params)`;
//! the module it gets defines the kernel `NAME`, which `warpmc::integrate::CompiledIntegrand`
//! loads (README, "Your own integrand").

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::setup::{PTXAS, ptx_toolchain};
use crate::util::{capture, run, workspace_root};

/// The nvptx target and architecture of host/build.rs.
const PTX_TARGET: &str = "nvptx64-nvidia-cuda";
const GPU_ARCH: &str = "sm_90";

/// Compile the library of the crate at `manifest` to `<out>/<crate name>.ptx` (default
/// `target/integrands/`) and return the path; ptxas must accept it (when ptxas is installed).
pub fn build_integrand(manifest: &Path, out: Option<&Path>) -> Result<PathBuf> {
    let root = workspace_root();
    let manifest = std::path::absolute(manifest).with_context(|| format!("no manifest {}", manifest.display()))?;
    let text = std::fs::read_to_string(&manifest).with_context(|| format!("cannot read {}", manifest.display()))?;
    let doc: toml::Table = text.parse().with_context(|| format!("{} is not TOML", manifest.display()))?;
    let package = doc
        .get("package")
        .and_then(|p| p.get("name"))
        .and_then(|n| n.as_str())
        .with_context(|| format!("{} has no [package] name", manifest.display()))?;
    let name = package.replace('-', "_");
    let out_dir = out.map(Path::to_path_buf).unwrap_or_else(|| root.join("target/integrands"));
    std::fs::create_dir_all(&out_dir)?;
    let ptx = out_dir.join(format!("{name}.ptx"));
    let _ = std::fs::remove_file(&ptx);
    let toolchain = ptx_toolchain()?;
    let target_dir = root.join("target/ptx-integrands");
    // cargo runs rustc only for a crate it thinks stale, and a fresh crate writes no PTX: a second
    // build of an unchanged crate would leave no module (or another crate's of the same name).
    // Cleaning the crate's own artifacts (not its dependencies') makes rustc write it every time.
    let mut clean = Command::new("cargo");
    isolate(&mut clean);
    clean
        .arg(format!("+{toolchain}"))
        .args(["clean", "--quiet", "--release", "--target", PTX_TARGET, "-p", package])
        .arg("--manifest-path")
        .arg(&manifest)
        .arg("--target-dir")
        .arg(&target_dir);
    run(&mut clean).context("cleaning the integrand crate's previous PTX build")?;
    let mut cmd = Command::new("cargo");
    isolate(&mut cmd);
    cmd.env("RUSTFLAGS", format!("-Zcross-crate-inline-threshold=always -Ctarget-cpu={GPU_ARCH}"))
        .arg(format!("+{toolchain}"))
        .arg("rustc")
        .arg("--manifest-path")
        .arg(&manifest)
        .args(["--lib", "--release", "--target", PTX_TARGET, "-Zbuild-std=core", "--crate-type", "rlib"])
        .arg("--target-dir")
        .arg(&target_dir)
        .arg("--")
        .arg(format!("--emit=asm={}", ptx.display()))
        .arg("-Ccodegen-units=1");
    run(&mut cmd).context("compiling the integrand crate for nvptx64 (`cargo xtask setup` installs the toolchain)")?;
    if !ptx.exists() {
        bail!("rustc did not write {}", ptx.display());
    }
    let module = std::fs::read_to_string(&ptx)?;
    if !module.contains(".entry") {
        bail!("{} defines no kernel: does the crate invoke warpmc_kernels::integrand_kernel!?", ptx.display());
    }
    if Path::new(PTXAS).exists() {
        let out = capture(Command::new(PTXAS).arg(format!("-arch={GPU_ARCH}")).arg(&ptx).args(["-o", "/dev/null"]))?;
        if !out.status.success() {
            bail!("ptxas rejected {}: {}", ptx.display(), String::from_utf8_lossy(&out.stderr));
        }
        eprintln!("build-integrand: ptxas accepts {}", ptx.display());
    } else {
        eprintln!("build-integrand: no ptxas ({PTXAS}): the module is not checked here");
    }
    println!("{}", ptx.display());
    Ok(ptx)
}

/// The same isolation as host/build.rs: nothing of an outer cargo's environment leaks in.
fn isolate(cmd: &mut Command) {
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy().into_owned();
        if matches!(
            key.as_str(),
            "RUSTC"
                | "RUSTC_WRAPPER"
                | "RUSTFLAGS"
                | "CARGO_ENCODED_RUSTFLAGS"
                | "CARGO_TARGET_DIR"
                | "RUSTUP_TOOLCHAIN"
                | "CARGO"
        ) || key.starts_with("CARGO_BUILD_")
        {
            cmd.env_remove(&key);
        }
    }
}
