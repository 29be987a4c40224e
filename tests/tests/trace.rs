//! The event trace (`Config::trace_events_per_warp`): on the CPU executor (both modes) and on
//! the GPU (skipped without one, a failure with `GTAP_REQUIRE_GPU=1`), a traced launch gives a
//! trace whose runs poll every task exactly as the statistics count, inside the launch's span,
//! and whose Chrome JSON parses with one track per warp; an untraced launch gives none.

use gtap_examples::fib;
use gtap_host::{Config, CpuMode, Error, EventKind, Launch, Runtime, Trace};

/// fib(n) with room for every event of it.
const N: u32 = 20;
const EVENTS: u32 = 1 << 15;

fn traced() -> Config {
    Config::new().trace_events_per_warp(EVENTS)
}

/// Checks `launch` (of `fib_kernel` with `N`) and its trace; returns the trace.
fn check(launch: Launch<u64>) -> Trace {
    assert_eq!(launch.result, fib::fib_seq(N));
    let trace = launch.trace.expect("a traced runtime gives a trace");
    assert_eq!(trace.kernel, "fib_kernel");
    assert_eq!(trace.warps.len() as u32, launch.stats.warps);
    assert_eq!(trace.dropped(), 0, "{EVENTS} events per warp hold fib({N})");
    let (mut polled, mut runs, mut steals) = (0, 0, 0);
    for w in &trace.warps {
        let end = w.end_ns.expect("every warp left the scheduler");
        assert!(w.begin_ns <= end && end <= trace.span_ns, "warp {}", w.warp);
        let mut last_run_end = 0;
        for e in &w.events {
            assert!(
                w.begin_ns <= e.start_ns && e.end_ns() <= end,
                "warp {}: {e:?} outside its span",
                w.warp
            );
            match e.kind {
                EventKind::Run { tasks, .. } => {
                    assert!((1..=32).contains(&tasks), "{e:?}");
                    assert!(e.start_ns >= last_run_end, "a warp's runs do not overlap");
                    last_run_end = e.end_ns();
                    polled += u64::from(tasks);
                    runs += 1;
                }
                EventKind::Steal { victim, tasks } => {
                    assert!(victim != w.warp && (1..=32).contains(&tasks), "{e:?}");
                    steals += 1;
                }
                EventKind::Idle { steps } => assert!(steps >= 1, "{e:?}"),
            }
        }
    }
    assert_eq!(polled, launch.stats.tasks_polled, "every poll is in a run");
    assert_eq!(runs, launch.stats.steps, "one run per step");
    assert_eq!(steals, launch.stats.steals, "every steal is recorded");

    let mut json = Vec::new();
    trace.write_chrome_json(&mut json).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&json).expect("the JSON parses");
    let events = v["traceEvents"].as_array().unwrap();
    let named = |name: &'static str| events.iter().filter(move |e| e["name"] == name);
    assert_eq!(named("thread_name").count(), trace.warps.len());
    assert_eq!(named("run").count() as u64, runs);
    let span_us = v["otherData"]["span_us"].as_f64().unwrap();
    for run in named("run") {
        let (ts, dur) = (run["ts"].as_f64().unwrap(), run["dur"].as_f64().unwrap());
        assert!(
            0.0 <= ts && ts + dur <= span_us + 1e-3,
            "{run} outside 0..{span_us} µs"
        );
    }
    trace
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

#[test]
fn a_traced_launch_on_the_gpu_records_every_poll() {
    let mut rt = match Runtime::gpu(&gtap_examples::DEVICE_CODE, &traced()) {
        Ok(rt) => rt,
        Err(e @ (Error::NoGpu { .. } | Error::NoDeviceCode { .. })) => {
            assert!(
                std::env::var_os("GTAP_REQUIRE_GPU").is_none(),
                "GTAP_REQUIRE_GPU is set but: {e}"
            );
            eprintln!("skipping GPU test: {e}");
            return;
        }
        Err(e) => panic!("GPU runtime failed: {e}"),
    };
    for _ in 0..3 {
        let trace = check(rt.launch(fib::fib_kernel, (N,)).unwrap());
        println!(
            "fib({N}) traced on the GPU: {} warps over {:.1} µs",
            trace.warps.len(),
            trace.span_ns as f64 / 1e3
        );
    }
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
