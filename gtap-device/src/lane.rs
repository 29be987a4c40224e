//! Per-lane execution context: which task a lane is polling and what that poll has done.
//!
//! A lane's context is written only by that lane (on the GPU it sits in shared memory at the
//! lane's thread index, on the CPU in the simulated warp), so plain fields suffice.

use crate::region::Region;
use crate::scheduler::WarpShared;
use crate::task::TaskInfo;

/// The task asked to suspend at a `taskwait!` (children are outstanding).
pub(crate) const SUSPEND: u32 = 2;
/// Something this poll did raised a device error: the task must not continue past its next
/// wait (its children may be missing).
pub(crate) const FAILED: u32 = 4;
/// The lane's scratch memory is lent out (`gtap::thread::scratch`).
pub(crate) const SCRATCH: u32 = 8;
/// The lane runs a child inline (no task slot was free): every spawn runs inline too, and no
/// wait suspends (see [`crate::task`]).
pub(crate) const INLINE: u32 = 16;

/// Words of scratch memory each thread has (`gtap::thread::scratch`).
pub const SCRATCH_WORDS: usize = 16;

/// A thread's scratch memory: shared memory on the GPU, beside the lane contexts.
pub type Scratch = [u32; SCRATCH_WORDS];

/// What one lane is doing right now.
#[repr(C)]
pub struct LaneCtx {
    /// Task id being polled.
    pub(crate) task: u32,
    /// Children spawned by this poll since the task's last wait.
    pub(crate) spawned: u32,
    /// [`SUSPEND`], [`FAILED`], [`SCRATCH`] and [`INLINE`] bits.
    pub(crate) flags: u32,
    /// Low 32 bits of the thread's stack address where the worker started (see
    /// [`stack_address`]): how much stack an inline child may still use is measured from here.
    pub(crate) stack_top: u32,
    /// The task function being polled (for error reports).
    pub(crate) info: *const TaskInfo,
}

impl LaneCtx {
    /// An idle lane.
    pub const IDLE: LaneCtx = LaneCtx {
        task: u32::MAX,
        spawned: 0,
        flags: 0,
        stack_top: 0,
        info: core::ptr::null(),
    };

    /// An idle lane whose worker starts at the calling frame's stack depth.
    #[inline(always)]
    pub fn starting_here() -> LaneCtx {
        LaneCtx {
            stack_top: stack_address(),
            ..Self::IDLE
        }
    }
}

/// Low 32 bits of an address in the calling frame's stack: the difference of two of them on one
/// thread is the stack used between the two frames (either direction of growth, and a thread's
/// stack is far below 4 GiB). On the GPU it is the generic address of a local.
#[inline(always)]
pub(crate) fn stack_address() -> u32 {
    let marker = 0u8;
    core::hint::black_box(&marker) as *const u8 as usize as u32
}

/// Bytes of stack used between the frame that took `top` and the calling frame.
#[inline(always)]
pub(crate) fn stack_used(top: u32) -> u32 {
    (stack_address().wrapping_sub(top) as i32).unsigned_abs()
}

/// Everything a lane needs while it polls a task: its own context, its warp's shared state and
/// the runtime's global view.
#[derive(Clone, Copy)]
pub struct LaneView {
    pub(crate) ctx: *mut LaneCtx,
    pub(crate) shared: *const WarpShared,
    pub(crate) region: *const Region,
    /// The lane's global warp index (its pool and queues).
    pub(crate) warp: u32,
    /// The thread's scratch memory: null for a block-mode thread on the host, which has none;
    /// read it through `arch::lane_scratch`, which knows block mode on the GPU too.
    pub(crate) scratch: *mut Scratch,
}

impl LaneView {
    /// The lane's own context.
    ///
    /// # Safety
    /// Must be called by the lane that owns the context, with no other live reference to it.
    #[inline(always)]
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn ctx(&self) -> &mut LaneCtx {
        // SAFETY: the caller is the owning lane (contexts are per lane) and holds no other reference.
        unsafe { &mut *self.ctx }
    }

    /// The warp's shared state.
    #[inline(always)]
    pub(crate) fn shared(&self) -> &WarpShared {
        // SAFETY: the executor keeps the warp's shared state alive while any lane of it runs.
        unsafe { &*self.shared }
    }

    /// The runtime's view of device memory.
    #[inline(always)]
    pub(crate) fn region(&self) -> &Region {
        // SAFETY: the runtime outlives every worker of the launch.
        unsafe { &*self.region }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::collections::HashSet;

    use super::*;
    use crate::arch::{WARP_SIZE, Warp};
    use crate::testing::{Launch, geometry};

    #[test]
    fn the_flags_are_distinct_bits() {
        // A poll sets and clears them independently (`thread::scratch` around a `task!` that
        // fails, then a wait): no flag may share a bit with another.
        let flags = [SUSPEND, FAILED, SCRATCH];
        for (i, a) in flags.iter().enumerate() {
            assert_eq!(a.count_ones(), 1, "flag {a:#x} is one bit");
            for b in &flags[i + 1..] {
                assert_eq!(a & b, 0, "flags {a:#x} and {b:#x} overlap");
            }
        }
    }

    #[test]
    fn an_idle_lane_runs_no_task_and_has_nothing_pending() {
        let idle = LaneCtx::IDLE;
        assert_eq!(idle.task, crate::record::NONE);
        assert_eq!((idle.spawned, idle.flags), (0, 0));
        assert!(idle.info.is_null());
    }

    #[test]
    fn every_lane_sees_its_own_context_and_scratch_and_its_warps_shared_state() {
        let launch = Launch::leak(geometry(2, 64, 2));
        let warp = Warp::new(launch.region(), 1, None);
        let views = warp.each(Warp::splat(()), |_, ()| crate::arch::current_lane());
        let contexts: HashSet<_> = views.iter().map(|v| v.ctx).collect();
        let scratch: HashSet<_> = views.iter().map(|v| v.scratch).collect();
        assert_eq!(contexts.len(), WARP_SIZE as usize);
        assert_eq!(scratch.len(), WARP_SIZE as usize);
        for view in &views {
            assert!(core::ptr::eq(view.shared(), warp.shared()));
            assert!(core::ptr::eq(view.region(), launch.region()));
            assert_eq!(view.warp, 1);
            // SAFETY: the warp has stopped polling; nothing else refers to the contexts.
            assert_eq!(unsafe { view.ctx() }.task, crate::record::NONE);
        }
    }
}
