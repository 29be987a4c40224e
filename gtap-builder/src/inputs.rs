//! The linker's inputs: the crate's objects and the members of its archives, all of which
//! must be LLVM bitcode, split into what is linked whole and what only as needed.

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};

use crate::Error;
use crate::args::LinkArgs;
use crate::env::lossy;
use crate::process::run;
use crate::toolchain::LlvmTools;

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

/// Bitcode files to link: `whole` (the crate and its non-sysroot dependencies, linked
/// entirely so that kernels defined in a dependency are never lost) and `lazy` (the sysroot's
/// crates, linked only as far as needed).
pub(crate) struct Inputs {
    pub(crate) whole: Vec<PathBuf>,
    pub(crate) lazy: Vec<PathBuf>,
}

/// Checks and gathers the inputs, extracting archives into `work`.
pub(crate) fn gather(args: &LinkArgs, tools: &LlvmTools, work: &Path) -> Result<Inputs, Error> {
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

    Ok(Inputs { whole, lazy })
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
