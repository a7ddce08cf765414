//! `cargo xtask bench`: run the benchmark, or take a finished report, and record its Markdown
//! in `BENCHMARKS.md` (newest first, after the `<!-- bench-results -->` line).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};

use crate::setup;
use crate::util::{cargo, run};

const BENCHMARKS: &str = "BENCHMARKS.md";
const MARKER: &str = "<!-- bench-results -->";
const HEADER: &str = "\
# Benchmarks

Results of `cargo xtask bench`, newest first. Each section names its device and date. Sections
from `--quick` runs (small sizes) are smoke tests, not figures to quote. On a GPU machine without
Rust, `target/device-bundle/run.sh` writes `bench.json` and `bench.md`; record them here with
`cargo xtask bench --from PATH/bench.json`.
";

pub fn bench(quick: bool, from: Option<&Path>) -> Result<()> {
    let markdown_path = match from {
        Some(json) => existing_report(json)?,
        None => run_bench(quick)?,
    };
    let section =
        fs::read_to_string(&markdown_path).with_context(|| format!("cannot read {}", markdown_path.display()))?;

    let doc = match fs::read_to_string(BENCHMARKS) {
        Ok(doc) => doc,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => format!("{HEADER}\n{MARKER}\n"),
        Err(e) => return Err(e).context(format!("cannot read {BENCHMARKS}")),
    };
    fs::write(BENCHMARKS, insert_section(&doc, &section)).with_context(|| format!("cannot write {BENCHMARKS}"))?;
    println!("xtask bench: added {} to {}", markdown_path.display(), Path::new(BENCHMARKS).canonicalize()?.display());
    Ok(())
}

/// `--from FILE.json`: the report must parse, and its Markdown must lie beside it.
fn existing_report(json: &Path) -> Result<PathBuf> {
    let text = fs::read_to_string(json).with_context(|| format!("cannot read {}", json.display()))?;
    serde_json::from_str::<serde_json::Value>(&text).with_context(|| format!("{} is not JSON", json.display()))?;
    let md = json.with_extension("md");
    if !md.exists() {
        bail!(
            "{} has no Markdown beside it: expected {} (written by `warpmc bench --markdown-out`)",
            json.display(),
            md.display()
        );
    }
    Ok(md)
}

/// Build and run `warpmc bench`, writing `target/bench/bench-<unix-seconds>.{json,md}`.
fn run_bench(quick: bool) -> Result<PathBuf> {
    setup::setup(false)?;
    run(cargo().args(["build", "--release", "-p", "warpmc"]))?;
    fs::create_dir_all("target/bench")?;
    let stamp = SystemTime::now().duration_since(UNIX_EPOCH)?.as_secs();
    let json = PathBuf::from(format!("target/bench/bench-{stamp}.json"));
    let md = json.with_extension("md");
    let mut cmd = Command::new("target/release/warpmc");
    cmd.arg("bench");
    if quick {
        cmd.arg("--quick");
    }
    cmd.arg("--json-out").arg(&json).arg("--markdown-out").arg(&md);
    run(&mut cmd)?;
    println!("xtask bench: wrote {} and {}", json.display(), md.display());
    Ok(md)
}

/// `doc` with `section` right after the marker line (the marker is appended if missing).
fn insert_section(doc: &str, section: &str) -> String {
    let section = format!("\n{}\n", section.trim());
    let mut lines: Vec<&str> = doc.lines().collect();
    let at = match lines.iter().position(|l| l.trim() == MARKER) {
        Some(i) => i + 1,
        None => {
            lines.push("");
            lines.push(MARKER);
            lines.len()
        }
    };
    let before = lines[..at].join("\n");
    let after = lines[at..].join("\n");
    let after = after.trim_start_matches('\n');
    if after.is_empty() { format!("{before}\n{section}") } else { format!("{before}\n{section}\n{after}\n") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newest_section_goes_first() {
        let doc = format!("# B\n\n{MARKER}\n");
        let one = insert_section(&doc, "### one\n\n| a |\n");
        assert_eq!(one, format!("# B\n\n{MARKER}\n\n### one\n\n| a |\n"));
        let two = insert_section(&one, "### two\n");
        assert_eq!(two, format!("# B\n\n{MARKER}\n\n### two\n\n### one\n\n| a |\n"));
    }

    #[test]
    fn missing_marker_is_appended() {
        let out = insert_section("# B\ntext\n", "### one");
        assert_eq!(out, format!("# B\ntext\n\n{MARKER}\n\n### one\n"));
    }
}
