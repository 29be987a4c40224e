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
//! 3. keep every `--export-symbol` and every kernel (a function with the `ptx_kernel` calling
//!    convention, or a `nvvm.annotations` kernel) found in the linked module; `opt` internalizes
//!    everything else and drops what is unreachable, then optimizes at the `-O` level;
//! 4. refuse symbols that are still undefined (other than the CUDA runtime's `vprintf`,
//!    `malloc`, `free`, `__assertfail`);
//! 5. `llc -mcpu=<target-cpu>` writes the PTX.
//!
//! The LLVM tools must have the LLVM major version of the device rustc (see
//! [`crate::toolchain`]); the rustc is taken from `GTAP_LINK_RUSTC` (set by the builder),
//! `GTAP_DEVICE_RUSTC`, `RUSTC`, or `rustc` on `PATH`. Set `GTAP_KEEP_LINK_TEMPS=1` to keep the
//! intermediate bitcode next to the output.

use std::collections::BTreeSet;
use std::ffi::{OsStr, OsString};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::Error;
use crate::env::{Env, ProcessEnv, lossy, which};
use crate::toolchain::{LlvmTools, Search, command_line, probe_rustc};

/// Crates of the Rust sysroot: linked lazily (only what the device code needs).
const SYSROOT_CRATES: &[&str] = &[
    "core",
    "compiler_builtins",
    "alloc",
    "rustc_std_workspace_core",
    "rustc_std_workspace_alloc",
    "panic_abort",
    "panic_unwind",
    "std",
];

/// Functions the CUDA driver provides to PTX modules.
const CUDA_RUNTIME_SYMBOLS: &[&str] = &["vprintf", "malloc", "free", "__assertfail"];

/// The linker's command line, as rustc passes it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LinkArgs {
    /// Object files (bitcode) of the crate being linked, in order.
    pub objects: Vec<PathBuf>,
    /// Archives (`.rlib`, `.a`) of its dependencies, in order.
    pub archives: Vec<PathBuf>,
    /// `--export-symbol`: symbols that stay visible.
    pub exports: Vec<String>,
    /// `-L`: directories in which relative inputs are also looked for.
    pub lib_dirs: Vec<PathBuf>,
    /// `--target`.
    pub target: String,
    /// `--target-cpu` (`sm_70`, ...).
    pub target_cpu: Option<String>,
    /// `--target-feature` (e.g. `+ptx80`).
    pub target_feature: Option<String>,
    /// `-o`.
    pub output: PathBuf,
    /// `-O` level: `0`, `1`, `2`, `3`, `s` or `z`.
    pub opt_level: String,
    /// `--debug`.
    pub debug: bool,
    /// `--lto`.
    pub lto: bool,
}

/// True if `args` (the program's arguments without the program name) are a linker invocation
/// by rustc for an NVPTX target: either a single `@response-file`, or arguments that include
/// `--target nvptx...`. A build script is run by cargo without arguments, and the
/// `gtap-device-build` tool has no `--target` option, so neither is mistaken for one.
pub fn is_linker_invocation(args: &[OsString]) -> bool {
    if args.len() == 1 && args[0].to_string_lossy().starts_with('@') {
        return true;
    }
    args.windows(2)
        .any(|w| w[0] == "--target" && w[1].to_string_lossy().starts_with("nvptx"))
        || args
            .iter()
            .any(|a| a.to_string_lossy().starts_with("--target=nvptx"))
}

/// Replaces each `@file` argument by the arguments in that file: one per line, with `\`
/// escaping the next character (how rustc writes them for non-MSVC linkers).
pub fn expand_response_files(args: Vec<OsString>) -> Result<Vec<OsString>, Error> {
    let mut out = Vec::with_capacity(args.len());
    for a in args {
        let s = a.to_string_lossy();
        if let Some(file) = s.strip_prefix('@') {
            let text =
                fs::read_to_string(file).map_err(|e| Error::io("read response file", file, e))?;
            out.extend(parse_response_file(&text).into_iter().map(OsString::from));
        } else {
            out.push(a);
        }
    }
    Ok(out)
}

/// Splits the text of a response file into arguments.
pub fn parse_response_file(text: &str) -> Vec<String> {
    let mut args = Vec::new();
    for line in text.lines() {
        if line.is_empty() {
            continue;
        }
        let mut arg = String::new();
        let mut chars = line.chars();
        while let Some(c) = chars.next() {
            if c == '\\' {
                if let Some(n) = chars.next() {
                    arg.push(n);
                }
            } else {
                arg.push(c);
            }
        }
        args.push(arg);
    }
    args
}

/// Parses the linker's arguments (after response files are expanded).
pub fn parse_link_args(args: Vec<OsString>) -> Result<LinkArgs, Error> {
    let mut la = LinkArgs {
        opt_level: "0".into(),
        ..LinkArgs::default()
    };
    let mut output = None;
    let mut target = None;
    let mut it = args.into_iter();
    let bad = |m: String| Error::LinkArgs(m);
    while let Some(arg) = it.next() {
        let s = arg.to_string_lossy().into_owned();
        let mut value = |flag: &str| -> Result<OsString, Error> {
            it.next()
                .ok_or_else(|| bad(format!("`{flag}` needs a value")))
        };
        // `--flag=value` forms.
        let (flag, inline) = match s.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_owned(), Some(OsString::from(v))),
            _ => (s.clone(), None),
        };
        let mut take = |flag: &str| -> Result<OsString, Error> {
            match &inline {
                Some(v) => Ok(v.clone()),
                None => value(flag),
            }
        };
        match flag.as_str() {
            "--export-symbol" => la.exports.push(lossy(&take("--export-symbol")?)),
            "--target" => target = Some(lossy(&take("--target")?)),
            "--target-cpu" => la.target_cpu = Some(lossy(&take("--target-cpu")?)),
            "--target-feature" => la.target_feature = Some(lossy(&take("--target-feature")?)),
            "-o" | "--output" => output = Some(PathBuf::from(take("-o")?)),
            "-L" => la.lib_dirs.push(PathBuf::from(take("-L")?)),
            "--debug" => la.debug = true,
            "--lto" => la.lto = true,
            "-O" => la.opt_level = lossy(&take("-O")?),
            _ if s.starts_with("-L") => la.lib_dirs.push(PathBuf::from(&s[2..])),
            _ if s.starts_with("-O") => la.opt_level = s[2..].to_owned(),
            _ if s.starts_with("-o") && s.len() > 2 => output = Some(PathBuf::from(&s[2..])),
            _ if s.starts_with('-') => {
                return Err(bad(format!(
                    "unknown argument `{s}` (gtap's linker understands what rustc passes to \
                     llvm-bitcode-linker: --export-symbol, --target, --target-cpu, \
                     --target-feature, -L, -o, -O, --debug, --lto)"
                )));
            }
            _ => {
                let p = PathBuf::from(arg);
                let ext = p.extension().map(lossy).unwrap_or_default();
                if ext == "rlib" || ext == "a" {
                    la.archives.push(p);
                } else {
                    la.objects.push(p);
                }
            }
        }
    }
    if !matches!(la.opt_level.as_str(), "0" | "1" | "2" | "3" | "s" | "z") {
        return Err(bad(format!(
            "unknown optimization level `-O{}`",
            la.opt_level
        )));
    }
    la.output = output.ok_or_else(|| bad("no output file (`-o`)".into()))?;
    la.target = target.ok_or_else(|| bad("no `--target`".into()))?;
    if !la.target.starts_with("nvptx64-") {
        return Err(bad(format!(
            "target `{}` is not supported; gtap links nvptx64-nvidia-cuda only",
            la.target
        )));
    }
    if la.objects.is_empty() && la.archives.is_empty() {
        return Err(bad("no input files".into()));
    }
    Ok(la)
}

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
#[derive(Clone, Debug, Default)]
pub struct LinkReport {
    /// Kernels (PTX entries) in the output.
    pub kernels: Vec<String>,
    /// Kernels kept although rustc did not list them in `--export-symbol`.
    pub unlisted_kernels: Vec<String>,
}

fn run(program: &Path, args: &[&OsStr], cwd: Option<&Path>) -> Result<String, Error> {
    let mut cmd = Command::new(program);
    cmd.args(args);
    if let Some(d) = cwd {
        cmd.current_dir(d);
    }
    let out = cmd.output().map_err(|source| Error::Spawn {
        program: program.to_owned(),
        source,
    })?;
    if !out.status.success() {
        let mut text = String::from_utf8_lossy(&out.stderr).trim().to_owned();
        if text.contains("Unknown attribute kind")
            || text.contains("Invalid record")
            || text.contains("Unknown bitstream version")
            || text.contains("bitcode files")
        {
            text.push_str(
                "\n(this usually means the LLVM tools are older than the rustc that wrote the \
                 bitcode: use the tools of the device rustc's LLVM major version)",
            );
        }
        return Err(Error::ToolFailed {
            command: command_line(program, args.iter().copied()),
            status: out.status.to_string(),
            output: text,
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn is_bitcode(path: &Path) -> Result<bool, Error> {
    use std::io::Read;
    let mut magic = [0u8; 4];
    let mut f = fs::File::open(path).map_err(|e| Error::io("open", path, e))?;
    let n = f.read(&mut magic).map_err(|e| Error::io("read", path, e))?;
    // Raw bitcode ("BC" 0xC0DE) or the bitcode wrapper header (0x0B17C0DE, little endian).
    Ok(n == 4 && (magic == [b'B', b'C', 0xC0, 0xDE] || magic == [0xDE, 0xC0, 0x17, 0x0B]))
}

/// The crate name of an rlib file name `lib<name>-<hash>.rlib`.
pub fn rlib_crate_name(path: &Path) -> Option<String> {
    let stem = path.file_stem()?.to_string_lossy().into_owned();
    let stem = stem.strip_prefix("lib")?;
    Some(match stem.rsplit_once('-') {
        Some((name, _hash)) => name.to_owned(),
        None => stem.to_owned(),
    })
}

fn resolve_input(p: &Path, lib_dirs: &[PathBuf]) -> Result<PathBuf, Error> {
    if p.exists() {
        return Ok(p.to_owned());
    }
    if p.is_relative() {
        for d in lib_dirs {
            let c = d.join(p);
            if c.exists() {
                return Ok(c);
            }
        }
    }
    Err(Error::LinkArgs(format!(
        "input file `{}` does not exist",
        p.display()
    )))
}

/// Kernels defined in an LLVM IR module (text): functions with the `ptx_kernel` calling
/// convention, and functions named in `nvvm.annotations` as kernels.
pub fn kernels_in_ir(ir: &str) -> Vec<String> {
    let mut found = BTreeSet::new();
    for line in ir.lines() {
        let head = line.split('(').next().unwrap_or("");
        let is_kernel = (line.starts_with("define ")
            && head.split_whitespace().any(|w| w == "ptx_kernel"))
            || (line.starts_with('!') && line.contains("!\"kernel\""));
        if let Some(name) = ir_function_name(line).filter(|_| is_kernel) {
            found.insert(name);
        }
    }
    found.into_iter().collect()
}

/// The first `@name` or `@"name"` in a line of IR.
fn ir_function_name(line: &str) -> Option<String> {
    let at = line.find('@')?;
    let rest = &line[at + 1..];
    if let Some(q) = rest.strip_prefix('"') {
        let end = q.find('"')?;
        Some(q[..end].to_owned())
    } else {
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '$' | '-')))
            .unwrap_or(rest.len());
        (end > 0).then(|| rest[..end].to_owned())
    }
}

/// Undefined symbols reported by `llvm-nm -u`.
fn undefined_symbols(tools: &LlvmTools, module: &Path) -> Result<BTreeSet<String>, Error> {
    let out = run(
        &tools.llvm_nm,
        &[OsStr::new("-u"), OsStr::new("-j"), module.as_os_str()],
        None,
    )?;
    Ok(out
        .lines()
        .map(str::trim)
        .filter(|s| !s.is_empty() && !s.starts_with("llvm."))
        .map(str::to_owned)
        .collect())
}

/// Defined external symbols of some bitcode files.
fn defined_symbols(tools: &LlvmTools, files: &[PathBuf]) -> Result<BTreeSet<String>, Error> {
    let mut set = BTreeSet::new();
    for chunk in files.chunks(64) {
        let mut args: Vec<&OsStr> = vec![
            OsStr::new("--defined-only"),
            OsStr::new("--extern-only"),
            OsStr::new("-j"),
        ];
        args.extend(chunk.iter().map(|p| p.as_os_str()));
        let out = run(&tools.llvm_nm, &args, None)?;
        for l in out.lines() {
            let l = l.trim();
            // With several files llvm-nm prints "file:" headers.
            if !l.is_empty() && !l.ends_with(':') {
                set.insert(l.to_owned());
            }
        }
    }
    Ok(set)
}

/// Links bitcode to PTX as described in the module docs. Intermediate files go to
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
    let mut whole: Vec<PathBuf> = Vec::new();
    for o in &args.objects {
        let o = resolve_input(o, &args.lib_dirs)?;
        if !is_bitcode(&o)? {
            return Err(Error::LinkArgs(format!(
                "`{}` is not LLVM bitcode; device crates must be compiled by rustc for \
                 nvptx64-nvidia-cuda",
                o.display()
            )));
        }
        whole.push(o);
    }
    let mut lazy: Vec<PathBuf> = Vec::new();
    for (i, a) in args.archives.iter().enumerate() {
        let a = fs::canonicalize(resolve_input(a, &args.lib_dirs)?)
            .map_err(|e| Error::io("resolve", a, e))?;
        let name = rlib_crate_name(&a).unwrap_or_else(|| format!("archive{i}"));
        let dir = work.join(format!("{i:03}-{name}"));
        fs::create_dir_all(&dir).map_err(|e| Error::io("create directory", &dir, e))?;
        run(
            &tools.llvm_ar,
            &[OsStr::new("x"), a.as_os_str()],
            Some(&dir),
        )?;
        let mut members: Vec<PathBuf> = fs::read_dir(&dir)
            .map_err(|e| Error::io("list", &dir, e))?
            .flatten()
            .map(|e| e.path())
            .collect();
        members.sort();
        let sysroot =
            a.extension() == Some(OsStr::new("a")) || SYSROOT_CRATES.contains(&name.as_str());
        for m in members {
            let file = m.file_name().map(lossy).unwrap_or_default();
            if file == "lib.rmeta" || file.ends_with(".rmeta") {
                continue;
            }
            if !is_bitcode(&m)? {
                return Err(Error::LinkArgs(format!(
                    "member `{file}` of `{}` is not LLVM bitcode",
                    a.display()
                )));
            }
            if sysroot {
                lazy.push(m);
            } else {
                whole.push(m);
            }
        }
    }
    if whole.is_empty() {
        return Err(Error::LinkArgs("no object files to link".into()));
    }

    // 1. The crate and its (non-sysroot) dependencies, whole.
    let main = work.join("main.bc");
    let mut a: Vec<&OsStr> = whole.iter().map(|p| p.as_os_str()).collect();
    a.extend([OsStr::new("-o"), main.as_os_str()]);
    run(&tools.llvm_link, &a, None)?;

    // 2. What they need from core & co, until nothing more resolves.
    let mut current = main;
    if !lazy.is_empty() {
        let lazy_defs = defined_symbols(tools, &lazy)?;
        for round in 1..=8 {
            let needed: Vec<String> = undefined_symbols(tools, &current)?
                .into_iter()
                .filter(|s| lazy_defs.contains(s))
                .collect();
            if needed.is_empty() {
                break;
            }
            let next = work.join(format!("linked{round}.bc"));
            let mut a: Vec<&OsStr> = vec![current.as_os_str(), OsStr::new("--only-needed")];
            a.extend(lazy.iter().map(|p| p.as_os_str()));
            a.extend([OsStr::new("-o"), next.as_os_str()]);
            run(&tools.llvm_link, &a, None)?;
            current = next;
        }
    }

    // 3. Keep the exports and every kernel; internalize and drop the rest; optimize.
    let ir = run(
        &tools.llvm_dis,
        &[current.as_os_str(), OsStr::new("-o"), OsStr::new("-")],
        None,
    )?;
    let kernels = kernels_in_ir(&ir);
    let mut keep: BTreeSet<String> = args.exports.iter().cloned().collect();
    let unlisted_kernels: Vec<String> = kernels
        .iter()
        .filter(|k| !keep.contains(*k))
        .cloned()
        .collect();
    keep.extend(kernels.iter().cloned());
    let api = work.join("public-api.txt");
    let list: String = keep.iter().map(|s| format!("{s}\n")).collect();
    fs::write(&api, list).map_err(|e| Error::io("write", &api, e))?;
    let mut api_arg = OsString::from("-internalize-public-api-file=");
    api_arg.push(&api);
    let internal = work.join("internalized.bc");
    run(
        &tools.opt,
        &[
            OsStr::new("-passes=internalize,globaldce"),
            &api_arg,
            current.as_os_str(),
            OsStr::new("-o"),
            internal.as_os_str(),
        ],
        None,
    )?;
    let optimized = work.join("optimized.bc");
    let passes = format!("-passes=default<O{}>", args.opt_level.to_uppercase());
    let passes = passes.replace("<OS>", "<Os>").replace("<OZ>", "<Oz>");
    run(
        &tools.opt,
        &[
            OsStr::new(&passes),
            internal.as_os_str(),
            OsStr::new("-o"),
            optimized.as_os_str(),
        ],
        None,
    )?;

    // 4. Nothing may remain undefined but what the driver provides.
    let unresolved: Vec<String> = undefined_symbols(tools, &optimized)?
        .into_iter()
        .filter(|s| !CUDA_RUNTIME_SYMBOLS.contains(&s.as_str()))
        .collect();
    if !unresolved.is_empty() {
        return Err(Error::UnresolvedSymbols {
            symbols: unresolved,
        });
    }

    // 5. PTX.
    let llc_opt = match args.opt_level.as_str() {
        "s" | "z" => "2",
        l => l,
    };
    let mut a: Vec<OsString> = vec![
        format!("-mtriple={}", args.target).into(),
        format!("-O{llc_opt}").into(),
    ];
    if let Some(cpu) = &args.target_cpu {
        a.push(format!("-mcpu={cpu}").into());
    }
    if let Some(f) = ptx_features(args.target_cpu.as_deref(), args.target_feature.as_deref()) {
        a.push(format!("-mattr={f}").into());
    }
    a.extend([
        optimized.clone().into_os_string(),
        "-o".into(),
        args.output.clone().into_os_string(),
    ]);
    let a: Vec<&OsStr> = a.iter().map(|s| s.as_os_str()).collect();
    run(&tools.llc, &a, None)?;

    Ok(LinkReport {
        kernels,
        unlisted_kernels,
    })
}

/// The `-mattr` features for `llc`: the caller's, plus the lowest PTX ISA version that has every
/// instruction the runtime uses (`nanosleep` needs PTX 6.3; LLVM would pick 6.0 for `sm_70` and
/// 6.1 for `sm_72`). A PTX version the caller chose is kept.
fn ptx_features(cpu: Option<&str>, features: Option<&str>) -> Option<String> {
    let needs_ptx63 = matches!(cpu, Some("sm_70" | "sm_72"));
    let has_ptx = features.is_some_and(|f| f.contains("ptx"));
    match (features, needs_ptx63 && !has_ptx) {
        (Some(f), true) => Some(format!("{f},+ptx63")),
        (None, true) => Some("+ptx63".into()),
        (f, false) => f.map(str::to_string),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ptx_version_is_raised_where_llvm_picks_one_too_old() {
        assert_eq!(ptx_features(Some("sm_70"), None).as_deref(), Some("+ptx63"));
        assert_eq!(
            ptx_features(Some("sm_72"), Some("+foo")).as_deref(),
            Some("+foo,+ptx63")
        );
        assert_eq!(
            ptx_features(Some("sm_70"), Some("+ptx78")).as_deref(),
            Some("+ptx78")
        );
        assert_eq!(ptx_features(Some("sm_90"), None), None);
    }

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn detects_linker_invocations() {
        assert!(!is_linker_invocation(&[]));
        assert!(!is_linker_invocation(&os(&[
            "-p",
            "gtap-examples",
            "--arch",
            "sm_90"
        ])));
        assert!(!is_linker_invocation(&os(&[
            "--target",
            "x86_64-unknown-linux-gnu"
        ])));
        assert!(is_linker_invocation(&os(&["@/tmp/linker-args"])));
        assert!(is_linker_invocation(&os(&[
            "--export-symbol",
            "k",
            "a.o",
            "--target",
            "nvptx64-nvidia-cuda",
            "-o",
            "x.ptx"
        ])));
        assert!(is_linker_invocation(&os(&["--target=nvptx64-nvidia-cuda"])));
    }

    #[test]
    fn parses_rustc_linker_command_line() {
        let args = os(&[
            "--export-symbol",
            "gtap_probe",
            "--export-symbol",
            "fib_kernel",
            "/t/deps/ex.ex.1-cgu.0.rcgu.o",
            "/t/deps/libgtap-d356.rlib",
            "/t/deps/libcore-1353.rlib",
            "-L",
            "/t/deps/raw-dylibs",
            "--target",
            "nvptx64-nvidia-cuda",
            "--target-cpu",
            "sm_70",
            "-L/sysroot/self-contained",
            "-o",
            "/t/deps/ex.ptx",
            "-O3",
            "--debug",
        ]);
        let la = parse_link_args(args).unwrap();
        assert_eq!(la.exports, ["gtap_probe", "fib_kernel"]);
        assert_eq!(la.objects, [PathBuf::from("/t/deps/ex.ex.1-cgu.0.rcgu.o")]);
        assert_eq!(la.archives.len(), 2);
        assert_eq!(la.lib_dirs.len(), 2);
        assert_eq!(la.target, "nvptx64-nvidia-cuda");
        assert_eq!(la.target_cpu.as_deref(), Some("sm_70"));
        assert_eq!(la.output, PathBuf::from("/t/deps/ex.ptx"));
        assert_eq!(la.opt_level, "3");
        assert!(la.debug);
    }

    #[test]
    fn rejects_bad_linker_command_lines() {
        let e = parse_link_args(os(&["a.o", "--target", "nvptx64-nvidia-cuda"])).unwrap_err();
        assert!(e.to_string().contains("-o"), "{e}");
        let e = parse_link_args(os(&[
            "a.o",
            "-o",
            "x",
            "--target",
            "x86_64-unknown-linux-gnu",
        ]))
        .unwrap_err();
        assert!(e.to_string().contains("not supported"), "{e}");
        let e = parse_link_args(os(&[
            "a.o",
            "-o",
            "x",
            "--target",
            "nvptx64-nvidia-cuda",
            "--frob",
        ]))
        .unwrap_err();
        assert!(e.to_string().contains("unknown argument `--frob`"), "{e}");
        let e = parse_link_args(os(&["-o", "x", "--target", "nvptx64-nvidia-cuda"])).unwrap_err();
        assert!(e.to_string().contains("no input"), "{e}");
        let e = parse_link_args(os(&[
            "a.o",
            "-o",
            "x",
            "--target",
            "nvptx64-nvidia-cuda",
            "-O9",
        ]))
        .unwrap_err();
        assert!(e.to_string().contains("-O9"), "{e}");
        let e = parse_link_args(os(&["a.o", "--target"])).unwrap_err();
        assert!(e.to_string().contains("needs a value"), "{e}");
    }

    #[test]
    fn response_files() {
        let args = parse_response_file("--export-symbol\nk\n/a\\ b/x.o\n-o\nC:\\\\out.ptx\n\n");
        assert_eq!(
            args,
            ["--export-symbol", "k", "/a b/x.o", "-o", "C:\\out.ptx"]
        );
        let dir = std::env::temp_dir().join(format!("gtap-rsp-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let f = dir.join("args");
        fs::write(&f, "--target\nnvptx64-nvidia-cuda\n-o\nout.ptx\nin.o\n").unwrap();
        let expanded = expand_response_files(vec![format!("@{}", f.display()).into()]).unwrap();
        let la = parse_link_args(expanded).unwrap();
        assert_eq!(la.objects, [PathBuf::from("in.o")]);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn crate_names_of_rlibs() {
        assert_eq!(
            rlib_crate_name(Path::new("/d/libcompiler_builtins-f087a3eac12c8552.rlib")).unwrap(),
            "compiler_builtins"
        );
        assert_eq!(
            rlib_crate_name(Path::new("libgtap_device.rlib")).unwrap(),
            "gtap_device"
        );
        assert!(rlib_crate_name(Path::new("foo.rlib")).is_none());
    }

    #[test]
    fn finds_kernels_in_ir() {
        let ir = "define ptx_kernel void @gtap_probe(ptr noundef %0) unnamed_addr #2 {\n\
                  define internal void @helper() {\n\
                  define dso_local ptx_kernel void @\"quoted name\"() {\n\
                  define void @annotated(i32 %x) {\n\
                  !0 = !{ptr @annotated, !\"kernel\", i32 1}\n\
                  !1 = !{ptr @other, !\"maxntidx\", i32 128}\n";
        assert_eq!(
            kernels_in_ir(ir),
            ["annotated", "gtap_probe", "quoted name"]
        );
    }
}
