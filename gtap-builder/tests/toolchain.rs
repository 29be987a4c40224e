//! Toolchain discovery against made-up environments: fake `rustc`/LLVM tools in temporary
//! directories, no system locations. Runs without a GPU or a device toolchain.

use std::collections::HashMap;
use std::ffi::OsString;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use gtap_builder::{Error, LLVM_TOOL_NAMES, LlvmVersion, Search};

/// Tests write scripts and run them; one at a time, so that no test forks while another holds a
/// script open for writing (which makes exec fail with "text file busy").
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

fn script(path: &Path, body: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
}

/// A fake rustc in `dir/bin` whose sysroot is `dir` (with the library source if `src`).
fn fake_rustc(dir: &Path, llvm: &str, src: bool, cargo: bool) -> PathBuf {
    let rustc = dir.join("bin/rustc");
    script(
        &rustc,
        &format!(
            "case \"$1\" in\n\
             -vV) printf 'rustc 1.96.0\\nbinary: rustc\\nhost: x86_64-unknown-linux-gnu\\nrelease: 1.96.0\\nLLVM version: {llvm}\\n' ;;\n\
             --print) echo '{}' ;;\n\
             *) exit 1 ;;\nesac",
            dir.display()
        ),
    );
    if src {
        fs::create_dir_all(dir.join("lib/rustlib/src/rust/library/core")).unwrap();
    }
    if cargo {
        script(&dir.join("bin/cargo"), "exit 0");
    }
    rustc
}

fn fake_llvm(dir: &Path, version: &str, suffix: &str) {
    for t in LLVM_TOOL_NAMES {
        script(
            &dir.join(format!("{t}{suffix}")),
            &format!("echo 'Debian LLVM version {version}'"),
        );
    }
}

fn env(pairs: &[(&str, &Path)]) -> HashMap<String, OsString> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.as_os_str().to_owned()))
        .collect()
}

#[test]
fn nothing_installed_names_what_to_install() {
    let _serial = serial();
    let t = tempfile::tempdir().unwrap();
    let e = env(&[("PATH", t.path())]);
    let err = Search::env_only(&e).device_toolchain().unwrap_err();
    assert!(matches!(err, Error::NoDeviceToolchain { .. }), "{err:?}");
    assert!(err.is_toolchain_missing());
    let msg = err.to_string();
    assert!(
        msg.contains("rustc-web cargo-web rust-web-src llvm-22"),
        "{msg}"
    );
    assert!(msg.contains("scripts/setup"), "{msg}");
    assert!(msg.contains("rustc on PATH: none"), "{msg}");
}

#[test]
fn rustc_without_library_source_is_skipped_with_reason() {
    let _serial = serial();
    let t = tempfile::tempdir().unwrap();
    fake_rustc(t.path(), "22.1.8", false, true);
    let e = env(&[("PATH", &t.path().join("bin"))]);
    let err = Search::env_only(&e).device_toolchain().unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("no library source"), "{msg}");
    assert!(msg.contains("rustc 1.96.0"), "{msg}");
}

#[test]
fn rustc_with_library_source_is_found_with_its_cargo() {
    let _serial = serial();
    let t = tempfile::tempdir().unwrap();
    let rustc = fake_rustc(t.path(), "22.1.8", true, true);
    let e = env(&[("PATH", &t.path().join("bin"))]);
    let tc = Search::env_only(&e).device_toolchain().unwrap();
    assert_eq!(tc.rustc, rustc);
    assert_eq!(tc.cargo, t.path().join("bin/cargo"));
    assert_eq!(tc.info.llvm.major, 22);
    assert_eq!(tc.sysroot, t.path());
}

#[test]
fn missing_cargo_is_reported() {
    let _serial = serial();
    let t = tempfile::tempdir().unwrap();
    fake_rustc(t.path(), "22.1.8", true, false);
    let e = env(&[("PATH", &t.path().join("bin"))]);
    let err = Search::env_only(&e).device_toolchain().unwrap_err();
    assert!(matches!(err, Error::NoDeviceCargo { .. }), "{err:?}");
    assert!(err.is_toolchain_missing());
    assert!(err.to_string().contains("GTAP_DEVICE_CARGO"), "{err}");
}

#[test]
fn broken_override_is_a_hard_error() {
    let _serial = serial();
    let t = tempfile::tempdir().unwrap();
    let e = env(&[
        ("PATH", t.path()),
        ("GTAP_DEVICE_RUSTC", &t.path().join("nope/rustc")),
    ]);
    let err = Search::env_only(&e).device_toolchain().unwrap_err();
    assert!(
        matches!(
            err,
            Error::BadOverride {
                var: "GTAP_DEVICE_RUSTC",
                ..
            }
        ),
        "{err:?}"
    );
    assert!(!err.is_toolchain_missing());
    assert!(err.to_string().contains("unset GTAP_DEVICE_RUSTC"), "{err}");

    // An override without the library source is refused too.
    let rustc = fake_rustc(&t.path().join("tc"), "22.1.8", false, true);
    let e = env(&[("PATH", t.path()), ("GTAP_DEVICE_RUSTC", &rustc)]);
    let err = Search::env_only(&e).device_toolchain().unwrap_err();
    assert!(err.to_string().contains("library source"), "{err}");
}

#[test]
fn override_and_cargo_override_are_used() {
    let _serial = serial();
    let t = tempfile::tempdir().unwrap();
    let rustc = fake_rustc(&t.path().join("tc"), "22.1.8", true, false);
    let cargo = t.path().join("elsewhere/cargo");
    script(&cargo, "exit 0");
    let e = env(&[
        ("PATH", t.path()),
        ("GTAP_DEVICE_RUSTC", &rustc),
        ("GTAP_DEVICE_CARGO", &cargo),
    ]);
    let tc = Search::env_only(&e).device_toolchain().unwrap();
    assert_eq!((tc.rustc, tc.cargo), (rustc, cargo));
}

fn want(v: &str) -> LlvmVersion {
    LlvmVersion::parse(v).unwrap()
}

#[test]
fn llvm_version_mismatch_is_explained() {
    let _serial = serial();
    let t = tempfile::tempdir().unwrap();
    fake_llvm(&t.path().join("llvm14"), "14.0.6", "");
    let e = env(&[
        ("PATH", t.path()),
        ("GTAP_LLVM_BIN", &t.path().join("llvm14")),
    ]);
    let err = Search::env_only(&e)
        .llvm_tools_for(Path::new("/usr/bin/rustc"), &want("22.1.8"), None)
        .unwrap_err();
    assert!(matches!(err, Error::LlvmVersionMismatch { .. }), "{err:?}");
    assert!(err.is_toolchain_missing());
    let msg = err.to_string();
    assert!(msg.contains("uses LLVM 22.1.8"), "{msg}");
    assert!(msg.contains("is LLVM 14.0.6"), "{msg}");
    assert!(msg.contains("llvm-22"), "{msg}");

    // The same tools found unsuffixed on PATH: the mismatch is the error, not "none found".
    let e = env(&[("PATH", &t.path().join("llvm14"))]);
    let err = Search::env_only(&e)
        .llvm_tools_for(Path::new("/usr/bin/rustc"), &want("22.1.8"), None)
        .unwrap_err();
    assert!(matches!(err, Error::LlvmVersionMismatch { .. }), "{err:?}");
}

#[test]
fn llvm_tools_found_by_suffix_on_path_and_in_llvm_roots() {
    let _serial = serial();
    let t = tempfile::tempdir().unwrap();
    // Old unsuffixed tools and the right suffixed ones, as Debian installs them in /usr/bin.
    fake_llvm(&t.path().join("bin"), "14.0.6", "");
    fake_llvm(&t.path().join("bin"), "22.1.8", "-22");
    let e = env(&[("PATH", &t.path().join("bin"))]);
    let tools = Search::env_only(&e)
        .llvm_tools_for(Path::new("rustc"), &want("22.1.8"), None)
        .unwrap();
    assert_eq!(tools.llc, t.path().join("bin/llc-22"));
    assert_eq!(tools.version.major, 22);

    // /usr/lib/llvm-22/bin comes first.
    fake_llvm(&t.path().join("lib/llvm-22/bin"), "22.1.8", "");
    let mut s = Search::env_only(&e);
    s.llvm_roots = vec![t.path().join("lib")];
    let tools = s
        .llvm_tools_for(Path::new("rustc"), &want("22.1.8"), None)
        .unwrap();
    assert_eq!(tools.llvm_link, t.path().join("lib/llvm-22/bin/llvm-link"));
}

#[test]
fn no_llvm_tools_lists_what_was_tried() {
    let _serial = serial();
    let t = tempfile::tempdir().unwrap();
    fake_llvm(&t.path().join("partial"), "22.1.8", "");
    fs::remove_file(t.path().join("partial/llc")).unwrap();
    let e = env(&[("PATH", &t.path().join("partial"))]);
    let err = Search::env_only(&e)
        .llvm_tools_for(Path::new("rustc"), &want("22.1.8"), None)
        .unwrap_err();
    assert!(
        matches!(err, Error::NoLlvmTools { major: 22, .. }),
        "{err:?}"
    );
    let msg = err.to_string();
    assert!(msg.contains("missing llc"), "{msg}");
    assert!(
        msg.contains("install the Debian package `llvm-22`"),
        "{msg}"
    );

    let e = env(&[
        ("PATH", t.path()),
        ("GTAP_LLVM_BIN", &t.path().join("partial")),
    ]);
    let err = Search::env_only(&e)
        .llvm_tools_for(Path::new("rustc"), &want("22.1.8"), None)
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::BadOverride {
                var: "GTAP_LLVM_BIN",
                ..
            }
        ),
        "{err:?}"
    );
}
