//! The device's view of one launch: typed pointers into the runtime's region.

use crate::abi::ErrorReport;
use crate::abi::WarpStats;
use crate::abi::WarpStatus;
use crate::abi::{LaunchParams, OPT_NO_SCRATCH, OPT_NO_TASKWAIT, OPT_RANDOM_QUEUE};
#[cfg(not(target_arch = "nvptx64"))]
use crate::abi::{OPT_CHILD_FIRST, OPT_LAZY_SPAWN, OPT_WORK_FIRST};
use crate::abi::{TraceEvent, WarpTraceMeta};
use crate::pool::{PoolCell, PoolMeta};
use crate::queue::QueueMeta;
use crate::record::Header;
use crate::scheduler::Control;

/// An option bit of the device's own region view, never of [`LaunchParams::options`]: the
/// launch runs a block-mode kernel, whose blocks keep only their scheduling warp's shared state
/// (see `abi::block_mode_shared_bytes`).
#[cfg(target_arch = "nvptx64")]
const BLOCK_MODE: u32 = 1 << 31;

/// Typed pointers into the runtime's region plus the geometry, resolved once per launch from
/// [`LaunchParams`]. On the GPU each block keeps a copy in shared memory.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Region {
    control: *mut Control,
    pub(crate) root_result: *mut u8,
    queue_meta: *mut QueueMeta,
    rings: *mut u32,
    pool_meta: *mut PoolMeta,
    pool_cells: *mut PoolCell,
    stats: *mut WarpStats,
    status: *mut WarpStatus,
    trace_meta: *mut WarpTraceMeta,
    trace: *mut TraceEvent,
    slots: *mut u8,
    pub(crate) error: *mut ErrorReport,
    /// The launch's context (`crate::context`), written by the lane that creates the root.
    pub(crate) context: *mut u8,
    pub(crate) host: u64,
    pub(crate) warps: u32,
    pub(crate) warps_per_block: u32,
    pub(crate) slots_per_warp: u32,
    pub(crate) num_queues: u32,
    pub(crate) queue_capacity: u32,
    pub(crate) ring_mask: u32,
    pub(crate) id_shift: u32,
    pub(crate) slot_bytes: u32,
    pub(crate) options: u32,
    pub(crate) seed: u32,
    pub(crate) stack_bytes: u32,
    /// Bytes of shared memory lent to block-mode tasks ([`LaunchParams::block_shared_bytes`]).
    pub(crate) block_shared_bytes: u32,
    /// Capacity of each warp's event trace; 0: the trace is off.
    pub(crate) trace_events_per_warp: u32,
}

impl Region {
    /// Resolves the launch parameters.
    pub fn new(p: &LaunchParams) -> Self {
        debug_assert!(
            p.base.is_multiple_of(crate::abi::REGION_ALIGN as u64),
            "misaligned runtime region"
        );
        let l = &p.layout;
        let g = &l.geometry;
        let at = |off: u64| (p.base + off) as *mut u8;
        Self {
            control: at(l.control) as *mut Control,
            root_result: at(l.root_result),
            queue_meta: at(l.queue_meta) as *mut QueueMeta,
            rings: at(l.rings) as *mut u32,
            pool_meta: at(l.pool_meta) as *mut PoolMeta,
            pool_cells: at(l.pool_cells) as *mut PoolCell,
            stats: at(l.stats) as *mut WarpStats,
            status: at(l.status) as *mut WarpStatus,
            trace_meta: at(l.trace_meta) as *mut WarpTraceMeta,
            trace: at(l.trace) as *mut TraceEvent,
            slots: at(l.slots),
            error: p.error as *mut ErrorReport,
            context: at(l.context),
            host: p.host,
            warps: g.warps(),
            warps_per_block: g.warps_per_block,
            slots_per_warp: g.slots_per_warp,
            num_queues: g.num_queues,
            queue_capacity: g.queue_capacity(),
            ring_mask: g.ring_entries() - 1,
            id_shift: g.id_shift(),
            slot_bytes: g.slot_bytes,
            options: p.options,
            seed: p.seed,
            stack_bytes: p.stack_bytes,
            block_shared_bytes: p.block_shared_bytes,
            trace_events_per_warp: l.trace_events_per_warp,
        }
    }

    /// Termination and abort flags.
    #[inline(always)]
    pub(crate) fn control(&self) -> &Control {
        // SAFETY: the region outlives the launch and was zeroed (a valid `Control`) before it.
        unsafe { &*self.control }
    }

    /// Header of task `id`'s record.
    #[inline(always)]
    pub(crate) fn header(&self, id: u32) -> *mut Header {
        let index = id & ((1 << self.id_shift) - 1);
        let slot = self.owner(id) as usize * self.slots_per_warp as usize + index as usize;
        // SAFETY: a task id names slot `index < slots_per_warp` of warp `w < warps`, inside the
        // slot region.
        unsafe { self.slots.add(slot * self.slot_bytes as usize) as *mut Header }
    }

    /// The task id of slot `index` of warp `w`.
    #[inline(always)]
    pub(crate) fn task_id(&self, w: u32, index: u32) -> u32 {
        (w << self.id_shift) | index
    }

    /// The warp whose pool task `id` belongs to.
    #[inline(always)]
    pub(crate) fn owner(&self, id: u32) -> u32 {
        id >> self.id_shift
    }

    /// Metadata of queue `q` of warp `w`.
    #[inline(always)]
    pub(crate) fn queue_meta(&self, w: u32, q: u32) -> &QueueMeta {
        // SAFETY: w < warps and q < num_queues index inside the zeroed metadata region.
        unsafe { &*self.queue_meta.add((w * self.num_queues + q) as usize) }
    }

    /// Ring buffer of queue `q` of warp `w`.
    #[inline(always)]
    pub(crate) fn ring(&self, w: u32, q: u32) -> *mut u32 {
        // SAFETY: w < warps and q < num_queues index inside the ring region.
        unsafe {
            self.rings
                .add(((w * self.num_queues + q) * (self.ring_mask + 1)) as usize)
        }
    }

    /// Free-id metadata of warp `w`.
    #[inline(always)]
    pub(crate) fn pool_meta(&self, w: u32) -> &PoolMeta {
        // SAFETY: w < warps indexes inside the zeroed metadata region.
        unsafe { &*self.pool_meta.add(w as usize) }
    }

    /// The cell of warp `w`'s free-id ring for position `p` (`2^id_shift` cells, so a mask).
    #[inline(always)]
    pub(crate) fn pool_cell(&self, w: u32, p: u32) -> &PoolCell {
        let cell = self.task_id(w, p & ((1 << self.id_shift) - 1));
        // SAFETY: w < warps and the masked position index inside the zeroed cell region.
        unsafe { &*self.pool_cells.add(cell as usize) }
    }

    /// Statistics of warp `w`.
    #[inline(always)]
    pub(crate) fn stats(&self, w: u32) -> *mut WarpStats {
        // SAFETY: w < warps indexes inside the statistics region.
        unsafe { self.stats.add(w as usize) }
    }

    /// Published status of warp `w`, for the host's watchdog.
    #[inline(always)]
    pub(crate) fn status(&self, w: u32) -> &WarpStatus {
        // SAFETY: w < warps indexes inside the zeroed status region.
        unsafe { &*self.status.add(w as usize) }
    }

    /// Whether this launch records the event trace.
    #[inline(always)]
    pub(crate) fn traced(&self) -> bool {
        self.trace_events_per_warp != 0
    }

    /// Trace summary of warp `w` (only when [`Region::traced`]).
    #[inline(always)]
    pub(crate) fn trace_meta(&self, w: u32) -> *mut WarpTraceMeta {
        // SAFETY: with the trace on, the summary region holds one per warp, and w < warps.
        unsafe { self.trace_meta.add(w as usize) }
    }

    /// Event `i` of warp `w`'s trace; `i < trace_events_per_warp`.
    #[inline(always)]
    pub(crate) fn trace_event(&self, w: u32, i: u32) -> *mut TraceEvent {
        let at = w as usize * self.trace_events_per_warp as usize + i as usize;
        // SAFETY: w < warps and i < trace_events_per_warp index inside the trace region.
        unsafe { self.trace.add(at) }
    }

    /// Payload bytes available to a task's future.
    #[inline(always)]
    pub(crate) fn payload_bytes(&self) -> u32 {
        self.slot_bytes - crate::abi::HEADER_BYTES as u32
    }

    /// Whether the deterministic executor asked for random queue choice.
    #[inline(always)]
    pub(crate) fn random_queue(&self) -> bool {
        self.options & OPT_RANDOM_QUEUE != 0
    }

    /// This view, marked as a block-mode launch's ([`Region::block_mode`]).
    #[cfg(target_arch = "nvptx64")]
    pub(crate) fn in_block_mode(&self) -> Self {
        Self {
            options: self.options | BLOCK_MODE,
            ..*self
        }
    }

    /// Whether a block-mode kernel runs the launch (set on the device by its entry: the host
    /// does not say).
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    pub(crate) fn block_mode(&self) -> bool {
        self.options & BLOCK_MODE != 0
    }

    /// Whether no task of the launch may wait ([`OPT_NO_TASKWAIT`]): tasks finish when they
    /// return, and the launch when no task is left.
    #[inline(always)]
    pub(crate) fn no_taskwait(&self) -> bool {
        self.options & OPT_NO_TASKWAIT != 0
    }

    /// Whether the launch's thread-mode blocks reserve scratch memory (no [`OPT_NO_SCRATCH`]).
    #[inline(always)]
    pub(crate) fn scratch_reserved(&self) -> bool {
        self.options & OPT_NO_SCRATCH == 0
    }

    /// Whether the work-first CPU executor runs the launch ([`OPT_WORK_FIRST`]).
    #[cfg(not(target_arch = "nvptx64"))]
    #[inline(always)]
    pub(crate) fn work_first(&self) -> bool {
        self.options & OPT_WORK_FIRST != 0
    }

    /// Whether the parallel CPU executor asked for lazy task creation ([`OPT_LAZY_SPAWN`]).
    #[cfg(not(target_arch = "nvptx64"))]
    #[inline(always)]
    pub(crate) fn lazy_spawn(&self) -> bool {
        self.options & OPT_LAZY_SPAWN != 0
    }

    /// Whether the deterministic executor asked for seeded child-first spawns
    /// ([`OPT_CHILD_FIRST`]).
    #[cfg(not(target_arch = "nvptx64"))]
    #[inline(always)]
    pub(crate) fn child_first(&self) -> bool {
        self.options & OPT_CHILD_FIRST != 0
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::collections::HashSet;

    use crate::abi::{Geometry, HEADER_BYTES, Layout, POOL_CELL_BYTES, RING_ENTRY_BYTES};
    use crate::testing::{Launch, geometry};

    /// 3 warps of 96 slots (ids need 7 bits: 96 is not a power of two) and 3 queues of 32.
    fn shape() -> Geometry {
        Geometry {
            blocks: 1,
            ..geometry(3, 96, 3)
        }
    }

    #[test]
    fn a_task_id_names_its_owner_warp_and_slot() {
        let launch = Launch::leak(shape());
        let r = launch.region();
        assert_eq!(r.id_shift, 7);
        let mut ids = HashSet::new();
        for w in 0..3 {
            for i in 0..96 {
                let id = r.task_id(w, i);
                assert_eq!(r.owner(id), w);
                assert_eq!(id & ((1 << r.id_shift) - 1), i);
                assert!(ids.insert(id), "id {id:#x} named twice");
            }
        }
        // Every id stays below NONE and the continuation sentinels.
        assert!(ids.iter().all(|&id| id < crate::record::SPAWN_QUEUE));
    }

    #[test]
    fn each_slot_has_its_own_place_inside_the_slot_region() {
        let g = shape();
        let layout = Layout::new(g).expect("valid");
        let launch = Launch::leak(g);
        let r = launch.region();
        let base = r.control as usize - layout.control as usize;
        for w in 0..3 {
            for i in 0..96 {
                let at = r.header(r.task_id(w, i)) as usize - base;
                let slot = (w * 96 + i) as usize;
                assert_eq!(
                    at,
                    layout.slots as usize + slot * g.slot_bytes as usize,
                    "slot {i} of warp {w}"
                );
                assert!(at + g.slot_bytes as usize <= layout.bytes as usize);
            }
        }
        assert_eq!(r.payload_bytes(), g.slot_bytes - HEADER_BYTES as u32);
    }

    #[test]
    fn per_warp_and_per_queue_state_sits_at_its_layout_offset() {
        let g = shape();
        let layout = Layout::new(g).expect("valid");
        let launch = Launch::leak(g);
        let r = launch.region();
        let base = r.control as usize - layout.control as usize;
        let offset = |p: *const u8| p as usize - base;
        let ring_bytes = g.ring_entries() as usize * RING_ENTRY_BYTES as usize;
        for w in 0..3u32 {
            for q in 0..3u32 {
                let k = (w * 3 + q) as usize;
                assert_eq!(
                    offset(r.queue_meta(w, q) as *const _ as *const u8),
                    layout.queue_meta as usize + k * size_of::<crate::queue::QueueMeta>()
                );
                assert_eq!(
                    offset(r.ring(w, q) as *const u8),
                    layout.rings as usize + k * ring_bytes
                );
            }
            assert_eq!(
                offset(r.pool_meta(w) as *const _ as *const u8),
                layout.pool_meta as usize + w as usize * size_of::<crate::pool::PoolMeta>()
            );
            assert_eq!(
                offset(r.status(w) as *const _ as *const u8),
                layout.status as usize + w as usize * size_of::<crate::abi::WarpStatus>()
            );
            assert_eq!(
                offset(r.stats(w) as *const u8),
                layout.stats as usize + w as usize * size_of::<crate::abi::WarpStats>()
            );
            // A warp's free-id ring has 2^id_shift cells and positions wrap around it.
            let cell = |p: u32| offset(r.pool_cell(w, p) as *const _ as *const u8);
            let first = layout.pool_cells as usize + (w as usize * 128) * POOL_CELL_BYTES as usize;
            assert_eq!(cell(0), first);
            assert_eq!(cell(127), first + 127 * POOL_CELL_BYTES as usize);
            assert_eq!(cell(128), first);
            assert_eq!(cell(u32::MAX), cell(127));
        }
        assert_eq!(offset(r.root_result), layout.root_result as usize);
    }

    #[test]
    fn the_launch_options_are_read_from_the_parameters() {
        let launch = Launch::leak(shape());
        let r = launch.region();
        assert_eq!((r.warps, r.warps_per_block, r.num_queues), (3, 3, 3));
        assert_eq!((r.queue_capacity, r.ring_mask), (32, 31));
        assert!(!r.random_queue());
        let random = super::Region {
            options: crate::abi::OPT_RANDOM_QUEUE,
            ..*r
        };
        assert!(random.random_queue());
    }
}
