//! One PTX module per kernel. Every task record holds a pointer to its task function's poll
//! shim, and `ptxas` must assume that an indirect call may reach any address-taken function of
//! its module; so a module holding all kernels gives every kernel the code of every task
//! function (slow to assemble, more registers). Here each kernel K gets its own module: the
//! linked module with everything but K (and the crate's non-kernel exports) internalized,
//! unreachable code dropped (`globaldce`), optimized, and written as PTX by `llc`. The poll
//! shims of task functions K never spawns are unreachable and vanish.
//!
//! A kernel with a register limit (`#[gtap::kernel(max_registers = R)]`) gets the directive
//! `.maxnreg R` in its PTX entry, which `ptxas` and the driver's JIT both obey.
//!
//! The kernels are processed in parallel, one `opt`/`llc` pipeline per thread.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

use crate::Error;
use crate::args::LinkArgs;
use crate::ir::{poll_shim_task, record_task};
use crate::parallel;
use crate::process::run;
use crate::symbols::{CUDA_RUNTIME_SYMBOLS, all_defined_symbols, undefined_symbols};
use crate::toolchain::LlvmTools;
use crate::unrolling::{UNROLL_CHECKED_LOOPS, keep_rolled};

/// The module of one kernel, as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelModule {
    /// The kernel.
    pub kernel: String,
    /// Its PTX file.
    pub ptx: PathBuf,
    /// Task functions whose code the module holds, as (crate, function); `None` when one of
    /// its poll shims could not be read, so the module may hold any of the crate's.
    pub tasks: Option<Vec<(String, String)>>,
}

/// What every kernel's pipeline shares.
pub(crate) struct Split<'a> {
    pub(crate) args: &'a LinkArgs,
    pub(crate) tools: &'a LlvmTools,
    /// The fully linked module.
    pub(crate) linked: &'a Path,
    /// Symbols kept visible in every module besides its kernel (exports that are no kernels).
    pub(crate) shared_exports: &'a [String],
    /// Kernels with a register limit, and the limit.
    pub(crate) register_limits: &'a BTreeMap<String, u32>,
    /// Functions that call themselves, whose loops stay rolled ([`crate::unrolling`]).
    pub(crate) recursive: &'a [String],
    /// Where the intermediate bitcode goes.
    pub(crate) work: &'a Path,
    /// Where the PTX files go.
    pub(crate) out_dir: &'a Path,
}

impl Split<'_> {
    /// Builds the module of every kernel, on up to as many threads as there are CPUs. Returns
    /// them in the order of `kernels`, or the first error.
    pub(crate) fn run(&self, kernels: &[String]) -> Result<Vec<KernelModule>, Error> {
        parallel::map(kernels, |k| self.one(k))
            .into_iter()
            .collect()
    }

    fn one(&self, kernel: &str) -> Result<KernelModule, Error> {
        let stem = file_stem(kernel);
        let api = self.work.join(format!("{stem}.api"));
        let mut keep: Vec<&str> = vec![kernel];
        keep.extend(self.shared_exports.iter().map(String::as_str));
        let list: String = keep.iter().map(|s| format!("{s}\n")).collect();
        fs::write(&api, list).map_err(|e| Error::io("write", &api, e))?;
        let mut api_arg = OsString::from("-internalize-public-api-file=");
        api_arg.push(&api);

        let optimized = self.work.join(format!("{stem}.bc"));
        let passes = format!(
            "-passes=internalize,globaldce,default<O{}>",
            self.args.opt_level.to_uppercase()
        )
        .replace("<OS>", "<Os>")
        .replace("<OZ>", "<Oz>");
        let mut opt_args: Vec<OsString> = vec![passes.into(), UNROLL_CHECKED_LOOPS.into()];
        opt_args.extend(self.recursive.iter().map(|f| keep_rolled(f).into()));
        opt_args.extend([
            api_arg,
            self.linked.into(),
            "-o".into(),
            optimized.clone().into(),
        ]);
        run(&self.tools.opt, &opt_args, None)?;

        // Nothing may remain undefined but what the driver provides.
        let unresolved: Vec<String> = undefined_symbols(self.tools, &optimized)?
            .into_iter()
            .filter(|s| !CUDA_RUNTIME_SYMBOLS.contains(&s.as_str()))
            .collect();
        if !unresolved.is_empty() {
            return Err(Error::UnresolvedSymbols {
                symbols: unresolved,
            });
        }
        let tasks = tasks_in(&all_defined_symbols(self.tools, &optimized)?);

        let ptx = self.out_dir.join(format!("{stem}.ptx"));
        self.llc(&optimized, &ptx)?;
        if let Some(&n) = self.register_limits.get(kernel) {
            let text = fs::read_to_string(&ptx).map_err(|e| Error::io("read", &ptx, e))?;
            let limited =
                limit_registers(&text, kernel, n).ok_or_else(|| Error::BadToolOutput {
                    command: format!("llc {}", optimized.display()),
                    problem: format!("no `.entry {kernel}(..)` in the PTX it wrote"),
                })?;
            fs::write(&ptx, limited).map_err(|e| Error::io("write", &ptx, e))?;
        }
        Ok(KernelModule {
            kernel: kernel.to_owned(),
            ptx,
            tasks,
        })
    }

    fn llc(&self, input: &Path, output: &Path) -> Result<(), Error> {
        let args = self.args;
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
        a.extend([input.into(), "-o".into(), output.into()]);
        run(&self.tools.llc, &a, None)?;
        Ok(())
    }
}

/// `ptx` with the directive `.maxnreg n` after the parameter list of the entry `kernel`
/// (where PTX puts an entry's performance-tuning directives); `None` without that entry.
pub(crate) fn limit_registers(ptx: &str, kernel: &str, n: u32) -> Option<String> {
    let head = format!(".entry {kernel}(");
    let at = ptx
        .match_indices(&head)
        .map(|(i, _)| i)
        .find(|&i| ptx[..i].ends_with(' ') || ptx[..i].ends_with('\n'))?;
    // The entry's first line ends the list itself (`.entry k()`), or a line starting with `)`
    // does (LLVM writes one parameter a line).
    let mut end = at;
    for (i, line) in ptx[at..].split_inclusive('\n').enumerate() {
        end += line.len();
        if (i == 0 && line.contains(')')) || (i > 0 && line.starts_with(')')) {
            let mut out = String::with_capacity(ptx.len() + 16);
            out.push_str(&ptx[..end]);
            if !out.ends_with('\n') {
                out.push('\n');
            }
            out.push_str(&format!(".maxnreg {n}\n"));
            out.push_str(&ptx[end..]);
            return Some(out);
        }
    }
    None
}

/// The task functions whose poll shims are among `symbols`, or `None` if a poll shim's name
/// could not be read.
fn tasks_in(symbols: &BTreeSet<String>) -> Option<Vec<(String, String)>> {
    let mut tasks = BTreeSet::new();
    for s in symbols.iter().filter(|s| s.contains("9poll_shim")) {
        tasks.insert(poll_shim_task(s)?);
    }
    Some(tasks.into_iter().collect())
}

/// Whether the record `symbol` belongs to one of `tasks` (`None`: any task function).
pub(crate) fn holds_record(tasks: Option<&[(String, String)]>, symbol: &str) -> bool {
    match (tasks, record_task(symbol)) {
        (None, _) => true,
        (Some(tasks), Some((krate, function))) => {
            tasks.iter().any(|(k, f)| k == krate && f == function)
        }
        (Some(_), None) => false,
    }
}

/// A file name for a kernel's module: its name, with characters other than letters, digits,
/// `_`, `-` and `.` replaced by `_`.
pub(crate) fn file_stem(kernel: &str) -> String {
    kernel
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The `-mattr` features for `llc`: the caller's, plus the lowest PTX ISA version that has every
/// instruction the runtime uses where LLVM would pick an older one: `nanosleep` needs PTX 6.3
/// (LLVM picks 6.0 for `sm_70` and 6.1 for `sm_72`), and on `sm_90`/`sm_90a` the one-way fences
/// `fence.release`/`fence.acquire` need PTX 8.6 (LLVM picks 7.8; later architectures start at
/// 8.6 or above). A PTX version the caller chose is kept (one below 8.6 on sm_90 makes `ptxas`
/// reject those fences).
fn ptx_features(cpu: Option<&str>, features: Option<&str>) -> Option<String> {
    let needed = match cpu {
        Some("sm_70" | "sm_72") => Some("+ptx63"),
        Some("sm_90" | "sm_90a") => Some("+ptx86"),
        _ => None,
    };
    let has_ptx = features.is_some_and(|f| f.contains("ptx"));
    match (features, needed.filter(|_| !has_ptx)) {
        (Some(f), Some(n)) => Some(format!("{f},{n}")),
        (None, Some(n)) => Some(n.into()),
        (f, None) => f.map(str::to_string),
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
        assert_eq!(ptx_features(Some("sm_90"), None).as_deref(), Some("+ptx86"));
        assert_eq!(
            ptx_features(Some("sm_90a"), Some("+ptx88")).as_deref(),
            Some("+ptx88")
        );
        assert_eq!(ptx_features(Some("sm_80"), None), None);
        assert_eq!(ptx_features(Some("sm_100"), None), None);
    }

    #[test]
    fn tasks_of_a_module_and_their_records() {
        let shim = |c: &str, f: &str| {
            format!(
                "_RINvNtCsA_11gtap_device6record9poll_shimNtCsB_{}{c}{}{f}NCE",
                c.len(),
                f.len()
            )
        };
        let symbols: BTreeSet<String> = [
            shim("ex", "fib"),
            "fib_kernel".to_string(),
            "helper".to_string(),
        ]
        .into();
        let tasks = tasks_in(&symbols).unwrap();
        assert_eq!(tasks, [("ex".to_string(), "fib".to_string())]);
        assert!(holds_record(Some(&tasks), "__gtap_record_ex$fib$01"));
        assert!(!holds_record(Some(&tasks), "__gtap_record_ex$nqueens$02"));
        assert!(holds_record(None, "__gtap_record_ex$nqueens$02"));
        // An unreadable shim name: the module may hold anything.
        let odd: BTreeSet<String> = ["_RINvNtCsA_11gtap_device6record9poll_shimBx_E".into()].into();
        assert_eq!(tasks_in(&odd), None);
    }

    #[test]
    fn a_register_limit_follows_the_entrys_parameters() {
        let ptx = ".visible .entry other_kernel(\n\t.param .u32 other_kernel_param_0\n)\n{\n}\n\
                   .visible .entry spmv(\n\t.param .u64 spmv_param_0,\n\t.param .u32 spmv_param_1\n\
                   )                                       // @spmv\n{\n\tret;\n}\n\
                   .visible .entry probe()\n{\n}\n";
        let limited = limit_registers(ptx, "spmv", 80).unwrap();
        assert_eq!(
            limited,
            ptx.replace("// @spmv\n{", "// @spmv\n.maxnreg 80\n{"),
            "{limited}"
        );
        let no_params = limit_registers(ptx, "probe", 64).unwrap();
        assert!(
            no_params.contains(".entry probe()\n.maxnreg 64\n{"),
            "{no_params}"
        );
        // Only the named entry, and only a whole name.
        assert_eq!(limited.matches(".maxnreg").count(), 1);
        assert_eq!(limit_registers(ptx, "kernel", 64), None);
        assert_eq!(limit_registers(ptx, "missing", 64), None);
    }

    #[test]
    fn module_file_names() {
        assert_eq!(file_stem("fib_kernel"), "fib_kernel");
        assert_eq!(file_stem("a b/c"), "a_b_c");
    }
}
