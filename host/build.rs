//! Compiles the `gpu-kernels` crate to PTX (feature `gpu`) and leaves it in `OUT_DIR` for
//! `include_str!`: the job rust-cuda's `cuda_builder` does, with rustc's own
//! `nvptx64-nvidia-cuda` target (docs/TOOLCHAIN.md says why, and what each flag is for).
//!
//! The inner build, with the nightly pinned in the workspace Cargo.toml
//! (`[workspace.metadata.warpmc] ptx-toolchain`):
//! `cargo +nightly-YYYY-MM-DD rustc -p warpmc-kernels --release --target nvptx64-nvidia-cuda
//!  -Zbuild-std=core --crate-type rlib -- --emit=asm`
//! with `RUSTFLAGS="-Zcross-crate-inline-threshold=always -Ctarget-cpu=sm_90"`, so that every
//! function of `core` the kernels call is codegen'd into the module and every crate of the
//! build targets the same CPU. It runs in a target directory of its own (`<target>/ptx`: the
//! outer cargo holds the lock on its own), with the outer build's environment cleared (a leaked
//! `RUSTC` or `RUSTUP_TOOLCHAIN` would run the stable compiler).
//!
//! The build fails if the pinned toolchain or its rust-src is missing (naming the command that
//! installs them); if rustc rejects the kernels (repeating rustc's errors, and nothing about
//! installing); if the PTX calls any function it does not define (`.extern .func`): such a
//! module would not load; and if it declares a global it does not define (`.extern .global` or
//! `.const`), which would load and read unrelated memory.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

// The pin's parser, shared with `cargo xtask setup`.
#[path = "../xtask/src/ptx_pin.rs"]
mod ptx_pin;

const PTX_TARGET: &str = "nvptx64-nvidia-cuda";
const GPU_ARCH: &str = "sm_90";

/// Register caps (PTX `.maxnreg`, the equivalent of CUDA's `__launch_bounds__`, which rustc
/// cannot express). Uncapped, the Asian basket kernels take 96-100 registers because the
/// path-level accumulators (five 192-bit sums) stay live across the step loop; capped at 80,
/// ptxas keeps the step loop in registers and spills only the once-per-path accumulator
/// updates, which raises occupancy from 2 to 3 blocks of 256 threads per multiprocessor.
/// Measured on an H200 (2026-11-21, BENCHMARKS.md): fast mode 325 -> 356 GSteps/s, exact
/// mode and the constant-RNG baseline unchanged within noise; caps of 64 and 72 were no better.
/// MT19937's fills (a warp per stream, `fill_warp_stores`): uncapped they take 72-80 registers,
/// so a multiprocessor holds 24 warps where their shared memory (7 KB per warp) allows 32;
/// capped at 64, u32 words on an H100 (2026-11-24, block 512, 4224 streams, the same kernel
/// with and without the cap) went from 595 to 625 G/s and f64 values from 180 to 190 G/s.
/// Capped, the u32, f32, f64 and fast-normal fills do not spill; the exact-normal fill spills
/// 52 bytes (its speed was not compared with and without the cap).
/// Applies to every kernel whose name starts with the prefix and ends with the suffix (one per
/// generator and mode).
const MAX_REGISTERS: &[(&str, &str, u32)] = &[("asian_basket_", "", 80), ("fill_", "__mt19937", 64)];

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if env::var_os("CARGO_FEATURE_GPU").is_none() {
        return;
    }
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let root = manifest_dir.parent().unwrap();
    let kernels = root.join("gpu-kernels");
    println!("cargo:rerun-if-changed={}", kernels.join("src").display());
    println!("cargo:rerun-if-changed={}", kernels.join("Cargo.toml").display());
    println!("cargo:rerun-if-changed={}", root.join("Cargo.toml").display());
    println!("cargo:rerun-if-changed={}", root.join("xtask/src/ptx_pin.rs").display());

    let out_dir = PathBuf::from(env::var("OUT_DIR").unwrap());
    let target_root = cargo_target_root(&out_dir);
    let ptx_target_dir = target_root.join("ptx");

    let toolchain = ptx_toolchain(root);
    let asm_path = ptx_target_dir.join("warpmc_kernels.s");
    check_toolchain(&toolchain);

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
    // RUSTFLAGS reach every crate of the build, `-Zbuild-std`'s core and compiler_builtins
    // included: the target CPU must be the same for all of them (newer nightlies reject a
    // crate built for sm_90 against a core built for the default CPU).
    cmd.env("RUSTFLAGS", format!("-Zcross-crate-inline-threshold=always -Ctarget-cpu={GPU_ARCH}"))
        .arg(format!("+{toolchain}"))
        .arg("rustc")
        .arg("--manifest-path")
        .arg(kernels.join("Cargo.toml"))
        .args(["--release", "--target", PTX_TARGET, "-Zbuild-std=core", "--crate-type", "rlib"])
        .arg("--target-dir")
        .arg(&ptx_target_dir)
        // rustc writes the PTX where we say: cargo's own output layout differs between
        // nightlies (`deps/` until 2026-05, `build/<pkg>/<hash>/out/` by 2026-10). With more
        // than one codegen unit rustc writes one assembly file per unit and ignores the path
        // (with a warning only), so there must be exactly one.
        .arg("--")
        .arg(format!("--emit=asm={}", asm_path.display()))
        .arg("-Ccodegen-units=1");
    let output = cmd.output().unwrap_or_else(|e| {
        fail(&format!("could not run `cargo +{toolchain}`: {e} (is rustup's cargo on PATH?)"), Some(&toolchain))
    });
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        eprintln!("{stderr}");
        let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error")).collect();
        fail_compile(&toolchain, &errors);
    }

    // A stale file must never pass for this build's output (rustc ignores an emit path, with a
    // warning only, when it writes several assembly files).
    let written = fs::metadata(&asm_path).and_then(|m| m.modified()).ok();
    if written.is_none_or(|w| Some(w) < newest_source(&kernels)) {
        fail(&format!("rustc did not write {} from the current kernel sources", asm_path.display()), None);
    }
    let ptx = fs::read_to_string(&asm_path)
        .unwrap_or_else(|e| fail(&format!("cannot read the PTX {}: {e}", asm_path.display()), None));
    check_ptx(&ptx, &asm_path);
    let ptx = cap_registers(ptx);

    // A stable path for `cargo xtask test`, which assembles the module with ptxas.
    let ptx_file = ptx_target_dir.join("warpmc_kernels.ptx");
    write(&ptx_file, &ptx);
    let cubin_file = ptx_target_dir.join(CUBIN_NAME);
    let cubin = assemble_cubin(&target_root, &ptx_file, &cubin_file);
    // Embedded deflated: a module of a hundred kernels is megabytes of text, in every binary
    // that can reach the GPU (the test executables included).
    write(&out_dir.join("warpmc_kernels.ptx.deflate"), miniz_oxide::deflate::compress_to_vec(ptx.as_bytes(), 6));
    write(&out_dir.join("warpmc_kernels.sm_90.cubin.deflate"), miniz_oxide::deflate::compress_to_vec(&cubin, 6));
}

/// The machine code embedded beside the PTX, for GPUs of compute capability 9.0 (H100, H200).
const CUBIN_NAME: &str = "warpmc_kernels.sm_90.cubin";

/// Assemble the PTX into `out` with the project's ptxas (`cargo xtask setup` installs it in
/// `<target>/tools/nvcc`; `WARPMC_PTXAS` names another). Loading machine code takes the driver
/// milliseconds where JIT-compiling a PTX module of dozens of kernels takes seconds. Returns the
/// machine code; without ptxas it is empty (the host then uses the PTX), with a warning here.
fn assemble_cubin(target_root: &Path, ptx_file: &Path, out: &Path) -> Vec<u8> {
    let ptxas = env::var_os("WARPMC_PTXAS")
        .map(PathBuf::from)
        .unwrap_or_else(|| target_root.join("tools/nvcc/nvidia/cu13/bin/ptxas"));
    println!("cargo:rerun-if-env-changed=WARPMC_PTXAS");
    println!("cargo:rerun-if-changed={}", ptxas.display());
    if !ptxas.exists() {
        println!(
            "cargo:warning=no ptxas at {}: the GPU will JIT-compile the PTX at start-up (seconds); \
             `cargo xtask setup` installs ptxas",
            ptxas.display()
        );
        return Vec::new();
    }
    // `-v`: the registers, stack and spills per function, kept beside the PTX for `cargo xtask
    // test`'s report (which would otherwise assemble the whole module a second time).
    let report = ptx_file.with_extension("ptxas-v.txt");
    let _ = fs::remove_file(&report);
    let output = Command::new(&ptxas)
        .arg(format!("-arch={GPU_ARCH}"))
        .arg("-v")
        // Functions optimised on every core: the module is 456 kernels, and one thread took 18 of
        // CI's 90 minutes on two cores (9.5 with both). Every kernel's machine code (each `.text`
        // section) is byte for byte the same as without it; only the symbol order and ptxas's
        // note of its own command line differ (checked 2026-11-27, ptxas 13.0.88).
        .args(["--split-compile", "0"])
        .arg(ptx_file)
        .arg("-o")
        .arg(out)
        .output()
        .unwrap_or_else(|e| fail(&format!("could not run {}: {e}", ptxas.display()), None));
    if !output.status.success() {
        eprintln!("{}", String::from_utf8_lossy(&output.stderr));
        fail(&format!("{} rejected {} ({})", ptxas.display(), ptx_file.display(), output.status), None);
    }
    let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    write(&report, text);
    fs::read(out).unwrap_or_else(|e| fail(&format!("cannot read {}: {e}", out.display()), None))
}

fn write(path: &Path, bytes: impl AsRef<[u8]>) {
    fs::write(path, bytes).unwrap_or_else(|e| fail(&format!("cannot write {}: {e}", path.display()), None));
}

/// The pinned nightly, `[workspace.metadata.warpmc] ptx-toolchain` in the workspace Cargo.toml.
fn ptx_toolchain(root: &Path) -> String {
    let path = root.join("Cargo.toml");
    let text =
        fs::read_to_string(&path).unwrap_or_else(|e| fail(&format!("cannot read {}: {e}", path.display()), None));
    ptx_pin::parse_ptx_toolchain(&text).unwrap_or_else(|e| fail(&format!("{}: {e}", path.display()), None))
}

/// The toolchain could not be used: say exactly what installs it.
fn fail(msg: &str, toolchain: Option<&str>) -> ! {
    eprintln!("\nerror: {msg}\n");
    if let Some(t) = toolchain {
        eprintln!(
            "The `gpu` feature (on by default) compiles the kernels with the pinned toolchain {t}\n\
             (Cargo.toml, [workspace.metadata.warpmc]; see docs/TOOLCHAIN.md). Either install it with\n\
             its rust-src (`cargo xtask setup` does this):\n\
             \x20   rustup toolchain install {t} --profile minimal --component rust-src\n\
             or build for the CPU only with `--no-default-features`.\n"
        );
    }
    std::process::exit(1);
}

/// The toolchain is there but rustc rejected the kernels: show its errors, advise nothing
/// about installing.
fn fail_compile(toolchain: &str, errors: &[&str]) -> ! {
    eprintln!("\nerror: rustc ({toolchain}) failed to compile gpu-kernels to PTX.");
    eprintln!(
        "The toolchain and its rust-src are installed; this is a compile error in the kernel crate,\n\
         or an incompatibility with the pinned nightly if the pin was moved (docs/TOOLCHAIN.md).\n\
         rustc's errors (in full above):"
    );
    if errors.is_empty() {
        eprintln!("    (no line starting with `error`; see the output above)");
    }
    for e in errors {
        eprintln!("    {e}");
    }
    eprintln!();
    std::process::exit(1);
}

fn check_toolchain(toolchain: &str) {
    let sysroot = Command::new("rustc")
        .env_remove("RUSTC")
        .env_remove("RUSTUP_TOOLCHAIN")
        // A missing toolchain is reported with the command that installs it, not downloaded
        // silently in the middle of a build.
        .env("RUSTUP_AUTO_INSTALL", "0")
        .args([&format!("+{toolchain}"), "--print", "sysroot"])
        .output();
    let sysroot = match sysroot {
        Ok(o) if o.status.success() => PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()),
        Ok(o) => fail(
            &format!(
                "the toolchain {toolchain} is not installed (`rustc +{toolchain}` said: {})",
                String::from_utf8_lossy(&o.stderr).lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim()
            ),
            Some(toolchain),
        ),
        Err(e) => fail(&format!("could not run `rustc +{toolchain}`: {e}"), Some(toolchain)),
    };
    let library = sysroot.join("lib/rustlib/src/rust/library/core");
    if !library.exists() {
        fail(&format!("rust-src is missing for {toolchain} ({} does not exist)", library.display()), Some(toolchain));
    }
}

/// The newest modification time of the kernel crate's sources and manifest.
fn newest_source(kernels: &Path) -> Option<std::time::SystemTime> {
    fn walk(dir: &Path, newest: &mut Option<std::time::SystemTime>) {
        for entry in fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, newest);
            } else if let Ok(t) = entry.metadata().and_then(|m| m.modified()) {
                *newest = (*newest).max(Some(t));
            }
        }
    }
    let mut newest = fs::metadata(kernels.join("Cargo.toml")).and_then(|m| m.modified()).ok();
    walk(&kernels.join("src"), &mut newest);
    newest
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

/// Insert `.maxnreg N` after the parameter list of each entry named by [`MAX_REGISTERS`].
fn cap_registers(ptx: String) -> String {
    let mut out = String::with_capacity(ptx.len() + 1024);
    let mut capped = [0usize; MAX_REGISTERS.len()];
    let mut rest = ptx.as_str();
    while let Some(at) = rest.find(".entry ") {
        let name_start = at + ".entry ".len();
        let name_end = rest[name_start..].find('(').map(|i| name_start + i);
        let body = rest[at..].find(")\n{").map(|i| at + i + 1);
        let (Some(name_end), Some(body)) = (name_end, body) else {
            fail("cannot find an entry's parameter list in the PTX", None)
        };
        let name = &rest[name_start..name_end];
        out.push_str(&rest[..body]);
        for (i, (prefix, suffix, regs)) in MAX_REGISTERS.iter().enumerate() {
            if name.starts_with(prefix) && name.ends_with(suffix) {
                out.push_str(&format!("\n.maxnreg {regs}"));
                capped[i] += 1;
                break;
            }
        }
        rest = &rest[body..];
    }
    out.push_str(rest);
    for (i, (prefix, suffix, _)) in MAX_REGISTERS.iter().enumerate() {
        if capped[i] == 0 {
            fail(&format!("no kernel named {prefix}*{suffix} in the PTX to cap"), None);
        }
    }
    out
}

fn check_ptx(ptx: &str, path: &Path) {
    if !ptx.contains(".entry") {
        fail(&format!("{} holds no kernel entry point", path.display()), None);
    }
    let externs: Vec<&str> = ptx.lines().filter(|l| l.contains(".extern .func")).collect();
    if !externs.is_empty() {
        fail(
            &format!(
                "the PTX calls functions it does not define, so the module would not load:\n{}\n\
             (a function of core or of a dependency was not inlined; see docs/TOOLCHAIN.md)",
                externs.join("\n")
            ),
            None,
        );
    }
    // An undefined global loads without a word from ptxas or the driver, and the kernel then
    // reads unrelated memory in its place: refuse it here.
    let globals: Vec<&str> =
        ptx.lines().filter(|l| l.contains(".extern .global") || l.contains(".extern .const")).collect();
    if !globals.is_empty() {
        fail(
            &format!(
                "the PTX reads globals it does not define (a `static` of a dependency?):\n{}",
                globals.join("\n")
            ),
            None,
        );
    }
}
