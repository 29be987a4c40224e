//! The CPU backend: the same runtime region in host memory, run by the CPU executor of
//! `gtap-device` on OS threads or in its deterministic simulation.

use std::panic::{self, AssertUnwindSafe};
use std::time::Instant;

use gtap_device::Kernel;
use gtap_device::abi::{ErrorRecord, LaunchParams, Layout, Line, OPT_RANDOM_QUEUE, WarpStats};
use gtap_device::cpu::{Aborted, Driver, Mode};
use gtap_device::pool::{PoolCell, PoolMeta};

use crate::config::{Config, Limits};
use crate::device_error::DeviceError;
use crate::error::{Error, Result};
use crate::records;
use crate::runtime::Launch;
use crate::stats::Stats;

/// How the CPU executor runs the warps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuMode {
    /// One OS thread per warp. By default one warp per available hardware thread.
    Parallel,
    /// Every warp on the calling thread, scheduled by a generator seeded with `seed`: lanes,
    /// warps, queues and victims are chosen at random, so tasks resume on different lanes,
    /// warps and blocks than they suspended on. The same seed gives the same schedule. By
    /// default 2 blocks of 2 warps.
    Deterministic {
        /// Seed of the schedule.
        seed: u64,
    },
}

/// Default pool budget of the CPU executor.
const DEFAULT_BUDGET_CAP: u64 = 256 << 20;
/// Most warps (OS threads in parallel mode) the CPU executor runs.
const MAX_WARPS: u32 = 1024;

pub(crate) struct Cpu {
    mem: Vec<Line>,
    error: Box<ErrorRecord>,
    driver: Box<Driver>,
    layout: Layout,
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
        let driver = Box::new(Driver {
            mode: match mode {
                CpuMode::Parallel => Mode::Parallel,
                CpuMode::Deterministic { seed } => Mode::Deterministic { seed },
            },
        });
        let mem = vec![Line([0; 128]); (layout.bytes as usize).div_ceil(128)];
        Ok(Self {
            mem,
            error: Box::new(ErrorRecord::EMPTY),
            driver,
            layout,
            block,
            mode,
        })
    }

    pub(crate) fn layout(&self) -> &Layout {
        &self.layout
    }

    pub(crate) fn block_size(&self) -> u32 {
        self.block
    }

    pub(crate) fn mode(&self) -> CpuMode {
        self.mode
    }

    fn bytes(&mut self) -> &mut [u8] {
        // SAFETY: viewing initialised lines of bytes as bytes.
        unsafe {
            std::slice::from_raw_parts_mut(
                self.mem.as_mut_ptr() as *mut u8,
                std::mem::size_of_val(&self.mem[..]),
            )
        }
    }

    /// Switches to the deterministic schedule of `seed` for the next launches. The seed reaches
    /// the executor twice, through the driver (lane and warp choices) and the launch
    /// parameters (queue and victim choices), so both change together.
    pub(crate) fn reseed(&mut self, seed: u64) {
        self.mode = CpuMode::Deterministic { seed };
        self.driver.mode = Mode::Deterministic { seed };
    }

    pub(crate) fn reset(&mut self) -> Result<()> {
        self.bytes().fill(0);
        *self.error = ErrorRecord::EMPTY;
        Ok(())
    }

    /// Zeroes the metadata and the free-id cells the last launch used (`frees` per warp); the
    /// cells are most of the state and a launch rarely touches them all.
    fn clear_state(&mut self) {
        let (layout, m) = (self.layout, 1usize << self.layout.geometry.id_shift());
        let bytes = self.bytes();
        for w in 0..layout.geometry.warps() as usize {
            let meta = layout.pool_meta as usize + w * std::mem::size_of::<PoolMeta>();
            let frees =
                u32::from_ne_bytes(bytes[meta..meta + 4].try_into().expect("4 bytes")) as usize;
            let cell = std::mem::size_of::<PoolCell>();
            let first = layout.pool_cells as usize + w * m * cell;
            bytes[first..first + frees.min(m) * cell].fill(0);
        }
        let reset = layout.reset_range();
        bytes[reset.start as usize..reset.end as usize].fill(0);
    }

    pub(crate) fn launch<K: Kernel>(&mut self, args: K::Args) -> Result<Launch<K::Output>> {
        let wall = Instant::now();
        self.clear_state();
        *self.error = ErrorRecord::EMPTY;
        let (options, seed) = match self.mode {
            CpuMode::Parallel => (0, 0x5eed),
            CpuMode::Deterministic { seed } => {
                (OPT_RANDOM_QUEUE, seed as u32 ^ (seed >> 32) as u32)
            }
        };
        let params = LaunchParams {
            base: self.mem.as_mut_ptr() as u64,
            error: &mut *self.error as *mut ErrorRecord as u64,
            layout: self.layout,
            options,
            seed,
            host: &*self.driver as *const Driver as u64,
        };
        let start = Instant::now();
        let ran = panic::catch_unwind(AssertUnwindSafe(|| K::run_cpu(&params, args)));
        let kernel_ms = start.elapsed().as_secs_f64() * 1e3;
        let result = match ran {
            Ok(v) => v,
            Err(payload) if payload.is::<Aborted>() => {
                return Err(match DeviceError::from_record(&self.error) {
                    Some(e) => Error::Device(Box::new(e)),
                    None => Error::HostPanic {
                        message: "launch aborted without an error record".into(),
                    },
                });
            }
            Err(payload) => {
                let message = payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "non-string panic payload".into());
                return Err(Error::HostPanic { message });
            }
        };
        let warps = self.layout.geometry.warps() as usize;
        // SAFETY: the statistics region holds one `WarpStats` per warp, written by the workers
        // (all joined by now); the region is 16-aligned.
        let stats = unsafe {
            std::slice::from_raw_parts(
                (self.mem.as_ptr() as *const u8).add(self.layout.stats as usize)
                    as *const WarpStats,
                warps,
            )
        };
        let stats = Stats::collect(
            &self.layout,
            self.block,
            0,
            stats,
            kernel_ms,
            wall.elapsed().as_secs_f64() * 1e3,
        );
        Ok(Launch { result, stats })
    }
}
