//! The linker on hand-written bitcode, with the real LLVM tools of the device toolchain.
//! Skipped when they are missing, unless `GTAP_REQUIRE_DEVICE=1` (then a failure).

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use gtap_builder::{
    Env, Error, LinkArgs, LlvmTools, Manifest, ProcessEnv, Search, is_executable, link,
    linker_main, parse_link_args,
};

fn tools() -> Option<(LlvmTools, PathBuf)> {
    let search = Search::new(&ProcessEnv);
    let found = search
        .device_toolchain()
        .and_then(|tc| Ok((search.llvm_tools(&tc)?, tc.rustc)));
    match found {
        Ok((tools, rustc)) => Some((tools, rustc)),
        Err(e) if ProcessEnv.flag("GTAP_REQUIRE_DEVICE") => {
            panic!("GTAP_REQUIRE_DEVICE=1 but the device toolchain is unusable: {e}")
        }
        Err(e) => {
            eprintln!("skipped: no device toolchain ({e})");
            None
        }
    }
}

fn llvm_as(tools: &LlvmTools) -> PathBuf {
    let dir = tools.llvm_link.parent().unwrap();
    let suffix = tools
        .llvm_link
        .file_name()
        .unwrap()
        .to_string_lossy()
        .trim_start_matches("llvm-link")
        .to_owned();
    let p = dir.join(format!("llvm-as{suffix}"));
    assert!(
        is_executable(&p),
        "no llvm-as next to llvm-link: {}",
        p.display()
    );
    p
}

const HEADER: &str = "target datalayout = \"e-p3:32:32-p4:32:32-p5:32:32-p6:32:32-p7:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64\"\ntarget triple = \"nvptx64-nvidia-cuda\"\n";

fn bitcode(tools: &LlvmTools, dir: &Path, name: &str, ir: &str) -> PathBuf {
    let ll = dir.join(format!("{name}.ll"));
    let bc = dir.join(name);
    fs::write(&ll, format!("{HEADER}{ir}")).unwrap();
    let st = Command::new(llvm_as(tools))
        .arg(&ll)
        .arg("-o")
        .arg(&bc)
        .status()
        .unwrap();
    assert!(st.success(), "llvm-as {name}");
    bc
}

fn rlib(tools: &LlvmTools, dir: &Path, file: &str, members: &[(&str, &str)]) -> PathBuf {
    let mdir = dir.join(format!("{file}.members"));
    fs::create_dir_all(&mdir).unwrap();
    let mut names = vec!["lib.rmeta".to_owned()];
    fs::write(mdir.join("lib.rmeta"), b"rust metadata, not bitcode").unwrap();
    for (name, ir) in members {
        bitcode(tools, &mdir, name, ir);
        names.push(name.to_string());
    }
    let out = dir.join(file);
    let st = Command::new(&tools.llvm_ar)
        .arg("rc")
        .arg(&out)
        .args(&names)
        .current_dir(&mdir)
        .status()
        .unwrap();
    assert!(st.success());
    out
}

fn args(objects: Vec<PathBuf>, archives: Vec<PathBuf>, exports: &[&str], out: &Path) -> LinkArgs {
    LinkArgs {
        objects,
        archives,
        exports: exports.iter().map(|s| s.to_string()).collect(),
        target: "nvptx64-nvidia-cuda".into(),
        target_cpu: Some("sm_70".into()),
        output: out.to_owned(),
        opt_level: "3".into(),
        ..LinkArgs::default()
    }
}

/// A crate with a kernel that calls into a dependency crate, which defines a kernel of its own
/// that rustc did not list; "core" needs two rounds of `--only-needed`.
fn fixture(tools: &LlvmTools, dir: &Path) -> (PathBuf, Vec<PathBuf>) {
    let main = bitcode(
        tools,
        dir,
        "app.app.1-cgu.0.rcgu.o",
        "declare i32 @dep_helper(i32)\n\
         define ptx_kernel void @main_kernel(ptr %out) {\n\
           %v = call i32 @dep_helper(i32 3)\n  store i32 %v, ptr %out\n  ret void\n}\n",
    );
    let dep = rlib(
        tools,
        dir,
        "libdepcrate-0123abcd.rlib",
        &[(
            "depcrate-0123abcd.depcrate.1-cgu.0.rcgu.o",
            "declare i32 @core_first(i32)\n\
             define i32 @dep_helper(i32 %x) {\n  %r = call i32 @core_first(i32 %x)\n  ret i32 %r\n}\n\
             define ptx_kernel void @dep_kernel(ptr %out) {\n  store i32 7, ptr %out\n  ret void\n}\n\
             define i32 @dep_unused() {\n  ret i32 1\n}\n",
        )],
    );
    let core = rlib(
        tools,
        dir,
        "libcore-89abcdef.rlib",
        &[
            (
                "core-89abcdef.core.1-cgu.00.rcgu.o",
                "define i32 @core_second(i32 %x) {\n  %r = mul i32 %x, 5\n  ret i32 %r\n}\n\
                 declare void @nowhere()\n\
                 define void @core_unused() {\n  call void @nowhere()\n  ret void\n}\n",
            ),
            (
                "core-89abcdef.core.1-cgu.01.rcgu.o",
                "declare i32 @core_second(i32)\n\
                 define i32 @core_first(i32 %x) {\n  %a = call i32 @core_second(i32 %x)\n  %r = add i32 %a, 1\n  ret i32 %r\n}\n",
            ),
        ],
    );
    (main, vec![dep, core])
}

#[test]
fn links_crate_dependencies_and_core_to_ptx_keeping_every_kernel() {
    let Some((tools, _)) = tools() else { return };
    let t = tempfile::tempdir().unwrap();
    let (main, archives) = fixture(&tools, t.path());
    let out = t.path().join("app.ptx");
    let report = link(
        &args(vec![main], archives, &["main_kernel"], &out),
        &tools,
        false,
    )
    .unwrap();
    assert_eq!(report.kernels, ["dep_kernel", "main_kernel"]);
    assert_eq!(report.unlisted_kernels, ["dep_kernel"]);
    // One module per kernel, named by the manifest that the output file points to.
    let manifest = Manifest::read(&out).unwrap();
    assert_eq!(manifest, report.manifest);
    assert_eq!(manifest.target_cpu, "sm_70");
    let kernels: Vec<&str> = manifest
        .modules
        .iter()
        .map(|m| m.kernels[0].as_str())
        .collect();
    assert_eq!(kernels, ["dep_kernel", "main_kernel"]);
    let main_ptx = fs::read_to_string(&manifest.modules[1].ptx).unwrap();
    let dep_ptx = fs::read_to_string(&manifest.modules[0].ptx).unwrap();
    for ptx in [&main_ptx, &dep_ptx] {
        assert!(ptx.contains(".target sm_70"), "{ptx}");
        // Internalized and dropped, or inlined: nothing else stays visible.
        assert!(!ptx.contains(".visible .func"), "{ptx}");
        assert!(
            !ptx.contains("dep_unused") && !ptx.contains("nowhere"),
            "{ptx}"
        );
    }
    // Each module holds its own kernel only.
    assert!(main_ptx.contains(".entry main_kernel"), "{main_ptx}");
    assert!(!main_ptx.contains("dep_kernel"), "{main_ptx}");
    assert!(dep_ptx.contains(".entry dep_kernel"), "{dep_ptx}");
    assert!(!dep_ptx.contains("main_kernel"), "{dep_ptx}");
    // 3 * 5 + 1, folded across the crates.
    assert!(main_ptx.contains("16"), "{main_ptx}");
    assert!(!out.with_extension("ptx.gtap-link").exists());
}

#[test]
fn unresolved_symbols_fail_the_link() {
    let Some((tools, _)) = tools() else { return };
    let t = tempfile::tempdir().unwrap();
    let main = bitcode(
        &tools,
        t.path(),
        "bad.o",
        "declare i32 @no_gpu_impl(i32)\n\
         define ptx_kernel void @k(ptr %out) {\n\
           %v = call i32 @no_gpu_impl(i32 3)\n  store i32 %v, ptr %out\n  ret void\n}\n",
    );
    let out = t.path().join("bad.ptx");
    let err = link(&args(vec![main], vec![], &["k"], &out), &tools, false).unwrap_err();
    assert!(matches!(err, Error::UnresolvedSymbols { .. }), "{err:?}");
    assert!(err.to_string().contains("no_gpu_impl"), "{err}");
}

#[test]
fn non_bitcode_input_is_refused() {
    let Some((tools, _)) = tools() else { return };
    let t = tempfile::tempdir().unwrap();
    let obj = t.path().join("native.o");
    fs::write(&obj, b"\x7fELF not bitcode").unwrap();
    let err = link(
        &args(vec![obj], vec![], &[], &t.path().join("x.ptx")),
        &tools,
        false,
    )
    .unwrap_err();
    assert!(err.to_string().contains("is not LLVM bitcode"), "{err}");
}

#[test]
fn linker_main_parses_rustc_arguments_and_links() {
    let Some((tools, _)) = tools() else { return };
    let t = tempfile::tempdir().unwrap();
    let (main, archives) = fixture(&tools, t.path());
    let out = t.path().join("deps/app.ptx");
    fs::create_dir_all(out.parent().unwrap()).unwrap();
    let mut a: Vec<OsString> = vec!["--export-symbol".into(), "main_kernel".into(), main.into()];
    a.extend(archives.into_iter().map(OsString::from));
    for s in [
        "-L",
        "/nonexistent",
        "--target",
        "nvptx64-nvidia-cuda",
        "--target-cpu",
        "sm_90",
        "-o",
    ] {
        a.push(s.into());
    }
    a.push(out.clone().into());
    a.extend(["-O3".into(), "--debug".into()]);
    assert!(parse_link_args(a.clone()).is_ok());
    match linker_main(a) {
        Ok(()) => {
            let manifest = Manifest::read(&out).unwrap();
            assert_eq!(manifest.target_cpu, "sm_90");
            let ptx = fs::read_to_string(&manifest.modules[0].ptx).unwrap();
            assert!(ptx.contains(".target sm_90"), "{ptx}");
            assert!(ptx.contains(".entry dep_kernel"), "{ptx}");
        }
        // linker_main takes the rustc from GTAP_LINK_RUSTC, GTAP_DEVICE_RUSTC, RUSTC or PATH;
        // in a plain `cargo test` that is the host rustc, which may use another LLVM: that
        // must be reported as such.
        Err(e) => assert!(e.is_toolchain_missing(), "{e}"),
    }
}
