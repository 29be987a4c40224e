//! The linker's command line: what rustc passes to an `llvm-bitcode-linker`-flavored linker
//! for `nvptx64-nvidia-cuda`, possibly through an `@response-file`.

use std::ffi::OsString;
use std::fs;
use std::path::PathBuf;

use crate::Error;
use crate::env::lossy;

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
