//! The PTX check: `ptxas -arch=sm_90 -v` on the kernels the build compiled, and a table of
//! registers, stack and spills per kernel. A ptxas error fails; spills only warn.

use std::fs;
use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::setup::PTXAS;
use crate::util::{capture, describe};

/// The architecture of the test GPUs (H100, H200).
const ARCH: &str = "sm_90";
/// Where host/build.rs leaves a copy of the PTX.
const PTX: &str = "target/ptx/warpmc_kernels.ptx";

/// What ptxas reports for one function.
#[derive(Debug, Default, PartialEq)]
pub struct FunctionStats {
    pub name: String,
    /// A kernel (`.entry`), as opposed to a device function (`.func`).
    pub entry: bool,
    pub registers: Option<u32>,
    pub stack_bytes: u64,
    pub spill_store_bytes: u64,
    pub spill_load_bytes: u64,
}

/// Assemble the PTX, print the table and warnings, and return the kernels' figures.
pub fn report() -> Result<Vec<FunctionStats>> {
    let ptx = ptx_path()?;
    // host/build.rs assembles the module with `ptxas -v` and keeps the report beside the PTX
    // (`<ptx>.ptxas-v.txt`, written after it, so newer): read it rather than assemble the module a
    // second time (about ten minutes on a 2-core machine).
    let saved = ptx.with_extension("ptxas-v.txt");
    let fresh = |p: &PathBuf| fs::metadata(p).and_then(|m| m.modified()).ok();
    let (text, ok) = match (fresh(&saved), fresh(&ptx)) {
        (Some(s), Some(p)) if s >= p => {
            eprintln!("ptxas -v report of the build: {}", saved.display());
            (fs::read_to_string(&saved)?, true)
        }
        _ => {
            let mut cmd = Command::new(PTXAS);
            cmd.arg(format!("-arch={ARCH}")).arg("-v").args(["--split-compile", "0"]).arg(&ptx).args(["-o", "/dev/null"]);
            eprintln!("$ {}", describe(&cmd));
            let out = capture(&mut cmd).context("ptxas is missing: run `cargo xtask setup`")?;
            let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
            (text, out.status.success())
        }
    };
    let problems: Vec<&str> = text.lines().filter(|l| is_error(l)).collect();
    if !ok || !problems.is_empty() {
        eprintln!("{text}");
        bail!("ptxas rejected {}: the module would not load on the GPU", ptx.display());
    }

    let functions = parse(&text);
    let kernels: Vec<&FunctionStats> = functions.iter().filter(|f| f.entry).collect();
    if kernels.is_empty() {
        eprintln!("{text}");
        bail!("ptxas reported no kernel in {}", ptx.display());
    }
    print_table(&kernels);
    for f in functions.iter().filter(|f| f.spill_store_bytes > 0 || f.spill_load_bytes > 0) {
        println!(
            "WARNING: {} spills registers ({} bytes stored, {} bytes loaded). Expected only for kernels that \
             host/build.rs caps with .maxnreg; check in the SASS that no spill is inside the step loop",
            f.name, f.spill_store_bytes, f.spill_load_bytes
        );
    }
    Ok(functions.into_iter().filter(|f| f.entry).collect())
}

/// The PTX the last GPU build wrote: the stable copy, else the newest one in a build script's
/// `OUT_DIR` (should the copy have been deleted while the build stayed fresh).
fn ptx_path() -> Result<PathBuf> {
    let stable = PathBuf::from(PTX);
    if stable.exists() {
        return Ok(stable);
    }
    let newest = fs::read_dir("target/release/build")
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with("warpmc-"))
        .map(|e| e.path().join("out/warpmc_kernels.ptx"))
        .filter(|p| p.exists())
        .max_by_key(|p| fs::metadata(p).and_then(|m| m.modified()).ok());
    newest.with_context(|| format!("no PTX at {PTX}: build with `cargo build --release -p warpmc` (default features)"))
}

fn is_error(line: &str) -> bool {
    let l = line.trim_start();
    // `ptxas fatal : ...`, `ptxas error : ...`, or `ptxas FILE, line N; error (or fatal) : ...`.
    l.starts_with("ptxas error") || l.starts_with("ptxas fatal") || l.contains("; error") || l.contains("; fatal")
}

/// Read ptxas's `-v` output. For each function it prints (order matters):
/// ```text
/// ptxas info    : Compiling entry function 'fill_u32' for 'sm_90'   (kernels only)
/// ptxas info    : Function properties for fill_u32
///     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
/// ptxas info    : Used 31 registers, used 0 barriers                 (kernels only)
/// ```
pub fn parse(text: &str) -> Vec<FunctionStats> {
    let mut functions: Vec<FunctionStats> = Vec::new();
    let mut current: Option<usize> = None;
    for line in text.lines() {
        if let Some(rest) = line.split("Compiling entry function '").nth(1) {
            let name = rest.split('\'').next().unwrap_or_default();
            let i = find_or_add(&mut functions, name);
            functions[i].entry = true;
            current = Some(i);
        } else if let Some(rest) = line.split("Function properties for ").nth(1) {
            current = Some(find_or_add(&mut functions, rest.trim()));
        } else if line.contains("bytes stack frame") {
            if let Some(i) = current {
                read_frame(line, &mut functions[i]);
            }
        } else if let Some(n) = registers_used(line)
            && let Some(i) = current
        {
            functions[i].registers = Some(n);
        }
    }
    functions
}

/// `0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads`
fn read_frame(line: &str, f: &mut FunctionStats) {
    for part in line.split(',') {
        let n = part.split_whitespace().next().and_then(|n| n.parse().ok()).unwrap_or(0);
        if part.contains("stack frame") {
            f.stack_bytes = n;
        } else if part.contains("spill stores") {
            f.spill_store_bytes = n;
        } else if part.contains("spill loads") {
            f.spill_load_bytes = n;
        }
    }
}

/// `ptxas info    : Used 31 registers, used 0 barriers` -> 31
fn registers_used(line: &str) -> Option<u32> {
    let mut words = line.split("Used ").nth(1)?.split_whitespace();
    let n = words.next()?.parse().ok()?;
    words.next()?.starts_with("register").then_some(n)
}

fn find_or_add(functions: &mut Vec<FunctionStats>, name: &str) -> usize {
    match functions.iter().position(|f| f.name == name) {
        Some(i) => i,
        None => {
            functions.push(FunctionStats { name: name.to_string(), ..Default::default() });
            functions.len() - 1
        }
    }
}

fn print_table(kernels: &[&FunctionStats]) {
    let width = kernels.iter().map(|k| k.name.len()).max().unwrap_or(0).max("kernel".len());
    println!("\nptxas -arch={ARCH}: {} kernels", kernels.len());
    println!(
        "{:<width$}  {:>9}  {:>11}  {:>17}  {:>16}",
        "kernel", "registers", "stack bytes", "spill store bytes", "spill load bytes"
    );
    for k in kernels {
        let regs = k.registers.map_or("?".to_string(), |r| r.to_string());
        println!(
            "{:<width$}  {:>9}  {:>11}  {:>17}  {:>16}",
            k.name, regs, k.stack_bytes, k.spill_store_bytes, k.spill_load_bytes
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
ptxas info    : 0 bytes gmem
ptxas info    : Function properties for helper
    16 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads
ptxas info    : Compiling entry function 'fill_u32' for 'sm_90'
ptxas info    : Function properties for fill_u32
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 31 registers, used 0 barriers
ptxas info    : Compile time = 12.439 ms
ptxas info    : Compiling entry function 'asian_basket_exact' for 'sm_90'
ptxas info    : Function properties for asian_basket_exact
    560 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 100 registers, used 1 barriers, 380 bytes cmem[0]
";

    #[test]
    fn parses_kernels_and_device_functions() {
        let f = parse(SAMPLE);
        assert_eq!(f.len(), 3);
        assert_eq!(
            f[0],
            FunctionStats {
                name: "helper".into(),
                entry: false,
                registers: None,
                stack_bytes: 16,
                spill_store_bytes: 8,
                spill_load_bytes: 4
            }
        );
        assert_eq!(f[1].name, "fill_u32");
        assert!(f[1].entry);
        assert_eq!(f[1].registers, Some(31));
        assert_eq!(f[2].name, "asian_basket_exact");
        assert_eq!((f[2].registers, f[2].stack_bytes), (Some(100), 560));
    }

    #[test]
    fn recognises_errors() {
        assert!(is_error("ptxas fatal   : Unresolved extern function 'foo'"));
        assert!(is_error("ptxas error   : Entry function 'k' uses too much shared data"));
        assert!(is_error("ptxas k.ptx, line 12; error   : Unknown symbol 'x'"));
        assert!(!is_error("ptxas info    : Used 31 registers, used 0 barriers"));
    }
}
