//! What a launch did, summed over the warps.

use gtap_device::abi::{Layout, WarpStats};

/// Statistics of one launch.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stats {
    /// Kernel time in milliseconds: CUDA events around the kernel on the GPU (launch overhead
    /// and result copies excluded), wall time of the run on the CPU executor.
    pub kernel_ms: f64,
    /// Host wall time of the whole `launch` call (state reset, launch, wait, copies back).
    pub launch_ms: f64,
    /// Task polls (a task that waits once is polled twice).
    pub tasks_polled: u64,
    /// Tasks created (the root included), each in a task slot.
    pub tasks_spawned: u64,
    /// Children run inline, on the spawning thread's stack, because no task slot was free
    /// (not counted in `tasks_spawned`). Zero whenever the pool is large enough.
    pub tasks_inlined: u64,
    /// Parallel CPU executor only: of `tasks_spawned`, children polled at once, nested in
    /// their parent's poll on the spawning thread (lazy task creation: the executor runs a
    /// child work-first while its warp has work for other threads to steal); most finish
    /// there. The deterministic executor polls children at once where its seed says, to
    /// explore child-first schedules. Zero on the GPU.
    pub tasks_run_at_once: u64,
    /// Successful steals (each moves up to 32 tasks).
    pub steals: u64,
    /// Steal attempts by idle warps.
    pub steal_attempts: u64,
    /// Most live tasks any one warp held (sampled every few scheduling steps).
    pub peak_live_per_warp: u32,
    /// Scheduling steps that ran tasks, over all warps (a warp's runs up to 32 tasks, one a
    /// lane; a block's one, or in a launch whose tasks never wait up to 16 in turn).
    pub steps: u64,
    /// Share of the warps' clock cycles spent running tasks, finding and publishing batches,
    /// and idle: `[running, scheduling, idle]`, summing to 1 (zeros on the CPU executor,
    /// which has no cycle counter).
    pub time_shares: [f64; 3],
    /// Bytes of the runtime's pools, queues and control state.
    pub pool_bytes: u64,
    /// Bytes per task slot this launch used (header plus the largest record of the kernel's
    /// task functions: on the GPU those its module holds; on the CPU executor all the
    /// program's).
    pub slot_bytes: u32,
    /// Task slots per warp.
    pub slots_per_warp: u32,
    /// Warps in the grid.
    pub warps: u32,
    /// Thread blocks in the grid.
    pub blocks: u32,
    /// Threads per block.
    pub block_size: u32,
    /// Divergence-aware queues per warp.
    pub num_queues: u32,
    /// GPU: registers per thread of the kernels, which decide how many warps fit on a
    /// multiprocessor; 0 on the CPU executor.
    pub registers: u32,
    /// GPU: bytes of stack per thread the kernel ran with ([`Config::stack_bytes`], as the
    /// driver set it); 0 on the CPU executor, whose threads have their own stacks.
    ///
    /// [`Config::stack_bytes`]: crate::Config::stack_bytes
    pub stack_bytes: u32,
    /// GPU: how the launched kernel's module was loaded, on the first launch of a kernel of
    /// that module; `None` on later launches and on the CPU executor.
    pub module_load: Option<ModuleLoad>,
}

/// How one kernel module was loaded onto the GPU.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ModuleLoad {
    /// The kernels of the module.
    pub kernels: &'static [&'static str],
    /// SASS assembled at build time, or PTX compiled by the driver.
    pub source: ModuleSource,
    /// Wall time of the driver's load call, in milliseconds.
    pub load_ms: f64,
}

/// What the driver loaded a module from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModuleSource {
    /// A cubin built for this architecture (no compilation at load).
    Sass {
        /// The cubin's architecture (`sm_90`, ...).
        arch: &'static str,
    },
    /// The PTX, JIT-compiled by the driver (no cubin this GPU can run, or the configuration
    /// caps the registers).
    Jit,
}

impl Stats {
    /// Task-slot bytes per warp in use at the launch's peak: `peak_live_per_warp × slot_bytes`.
    /// The peak is sampled every few scheduling steps, so the true peak may be a little higher.
    pub fn slot_bytes_used_per_warp(&self) -> u64 {
        u64::from(self.peak_live_per_warp) * u64::from(self.slot_bytes)
    }

    /// Task-slot bytes per warp this launch could use: `slots_per_warp × slot_bytes`.
    pub fn slot_bytes_reserved_per_warp(&self) -> u64 {
        u64::from(self.slots_per_warp) * u64::from(self.slot_bytes)
    }

    /// Share of the reserved task slots the busiest warp used at its peak, 0 to 1: how much of
    /// the pool this launch needed. Far below 1, a smaller `max_task_memory_bytes` would do.
    pub fn pool_use(&self) -> f64 {
        match self.slots_per_warp {
            0 => 0.0,
            slots => f64::from(self.peak_live_per_warp) / f64::from(slots),
        }
    }

    pub(crate) fn collect(
        layout: &Layout,
        block_size: u32,
        registers: u32,
        warps: &[WarpStats],
        kernel_ms: f64,
        launch_ms: f64,
    ) -> Self {
        let g = &layout.geometry;
        let mut s = Stats {
            kernel_ms,
            launch_ms,
            pool_bytes: layout.bytes,
            slot_bytes: g.slot_bytes,
            slots_per_warp: g.slots_per_warp,
            warps: g.warps(),
            blocks: g.blocks,
            block_size,
            num_queues: g.num_queues,
            registers,
            ..Stats::default()
        };
        for w in warps {
            s.tasks_polled += w.tasks;
            s.tasks_spawned += w.spawned;
            s.tasks_inlined += w.inlined;
            s.tasks_run_at_once += w.at_once;
            s.steals += w.steals;
            s.steal_attempts += w.steal_attempts;
            s.peak_live_per_warp = s.peak_live_per_warp.max(w.peak_live);
            s.steps += w.steps;
        }
        let cycles = [
            warps.iter().map(|w| w.cycles_running as f64).sum::<f64>(),
            warps
                .iter()
                .map(|w| w.cycles_scheduling as f64)
                .sum::<f64>(),
            warps.iter().map(|w| w.cycles_idle as f64).sum::<f64>(),
        ];
        let total: f64 = cycles.iter().sum();
        if total > 0.0 {
            s.time_shares = cycles.map(|c| c / total);
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pool_use_is_the_busiest_warps_peak_against_its_slots() {
        let s = Stats {
            peak_live_per_warp: 256,
            slots_per_warp: 4096,
            slot_bytes: 96,
            ..Stats::default()
        };
        assert_eq!(s.slot_bytes_used_per_warp(), 256 * 96);
        assert_eq!(s.slot_bytes_reserved_per_warp(), 4096 * 96);
        assert_eq!(s.pool_use(), 0.0625);
        assert_eq!(Stats::default().pool_use(), 0.0);
    }
}
