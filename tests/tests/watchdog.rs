//! The watchdog on the CPU executor: a launch in which nothing moves is stopped within the
//! configured time and reported as a typed error saying what every warp was doing, and the
//! same runtime then runs the next launch correctly.

use std::time::{Duration, Instant};

use gtap_host::{
    Config, CpuMode, DeviceErrorKind, Error, Runtime, StallDetector, StallReport, WarpState,
};
use gtap_tests::{fib_kernel, stall_kernel};

fn stall_report(e: Error) -> StallReport {
    match e {
        Error::Stalled(report) => *report,
        other => panic!("expected a stall, got {other}"),
    }
}

fn fib(n: u32) -> u64 {
    if n < 2 {
        n as u64
    } else {
        fib(n - 1) + fib(n - 2)
    }
}

#[test]
fn a_launch_waiting_forever_is_stopped_reported_and_the_runtime_reused() {
    let period = Duration::from_millis(300);
    let config = Config::new().watchdog(Some(period));
    for mode in [CpuMode::Parallel, CpuMode::Deterministic { seed: 5 }] {
        let mut rt = Runtime::cpu(mode, &config).unwrap();
        let mut flag = rt.upload(&[0u32]).unwrap();
        let start = Instant::now();
        let report = stall_report(rt.launch(stall_kernel, (flag.slice_mut(), 12)).unwrap_err());
        let took = start.elapsed();
        assert!(
            took >= period && took < Duration::from_secs(20),
            "{mode:?}: stopped after {took:?}"
        );
        let StallDetector::Watchdog { quiet } = report.detector else {
            panic!("{mode:?}: detected by {:?}", report.detector)
        };
        assert!(quiet >= period, "{mode:?}: quiet for {quiet:?}");
        assert!(report.stopped, "{mode:?}: every warp left the launch");
        assert_eq!(report.kernel, "stall_kernel");
        assert_eq!(report.warps.len(), rt.layout().geometry.warps() as usize);
        // Exactly one warp was stuck in a step: the one polling the waiting task.
        let working: Vec<_> = report
            .warps
            .iter()
            .filter(|w| w.state == Some(WarpState::Working))
            .collect();
        assert_eq!(working.len(), 1, "{mode:?}: {report}");
        // None had left the scheduler: the others were looking for work (or, on a starved
        // machine, had not started yet).
        assert!(
            report.warps.iter().all(|w| matches!(
                w.state,
                Some(WarpState::Working | WarpState::Searching | WarpState::Starting)
            )),
            "{mode:?}: {report}"
        );
        // The waiting task saw the stop and is named.
        let task = report
            .device_error
            .as_ref()
            .expect("the waiting task is named");
        assert_eq!(task.kind, DeviceErrorKind::Watchdog, "{mode:?}: {report}");
        assert_eq!(task.task, "wait_for_flag");
        assert_eq!(task.warp, working[0].warp, "{mode:?}: {report}");
        let text = report.to_string();
        assert!(text.contains("`stall_kernel` made no progress"), "{text}");
        assert!(text.contains("wait_for_flag"), "{text}");
        assert!(text.contains("1 inside a scheduling step"), "{text}");
        // The same runtime runs the next launch correctly.
        for n in [15, 18] {
            assert_eq!(
                rt.launch(fib_kernel, (n,)).unwrap().result,
                fib(n),
                "{mode:?}"
            );
        }
    }
}

#[test]
fn launches_that_make_progress_are_not_stopped() {
    // Launches several times longer than the watchdog's period, all of it progress: larger
    // ones until one lasts three periods (else this test would check nothing).
    let period = Duration::from_millis(200);
    let config = Config::new().watchdog(Some(period));
    let mut rt = Runtime::cpu(CpuMode::Deterministic { seed: 1 }, &config).unwrap();
    for n in 20..=32 {
        let start = Instant::now();
        assert_eq!(rt.launch(fib_kernel, (n,)).unwrap().result, fib(n));
        if start.elapsed() > 3 * period {
            return;
        }
    }
    panic!("no launch lasted three watchdog periods");
}
