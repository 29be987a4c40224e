//! The CPU backend: the runtime's memory in host memory, run by `gtap-device`'s CPU executor
//! (`gtap_device::cpu::run`) on OS threads or in its deterministic simulation.

use std::time::Instant;

use gtap_device::Kernel;
use gtap_device::abi::Layout;
use gtap_device::cpu::{self, RunError, State};

use crate::config::{Config, Limits};
use crate::device_error::DeviceError;
use crate::error::{Error, Result};
use crate::records;
use crate::runtime::Launch;
use crate::stats::Stats;

/// How the CPU executor runs the warps.
pub use gtap_device::cpu::Mode as CpuMode;

/// Default pool budget of the CPU executor.
const DEFAULT_BUDGET_CAP: u64 = 256 << 20;
/// Most warps (OS threads in parallel mode) the CPU executor runs.
const MAX_WARPS: u32 = 1024;

pub(crate) struct Cpu {
    state: State,
    block: u32,
    mode: CpuMode,
}

impl Cpu {
    pub(crate) fn new(mode: CpuMode, config: &Config) -> Result<Self> {
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get() as u32);
        let (default_block, default_grid) = match mode {
            CpuMode::Parallel => (32, threads),
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
        };
        let (layout, block) = config.resolve(&limits, records::host())?;
        Ok(Self {
            state: State::new(layout),
            block,
            mode,
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
        let ran = cpu::run::<K>(&mut self.state, self.mode, args);
        let kernel_ms = wall.elapsed().as_secs_f64() * 1e3;
        let result = ran.map_err(|e| match e {
            RunError::Aborted(report) => match DeviceError::from_report(&report) {
                Some(e) => Error::Device(Box::new(e)),
                None => Error::HostPanic {
                    message: "launch aborted without an error report".into(),
                },
            },
            RunError::Panicked(message) => Error::HostPanic { message },
        })?;
        let stats = Stats::collect(
            self.state.layout(),
            self.block,
            0,
            self.state.stats(),
            kernel_ms,
            wall.elapsed().as_secs_f64() * 1e3,
        );
        Ok(Launch { result, stats })
    }
}
