//! Draws the charts of a real trace: fib on the CPU executor, traced, written as Chrome JSON by
//! gtap-host, read back and drawn by `gtap-profile` (the library and the command).

use std::path::{Path, PathBuf};
use std::process::Command;

use gtap_examples::fib;
use gtap_host::{Config, CpuMode, Runtime};
use gtap_profile::Profile;

/// A fresh directory for this test's files.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gtap-profile-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Writes the trace of a traced fib(18) launch into `dir`; returns its path and the polls its
/// steps ran (all polls but those of children polled at once inside them).
fn write_trace(dir: &Path) -> (PathBuf, u64) {
    let config = Config::new().trace_events_per_warp(1 << 14);
    let mut rt = Runtime::cpu(CpuMode::Parallel, &config).unwrap();
    let launch = rt.launch(fib::fib_kernel, (18,)).unwrap();
    assert_eq!(launch.result, fib::fib_seq(18));
    let path = dir.join("fib.trace.json");
    let file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    launch.trace.unwrap().write_chrome_json(file).unwrap();
    let s = &launch.stats;
    (path, s.tasks_polled - s.tasks_run_at_once)
}

/// A PNG's width and height, from its header.
fn png_size(path: &Path) -> (u32, u32) {
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(&bytes[1..4], b"PNG", "{} is a PNG", path.display());
    let word = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
    (word(16), word(20))
}

fn check_charts(files: &[PathBuf]) {
    let names: Vec<_> = files
        .iter()
        .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["timeline.png", "utilization.png", "durations.png"]);
    for f in files {
        let (w, h) = png_size(f);
        assert!(
            (800..=2000).contains(&w) && (300..=2000).contains(&h),
            "{f:?}: {w} x {h}"
        );
        assert!(
            std::fs::metadata(f).unwrap().len() > 4096,
            "{f:?} has content"
        );
    }
}

#[test]
fn a_cpu_executor_trace_reads_back_and_draws() {
    let dir = scratch("lib");
    let (json, in_steps) = write_trace(&dir);
    let profile = Profile::from_json(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(profile.kernel, "fib_kernel");
    assert_eq!(profile.dropped, 0);
    let polls: u64 = profile.runs().map(|r| u64::from(r.tasks)).sum();
    assert_eq!(polls, in_steps);
    assert!(profile.runs().all(|r| r.end_us() <= profile.span_us + 1e-3));
    let files = gtap_profile::draw_file(
        &json,
        &dir.join("charts"),
        Path::new(gtap_profile::charts::DEFAULT_FONT),
        64,
    )
    .unwrap();
    check_charts(&files);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_command_draws_next_to_the_trace_and_refuses_other_files() {
    let dir = scratch("bin");
    let (json, _) = write_trace(&dir);
    let bin = env!("CARGO_BIN_EXE_gtap-profile");
    let out = Command::new(bin).arg(&json).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    check_charts(&["timeline.png", "utilization.png", "durations.png"].map(|f| dir.join(f)));
    let other = dir.join("other.json");
    std::fs::write(&other, r#"{"traceEvents":[]}"#).unwrap();
    let out = Command::new(bin).arg(&other).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a gtap trace"));
    std::fs::remove_dir_all(&dir).unwrap();
}
