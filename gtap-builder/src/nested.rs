//! The nested device build: `cargo rustc --crate-type cdylib --target nvptx64-nvidia-cuda
//! -Zbuild-std=core` run by the device toolchain in its own target directory, with an
//! environment cleaned of everything the outer cargo set for the host build.

use std::ffi::OsString;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::process::command_line;
use crate::toolchain::DeviceToolchain;
use crate::unrolling::NO_RUNTIME_UNROLL_IN_RUSTC;
use crate::{Arch, Error};

/// The device target triple.
pub const DEVICE_TARGET: &str = "nvptx64-nvidia-cuda";

/// Variables removed from the nested build's environment: the outer cargo's settings for the
/// host build (flags, wrappers such as clippy-driver, the target directory, the toolchain
/// selection, its jobserver) and the variables it sets for the running build script.
pub const SCRUBBED_VARS: &[&str] = &[
    "RUSTFLAGS",
    "RUSTDOCFLAGS",
    "CARGO_ENCODED_RUSTFLAGS",
    "CARGO_ENCODED_RUSTDOCFLAGS",
    "RUSTC",
    "RUSTDOC",
    "RUSTC_WRAPPER",
    "RUSTC_WORKSPACE_WRAPPER",
    "RUSTC_LINKER",
    "RUSTC_BOOTSTRAP",
    "RUSTUP_TOOLCHAIN",
    "CARGO",
    "CARGO_MAKEFLAGS",
    "MAKEFLAGS",
    "MFLAGS",
    "CARGO_PRIMARY_PACKAGE",
    "CARGO_CRATE_NAME",
    "CARGO_BIN_NAME",
    "CARGO_RUSTC_CURRENT_DIR",
    "OUT_DIR",
    "TARGET",
    "HOST",
    "NUM_JOBS",
    "OPT_LEVEL",
    "DEBUG",
    "PROFILE",
    "CARGO_INCREMENTAL",
];

/// Prefixes of variables removed from the nested build's environment (`CARGO_TARGET_DIR` and
/// `CARGO_TARGET_<triple>_*`, `CARGO_BUILD_*`, `CARGO_UNSTABLE_*`, the build script's
/// `CARGO_CFG_*`/`CARGO_FEATURE_*`/`CARGO_PKG_*`/`CARGO_MANIFEST_*`/`DEP_*`, clippy's and
/// cargo's internal ones).
pub const SCRUBBED_PREFIXES: &[&str] = &[
    "CARGO_TARGET_",
    "CARGO_BUILD_",
    "CARGO_HOST_",
    "CARGO_UNSTABLE_",
    "CARGO_CFG_",
    "CARGO_FEATURE_",
    "CARGO_PKG_",
    "CARGO_MANIFEST_",
    "DEP_",
    "CLIPPY_",
    "__CARGO",
];

/// True if the outer variable `name` must not reach the nested build.
pub fn is_scrubbed(name: &str) -> bool {
    SCRUBBED_VARS.contains(&name) || SCRUBBED_PREFIXES.iter().any(|p| name.starts_with(p))
}

/// Everything that defines one nested build.
#[derive(Clone, Debug)]
pub struct NestedBuild {
    /// The device toolchain.
    pub toolchain: DeviceToolchain,
    /// The manifest to build (`Cargo.toml` of the device crate, or of its workspace when
    /// `package` is given).
    pub manifest: PathBuf,
    /// `-p`, when `manifest` is a workspace's.
    pub package: Option<String>,
    /// The architecture.
    pub arch: Arch,
    /// `--release` (else the dev profile).
    pub release: bool,
    /// The nested build's target directory.
    pub target_dir: PathBuf,
    /// The linker: the running executable (it links when rustc calls it).
    pub linker: PathBuf,
    /// `Some(list)`: build with `--no-default-features --features list`.
    pub features: Option<Vec<String>>,
    /// Line tables for the SASS (`GTAP_LINEINFO`, see `crate::lineinfo`).
    pub line_info: bool,
}

impl NestedBuild {
    /// The arguments after the cargo program.
    pub fn args(&self) -> Vec<OsString> {
        let mut a: Vec<OsString> = vec!["rustc".into()];
        if self.release {
            a.push("--release".into());
        }
        a.extend(
            ["--lib", "--crate-type", "cdylib", "--target", DEVICE_TARGET].map(OsString::from),
        );
        a.push("-Zbuild-std=core".into());
        a.push("--manifest-path".into());
        a.push(self.manifest.clone().into());
        if let Some(p) = &self.package {
            a.push("-p".into());
            a.push(p.into());
        }
        a.push("--target-dir".into());
        a.push(self.target_dir.clone().into());
        a.push("--message-format=json-render-diagnostics".into());
        if let Some(f) = &self.features {
            a.push("--no-default-features".into());
            if !f.is_empty() {
                a.push("--features".into());
                a.push(f.join(",").into());
            }
        }
        // Only the final crate links, so the linker goes to it alone (changing it relinks,
        // but rebuilds nothing else).
        a.push("--".into());
        let mut linker = OsString::from("-Clinker=");
        linker.push(&self.linker);
        a.push(linker);
        a
    }

    /// The variables set for the nested build. `-Ctarget-cpu` goes to every crate (core
    /// included) through `CARGO_ENCODED_RUSTFLAGS`: the bitcode of each function carries its
    /// target CPU, and code built for the default (`sm_30`) would be lowered without the
    /// `sm_70` memory model. So does [`NO_RUNTIME_UNROLL_IN_RUSTC`]: the link unrolls instead.
    pub fn env_set(&self) -> Vec<(&'static str, OsString)> {
        vec![
            ("RUSTC", self.toolchain.rustc.clone().into()),
            ("RUSTC_BOOTSTRAP", "1".into()),
            ("RUSTC_WRAPPER", "".into()),
            ("RUSTC_WORKSPACE_WRAPPER", "".into()),
            ("CARGO_ENCODED_RUSTFLAGS", self.rustflags().into()),
            ("GTAP_DEVICE_BUILD", "1".into()),
            ("GTAP_LINK_RUSTC", self.toolchain.rustc.clone().into()),
        ]
    }

    /// Every crate's `rustc` flags, `\x1f`-separated (`CARGO_ENCODED_RUSTFLAGS`).
    fn rustflags(&self) -> String {
        let mut flags = format!("-Ctarget-cpu={}\x1f{NO_RUNTIME_UNROLL_IN_RUSTC}", self.arch);
        if self.line_info {
            flags.push('\x1f');
            flags.push_str(crate::lineinfo::RUSTC_FLAG);
        }
        flags
    }

    /// The command, with `outer` (the current environment) scrubbed.
    pub fn command(&self, outer: impl IntoIterator<Item = (OsString, OsString)>) -> Command {
        let mut cmd = Command::new(&self.toolchain.cargo);
        cmd.args(self.args());
        cmd.env_clear();
        for (k, v) in outer {
            if !is_scrubbed(&k.to_string_lossy()) {
                cmd.env(k, v);
            }
        }
        for (k, v) in self.env_set() {
            cmd.env(k, v);
        }
        cmd
    }

    /// The command line, for messages.
    pub fn command_line(&self) -> String {
        let args = self.args();
        let mut s = String::new();
        for (k, v) in self.env_set() {
            if k.starts_with("RUSTC_") && v.is_empty() || k == "GTAP_LINK_RUSTC" {
                continue;
            }
            s.push_str(&format!("{k}={} ", v.to_string_lossy()));
        }
        s + &command_line(&self.toolchain.cargo, args.iter().map(OsString::as_os_str))
    }

    /// Runs the build; the compiler's messages go to this process's stderr. Returns the PTX
    /// file cargo reports for the crate.
    pub fn run(&self, what: &str) -> Result<PathBuf, Error> {
        let mut cmd = self.command(std::env::vars_os());
        cmd.stdout(Stdio::piped()).stderr(Stdio::inherit());
        let mut child = cmd.spawn().map_err(|source| Error::Spawn {
            program: self.toolchain.cargo.clone(),
            source,
        })?;
        let mut ptx = Vec::new();
        let mut artifacts = Vec::new();
        if let Some(out) = child.stdout.take() {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                let (p, a) = artifact_ptx(&line);
                ptx.extend(p);
                artifacts.extend(a);
            }
        }
        let status = child.wait().map_err(|source| Error::Spawn {
            program: self.toolchain.cargo.clone(),
            source,
        })?;
        if !status.success() {
            return Err(Error::DeviceCompileFailed {
                package: what.to_owned(),
                arch: self.arch.to_string(),
                status: status.to_string(),
                command: self.command_line(),
            });
        }
        match ptx.pop() {
            Some(p) if p.is_file() => Ok(p),
            Some(p) => Err(Error::NoPtxProduced {
                package: what.to_owned(),
                detail: format!("cargo reported `{}`, which does not exist", p.display()),
            }),
            None => Err(Error::NoPtxProduced {
                package: what.to_owned(),
                detail: if artifacts.is_empty() {
                    "cargo reported no artifacts".into()
                } else {
                    format!("cargo reported only {}", artifacts.join(", "))
                },
            }),
        }
    }
}

/// From one line of cargo's JSON messages: the `.ptx` files of a `compiler-artifact`, and all
/// its file names.
pub fn artifact_ptx(line: &str) -> (Vec<PathBuf>, Vec<String>) {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
        return (Vec::new(), Vec::new());
    };
    if v["reason"] != "compiler-artifact" {
        return (Vec::new(), Vec::new());
    }
    let names: Vec<String> = v["filenames"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f.as_str().map(str::to_owned))
        .collect();
    let ptx = names
        .iter()
        .filter(|n| n.ends_with(".ptx"))
        .map(PathBuf::from)
        .collect();
    (ptx, names)
}

/// The files listed in a Makefile-style dep-info file (`out: dep dep ...`), with `\ ` and `\\`
/// unescaped.
pub fn parse_dep_info(text: &str) -> Vec<PathBuf> {
    let mut deps = Vec::new();
    for line in text.lines() {
        // Only the first rule (the artifact's) lists dependencies; cargo's have one rule.
        let Some(colon) = find_rule_colon(line) else {
            continue;
        };
        let mut cur = String::new();
        let mut chars = line[colon + 1..].chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' => {
                    if let Some(n) = chars.next() {
                        cur.push(n);
                    }
                }
                ' ' | '\t' => {
                    if !cur.is_empty() {
                        deps.push(PathBuf::from(std::mem::take(&mut cur)));
                    }
                }
                c => cur.push(c),
            }
        }
        if !cur.is_empty() {
            deps.push(PathBuf::from(cur));
        }
    }
    deps
}

/// The `:` ending the target of a rule (not an escaped one, nor a Windows drive's).
fn find_rule_colon(line: &str) -> Option<usize> {
    let b = line.as_bytes();
    (0..b.len()).find(|&i| {
        b[i] == b':'
            && (i == 0 || b[i - 1] != b'\\')
            && b.get(i + 1).is_none_or(|&n| n == b' ' || n == b'\t')
    })
}

/// The `Cargo.toml` of the package each file belongs to (nearest ancestor with one).
pub fn manifests_of(files: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for f in files {
        let mut dir = f.parent();
        while let Some(d) = dir {
            let m = d.join("Cargo.toml");
            if m.is_file() {
                if !out.contains(&m) {
                    out.push(m);
                }
                break;
            }
            dir = d.parent();
        }
    }
    out
}

/// The dep-info file cargo writes next to an uplifted artifact.
pub fn dep_info_of(ptx: &Path) -> PathBuf {
    ptx.with_extension("d")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrubs_outer_build_settings() {
        for v in [
            "RUSTFLAGS",
            "CARGO_ENCODED_RUSTFLAGS",
            "RUSTC_WRAPPER",
            "RUSTC_WORKSPACE_WRAPPER",
            "CARGO_TARGET_DIR",
            "CARGO_TARGET_NVPTX64_NVIDIA_CUDA_LINKER",
            "CARGO_BUILD_TARGET",
            "CARGO_BUILD_RUSTFLAGS",
            "RUSTUP_TOOLCHAIN",
            "CARGO_MAKEFLAGS",
            "OUT_DIR",
            "TARGET",
            "CARGO_CFG_TARGET_ARCH",
            "CARGO_FEATURE_STD",
            "CARGO_PKG_NAME",
            "CARGO_MANIFEST_DIR",
            "DEP_Z_INCLUDE",
            "CLIPPY_ARGS",
            "__CARGO_FIX_PLZ",
        ] {
            assert!(is_scrubbed(v), "{v}");
        }
        for v in [
            "PATH",
            "HOME",
            "CARGO_HOME",
            "RUSTUP_HOME",
            "CARGO_NET_OFFLINE",
            "CARGO_TERM_COLOR",
            "GTAP_LLVM_BIN",
        ] {
            assert!(!is_scrubbed(v), "{v}");
        }
    }

    #[test]
    fn dep_info() {
        let text = "/t/x.ptx: /w/ex/src/lib.rs /w/with\\ space/a.rs /w/dev/src/arch/mod.rs\n\n\
                    /w/ex/src/lib.rs:\n";
        let deps = parse_dep_info(text);
        assert_eq!(
            deps,
            [
                PathBuf::from("/w/ex/src/lib.rs"),
                PathBuf::from("/w/with space/a.rs"),
                PathBuf::from("/w/dev/src/arch/mod.rs"),
            ]
        );
    }

    #[test]
    fn artifacts() {
        let line = r#"{"reason":"compiler-artifact","package_id":"x","filenames":["/t/nvptx64-nvidia-cuda/release/gtap_examples.ptx"]}"#;
        let (ptx, all) = artifact_ptx(line);
        assert_eq!(
            ptx,
            [PathBuf::from(
                "/t/nvptx64-nvidia-cuda/release/gtap_examples.ptx"
            )]
        );
        assert_eq!(all.len(), 1);
        assert!(
            artifact_ptx(r#"{"reason":"build-finished","success":true}"#)
                .0
                .is_empty()
        );
        assert!(artifact_ptx("not json").0.is_empty());
    }
}
