//! `GTAP_TIME=1` on the CPU executor: each launch prints its report to stderr and the process
//! prints a per-kernel summary at exit; without the variable nothing is printed.
//!
//! The switch is read once per process, so each case runs this test binary again as a child
//! process (the ignored `child` test below, which only launches) and reads the child's stderr.

use std::process::Command;

use gtap_examples::fib;
use gtap_host::{Config, CpuMode, Runtime};

/// In the child: two launches of `fib_kernel` and one of `fib_cutoff_kernel`.
#[test]
#[ignore = "the child process of the other tests of this file, which run it"]
fn child() {
    let mut rt = Runtime::cpu(CpuMode::Deterministic { seed: 1 }, &Config::new()).unwrap();
    for _ in 0..2 {
        assert_eq!(
            rt.launch(fib::fib_kernel, (12,)).unwrap().result,
            fib::fib_seq(12)
        );
    }
    let r = rt.launch(fib::fib_cutoff_kernel, (15, 8)).unwrap();
    assert_eq!(r.result, fib::fib_seq(15));
}

/// Runs the `child` test in a new process with `GTAP_TIME` set to `value` (or unset); returns
/// its stderr.
fn child_stderr(value: Option<&str>) -> String {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "--exact",
        "child",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ]);
    match value {
        Some(v) => cmd.env("GTAP_TIME", v),
        None => cmd.env_remove("GTAP_TIME"),
    };
    let out = cmd.output().expect("run the child test");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "child failed:\n{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("test child ... ok"),
        "the child test did not run:\n{stdout}"
    );
    stderr
}

#[test]
fn gtap_time_1_reports_every_launch_and_a_summary_at_exit() {
    let err = child_stderr(Some("1"));
    assert!(
        err.contains("GTAP_TIME: fib_kernel, launch 1, on the CPU executor\n"),
        "{err}"
    );
    assert!(
        err.contains("GTAP_TIME: fib_kernel, launch 2, on the CPU executor\n"),
        "{err}"
    );
    assert!(
        err.contains("GTAP_TIME: fib_cutoff_kernel, launch 1, on the CPU executor\n"),
        "{err}"
    );
    let tasks = format!("    tasks            {} (", fib::fib_tasks(12));
    assert!(err.contains(&tasks), "{err}");
    for row in [
        "kernel time",
        "launch time",
        "steals",
        "batch fill",
        "peak live tasks",
        "task pool",
    ] {
        assert_eq!(
            err.matches(&format!("    {row:<16} ")).count(),
            3,
            "{row}: {err}"
        );
    }
    let summary = err
        .split("GTAP_TIME: summary at exit\n")
        .nth(1)
        .unwrap_or_else(|| panic!("no summary: {err}"));
    let lines: Vec<&str> = summary.lines().collect();
    assert_eq!(lines.len(), 2, "{summary}");
    assert!(
        lines[0].starts_with("    fib_cutoff_kernel: 1 launch, kernel time "),
        "{summary}"
    );
    assert!(
        lines[1].starts_with("    fib_kernel: 2 launches, kernel time "),
        "{summary}"
    );
}

#[test]
fn without_gtap_time_nothing_is_printed() {
    for value in [None, Some("0"), Some("")] {
        let err = child_stderr(value);
        assert!(!err.contains("GTAP_TIME"), "GTAP_TIME={value:?}: {err}");
    }
}
