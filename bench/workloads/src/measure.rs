//! What the benchmark harness asks of a workload (host only).

use std::string::String;

/// One timed, verified run of a workload.
#[derive(Clone, Debug)]
pub struct Sample {
    /// The measured time in ms: kernel time from CUDA events on the GPU, wall time of the whole
    /// computation for CPU runners.
    pub ms: f64,
    /// GPU only: the whole `launch` call (state reset, launch, wait, result copy), in ms; equal
    /// to `ms` for CPU runners.
    pub launch_ms: f64,
    /// Whether the output matched the sequential reference (exactly, or within the tolerance the
    /// workload documents).
    pub verified: bool,
    /// Statistics or remarks for the notes column.
    pub note: String,
    /// GPU only: the launch's event trace, when its runtime records one
    /// (`Config::trace_events_per_warp`).
    pub trace: Option<gtap_host::Trace>,
}

/// A workload instance: its input generated and its reference computed once, then run as often
/// as the harness asks, on each runner.
pub trait Workload {
    /// The label GTaP's baseline `run.sh` uses for the same work (`fib40`, `cilksort1e8`,
    /// `fib40_cutoff14_q3`, ...), so results pair up by label.
    fn label(&self) -> String;
    /// The gtap configuration this workload runs with (queues, memory budget).
    fn config(&self) -> gtap_host::Config;
    /// One launch on `rt` (built from [`crate::DEVICE_CODE`] with [`Workload::config`]): upload
    /// or reset inputs outside the timed region, launch, download and verify the whole output.
    fn gpu(&mut self, rt: &mut gtap_host::Runtime) -> Result<Sample, String>;
    /// One run of the sequential Rust reference algorithm, verified.
    fn sequential(&mut self) -> Result<Sample, String>;
    /// One run of a rayon version on all cores (same algorithm and cutoffs), verified.
    fn rayon(&mut self) -> Result<Sample, String>;
}

/// `Ok` when `got == want`, otherwise what differs.
pub fn check<T: PartialEq + core::fmt::Debug>(got: T, want: T) -> Result<(), String> {
    if got == want {
        Ok(())
    } else {
        Err(std::format!("got {got:?}, expected {want:?}"))
    }
}

/// The sample of a GPU launch: its kernel time, whole-call time and scheduler statistics;
/// `verdict` says whether its output matched (a mismatch is a sample with `verified: false`).
pub fn gpu_sample<T>(
    launch: &gtap_host::Launch<T>,
    verdict: Result<(), String>,
) -> Result<Sample, String> {
    let s = &launch.stats;
    let stats = std::format!(
        "{} tasks, {} polls in {} steps, {} steals, peak {} live/warp of {}, {} blocks x {} threads, {} queues, {} registers, cycles {:.0}/{:.0}/{:.0} % run/schedule/idle",
        s.tasks_spawned,
        s.tasks_polled,
        s.steps,
        s.steals,
        s.peak_live_per_warp,
        s.slots_per_warp,
        s.blocks,
        s.block_size,
        s.num_queues,
        s.registers,
        s.time_shares[0] * 100.0,
        s.time_shares[1] * 100.0,
        s.time_shares[2] * 100.0
    );
    Ok(Sample {
        ms: s.kernel_ms,
        launch_ms: s.launch_ms,
        verified: verdict.is_ok(),
        note: match verdict {
            Ok(()) => stats,
            Err(why) => why,
        },
        trace: launch.trace.clone(),
    })
}

/// Times `run` (wall clock) and checks its output with `verify`, outside the timed region.
pub fn cpu_sample<T>(
    run: impl FnOnce() -> T,
    verify: impl FnOnce(T) -> Result<(), String>,
) -> Result<Sample, String> {
    let start = std::time::Instant::now();
    let out = run();
    let ms = start.elapsed().as_secs_f64() * 1e3;
    let verdict = verify(out);
    Ok(Sample {
        ms,
        launch_ms: ms,
        verified: verdict.is_ok(),
        note: verdict.err().unwrap_or_default(),
        trace: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mismatch_is_not_verified() {
        assert!(check(3, 3).is_ok());
        let s = cpu_sample(|| 2 + 2, |v| check(v, 5)).unwrap();
        assert!(!s.verified);
        assert_eq!(s.note, "got 4, expected 5");
    }
}
