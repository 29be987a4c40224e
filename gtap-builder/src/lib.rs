//! Builds a gtap device crate from its own `build.rs`, with rustc's `nvptx64-nvidia-cuda`
//! backend, to one PTX module per kernel (and SASS, when `ptxas` is found), and embeds them in
//! the host build of the same crate.
//!
//! ```no_run
//! // build.rs of a crate whose library holds `#[gtap::kernel]`s:
//! // fn main() {
//! gtap_builder::Builder::new().build_or_exit();
//! // }
//! ```
//!
//! and in the crate:
//!
//! ```ignore
//! #[cfg(not(target_arch = "nvptx64"))]
//! pub static DEVICE_CODE: gtap::DeviceCode = gtap::device_code!();
//! ```
//!
//! What happens:
//!
//! 1. **Linker mode first.** [`Builder::new`] checks whether rustc started this executable as
//!    the device linker (see [`run_if_invoked_as_linker`]); if so it links, one PTX module per
//!    kernel, and exits.
//! 2. **Recursion guard.** In the nested build (`GTAP_DEVICE_BUILD=1`, or a build script whose
//!    `TARGET` is nvptx) the builder does nothing.
//! 3. **Toolchain.** It finds a rustc with the library source, its cargo, and LLVM tools of the
//!    same LLVM major (see [`Search`]). If they are missing, the host build goes on: a
//!    `cargo:warning` names what to install and the crate gets
//!    `DeviceCode::Missing { reason }` (with `GTAP_REQUIRE_DEVICE=1` this is an error).
//! 4. **Nested build.** `cargo rustc --release --lib --crate-type cdylib --target
//!    nvptx64-nvidia-cuda -Zbuild-std=core -- -Clinker=<this executable>` with
//!    `-Ctarget-cpu=<arch>` for every crate, in `<target>/gtap-device/<arch>` (so it never waits
//!    for the outer cargo's lock and rebuilds incrementally), with the outer build's
//!    environment scrubbed. Compile errors fail the build with the compiler's messages.
//! 5. **SASS.** With `ptxas` (`GTAP_PTXAS`, `.tools/bin` of the crate's workspace or of gtap's
//!    checkout, `PATH`, `CUDA_HOME`) each module is assembled to a cubin, in parallel;
//!    `ptxas-report.tsv` next to the modules lists each one's ptxas time, registers, stack and
//!    spills. Without it a `cargo:warning` says that loads will JIT.
//! 6. **Embedding.** The modules are copied to `<target>/gtap-device/ptx/<arch>/<crate>/` and
//!    `$OUT_DIR`, and `$OUT_DIR/gtap_device_code.rs` is written for `gtap::device_code!()`. Every
//!    source file of the device crate and its path dependencies is declared with
//!    `cargo:rerun-if-changed`.
//!
//! Environment: `GTAP_ARCH` (overrides [`Builder::arch`]), `GTAP_DEVICE_RUSTC`,
//! `GTAP_DEVICE_CARGO`, `GTAP_LLVM_BIN`, `GTAP_DEVICE_TARGET_DIR`, `GTAP_REQUIRE_DEVICE`,
//! `GTAP_PTXAS`, `GTAP_CUBIN_ARCHS`, `GTAP_LINEINFO` (source lines in the SASS, for profilers:
//! see `lineinfo`), `CUDA_HOME`; for the linker `GTAP_KEEP_LINK_TEMPS`.

#![warn(missing_docs)]

mod arch;
mod args;
mod codegen;
mod env;
mod error;
mod inputs;
mod ir;
mod lineinfo;
mod link;
mod manifest;
mod nested;
mod parallel;
mod process;
mod ptxas;
mod split;
mod symbols;
mod toolchain;
mod unrolling;

use std::fs;
use std::path::{Path, PathBuf};

pub use arch::{Arch, DEFAULT_ARCH, KNOWN_ARCHS};
pub use args::{LinkArgs, parse_link_args};
pub use codegen::EmbeddedModule;
pub use env::{Env, ProcessEnv, is_executable};
pub use error::{Error, INSTALL_HINT};
pub use link::{LinkReport, link, linker_main, run_if_invoked_as_linker};
pub use manifest::{Manifest, ModuleEntry};
pub use ptxas::{Assembled, KernelResources};
pub use toolchain::{DeviceToolchain, LLVM_TOOL_NAMES, LlvmTools, LlvmVersion, Search};

use codegen::{missing_code, modules_code};
use nested::NestedBuild;
use ptxas::find_ptxas;

/// The name of the file written to `$OUT_DIR` for `gtap::device_code!()`.
pub const DEVICE_CODE_FILE: &str = "gtap_device_code.rs";

/// Environment variables the builder reads (each is declared with `rerun-if-env-changed`).
pub const ENV_VARS: &[&str] = &[
    "GTAP_ARCH",
    "GTAP_DEVICE_RUSTC",
    "GTAP_DEVICE_CARGO",
    "GTAP_LLVM_BIN",
    "GTAP_DEVICE_TARGET_DIR",
    "GTAP_REQUIRE_DEVICE",
    "GTAP_DEVICE_BUILD",
    "GTAP_PTXAS",
    "GTAP_CUBIN_ARCHS",
    "GTAP_LINEINFO",
    "CUDA_HOME",
];

/// The file next to the modules that lists what `ptxas` reported for each.
pub const PTXAS_REPORT_FILE: &str = "ptxas-report.tsv";

/// Builds a device crate to PTX. See the [crate docs](crate).
#[derive(Clone, Debug)]
pub struct Builder {
    crate_dir: Option<PathBuf>,
    manifest: Option<PathBuf>,
    package: Option<String>,
    arch: Option<String>,
    arch_fixed: bool,
    release: bool,
    target_dir: Option<PathBuf>,
    features: Option<Vec<String>>,
    require_device: Option<bool>,
}

impl Default for Builder {
    fn default() -> Self {
        Self::new()
    }
}

/// The device code built for one crate: one module per kernel.
#[derive(Clone, Debug)]
pub struct DeviceModules {
    /// The crate (package name, or the directory when unknown).
    pub package: String,
    /// The architecture the PTX was built for.
    pub arch: Arch,
    /// Where the modules are: `<target>/gtap-device/ptx/<arch>/<crate>/`.
    pub dir: PathBuf,
    /// The modules (PTX and cubins in `dir`).
    pub modules: Vec<EmbeddedModule>,
    /// Record sizes of every task function of the crate.
    pub records: Vec<(String, u32)>,
    /// What `ptxas` reported per module and architecture (empty without cubins).
    pub assembled: Vec<Assembled>,
    /// Why some or all of the requested cubins were not built (no `ptxas`, or one that does
    /// not know the architecture): loads of those modules JIT-compile the PTX.
    pub no_sass: Option<String>,
    /// Source files it was built from (the crate and its path dependencies).
    pub sources: Vec<PathBuf>,
    /// The toolchain that built it.
    pub toolchain: DeviceToolchain,
    /// The LLVM tools that linked it.
    pub llvm: LlvmTools,
}

/// What [`Builder::build`] did.
#[derive(Clone, Debug)]
pub enum BuildOutcome {
    /// Device code was built and embedded.
    Built(Box<DeviceModules>),
    /// No device toolchain: `DeviceCode::Missing { reason }` was embedded.
    Missing {
        /// Why (also printed as a `cargo:warning`).
        reason: String,
    },
    /// This is the nested device build itself (or `GTAP_DEVICE_BUILD` is set): nothing done.
    Skipped,
}

impl Builder {
    /// A builder for the crate whose build script is running, for [`DEFAULT_ARCH`].
    ///
    /// If rustc started this executable as the device linker, this links and exits the
    /// process (see [`link()`]); so call it first.
    pub fn new() -> Self {
        run_if_invoked_as_linker();
        Builder {
            crate_dir: None,
            manifest: None,
            package: None,
            arch: None,
            arch_fixed: false,
            release: true,
            target_dir: None,
            features: None,
            require_device: None,
        }
    }

    /// Builds the crate in `dir` instead of `CARGO_MANIFEST_DIR`.
    pub fn crate_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.crate_dir = Some(dir.into());
        self
    }

    /// Builds package `package` of the workspace (or package) whose manifest is `manifest`.
    pub fn package_in(mut self, manifest: impl Into<PathBuf>, package: impl Into<String>) -> Self {
        self.manifest = Some(manifest.into());
        self.package = Some(package.into());
        self
    }

    /// The GPU architecture (`sm_70`, `sm_90`, ...), validated by [`build`](Self::build).
    /// `GTAP_ARCH` overrides it.
    pub fn arch(mut self, arch: impl Into<String>) -> Self {
        self.arch = Some(arch.into());
        self
    }

    /// The GPU architecture, which `GTAP_ARCH` does not override (for tools whose own command
    /// line names it).
    pub fn fixed_arch(mut self, arch: impl Into<String>) -> Self {
        self.arch = Some(arch.into());
        self.arch_fixed = true;
        self
    }

    /// Builds with the release profile (the default) or the dev profile.
    pub fn release(mut self, release: bool) -> Self {
        self.release = release;
        self
    }

    /// The directory for device builds (default: `GTAP_DEVICE_TARGET_DIR`, else
    /// `<target dir>/gtap-device`). The nested build uses `<dir>/<arch>`, the stable PTX copies
    /// `<dir>/ptx/<arch>/`.
    pub fn target_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.target_dir = Some(dir.into());
        self
    }

    /// Builds with exactly these features (`--no-default-features --features ...`). By default
    /// a build script's crate is built with the features of the host build.
    pub fn features<S: Into<String>>(mut self, features: impl IntoIterator<Item = S>) -> Self {
        self.features = Some(features.into_iter().map(Into::into).collect());
        self
    }

    /// Whether a missing device toolchain is an error (default: `GTAP_REQUIRE_DEVICE`).
    pub fn require_device(mut self, require: bool) -> Self {
        self.require_device = Some(require);
        self
    }

    /// The architecture to build for: `GTAP_ARCH`, else [`arch`](Self::arch), else the default.
    pub fn resolved_arch(&self, env: &dyn Env) -> Result<Arch, Error> {
        match env.non_empty("GTAP_ARCH").filter(|_| !self.arch_fixed) {
            Some(v) => Arch::parse(&v.to_string_lossy()),
            None => match &self.arch {
                Some(a) => Arch::parse(a),
                None => Ok(Arch::default()),
            },
        }
    }

    fn package_name(&self, env: &dyn Env) -> String {
        if let Some(p) = &self.package {
            return p.clone();
        }
        if let Some(n) = env
            .non_empty("CARGO_PKG_NAME")
            .filter(|_| self.crate_dir.is_none())
        {
            return n.to_string_lossy().into_owned();
        }
        self.crate_dir
            .as_deref()
            .and_then(Path::file_name)
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "device crate".into())
    }

    fn manifest(&self, env: &dyn Env) -> Result<PathBuf, Error> {
        if let Some(m) = &self.manifest {
            return Ok(m.clone());
        }
        let dir = match &self.crate_dir {
            Some(d) => d.clone(),
            None => env
                .non_empty("CARGO_MANIFEST_DIR")
                .map(PathBuf::from)
                .ok_or(Error::NotInBuildScript {
                    name: "CARGO_MANIFEST_DIR",
                })?,
        };
        Ok(dir.join("Cargo.toml"))
    }

    /// The device build directory (see [`target_dir`](Self::target_dir)).
    pub fn device_dir(&self, env: &dyn Env) -> Result<PathBuf, Error> {
        if let Some(d) = &self.target_dir {
            return Ok(d.clone());
        }
        if let Some(d) = env.non_empty("GTAP_DEVICE_TARGET_DIR") {
            return Ok(PathBuf::from(d));
        }
        if let Some(d) = env.non_empty("CARGO_TARGET_DIR") {
            return Ok(absolute(PathBuf::from(d)).join("gtap-device"));
        }
        let out = env
            .non_empty("OUT_DIR")
            .map(PathBuf::from)
            .ok_or(Error::NotInBuildScript { name: "OUT_DIR" })?;
        // OUT_DIR is <target>[/<triple>]/<profile>/build/<pkg>-<hash>/out; cargo marks the
        // target directory with CACHEDIR.TAG.
        let target = out
            .ancestors()
            .find(|a| a.join("CACHEDIR.TAG").is_file())
            .or_else(|| out.ancestors().nth(4))
            .unwrap_or(&out);
        Ok(target.join("gtap-device"))
    }

    fn features_for(&self, env: &dyn Env) -> Option<Vec<String>> {
        if self.features.is_some() {
            return self.features.clone();
        }
        // The host build's features of the crate whose build script this is.
        if self.crate_dir.is_some() || self.manifest.is_some() {
            return None;
        }
        let list = env.var_os("CARGO_CFG_FEATURE")?;
        Some(
            list.to_string_lossy()
                .split(',')
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect(),
        )
    }

    /// Finds the toolchain and builds the modules (and their cubins, with `ptxas`); no
    /// build-script output. Used by [`build`](Self::build) and the `gtap-device-build` tool.
    pub fn compile(&self) -> Result<DeviceModules, Error> {
        let env = ProcessEnv;
        let arch = self.resolved_arch(&env)?;
        let manifest = self.manifest(&env)?;
        let package = self.package_name(&env);
        let search = Search::new(&env);
        let toolchain = search.device_toolchain()?;
        let llvm = search.llvm_tools(&toolchain)?;
        let device_dir = absolute(self.device_dir(&env)?);
        let linker = std::env::current_exe().map_err(|e| Error::io("find", "current exe", e))?;
        let line_info = lineinfo::requested(&env);
        let nested = NestedBuild {
            toolchain: toolchain.clone(),
            manifest: manifest.clone(),
            package: self.package.clone(),
            arch: arch.clone(),
            release: self.release,
            target_dir: device_dir.join(arch.as_str()),
            linker,
            features: self.features_for(&env),
            line_info,
        };
        let built = nested.run(&package)?;
        let sources = fs::read_to_string(nested::dep_info_of(&built))
            .map(|t| nested::parse_dep_info(&t))
            .unwrap_or_default();
        let linked = Manifest::read(&built)?;
        let stem = built
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "device".into());
        let dir = device_dir.join("ptx").join(arch.as_str()).join(stem);
        let mut modules = copy_modules(&linked, &dir)?;
        if line_info {
            for m in &modules {
                let ptx = fs::read_to_string(&m.ptx).map_err(|e| Error::io("read", &m.ptx, e))?;
                write_if_changed(&m.ptx, lineinfo::line_directives_only(&ptx).as_bytes())?;
            }
        }

        let crate_dir = manifest.parent().unwrap_or(Path::new("."));
        let (assembled, no_sass) = match find_ptxas(&env, crate_dir)? {
            Some(ptxas) => {
                let mut archs = ptxas::cubin_archs(&env, &arch)?;
                let mut no_sass = archs
                    .is_empty()
                    .then(|| "GTAP_CUBIN_ARCHS=none asks for no cubins".to_string());
                if let Some(known) = ptxas::supported_archs(&ptxas) {
                    let (ok, unknown): (Vec<Arch>, Vec<Arch>) =
                        archs.into_iter().partition(|a| known.contains(&a.number()));
                    if !unknown.is_empty() {
                        let names: Vec<&str> = unknown.iter().map(Arch::as_str).collect();
                        no_sass = Some(format!(
                            "`{}` does not assemble for {}",
                            ptxas.display(),
                            names.join(", ")
                        ));
                    }
                    archs = ok;
                }
                let jobs: Vec<(PathBuf, Arch)> = modules
                    .iter()
                    .flat_map(|m| archs.iter().map(|a| (m.ptx.clone(), a.clone())))
                    .collect();
                let assembled = ptxas::assemble_all(&ptxas, &jobs, line_info)?;
                for a in &assembled {
                    if let Some(m) = modules.iter_mut().find(|m| m.ptx == a.ptx) {
                        m.cubins.push((a.arch.clone(), a.cubin.clone()));
                    }
                }
                if !assembled.is_empty() {
                    let report = dir.join(PTXAS_REPORT_FILE);
                    write_if_changed(&report, ptxas::report(&assembled).as_bytes())?;
                }
                (assembled, no_sass)
            }
            None => (
                Vec::new(),
                Some("no ptxas found (GTAP_PTXAS, .tools/bin/ptxas, PATH, CUDA_HOME)".into()),
            ),
        };
        Ok(DeviceModules {
            package,
            arch,
            dir,
            modules,
            records: linked.records,
            assembled,
            no_sass,
            sources,
            toolchain,
            llvm,
        })
    }

    /// The build-script entry: builds the modules and writes `$OUT_DIR/gtap_device_code.rs`,
    /// or records why there is no device code. Prints `cargo:` directives.
    pub fn build(&self) -> Result<BuildOutcome, Error> {
        run_if_invoked_as_linker();
        let env = ProcessEnv;
        for v in ENV_VARS {
            println!("cargo:rerun-if-env-changed={v}");
        }
        let target = env
            .non_empty("TARGET")
            .map(|t| t.to_string_lossy().into_owned())
            .unwrap_or_default();
        if target.starts_with("nvptx") {
            // The nested device build runs this build script again: nothing to do.
            write_device_code(&env, &missing_code("this is the device build itself"))?;
            return Ok(BuildOutcome::Skipped);
        }
        if env.flag("GTAP_DEVICE_BUILD") {
            let reason = "GTAP_DEVICE_BUILD is set in the environment of a host build, so the \
                          device build was skipped (unset it)";
            println!("cargo:warning={reason}");
            write_device_code(&env, &missing_code(reason))?;
            return Ok(BuildOutcome::Skipped);
        }
        let require = self
            .require_device
            .unwrap_or_else(|| env.flag("GTAP_REQUIRE_DEVICE"));

        match self.compile() {
            Ok(built) => {
                let embedded_dir = out_dir(&env)?.join("gtap-modules");
                let embedded = copy_embedded(&built.modules, &embedded_dir)?;
                write_device_code(&env, &modules_code(&built.arch, &embedded, &built.records))?;
                if let Some(why) = &built.no_sass {
                    println!(
                        "cargo:warning={why}, so `{}` carries PTX without SASS for it, which the \
                         driver JIT-compiles at every load",
                        built.package
                    );
                }
                let mut watched = built.sources.clone();
                watched.extend(nested::manifests_of(&built.sources));
                watched.push(built.toolchain.rustc.clone());
                watched.push(built.llvm.llc.clone());
                for w in watched {
                    println!("cargo:rerun-if-changed={}", w.display());
                }
                Ok(BuildOutcome::Built(Box::new(built)))
            }
            Err(e) if e.is_toolchain_missing() => {
                let reason = e.to_string();
                if require {
                    return Err(Error::DeviceRequired { reason });
                }
                let warning = format!("no device code for `{}`: {reason}", self.package_name(&env));
                for line in warning.lines() {
                    println!("cargo:warning={line}");
                }
                write_device_code(&env, &missing_code(&reason))?;
                // Installing Debian packages changes dpkg's status file: build again then.
                let dpkg = Path::new("/var/lib/dpkg/status");
                if dpkg.is_file() {
                    println!("cargo:rerun-if-changed={}", dpkg.display());
                }
                let manifest = self.manifest(&env)?;
                println!("cargo:rerun-if-changed={}", manifest.display());
                Ok(BuildOutcome::Missing { reason })
            }
            Err(e) => Err(e),
        }
    }

    /// [`build`](Self::build), printing any error and exiting with status 1 instead of
    /// returning it. Never panics.
    pub fn build_or_exit(self) {
        if let Err(e) = self.build() {
            eprintln!("error: gtap-builder: {e}");
            std::process::exit(1);
        }
    }
}

/// Copies the linker's modules into `dir` (emptied first, so no stale module remains).
fn copy_modules(linked: &Manifest, dir: &Path) -> Result<Vec<EmbeddedModule>, Error> {
    if dir.exists() {
        fs::remove_dir_all(dir).map_err(|e| Error::io("remove", dir, e))?;
    }
    fs::create_dir_all(dir).map_err(|e| Error::io("create directory", dir, e))?;
    linked
        .modules
        .iter()
        .map(|m| {
            let name = m.ptx.file_name().unwrap_or(m.ptx.as_os_str());
            let ptx = dir.join(name);
            copy_if_changed(&m.ptx, &ptx)?;
            Ok(EmbeddedModule {
                kernels: m.kernels.clone(),
                ptx,
                cubins: Vec::new(),
                records: m.records.clone(),
            })
        })
        .collect()
}

/// Copies the modules' files into `dir` for `include_str!`/`include_bytes!`, rewriting only
/// what changed (so an unchanged module does not make cargo recompile the crate).
fn copy_embedded(modules: &[EmbeddedModule], dir: &Path) -> Result<Vec<EmbeddedModule>, Error> {
    let into = |p: &Path| -> Result<PathBuf, Error> {
        let to = dir.join(p.file_name().unwrap_or(p.as_os_str()));
        copy_if_changed(p, &to)?;
        Ok(to)
    };
    modules
        .iter()
        .map(|m| {
            Ok(EmbeddedModule {
                kernels: m.kernels.clone(),
                ptx: into(&m.ptx)?,
                cubins: m
                    .cubins
                    .iter()
                    .map(|(a, c)| Ok((a.clone(), into(c)?)))
                    .collect::<Result<_, Error>>()?,
                records: m.records.clone(),
            })
        })
        .collect()
}

fn out_dir(env: &dyn Env) -> Result<PathBuf, Error> {
    env.non_empty("OUT_DIR")
        .map(PathBuf::from)
        .ok_or(Error::NotInBuildScript { name: "OUT_DIR" })
}

fn write_device_code(env: &dyn Env, code: &str) -> Result<(), Error> {
    let path = out_dir(env)?.join(DEVICE_CODE_FILE);
    write_if_changed(&path, code.as_bytes())
}

fn write_if_changed(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    if fs::read(path).is_ok_and(|old| old == bytes) {
        return Ok(());
    }
    if let Some(d) = path.parent() {
        fs::create_dir_all(d).map_err(|e| Error::io("create directory", d, e))?;
    }
    fs::write(path, bytes).map_err(|e| Error::io("write", path, e))
}

fn copy_if_changed(from: &Path, to: &Path) -> Result<(), Error> {
    let bytes = fs::read(from).map_err(|e| Error::io("read", from, e))?;
    write_if_changed(to, &bytes)
}

fn absolute(p: PathBuf) -> PathBuf {
    if p.is_absolute() {
        p
    } else {
        std::env::current_dir().map(|d| d.join(&p)).unwrap_or(p)
    }
}
