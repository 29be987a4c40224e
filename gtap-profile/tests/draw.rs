//! Draws the charts of real traces: fib and (block mode) adaptive integration on the CPU
//! executor, traced, written as Chrome JSON by gtap-host, read back and drawn by
//! `gtap-profile` (the library and the command).

use std::path::{Path, PathBuf};
use std::process::Command;

use gtap_examples::{fib, integrate_block};
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

/// Writes the trace of a traced block-mode integration (two blocks) into `dir`; returns its
/// path and the task polls of the launch (one per block step).
fn write_block_trace(dir: &Path) -> (PathBuf, u64) {
    let block = integrate_block::BLOCK;
    let config = Config::new()
        .block_mode()
        .block_size(block)
        .grid_size(2)
        .trace_events_per_warp(1 << 14);
    let mut rt = Runtime::cpu(CpuMode::Parallel, &config).unwrap();
    let args = (-1.0, 1.0, 1e-6);
    let launch = rt
        .launch(integrate_block::integrate_block_kernel, args)
        .unwrap();
    let want = integrate_block::integrate_block_seq(args.0, args.1, args.2, block);
    assert_eq!(launch.result.to_bits(), want.to_bits());
    let path = dir.join("integrate_block.trace.json");
    let file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    launch.trace.unwrap().write_chrome_json(file).unwrap();
    (path, launch.stats.tasks_polled)
}

/// A PNG's width and height, from its header.
fn png_size(path: &Path) -> (u32, u32) {
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(&bytes[1..4], b"PNG", "{} is a PNG", path.display());
    let word = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
    (word(16), word(20))
}

/// Draws the trace `json` into `dir/charts`, checks the three charts, then removes `dir`.
fn draw_and_check(json: &Path, dir: &Path) {
    let files = gtap_profile::draw_file(
        json,
        &dir.join("charts"),
        Path::new(gtap_profile::charts::DEFAULT_FONT),
        64,
    )
    .unwrap();
    check_charts(&files);
    std::fs::remove_dir_all(dir).unwrap();
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
    draw_and_check(&json, &dir);
}

#[test]
fn a_block_mode_trace_reads_back_with_one_track_per_block_and_draws() {
    let dir = scratch("block");
    let (json, polled) = write_block_trace(&dir);
    let profile = Profile::from_json(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(profile.kernel, "integrate_block_kernel");
    assert_eq!(
        (profile.worker.as_str(), profile.tracks.len()),
        ("block", 2)
    );
    assert!(
        profile.runs().all(|r| r.tasks == 1),
        "a block runs one task a step"
    );
    assert_eq!(profile.runs().count() as u64, polled);
    draw_and_check(&json, &dir);
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
