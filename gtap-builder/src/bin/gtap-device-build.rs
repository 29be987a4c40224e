//! Builds the device crates of a workspace, one PTX module per kernel, and prints where the
//! modules are, one PTX path per line. The workspace's `.cargo/config.toml` makes it `cargo device-build`:
//!
//! ```text
//! cargo device-build                       # every member whose build.rs uses gtap-builder
//! cargo device-build -p gtap-examples --arch sm_90
//! ```
//!
//! It runs the same nested build as a crate's build script (and is its own device linker).

use std::path::PathBuf;
use std::process::{Command, ExitCode};

use gtap_builder::{Arch, Builder, Error};

const USAGE: &str = "\
usage: gtap-device-build [-p PACKAGE]... [--all] [--arch sm_XX] [--dev] [--manifest-path PATH]

Builds device crates with the device toolchain, one PTX module per kernel (and a cubin per
module when ptxas is found), and prints one PTX path per line.

  -p, --package NAME    build this workspace member (repeatable)
      --all             build every member with a build-dependency on gtap-builder (default)
      --arch sm_XX      GPU architecture (default: GTAP_ARCH, else sm_70)
      --dev             use the dev profile instead of release
      --manifest-path P the workspace's Cargo.toml (default: found by cargo)
  -h, --help            this text";

struct Options {
    packages: Vec<String>,
    all: bool,
    arch: Option<String>,
    dev: bool,
    manifest: Option<PathBuf>,
}

fn parse(args: Vec<String>) -> Result<Options, String> {
    let mut o = Options {
        packages: Vec::new(),
        all: false,
        arch: None,
        dev: false,
        manifest: None,
    };
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        let mut value = |name: &str| it.next().ok_or(format!("`{name}` needs a value"));
        match a.as_str() {
            "-p" | "--package" => o.packages.push(value(&a)?),
            "--all" | "--workspace" => o.all = true,
            "--arch" => o.arch = Some(value(&a)?),
            "--dev" => o.dev = true,
            "--release" => o.dev = false,
            "--manifest-path" => o.manifest = Some(value(&a)?.into()),
            "-h" | "--help" => return Err(String::new()),
            _ => {
                if let Some(v) = a.strip_prefix("--arch=") {
                    o.arch = Some(v.to_owned());
                } else if let Some(v) = a.strip_prefix("--package=") {
                    o.packages.push(v.to_owned());
                } else {
                    return Err(format!("unknown argument `{a}`"));
                }
            }
        }
    }
    Ok(o)
}

struct Workspace {
    manifest: PathBuf,
    target_dir: PathBuf,
    /// (name, uses gtap-builder in build.rs)
    members: Vec<(String, bool)>,
}

fn metadata(manifest: Option<&PathBuf>) -> Result<Workspace, Error> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(&cargo);
    cmd.args(["metadata", "--format-version", "1", "--no-deps"]);
    if let Some(m) = manifest {
        cmd.arg("--manifest-path").arg(m);
    }
    let out = cmd.output().map_err(|source| Error::Spawn {
        program: cargo.clone().into(),
        source,
    })?;
    if !out.status.success() {
        return Err(Error::Metadata(
            String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        ));
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| Error::Metadata(format!("invalid JSON: {e}")))?;
    let root = v["workspace_root"]
        .as_str()
        .ok_or_else(|| Error::Metadata("no workspace_root".into()))?;
    let target = v["target_directory"]
        .as_str()
        .ok_or_else(|| Error::Metadata("no target_directory".into()))?;
    let member_ids: Vec<&str> = v["workspace_members"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m.as_str())
        .collect();
    let mut members = Vec::new();
    for p in v["packages"].as_array().into_iter().flatten() {
        if !member_ids.contains(&p["id"].as_str().unwrap_or("")) {
            continue;
        }
        let name = p["name"].as_str().unwrap_or("").to_owned();
        let uses_builder = p["dependencies"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|d| d["name"] == "gtap-builder" && d["kind"] == "build");
        members.push((name, uses_builder));
    }
    Ok(Workspace {
        manifest: PathBuf::from(root).join("Cargo.toml"),
        target_dir: PathBuf::from(target),
        members,
    })
}

fn run(o: Options) -> Result<(), String> {
    if let Some(a) = &o.arch {
        Arch::parse(a).map_err(|e| e.to_string())?;
    }
    let ws = metadata(o.manifest.as_ref()).map_err(|e| e.to_string())?;
    let packages: Vec<String> = if o.packages.is_empty() || o.all {
        let mut list: Vec<String> = ws
            .members
            .iter()
            .filter(|(_, uses)| *uses)
            .map(|(n, _)| n.clone())
            .collect();
        for p in &o.packages {
            if !list.contains(p) {
                list.push(p.clone());
            }
        }
        list
    } else {
        o.packages.clone()
    };
    for p in &packages {
        if !ws.members.iter().any(|(n, _)| n == p) {
            return Err(format!(
                "`{p}` is not a member of the workspace `{}`",
                ws.manifest.display()
            ));
        }
    }
    if packages.is_empty() {
        eprintln!("gtap-device-build: no workspace member has a build-dependency on gtap-builder");
    }
    for p in packages {
        let mut b = Builder::new()
            .package_in(&ws.manifest, &p)
            .release(!o.dev)
            .target_dir(ws.target_dir.join("gtap-device"));
        if let Some(a) = &o.arch {
            b = b.fixed_arch(a);
        }
        let built = b.compile().map_err(|e| e.to_string())?;
        let mut sass = if built.assembled.is_empty() {
            "no SASS".to_string()
        } else {
            format!(
                "SASS by ptxas in {} ms (see {})",
                built.assembled.iter().map(|a| a.millis).sum::<u128>(),
                gtap_builder::PTXAS_REPORT_FILE
            )
        };
        if let Some(why) = &built.no_sass {
            sass.push_str(&format!("; {why} (loads will JIT)"));
        }
        eprintln!(
            "gtap-device-build: {} for {} (rustc {}, LLVM {}): {} modules in {}; {sass}",
            built.package,
            built.arch,
            built.toolchain.info.release,
            built.llvm.version.full,
            built.modules.len(),
            built.dir.display()
        );
        for m in &built.modules {
            println!("{}", m.ptx.display());
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    gtap_builder::run_if_invoked_as_linker();
    let options = match parse(std::env::args().skip(1).collect()) {
        Ok(o) => o,
        Err(m) if m.is_empty() => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(m) => {
            eprintln!("error: {m}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
