//! The CPU backend: the runtime's memory in host memory, run by `gtap-device`'s CPU executor
//! (`gtap_device::cpu::run`) on OS threads or in its deterministic simulation.

use std::convert::Infallible;
use std::time::{Duration, Instant};

use gtap_device::Kernel;
use gtap_device::abi::Layout;
use gtap_device::cpu::{self, Monitor, RunError, State};

use crate::config::{Config, ConfigError, Limits};
use crate::device_error::{DeviceError, DeviceErrorKind};
use crate::error::{Error, Result};
use crate::records;
use crate::runtime::Launch;
use crate::stall::{StallDetector, StallReport, WarpActivity};
use crate::stats::Stats;
use crate::trace::{Trace, WorkerKind};
use crate::watchdog::{self, Outcome, Watched};

/// How the CPU executor runs the warps.
pub use gtap_device::cpu::Mode as CpuMode;

/// Default pool budget of the CPU executor.
const DEFAULT_BUDGET_CAP: u64 = 256 << 20;
/// Stack for inline children per CPU worker thread when `Config::stack_bytes` is unset.
const DEFAULT_CPU_STACK_BYTES: u32 = 4 << 20;
/// The same for the work-first executor, whose threads nest a task's children on their stacks
/// (a few KiB a level, more in a debug build): room for a chain of tasks 20,000 deep in either.
/// Address space, not memory: a thread's stack pages are mapped as it touches them.
const DEFAULT_WORK_FIRST_STACK_BYTES: u32 = 256 << 20;
/// Most warps (OS threads in parallel mode) the CPU executor runs.
const MAX_WARPS: u32 = 1024;

/// Worker threads of the parallel CPU executor: `GTAP_CPU_THREADS` if set, else one per
/// available hardware thread.
fn cpu_threads() -> Result<u32> {
    match std::env::var("GTAP_CPU_THREADS") {
        Ok(value) => Ok(parse_cpu_threads(&value)?),
        Err(_) => Ok(std::thread::available_parallelism().map_or(2, |n| n.get() as u32)),
    }
}

/// Parses `GTAP_CPU_THREADS`: a number of threads from 1 to [`MAX_WARPS`].
fn parse_cpu_threads(value: &str) -> std::result::Result<u32, ConfigError> {
    match value.trim().parse::<u32>() {
        Ok(n) if (1..=MAX_WARPS).contains(&n) => Ok(n),
        _ => Err(ConfigError::CpuThreads {
            value: value.to_string(),
        }),
    }
}

pub(crate) struct Cpu {
    state: State,
    block: u32,
    mode: CpuMode,
    watchdog: Option<Duration>,
}

impl Cpu {
    pub(crate) fn new(mode: CpuMode, config: &Config) -> Result<Self> {
        let threads = cpu_threads()?;
        let (default_block, default_grid) = match mode {
            CpuMode::WorkFirst | CpuMode::Parallel => (32, threads),
            CpuMode::Deterministic { .. } => (64, 2),
        };
        let config = Config {
            grid_size: Some(config.grid_size.unwrap_or(default_grid)),
            ..config.clone()
        };
        let resident = |block: u32| MAX_WARPS / (block / 32).max(1);
        let limits = Limits {
            max_block: 1024,
            default_block,
            resident_blocks: &resident,
            free_memory: u64::MAX / 4,
            default_budget_cap: DEFAULT_BUDGET_CAP,
            default_tasks_per_warp: None,
        };
        let (layout, block) = config.resolve(&limits, records::host())?;
        Ok(Self {
            state: State::new(
                layout,
                config.stack_bytes.unwrap_or(match mode {
                    CpuMode::WorkFirst => DEFAULT_WORK_FIRST_STACK_BYTES,
                    _ => DEFAULT_CPU_STACK_BYTES,
                }),
            )
            .with_block_shared_bytes(config.block_shared_bytes)
            .with_thread_scratch(config.thread_scratch),
            block,
            mode,
            watchdog: config.watchdog_period()?,
        })
    }

    pub(crate) fn layout(&self) -> &Layout {
        self.state.layout()
    }

    pub(crate) fn block_size(&self) -> u32 {
        self.block
    }

    pub(crate) fn mode(&self) -> CpuMode {
        self.mode
    }

    /// Switches to the deterministic schedule of `seed` for the next launches.
    pub(crate) fn reseed(&mut self, seed: u64) {
        self.mode = CpuMode::Deterministic { seed };
    }

    pub(crate) fn reset(&mut self) -> Result<()> {
        self.state.reset();
        Ok(())
    }

    pub(crate) fn launch<K: Kernel>(&mut self, args: K::Args) -> Result<Launch<K::Output>> {
        let wall = Instant::now();
        let watch = self.watchdog.map(|period| {
            move |monitor: Monitor| {
                let warps = monitor.warps();
                let Ok(outcome) = watchdog::watch(&mut CpuWatch(monitor), warps, period);
                if let Outcome::Stalled {
                    quiet,
                    words,
                    stopped: false,
                } = &outcome
                {
                    // The launch cannot return while a task holds the calling thread: say why.
                    let report = StallReport {
                        kernel: K::NAME,
                        detector: StallDetector::Watchdog { quiet: *quiet },
                        warps: WarpActivity::decode(words),
                        stopped: false,
                        device_error: None,
                    };
                    eprintln!("gtap: {report}");
                }
                outcome
            }
        });
        let (ran, watched) = cpu::run_watched::<K, _, _>(&mut self.state, self.mode, args, watch);
        let kernel_ms = wall.elapsed().as_secs_f64() * 1e3;
        let result = ran.map_err(|e| match (e, watched) {
            (
                RunError::Aborted(report),
                Some(Outcome::Stalled {
                    quiet,
                    words,
                    stopped,
                }),
            ) => Error::Stalled(Box::new(StallReport {
                kernel: K::NAME,
                detector: StallDetector::Watchdog { quiet },
                warps: WarpActivity::decode(&words),
                stopped,
                device_error: DeviceError::from_report(&report),
            })),
            (RunError::Aborted(report), _) => match DeviceError::from_report(&report) {
                Some(e) if e.kind == DeviceErrorKind::Stalled => {
                    Error::Stalled(Box::new(StallReport {
                        kernel: K::NAME,
                        detector: StallDetector::Deterministic {
                            idle_rounds: e.value,
                        },
                        warps: WarpActivity::decode(&self.state.status_words()),
                        stopped: true,
                        device_error: None,
                    }))
                }
                Some(e) => Error::Device(Box::new(e)),
                None => Error::HostPanic {
                    message: "launch aborted without an error report".into(),
                },
            },
            (RunError::Panicked(message), _) => Error::HostPanic { message },
        })?;
        let stats = Stats::collect(
            self.state.layout(),
            self.block,
            0,
            self.state.stats(),
            kernel_ms,
            wall.elapsed().as_secs_f64() * 1e3,
        );
        let layout = self.state.layout();
        let trace = (layout.trace_events_per_warp != 0).then(|| {
            let (metas, events) = self.state.trace();
            Trace::decode(K::NAME, layout, WorkerKind::of::<K>(), metas, events)
        });
        Ok(Launch {
            result,
            stats,
            trace,
        })
    }
}

/// The CPU side of the watchdog: the executor's [`Monitor`] of the running launch.
struct CpuWatch(Monitor);

impl Watched for CpuWatch {
    type Error = Infallible;
    fn wait(&mut self, pause: Duration) -> Result<bool, Infallible> {
        Ok(self.0.wait(pause))
    }
    fn read(&mut self, words: &mut [u64]) -> Result<(), Infallible> {
        self.0.read(words);
        Ok(())
    }
    fn stop(&mut self) -> Result<(), Infallible> {
        self.0.stop();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_threads_variable_takes_1_to_1024_threads() {
        assert_eq!(parse_cpu_threads(" 8 ").unwrap(), 8);
        assert_eq!(parse_cpu_threads("1024").unwrap(), 1024);
        for bad in ["0", "1025", "-1", "eight", ""] {
            let e = parse_cpu_threads(bad).unwrap_err();
            assert!(e.to_string().contains("GTAP_CPU_THREADS"), "{e}");
        }
    }
}
