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
    /// Clock cycles spent running tasks (the polls of each step). Sampled, as
    /// `cycles_scheduling` is: only the steps that read the stop word (one in 32) are timed,
    /// and each counts 32 times, so that the other steps carry no clock reads.
    pub cycles_running: u64,
    /// Clock cycles spent finding batches and ending steps (pops, steals, publishing); sampled
    /// as `cycles_running` is.
    pub cycles_scheduling: u64,
    /// Clock cycles spent with nothing to run (failed steal attempts and back-off).
    pub cycles_idle: u64,
    /// Children run inline, on the spawning lane's stack, because no task slot was free.
    pub inlined: u64,
    /// Parallel CPU executor only: of `spawned`, children polled at once in the spawning lane
    /// ([`OPT_LAZY_SPAWN`](super::OPT_LAZY_SPAWN)); their polls are counted in `tasks` too.
    pub at_once: u64,
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
        at_once: 0,
        peak_live: 0,
        _pad: 0,
    };
}

#[cfg(test)]
mod tests {
    use core::mem::{align_of, offset_of, size_of};

    use super::WarpStats;

    /// The host reads the device's statistics as this struct: ten `u64`s, then two `u32`s,
    /// with no implicit padding, so the layout is the same on `x86_64` and `nvptx64`.
    #[test]
    fn the_layout_is_the_one_the_host_reads() {
        assert_eq!(size_of::<WarpStats>(), 88);
        assert_eq!(align_of::<WarpStats>(), 8);
        let offsets = [
            offset_of!(WarpStats, tasks),
            offset_of!(WarpStats, spawned),
            offset_of!(WarpStats, steals),
            offset_of!(WarpStats, steal_attempts),
            offset_of!(WarpStats, steps),
            offset_of!(WarpStats, cycles_running),
            offset_of!(WarpStats, cycles_scheduling),
            offset_of!(WarpStats, cycles_idle),
            offset_of!(WarpStats, inlined),
            offset_of!(WarpStats, at_once),
            offset_of!(WarpStats, peak_live),
            offset_of!(WarpStats, _pad),
        ];
        assert_eq!(offsets, [0, 8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 84]);
    }

    #[test]
    fn zero_is_all_zero_bytes() {
        // The region is zeroed before a launch; a warp that never writes its statistics must
        // read back as `ZERO`.
        assert_eq!(WarpStats::ZERO, WarpStats::default());
        // SAFETY: `WarpStats` holds only integers, for which all-zero bytes are valid.
        let zeroed: WarpStats = unsafe { core::mem::zeroed() };
        assert_eq!(zeroed, WarpStats::ZERO);
    }
}
