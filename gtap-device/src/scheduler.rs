//! The warp scheduler: one loop per warp, the same code on the GPU and in the CPU executor.
//!
//! Thread mode runs one task per lane; a warp runs up to 32 tasks per *step*:
//!
//! 1. **Batch.** The warp normally has its next batch from the previous step's fold. If not, it
//!    takes up to 32 ids off its overflow list (ids its rings had no room for), or its leader
//!    pops up to 32 ids from its own fullest queue, or steals up to 32 of the oldest ids from a
//!    random victim's fullest queue ([`crate::queue`]); lanes load the ids in parallel, and
//!    after a steal every lane, past a warp barrier, issues an acquire fence before touching
//!    the stolen records (see *Steals* below).
//! 2. **Run.** Each lane with an id polls that task once ([`crate::record`]). The poll may spawn
//!    children (staged by the warp, `queue::stage`), suspend at a wait, or complete. Nothing in
//!    a poll fences.
//! 3. **Fold.** After a warp barrier the warp keeps up to 32 ids staged on one queue as its next
//!    batch and publishes the rest; one converged release fence covers everything the step's
//!    polls wrote (`queue::fold`).
//! 4. **Joins.** Finished tasks free their slots and notify their parents with relaxed
//!    decrements (released by the fold's fence); a lane that took a parent's count to zero
//!    acquires with a fence and stages its continuation for the next fold ([`crate::join`]).
//!
//! So a step costs one membar, whatever its 32 tasks did. The launch ends when the root
//! task finishes (`Control::finish`), a device error aborts it, or the host's watchdog stops it
//! ([`STOPPED_BY_WATCHDOG`]). Workers read the stop word (relaxed) when they find nothing to
//! run and every [`STOP_CHECK_STEPS`] steps otherwise, so an abort stops every warp promptly
//! without a global read per step; the same check publishes the warp's progress
//! ([`crate::abi::WarpStatus`]).
//!
//! **Steals.** The victim made its records and ring entries visible with a release pattern:
//! the fold's fence by every lane, then the leader's relaxed add to the queue's `count`
//! (`queue::fold`). The thief's leader claims with an acquire compare-and-swap on that `count`;
//! every later write to a `count` is a read-modify-write, so the value it reads lies in the
//! release sequence of the victim's add, and the victim's writes happen before the leader's
//! claim. The other lanes learn the claim only through a shuffle, which carries no memory
//! ordering in the PTX model, so a lane's own fence after it would order nothing (an acquire
//! pattern needs a read by the same thread before the fence). What links them is the warp
//! barrier (`bar.warp.sync`), which orders memory among the lanes taking part: claim (acquire,
//! leader), barrier, then every lane's reads are causally after the victim's writes. Every
//! lane also issues an acquire fence after the barrier (`fence.acquire.gpu` from sm_90, one
//! `CCTL.IVALL`; `fence.acq_rel.gpu` before): the PTX ISA states the barrier's ordering among
//! the lanes without naming a scope, and the fence makes the GPU-scope acquire explicit. Both
//! are on the steal path only, never in a step of a warp that runs its own work.
//!
//! The fold's fence is release-only (`fence.release.gpu` from sm_90): on sm_90 it is the
//! `MEMBAR` without the `CCTL.IVALL` that would also empty the SM's L1 once per step.
//!
//! **Shared memory.** The lanes' polls and the scheduler's collective code share the warp's
//! counters (`WarpShared`: staging, queue positions, the pool's stash). The leader updates some
//! alone (a pop or steal moves `tails`, a fold resets `staged` and advances `tails`) and hands
//! the result to the lanes by a shuffle, which orders no memory (CUDA: shuffles "do not imply
//! a memory barrier"); a poll then reads `tails` when it stages more than [`KEEP`] children on
//! one queue. Without a barrier a lane could compute a ring position from a stale `tails` and
//! write a child where the fold does not publish it (racecheck reported this pair as a write
//! in the kernel against a read in a poll shim). So every poll phase lies between two warp
//! barriers (`bar.warp.sync`, one instruction in a converged warp): one before the polls, one
//! after. What polls race on among themselves is the pool's `alloc_slow` hint, benign (see
//! [`crate::pool`]).
//!
//! **Workers.** A [`Worker`] is what takes a batch of tasks and runs it. In thread mode a
//! worker is a warp, running one task per lane; it owns a [`WarpShared`] in shared memory, and
//! its queues and pool are indexed by its warp index. In block mode (one task per block, all
//! its threads working on it) the block's first warp holds a `Worker` with batches of one,
//! which schedules for the block's [`crate::block::worker::BlockWorker`]; both have the same
//! surface (`new`, `start_root`, `run`, `finish`), which the CPU executor and `entry!` drive.
//!
//! **Kernels without waits** (`#[gtap::kernel(no_taskwait)]`, [`crate::abi::OPT_NO_TASKWAIT`];
//! GTaP's `GTAP_ASSUME_NO_TASKWAIT`). When no task waits, no record must outlive its poll for
//! children to join it: a task is finished when its poll returns (`join::returned`), its slot
//! is freed at once and no parent is notified (`join::complete` stops at the `DETACHED`
//! parent: no decrement, no cascade). Without the joins the root's completion no longer means
//! every task has run, so the launch counts its live tasks instead: each fold adds the ids it
//! folds (every record a step created, kept or published) with one `red` by the leader before
//! the fold's release fence (`Control::count_created`), and a worker subtracts the tasks that
//! finished on it only when it runs out of work (`Worker::idle`, `Control::count_finished`);
//! the subtraction that leaves zero finishes the launch. The count is never below the tasks
//! that exist: a task is counted before it is published (the fence orders the add before the
//! publication, so no thief can run and subtract a child that was not yet counted) and
//! subtracted after it finished. So it reaches zero only when no task exists and every worker
//! has paid what it owed, which every worker does once the work is gone. A step pays one `red`
//! and no round trip; a subtraction's round trip comes only with running dry. Finishing needs
//! no fence in such a launch (nobody is notified): a step fences only when it publishes, a
//! finished task's slot freed into another warp's ring is a release store, and the
//! subtraction is a release, which orders the finished tasks' writes (the root's result among
//! them) before the launch's end. A `taskwait!`
//! reached in such a launch is the device error `WaitInNoTaskwaitKernel`. The worker, the fold
//! and the join take the option as a const parameter (`DETACH`); a GPU kernel fixes it in its
//! own launch parameters, so it compiles only the scheduler of its kind of launch and a kernel
//! with waits runs no test of the option in its steps.
//!
//! **Dispatch.** A record holds a pointer to its task function's poll; a kernel's root task
//! function is compared against it first and called directly, so its poll is inlined into the
//! scheduler (no call through a pointer, no spilled registers) for the common single-function
//! programs.

use core::cell::UnsafeCell;
use core::sync::atomic::Ordering;

use crate::abi::{MAX_QUEUES, STOPPED_BY_WATCHDOG, WarpState, WarpStats};
use crate::arch::{self, AtomicU32, LocalU32, WARP_SIZE, Warp};
use crate::join::{self, Done};
use crate::math::XorShift64;
use crate::pool::{self, PoolLocal};
use crate::queue::{self, Batch, Claim, Held, KEEP, Span};
use crate::record::{self, NONE, PollRequest};
use crate::task::TaskFunction;
use crate::trace::{self, TraceCursor};

/// Busy warps read the stop word once every this many steps.
pub const STOP_CHECK_STEPS: u32 = 32;

/// Nanoseconds a worker that found nothing to run sleeps before it looks again; each further
/// idle step in a row doubles it, up to [`IDLE_BACKOFF_MAX_NS`] (a warp) or
/// [`BLOCK_IDLE_BACKOFF_MAX_NS`] (a block). Sleeping idle workers leave the memory system to
/// the busy ones, but a long sleep delays the pickup of new work.
pub(crate) const IDLE_BACKOFF_MIN_NS: u32 = 32;
/// The longest sleep of an idle warp in thread mode (see [`IDLE_BACKOFF_MIN_NS`]). Shorter
/// sleeps (512 or 128 ns) made the thread BFS 1.3-5.5 % slower and the EPAQ fib about 1 %
/// faster (`bench/NOTES.md` entry 72); longer ones (16384 or 65536 ns) made the R-MAT BFS 20 %
/// and 110 % slower (late pickups re-visit vertices) and the EPAQ fib 5-19 % (entry 75).
pub(crate) const IDLE_BACKOFF_MAX_NS: u32 = 4096;
/// The longest sleep of an idle block in block mode: 512 ns took 2.0 % off the block BFS on
/// the R-MAT graph and 1.5 % on the grid, the block SpMV unchanged (`bench/NOTES.md` entry 72).
pub(crate) const BLOCK_IDLE_BACKOFF_MAX_NS: u32 = 512;

/// A working step has its phases timed in the stop-check steps only, one
/// in this many, and each timed step counts for this many (see [`WarpStats`]).
pub(crate) const TIMED_EVERY: u64 = STOP_CHECK_STEPS as u64;

const RUNNING: u32 = 0;
const FINISHED: u32 = 1;
const ABORTED: u32 = 2;

/// Launch-wide control words (zeroed before each launch).
#[repr(C)]
pub struct Control {
    stop: AtomicU32,
    pub(crate) error_claim: AtomicU32,
    _pad: [u32; 30],
    /// A `no_taskwait` launch's live tasks (see "Kernels without waits" in the module docs),
    /// alone in its 128-byte line: every worker adds to it once per step, while every worker
    /// reads the stop word above.
    live: AtomicU32,
    _live_pad: [u32; 31],
}

impl Control {
    /// Byte offset of the stop word in the control words ([`crate::abi::Layout::stop_word`]).
    pub(crate) const STOP_WORD_OFFSET: u64 = core::mem::offset_of!(Control, stop) as u64;

    /// The host's watchdog on the CPU executor: stop every worker, unless the launch already
    /// ended. (The GPU backend writes [`STOPPED_BY_WATCHDOG`] into the running region.)
    #[cfg(not(target_arch = "nvptx64"))]
    pub(crate) fn stop_by_watchdog(&self) {
        let _ = self
            .stop
            .compare_exchange(RUNNING, STOPPED_BY_WATCHDOG, Ordering::AcqRel);
    }
    /// Whether the watchdog stopped the launch (and no device error came first).
    #[inline]
    pub(crate) fn stopped_by_watchdog(&self) -> bool {
        self.state() == STOPPED_BY_WATCHDOG
    }
    /// The root task finished: every task has.
    #[inline]
    pub(crate) fn finish(&self) {
        let _ = self
            .stop
            .compare_exchange(RUNNING, FINISHED, Ordering::AcqRel);
    }
    /// A `no_taskwait` launch: counts `n` new tasks, without waiting for the old count (a
    /// `red` on the GPU). Relaxed: the fold's release fence, after it, orders it before their
    /// publication.
    #[inline]
    pub(crate) fn count_created(&self, n: u32) {
        self.live.add(n, Ordering::Relaxed);
    }
    /// A `no_taskwait` launch: counts `n` finished tasks, and finishes the launch if that
    /// leaves none. Release: the steps they finished in did not fence for them (see "Kernels
    /// without waits" in the module docs), so this releases their last accesses, the root's
    /// result among them; the subtraction that finishes acquires with a fence, so the result
    /// is visible to whoever reads the finished stop word and then fences (acquire).
    #[cold]
    #[inline(never)]
    pub(crate) fn count_finished(&self, n: u32) {
        if self.live.fetch_sub(n, Ordering::Release) == n {
            arch::fence_acquire();
            self.finish();
        }
    }
    /// A device error: stop every worker.
    #[inline]
    pub(crate) fn abort(&self) {
        self.stop.store(ABORTED, Ordering::Release);
    }
    /// `RUNNING`, `FINISHED`, `ABORTED` or [`STOPPED_BY_WATCHDOG`]. Relaxed (on sm_90 an
    /// acquire load would also empty the multiprocessor's L1 at every check): a reader that
    /// goes on to read what the launch's end published (the root's result) fences first
    /// (`arch::fence_acquire` in `entry!`).
    #[inline]
    fn state(&self) -> u32 {
        self.stop.load(Ordering::Relaxed)
    }
    /// Whether a device error or the watchdog stopped the launch.
    #[inline]
    pub(crate) fn aborted(&self) -> bool {
        self.state() >= ABORTED
    }
    /// Whether the launch is over or being stopped.
    #[inline]
    pub(crate) fn stopping(&self) -> bool {
        self.state() != RUNNING
    }
    /// Test only: a `no_taskwait` launch's live tasks.
    #[cfg(test)]
    pub(crate) fn live_tasks(&self) -> u32 {
        self.live.load(Ordering::Relaxed)
    }
    /// Test only: whether the root task finished the launch.
    #[cfg(all(test, not(loom)))]
    pub(crate) fn finished(&self) -> bool {
        self.state() == FINISHED
    }
}

/// A warp's scheduling state shared by its lanes (shared memory on the GPU).
#[repr(C)]
pub struct WarpShared {
    /// Owner-side ring positions, one per queue.
    pub(crate) tails: [LocalU32; MAX_QUEUES],
    /// Ids staged on each queue during the current step.
    pub(crate) staged: [LocalU32; MAX_QUEUES],
    /// The first [`KEEP`] ids staged on each queue during the current step.
    pub(crate) keep: [[LocalU32; KEEP as usize]; MAX_QUEUES],
    /// A block in a joining launch: the newest ids of each queue, at the ring's tail end,
    /// that it has not published (0 in every other worker: see "Lazy publication" in the
    /// `queue` module docs).
    pub(crate) private: [LocalU32; MAX_QUEUES],
    /// A block in a joining launch: non-zero while the task the last fold kept has siblings
    /// the block holds unpublished (set by the verdict on a task that staged two or more
    /// children on one queue, cleared by a fold that publishes and by the kept task's finish;
    /// see "Owed decrements" in `crate::join`). 0 in every other worker.
    pub(crate) siblings_held: LocalU32,
    /// A block in a joining launch with one queue: the parent whose first child finished here
    /// owing its decrement while the block held its only other child, which is then its last
    /// and finishes a join none of whose children left the block; [`NONE`] otherwise (cleared
    /// by a fold that publishes and when that child finishes; see "Local pairs" in
    /// `crate::join`).
    pub(crate) pair_parent: LocalU32,
    /// A block in a joining launch: the newest unpublished id of queue [`held_top_queue`], when
    /// the block knows it without reading its ring (the fold that held it wrote it here; a pop
    /// takes it), [`NONE`] otherwise (see "Lazy publication" in the `queue` module docs).
    ///
    /// [`held_top_queue`]: WarpShared::held_top_queue
    pub(crate) held_top: LocalU32,
    /// The queue of [`WarpShared::held_top`].
    pub(crate) held_top_queue: LocalU32,
    /// Last thief head seen per queue (a lower bound; refreshed by the fold when a ring looks
    /// full).
    pub(crate) heads: [LocalU32; MAX_QUEUES],
    /// The warp's view of each queue's `count`: an upper bound, exact until a thief claims (only
    /// the owner adds to a count, thieves only take). Pops expect it in their compare-and-swap
    /// and skip the queues it says are empty, with no device-memory read before the claim.
    pub(crate) counts: [LocalU32; MAX_QUEUES],
    /// Head of the warp's overflow list of staged ids its rings had no room for, linked through
    /// the tasks' headers; [`NONE`] when empty (see the `queue` module docs).
    pub(crate) overflow: LocalU32,
    /// The warp's task-id pool state.
    pub(crate) pool: PoolLocal,
    /// The warp's statistics, kept here rather than in registers; only the leader lane touches
    /// them ([`Worker::count`]).
    pub(crate) stats: UnsafeCell<WarpStats>,
    /// The event trace's recorder state ([`crate::trace`]); only the leader lane touches it.
    pub(crate) trace: UnsafeCell<TraceCursor>,
    /// One bit per lane that has not retired after a panic (GPU only: the CPU unwinds).
    #[cfg_attr(not(target_arch = "nvptx64"), allow(dead_code))]
    pub(crate) live: LocalU32,
    /// The lowest lane of `live`, the warp's leader, kept beside the mask so that each of the
    /// many leader elections of a step is one load (GPU only, as `live`).
    #[cfg_attr(not(target_arch = "nvptx64"), allow(dead_code))]
    pub(crate) leader: LocalU32,
}

impl WarpShared {
    /// Whether ids were staged since the last fold.
    #[inline]
    pub(crate) fn has_staged(&self, num_queues: u32) -> bool {
        self.first_staged(num_queues).is_some()
    }

    /// The first queue that ids were staged on since the last fold.
    #[inline]
    pub(crate) fn first_staged(&self, num_queues: u32) -> Option<u32> {
        (0..num_queues).find(|&q| self.staged[q as usize].load() != 0)
    }

    /// State of a warp at kernel start.
    pub const fn new() -> Self {
        Self {
            tails: [const { LocalU32::new(0) }; MAX_QUEUES],
            staged: [const { LocalU32::new(0) }; MAX_QUEUES],
            keep: [const { [const { LocalU32::new(0) }; KEEP as usize] }; MAX_QUEUES],
            private: [const { LocalU32::new(0) }; MAX_QUEUES],
            siblings_held: LocalU32::new(0),
            pair_parent: LocalU32::new(NONE),
            held_top: LocalU32::new(NONE),
            held_top_queue: LocalU32::new(0),
            heads: [const { LocalU32::new(0) }; MAX_QUEUES],
            counts: [const { LocalU32::new(0) }; MAX_QUEUES],
            overflow: LocalU32::new(NONE),
            pool: PoolLocal::new(),
            stats: UnsafeCell::new(WarpStats::ZERO),
            trace: UnsafeCell::new(TraceCursor::ZERO),
            live: LocalU32::new(u32::MAX),
            leader: LocalU32::new(0),
        }
    }
}

impl Default for WarpShared {
    fn default() -> Self {
        Self::new()
    }
}

/// Where [`Worker::refill_from`] found a batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Found {
    /// Nothing to run.
    Nothing,
    /// The worker's own staged ids, overflow list or queues.
    Own,
    /// A steal (the worker's threads fence before reading the stolen records).
    Stolen,
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

/// A warp's scheduler (see *Workers* in the module docs): the thread-mode worker with batches of
/// up to `BATCH` = [`KEEP`] tasks, and the scheduling half of a block-mode worker
/// ([`crate::block`]), which runs one task at a time (`BATCH` = 1). `QUEUES` is the kernel's
/// fixed queue count, 0 where the launch's count applies (see [`queue::count`]).
pub struct Worker<'w, const BATCH: u32 = KEEP, const QUEUES: u32 = 0> {
    warp: &'w Warp,
    me: u32,
    pub(crate) batch: Batch,
    pub(crate) steps: u32,
    rng: XorShift64,
    /// A `no_taskwait` launch: tasks that finished here and are not yet subtracted from the
    /// live count (subtracted when the worker runs out of work: see "Kernels without waits").
    pub(crate) owed: u32,
}

impl<'w, const BATCH: u32, const QUEUES: u32> Worker<'w, BATCH, QUEUES> {
    /// The scheduler of `warp`.
    pub fn new(warp: &'w Warp) -> Self {
        let me = warp.id();
        let region = warp.region();
        let rng = ((region.seed as u64) << 32 | me as u64) ^ arch::clock() ^ 0x9e37_79b9_7f4a_7c15;
        if region.traced() {
            trace::begin(warp);
        }
        Self {
            warp,
            me,
            batch: Batch {
                ids: Warp::splat(NONE),
                len: 0,
                queue: 0,
            },
            // One short of a stop check, so that a warp's first step checks in (and publishes
            // its state) before it runs anything.
            steps: STOP_CHECK_STEPS - 1,
            rng: XorShift64::new(rng),
            owed: 0,
        }
    }

    /// Creates the root task on this warp (warp 0) with `create` and takes it as the first batch.
    // The CPU executors choose at run time; a GPU kernel calls the `_as` form with its constant.
    #[cfg(not(target_arch = "nvptx64"))]
    pub(crate) fn start_root(&mut self, create: impl FnOnce(&Warp)) {
        with_detach!(self.warp.region().no_taskwait(), D => self.start_root_as::<D>(create))
    }

    /// [`Worker::start_root`] in a launch whose tasks detach (`DETACH`) or join, as
    /// [`Worker::run_as`] takes it.
    pub(crate) fn start_root_as<const DETACH: bool>(&mut self, create: impl FnOnce(&Warp)) {
        create(self.warp);
        self.warp.sync();
        self.batch = queue::fold::<BATCH, QUEUES, DETACH>(self.warp, false);
    }

    /// Whether this step is a stop-check step, one in [`STOP_CHECK_STEPS`]: it reads the stop
    /// word, publishes the worker's state, samples its live tasks and, in thread mode, is timed
    /// (see [`Worker::time_polls`]).
    #[inline(always)]
    pub(crate) fn at_stop_check(&self) -> bool {
        self.steps.is_multiple_of(STOP_CHECK_STEPS)
    }

    /// Backs off for `ns` nanoseconds with nothing to run, counted as idle.
    #[inline(always)]
    fn back_off(&self, ns: u32) {
        let start = arch::clock();
        arch::backoff(ns);
        self.count(|s| s.cycles_idle += arch::clock().wrapping_sub(start));
    }

    /// A timed step (a stop-check step, one in [`STOP_CHECK_STEPS`]: see [`WarpStats`]) starts
    /// its polls: the cycles since `start` were scheduling. The polls' start is kept in the
    /// warp's statistics (subtracted now, its end added by [`Worker::time_polls_ended`]), not
    /// in a register that every step would carry across the polls.
    #[inline(always)]
    fn time_polls(&self, start: u64) {
        self.count(|s| {
            let now = arch::clock();
            s.cycles_scheduling += TIMED_EVERY * now.wrapping_sub(start);
            s.cycles_running = s.cycles_running.wrapping_sub(TIMED_EVERY * now);
        });
    }

    /// A timed step's polls ended: adds their end to the running cycles and returns it.
    #[inline(always)]
    fn time_polls_ended(&self) -> u64 {
        let now = arch::clock();
        self.count(|s| s.cycles_running = s.cycles_running.wrapping_add(TIMED_EVERY * now));
        now
    }

    /// Counts a step that ran `polled` polls; a timed step also counts the scheduling cycles
    /// since its polls `ended`.
    #[inline(always)]
    fn count_step(&self, polled: u64, ended: Option<u64>) {
        self.count(|s| {
            s.tasks += polled;
            s.steps += 1;
            if let Some(ended) = ended {
                s.cycles_scheduling += TIMED_EVERY * arch::clock().wrapping_sub(ended);
            }
        });
    }

    /// Whether the launch is over or being stopped (the leader reads the stop word).
    #[inline(always)]
    pub(crate) fn stopping(&self) -> bool {
        let region = self.warp.region();
        self.warp.leader(|| region.control().stopping() as u32) != 0
    }

    /// The worker found nothing to run: says so in its status and, in a `no_taskwait` launch,
    /// subtracts the tasks that finished here from the live count, which may end the launch.
    #[inline(always)]
    pub(crate) fn idle<const DETACH: bool>(&mut self) {
        self.publish(WarpState::Searching);
        if DETACH && self.owed != 0 {
            let (region, owed) = (self.warp.region(), self.owed);
            self.warp
                .leader_only(|| region.control().count_finished(owed));
            self.owed = 0;
        }
    }

    /// The warp this worker schedules.
    pub(crate) fn warp(&self) -> &'w Warp {
        self.warp
    }

    /// Every how many warps a worker starts: 1 in thread mode, the warps of a block in block
    /// mode, where the first warp of each block schedules for the block (constant-folded for a
    /// warp).
    #[inline(always)]
    fn stride(region: &crate::region::Region) -> u32 {
        if BATCH == KEEP {
            1
        } else {
            region.warps_per_block
        }
    }
}

impl<'w, const QUEUES: u32> Worker<'w, KEEP, QUEUES> {
    /// Runs steps until the launch stops, backing off while idle, then records statistics.
    /// `R` is the kernel's root task function, dispatched without a call through a pointer.
    // The CPU executors choose at run time; a GPU kernel calls the `_as` form with its constant.
    #[cfg(not(target_arch = "nvptx64"))]
    pub fn run<R: TaskFunction>(self) {
        with_detach!(self.warp.region().no_taskwait(), D => self.run_as::<R, D>())
    }

    /// [`Worker::run`] in a launch whose tasks detach (`DETACH`: a `no_taskwait` launch) or
    /// join their parents. A GPU kernel calls it with the option its own launch parameters
    /// fixed, so that it holds only the code of its own kind of launch.
    #[inline(always)]
    pub(crate) fn run_as<R: TaskFunction, const DETACH: bool>(mut self) {
        let mut idle_ns = IDLE_BACKOFF_MIN_NS;
        loop {
            match self.step_as::<R, DETACH>() {
                Step::Worked => idle_ns = IDLE_BACKOFF_MIN_NS,
                Step::Idle => {
                    self.back_off(idle_ns);
                    idle_ns = (idle_ns * 2).min(IDLE_BACKOFF_MAX_NS);
                }
                Step::Stopped => break,
            }
        }
        self.finish();
    }

    /// One scheduling step: find a batch if needed, run it, fold what it staged, join.
    // The CPU executors choose at run time; a GPU kernel calls the `_as` form with its constant.
    #[cfg(not(target_arch = "nvptx64"))]
    pub fn step<R: TaskFunction>(&mut self) -> Step {
        with_detach!(self.warp.region().no_taskwait(), D => self.step_as::<R, D>())
    }

    /// [`Worker::step`] of a launch whose tasks detach (`DETACH`) or join.
    #[inline(always)]
    fn step_as<R: TaskFunction, const DETACH: bool>(&mut self) -> Step {
        let warp = self.warp;
        let region = warp.region();
        self.steps = self.steps.wrapping_add(1);
        let checked = self.at_stop_check();
        if checked {
            if self.batch.len != 0 {
                self.publish(WarpState::Working);
            }
            if self.stopping() {
                return Step::Stopped;
            }
        }
        let start = arch::clock();
        if self.batch.len == 0 && !self.refill::<DETACH>() {
            // A warp that found work goes on to its next check; one that found none reads the
            // stop word now, which ends the launch for it.
            if !checked && self.stopping() {
                return Step::Stopped;
            }
            self.idle::<DETACH>();
            if region.traced() {
                trace::idle_step(warp);
            }
            self.count(|s| s.cycles_idle += arch::clock().wrapping_sub(start));
            return Step::Idle;
        }
        // The leader's writes to the warp's shared counters since the last barrier (a pop's or
        // a fold's `tails` and `staged`) reach the lanes before their polls stage children
        // beside them (see "Shared memory" in the module docs).
        warp.sync();
        // The one test of the trace per step; off, nothing else of it runs.
        let traced = region.traced();
        if traced {
            trace::before_polls(warp);
        }
        if checked {
            self.time_polls(start);
        }
        let ids = warp.scramble(self.batch.ids);
        let done = warp.each(ids, |_, id| {
            if id != NONE {
                run_task::<R, DETACH>(id)
            } else {
                Done::NOTHING
            }
        });
        warp.sync();
        let ended = if checked { self.time_polls_ended() } else { 0 };
        if traced {
            trace::after_polls(warp, self.batch.len, self.batch.queue);
        }
        let polled = self.batch.len as u64;
        let finished = Warp::map(done, |d| d.task != NONE);
        let any_finished = warp.any(finished);
        // Finished tasks notify their parents after the fold's fence; detached ones notify
        // nobody, and their frees and the live count release by themselves.
        self.batch = queue::fold::<KEEP, QUEUES, DETACH>(warp, any_finished && !DETACH);
        if any_finished {
            join::complete::<DETACH>(warp, done, false);
            warp.sync();
            if DETACH {
                self.owed += warp.count(finished);
            }
        }
        self.restock();
        self.top_up();
        self.count_step(polled, checked.then_some(ended));
        Step::Worked
    }

    /// Fills the lanes a short batch leaves idle with the newest ids the warp published on the
    /// batch's queue, so that a step's fixed costs (fences, joins, the fold) are shared by up to
    /// 32 tasks. Only while the warp has used less than half its task slots: topping up widens
    /// the search, and a small pool is kept for depth.
    fn top_up(&mut self) {
        let warp = self.warp;
        let region = warp.region();
        let (have, q, me) = (self.batch.len, self.batch.queue, self.me);
        if have == 0 || have >= KEEP || !pool::roomy(region, &warp.shared().pool) {
            return;
        }
        let Span { start, count: n } =
            warp.leader(|| queue::pop_own_at(region, warp.shared(), me, q, KEEP - have));
        if n == 0 {
            return;
        }
        self.batch.ids = warp.each(self.batch.ids, |lane, id| {
            if lane >= have && lane < have + n {
                queue::read(region, me, q, start.wrapping_add(lane - have))
            } else {
                id
            }
        });
        self.batch.len = have + n;
    }
}

impl<'w, const BATCH: u32, const QUEUES: u32> Worker<'w, BATCH, QUEUES> {
    /// Finds a batch: what the last step's joins staged, else the warp's overflow list, else
    /// its own fullest queue, else a steal. Whether it found one.
    #[inline(always)]
    pub(crate) fn refill<const DETACH: bool>(&mut self) -> bool {
        self.refill_from::<DETACH>() != Found::Nothing
    }

    /// [`Worker::refill`], saying where the batch came from.
    #[inline(always)]
    pub(crate) fn refill_from<const DETACH: bool>(&mut self) -> Found {
        let warp = self.warp;
        let region = warp.region();
        if warp.shared().has_staged(queue::count::<QUEUES>(region)) {
            self.batch = queue::fold::<BATCH, QUEUES, DETACH>(warp, false);
            return Found::Own;
        }
        if warp.shared().overflow.load() != NONE {
            self.take_overflow();
            return Found::Own;
        }
        let (me, rng) = (self.me, &mut self.rng);
        if region.traced() {
            trace::search(warp);
        }
        if queue::lazy::<BATCH, DETACH>() {
            // A block's own unpublished ids first, with no claim (see "Lazy publication" in the
            // `queue` module docs).
            let held = warp.leader(|| {
                queue::pop_unpublished::<QUEUES>(region, warp.shared(), me, rng)
                    .unwrap_or(Held::NOTHING)
            });
            if held.id != NONE {
                self.batch = Batch::one(warp, held.id, held.queue);
                return Found::Own;
            }
        }
        // A block in a detached launch claims many ids at a time, oldest first (see "Oldest
        // first" in the `queue` module docs).
        let oldest = DETACH && BATCH == 1;
        let max = if oldest { queue::BLOCK_CLAIM } else { BATCH };
        let claim = warp.leader(|| {
            let shared = warp.shared();
            if oldest
                && let Some(own) = queue::pop_own_oldest::<QUEUES>(region, shared, me, rng, max)
            {
                return own;
            }
            if let Some(own) = queue::pop_own::<QUEUES>(region, shared, me, rng, BATCH) {
                return own;
            }
            queue::try_steal::<QUEUES>(region, me, rng, max, oldest, Self::stride(region))
                .unwrap_or(Claim::NOTHING)
        });
        let Claim {
            queue: q,
            span: Span { start, count: n },
            owner: victim,
            locked,
        } = claim;
        self.count(|s| s.steal_attempts += (victim != me) as u64);
        if n == 0 {
            return Found::Nothing;
        }
        let stolen = victim != me;
        if stolen {
            // Only the leader's claim read the victim's `count`; the lanes got its result by a
            // shuffle, which orders no memory. The barrier orders the claim before every
            // lane's fence and reads (see "Steals" in the module docs).
            warp.sync();
        }
        let ids = warp.lanes(|lane| {
            if lane >= n {
                return NONE;
            }
            if stolen {
                // Acquire, by every lane: the victim's records and ring entries are visible.
                arch::fence_acquire();
            }
            // A block runs its batch from the last lane down, so the oldest id goes there.
            let at = if oldest { n - 1 - lane } else { lane };
            queue::read(region, victim, q, start.wrapping_add(at))
        });
        self.batch = Batch {
            ids,
            len: n,
            queue: q,
        };
        if locked {
            warp.sync();
            warp.leader_only(|| queue::end_steal(region, victim, q, start, n));
        }
        if stolen {
            self.count(|s| s.steals += 1);
            if region.traced() {
                trace::steal(warp, victim, n);
            }
            // A warp finds nothing in its own queues only after they ran dry (only its own
            // folds fill them), so it was searching, and now it works again.
            self.publish(WarpState::Working);
        }
        if stolen { Found::Stolen } else { Found::Own }
    }

    /// Takes the next batch off the warp's overflow list (see the `queue` module docs).
    #[inline(always)]
    fn take_overflow(&mut self) {
        self.batch = take_overflow::<BATCH>(self.warp);
    }

    /// Refills the warp's stash of free task ids for the next step.
    pub(crate) fn restock(&mut self) {
        let warp = self.warp;
        let region = warp.region();
        let me = self.me;
        // A block (batches of one) usually has a few ids to take back and nothing else to do.
        if BATCH > 1 || !pool::restock_few(warp) {
            pool::restock(warp);
        }
        if self.at_stop_check() {
            // Sampled with the stop check: a device-memory read every step would cost latency.
            let live = pool::live(region, &warp.shared().pool, me);
            self.count(|s| s.peak_live = s.peak_live.max(live));
        }
    }

    /// Publishes the warp's state and progress for the host's watchdog
    /// ([`crate::abi::WarpStatus`]): `Working` with the stop check of a warp that has a batch and after a steal, `Searching`
    /// when a warp finds nothing. So a busy warp that runs its own work pays one store per
    /// [`STOP_CHECK_STEPS`] steps, and the published state is right whenever the warp is
    /// inside a step: it got there from a stop check, a steal, or its own queues, which it
    /// pops only while it has been working.
    pub(crate) fn publish(&self, state: WarpState) {
        let (region, me) = (self.warp.region(), self.me);
        self.count(|s| region.status(me).publish(state, s.steps as u32));
    }

    /// Updates the warp's statistics (on the leader lane only).
    #[inline(always)]
    pub(crate) fn count(&self, f: impl FnOnce(&mut WarpStats)) {
        let stats = &self.warp.shared().stats;
        self.warp.leader_only(|| {
            // SAFETY: only the warp's leader lane touches its statistics.
            f(unsafe { &mut *stats.get() })
        });
    }

    /// Writes this warp's statistics for the host.
    pub fn finish(&self) {
        let region = self.warp.region();
        let spawned = pool::handed(&self.warp.shared().pool) as u64;
        let inlined = pool::inlined(&self.warp.shared().pool) as u64;
        let at_once = pool::at_once(&self.warp.shared().pool) as u64;
        let me = self.me;
        if region.traced() {
            trace::finish(self.warp);
        }
        self.count(|s| {
            s.spawned = spawned;
            s.inlined = inlined;
            s.at_once = at_once;
            // Polls of children polled at once are polls too, outside the steps.
            s.tasks += at_once;
            // SAFETY: each warp writes only its own statistics slot, once, at the end.
            unsafe { region.stats(me).write(*s) };
            region
                .status(me)
                .publish(WarpState::Stopped, s.steps as u32);
        });
    }
}

/// [`Worker::take_overflow`]: the next batch of up to `BATCH` ids off the warp's overflow list.
/// Out of line (the list is the rare path), and a function of the warp alone: a call that took
/// the worker by reference would keep the worker in local memory in every step.
#[inline(never)]
fn take_overflow<const BATCH: u32>(warp: &Warp) -> Batch {
    let shared = warp.shared();
    let n = warp.leader(|| queue::take_overflow(warp.region(), shared, BATCH));
    // The leader's list walk and writes of `keep[0]` come before the lanes' reads.
    warp.sync();
    let ids = warp.lanes(|lane| {
        if lane < n {
            shared.keep[0][lane as usize].load()
        } else {
            NONE
        }
    });
    // Nobody stages into `keep` again before every lane has taken its id out of it.
    warp.sync();
    Batch {
        ids,
        len: n,
        queue: 0,
    }
}

/// Polls task `id` once on the calling lane. Returns the task and its parent if it finished.
#[inline(always)]
fn run_task<R: TaskFunction, const DETACH: bool>(id: u32) -> Done {
    let lane = arch::current_lane();
    let region = lane.region();
    // SAFETY: the calling lane owns its context.
    let ctx = unsafe { lane.ctx() };
    ctx.task = id;
    ctx.spawned = 0;
    ctx.flags = 0;
    let h = region.header(id);
    #[cfg(loom)]
    arch::shadow::write(h as usize);
    // The header and the future's first sectors are loaded together rather than one after the
    // other (the poll pointer, then the future's state).
    let slot = (h as *const u8).wrapping_add(crate::abi::HEADER_BYTES);
    arch::prefetch(slot);
    if region.slot_bytes > 64 {
        arch::prefetch(slot.wrapping_add(32));
    }
    if region.slot_bytes > 96 {
        arch::prefetch(slot.wrapping_add(64));
    }
    // SAFETY: `id` was claimed by this warp and its record is visible (see the module docs).
    let poll = unsafe { (*h).poll };
    // SAFETY: `poll` is the shim written with this record, for this record's future; when it is
    // the root function's shim, the record is one of `R` and `poll_as::<R>` is the same call,
    // inlined; the functions the root spawns are polled the same way (`poll_spawned`).
    // (Written as separate calls on purpose: one call through `if .. { a } else { b }` would
    // let LLVM merge them back into a single call through a selected pointer.)
    // `Some(false)`: suspended at a wait; `None`: abandoned after a panic (the launch aborts).
    let finished = match arch::guard(|| unsafe {
        if core::ptr::fn_addr_eq(poll, record::poll_fn::<R>()) {
            record::poll_as::<R>(h)
        } else if let Some(done) = R::poll_spawned(&PollRequest { poll, h }) {
            done
        } else {
            poll(h)
        }
    }) {
        Some(true) => join::returned::<DETACH>(&lane, id),
        Some(false) | None => None,
    };
    // SAFETY: as above.
    unsafe { lane.ctx() }.task = NONE;
    match finished {
        Some(parent) => Done { task: id, parent },
        None => Done::NOTHING,
    }
}

const _: () = assert!(WARP_SIZE == 32);

#[cfg(all(test, not(loom)))]
mod tests {
    use core::sync::atomic::Ordering;

    use std::vec::Vec;

    use super::{STOP_CHECK_STEPS, Step, Worker};
    use crate::abi::{OPT_NO_TASKWAIT, WarpState, WarpStatus};
    use crate::arch::{AtomicU32, Warp};
    use crate::math::XorShift64;
    use crate::pool;
    use crate::queue;
    use crate::task::{Site, create_root};
    use crate::testing::{
        Fib, Launch, TEST_STACK_BYTES, Visit, fib, geometry, root_fib, run_fib, within,
    };

    #[test]
    fn a_no_taskwait_launch_ends_when_its_last_task_has_run() {
        // Warps stepped in a seeded random order until one sees the launch finished: had the
        // live count reached zero early, nodes would be missing; had it missed zero, the
        // launch would never end.
        within(60, || {
            for seed in 0..50 {
                one_no_taskwait_launch(seed);
            }
        });
    }

    /// A `Visit` tree of 127 nodes on three warps stepped in an order drawn from `seed`.
    fn one_no_taskwait_launch(seed: u64) {
        const SITE: &Site = &Site {
            function: "visit",
            file: file!(),
            line: line!(),
        };
        let launch = Launch::leak_with(geometry(3, 32, 2), TEST_STACK_BYTES, OPT_NO_TASKWAIT);
        let region = launch.region();
        let nodes: &'static AtomicU32 =
            std::boxed::Box::leak(std::boxed::Box::new(AtomicU32::new(0)));
        let warps: Vec<Warp> = (0..region.warps)
            .map(|w| Warp::new(region, w, Some(seed ^ w as u64)))
            .collect();
        let mut workers: Vec<Worker<'_>> = warps.iter().map(Worker::new).collect();
        workers[0].start_root(|w| create_root::<Visit>(w, SITE, (6, nodes), ()));
        let mut rng = XorShift64::new(seed);
        loop {
            let w = rng.below(workers.len() as u64) as usize;
            if workers[w].step::<Visit>() == Step::Stopped {
                break;
            }
        }
        assert_eq!(launch.error(), None, "seed {seed}");
        assert_eq!(nodes.load(Ordering::Relaxed), 127, "seed {seed}");
        assert_eq!(region.control().live_tasks(), 0, "seed {seed}");
        assert!(region.control().finished(), "seed {seed}");
    }

    #[test]
    fn an_idle_warp_waits_until_the_launch_stops() {
        let launch = Launch::leak(geometry(2, 64, 2));
        let region = launch.region();
        let warp = Warp::new(region, 1, None);
        let mut worker = <Worker>::new(&warp);
        // Nothing published anywhere, but the root has not finished: keep looking.
        assert_eq!(worker.step::<Fib>(), Step::Idle);
        assert_eq!(worker.step::<Fib>(), Step::Idle);
        region.control().finish();
        assert_eq!(worker.step::<Fib>(), Step::Stopped);
        // An abort after the finish does not turn it into a failure.
        region.control().abort();
        assert!(region.control().aborted());
        assert!(!region.control().finished());
    }

    #[test]
    fn a_warp_publishes_what_it_is_doing_for_the_watchdog() {
        let launch = Launch::leak(geometry(2, 4096, 2));
        let rt = launch.region();
        let status = |w| {
            let (state, progress) = WarpStatus::unpack(rt.status(w).load());
            (WarpState::from_raw(state), progress)
        };
        assert_eq!(status(0), (Some(WarpState::Starting), 0));
        let idle = Warp::new(rt, 1, None);
        assert_eq!(<Worker>::new(&idle).step::<Fib>(), Step::Idle);
        assert_eq!(status(1), (Some(WarpState::Searching), 0));
        let warp = Warp::new(rt, 0, None);
        let mut worker = <Worker>::new(&warp);
        worker.start_root(|w| root_fib(w, 20));
        // The first step checks in before it runs anything.
        assert_eq!(worker.step::<Fib>(), Step::Worked);
        assert_eq!(status(0), (Some(WarpState::Working), 0));
        for _ in 0..STOP_CHECK_STEPS {
            assert_eq!(worker.step::<Fib>(), Step::Worked);
        }
        assert_eq!(status(0), (Some(WarpState::Working), STOP_CHECK_STEPS));
        worker.finish();
        assert_eq!(status(0), (Some(WarpState::Stopped), STOP_CHECK_STEPS + 1));
    }

    #[test]
    fn a_busy_warp_sees_an_abort_within_stop_check_steps() {
        within(20, || {
            let launch = Launch::leak(geometry(1, 4096, 2));
            let warp = Warp::new(launch.region(), 0, None);
            let mut worker = <Worker>::new(&warp);
            worker.start_root(|w| root_fib(w, 24));
            for _ in 0..5 {
                assert_eq!(worker.step::<Fib>(), Step::Worked);
            }
            launch.region().control().abort();
            let mut steps = 1;
            while worker.step::<Fib>() != Step::Stopped {
                steps += 1;
            }
            assert!(
                steps <= STOP_CHECK_STEPS,
                "stopped {steps} steps after the abort"
            );
        });
    }

    #[test]
    fn a_finished_launch_has_every_slot_back_and_every_queue_empty() {
        for seed in [1u64, 2, 3] {
            let launch = Launch::leak(geometry(3, 2048, 2));
            // Per warp: (tasks live, published ids per queue, what a further step does).
            let (result, ends) = within(20, move || {
                let (result, warps) = run_fib(launch, 16, seed, |_| {});
                let region = launch.region();
                let ends: Vec<_> = warps
                    .iter()
                    .map(|w| {
                        let counts = [0, 1]
                            .map(|q| region.queue_meta(w.id(), q).count.load(Ordering::Relaxed));
                        let live = pool::live(region, &w.shared().pool, w.id());
                        (live, counts, <Worker>::new(w).step::<Fib>())
                    })
                    .collect();
                (result, ends)
            });
            assert_eq!(result, Ok(fib(16)), "seed {seed}");
            let region = launch.region();
            assert!(region.control().finished() && !region.control().aborted());
            for (w, end) in ends.iter().enumerate() {
                assert_eq!(*end, (0, [0, 0], Step::Stopped), "warp {w}, seed {seed}");
            }
        }
    }

    /// A whole computation with every free-running position (queue tails and heads, free-id
    /// rings) started just below 2^32, so that it wraps mid-run on the CPU executor.
    #[test]
    fn fib_across_counter_wrap() {
        for (seed, back) in [(1u64, 1u32), (2, 3), (3, 40), (4, 700)] {
            let launch = Launch::leak(geometry(4, 2048, 2));
            let at = 0u32.wrapping_sub(back);
            let (result, queues_wrapped, rings_wrapped) = within(60, move || {
                let region = launch.region();
                let (result, warps) = run_fib(launch, 18, seed, |w| {
                    pool::preset_ring(region, &w.shared().pool, w.id(), at);
                    queue::preset_positions(region, w.shared(), w.id(), at);
                });
                let queues = warps
                    .iter()
                    .any(|w| (0..2).any(|q| w.shared().tails[q].load() < at));
                let rings = (0..region.warps)
                    .any(|w| region.pool_meta(w).frees.load(Ordering::Relaxed) < at);
                (result, queues, rings)
            });
            assert_eq!(
                result,
                Ok(fib(18)),
                "seed {seed}, positions from 2^32 - {back}"
            );
            // The runs that start closest to 2^32 must have crossed it, or they test nothing.
            if back <= 40 {
                assert!(
                    queues_wrapped,
                    "a queue position crossed 2^32 (seed {seed})"
                );
                assert!(rings_wrapped, "a free-id ring crossed 2^32 (seed {seed})");
            }
        }
    }
}
