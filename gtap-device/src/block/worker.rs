//! The block-mode worker: one block, one task at a time (the step protocol is in the
//! [module docs](super)).

use crate::abi::{BlockPollEnd, ErrorCode, WarpState};
use crate::arch::{self, Warp};
use crate::error::{Failure, raise};
use crate::join::{self, Done};
use crate::lane::FAILED;
use crate::queue::{self, Batch};
use crate::record::{COMPLETING, NONE};
use crate::scheduler::{
    BLOCK_IDLE_BACKOFF_MAX_NS, Found, IDLE_BACKOFF_MIN_NS, Step, TIMED_EVERY, Worker,
};
use crate::task::BlockTask;
use crate::trace;

use super::{BlockShared, record, task};

/// [`BlockShared::tasks`]: nothing to run this step (first), no further task (others).
pub(crate) const IDLE: u32 = NONE;
/// [`BlockShared::tasks`]: the launch is over.
pub(crate) const STOP: u32 = NONE - 1;

/// The most claimed ids a block runs in one step of a detached launch, one after another with
/// a block barrier between them: one find, verdict and settle serve them all (see the
/// [module docs](super)). A joining launch runs one task a step. 16 measured best of 2 to 32
/// (`bench/NOTES.md` entry 107): with 32 the R-MAT BFS re-visits more.
pub(crate) const STEP_TASKS: u32 = 16;

/// Task slots of a block's pool per task its steps may run beyond the first: a step's finished
/// tasks keep their slots until its settle, so it holds up to `tasks - 1` slots more than steps
/// of one task would, and a block-mode spawn that finds no slot fails the launch. With at most
/// one more task per this many slots that excess stays under 1 % of the block's slots (a pool
/// of fewer than this many slots a warp runs one task a step).
const SLOTS_PER_STEP_TASK: u32 = 128;

// Thread 0's verdicts on a poll of the block's task, as the event trace records them (see
// `BlockPollEnd` for each).
const FINISHED: u32 = BlockPollEnd::Finished as u32;
const CHILDREN_LEFT: u32 = BlockPollEnd::ChildrenLeft as u32;
const SUSPENDED: u32 = BlockPollEnd::Suspended as u32;
const POLL_AGAIN: u32 = BlockPollEnd::PollAgain as u32;
const DROPPED: u32 = BlockPollEnd::Dropped as u32;

/// A block's worker. Every thread of the block runs one, in step; the threads of the block's
/// first warp also hold the scheduling [`Worker`]. `QUEUES` is the kernel's fixed queue count,
/// 0 where the launch's count applies (see [`queue::count`]).
pub struct BlockWorker<'w, const QUEUES: u32 = 0> {
    scheduler: Option<Worker<'w, 1, QUEUES>>,
    /// This thread's step count (the parity picks the task slot of [`BlockShared`]).
    steps: u32,
}

impl<'w, const QUEUES: u32> BlockWorker<'w, QUEUES> {
    /// The worker of the calling thread; `warp` is the block's first warp on the threads that
    /// schedule for the block (on the GPU the first warp's threads, in the CPU executor thread
    /// 0, which runs the simulated warp), `None` on the others.
    pub fn new(warp: Option<&'w Warp>) -> Self {
        Self {
            scheduler: warp.map(Worker::new),
            steps: 0,
        }
    }

    /// Creates the root task with `create` (block 0's scheduling warp only).
    // The CPU executors choose at run time; a GPU kernel calls the `_as` form with its constant.
    #[cfg(not(target_arch = "nvptx64"))]
    pub(crate) fn start_root(&mut self, create: impl FnOnce(&Warp)) {
        with_detach!(
            arch::current_block_lane().region().no_taskwait(),
            D => self.start_root_as::<D>(create)
        )
    }

    /// [`BlockWorker::start_root`] in a launch whose tasks detach (`DETACH`) or join.
    pub(crate) fn start_root_as<const DETACH: bool>(&mut self, create: impl FnOnce(&Warp)) {
        if let Some(s) = &mut self.scheduler {
            s.start_root_as::<DETACH>(create);
        }
    }

    /// Runs steps until the launch stops, backing off while idle, then records statistics.
    // The CPU executors choose at run time; a GPU kernel calls the `_as` form with its constant.
    #[cfg(not(target_arch = "nvptx64"))]
    pub fn run<R: BlockTask>(self) {
        with_detach!(arch::current_block_lane().region().no_taskwait(), D => self.run_as::<R, D>())
    }

    /// [`BlockWorker::run`] in a launch whose tasks detach (`DETACH`: a `no_taskwait` launch)
    /// or join their parents. A GPU kernel calls it with the option its own launch parameters
    /// fixed, so that it holds only the code of its own kind of launch.
    #[inline(always)]
    pub(crate) fn run_as<R: BlockTask, const DETACH: bool>(mut self) {
        let mut idle_ns = IDLE_BACKOFF_MIN_NS;
        loop {
            match self.step_as::<R, DETACH>() {
                Step::Worked => idle_ns = IDLE_BACKOFF_MIN_NS,
                Step::Idle => {
                    let start = arch::clock();
                    arch::backoff(idle_ns);
                    idle_ns = (idle_ns * 2).min(BLOCK_IDLE_BACKOFF_MAX_NS);
                    let idle = arch::clock().wrapping_sub(start);
                    if let Some(s) = &self.scheduler {
                        s.count(|st| st.cycles_idle += idle);
                    }
                }
                Step::Stopped => break,
            }
        }
        if let Some(s) = &self.scheduler {
            s.finish();
        }
    }

    /// One step of the block (collective: every thread of the block calls it), in a launch
    /// whose tasks detach (`DETACH`) or join.
    #[inline(always)]
    fn step_as<R: BlockTask, const DETACH: bool>(&mut self) -> Step {
        let view = arch::block_view();
        // SAFETY: the block's shared state lives as long as the kernel.
        let shared = unsafe { &*view.shared };
        let slot = (self.steps & 1) as usize;
        self.steps = self.steps.wrapping_add(1);
        if let Some(s) = &mut self.scheduler {
            // The step's clocks are the scheduling warp's alone and live in its statistics, not
            // in registers that every thread would carry across the poll; a working step is
            // timed only at a stop check (one in `TIMED_EVERY`, counted that many times), as in
            // thread mode. The same sums as the warp's `time_polls`, `time_polls_ended` and
            // `count_step`, written out: calling those here (which holds `start` across the
            // block barrier) made ptxas spill 140 bytes of the block SpMV instead of 20, some
            // of them around its poll (`bench/NOTES.md` entry 74).
            let start = arch::clock();
            let tasks = &shared.tasks[slot];
            let task = find::<QUEUES, DETACH>(s, tasks);
            if task == IDLE || task == STOP {
                let searched = arch::clock().wrapping_sub(start);
                s.count(|st| st.cycles_idle += searched);
            } else if s.at_stop_check() {
                let start = TIMED_EVERY * start;
                s.count(|st| st.cycles_scheduling = st.cycles_scheduling.wrapping_sub(start));
            }
            // The lowest live lane, not lane 0: on the GPU thread 0 exits when its task panics,
            // and the block must still see the `STOP` that ends the aborting launch.
            s.warp().leader_only(|| tasks[0].store(task));
        }
        // Orders a steal's acquire (thread 0's fence in the claim) before every thread's reads
        // of the stolen record (see "Ordering" in the module docs).
        arch::block_barrier();
        let tasks = &shared.tasks[slot];
        let task = tasks[0].load();
        if task == STOP {
            return Step::Stopped;
        }
        if task == IDLE {
            return Step::Idle;
        }
        if let Some(s) = self.scheduler.as_ref().filter(|s| s.at_stop_check()) {
            let polls = TIMED_EVERY * arch::clock();
            s.count(|st| {
                st.cycles_scheduling = st.cycles_scheduling.wrapping_add(polls);
                st.cycles_running = st.cycles_running.wrapping_sub(polls);
            });
        }
        // In a detached launch the step's further tasks follow, each after a barrier: a task's
        // helpers reuse the block's shared memory only once every thread is done with the task
        // before. One call site for the poll keeps one copy of the tasks' code.
        let (mut ran, mut next) = (0, task);
        loop {
            poll_once::<R>(next, shared);
            ran += 1;
            if !DETACH || ran == STEP_TASKS {
                break;
            }
            next = tasks[ran as usize].load();
            if next == IDLE {
                break;
            }
            arch::block_barrier();
        }
        // Orders every thread's writes of the polls before the scheduling warp's release fence
        // in the fold (see "Ordering" in the module docs).
        arch::block_barrier();
        if let Some(s) = &mut self.scheduler {
            let timed = s.at_stop_check();
            let ended = if timed { arch::clock() } else { 0 };
            let warp = s.warp();
            let verdict = warp.leader(|| judge::<QUEUES, DETACH>(task, shared, view.threads * ran));
            // The step's second test of the trace, after the poll: nothing of it (not even the
            // task's queue) is held in a register across the poll.
            if warp.region().traced() {
                trace::after_block_poll(warp, verdict);
            }
            settle::<QUEUES, DETACH>(s, task, ran, verdict);
            s.count(|st| {
                st.tasks += ran as u64;
                st.steps += 1;
                if timed {
                    let now = arch::clock();
                    st.cycles_running = st.cycles_running.wrapping_add(TIMED_EVERY * ended);
                    st.cycles_scheduling = st
                        .cycles_scheduling
                        .wrapping_add(TIMED_EVERY * now.wrapping_sub(ended));
                }
            });
        }
        Step::Worked
    }
}

/// Scheduling warp: the step's first task (or [`IDLE`], [`STOP`]), which the caller publishes
/// in `tasks[0]`; in a detached launch the leader writes the step's further ones in `tasks`,
/// ending with [`IDLE`] where they are fewer than [`STEP_TASKS`].
fn find<const Q: u32, const DETACH: bool>(
    s: &mut Worker<'_, 1, Q>,
    tasks: &[crate::arch::LocalU32; STEP_TASKS as usize],
) -> u32 {
    let warp = s.warp();
    let region = warp.region();
    s.steps = s.steps.wrapping_add(1);
    let checked = s.at_stop_check();
    if checked {
        if s.batch.len != 0 {
            s.publish(WarpState::Working);
        }
        if s.stopping() {
            return STOP;
        }
        if !DETACH {
            warp.leader_only(|| queue::refresh_views::<Q>(region, warp.shared(), warp.id()));
        }
    }
    if s.batch.len == 0 && s.refill_from::<DETACH>() == Found::Nothing {
        // As a warp does: the stop word is read by a block that found nothing to run.
        if !checked && s.stopping() {
            return STOP;
        }
        s.idle::<DETACH>();
        if region.traced() {
            trace::idle_step(warp);
        }
        return IDLE;
    }
    // A batch of one, or in a detached launch the ids a claim took, run from the last lane down
    // (the oldest there: see "Oldest first" in the `queue` module docs), up to `STEP_TASKS` a
    // step (one with the trace on: it records a step as one task's run). An id on a lane that
    // retired after a panic reads as `IDLE` until the aborting launch's next stop check, as
    // the leader's own lane 0 value does below; the step then runs none of its later ids.
    let task = if DETACH {
        let most = if region.traced() {
            1
        } else {
            STEP_TASKS.min(1 + region.slots_per_warp / SLOTS_PER_STEP_TASK)
        };
        let n = s.batch.len.min(most);
        s.batch.len -= n;
        let top = s.batch.len + n - 1;
        for i in 1..n {
            let id = warp.at(s.batch.ids, top - i);
            warp.leader_only(|| tasks[i as usize].store(id));
        }
        if n < STEP_TASKS {
            warp.leader_only(|| tasks[n as usize].store(IDLE));
        }
        warp.at(s.batch.ids, top)
    } else {
        s.batch.len = 0;
        warp.leader(|| first(s.batch.ids))
    };
    if region.traced() {
        trace::before_block_poll(warp, s.batch.queue);
    }
    task
}

/// Lane 0's id of a batch.
#[inline(always)]
fn first(ids: crate::arch::Lanes<u32>) -> u32 {
    #[cfg(target_arch = "nvptx64")]
    {
        ids
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        ids[0]
    }
}

/// Every thread that has not retired: [`poll`]s `task`, and retires if it panicked (the launch
/// is aborting): as a GPU thread exits in the panic handler, this one takes no further part (on
/// the GPU both calls compile to nothing).
#[inline(always)]
fn poll_once<R: BlockTask>(task: u32, shared: &BlockShared) {
    if !arch::block_thread_retired() && !poll::<R>(task, shared) {
        arch::retire_block_thread();
    }
}

/// Every thread: polls its frame of `task` once and counts how it ended. Returns `false` when
/// the task panicked (only on the CPU: a GPU thread exits in the panic handler).
#[inline(always)]
fn poll<R: BlockTask>(task: u32, shared: &BlockShared) -> bool {
    let lane = arch::current_block_lane();
    let region = lane.region();
    // SAFETY: the calling thread owns its context.
    let ctx = unsafe { lane.ctx() };
    ctx.task = task;
    ctx.spawned = 0;
    ctx.flags = 0;
    let h = region.header(task);
    // SAFETY: the block claimed `task` and its record is visible (see the module docs).
    let poll = unsafe { (*h).poll };
    // SAFETY: `poll` is the block-mode shim written with this record; compared with the root
    // function's and those of the functions it spawns, to call them directly, as thread mode
    // does.
    let outcome = arch::guard(|| unsafe {
        if core::ptr::fn_addr_eq(poll, record::poll_fn::<R>()) {
            record::poll_as::<R>(h)
        } else if let Some(done) = R::poll_spawned(&crate::record::PollRequest { poll, h }) {
            done
        } else {
            poll(h)
        }
    });
    // SAFETY: as above.
    let ctx = unsafe { lane.ctx() };
    if ctx.spawned > 0 {
        shared.spawned.fetch_add(ctx.spawned);
    }
    match outcome {
        // A thread that raised a device error in the poll (a spawn found no slot) counts
        // neither way: the verdict sees the threads disagree and drops the task, as the launch
        // is aborting.
        _ if ctx.flags & FAILED != 0 => {}
        Some(true) => {
            shared.returned.fetch_add(1);
        }
        Some(false) => {
            shared.suspended.fetch_add(1);
        }
        // A panic: the launch is aborting.
        None => {}
    }
    ctx.task = NONE;
    outcome.is_some()
}

/// The scheduling warp's leader (thread 0), after the poll's barrier: decides what happens to
/// `task` (the collective-wait check; in a detached launch to all the step's tasks, `threads`
/// then counting every thread's polls of them) and resets the counters for the next poll,
/// which starts after the next step's barrier. `DETACH`: a `no_taskwait` launch. In a joining
/// launch it also says whether the task's children are siblings the block will hold (see
/// "Owed decrements" in `crate::join`).
fn judge<const Q: u32, const DETACH: bool>(task: u32, shared: &BlockShared, threads: u32) -> u32 {
    let lane = arch::current_block_lane();
    let region = lane.region();
    let verdict = judge_poll::<DETACH>(task, shared, threads);
    if !DETACH && verdict != FINISHED && verdict != POLL_AGAIN {
        // A finished task's flag is the settle's to read; a task polled again keeps it (it
        // folds nothing, so nothing was published).
        let warp = lane.shared();
        let queues = queue::count::<Q>(region);
        let held = match verdict {
            SUSPENDED | CHILDREN_LEFT => match siblings_on_one_queue(warp, queues) {
                // A waiting parent of two on the only queue resumes on it: a local pair (see
                // "Local pairs" in `crate::join`).
                2 if verdict == SUSPENDED && queues == 1 => HELD_PAIR,
                0 | 1 => 0,
                _ => HELD,
            },
            _ => 0,
        };
        warp.siblings_held.store(held);
    }
    verdict
}

/// [`WarpShared::siblings_held`](crate::scheduler::WarpShared::siblings_held): the kept task's
/// siblings are held.
const HELD: u32 = 1;
/// ... and it has one sibling, and their parent waits for the two of them (a local pair).
const HELD_PAIR: u32 = 2;

/// How many ids the step staged if all are on one queue (before its fold), else 0.
fn siblings_on_one_queue(warp: &crate::scheduler::WarpShared, queues: u32) -> u32 {
    let (mut queues_used, mut ids) = (0, 0);
    for q in 0..queues {
        let n = warp.staged[q as usize].load();
        queues_used += (n != 0) as u32;
        ids += n;
    }
    if queues_used == 1 { ids } else { 0 }
}

/// [`judge`]'s verdict.
fn judge_poll<const DETACH: bool>(task: u32, shared: &BlockShared, threads: u32) -> u32 {
    let lane = arch::current_block_lane();
    let region = lane.region();
    let h = region.header(task);
    let (spawned, returned, suspended) = (
        shared.spawned.load(),
        shared.returned.load(),
        shared.suspended.load(),
    );
    let wait = task::first_wait(shared);
    let mismatch = shared.mismatch.load() != 0;
    let resume = shared.resume.load();
    for counter in [
        &shared.spawned,
        &shared.returned,
        &shared.suspended,
        &shared.wait_lo,
        &shared.mismatch,
    ] {
        counter.store(0);
    }
    shared.resume.store(crate::record::SPAWN_QUEUE);
    // Only a task polled again reads `started`: a finished or completing one is never polled.
    // SAFETY: the record is the block's; thread 0 alone writes its header after the poll's
    // barrier, and the next poll reads `started` after the next step's barrier.
    let started = || unsafe { record::set_started(h) };
    let pending = |resume| {
        // SAFETY: as above; the children are staged, not published, so none can decrement
        // `pending` before the fold (see `crate::join`).
        unsafe {
            (*h).resume = resume;
            (*h).pending
                .store(spawned, core::sync::atomic::Ordering::Relaxed);
        }
    };
    // An error verdict drops the task; in a launch already aborting (a thread that panicked
    // or raised an error left the poll without counting itself) it raises nothing. The only
    // read of the stop word in a step that is not a stop check.
    let fail = |f: Failure<'_>| {
        if !region.control().aborted() {
            raise(f);
        }
        DROPPED
    };
    let site = wait.unwrap_or(&UNKNOWN_WAIT);
    if DETACH && suspended > 0 {
        // Any wait, even one every thread reached, in a launch where nothing joins.
        return fail(Failure::at(ErrorCode::WaitInNoTaskwaitKernel, site, 0, 0));
    }
    if returned == threads {
        // In a `no_taskwait` launch the children are detached: the task is finished.
        if spawned == 0 || DETACH {
            return FINISHED;
        }
        pending(COMPLETING);
        return CHILDREN_LEFT;
    }
    if suspended == threads && !mismatch {
        started();
        if spawned == 0 {
            return POLL_AGAIN;
        }
        pending(resume);
        return SUSPENDED;
    }
    // Not every thread reached the same wait: a device error, never a hang.
    let mut f = Failure::at(
        ErrorCode::PartialWait,
        site,
        suspended as u64,
        threads as u64,
    );
    f.message = Some(if mismatch {
        "the block's threads reached different waits"
    } else {
        "the other threads returned instead of waiting"
    });
    fail(f)
}

/// The site named when no thread of a failed poll reached a wait (cannot happen: a partial
/// wait has at least one waiting thread; kept so the error path needs no unwrap).
static UNKNOWN_WAIT: crate::task::Site = crate::task::Site {
    function: "?",
    file: "?",
    line: 0,
};

/// Scheduling warp, after the verdict: fold what the step staged (keeping one task for the next
/// step), free a finished task and notify its parent, restock the pool. A task to poll again
/// (a wait without children) is the next step's task. In a detached launch the step ran `ran`
/// tasks, the batch's lanes `len..len + ran` (after the find), all finished or all dropped.
fn settle<const Q: u32, const DETACH: bool>(
    s: &mut Worker<'_, 1, Q>,
    task: u32,
    ran: u32,
    verdict: u32,
) {
    let warp = s.warp();
    let region = warp.region();
    if verdict == POLL_AGAIN {
        s.batch = Batch::one(warp, task, 0);
        return;
    }
    let finished = verdict == FINISHED;
    let detached = finished && DETACH;
    // Every lane reads the flag and the pair's parent: they must agree on the fold.
    let held = if !DETACH && finished {
        warp.shared().siblings_held.load()
    } else {
        0
    };
    let first = s.batch.len;
    let done = warp.each(s.batch.ids, |lane, id| {
        if detached && lane >= first && lane < first + ran {
            // The step's tasks, all finished: nobody to notify (see "Kernels without waits" in
            // `crate::scheduler`).
            Done {
                task: id,
                parent: join::DETACHED,
            }
        } else if lane == 0 && finished && !DETACH {
            Done {
                task,
                // SAFETY: the finished task's header is the block's until it is freed below.
                parent: unsafe { (*region.header(task)).parent },
            }
        } else {
            Done::NOTHING
        }
    });
    // The last child of a local pair (see "Local pairs" in `crate::join`). A detached task has
    // no parent to resume, and the shuffle would run for nothing.
    let parent = if !DETACH && finished {
        warp.at(Warp::map(done, |d| d.parent), 0)
    } else {
        NONE
    };
    let pair = !DETACH && finished && held == 0 && {
        let p = warp.shared().pair_parent.load();
        p != NONE && p == parent
    };
    let owed = held != 0 || pair;
    // As in thread mode, a detached task's finish needs no fence. A block that still holds
    // claimed ids keeps no child: the children are published behind them. An owed decrement
    // folds nothing (see "Owed decrements" in `crate::join`): the task staged nothing, the held
    // siblings wait for the next fold to be published, after the reduction, and the batch is
    // empty (the find took its one id).
    if DETACH && s.batch.len > 0 {
        let _ = queue::fold::<0, Q, DETACH>(warp, false);
    } else if !owed {
        s.batch = queue::fold::<1, Q, DETACH>(warp, finished && !DETACH);
    }
    if finished {
        join::complete::<DETACH>(warp, done, owed);
        warp.sync();
        // After the barrier: every lane has read the flag and the pair's parent.
        if detached {
            s.owed += ran;
        } else if pair {
            // The parent resumes here, on the only queue, with no read of its header.
            warp.leader_only(|| warp.shared().pair_parent.store(NONE));
            s.batch = Batch::one(warp, parent, 0);
        } else if held != 0 {
            warp.leader_only(|| {
                let shared = warp.shared();
                shared.siblings_held.store(0);
                if held == HELD_PAIR {
                    shared.pair_parent.store(parent);
                }
            });
        } else {
            // A parent this task resumed is the next task, with no second fold in the find.
            s.batch = queue::take_lone_staged::<Q>(warp);
        }
    }
    s.restock();
}
