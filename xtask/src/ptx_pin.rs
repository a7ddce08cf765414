//! The pinned PTX toolchain: `[workspace.metadata.warpmc] ptx-toolchain` in the workspace
//! Cargo.toml. One parser for its two readers: `cargo xtask setup` (which installs it) and
//! host/build.rs (which compiles the kernels with it, and includes this file by path).

/// The dated nightly named in `cargo_toml` (the workspace manifest's text), or why not.
pub fn parse_ptx_toolchain(cargo_toml: &str) -> Result<String, String> {
    let doc: toml::Table = cargo_toml.parse().map_err(|e| format!("not valid TOML: {e}"))?;
    let pin = doc
        .get("workspace")
        .and_then(|w| w.get("metadata"))
        .and_then(|m| m.get("warpmc"))
        .and_then(|m| m.get("ptx-toolchain"))
        .and_then(|v| v.as_str());
    match pin {
        Some(p) if is_dated_nightly(p) => Ok(p.to_string()),
        Some(p) => Err(format!("ptx-toolchain = {p:?} is not a dated nightly (nightly-YYYY-MM-DD)")),
        None => Err("no `ptx-toolchain = \"nightly-YYYY-MM-DD\"` under [workspace.metadata.warpmc]".to_string()),
    }
}

/// `nightly-YYYY-MM-DD`: a toolchain that does not move.
pub fn is_dated_nightly(name: &str) -> bool {
    name.strip_prefix("nightly-").is_some_and(|d| {
        d.len() == 10 && d.char_indices().all(|(i, c)| if i == 4 || i == 7 { c == '-' } else { c.is_ascii_digit() })
    })
}
