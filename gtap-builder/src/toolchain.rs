//! Finding the device toolchain: a rustc whose library source is installed (for
//! `-Zbuild-std=core`), the cargo next to it, and the LLVM tools of the same LLVM major version
//! (for the final link).
//!
//! Order of the search for rustc:
//! 1. `GTAP_DEVICE_RUSTC` (and `GTAP_DEVICE_CARGO`): used as given, an error if unusable;
//! 2. the system rustc, `/usr/bin/rustc` (Debian's `rustc-web` with `rust-web-src`);
//! 3. `rustc` on `PATH` (for a rustup proxy: the toolchain it resolves to);
//! 4. every rustup toolchain under `$RUSTUP_HOME/toolchains` (nightlies first).
//!
//! The first with `<sysroot>/lib/rustlib/src/rust/library/core` wins. Its cargo is
//! `GTAP_DEVICE_CARGO` or the `cargo` in the same directory.
//!
//! The LLVM tools (`llvm-link`, `opt`, `llc`, `llvm-ar`, `llvm-dis`, `llvm-nm`): `GTAP_LLVM_BIN`,
//! else `/usr/lib/llvm-<major>/bin`, else rustup's `llvm-tools` in the toolchain's sysroot, else
//! `llvm-link-<major>` etc. on `PATH`, else the unsuffixed names on `PATH` if their version
//! matches. `<major>` is the LLVM major of the device rustc (`rustc -vV`).

use std::path::{Path, PathBuf};

use crate::Error;
use crate::env::{Env, is_executable, lossy, which};
use crate::process::run;

/// An LLVM version, e.g. `22.1.8`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LlvmVersion {
    /// The version as printed.
    pub full: String,
    /// Its major number.
    pub major: u32,
}

impl LlvmVersion {
    /// Parses `22.1.8` (anything after the major number is kept but not interpreted).
    pub fn parse(s: &str) -> Option<Self> {
        let s = s.trim();
        let major = s.split(['.', '-', ' ']).next()?.parse().ok()?;
        Some(LlvmVersion {
            full: s.to_owned(),
            major,
        })
    }

    /// Finds `LLVM version X.Y.Z` in the output of an LLVM tool's `--version`.
    pub fn from_tool_version_output(text: &str) -> Option<Self> {
        let at = text.find("LLVM version ")?;
        let rest = &text[at + "LLVM version ".len()..];
        let token = rest.split_whitespace().next()?;
        Self::parse(token)
    }
}

/// What `rustc -vV` says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RustcInfo {
    /// `release:`, e.g. `1.96.0`.
    pub release: String,
    /// `host:`, e.g. `x86_64-unknown-linux-gnu`.
    pub host: String,
    /// `LLVM version:`.
    pub llvm: LlvmVersion,
}

impl RustcInfo {
    /// Parses the output of `rustc -vV`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let field = |name: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(name))
                .map(|v| v.trim().to_owned())
        };
        let release = field("release:").ok_or("no `release:` line")?;
        let host = field("host:").ok_or("no `host:` line")?;
        let llvm = field("LLVM version:").ok_or(
            "no `LLVM version:` line (is this rustc built with an external, non-LLVM backend?)",
        )?;
        let llvm = LlvmVersion::parse(&llvm).ok_or(format!("cannot read LLVM version `{llvm}`"))?;
        Ok(RustcInfo {
            release,
            host,
            llvm,
        })
    }
}

/// A rustc (with the library source) and cargo that build the device code.
#[derive(Clone, Debug)]
pub struct DeviceToolchain {
    /// The rustc.
    pub rustc: PathBuf,
    /// The cargo that drives it.
    pub cargo: PathBuf,
    /// `rustc --print sysroot`.
    pub sysroot: PathBuf,
    /// `rustc -vV`.
    pub info: RustcInfo,
}

/// The LLVM tools used for the final link.
#[derive(Clone, Debug)]
pub struct LlvmTools {
    /// `llvm-link`.
    pub llvm_link: PathBuf,
    /// `opt`.
    pub opt: PathBuf,
    /// `llc`.
    pub llc: PathBuf,
    /// `llvm-ar`.
    pub llvm_ar: PathBuf,
    /// `llvm-dis`.
    pub llvm_dis: PathBuf,
    /// `llvm-nm`.
    pub llvm_nm: PathBuf,
    /// Their LLVM version (from `llc --version`).
    pub version: LlvmVersion,
}

/// The tool names, in the order of the [`LlvmTools`] fields.
pub const LLVM_TOOL_NAMES: [&str; 6] =
    ["llvm-link", "opt", "llc", "llvm-ar", "llvm-dis", "llvm-nm"];

impl LlvmTools {
    fn from_paths(p: [PathBuf; 6], version: LlvmVersion) -> Self {
        let [llvm_link, opt, llc, llvm_ar, llvm_dis, llvm_nm] = p;
        LlvmTools {
            llvm_link,
            opt,
            llc,
            llvm_ar,
            llvm_dis,
            llvm_nm,
            version,
        }
    }
}

/// Asks `rustc` for its version info and sysroot.
pub fn probe_rustc(rustc: &Path) -> Result<(RustcInfo, PathBuf), Error> {
    let vv = run(rustc, &["-vV"], None)?;
    let info = RustcInfo::parse(&vv).map_err(|problem| Error::BadToolOutput {
        command: format!("{} -vV", rustc.display()),
        problem,
    })?;
    let sysroot = run(rustc, &["--print", "sysroot"], None)?;
    Ok((info, PathBuf::from(sysroot.trim())))
}

/// Where the library source of a sysroot lives (what `-Zbuild-std` compiles).
pub fn library_source(sysroot: &Path) -> PathBuf {
    sysroot.join("lib/rustlib/src/rust/library")
}

/// Asks an LLVM tool for its version.
pub fn probe_llvm_tool(tool: &Path) -> Result<LlvmVersion, Error> {
    let text = run(tool, &["--version"], None)?;
    LlvmVersion::from_tool_version_output(&text).ok_or_else(|| Error::BadToolOutput {
        command: format!("{} --version", tool.display()),
        problem: "no `LLVM version X.Y.Z` in its output".into(),
    })
}

/// The toolchain search: the environment to read and where to look.
pub struct Search<'a> {
    /// The environment (overrides, `PATH`, `RUSTUP_HOME`, `HOME`).
    pub env: &'a dyn Env,
    /// System rustc locations, tried after `GTAP_DEVICE_RUSTC`.
    pub system_rustc: Vec<PathBuf>,
    /// Directories holding `llvm-<major>/bin`.
    pub llvm_roots: Vec<PathBuf>,
    /// Whether to look on `PATH`.
    pub use_path: bool,
    /// Whether to look at rustup toolchains.
    pub use_rustup: bool,
}

impl<'a> Search<'a> {
    /// The standard search.
    pub fn new(env: &'a dyn Env) -> Self {
        Search {
            env,
            system_rustc: vec![PathBuf::from("/usr/bin/rustc")],
            llvm_roots: vec![PathBuf::from("/usr/lib")],
            use_path: true,
            use_rustup: true,
        }
    }

    /// A search that looks only at the environment variables of `env` (including its `PATH`),
    /// not at fixed system locations or rustup: for tests.
    pub fn env_only(env: &'a dyn Env) -> Self {
        Search {
            env,
            system_rustc: Vec::new(),
            llvm_roots: Vec::new(),
            use_path: true,
            use_rustup: false,
        }
    }

    /// Finds the device rustc and cargo.
    pub fn device_toolchain(&self) -> Result<DeviceToolchain, Error> {
        if let Some(value) = self.env.non_empty("GTAP_DEVICE_RUSTC") {
            let bad = |problem: String| Error::BadOverride {
                var: "GTAP_DEVICE_RUSTC",
                value: lossy(&value),
                problem,
            };
            let rustc = resolve_program(self.env, Path::new(&value))
                .ok_or_else(|| bad("no such executable".into()))?;
            return match self.accept(&rustc, false) {
                Ok(tc) => Ok(tc),
                Err(Rejected::Unusable(why)) => Err(bad(why)),
                Err(Rejected::Fatal(e)) => Err(e),
            };
        }

        let mut tried = vec!["GTAP_DEVICE_RUSTC: not set".to_owned()];
        let mut candidates: Vec<(PathBuf, String)> = Vec::new();
        for p in &self.system_rustc {
            candidates.push((p.clone(), "system rustc".into()));
        }
        if self.use_path {
            match which(self.env, "rustc") {
                Some(p) => candidates.push((p, "rustc on PATH".into())),
                None => tried.push("rustc on PATH: none".into()),
            }
        }
        if self.use_rustup {
            match self.rustup_toolchains() {
                Ok(list) if list.is_empty() => tried.push("rustup toolchains: none".into()),
                Ok(list) => candidates.extend(list),
                Err(t) => tried.push(t),
            }
        }

        let mut seen = Vec::new();
        for (rustc, origin) in candidates {
            if !is_executable(&rustc) {
                tried.push(format!("{} ({origin}): not installed", rustc.display()));
                continue;
            }
            // The same installation reached twice (e.g. `/usr/bin/rustc` is also on PATH).
            let key = std::fs::canonicalize(&rustc).unwrap_or_else(|_| rustc.clone());
            if seen.contains(&key) {
                continue;
            }
            seen.push(key);
            match self.accept(&rustc, true) {
                Ok(tc) => return Ok(tc),
                Err(Rejected::Unusable(why)) => {
                    tried.push(format!("{} ({origin}): {why}", rustc.display()))
                }
                Err(Rejected::Fatal(e)) => return Err(e),
            }
        }
        Err(Error::NoDeviceToolchain { tried })
    }

    /// The toolchain of `rustc` if its library source is installed. With `direct`, a rustup
    /// proxy is replaced by the rustc of the toolchain it resolves to, so nothing
    /// (`RUSTUP_TOOLCHAIN`, overrides) can redirect the nested build.
    fn accept(&self, rustc: &Path, direct: bool) -> Result<DeviceToolchain, Rejected> {
        let (info, sysroot) = probe_rustc(rustc).map_err(|e| Rejected::Unusable(e.to_string()))?;
        let lib = library_source(&sysroot);
        if !lib.join("core").is_dir() {
            return Err(Rejected::Unusable(format!(
                "rustc {}: no library source at `{}` (install rust-src for it)",
                info.release,
                lib.display()
            )));
        }
        let in_sysroot = sysroot.join("bin").join(exe("rustc"));
        let rustc = if direct && is_executable(&in_sysroot) {
            in_sysroot
        } else {
            rustc.to_owned()
        };
        let cargo = self.cargo_for(&rustc, &sysroot).map_err(Rejected::Fatal)?;
        Ok(DeviceToolchain {
            rustc,
            cargo,
            sysroot,
            info,
        })
    }

    fn cargo_for(&self, rustc: &Path, sysroot: &Path) -> Result<PathBuf, Error> {
        if let Some(value) = self.env.non_empty("GTAP_DEVICE_CARGO") {
            return resolve_program(self.env, Path::new(&value)).ok_or_else(|| {
                Error::BadOverride {
                    var: "GTAP_DEVICE_CARGO",
                    value: lossy(&value),
                    problem: "no such executable".into(),
                }
            });
        }
        let beside = rustc.with_file_name(exe("cargo"));
        if is_executable(&beside) {
            return Ok(beside);
        }
        let in_sysroot = sysroot.join("bin").join(exe("cargo"));
        if is_executable(&in_sysroot) {
            return Ok(in_sysroot);
        }
        Err(Error::NoDeviceCargo {
            rustc: rustc.to_owned(),
            tried: beside,
        })
    }

    fn rustup_toolchains(&self) -> Result<Vec<(PathBuf, String)>, String> {
        let home = self
            .env
            .non_empty("RUSTUP_HOME")
            .map(PathBuf::from)
            .or_else(|| {
                self.env
                    .non_empty("HOME")
                    .map(|h| PathBuf::from(h).join(".rustup"))
            })
            .ok_or("rustup toolchains: neither RUSTUP_HOME nor HOME is set")?;
        let dir = home.join("toolchains");
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return Ok(Vec::new());
        };
        let mut list: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        // Nightlies first (build-std is at home there), then by name.
        list.sort_by_key(|p| {
            let name = p.file_name().map(lossy).unwrap_or_default();
            (!name.starts_with("nightly"), name)
        });
        Ok(list
            .into_iter()
            .map(|tc| {
                let name = tc.file_name().map(lossy).unwrap_or_default();
                (
                    tc.join("bin").join(exe("rustc")),
                    format!("rustup toolchain {name}"),
                )
            })
            .collect())
    }

    /// Finds LLVM tools whose major version is the device rustc's.
    pub fn llvm_tools(&self, toolchain: &DeviceToolchain) -> Result<LlvmTools, Error> {
        self.llvm_tools_for(
            &toolchain.rustc,
            &toolchain.info.llvm,
            Some((&toolchain.sysroot, &toolchain.info.host)),
        )
    }

    /// Finds LLVM tools of LLVM `want.major`. `rustc` only appears in messages; `sysroot_host`
    /// lets rustup's `llvm-tools` component be found.
    pub fn llvm_tools_for(
        &self,
        rustc: &Path,
        want: &LlvmVersion,
        sysroot_host: Option<(&Path, &str)>,
    ) -> Result<LlvmTools, Error> {
        let major = want.major;
        let mismatch = |tool: &Path, got: &LlvmVersion| Error::LlvmVersionMismatch {
            rustc: rustc.to_owned(),
            rustc_llvm: want.full.clone(),
            tool: tool.to_owned(),
            tool_llvm: got.full.clone(),
        };

        if let Some(value) = self.env.non_empty("GTAP_LLVM_BIN") {
            let dir = PathBuf::from(&value);
            let paths = tools_in_dir(&dir, "").map_err(|missing| Error::BadOverride {
                var: "GTAP_LLVM_BIN",
                value: lossy(&value),
                problem: format!("missing {}", missing.join(", ")),
            })?;
            let version = check_versions(&paths, major).map_err(|e| match e {
                Checked::Mismatch(tool, got) => mismatch(&tool, &got),
                Checked::Failed(e) => Error::BadOverride {
                    var: "GTAP_LLVM_BIN",
                    value: lossy(&value),
                    problem: e.to_string(),
                },
            })?;
            return Ok(LlvmTools::from_paths(paths, version));
        }

        let mut tried = vec!["GTAP_LLVM_BIN: not set".to_owned()];
        let mut first_mismatch = None;
        let mut consider = |paths: Result<[PathBuf; 6], Vec<String>>, origin: String| match paths {
            Err(missing) => {
                tried.push(format!("{origin}: missing {}", missing.join(", ")));
                None
            }
            Ok(paths) => match check_versions(&paths, major) {
                Ok(version) => Some(LlvmTools::from_paths(paths, version)),
                Err(Checked::Mismatch(tool, got)) => {
                    tried.push(format!("{origin}: LLVM {} (need {major})", got.full));
                    first_mismatch.get_or_insert_with(|| mismatch(&tool, &got));
                    None
                }
                Err(Checked::Failed(e)) => {
                    tried.push(format!("{origin}: {e}"));
                    None
                }
            },
        };

        for root in &self.llvm_roots {
            let dir = root.join(format!("llvm-{major}")).join("bin");
            if let Some(t) = consider(tools_in_dir(&dir, ""), dir.display().to_string()) {
                return Ok(t);
            }
        }
        if let Some((sysroot, host)) = sysroot_host {
            let dir = sysroot.join("lib/rustlib").join(host).join("bin");
            if let Some(t) = consider(
                tools_in_dir(&dir, ""),
                format!("{} (rustup llvm-tools)", dir.display()),
            ) {
                return Ok(t);
            }
        }
        if self.use_path {
            let suffix = format!("-{major}");
            if let Some(t) = consider(
                tools_on_path(self.env, &suffix),
                format!("llvm-link{suffix}, opt{suffix}, ... on PATH"),
            ) {
                return Ok(t);
            }
            if let Some(t) = consider(
                tools_on_path(self.env, ""),
                "llvm-link, opt, ... on PATH".into(),
            ) {
                return Ok(t);
            }
        }
        Err(first_mismatch.unwrap_or(Error::NoLlvmTools { major, tried }))
    }
}

/// Why a rustc was not taken as the device rustc.
enum Rejected {
    /// Try the next candidate (the reason goes into the error's list).
    Unusable(String),
    /// Stop the search.
    Fatal(Error),
}

enum Checked {
    Mismatch(PathBuf, LlvmVersion),
    Failed(Error),
}

/// Checks that the tools that read bitcode (`llvm-link`, `opt`, `llc`) are LLVM `major`.
fn check_versions(paths: &[PathBuf; 6], major: u32) -> Result<LlvmVersion, Checked> {
    let mut found = None;
    for tool in [&paths[2], &paths[0], &paths[1]] {
        let v = probe_llvm_tool(tool).map_err(Checked::Failed)?;
        if v.major != major {
            return Err(Checked::Mismatch(tool.clone(), v));
        }
        found.get_or_insert(v);
    }
    Ok(found.expect("three tools were checked"))
}

fn tools_in_dir(dir: &Path, suffix: &str) -> Result<[PathBuf; 6], Vec<String>> {
    let mut missing = Vec::new();
    let paths = LLVM_TOOL_NAMES.map(|name| {
        let p = dir.join(exe(&format!("{name}{suffix}")));
        if !is_executable(&p) {
            missing.push(name.to_owned());
        }
        p
    });
    if missing.is_empty() {
        Ok(paths)
    } else {
        Err(missing)
    }
}

fn tools_on_path(env: &dyn Env, suffix: &str) -> Result<[PathBuf; 6], Vec<String>> {
    let mut missing = Vec::new();
    let paths = LLVM_TOOL_NAMES.map(|name| {
        let n = format!("{name}{suffix}");
        which(env, &exe(&n)).unwrap_or_else(|| {
            missing.push(n.clone());
            PathBuf::from(n)
        })
    });
    if missing.is_empty() {
        Ok(paths)
    } else {
        Err(missing)
    }
}

/// A program given by path (used as is) or bare name (looked up on `PATH`).
fn resolve_program(env: &dyn Env, p: &Path) -> Option<PathBuf> {
    if p.components().count() > 1 {
        is_executable(p).then(|| p.to_owned())
    } else {
        which(env, &p.to_string_lossy())
    }
}

fn exe(name: &str) -> String {
    format!("{name}{}", std::env::consts::EXE_SUFFIX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_rustc_vv() {
        let text = "rustc 1.96.0 (ac68faa20 2026-05-25) (built from a source tarball)\n\
                    binary: rustc\ncommit-hash: ac68\ncommit-date: 2026-05-25\n\
                    host: x86_64-unknown-linux-gnu\nrelease: 1.96.0\nLLVM version: 22.1.8\n";
        let info = RustcInfo::parse(text).unwrap();
        assert_eq!(info.release, "1.96.0");
        assert_eq!(info.host, "x86_64-unknown-linux-gnu");
        assert_eq!(info.llvm.major, 22);
        assert_eq!(info.llvm.full, "22.1.8");
        assert!(RustcInfo::parse("release: 1.0\nhost: x").is_err());
    }

    #[test]
    fn parses_llvm_tool_version() {
        let debian = "Debian LLVM version 22.1.8\n  Optimized build.\n  Default target: x";
        let v = LlvmVersion::from_tool_version_output(debian).unwrap();
        assert_eq!((v.major, v.full.as_str()), (22, "22.1.8"));
        let upstream = "LLVM (http://llvm.org/):\n  LLVM version 14.0.6\n";
        assert_eq!(
            LlvmVersion::from_tool_version_output(upstream)
                .unwrap()
                .major,
            14
        );
        let rust = "LLVM (http://llvm.org/):\n  LLVM version 20.1.1-rust-1.87.0-stable\n";
        assert_eq!(
            LlvmVersion::from_tool_version_output(rust).unwrap().major,
            20
        );
        assert!(LlvmVersion::from_tool_version_output("clang 3").is_none());
    }
}
