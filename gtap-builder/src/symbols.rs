//! Symbols of bitcode files, from `llvm-nm`.

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use crate::Error;
use crate::process::run;
use crate::toolchain::LlvmTools;

/// Functions the CUDA driver provides to PTX modules.
pub(crate) const CUDA_RUNTIME_SYMBOLS: &[&str] = &["vprintf", "malloc", "free", "__assertfail"];

/// Undefined symbols reported by `llvm-nm -u`.
pub(crate) fn undefined_symbols(
    tools: &LlvmTools,
    module: &Path,
) -> Result<BTreeSet<String>, Error> {
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
pub(crate) fn defined_symbols(
    tools: &LlvmTools,
    files: &[PathBuf],
) -> Result<BTreeSet<String>, Error> {
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

/// Every symbol a bitcode file defines, internal ones included.
pub(crate) fn all_defined_symbols(
    tools: &LlvmTools,
    module: &Path,
) -> Result<BTreeSet<String>, Error> {
    let out = run(
        &tools.llvm_nm,
        &[
            OsStr::new("--defined-only"),
            OsStr::new("-j"),
            module.as_os_str(),
        ],
        None,
    )?;
    Ok(out
        .lines()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect())
}
