//! The event trace (`Config::trace_events_per_warp`) on the CPU executor, in both modes: a
//! traced launch gives a trace whose runs poll every task exactly as the statistics count,
//! inside the launch's span, and whose Chrome JSON parses with one track per warp; an untraced
//! launch gives none; `GTAP_TRACE` and `GTAP_TRACE_DIR` turn it on and save it. The GPU's
//! trace tests are in `gpu.rs`, with the other GPU tests.

use gtap_examples::fib;
use gtap_host::{Config, CpuMode, Launch, Runtime, Trace};
use gtap_tests::trace_check::check_trace;

/// fib(n) with room for every event of it.
const N: u32 = 20;
const EVENTS: u32 = 1 << 15;

fn traced() -> Config {
    Config::new().trace_events_per_warp(EVENTS)
}

/// Checks a traced `fib_kernel(N)` launch and its trace; returns the trace.
fn check(launch: Launch<u64>) -> Trace {
    check_trace(launch, fib::fib_seq(N), "fib_kernel")
}

#[test]
fn a_traced_launch_on_the_cpu_executor_records_every_poll() {
    for mode in [CpuMode::Parallel, CpuMode::Deterministic { seed: 4 }] {
        let mut rt = Runtime::cpu(mode, &traced()).unwrap();
        for _ in 0..2 {
            check(rt.launch(fib::fib_kernel, (N,)).unwrap());
        }
        let mut plain = Runtime::cpu(mode, &Config::new()).unwrap();
        assert!(plain.launch(fib::fib_kernel, (N,)).unwrap().trace.is_none());
    }
}

#[test]
fn a_trace_too_small_counts_what_it_dropped() {
    let config = Config::new().trace_events_per_warp(4);
    let mut rt = Runtime::cpu(CpuMode::Deterministic { seed: 1 }, &config).unwrap();
    let launch = rt.launch(fib::fib_kernel, (N,)).unwrap();
    assert_eq!(launch.result, fib::fib_seq(N));
    let trace = launch.trace.unwrap();
    assert!(trace.dropped() > 0);
    assert!(trace.warps.iter().all(|w| w.events.len() <= 4));
    let recorded: u64 = trace.warps.iter().map(|w| w.events.len() as u64).sum();
    assert!(recorded + trace.dropped() >= launch.stats.steps);
}

/// In the child: one launch of `fib_kernel` on a runtime whose program asks for no trace.
#[test]
#[ignore = "the child process of `gtap_trace_variables_turn_the_trace_on_and_save_it`"]
fn child() {
    match Runtime::cpu(CpuMode::Deterministic { seed: 1 }, &Config::new()) {
        Ok(mut rt) => {
            let launch = rt.launch(fib::fib_kernel, (N,)).unwrap();
            let events = launch.trace.map_or(0, |t| t.events_per_warp);
            println!("CHILD trace events per warp: {events}");
        }
        Err(e) => println!("CHILD error: {e}"),
    }
}

/// Runs `child` with `env`; returns its stdout and stderr.
fn run_child(env: &[(&str, &std::path::Path)]) -> (String, String) {
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", "child", "--ignored", "--nocapture"]);
    cmd.env_remove("GTAP_TRACE").env_remove("GTAP_TRACE_DIR");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    assert!(out.status.success(), "{}", text(&out.stderr));
    (text(&out.stdout), text(&out.stderr))
}

#[test]
fn gtap_trace_variables_turn_the_trace_on_and_save_it() {
    let dir = std::env::temp_dir().join(format!("gtap-trace-dir-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (out, _) = run_child(&[]);
    assert!(out.contains("CHILD trace events per warp: 0"), "{out}");
    let events = std::path::Path::new("4096");
    let (out, err) = run_child(&[("GTAP_TRACE", events), ("GTAP_TRACE_DIR", &dir)]);
    assert!(out.contains("CHILD trace events per warp: 4096"), "{out}");
    let file = dir.join("fib_kernel-1.trace.json");
    assert!(
        err.contains(&format!("GTAP_TRACE_DIR: wrote {}", file.display())),
        "{err}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(json["otherData"]["kernel"], "fib_kernel");
    std::fs::remove_dir_all(&dir).unwrap();
    let (out, _) = run_child(&[("GTAP_TRACE", std::path::Path::new("lots"))]);
    assert!(
        out.contains("CHILD error: ") && out.contains("GTAP_TRACE=\"lots\""),
        "{out}"
    );
}
