//! Compiles the `gpu-kernels` crate to PTX (feature `gpu`) and leaves it in `OUT_DIR` for
//! `include_str!`: the job rust-cuda's `cuda_builder` does, with rustc's own
//! `nvptx64-nvidia-cuda` target (see ../shared/TOOLCHAIN.md for why).
//!
//! The inner build:
//! `cargo +nightly rustc -p warpmc-kernels --release --target nvptx64-nvidia-cuda
//!  -Zbuild-std=core --crate-type rlib -- --emit=asm -Ctarget-cpu=sm_90`
//! with `RUSTFLAGS=-Zcross-crate-inline-threshold=always`, so that every function of `core`
//! the kernels call is codegen'd into the module. It runs in a target directory of its own
//! (`<target>/ptx`: the outer cargo holds the lock on its own), with the outer build's
//! environment cleared (a leaked `RUSTC` or `RUSTUP_TOOLCHAIN` would run the stable compiler).
//!
//! The build fails if nightly or rust-src is missing (naming the command that fixes it) and if
//! the PTX calls any function it does not define (`.extern .func`): such a module would not load.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const PTX_TARGET: &str = "nvptx64-nvidia-cuda";
const GPU_ARCH: &str = "sm_90";

/// Register caps (PTX `.maxnreg`, the equivalent of CUDA's `__launch_bounds__`, which rustc
/// cannot express). Uncapped, the Asian basket kernels take 96-100 registers because the
/// path-level accumulators (five 192-bit sums) stay live across the step loop; capped at 80,
/// ptxas keeps the step loop in registers and spills only the once-per-path accumulator
/// updates, which raises occupancy from 2 to 3 blocks of 256 threads per multiprocessor.
/// Measured on an H200 (2026-11-21, BENCHMARKS.md): fast mode 325 -> 356 GSteps/s, exact
/// mode and the constant-RNG baseline unchanged within noise; caps of 64 and 72 were no better.
const MAX_REGISTERS: &[(&str, u32)] =
    &[("asian_basket_fast", 80), ("asian_basket_exact", 80), ("asian_basket_constant_fast", 80)];

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if env::var_os("CARGO_FEATURE_GPU").is_none() {
        return;
    }
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let kernels = manifest_dir.parent().unwrap().join("gpu-kernels");
    println!("cargo:rerun-if-changed={}", kernels.join("src").display());
    println!("cargo:rerun-if-changed={}", kernels.join("Cargo.toml").display());

    let out_dir = PathBuf::from(env::var("OUT_DIR").unwrap());
    let target_root = cargo_target_root(&out_dir);
    let ptx_target_dir = target_root.join("ptx");

    check_nightly();

    let mut cmd = Command::new("cargo");
    for (key, _) in env::vars_os() {
        let key = key.to_string_lossy().into_owned();
        let leaks = matches!(
            key.as_str(),
            "RUSTC"
                | "RUSTC_WRAPPER"
                | "RUSTC_WORKSPACE_WRAPPER"
                | "RUSTFLAGS"
                | "RUSTDOCFLAGS"
                | "CARGO_ENCODED_RUSTFLAGS"
                | "CARGO_TARGET_DIR"
                | "RUSTUP_TOOLCHAIN"
                | "CARGO"
                | "CARGO_MAKEFLAGS"
                | "MAKEFLAGS"
                | "MFLAGS"
        ) || key.starts_with("CARGO_BUILD_")
            || key.starts_with("CARGO_PROFILE_")
            || key.starts_with("CARGO_CFG_")
            || key.starts_with("CARGO_FEATURE_")
            || key.starts_with("CARGO_PKG_")
            || key.starts_with("CARGO_MANIFEST_")
            || key.starts_with("DEP_");
        if leaks {
            cmd.env_remove(&key);
        }
    }
    cmd.env("RUSTFLAGS", "-Zcross-crate-inline-threshold=always")
        .arg("+nightly")
        .arg("rustc")
        .arg("--manifest-path")
        .arg(kernels.join("Cargo.toml"))
        .args(["--release", "--target", PTX_TARGET, "-Zbuild-std=core", "--crate-type", "rlib"])
        .arg("--target-dir")
        .arg(&ptx_target_dir)
        .args(["--", "--emit=asm", &format!("-Ctarget-cpu={GPU_ARCH}")]);
    let status = cmd.status().unwrap_or_else(|e| fail(&format!("could not run cargo +nightly: {e}")));
    if !status.success() {
        fail("compiling gpu-kernels to PTX failed (see the errors above)");
    }

    let ptx_path = newest_ptx(&ptx_target_dir.join(PTX_TARGET).join("release").join("deps"));
    let ptx =
        fs::read_to_string(&ptx_path).unwrap_or_else(|e| fail(&format!("cannot read {}: {e}", ptx_path.display())));
    check_ptx(&ptx, &ptx_path);
    let ptx = cap_registers(ptx);

    fs::write(out_dir.join("warpmc_kernels.ptx"), &ptx).unwrap();
    // A stable path for `cargo xtask test`, which assembles the module with ptxas.
    fs::write(ptx_target_dir.join("warpmc_kernels.ptx"), &ptx).unwrap();
}

fn fail(msg: &str) -> ! {
    eprintln!("\nerror: {msg}\n");
    eprintln!(
        "The `gpu` feature (on by default) compiles the kernels with the nightly toolchain.\n\
         Either install what it needs (`cargo xtask setup` does both):\n\
         \x20   rustup toolchain install nightly\n\
         \x20   rustup component add rust-src --toolchain nightly\n\
         or build for the CPU only with `--no-default-features`.\n"
    );
    std::process::exit(1);
}

fn check_nightly() {
    let sysroot = Command::new("rustc")
        .env_remove("RUSTC")
        .env_remove("RUSTUP_TOOLCHAIN")
        .args(["+nightly", "--print", "sysroot"])
        .output();
    let sysroot = match sysroot {
        Ok(o) if o.status.success() => PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()),
        _ => fail("the nightly toolchain is not installed: run `rustup toolchain install nightly`"),
    };
    let library = sysroot.join("lib/rustlib/src/rust/library/core");
    if !library.exists() {
        fail("rust-src is missing for nightly: run `rustup component add rust-src --toolchain nightly`");
    }
}

/// `<target>` from `<target>[/<triple>]/<profile>/build/<pkg>-<hash>/out`: the first ancestor
/// holding cargo's `CACHEDIR.TAG`.
fn cargo_target_root(out_dir: &Path) -> PathBuf {
    out_dir
        .ancestors()
        .find(|p| p.join("CACHEDIR.TAG").exists())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| out_dir.ancestors().nth(4).unwrap().to_path_buf())
}

fn newest_ptx(deps: &Path) -> PathBuf {
    let entries = fs::read_dir(deps).unwrap_or_else(|e| fail(&format!("no PTX output in {}: {e}", deps.display())));
    entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.extension().is_some_and(|x| x == "s")
                && p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("warpmc_kernels"))
        })
        .max_by_key(|p| fs::metadata(p).and_then(|m| m.modified()).ok())
        .unwrap_or_else(|| fail(&format!("no warpmc_kernels*.s in {}", deps.display())))
}

/// Insert `.maxnreg N` after the parameter list of each entry in [`MAX_REGISTERS`].
fn cap_registers(mut ptx: String) -> String {
    for (kernel, regs) in MAX_REGISTERS {
        let entry = format!(".entry {kernel}(");
        let start = ptx.find(&entry).unwrap_or_else(|| fail(&format!("kernel {kernel} is not in the PTX")));
        let close =
            ptx[start..].find(")\n{").unwrap_or_else(|| fail(&format!("cannot find the body of {kernel} in the PTX")))
                + start;
        ptx.insert_str(close + 1, &format!("\n.maxnreg {regs}"));
    }
    ptx
}

fn check_ptx(ptx: &str, path: &Path) {
    if !ptx.contains(".entry") {
        fail(&format!("{} holds no kernel entry point", path.display()));
    }
    let externs: Vec<&str> = ptx.lines().filter(|l| l.contains(".extern .func")).collect();
    if !externs.is_empty() {
        fail(&format!(
            "the PTX calls functions it does not define, so the module would not load:\n{}\n\
             (a function of core or of a dependency was not inlined; see TOOLCHAIN.md)",
            externs.join("\n")
        ));
    }
}
