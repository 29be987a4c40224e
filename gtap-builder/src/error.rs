//! The builder's errors. Every message says what is wrong and what to do about it.

use std::io;
use std::path::PathBuf;

/// What to install when the device toolchain is missing.
pub const INSTALL_HINT: &str = "run `scripts/setup` in the gtap repository, or install the \
Debian packages `rustc-web cargo-web rust-web-src llvm-22` (any rustc with the library source \
(rustup component `rust-src`) and the LLVM tools of its LLVM major version will do; \
GTAP_DEVICE_RUSTC, GTAP_DEVICE_CARGO and GTAP_LLVM_BIN select them explicitly)";

/// What a crate needs to build for the GPU: the usual causes of a failing device build in a new
/// crate, appended to [`Error::DeviceCompileFailed`].
pub(crate) const DEVICE_CRATE_HINT: &str = "A device crate needs: its kernels and task functions in \
its library target (src/lib.rs; \"no library targets found\" otherwise); the library `no_std` \
on the GPU (`#![cfg_attr(target_arch = \"nvptx64\", no_std)]`; \"can't find crate for `std`\" \
otherwise); and every dependency that needs `std` or `alloc` (\"can't find crate for `alloc`\") \
under `[target.'cfg(not(target_arch = \"nvptx64\"))'.dependencies]`, since the GPU build \
compiles only `core` (gtap-host may stay an ordinary dependency: it is empty on the GPU)";

fn bullets(items: &[String]) -> String {
    items.iter().map(|t| format!("\n  - {t}")).collect()
}

/// Everything that can go wrong while building device code or linking it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No rustc with the library source (`rust-src`) was found.
    #[error(
        "no device toolchain: no rustc with the library source (rust-src) was found; tried:{}\nTo fix: {INSTALL_HINT}",
        bullets(.tried)
    )]
    NoDeviceToolchain {
        /// Each candidate and why it was not used.
        tried: Vec<String>,
    },

    /// The device rustc was found but no cargo to drive it.
    #[error(
        "no device cargo: found the device rustc `{}` but no cargo at `{}`\nTo fix: install cargo for that toolchain (Debian: `cargo-web`) or set GTAP_DEVICE_CARGO",
        .rustc.display(), .tried.display()
    )]
    NoDeviceCargo {
        /// The device rustc.
        rustc: PathBuf,
        /// Where cargo was looked for.
        tried: PathBuf,
    },

    /// The LLVM tools (`llvm-link`, `opt`, `llc`, ...) matching the device rustc are missing.
    #[error(
        "no LLVM {major} tools (llvm-link, opt, llc, llvm-ar, llvm-dis, llvm-nm) matching the device rustc's LLVM {major}; tried:{}\nTo fix: install the Debian package `llvm-{major}`, or set GTAP_LLVM_BIN to the `bin` directory of LLVM {major}",
        bullets(.tried)
    )]
    NoLlvmTools {
        /// The LLVM major version the device rustc uses.
        major: u32,
        /// Each candidate and why it was not used.
        tried: Vec<String>,
    },

    /// The LLVM tools found are from a different LLVM than the device rustc's, so they cannot
    /// read its bitcode.
    #[error(
        "LLVM version mismatch: the device rustc `{}` uses LLVM {rustc_llvm}, but `{}` is LLVM {tool_llvm}; bitcode only links with the same LLVM major version\nTo fix: install `llvm-{}` (Debian) or set GTAP_LLVM_BIN to the `bin` directory of LLVM {}",
        .rustc.display(), .tool.display(),
        major_of(.rustc_llvm), major_of(.rustc_llvm)
    )]
    LlvmVersionMismatch {
        /// The device rustc.
        rustc: PathBuf,
        /// Its LLVM version (`rustc -vV`).
        rustc_llvm: String,
        /// The mismatching tool.
        tool: PathBuf,
        /// The tool's LLVM version (`--version`).
        tool_llvm: String,
    },

    /// An environment override points at something unusable.
    #[error("{var}=`{value}` cannot be used: {problem}\nTo fix: correct or unset {var}")]
    BadOverride {
        /// The variable, e.g. `GTAP_DEVICE_RUSTC`.
        var: &'static str,
        /// Its value.
        value: String,
        /// What is wrong with it.
        problem: String,
    },

    /// An invalid `sm_XX` architecture.
    #[error("invalid GPU architecture `{value}`: {problem}")]
    InvalidArch {
        /// The value given (builder API or `GTAP_ARCH`).
        value: String,
        /// What is wrong with it.
        problem: String,
    },

    /// A variable that cargo sets for build scripts is missing.
    #[error(
        "{name} is not set: `Builder::build` runs from a build script (build.rs); elsewhere use `Builder::compile` with `Builder::target_dir`"
    )]
    NotInBuildScript {
        /// The variable.
        name: &'static str,
    },

    /// A file system operation failed.
    #[error("cannot {action} `{}`: {source}", .path.display())]
    Io {
        /// What was attempted ("read", "create directory", ...).
        action: &'static str,
        /// On what.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },

    /// A program could not be started.
    #[error("cannot run `{}`: {source}", .program.display())]
    Spawn {
        /// The program.
        program: PathBuf,
        /// The OS error.
        source: io::Error,
    },

    /// A tool ran and failed.
    #[error("`{command}` failed ({status}){}", if .output.is_empty() { String::new() } else { format!(":\n{}", .output) })]
    ToolFailed {
        /// The command line.
        command: String,
        /// Its exit status.
        status: String,
        /// What it printed.
        output: String,
    },

    /// Output of a tool could not be understood.
    #[error("unexpected output from `{command}`: {problem}")]
    BadToolOutput {
        /// The command line.
        command: String,
        /// What was expected.
        problem: String,
    },

    /// The device crate does not compile (or link) for the GPU. The compiler's messages were
    /// printed above this error.
    #[error(
        "the device build of `{package}` for {arch} failed ({status}); the compiler's messages are above\n(command: {command})\n{DEVICE_CRATE_HINT}"
    )]
    DeviceCompileFailed {
        /// The crate.
        package: String,
        /// The architecture.
        arch: String,
        /// The nested cargo's exit status.
        status: String,
        /// The nested cargo command.
        command: String,
    },

    /// The device build succeeded but produced no PTX file.
    #[error("the device build of `{package}` produced no PTX: {detail}")]
    NoPtxProduced {
        /// The crate.
        package: String,
        /// What was found instead.
        detail: String,
    },

    /// `GTAP_REQUIRE_DEVICE=1` is set and there is no device code.
    #[error(
        "GTAP_REQUIRE_DEVICE=1 is set, so device code is required, but there is none: {reason}"
    )]
    DeviceRequired {
        /// Why there is no device code.
        reason: String,
    },

    /// The arguments rustc passed to the linker were not understood.
    #[error("gtap linker: {0}")]
    LinkArgs(String),

    /// Symbols remain undefined after linking the device code.
    #[error(
        "gtap linker: the device code uses symbols that nothing defines: {}\n(a dependency calls something with no GPU implementation, or a crate is missing from the link)",
        .symbols.join(", ")
    )]
    UnresolvedSymbols {
        /// The undefined symbols.
        symbols: Vec<String>,
    },

    /// `cargo metadata` failed or printed something unexpected.
    #[error("cargo metadata: {0}")]
    Metadata(String),
}

fn major_of(version: &str) -> &str {
    version.split('.').next().unwrap_or(version)
}

impl Error {
    /// True when the error means "the device toolchain is not (completely) installed" rather
    /// than "something is broken": the builder then records missing device code and lets the
    /// host build go on, unless `GTAP_REQUIRE_DEVICE=1`.
    pub fn is_toolchain_missing(&self) -> bool {
        matches!(
            self,
            Error::NoDeviceToolchain { .. }
                | Error::NoDeviceCargo { .. }
                | Error::NoLlvmTools { .. }
                | Error::LlvmVersionMismatch { .. }
        )
    }

    pub(crate) fn io(action: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        Error::Io {
            action,
            path: path.into(),
            source,
        }
    }
}
