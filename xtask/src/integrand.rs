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
    let undefined = undefined_symbols(&module);
    if !undefined.is_empty() {
        bail!(
            "{} declares {} but does not define {}: a `static` of a dependency (warpmc-kernels or another) is \
             not compiled into a module built with --emit=asm, and the GPU would read unrelated memory in its \
             place. Use a `const` for tables the integrand reads, or call functions that use none (see README, \
             \"Your own integrand\")",
            ptx.display(),
            undefined.join(", "),
            if undefined.len() == 1 { "it" } else { "them" }
        );
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

/// The symbols a module declares `.extern` in global or constant memory, or as functions: a
/// module is loaded alone, so each would be unresolved. ptxas and the driver accept an undefined
/// `.extern .global` without a word (the kernel then reads whatever lies at the address), which is
/// why the build checks for them itself. `.extern .shared` is the dynamic shared memory a kernel
/// is launched with, and is allowed.
fn undefined_symbols(module: &str) -> Vec<String> {
    module
        .lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with(".extern") && !l.starts_with(".extern .shared"))
        .map(|l| {
            // `.extern .global .align 4 .b8 NAME[115200];` or `.extern .func (...) NAME(`: the name
            // is the last word before `[`, `(`, `;` or the end.
            let head = l.split(['[', ';']).next().unwrap_or(l);
            let head = if l.starts_with(".extern .func") { head.rsplit_once(')').map_or(head, |(_, r)| r) } else { head };
            let name = head.split(['(', ' ', '\t']).filter(|w| !w.is_empty()).next_back().unwrap_or(l);
            name.trim().to_string()
        })
        .collect()
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

#[cfg(test)]
mod tests {
    use super::undefined_symbols;

    #[test]
    fn undefined_globals_and_functions_are_found_and_dynamic_shared_memory_is_allowed() {
        let module = "\
.version 8.7
.target sm_90
.address_size 64

.extern .shared .align 16 .b8 warpmc_shared[];
.extern .global .align 4 .b8 _ZN14warpmc_kernels3rng4warp10WARP_JUMPS17h0E[57600];
.global .align 4 .b8 defined_here[16];
.extern .const .align 8 .b8 TABLE[64];
.extern .func  (.param .b32 func_retval0) helper
(
";
        assert_eq!(
            undefined_symbols(module),
            ["_ZN14warpmc_kernels3rng4warp10WARP_JUMPS17h0E", "TABLE", "helper"],
        );
        assert!(undefined_symbols(".extern .shared .align 16 .b8 s[];\n.visible .entry k()\n{\n}\n").is_empty());
    }
}
