//! The warp scheduler: one loop per warp, the same code on the GPU and in the CPU executor.
//!
//! Thread mode runs one task per lane; a warp runs up to 32 tasks per *step*:
//!
//! 1. **Batch.** If the warp has no batch left from the previous step, its leader pops up to 32
//!    ids from its own fullest queue, or steals up to 32 of the oldest ids from a random victim's
//!    fullest queue ([`crate::queue`]). Lanes load the ids in parallel. After a steal every lane
//!    issues an acquire fence before touching the stolen records.
//! 2. **Run.** Each lane with an id polls that task once ([`crate::record`]). The poll may spawn
//!    children (staged on the warp's rings, `queue::stage`), suspend at a wait, or
//!    complete ([`crate::join`]). A lane that wrote records issues a release fence.
//! 3. **End of step.** After a warp barrier the leader keeps up to 32 of the newest ids staged
//!    on the queue that received the most as the next batch (children run where their parent's
//!    data is hot) and publishes the rest for thieves (`queue::end_step`).
//!
//! The launch ends when the root task finishes (`Control::finish`) or a device error aborts it.
//! Workers read the stop word when they have nothing to run and every [`STOP_CHECK_STEPS`]
//! steps otherwise, so an abort stops every warp promptly without a global read per step.

use core::sync::atomic::Ordering;

use crate::arch::{self, AtomicU32, Lanes, LocalU32, WARP_SIZE, Warp};
use crate::join;
use crate::lane::{LaneCtx, Scratch, WROTE};
use crate::launch::Runtime;
use crate::pool::{self, PoolLocal};
use crate::queue;
use crate::record::NONE;
use crate::stats::WarpStats;

/// The most divergence-aware queues a warp may have.
pub const MAX_QUEUES: usize = 16;

/// Busy warps read the stop word once every this many steps.
pub const STOP_CHECK_STEPS: u32 = 32;

const RUNNING: u32 = 0;
const FINISHED: u32 = 1;
const ABORTED: u32 = 2;

/// Launch-wide control words (zeroed before each launch).
#[repr(C)]
pub struct Control {
    stop: AtomicU32,
    pub(crate) error_claim: AtomicU32,
    _pad: [u32; 30],
}

impl Control {
    /// The root task finished: every task has.
    #[inline]
    pub(crate) fn finish(&self) {
        let _ = self
            .stop
            .compare_exchange(RUNNING, FINISHED, Ordering::AcqRel);
    }
    /// A device error: stop every worker.
    #[inline]
    pub(crate) fn abort(&self) {
        self.stop.store(ABORTED, Ordering::Release);
    }
    /// `RUNNING`, `FINISHED` or `ABORTED`.
    #[inline]
    fn state(&self) -> u32 {
        self.stop.load(Ordering::Acquire)
    }
    /// Whether a device error stopped the launch.
    #[inline]
    pub(crate) fn aborted(&self) -> bool {
        self.state() == ABORTED
    }
}

/// A warp's scheduling state shared by its lanes (shared memory on the GPU).
#[repr(C)]
pub struct WarpShared {
    /// Owner-side ring positions, one per queue.
    pub(crate) tails: [LocalU32; MAX_QUEUES],
    /// Ids staged on each queue during the current step.
    pub(crate) staged: [LocalU32; MAX_QUEUES],
    /// Last thief head seen per queue (a lower bound; refreshed when a ring looks full).
    pub(crate) heads: [LocalU32; MAX_QUEUES],
    /// The warp's task-id pool state.
    pub(crate) pool: PoolLocal,
    /// One bit per lane that has not retired after a panic (GPU only: the CPU unwinds).
    #[cfg_attr(not(target_arch = "nvptx64"), allow(dead_code))]
    pub(crate) live: LocalU32,
}

impl WarpShared {
    /// State of a warp at kernel start.
    pub const fn new() -> Self {
        Self {
            tails: [const { LocalU32::new(0) }; MAX_QUEUES],
            staged: [const { LocalU32::new(0) }; MAX_QUEUES],
            heads: [const { LocalU32::new(0) }; MAX_QUEUES],
            pool: PoolLocal::new(),
            live: LocalU32::new(u32::MAX),
        }
    }
}

impl Default for WarpShared {
    fn default() -> Self {
        Self::new()
    }
}

const fn align16(n: usize) -> usize {
    (n + 15) & !15
}

/// Offset of warp `w`'s [`WarpShared`] in a block's shared-memory area.
pub const fn warp_area_offset(w: u32) -> usize {
    align16(core::mem::size_of::<Runtime>())
        + w as usize * align16(core::mem::size_of::<WarpShared>())
}

/// Offset of the lane contexts in a block's shared-memory area.
pub const fn lane_area_offset(warps_per_block: u32) -> usize {
    warp_area_offset(warps_per_block)
}

/// Offset of the threads' scratch memory in a block's shared-memory area.
pub const fn scratch_area_offset(threads: u32) -> usize {
    align16(
        lane_area_offset(threads / WARP_SIZE) + threads as usize * core::mem::size_of::<LaneCtx>(),
    )
}

/// Bytes of dynamic shared memory the GPU runtime needs per block of `threads` threads: the
/// runtime view, one [`WarpShared`] per warp, one [`LaneCtx`] and one [`Scratch`] per thread.
/// All are `#[repr(C)]` (or arrays) with the same layout on host and device, so the host
/// computes this.
pub const fn shared_bytes(threads: u32) -> usize {
    scratch_area_offset(threads) + threads as usize * core::mem::size_of::<Scratch>()
}

/// What one call of [`Worker::step`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Ran a batch of tasks.
    Worked,
    /// Found nothing to run.
    Idle,
    /// The launch is over (finished or aborted).
    Stopped,
}

/// One warp's scheduler.
pub struct Worker<'w> {
    warp: &'w Warp,
    me: u32,
    batch: Lanes<u32>,
    batch_len: u32,
    steps: u32,
    rng: u64,
    stats: WarpStats,
}

impl<'w> Worker<'w> {
    /// The scheduler of `warp`.
    pub fn new(warp: &'w Warp) -> Self {
        let me = warp.id();
        let rt = warp.runtime();
        let rng = ((rt.seed as u64) << 32 | me as u64) ^ arch::clock() ^ 0x9e37_79b9_7f4a_7c15;
        Self {
            warp,
            me,
            batch: Warp::splat(NONE),
            batch_len: 0,
            steps: 0,
            rng: rng | 1,
            stats: WarpStats::default(),
        }
    }

    /// Creates the root task on this warp (warp 0) with `create` and takes it as the first batch.
    pub(crate) fn start_root(&mut self, create: impl FnOnce(&Warp)) {
        create(self.warp);
        self.warp.sync();
        self.end_step();
    }

    /// Runs steps until the launch stops, backing off while idle, then records statistics.
    pub fn run(mut self) {
        let mut idle_ns = 32;
        loop {
            let start = arch::clock();
            match self.step() {
                Step::Worked => idle_ns = 32,
                Step::Idle => {
                    arch::backoff(idle_ns);
                    idle_ns = (idle_ns * 2).min(4096);
                    self.stats.cycles_idle += arch::clock().wrapping_sub(start);
                }
                Step::Stopped => break,
            }
        }
        self.finish();
    }

    /// One scheduling step: find a batch if needed, run it, and publish what it spawned.
    pub fn step(&mut self) -> Step {
        let warp = self.warp;
        let rt = warp.runtime();
        self.steps = self.steps.wrapping_add(1);
        if self.batch_len == 0 || self.steps.is_multiple_of(STOP_CHECK_STEPS) {
            let [state] = warp.leader(|| [rt.control().state()]);
            if state != RUNNING {
                return Step::Stopped;
            }
        }
        let start = arch::clock();
        if self.batch_len == 0 && !self.refill() {
            return Step::Idle;
        }
        let polls = arch::clock();
        let batch = warp.scramble(self.batch);
        warp.each(batch, |_, id| {
            if id != NONE {
                run_task(id);
            }
        });
        warp.sync();
        let ended = arch::clock();
        self.stats.tasks += self.batch_len as u64;
        self.end_step();
        self.stats.steps += 1;
        self.stats.cycles_running += ended.wrapping_sub(polls);
        self.stats.cycles_scheduling +=
            polls.wrapping_sub(start) + arch::clock().wrapping_sub(ended);
        Step::Worked
    }

    /// Finds a batch: the warp's own fullest queue first, else a steal.
    fn refill(&mut self) -> bool {
        let warp = self.warp;
        let rt = warp.runtime();
        let (me, rng) = (self.me, &mut self.rng);
        let [q, start, n, victim] = warp.leader(|| {
            if let Some([q, start, n]) = queue::pop_own(rt, warp.shared(), me, rng) {
                return [q, start, n, me];
            }
            queue::try_steal(rt, me, rng).map_or([0, 0, 0, NONE], |[q, head, n, v]| [q, head, n, v])
        });
        self.stats.steal_attempts += (victim != me) as u64;
        if n == 0 {
            return false;
        }
        let stolen = victim != me;
        self.batch = warp.lanes(|lane| {
            if lane >= n {
                return NONE;
            }
            if stolen {
                // Acquire: pairs with the victim's release when it published these ids.
                arch::fence();
            }
            queue::read(rt, victim, q, start.wrapping_add(lane))
        });
        self.batch_len = n;
        if stolen {
            warp.sync();
            warp.leader(|| {
                queue::end_steal(rt, victim, q, start, n);
                []
            });
            self.stats.steals += 1;
        }
        true
    }

    /// Keeps the next batch from what this step staged and publishes the rest.
    fn end_step(&mut self) {
        let warp = self.warp;
        let rt = warp.runtime();
        let me = self.me;
        let sample = self.steps.is_multiple_of(STOP_CHECK_STEPS);
        let peak = &mut self.stats.peak_live;
        pool::restock(warp);
        let [q, start, n] = warp.leader(|| {
            // Sampled with the stop check: a device-memory read every step would cost latency.
            if sample {
                *peak = (*peak).max(pool::live(rt, &warp.shared().pool, me));
            }
            queue::end_step(rt, warp.shared(), me)
        });
        self.batch = warp.lanes(|lane| {
            if lane < n {
                queue::read(rt, me, q, start.wrapping_add(lane))
            } else {
                NONE
            }
        });
        self.batch_len = n;
    }

    /// Writes this warp's statistics for the host.
    pub fn finish(&self) {
        let rt = self.warp.runtime();
        let mut stats = self.stats;
        stats.spawned = pool::handed(&self.warp.shared().pool) as u64;
        let me = self.me;
        self.warp.leader(|| {
            // SAFETY: each warp writes only its own statistics slot, once, at the end.
            unsafe { rt.stats(me).write(stats) };
            []
        });
    }
}

/// Polls task `id` once on the calling lane and handles the outcome.
#[inline]
fn run_task(id: u32) {
    let lane = arch::current_lane();
    let rt = lane.rt();
    // SAFETY: the calling lane owns its context.
    let ctx = unsafe { lane.ctx() };
    ctx.task = id;
    ctx.spawned = 0;
    ctx.flags = 0;
    let h = rt.header(id);
    // SAFETY: `id` was claimed by this warp and its record is visible (see the module docs).
    let poll = unsafe { (*h).poll };
    // SAFETY: `poll` is the shim written with this record, for this record's future.
    // `Some(false)`: suspended at a wait; `None`: abandoned after a panic (the launch aborts).
    let finished = match arch::guard(|| unsafe { poll(h) }) {
        Some(true) => join::returned(&lane, id),
        Some(false) | None => None,
    };
    // SAFETY: as above.
    let ctx = unsafe { lane.ctx() };
    if finished.is_some() || ctx.flags & WROTE != 0 {
        // Release: the result, and the records, ring entries and headers this lane wrote, are
        // visible before the task's parent learns of it and before the warp publishes them.
        arch::fence();
    }
    if let Some(parent) = finished {
        join::finish(&lane, id, parent);
    }
    // SAFETY: as above.
    unsafe { lane.ctx() }.task = NONE;
}

const _: () = assert!(WARP_SIZE == 32);
