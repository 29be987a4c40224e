//! Linker mode: the final link of a device crate, from LLVM bitcode to PTX.
//!
//! For `nvptx64-nvidia-cuda` rustc hands the final step to a linker of the "LLVM bitcode"
//! flavor (normally `llvm-bitcode-linker`, which Debian does not ship). The builder passes
//! `-C linker=<its own executable>`, so rustc runs the build script (or `gtap-device-build`,
//! or `gtap-link`) again like this:
//!
//! ```text
//! <exe> --export-symbol SYM ... <crate .o files> <dependency .rlib files> -L DIR
//!       --target nvptx64-nvidia-cuda --target-cpu sm_70 -L DIR -o OUT.ptx -O3 --debug
//! ```
//!
//! (or with a single `@response-file` argument holding those). [`run_if_invoked_as_linker`]
//! recognises this from the arguments before anything else happens and performs the link:
//!
//! 1. every object and every member of every archive (extracted with `llvm-ar x`, `lib.rmeta`
//!    skipped) must be LLVM bitcode;
//! 2. `llvm-link` the crate's objects together with all members of the non-sysroot rlibs (the
//!    user's own device crates, linked whole so that kernels defined in a dependency are
//!    never lost), then `llvm-link --only-needed` the sysroot rlibs (`core`,
//!    `compiler_builtins`, ...), repeated while that resolves more symbols;
//! 3. find every kernel (a function with the `ptx_kernel` calling convention, or a
//!    `nvvm.annotations` kernel), every task record size (`__gtap_record_*`), every kernel's
//!    register limit (`__gtap_maxnreg_*`) and every function that calls itself in the linked
//!    module;
//! 4. for each kernel, in parallel, its own module (see [`crate::split`]): `opt` internalizes
//!    everything but that kernel and the crate's other exports, drops what is unreachable and
//!    optimizes at the `-O` level (runtime unrolling here only, and never in a function that
//!    calls itself: see [`crate::unrolling`]);
//!    symbols still undefined (other than the CUDA runtime's `vprintf`, `malloc`, `free`,
//!    `__assertfail`) fail the link; `llc -mcpu=<target-cpu>` writes
//!    `OUT.modules/<kernel>.ptx`, with `.maxnreg R` in the entry of a kernel that has a
//!    register limit;
//! 5. `OUT.modules/manifest.json` lists the modules with their record sizes, and `OUT` itself
//!    names the manifest (see [`crate::manifest`]).
//!
//! The LLVM tools must have the LLVM major version of the device rustc (see
//! [`crate::toolchain`]); the rustc is taken from `GTAP_LINK_RUSTC` (set by the builder),
//! `GTAP_DEVICE_RUSTC`, `RUSTC`, or `rustc` on `PATH`. Set `GTAP_KEEP_LINK_TEMPS=1` to keep the
//! intermediate bitcode next to the output (`OUT.gtap-link/`).

use std::collections::BTreeSet;
use std::ffi::{OsStr, OsString};
use std::fs;
use std::path::{Path, PathBuf};

use crate::Error;
use crate::args::{LinkArgs, expand_response_files, is_linker_invocation, parse_link_args};
use crate::env::{Env, ProcessEnv, which};
use crate::inputs::gather;
use crate::ir::{kernels_in_ir, records_in_ir, register_limits_in_ir, self_recursive_functions};
use crate::manifest::{Manifest, ModuleEntry, modules_dir};
use crate::process::run;
use crate::split::{Split, holds_record};
use crate::symbols::{defined_symbols, undefined_symbols};
use crate::toolchain::{LlvmTools, Search, probe_rustc};

/// If this process was started by rustc as the device linker, performs the link and exits
/// (status 0 on success, 1 with the error on stderr otherwise). Otherwise returns at once.
///
/// [`crate::Builder::new`] calls this, so a build script that starts with
/// `gtap_builder::Builder::new()` is a linker too. Call it first in a `main` that does more.
pub fn run_if_invoked_as_linker() {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    if !is_linker_invocation(&args) {
        return;
    }
    match linker_main(args) {
        Ok(()) => std::process::exit(0),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}

/// The linker: parses `args` (without the program name), finds the LLVM tools and links.
pub fn linker_main(args: Vec<OsString>) -> Result<(), Error> {
    let args = parse_link_args(expand_response_files(args)?)?;
    let tools = linker_tools(&ProcessEnv)?;
    let keep = ProcessEnv.flag("GTAP_KEEP_LINK_TEMPS");
    link(&args, &tools, keep)?;
    Ok(())
}

/// Finds the LLVM tools in linker mode: the device rustc (whose LLVM major they must match)
/// is `GTAP_LINK_RUSTC`, `GTAP_DEVICE_RUSTC`, `RUSTC` or `rustc` on `PATH`.
pub fn linker_tools(env: &dyn Env) -> Result<LlvmTools, Error> {
    let rustc = ["GTAP_LINK_RUSTC", "GTAP_DEVICE_RUSTC", "RUSTC"]
        .iter()
        .find_map(|k| env.non_empty(k).map(PathBuf::from))
        .or_else(|| which(env, "rustc"))
        .ok_or_else(|| {
            Error::LinkArgs(
                "cannot tell which rustc produced the bitcode (set RUSTC to the device rustc)"
                    .into(),
            )
        })?;
    let (info, sysroot) = probe_rustc(&rustc)?;
    Search::new(env).llvm_tools_for(&rustc, &info.llvm, Some((&sysroot, &info.host)))
}

/// What a link did.
#[derive(Clone, Debug)]
pub struct LinkReport {
    /// Kernels found in the linked crates, each in its own module.
    pub kernels: Vec<String>,
    /// Kernels kept although rustc did not list them in `--export-symbol`.
    pub unlisted_kernels: Vec<String>,
    /// The modules and record sizes, as also written to the manifest.
    pub manifest: Manifest,
}

/// Links bitcode to one PTX module per kernel as described in the module docs. Intermediate files go to
/// `<output>.gtap-link/`, removed afterwards unless `keep_temps` (or the link failed).
pub fn link(args: &LinkArgs, tools: &LlvmTools, keep_temps: bool) -> Result<LinkReport, Error> {
    let work = {
        let mut w = args.output.clone().into_os_string();
        w.push(".gtap-link");
        PathBuf::from(w)
    };
    if work.exists() {
        fs::remove_dir_all(&work).map_err(|e| Error::io("remove", &work, e))?;
    }
    fs::create_dir_all(&work).map_err(|e| Error::io("create directory", &work, e))?;
    let result = link_in(args, tools, &work);
    if result.is_ok() && !keep_temps {
        let _ = fs::remove_dir_all(&work);
    }
    result.map_err(|e| match e {
        Error::ToolFailed {
            command,
            status,
            output,
        } => Error::ToolFailed {
            command,
            status,
            output: format!(
                "{output}\n(intermediate files kept in `{}`)",
                work.display()
            ),
        },
        e => e,
    })
}

fn link_in(args: &LinkArgs, tools: &LlvmTools, work: &Path) -> Result<LinkReport, Error> {
    let inputs = gather(args, tools, work)?;
    let linked = link_bitcode(&inputs.whole, &inputs.lazy, tools, work)?;

    let ir = run(
        &tools.llvm_dis,
        &[linked.as_os_str(), OsStr::new("-o"), OsStr::new("-")],
        None,
    )?;
    let kernels = kernels_in_ir(&ir);
    let records = records_in_ir(&ir);
    let register_limits = register_limits_in_ir(&ir).into_iter().collect();
    let recursive = self_recursive_functions(&ir);
    let unlisted_kernels: Vec<String> = kernels
        .iter()
        .filter(|k| !args.exports.contains(k))
        .cloned()
        .collect();
    let shared_exports: Vec<String> = args
        .exports
        .iter()
        .filter(|e| !kernels.contains(e))
        .cloned()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();

    let out_dir = modules_dir(&args.output);
    if out_dir.exists() {
        fs::remove_dir_all(&out_dir).map_err(|e| Error::io("remove", &out_dir, e))?;
    }
    fs::create_dir_all(&out_dir).map_err(|e| Error::io("create directory", &out_dir, e))?;
    let built = Split {
        args,
        tools,
        linked: &linked,
        shared_exports: &shared_exports,
        register_limits: &register_limits,
        recursive: &recursive,
        work,
        out_dir: &out_dir,
    }
    .run(&kernels)?;

    let modules = built
        .into_iter()
        .map(|m| ModuleEntry {
            kernels: vec![m.kernel],
            ptx: m.ptx,
            records: records
                .iter()
                .filter(|(symbol, _)| holds_record(m.tasks.as_deref(), symbol))
                .cloned()
                .collect(),
        })
        .collect();
    let manifest = Manifest {
        target_cpu: args.target_cpu.clone().unwrap_or_default(),
        records,
        modules,
    };
    manifest.write(&out_dir, &args.output)?;
    Ok(LinkReport {
        kernels,
        unlisted_kernels,
        manifest,
    })
}

/// Links `whole` entirely, then what it needs of `lazy` (the sysroot's crates), repeated until
/// nothing more resolves. Returns the linked module.
fn link_bitcode(
    whole: &[PathBuf],
    lazy: &[PathBuf],
    tools: &LlvmTools,
    work: &Path,
) -> Result<PathBuf, Error> {
    let main = work.join("main.bc");
    let mut a: Vec<&OsStr> = whole.iter().map(|p| p.as_os_str()).collect();
    a.extend([OsStr::new("-o"), main.as_os_str()]);
    run(&tools.llvm_link, &a, None)?;

    let mut current = main;
    if lazy.is_empty() {
        return Ok(current);
    }
    let lazy_defs = defined_symbols(tools, lazy)?;
    for round in 1..=8 {
        let needed = undefined_symbols(tools, &current)?
            .into_iter()
            .any(|s| lazy_defs.contains(&s));
        if !needed {
            break;
        }
        let next = work.join(format!("linked{round}.bc"));
        let mut a: Vec<&OsStr> = vec![current.as_os_str(), OsStr::new("--only-needed")];
        a.extend(lazy.iter().map(|p| p.as_os_str()));
        a.extend([OsStr::new("-o"), next.as_os_str()]);
        run(&tools.llvm_link, &a, None)?;
        current = next;
    }
    Ok(current)
}
