//! Runtime configuration: what the user may set, defaults derived from the device, and
//! validation with messages that say what to change.

use std::time::Duration;

use gtap_device::abi::{
    DEFAULT_BLOCK_SHARED_BYTES, Geometry, HEADER_BYTES, Layout, MAX_QUEUES, POOL_CELL_BYTES,
    RING_ENTRY_BYTES, RecordSize, SLOT_ALIGN, align_up,
};

/// How to size and shape a runtime. Every field has a default derived from the device (or the
/// CPU executor); set only what you need.
///
/// ```
/// use gtap_host::Config;
/// let config = Config::new().num_queues(3).max_tasks_per_warp(3 * 1024);
/// assert_eq!(config.num_queues, 3);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// Thread blocks in the persistent grid. Default: as many as each kernel keeps resident at
    /// once (multiprocessors × blocks per multiprocessor at that kernel's occupancy); the region
    /// is laid out for the kernel that fits the most. A grid set here must be resident for the
    /// kernel that fits the most blocks; a kernel that keeps fewer resident runs on as many as
    /// it keeps ([`Stats::blocks`](crate::Stats::blocks) says how many a launch ran on).
    pub grid_size: Option<u32>,
    /// Threads per block, a multiple of 32. Default: 128 on the GPU.
    pub block_size: Option<u32>,
    /// Task slots per warp: the most tasks one warp may have spawned and not yet seen finish.
    /// Must be a multiple of `num_queues`. Default on the GPU: [`Config::DEFAULT_TASKS_PER_WARP`]
    /// (rounded down to a multiple of `num_queues`) when that fits the default memory budget,
    /// else as many as it allows; on the CPU executor, whose few warps (one per core) each take
    /// a large share of the work, as many as its budget allows; with `max_task_memory_bytes`
    /// set, as many as that allows.
    /// [`Stats::pool_use`](crate::Stats::pool_use) tells how much of it a launch used.
    pub max_tasks_per_warp: Option<u32>,
    /// Divergence-aware queues per warp (1 to 16). Default: 1.
    pub num_queues: u32,
    /// Bytes the task pools and queues may use; set, the pools get as many slots per warp as
    /// fit. Unset, on the GPU the pools get [`Config::DEFAULT_TASKS_PER_WARP`] slots per warp,
    /// each the size of the largest task record (plus 12 bytes of queue and free-list
    /// entries), so the memory follows the grid and the program's records:
    /// `warps × 8192 × (slot + 12)` bytes, about 1.3 GiB for fib's 64-byte slots on an H200's
    /// 2112 warps, capped at `min(free / 4, 8 GiB)`, where `free` is the device memory free
    /// when the runtime is created (under the cap a warp gets as many slots as fit). On the
    /// CPU executor the default budget is 256 MiB, all of it slots.
    /// [`Stats::pool_use`] tells how much of the pool a launch used.
    ///
    /// [`Stats::pool_use`]: crate::Stats::pool_use
    pub max_task_memory_bytes: Option<u64>,
    /// GPU only: registers per thread the driver may give the kernels when it compiles them.
    /// Fewer registers let more warps share a multiprocessor, which hides the memory latency the
    /// scheduler spends its time on; too few make the compiler spill to local memory.
    /// Default: at most 128 (at least two blocks of 256 threads per multiprocessor), the
    /// ceiling the SASS built by `gtap-builder` has; setting it makes the runtime compile the
    /// PTX with this ceiling instead of loading that SASS. A kernel declared with its own
    /// `#[gtap::kernel(max_registers = R)]` keeps `R`: the driver gives the kernel's own limit
    /// precedence over this one (seen with driver 580 on the H200), so change the attribute
    /// to try another limit for such a kernel. `Stats::registers` reports what a launch got.
    pub max_registers: Option<u32>,
    /// Bytes of stack per thread, for recursive or large-frame device code (a recursive
    /// sequential leaf, a local sort buffer) and for children run inline when no task slot is
    /// free (each inline level takes its future and a reserve; a spawn that would overflow the
    /// stack fails with `PoolExhausted` instead). On the GPU this is the per-thread stack limit:
    /// CUDA's own default is 1 KiB, which a 14-level recursion or a 1 KiB local array already
    /// overflows, and the memory reserved is this times the resident threads; default
    /// [`Config::DEFAULT_STACK_BYTES`]. On the CPU executor each worker thread gets this much
    /// beyond the scheduler's own frames; default 4 MiB.
    /// On the GPU a stack too small is a kernel fault
    /// ([`Error::KernelFault`](crate::Error::KernelFault)), after which the CUDA driver keeps
    /// the GPU unusable until the process restarts: size it up front.
    pub stack_bytes: Option<u32>,
    /// How long a launch may go without any warp finishing a scheduling step before the
    /// watchdog stops it and returns [`Error::Stalled`](crate::Error::Stalled), which says what
    /// every warp was doing. `None` turns the watchdog off (a launch that stalls then hangs).
    /// The environment variable `GTAP_WATCHDOG` (seconds, e.g. `2.5`, or `off`) overrides it.
    /// Default: [`Config::DEFAULT_WATCHDOG`], far longer than any scheduling step of a
    /// well-formed program, so only a launch that is stuck trips it. A task that runs longer
    /// than this in one piece (no spawn, no wait) needs a larger value.
    pub watchdog: Option<Duration>,
    /// Events each warp may record in the launch's event trace (task runs, steals, idle spans;
    /// see [`Launch::trace`]); 0, the default, records none and costs nothing. Each event takes
    /// 24 bytes of device memory per warp, on top of `max_task_memory_bytes`; a warp records
    /// about one event per scheduling step, and the events past its capacity are counted as
    /// dropped ([`Trace::dropped`]). A block-mode kernel records one track per block, into its
    /// first warp's buffer, so this is then the capacity of each block's trace.
    /// `GTAP_TRACE` (a number of events) overrides it.
    ///
    /// [`Launch::trace`]: crate::Launch::trace
    /// [`Trace::dropped`]: crate::Trace::dropped
    pub trace_events_per_warp: u32,
    /// Size the runtime for block-mode kernels (`#[gtap::kernel(block = N)]`, one task per
    /// thread block): task slots hold block-mode records (a frame per thread of the block, so
    /// `block_size` times larger than a thread-mode future), and blocks get the block-mode
    /// shared memory. Set `block_size` to the kernels' `N`. Thread-mode kernels still run on
    /// such a runtime, with fewer, larger slots. Default: off.
    pub block_mode: bool,
    /// Bytes of shared memory each block lends its block-mode tasks (`Block::shared`), on top
    /// of the runtime's own block-mode state. Shared memory limits how many blocks share a
    /// multiprocessor, so a kernel whose tasks borrow none runs more blocks at once with 0: a
    /// block of 32 threads needs about 5 KiB without it and 9 KiB with the default.
    /// Default: [`Config::DEFAULT_BLOCK_SHARED_BYTES`]. At most
    /// [`Config::MAX_BLOCK_SHARED_BYTES`]; unused in thread mode.
    pub block_shared_bytes: u32,
    /// Whether each thread of a thread-mode block has `gtap::thread::scratch` memory (64 bytes
    /// of shared memory a thread, 8 KiB for a block of 128). What a block does not reserve the
    /// GPU uses as L1 cache, so a program whose tasks never call `scratch` runs faster with
    /// `false` where its tasks read memory that fits the larger L1 (the R-MAT BFS on the H200:
    /// 2.8 %). With `false`, `scratch` is a device error (a panic) that names its caller's line.
    /// Default: `true`; unused in block mode, which has no scratch memory.
    pub thread_scratch: bool,
}

impl Default for Config {
    fn default() -> Self {
        Self::new()
    }
}

impl Config {
    /// All defaults.
    pub const fn new() -> Self {
        Self {
            grid_size: None,
            block_size: None,
            max_tasks_per_warp: None,
            num_queues: 1,
            max_task_memory_bytes: None,
            max_registers: None,
            stack_bytes: None,
            watchdog: Some(Self::DEFAULT_WATCHDOG),
            trace_events_per_warp: 0,
            block_mode: false,
            block_shared_bytes: Self::DEFAULT_BLOCK_SHARED_BYTES,
            thread_scratch: true,
        }
    }
    /// The shared memory a block lends its tasks when [`Config::block_shared_bytes`] is left
    /// alone: 4 KiB.
    pub const DEFAULT_BLOCK_SHARED_BYTES: u32 = DEFAULT_BLOCK_SHARED_BYTES;
    /// The most [`Config::block_shared_bytes`] may be: 227 KiB, a block's shared memory on
    /// the largest GPUs (sm_80 and later); the runtime's own state comes on top, and a kernel
    /// whose blocks then do not fit a multiprocessor is refused when the runtime is created.
    pub const MAX_BLOCK_SHARED_BYTES: u32 = 227 * 1024;
    /// The watchdog's period when [`Config::watchdog`] is left alone: a minute.
    pub const DEFAULT_WATCHDOG: Duration = Duration::from_secs(60);
    /// The per-thread stack gtap asks for when [`Config::stack_bytes`] is unset.
    pub const DEFAULT_STACK_BYTES: u32 = 4096;
    /// Task slots per warp when neither [`Config::max_tasks_per_warp`] nor
    /// [`Config::max_task_memory_bytes`] is set: `32 lanes × 128 levels × 2`, room for each of
    /// a warp's lanes to be 128 spawning levels deep with two tasks live per level (the task
    /// waiting and a child not yet run). A warp runs its subtree in batches of 32 tasks, so its
    /// peak grows with the depth, not with the problem: fib(40), 40 levels, peaks at 1853
    /// slots per warp on an H200 (1.45 per lane and level), 4.4 times below this. A deeper
    /// computation borrows other warps' free slots, then runs children inline on the stack;
    /// the error when neither is possible says how far to raise the pool.
    pub const DEFAULT_TASKS_PER_WARP: u32 = 32 * 128 * 2;
    /// Sets [`Config::grid_size`].
    pub const fn grid_size(mut self, blocks: u32) -> Self {
        self.grid_size = Some(blocks);
        self
    }
    /// Sets [`Config::block_size`].
    pub const fn block_size(mut self, threads: u32) -> Self {
        self.block_size = Some(threads);
        self
    }
    /// Sets [`Config::max_tasks_per_warp`].
    pub const fn max_tasks_per_warp(mut self, tasks: u32) -> Self {
        self.max_tasks_per_warp = Some(tasks);
        self
    }
    /// Sets [`Config::num_queues`].
    pub const fn num_queues(mut self, queues: u32) -> Self {
        self.num_queues = queues;
        self
    }
    /// Sets [`Config::max_task_memory_bytes`].
    pub const fn max_task_memory_bytes(mut self, bytes: u64) -> Self {
        self.max_task_memory_bytes = Some(bytes);
        self
    }
    /// Sets [`Config::max_registers`].
    pub const fn max_registers(mut self, registers: u32) -> Self {
        self.max_registers = Some(registers);
        self
    }
    /// Sets [`Config::stack_bytes`].
    pub const fn stack_bytes(mut self, bytes: u32) -> Self {
        self.stack_bytes = Some(bytes);
        self
    }
    /// Sets [`Config::block_mode`].
    pub const fn block_mode(mut self) -> Self {
        self.block_mode = true;
        self
    }
    /// Sets [`Config::block_shared_bytes`].
    pub const fn block_shared_bytes(mut self, bytes: u32) -> Self {
        self.block_shared_bytes = bytes;
        self
    }
    /// Sets [`Config::thread_scratch`].
    pub const fn thread_scratch(mut self, on: bool) -> Self {
        self.thread_scratch = on;
        self
    }
    /// Sets [`Config::watchdog`] (`None`: off).
    pub const fn watchdog(mut self, after: Option<Duration>) -> Self {
        self.watchdog = after;
        self
    }
    /// Sets [`Config::trace_events_per_warp`] (0: no trace).
    pub const fn trace_events_per_warp(mut self, events: u32) -> Self {
        self.trace_events_per_warp = events;
        self
    }

    /// The trace's capacity per warp: `GTAP_TRACE` if set, else
    /// [`Config::trace_events_per_warp`].
    pub(crate) fn trace_capacity(&self) -> Result<u32, ConfigError> {
        match std::env::var("GTAP_TRACE") {
            Ok(value) => value
                .trim()
                .parse()
                .map_err(|_| ConfigError::TraceVariable { value }),
            Err(_) => Ok(self.trace_events_per_warp),
        }
    }

    /// The watchdog's period: `GTAP_WATCHDOG` if set, else [`Config::watchdog`].
    pub(crate) fn watchdog_period(&self) -> Result<Option<Duration>, ConfigError> {
        match std::env::var("GTAP_WATCHDOG") {
            Ok(value) => parse_watchdog(&value),
            Err(_) => Ok(self.watchdog),
        }
    }
}

/// Parses `GTAP_WATCHDOG`: seconds (a positive decimal number) or `off`.
fn parse_watchdog(value: &str) -> Result<Option<Duration>, ConfigError> {
    let value = value.trim();
    if value.eq_ignore_ascii_case("off") {
        return Ok(None);
    }
    match value.parse::<f64>() {
        Ok(seconds) if seconds > 0.0 && seconds.is_finite() && seconds < 1e9 => {
            Ok(Some(Duration::from_secs_f64(seconds)))
        }
        _ => Err(ConfigError::Watchdog {
            value: value.to_string(),
        }),
    }
}

/// A configuration that cannot be used, and what to change.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// Bad block size.
    #[error(
        "block_size {got} is invalid: use a multiple of 32 between 32 and {max} (for example 128 or 256)"
    )]
    BlockSize {
        /// The requested block size.
        got: u32,
        /// The device's limit.
        max: u32,
    },
    /// Bad grid size.
    #[error(
        "grid_size {got} is invalid: a persistent kernel needs every block resident at once, so use 1 to {max} blocks (or leave it unset)"
    )]
    GridSize {
        /// The requested grid size.
        got: u32,
        /// Blocks that can be resident at once.
        max: u32,
    },
    /// Too much shared memory lent to block-mode tasks.
    #[error(
        "block_shared_bytes {got} is more shared memory than a block can have ({max} bytes); lend the tasks less"
    )]
    BlockSharedBytes {
        /// The requested bytes.
        got: u32,
        /// The most allowed.
        max: u32,
    },
    /// Bad queue count.
    #[error("num_queues {got} is invalid: use 1 to {max}")]
    NumQueues {
        /// The requested count.
        got: u32,
        /// The most queues supported.
        max: u32,
    },
    /// Slots not divisible by queues.
    #[error(
        "max_tasks_per_warp {tasks} is not a multiple of num_queues {queues}: each queue gets an equal share of a warp's slots; use {suggestion}"
    )]
    TasksNotDivisible {
        /// Requested slots per warp.
        tasks: u32,
        /// Requested queues.
        queues: u32,
        /// The nearest valid value.
        suggestion: u32,
    },
    /// Zero slots.
    #[error("max_tasks_per_warp must be at least num_queues ({queues})")]
    TooFewTasks {
        /// Requested queues.
        queues: u32,
    },
    /// The budget does not fit even a minimal pool.
    #[error(
        "max_task_memory_bytes {budget} is too small for {warps} warps: each needs at least {per_warp} bytes ({min_tasks} task slots of {slot_bytes} bytes); raise the budget or shrink grid_size/block_size"
    )]
    BudgetTooSmall {
        /// The budget.
        budget: u64,
        /// Warps in the grid.
        warps: u32,
        /// Bytes per warp for the smallest pool.
        per_warp: u64,
        /// Smallest pool, in slots.
        min_tasks: u32,
        /// Bytes per slot.
        slot_bytes: u32,
    },
    /// Explicit slots exceed the budget.
    #[error(
        "max_tasks_per_warp {tasks} needs {needed} bytes but max_task_memory_bytes is {budget}: lower max_tasks_per_warp or raise the budget"
    )]
    OverBudget {
        /// Requested slots per warp.
        tasks: u32,
        /// Bytes needed.
        needed: u64,
        /// The budget.
        budget: u64,
    },
    /// Not enough free device memory.
    #[error(
        "the runtime needs {needed} bytes but only {free} bytes of device memory are free: lower max_tasks_per_warp, max_task_memory_bytes or trace_events_per_warp"
    )]
    OutOfMemory {
        /// Bytes needed.
        needed: u64,
        /// Bytes free.
        free: u64,
    },
    /// More task slots than task ids can number.
    #[error(
        "{warps} warps × {tasks} max_tasks_per_warp is more task slots than ids can number (2^32); lower max_tasks_per_warp or the grid"
    )]
    TooManySlots {
        /// Warps in the grid.
        warps: u32,
        /// Slots per warp.
        tasks: u32,
    },
    /// A kernel cannot run even one block of the configured size on a multiprocessor.
    #[error(
        "kernel `{kernel}` cannot run in blocks of {block} threads: with its {registers} registers per thread and {shared} bytes of shared memory per block (the runtime's, plus block_shared_bytes in block mode), not one block fits on a multiprocessor; use block_size {largest} or less, lower max_registers, or lend block-mode tasks less shared memory"
    )]
    KernelDoesNotFit {
        /// The kernel.
        kernel: &'static str,
        /// The block size.
        block: u32,
        /// Registers per thread the kernel got.
        registers: u32,
        /// Dynamic shared memory per block.
        shared: usize,
        /// The largest block size that fits (0 if none does).
        largest: u32,
    },
    /// The per-thread stack cannot be set.
    #[error(
        "stack_bytes {bytes} is invalid: {reason}; the driver reserves it for every thread the GPU can hold at once, so use between {min} and a few hundred KiB (default {default})",
        min = MIN_STACK_BYTES, default = Config::DEFAULT_STACK_BYTES
    )]
    StackBytes {
        /// The requested bytes per thread.
        bytes: u32,
        /// Why the driver or gtap refused it.
        reason: String,
    },
    /// A register cap outside what the compiler accepts.
    #[error(
        "max_registers {got} is invalid: use {min} to {max} (or leave it unset for at most 128)",
        min = MIN_REGISTERS, max = MAX_REGISTERS
    )]
    MaxRegisters {
        /// The requested cap.
        got: u32,
    },
    /// `GTAP_WATCHDOG` is neither seconds nor `off`.
    #[error(
        "GTAP_WATCHDOG={value:?} is invalid: give the watchdog's period in seconds (for example 30 or 2.5), or off"
    )]
    Watchdog {
        /// The variable's value.
        value: String,
    },
    /// `GTAP_TRACE` is not a number of events.
    #[error(
        "GTAP_TRACE={value:?} is invalid: give the events each warp may record (for example 65536), or 0 for no trace"
    )]
    TraceVariable {
        /// The variable's value.
        value: String,
    },
    /// `GTAP_CPU_THREADS` is not a positive number of threads.
    #[error(
        "GTAP_CPU_THREADS={value:?} is invalid: give the CPU executor's worker threads (for example 8), from 1 to 1024"
    )]
    CpuThreads {
        /// The variable's value.
        value: String,
    },
    /// The event trace asks for more events than it can number.
    #[error(
        "trace_events_per_warp {events} × {warps} warps is more than 2^32 events; lower trace_events_per_warp (at most {max} for this grid)"
    )]
    TraceTooLarge {
        /// Requested events per warp.
        events: u32,
        /// Warps in the grid.
        warps: u32,
        /// The most events per warp this grid allows.
        max: u32,
    },
    /// A task record is too large or over-aligned.
    #[error(
        "task function `{task}` needs a {bytes}-byte record, more than the {max}-byte limit; keep large data in device buffers (gtap::Slice) instead of locals that live across a wait"
    )]
    RecordTooLarge {
        /// The task function.
        task: String,
        /// Its record size (`u32::MAX` when over-aligned).
        bytes: u32,
        /// The limit.
        max: u32,
    },
}

/// What the backend can do, as far as sizing is concerned.
pub(crate) struct Limits<'a> {
    /// Largest block.
    pub max_block: u32,
    /// Default block size.
    pub default_block: u32,
    /// Blocks that can be resident at once, for a block size.
    pub resident_blocks: &'a dyn Fn(u32) -> u32,
    /// Free memory.
    pub free_memory: u64,
    /// Default budget cap.
    pub default_budget_cap: u64,
    /// Slots per warp when the configuration sets neither slots nor budget (`None`: as many
    /// as the default budget allows).
    pub default_tasks_per_warp: Option<u32>,
}

/// The smallest per-thread stack gtap accepts: the scheduler's own calls need some.
pub(crate) const MIN_STACK_BYTES: u32 = 256;

/// The register caps the driver's compiler accepts (a thread has at most 255 registers; below
/// 16 it cannot compile the scheduler).
const MIN_REGISTERS: u32 = 16;
const MAX_REGISTERS: u32 = 255;

/// The largest record any task function may have.
pub(crate) const MAX_RECORD_BYTES: u32 = 64 * 1024;

/// Smallest pool per warp the budget must allow.
const MIN_TASKS_PER_WARP: u32 = 64;

/// A slot size that holds a record of `bytes`.
fn slot_for(bytes: u32) -> u32 {
    align_up(bytes as u64, SLOT_ALIGN) as u32
}

/// Bytes per slot of the pools: the slot, its ring entry and its free-id cell.
fn per_slot(slot_bytes: u32) -> u64 {
    slot_bytes as u64 + RING_ENTRY_BYTES + POOL_CELL_BYTES
}

impl Config {
    /// Checks the settings that only the GPU uses (the stack and the register cap), before the
    /// runtime asks the driver for them.
    pub(crate) fn check_gpu_settings(&self) -> Result<(), ConfigError> {
        if let Some(got) = self.max_registers
            && !(MIN_REGISTERS..=MAX_REGISTERS).contains(&got)
        {
            return Err(ConfigError::MaxRegisters { got });
        }
        if let Some(bytes) = self.stack_bytes
            && bytes < MIN_STACK_BYTES
        {
            return Err(ConfigError::StackBytes {
                bytes,
                reason: format!("the scheduler itself needs at least {MIN_STACK_BYTES} bytes"),
            });
        }
        Ok(())
    }

    /// The slot size that holds every record of `records` (name, [`RecordSize`] export) at
    /// block size `block`: the largest of them, block-mode records counted only with
    /// [`Config::block_mode`]. The region is laid out with the slot size of all the crate's
    /// records; each GPU launch strides its slots by that of its kernel's module alone, so a
    /// kernel with small records keeps its tasks close together.
    pub(crate) fn slot_bytes<'a>(
        &self,
        block: u32,
        records: impl IntoIterator<Item = (&'a str, u32)>,
    ) -> Result<u32, ConfigError> {
        let mut slot_bytes = slot_for(HEADER_BYTES as u32 + 16);
        for (task, raw) in records {
            let size = RecordSize::decode(raw);
            if size.is_block() && !self.block_mode {
                continue;
            }
            let bytes = size
                .bytes(block)
                .map_or(u32::MAX, |b| b.min(u32::MAX as u64) as u32);
            if bytes > MAX_RECORD_BYTES {
                return Err(ConfigError::RecordTooLarge {
                    task: task.to_string(),
                    bytes,
                    max: MAX_RECORD_BYTES,
                });
            }
            slot_bytes = slot_bytes.max(slot_for(bytes));
        }
        Ok(slot_bytes)
    }

    /// Resolves the defaults and checks everything. `records` are the task functions' exported
    /// record sizes (name, [`RecordSize`] export); the slot size is the largest of them, block-mode
    /// records counted only with [`Config::block_mode`] (at the resolved block size).
    pub(crate) fn resolve<'a>(
        &self,
        limits: &Limits,
        records: impl IntoIterator<Item = (&'a str, u32)>,
    ) -> Result<(Layout, u32), ConfigError> {
        let block = self.block_size.unwrap_or(limits.default_block);
        if block == 0 || !block.is_multiple_of(32) || block > limits.max_block {
            return Err(ConfigError::BlockSize {
                got: block,
                max: limits.max_block,
            });
        }
        if self.block_shared_bytes > Self::MAX_BLOCK_SHARED_BYTES {
            return Err(ConfigError::BlockSharedBytes {
                got: self.block_shared_bytes,
                max: Self::MAX_BLOCK_SHARED_BYTES,
            });
        }
        let max_grid = (limits.resident_blocks)(block);
        let grid = self.grid_size.unwrap_or(max_grid);
        if grid == 0 || grid > max_grid {
            return Err(ConfigError::GridSize {
                got: grid,
                max: max_grid,
            });
        }
        let queues = self.num_queues;
        if queues == 0 || queues as usize > MAX_QUEUES {
            return Err(ConfigError::NumQueues {
                got: queues,
                max: MAX_QUEUES as u32,
            });
        }
        let slot_bytes = self.slot_bytes(block, records)?;
        let warps = grid * (block / 32);
        let trace = self.trace_capacity()?;
        if u64::from(trace) * u64::from(warps) > u64::from(u32::MAX) {
            return Err(ConfigError::TraceTooLarge {
                events: trace,
                warps,
                max: u32::MAX / warps,
            });
        }
        let layout_for = |tasks: u32| {
            Layout::with_trace(
                Geometry {
                    blocks: grid,
                    warps_per_block: block / 32,
                    slots_per_warp: tasks,
                    num_queues: queues,
                    slot_bytes,
                },
                trace,
            )
        };
        let tasks = match self.max_tasks_per_warp {
            Some(tasks) => {
                if tasks < queues {
                    return Err(ConfigError::TooFewTasks { queues });
                }
                if tasks % queues != 0 {
                    return Err(ConfigError::TasksNotDivisible {
                        tasks,
                        queues,
                        suggestion: tasks.div_ceil(queues) * queues,
                    });
                }
                tasks
            }
            None => {
                let budget = self
                    .max_task_memory_bytes
                    .unwrap_or((limits.free_memory / 4).min(limits.default_budget_cap));
                let per_warp = per_slot(slot_bytes);
                let too_small = ConfigError::BudgetTooSmall {
                    budget,
                    warps,
                    per_warp: per_warp * MIN_TASKS_PER_WARP as u64,
                    min_tasks: MIN_TASKS_PER_WARP,
                    slot_bytes,
                };
                // Fixed costs (control words, queue and pool metadata, statistics) first, then as
                // many slots as fit, trimmed by the regions' alignment padding.
                let fixed = layout_for(queues)
                    .map_err(|_| ConfigError::TooManySlots {
                        warps,
                        tasks: queues,
                    })?
                    .runtime_bytes();
                let room = budget.checked_sub(fixed).ok_or(too_small.clone())?;
                let ids_cap = (u32::MAX as u64 - 1) / warps as u64;
                let mut fit = ((room / (warps as u64 * per_warp) + queues as u64).min(ids_cap)
                    as u32)
                    / queues
                    * queues;
                while fit >= queues && layout_for(fit).map_or(true, |l| l.runtime_bytes() > budget)
                {
                    fit -= queues;
                }
                if fit < MIN_TASKS_PER_WARP.max(queues) {
                    return Err(too_small);
                }
                match (self.max_task_memory_bytes, limits.default_tasks_per_warp) {
                    (None, Some(default)) => fit.min((default / queues * queues).max(queues)),
                    _ => fit,
                }
            }
        };
        let layout = layout_for(tasks).map_err(|_| ConfigError::TooManySlots { warps, tasks })?;
        if let (Some(budget), Some(_)) = (self.max_task_memory_bytes, self.max_tasks_per_warp)
            && layout.runtime_bytes() > budget
        {
            return Err(ConfigError::OverBudget {
                tasks,
                needed: layout.runtime_bytes(),
                budget,
            });
        }
        if layout.bytes > limits.free_memory {
            return Err(ConfigError::OutOfMemory {
                needed: layout.bytes,
                free: limits.free_memory,
            });
        }
        Ok((layout, block))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gpu_like() -> Limits<'static> {
        Limits {
            max_block: 1024,
            default_block: 256,
            resident_blocks: &|block| 132 * (2048 / block).max(1),
            free_memory: 80 << 30,
            default_budget_cap: 2 << 30,
            default_tasks_per_warp: Some(Config::DEFAULT_TASKS_PER_WARP),
        }
    }

    #[test]
    fn defaults_fill_the_device_and_the_budget() {
        let (layout, block) = Config::new().resolve(&gpu_like(), [("fib", 56)]).unwrap();
        assert_eq!(block, 256);
        assert_eq!(layout.geometry.blocks, 132 * 8);
        assert_eq!(layout.geometry.slot_bytes, 64);
        assert!(layout.bytes <= 2 << 30);
        assert!(layout.geometry.slots_per_warp >= 64);
    }

    #[test]
    fn a_slot_holds_the_largest_record_in_32_byte_units() {
        let thread = Config::new();
        let block = Config::new().block_mode();
        // Records of 56 and 72 bytes: 96-byte slots; none at all: a header and 16 bytes.
        assert_eq!(thread.slot_bytes(64, [("a", 56), ("b", 72)]), Ok(96));
        assert_eq!(thread.slot_bytes(64, []), Ok(64));
        // A block-mode record (16 bytes, then 16 a thread: 1040 bytes in blocks of 64 threads)
        // counts only in block mode.
        let frames = RecordSize::block(16, 16);
        assert_eq!(thread.slot_bytes(64, [("a", 56), ("b", frames)]), Ok(64));
        assert_eq!(block.slot_bytes(64, [("a", 56), ("b", frames)]), Ok(1056));
        assert!(matches!(
            thread.slot_bytes(64, [("huge", MAX_RECORD_BYTES + 1)]),
            Err(ConfigError::RecordTooLarge { .. })
        ));
    }

    #[test]
    fn the_default_pool_follows_the_grid_and_the_records() {
        // An H200's grid: 132 multiprocessors of 4 blocks of 128 threads; the GPU's cap.
        let l = Limits {
            default_budget_cap: 8 << 30,
            ..gpu_like()
        };
        let h200 = Config::new().grid_size(132 * 4).block_size(128);
        let default = Config::DEFAULT_TASKS_PER_WARP;
        for (queues, record) in [(1, 56), (3, 56), (1, 352)] {
            let (layout, _) = h200
                .clone()
                .num_queues(queues)
                .resolve(&l, [("task", record)])
                .unwrap();
            let g = layout.geometry;
            assert_eq!(
                g.slots_per_warp,
                default / queues * queues,
                "{queues} queues"
            );
            // The formula of `max_task_memory_bytes`'s docs, up to metadata and the rings'
            // rounding to powers of two.
            let slots = u64::from(g.warps()) * u64::from(g.slots_per_warp);
            let formula = slots * per_slot(g.slot_bytes);
            assert!(layout.bytes >= formula && layout.bytes < formula / 100 * 105 + (8 << 20));
        }
        // A cap below that: as many as fit.
        let small = Limits {
            default_budget_cap: 256 << 20,
            ..gpu_like()
        };
        let (layout, _) = h200.resolve(&small, [("fib", 56)]).unwrap();
        assert!(layout.geometry.slots_per_warp < default);
        assert!(layout.bytes <= 256 << 20);
        // A budget set by the user: as many as it allows, even beyond the default.
        let (layout, _) = h200
            .max_task_memory_bytes(2 << 30)
            .resolve(&l, [("fib", 56)])
            .unwrap();
        assert!(layout.geometry.slots_per_warp > default);
    }

    #[test]
    fn each_violation_has_its_error() {
        let l = gpu_like();
        assert_eq!(
            Config::new().block_size(100).resolve(&l, []),
            Err(ConfigError::BlockSize {
                got: 100,
                max: 1024
            })
        );
        assert_eq!(
            Config::new().block_size(2048).resolve(&l, []),
            Err(ConfigError::BlockSize {
                got: 2048,
                max: 1024
            })
        );
        assert_eq!(
            Config::new().grid_size(0).resolve(&l, []),
            Err(ConfigError::GridSize { got: 0, max: 1056 })
        );
        assert_eq!(
            Config::new().grid_size(5000).resolve(&l, []),
            Err(ConfigError::GridSize {
                got: 5000,
                max: 1056
            })
        );
        assert_eq!(
            Config::new().num_queues(0).resolve(&l, []),
            Err(ConfigError::NumQueues { got: 0, max: 16 })
        );
        assert_eq!(
            Config::new().num_queues(17).resolve(&l, []),
            Err(ConfigError::NumQueues { got: 17, max: 16 })
        );
        assert_eq!(
            Config::new()
                .num_queues(3)
                .max_tasks_per_warp(1000)
                .resolve(&l, []),
            Err(ConfigError::TasksNotDivisible {
                tasks: 1000,
                queues: 3,
                suggestion: 1002
            })
        );
        assert!(matches!(
            Config::new().max_task_memory_bytes(1 << 20).resolve(&l, []),
            Err(ConfigError::BudgetTooSmall { .. })
        ));
        assert!(matches!(
            Config::new()
                .max_tasks_per_warp(1 << 16)
                .max_task_memory_bytes(1 << 30)
                .resolve(&l, []),
            Err(ConfigError::OverBudget { .. })
        ));
        assert!(matches!(
            Config::new().max_tasks_per_warp(1 << 18).resolve(&l, []),
            Err(ConfigError::OutOfMemory { .. })
        ));
        assert!(matches!(
            Config::new().max_tasks_per_warp(1 << 20).resolve(&l, []),
            Err(ConfigError::TooManySlots { .. })
        ));
        assert!(matches!(
            Config::new().resolve(&l, [("big", MAX_RECORD_BYTES + 1)]),
            Err(ConfigError::RecordTooLarge { .. })
        ));
    }

    #[test]
    fn block_size_zero_and_budget_above_free_memory_are_refused() {
        let l = gpu_like();
        assert_eq!(
            Config::new().block_size(0).resolve(&l, []),
            Err(ConfigError::BlockSize { got: 0, max: 1024 })
        );
        // A budget larger than the free memory, with the pool sized from it.
        let e = Config::new()
            .max_task_memory_bytes(l.free_memory * 2)
            .resolve(&l, [("fib", 56)])
            .unwrap_err();
        let ConfigError::OutOfMemory { needed, free } = e else {
            panic!("expected OutOfMemory, got {e}")
        };
        assert!(needed > free && free == l.free_memory);
        assert!(e.to_string().contains("max_task_memory_bytes"), "{e}");
    }

    #[test]
    fn a_trace_comes_on_top_of_the_pool_budget() {
        let l = gpu_like();
        let plain = Config::new().resolve(&l, [("fib", 56)]).unwrap().0;
        let config = Config::new().trace_events_per_warp(1000);
        let (traced, _) = config.resolve(&l, [("fib", 56)]).unwrap();
        assert_eq!(traced.geometry, plain.geometry, "the same pools");
        assert_eq!(traced.trace_events_per_warp, 1000);
        let warps = u64::from(traced.geometry.warps());
        assert!(traced.trace_bytes() >= warps * 1000 * 24);
        let e = Config::new()
            .trace_events_per_warp(u32::MAX / 8)
            .resolve(&l, [])
            .unwrap_err();
        assert!(matches!(e, ConfigError::TraceTooLarge { .. }), "{e}");
        assert!(e.to_string().contains("lower trace_events_per_warp"), "{e}");
    }

    #[test]
    fn gpu_settings_are_checked() {
        assert_eq!(Config::new().check_gpu_settings(), Ok(()));
        let ok = Config::new().max_registers(64).stack_bytes(64 * 1024);
        assert_eq!(ok.check_gpu_settings(), Ok(()));
        for got in [0, 8, 256] {
            assert_eq!(
                Config::new().max_registers(got).check_gpu_settings(),
                Err(ConfigError::MaxRegisters { got })
            );
        }
        let e = Config::new()
            .stack_bytes(16)
            .check_gpu_settings()
            .unwrap_err();
        assert!(matches!(e, ConfigError::StackBytes { bytes: 16, .. }));
        assert!(e.to_string().contains("at least 256"), "{e}");
    }

    #[test]
    fn the_watchdog_variable_takes_seconds_or_off() {
        assert_eq!(parse_watchdog("off"), Ok(None));
        assert_eq!(
            parse_watchdog(" 2.5 "),
            Ok(Some(Duration::from_millis(2500)))
        );
        assert_eq!(parse_watchdog("30"), Ok(Some(Duration::from_secs(30))));
        for bad in ["", "0", "-1", "5s", "inf", "NaN"] {
            let e = parse_watchdog(bad).unwrap_err();
            assert!(e.to_string().contains("GTAP_WATCHDOG"), "{e}");
        }
        assert_eq!(Config::new().watchdog, Some(Config::DEFAULT_WATCHDOG));
        assert_eq!(Config::new().watchdog(None).watchdog, None);
    }

    #[test]
    fn messages_say_what_to_change() {
        let e = ConfigError::TasksNotDivisible {
            tasks: 1000,
            queues: 3,
            suggestion: 1002,
        };
        assert!(e.to_string().contains("use 1002"));
        let e = ConfigError::KernelDoesNotFit {
            kernel: "fib_kernel",
            block: 1024,
            registers: 128,
            shared: 58_576,
            largest: 512,
        };
        assert!(e.to_string().contains("use block_size 512 or less"), "{e}");
    }
}
