//! Per-warp statistics, written once by each warp at the end of a launch.

/// What one warp did during a launch.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WarpStats {
    /// Task polls (a task that waits once is polled twice).
    pub tasks: u64,
    /// Tasks spawned by this warp (allocations from its pool).
    pub spawned: u64,
    /// Successful steals (each takes up to 32 tasks).
    pub steals: u64,
    /// Idle steps that tried to steal.
    pub steal_attempts: u64,
    /// Scheduling steps that ran tasks (each runs up to 32).
    pub steps: u64,
    /// Clock cycles spent running tasks (the polls of each step).
    pub cycles_running: u64,
    /// Clock cycles spent finding batches and ending steps (pops, steals, publishing).
    pub cycles_scheduling: u64,
    /// Clock cycles spent with nothing to run (failed steal attempts and back-off).
    pub cycles_idle: u64,
    /// Children run inline, on the spawning lane's stack, because no task slot was free.
    pub inlined: u64,
    /// Most tasks of this warp's pool live at once, sampled every few steps.
    pub peak_live: u32,
    /// Padding.
    pub _pad: u32,
}

impl WarpStats {
    /// All counters zero.
    pub const ZERO: WarpStats = WarpStats {
        tasks: 0,
        spawned: 0,
        steals: 0,
        steal_attempts: 0,
        steps: 0,
        cycles_running: 0,
        cycles_scheduling: 0,
        cycles_idle: 0,
        inlined: 0,
        peak_live: 0,
        _pad: 0,
    };
}
