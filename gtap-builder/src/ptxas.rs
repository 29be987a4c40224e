//! Assembling each kernel's PTX module to SASS (a cubin) at build time with NVIDIA's `ptxas`,
//! so that loading it needs no JIT compilation, and reporting what each kernel costs.
//!
//! `ptxas` is `GTAP_PTXAS`, else `.tools/bin/ptxas` of the workspace being built or of the gtap
//! checkout this builder was compiled from (what `scripts/setup` installs; the latter is how a
//! crate outside gtap's workspace, depending on a gtap checkout by path, finds it), else
//! `ptxas` on `PATH`, else `$CUDA_HOME/bin/ptxas`. The cubins
//! are built for `GTAP_CUBIN_ARCHS` (comma-separated, e.g. `sm_80,sm_90`; each at least the
//! PTX's architecture; `none` for PTX only), by default for the architecture of the build.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

// The register ceiling is the contract's, which the host also gives the driver's JIT. Only a
// kernel that `ptxas` gives more is assembled again under it: a ceiling makes `ptxas` use it
// all, even where it needs fewer.
use gtap_device::abi::MAX_REGISTERS;

use crate::Error;
use crate::arch::Arch;
use crate::env::{Env, is_executable, lossy, which};
use crate::parallel;
use crate::process::run_with_stderr;

/// Finds `ptxas` (see the module docs); `None` if there is none. `crate_dir` is where the
/// search for a workspace's `.tools/bin/ptxas` starts (it goes up from there).
pub fn find_ptxas(env: &dyn Env, crate_dir: &Path) -> Result<Option<PathBuf>, Error> {
    if let Some(v) = env.non_empty("GTAP_PTXAS") {
        let p = PathBuf::from(&v);
        return if is_executable(&p) {
            Ok(Some(p))
        } else {
            Err(Error::BadOverride {
                var: "GTAP_PTXAS",
                value: lossy(&v),
                problem: "not an executable file".into(),
            })
        };
    }
    // The gtap checkout holding this crate's sources (`gtap-builder/..`), wherever the device
    // crate is.
    let gtap_checkout = Path::new(env!("CARGO_MANIFEST_DIR")).parent();
    let in_workspace = crate_dir
        .ancestors()
        .chain(gtap_checkout)
        .map(|d| d.join(".tools/bin/ptxas"))
        .find(|p| is_executable(p));
    let in_cuda = env
        .non_empty("CUDA_HOME")
        .map(|h| PathBuf::from(h).join("bin/ptxas"))
        .filter(|p| is_executable(p));
    Ok(in_workspace.or_else(|| which(env, "ptxas")).or(in_cuda))
}

/// The architectures to assemble for: `GTAP_CUBIN_ARCHS`, else `ptx_arch` alone;
/// `GTAP_CUBIN_ARCHS=none` for none.
pub fn cubin_archs(env: &dyn Env, ptx_arch: &Arch) -> Result<Vec<Arch>, Error> {
    let Some(list) = env.non_empty("GTAP_CUBIN_ARCHS") else {
        return Ok(vec![ptx_arch.clone()]);
    };
    if list == "none" {
        return Ok(Vec::new());
    }
    let mut archs = Vec::new();
    for item in lossy(&list).split(',').filter(|s| !s.trim().is_empty()) {
        let arch = Arch::parse(item)?;
        if arch.number() < ptx_arch.number() {
            return Err(Error::InvalidArch {
                value: item.to_owned(),
                problem: format!(
                    "GTAP_CUBIN_ARCHS lists {arch}, older than the PTX's {ptx_arch}; PTX is \
                     assembled only for its own or a newer architecture (build with \
                     GTAP_ARCH={arch} instead)"
                ),
            });
        }
        if !archs.contains(&arch) {
            archs.push(arch);
        }
    }
    Ok(archs)
}

/// The architectures `ptxas` can assemble for (`ptxas --list-arch` prints their numbers);
/// `None` if it cannot tell (an older `ptxas`).
pub fn supported_archs(ptxas: &Path) -> Option<Vec<u32>> {
    let out = crate::process::run(ptxas, &["--list-arch"], None).ok()?;
    let list = numbers(&out);
    (!list.is_empty()).then_some(list)
}

/// What `ptxas -v` reported for one kernel.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernelResources {
    /// Registers per thread.
    pub registers: u32,
    /// Stack frame bytes.
    pub stack: u32,
    /// Bytes of register spill stores.
    pub spill_stores: u32,
    /// Bytes of register spill loads.
    pub spill_loads: u32,
}

/// One assembled module.
#[derive(Clone, Debug)]
pub struct Assembled {
    /// The PTX it was assembled from.
    pub ptx: PathBuf,
    /// The architecture.
    pub arch: Arch,
    /// The cubin written.
    pub cubin: PathBuf,
    /// Wall time of `ptxas`, in milliseconds.
    pub millis: u128,
    /// Each kernel's resources.
    pub kernels: BTreeMap<String, KernelResources>,
}

/// Assembles every `(ptx, arch)` job (`cubin` path next to the PTX, `<stem>.<arch>.cubin`) on up
/// to as many threads as there are CPUs, with source lines in the SASS when `line_info`
/// (`-lineinfo`). Returns the results in the order of `jobs`, or the first error.
pub fn assemble_all(
    ptxas: &Path,
    jobs: &[(PathBuf, Arch)],
    line_info: bool,
) -> Result<Vec<Assembled>, Error> {
    parallel::map(jobs, |(ptx, arch)| assemble(ptxas, ptx, arch, line_info))
        .into_iter()
        .collect()
}

fn assemble(ptxas: &Path, ptx: &Path, arch: &Arch, line_info: bool) -> Result<Assembled, Error> {
    let cubin = ptx.with_extension(format!("{arch}.cubin"));
    let start = Instant::now();
    let run = |ceiling: Option<u32>| {
        let arch_flag = format!("-arch={arch}");
        let ceiling_flag = ceiling.map(|r| format!("-maxrregcount={r}"));
        let mut args: Vec<&std::ffi::OsStr> = vec![arch_flag.as_ref()];
        if let Some(flag) = &ceiling_flag {
            args.push(flag.as_ref());
        }
        if line_info {
            args.push("-lineinfo".as_ref());
        }
        args.extend([
            "-v".as_ref(),
            ptx.as_os_str(),
            "-o".as_ref(),
            cubin.as_os_str(),
        ]);
        run_with_stderr(ptxas, &args, None).map(|(_, report)| parse_resources(&report))
    };
    let mut kernels = run(None)?;
    if kernels.values().any(|k| k.registers > MAX_REGISTERS) {
        kernels = run(Some(MAX_REGISTERS))?;
    }
    Ok(Assembled {
        ptx: ptx.to_owned(),
        arch: arch.clone(),
        cubin,
        millis: start.elapsed().as_millis(),
        kernels,
    })
}

/// Each entry function's resources from `ptxas -v` output.
pub(crate) fn parse_resources(report: &str) -> BTreeMap<String, KernelResources> {
    let mut out: BTreeMap<String, KernelResources> = BTreeMap::new();
    let mut entry: Option<String> = None;
    let mut properties_of: Option<String> = None;
    for line in report.lines() {
        if let Some(name) = quoted_after(line, "Compiling entry function") {
            out.entry(name.clone()).or_default();
            entry = Some(name);
        } else if let Some(rest) = line.split("Function properties for ").nth(1) {
            properties_of = Some(rest.trim().to_owned());
        } else if line.contains("bytes stack frame") {
            let n = numbers(line);
            if let Some(r) = properties_of.as_ref().and_then(|f| out.get_mut(f)) {
                r.stack = n.first().copied().unwrap_or(0);
                r.spill_stores = n.get(1).copied().unwrap_or(0);
                r.spill_loads = n.get(2).copied().unwrap_or(0);
            }
        } else if let Some(rest) = line.split("Used ").nth(1) {
            let registers = numbers(rest).first().copied().unwrap_or(0);
            if let Some(r) = entry.as_ref().and_then(|e| out.get_mut(e)) {
                r.registers = registers;
            }
        }
    }
    out
}

fn quoted_after(line: &str, marker: &str) -> Option<String> {
    let rest = &line[line.find(marker)? + marker.len()..];
    let start = rest.find('\'')? + 1;
    let end = start + rest[start..].find('\'')?;
    Some(rest[start..end].to_owned())
}

fn numbers(text: &str) -> Vec<u32> {
    text.split(|c: char| !c.is_ascii_digit())
        .filter_map(|w| w.parse().ok())
        .collect()
}

/// A table of the assembled modules, for a file next to them (not for cargo's output).
pub fn report(assembled: &[Assembled]) -> String {
    let mut s = String::from(
        "# ptxas per module: file, arch, ptxas ms, cubin bytes, kernel, registers, stack bytes, \
         spill stores, spill loads\n",
    );
    let mut total = 0;
    for a in assembled {
        total += a.millis;
        let file = a.ptx.file_name().map(lossy).unwrap_or_default();
        let bytes = std::fs::metadata(&a.cubin).map_or(0, |m| m.len());
        for (k, r) in &a.kernels {
            s.push_str(&format!(
                "{file}\t{}\t{}\t{bytes}\t{k}\t{}\t{}\t{}\t{}\n",
                a.arch, a.millis, r.registers, r.stack, r.spill_stores, r.spill_loads
            ));
        }
    }
    s.push_str(&format!("# total ptxas ms (sum over modules): {total}\n"));
    s
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    #[test]
    fn reads_ptxas_resource_reports() {
        let text = "ptxas info    : 0 bytes gmem\n\
ptxas info    : Compiling entry function 'fib_kernel' for 'sm_90'\n\
ptxas info    : Function properties for fib_kernel\n\
    48 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads\n\
ptxas info    : Used 96 registers, used 1 barriers, 48 bytes cumulative stack size\n\
ptxas info    : Function properties for helper\n\
    16 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n";
        let r = parse_resources(text);
        assert_eq!(
            r["fib_kernel"],
            KernelResources {
                registers: 96,
                stack: 48,
                spill_stores: 8,
                spill_loads: 4
            }
        );
        assert_eq!(r.len(), 1);
    }

    #[test]
    fn cubin_architectures() {
        let sm90 = Arch::parse("sm_90").unwrap();
        let none: HashMap<&str, &str> = HashMap::new();
        assert_eq!(
            cubin_archs(&none, &sm90).unwrap(),
            std::slice::from_ref(&sm90)
        );
        let two: HashMap<&str, &str> = [("GTAP_CUBIN_ARCHS", "sm_90, sm_100,sm_90")].into();
        let archs = cubin_archs(&two, &sm90).unwrap();
        assert_eq!(archs.len(), 2);
        let old: HashMap<&str, &str> = [("GTAP_CUBIN_ARCHS", "sm_80")].into();
        let e = cubin_archs(&old, &sm90).unwrap_err();
        assert!(e.to_string().contains("older"), "{e}");
        let none: HashMap<&str, &str> = [("GTAP_CUBIN_ARCHS", "none")].into();
        assert!(cubin_archs(&none, &sm90).unwrap().is_empty());
    }

    #[test]
    fn ptxas_override_must_exist() {
        let bad: HashMap<&str, &str> = [("GTAP_PTXAS", "/nonexistent/ptxas")].into();
        assert!(find_ptxas(&bad, Path::new("/")).is_err());
    }
}
