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
