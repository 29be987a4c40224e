//! Where everything lives in device memory, and the parameters every kernel receives.
//!
//! The host allocates one region per runtime and the device addresses it through the offsets
//! computed here, so both sides agree by construction. The CPU executor allocates the same
//! region in host memory. Every region except the task slots, the ring buffers and the trace
//! events must be zeroed before a launch ([`Layout::reset_range`]): all-zero is the valid
//! initial state of queues, pools, control words and statistics.

use super::{
    CONTEXT_BYTES, HEADER_BYTES, MAX_QUEUES, POOL_CELL_BYTES, REGION_ALIGN, RING_ENTRY_BYTES,
    ROOT_RESULT_BYTES, SLOT_ALIGN, TraceEvent, WarpStats, WarpStatus, WarpTraceMeta, align_up,
};
use crate::pool::PoolMeta;
use crate::queue::QueueMeta;
use crate::scheduler::Control;

/// One [`REGION_ALIGN`]-aligned line, to allocate a region in host memory.
#[repr(C, align(128))]
#[derive(Clone, Copy)]
pub struct Line(pub [u8; REGION_ALIGN]);

/// The runtime's shape: the numbers the host and the device must agree on.
///
/// Validation with user-facing messages lives in `gtap-host`; [`Geometry::check`] states the
/// invariants the device code relies on.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    /// Thread blocks in the grid.
    pub blocks: u32,
    /// Warps per block (block size / 32).
    pub warps_per_block: u32,
    /// Task slots owned by each warp: the most tasks a warp may have spawned and not yet freed.
    pub slots_per_warp: u32,
    /// Divergence-aware queues per warp.
    pub num_queues: u32,
    /// Bytes per task slot: the record header plus the largest task future, a multiple of 16.
    pub slot_bytes: u32,
}

/// Why a [`Geometry`] cannot be laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GeometryError {
    /// A count that must be positive is zero.
    Zero(&'static str),
    /// `num_queues` exceeds [`MAX_QUEUES`].
    TooManyQueues,
    /// `slots_per_warp` is not a multiple of `num_queues`.
    SlotsNotDivisible,
    /// `slot_bytes` is not a multiple of `SLOT_ALIGN` or has no room for a payload.
    BadSlotBytes,
    /// The task ids or byte offsets do not fit the device's 32/64-bit counters, or the trace
    /// has more than `u32::MAX` events in all.
    TooLarge,
}

impl Geometry {
    /// Total warps in the grid.
    pub const fn warps(&self) -> u32 {
        self.blocks * self.warps_per_block
    }

    /// Capacity of each ring queue: the warp's slots shared out among its queues.
    pub const fn queue_capacity(&self) -> u32 {
        self.slots_per_warp / self.num_queues
    }

    /// Task ids are `warp << id_shift | index`: `2^id_shift` is the smallest power of two that
    /// holds `slots_per_warp`, so owner and index come out with a shift and a mask.
    pub const fn id_shift(&self) -> u32 {
        self.slots_per_warp.next_power_of_two().trailing_zeros()
    }

    /// Entries of each ring queue in memory: the capacity rounded up to a power of two, so a
    /// position maps to its entry with a mask.
    pub const fn ring_entries(&self) -> u32 {
        self.queue_capacity().next_power_of_two()
    }

    /// Bytes available for a task's future in one slot.
    pub const fn payload_bytes(&self) -> u32 {
        self.slot_bytes - HEADER_BYTES as u32
    }

    /// Checks the invariants the device code relies on.
    pub fn check(&self) -> Result<(), GeometryError> {
        for (v, name) in [
            (self.blocks, "blocks"),
            (self.warps_per_block, "warps_per_block"),
            (self.slots_per_warp, "slots_per_warp"),
            (self.num_queues, "num_queues"),
        ] {
            if v == 0 {
                return Err(GeometryError::Zero(name));
            }
        }
        if self.num_queues as usize > MAX_QUEUES {
            return Err(GeometryError::TooManyQueues);
        }
        if !self.slots_per_warp.is_multiple_of(self.num_queues) {
            return Err(GeometryError::SlotsNotDivisible);
        }
        if !(self.slot_bytes as u64).is_multiple_of(SLOT_ALIGN)
            || self.slot_bytes as usize <= HEADER_BYTES
        {
            return Err(GeometryError::BadSlotBytes);
        }
        let warps = (self.blocks as u64) * (self.warps_per_block as u64);
        let slot_bytes = warps * self.slots_per_warp as u64 * self.slot_bytes as u64;
        if (warps << self.id_shift()) >= u32::MAX as u64 || slot_bytes >= (1u64 << 46) {
            return Err(GeometryError::TooLarge);
        }
        Ok(())
    }
}

/// Byte offsets of each region inside the runtime's allocation.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// The geometry this layout was computed for.
    pub geometry: Geometry,
    /// Capacity of each warp's event trace ([`crate::abi::TraceEvent`]s); 0: no trace.
    pub trace_events_per_warp: u32,
    /// Termination and abort flags.
    pub control: u64,
    /// The root task's result.
    pub root_result: u64,
    /// The launch's context ([`CONTEXT_BYTES`]), written by the lane that creates the root.
    pub context: u64,
    /// One [`QueueMeta`] per (warp, queue).
    pub queue_meta: u64,
    /// Ring buffers of task ids, `ring_entries` entries per (warp, queue).
    pub rings: u64,
    /// One [`PoolMeta`] per warp.
    pub pool_meta: u64,
    /// Free-id rings, `2^id_shift` cells per warp.
    pub pool_cells: u64,
    /// One [`WarpStats`] per warp.
    pub stats: u64,
    /// One [`WarpStatus`] per warp, read by the host's watchdog while the kernel runs.
    pub status: u64,
    /// One [`WarpTraceMeta`] per warp when the trace is on (no bytes otherwise).
    pub trace_meta: u64,
    /// Task slots, `slot_bytes` each.
    pub slots: u64,
    /// The trace's events, `trace_events_per_warp` [`TraceEvent`]s per warp, last so that
    /// [`Layout::trace_bytes`] is the region's tail.
    pub trace: u64,
    /// Total bytes.
    pub bytes: u64,
}

impl Layout {
    /// Lays out `geometry`, which must pass [`Geometry::check`], without an event trace.
    pub fn new(geometry: Geometry) -> Result<Self, GeometryError> {
        Self::with_trace(geometry, 0)
    }

    /// Lays out `geometry` with room for `trace_events_per_warp` trace events per warp (0: no
    /// trace; see [`crate::abi::TraceEvent`]).
    pub fn with_trace(
        geometry: Geometry,
        trace_events_per_warp: u32,
    ) -> Result<Self, GeometryError> {
        geometry.check()?;
        let warps = geometry.warps() as u64;
        let queues = warps * geometry.num_queues as u64;
        let slots = warps * geometry.slots_per_warp as u64;
        let mut at = 0u64;
        let mut region = |bytes: u64| {
            let start = align_up(at, REGION_ALIGN as u64);
            at = start + bytes;
            start
        };
        let control = region(core::mem::size_of::<Control>() as u64);
        let root_result = region(ROOT_RESULT_BYTES as u64);
        let context = region(CONTEXT_BYTES as u64);
        let queue_meta = region(queues * core::mem::size_of::<QueueMeta>() as u64);
        let pool_meta = region(warps * core::mem::size_of::<PoolMeta>() as u64);
        let stats = region(warps * core::mem::size_of::<WarpStats>() as u64);
        let status = region(warps * core::mem::size_of::<WarpStatus>() as u64);
        let traced = trace_events_per_warp != 0;
        let trace_meta = region(traced as u64 * warps * size_of::<WarpTraceMeta>() as u64);
        let cells = warps << geometry.id_shift();
        let pool_cells = region(cells * POOL_CELL_BYTES);
        let rings = region(queues * geometry.ring_entries() as u64 * RING_ENTRY_BYTES);
        let slots_at = region(slots * geometry.slot_bytes as u64);
        let trace_events = warps * trace_events_per_warp as u64;
        if trace_events > u32::MAX as u64 {
            return Err(GeometryError::TooLarge);
        }
        let trace = region(trace_events * size_of::<TraceEvent>() as u64);
        Ok(Self {
            geometry,
            trace_events_per_warp,
            control,
            root_result,
            context,
            queue_meta,
            rings,
            pool_meta,
            pool_cells,
            stats,
            status,
            trace_meta,
            slots: slots_at,
            trace,
            bytes: align_up(at, REGION_ALIGN as u64),
        })
    }

    /// The metadata that must be zeroed before every launch: control words, root result, queue
    /// and pool metadata, statistics, warp statuses, trace summaries.
    pub fn reset_range(&self) -> core::ops::Range<u64> {
        self.control..self.pool_cells
    }

    /// Byte offset of the launch's stop word, into which the host's watchdog writes
    /// [`STOPPED_BY_WATCHDOG`](super::STOPPED_BY_WATCHDOG) to stop a running launch.
    pub fn stop_word(&self) -> u64 {
        self.control + Control::STOP_WORD_OFFSET
    }

    /// The free-id cells, which must be zeroed before a launch as far as the previous launch
    /// used them: cells `0..min(frees, 2^id_shift)` of each warp, where `frees` is the warp's
    /// `PoolMeta::frees` after that launch (all of them, to be safe, when unknown).
    /// Rings and slots need no reset.
    pub fn cells_range(&self) -> core::ops::Range<u64> {
        self.pool_cells..self.rings
    }

    /// Bytes of the event trace (the region's tail); zero when the trace is off.
    pub fn trace_bytes(&self) -> u64 {
        self.bytes - self.trace
    }

    /// Bytes of everything but the event trace: what the pool budget
    /// (`max_task_memory_bytes`) bounds.
    pub fn runtime_bytes(&self) -> u64 {
        self.trace
    }
}

/// Per-launch parameters, passed by value to every kernel. `#[repr(C)]` and identical on host
/// and device.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LaunchParams {
    /// Device address of the runtime's region, aligned to [`REGION_ALIGN`].
    pub base: u64,
    /// Device address of the [`ErrorReport`](super::ErrorReport) (host memory mapped into the device on the GPU).
    pub error: u64,
    /// The region's layout.
    pub layout: Layout,
    /// Scheduling options ([`OPT_RANDOM_QUEUE`](super::OPT_RANDOM_QUEUE)).
    pub options: u32,
    /// Seed for victim selection (mixed with the clock on the GPU).
    pub seed: u32,
    /// CPU executor only: address of its driver; zero on the GPU.
    pub host: u64,
    /// Bytes of stack each thread has for running children inline when no task slot is free
    /// (the GPU's per-thread stack limit; on the CPU executor, what its worker threads get
    /// beyond the scheduler's own frames).
    pub stack_bytes: u32,
    /// Bytes of shared memory a block-mode task may borrow (`Block::shared`); the launch's
    /// blocks have that much after the runtime's block-mode state
    /// ([`block_mode_shared_bytes`](super::block_mode_shared_bytes)). Unused in thread mode.
    pub block_shared_bytes: u32,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pool::PoolCell;

    const OK: Geometry = Geometry {
        blocks: 2,
        warps_per_block: 4,
        slots_per_warp: 96,
        num_queues: 3,
        slot_bytes: 64,
    };

    fn with(change: impl FnOnce(&mut Geometry)) -> Result<(), GeometryError> {
        let mut g = OK;
        change(&mut g);
        g.check()
    }

    #[test]
    fn every_count_must_be_positive() {
        assert_eq!(OK.check(), Ok(()));
        assert_eq!(with(|g| g.blocks = 0), Err(GeometryError::Zero("blocks")));
        assert_eq!(
            with(|g| g.warps_per_block = 0),
            Err(GeometryError::Zero("warps_per_block"))
        );
        assert_eq!(
            with(|g| g.slots_per_warp = 0),
            Err(GeometryError::Zero("slots_per_warp"))
        );
        assert_eq!(
            with(|g| g.num_queues = 0),
            Err(GeometryError::Zero("num_queues"))
        );
    }

    #[test]
    fn queues_and_slots_must_fit_together() {
        assert_eq!(
            with(|g| {
                g.num_queues = MAX_QUEUES as u32;
                g.slots_per_warp = 16 * 8;
            }),
            Ok(())
        );
        assert_eq!(
            with(|g| {
                g.num_queues = MAX_QUEUES as u32 + 1;
                g.slots_per_warp = 17 * 8;
            }),
            Err(GeometryError::TooManyQueues)
        );
        assert_eq!(
            with(|g| g.slots_per_warp = 97),
            Err(GeometryError::SlotsNotDivisible)
        );
    }

    #[test]
    fn slots_hold_a_header_and_a_payload_in_32_byte_units() {
        for bytes in [40, 48] {
            assert_eq!(
                with(|g| g.slot_bytes = bytes),
                Err(GeometryError::BadSlotBytes)
            );
        }
        assert_eq!(
            with(|g| g.slot_bytes = HEADER_BYTES as u32),
            Err(GeometryError::BadSlotBytes)
        );
        assert_eq!(with(|g| g.slot_bytes = HEADER_BYTES as u32 + 32), Ok(()));
        assert_eq!(OK.payload_bytes(), 64 - HEADER_BYTES as u32);
    }

    #[test]
    fn task_ids_and_offsets_must_fit_their_counters() {
        // 2^17 warps of 2^14 slots: ids up to 2^31 fit in a u32 with NONE left over ...
        let wide = |slots_per_warp| Geometry {
            blocks: 1 << 15,
            warps_per_block: 4,
            slots_per_warp,
            num_queues: 1,
            slot_bytes: 64,
        };
        assert_eq!(wide(1 << 14).check(), Ok(()));
        // ... 2^15 slots would make ids reach 2^32.
        assert_eq!(wide(1 << 15).check(), Err(GeometryError::TooLarge));
        // Slots totalling 2^46 bytes or more do not fit the offsets.
        let big = Geometry {
            blocks: 1 << 10,
            warps_per_block: 1 << 5,
            slots_per_warp: 1 << 12,
            num_queues: 1,
            slot_bytes: 1 << 19,
        };
        assert_eq!(big.check(), Err(GeometryError::TooLarge));
        assert_eq!(
            Geometry {
                slot_bytes: (1 << 19) - SLOT_ALIGN as u32,
                ..big
            }
            .check(),
            Ok(())
        );
    }

    #[test]
    fn derived_sizes() {
        assert_eq!(OK.warps(), 8);
        assert_eq!(OK.queue_capacity(), 32);
        assert_eq!(OK.ring_entries(), 32);
        // 96 slots: ids need 7 bits.
        assert_eq!(OK.id_shift(), 7);
        let g = Geometry {
            slots_per_warp: 99,
            ..OK
        };
        assert_eq!(
            (g.queue_capacity(), g.ring_entries(), g.id_shift()),
            (33, 64, 7)
        );
        let g = Geometry {
            slots_per_warp: 3,
            ..OK
        };
        assert_eq!(
            (g.queue_capacity(), g.ring_entries(), g.id_shift()),
            (1, 1, 2)
        );
    }

    #[test]
    fn an_invalid_geometry_has_no_layout() {
        let g = Geometry {
            num_queues: 0,
            ..OK
        };
        assert_eq!(Layout::new(g), Err(GeometryError::Zero("num_queues")));
    }

    #[test]
    fn regions_are_aligned_ordered_and_large_enough() {
        let l = Layout::new(OK).expect("valid");
        let warps = 8u64;
        let queues = warps * 3;
        // (start, bytes) in address order.
        let regions = [
            (l.control, core::mem::size_of::<Control>() as u64),
            (l.root_result, ROOT_RESULT_BYTES as u64),
            (l.context, CONTEXT_BYTES as u64),
            (l.queue_meta, queues * 128),
            (l.pool_meta, warps * 128),
            (l.stats, warps * core::mem::size_of::<WarpStats>() as u64),
            (l.status, warps * core::mem::size_of::<WarpStatus>() as u64),
            (l.pool_cells, (warps << 7) * 8),
            (l.rings, queues * 32 * 4),
            (l.slots, warps * 96 * 64),
        ];
        assert_eq!(l.control, 0);
        for (i, &(start, bytes)) in regions.iter().enumerate() {
            assert_eq!(start % REGION_ALIGN as u64, 0, "region {i} is aligned");
            let end = regions.get(i + 1).map_or(l.bytes, |r| r.0);
            assert!(start + bytes <= end, "region {i} overlaps the next");
        }
        assert_eq!(l.bytes % REGION_ALIGN as u64, 0);
        assert_eq!(core::mem::size_of::<QueueMeta>(), 128);
        assert_eq!(core::mem::size_of::<PoolMeta>(), 128);
        assert_eq!(core::mem::size_of::<PoolCell>(), 8);
        // What must be zeroed before a launch: everything up to the free-id cells, then the
        // cells; rings and slots are not reset.
        assert_eq!(l.reset_range(), l.control..l.pool_cells);
        assert_eq!(l.cells_range(), l.pool_cells..l.rings);
        assert!(l.cells_range().end <= l.rings && l.rings < l.slots);
        // No trace: no bytes for it.
        assert_eq!((l.trace_bytes(), l.runtime_bytes()), (0, l.bytes));
        assert_eq!(l.trace_meta, l.pool_cells);
    }

    #[test]
    fn a_trace_adds_per_warp_summaries_to_reset_and_events_at_the_end() {
        let plain = Layout::new(OK).expect("valid");
        let l = Layout::with_trace(OK, 100).expect("valid");
        let warps = 8u64;
        assert_eq!(l.trace_events_per_warp, 100);
        // The summaries are zeroed with the rest of the metadata before each launch.
        assert!(l.reset_range().contains(&l.trace_meta));
        assert!(l.trace_meta + warps * size_of::<WarpTraceMeta>() as u64 <= l.pool_cells);
        // The events come last and the pools are laid out as without a trace.
        assert_eq!(
            l.trace,
            align_up(l.slots + warps * 96 * 64, REGION_ALIGN as u64)
        );
        assert!(l.trace_bytes() >= warps * 100 * size_of::<TraceEvent>() as u64);
        assert_eq!(l.trace_bytes() + l.runtime_bytes(), l.bytes);
        assert!(l.runtime_bytes() - plain.runtime_bytes() <= 2 * REGION_ALIGN as u64);
        assert_eq!(
            Layout::with_trace(OK, u32::MAX).map(|_| ()),
            Err(GeometryError::TooLarge)
        );
    }
}
