//! Block mode: one task per thread block, every thread of the block working on it.
//!
//! A block-mode task function (`#[gtap::function(block)]`) takes a [`Block`] token as its first
//! parameter; its body runs on every thread of a block at once, so it can use the
//! block-cooperative helpers of [`Block`] (barriers, reductions, scans, a strided loop, shared
//! memory). It is the second execution mode of GTaP's specification; the first, thread mode
//! (one task per thread), is [`crate::scheduler`].
//!
//! # Semantics
//!
//! * **Per-thread spawns.** Every thread that executes `task!` spawns its own child, and only
//!   that thread's destination receives the child's result. `if block.thread_index() == 0 {
//!   task!(..) }` spawns exactly one.
//! * **Per-thread frames.** Each thread keeps its own future (its locals that live across a
//!   wait), so a task may resume on another block with every thread's locals intact. A record
//!   is a header, the task's arguments (written once by the spawning thread; `Copy`), and one
//!   frame per thread: `frames + threads × stride` bytes ([`crate::abi::RecordSize`]). At the
//!   task's first poll every thread builds its future in its own frame
//!   ([`BlockTask::start_shared`](crate::task::BlockTask::start_shared)): the future reads
//!   the polled record's arguments, and reads them again after each wait, so they are not
//!   copied into any frame, nor is a pointer to them. The stride is the future's size, so the
//!   frames of a small future share memory sectors. A function without a wait has no frames
//!   (stride 0): each thread's future lives on its stack for the one poll ([`record`]).
//! * **Thread 0's result.** A block task's result is thread 0's return value; the other
//!   threads' values are dropped. `entry!` in a block kernel returns thread 0's result of the
//!   root.
//! * **Collective waits.** `taskwait!` is reached by every thread of the block, at the same
//!   wait. Every thread suspends there (a thread cannot know whether the others spawned), the
//!   block sums the children all threads spawned since the last wait, and the task resumes
//!   when they have all finished (at once when there are none). Some threads waiting while
//!   others return, or threads at different waits, is the typed device error
//!   [`ErrorCode::PartialWait`](crate::abi::ErrorCode::PartialWait), naming the function and
//!   line of the wait, never a hang.
//! * **No inline children.** A child cannot run inline on one thread (its body needs the whole
//!   block), so a spawn that finds no free slot is `PoolExhausted` in block mode.
//!
//! # The block worker ([`worker`])
//!
//! A block is one worker. It reuses thread mode's machinery through a [`Worker`] with batches
//! of one task, run by the block's first warp (its *scheduling warp*): the block's queues, pool,
//! statistics and watchdog status are those of its first warp, and steals pick victims among
//! the first warps of the blocks. The other warps' queues stay empty; their task slots are lent
//! through the pool's borrowing ([`crate::pool`]). One step of a block:
//!
//! 1. **Find.** The scheduling warp takes the task its last fold kept, or refills (staged
//!    ids, the overflow list, its own unpublished ids, its own fullest queue, a steal of the
//!    oldest id of a victim),
//!    reading the stop word as a warp does (when the refill finds nothing, and every
//!    [`STOP_CHECK_STEPS`](crate::scheduler::STOP_CHECK_STEPS) steps), and its leader writes
//!    the id into the block's shared state. Block barrier. Every thread reads the id. In a
//!    launch whose tasks never wait (`no_taskwait`) a refill claims up to
//!    [`BLOCK_CLAIM`](crate::queue::BLOCK_CLAIM) ids at once, oldest first, from its own queue
//!    or a victim's, and the block runs them oldest first (see "Oldest first" in
//!    [`crate::queue`]: an asynchronous BFS re-visits far less in that order), up to
//!    [`STEP_TASKS`](worker::STEP_TASKS) of them a step (fewer in a small pool: the step's
//!    finished tasks keep their slots until its settle): the leader writes them all, the first
//!    where a joining launch's one task goes, the others after it.
//! 2. **Poll.** Every thread polls its own frame once; in a detached launch it then polls the
//!    step's next task, after a block barrier (the tasks' helpers share the block's shared
//!    memory), until the step's tasks are done. Spawns allocate from the block's pool
//!    stash and stage on the block's queues with the shared-memory atomics of thread mode
//!    (`atom.*.cta` reach every warp of a block). Each thread adds the children it spawned to
//!    the block's sum and counts itself as returned or suspended. Nothing in a poll fences.
//! 3. **Verdict.** Block barrier. The other warps go on to the next step's first barrier; the
//!    scheduling warp's leader (thread 0) checks the collective wait (in a detached launch
//!    once for all the step's tasks: every thread returned from each, or the launch fails, as
//!    a wait there is an error) and decides: finished
//!    (every thread returned, no children outstanding), completing (every thread returned,
//!    children outstanding: the implicit wait of [`crate::join`]), suspended (every thread at
//!    the same wait; `pending` = the sum, stored relaxed in the header as in thread mode), poll
//!    again (every thread at the same wait and no children: the wait is a no-op, and the task
//!    is the next step's), or dropped (the threads disagree: a partial wait is raised, unless
//!    the launch is aborting, as it is when a thread of the poll panicked or raised an error
//!    and so counted itself neither way). Only an error verdict reads the stop word: a clean
//!    verdict stands even in an aborting launch, whose workers stop at their next stop check. It
//!    resets the block's counters before the next step's barrier.
//! 4. **Fold and join.** The scheduling warp folds what the step staged, keeping one id (the
//!    first child or the continuation) as the next task (none while a detached launch's block
//!    still holds claimed ids) and placing the rest in its ring. A detached launch publishes
//!    them at once with the fold's release fence; a joining one keeps them unpublished, popped
//!    by the block itself with no atomic, until thieves see its queue empty (see "Lazy
//!    publication" in [`crate::queue`]: a recursive launch then fences for its finishes, not
//!    its spawns). Then it frees a finished task and notifies its parent ([`crate::join`]),
//!    and restocks the pool stash. A parent whose last child that was is the only id the step
//!    staged: it becomes the next task at once, unpublished, with no second fold. A first child
//!    that finishes while the block still holds its siblings unpublished cannot be the last:
//!    its step neither folds nor fences, and it decrements its parent with a relaxed reduction
//!    (see "Owed decrements" in [`crate::join`]).
//!
//! So a step costs two block barriers, one more between two tasks of a detached launch's step,
//! plus those of the helpers the tasks call, and at most one release fence, the scheduling
//! warp's. A detached launch's step runs up to [`STEP_TASKS`](worker::STEP_TASKS) tasks for one
//! find, verdict, fold and settle: the scheduling warp's serial part, which the other warps
//! wait for, is paid once for them all (the block SpMV runs 12 % faster with 16 a step than
//! with one, `bench/NOTES.md` entry 107).
//!
//! **Ordering.** Only the scheduling warp fences, as in a CUTLASS-style semaphore (barrier, then
//! one thread's release). A block barrier (`bar.sync`) synchronizes its threads, and in the
//! PTX memory model causality order is transitive across that synchronization and program
//! order: every thread's writes in the poll (frames, children's records, thread 0's result)
//! precede, through the barrier after the poll, the scheduling warp's release fence in the fold,
//! and with it whatever that fence releases (the ring counts it publishes, the decrements of
//! the joins). So one fence per step does what a fence by every thread did. The other way
//! round, a steal's acquire is thread 0's fence in the claim (`Worker::refill_from`, as in
//! thread mode); the barrier after the find orders it before every thread's reads of the stolen
//! record. A step that publishes nothing and finishes nothing does not fence: its children are
//! the block's next tasks, ordered by the barriers alone, and its writes are released with the
//! next fence of the block, which precedes anything that lets another block see them.
//!
//! **Trace.** With the event trace on ([`crate::trace`]), the block is one track, recorded by
//! the scheduling warp's leader (thread 0) with thread mode's recorder: the step's find marks
//! the poll's start (or extends an idle span), and after the verdict it records a
//! [`TraceKind::BlockRun`](crate::abi::TraceKind::BlockRun) saying how the poll ended; steals
//! are recorded by the shared search code. Each is behind a test of `Region::traced` on the
//! scheduling warp, so the other warps and the poll itself are unchanged.
//!
//! Everything thread mode's invariants rest on holds per block: a task is polled by one worker
//! at a time; children are staged during the poll and published after it, so none finishes
//! before its parent's `pending` is stored; a wait's count is the worker's spawn count since
//! the last wait; the ordering of records, results and ring entries is the fold's fence and the
//! steal's acquire. The barriers take the place of the warp barriers, and the verdict of the
//! per-lane `returned`/`prepare_wait` logic. The stop word, error report and statistics are
//! the same words as in thread mode.
//!
//! The CPU executor runs the same code with one OS thread per simulated GPU thread and real
//! barriers ([`crate::cpu`]).

pub(crate) mod record;
pub(crate) mod task;
mod token;
pub(crate) mod worker;

use crate::arch::LocalU32;

pub use token::{Block, SharedMem, SharedWord, StrideIndex};

/// A block's scheduling state shared by its threads (shared memory on the GPU, in the area of
/// a warp that does not schedule, or after the thread-mode areas in a block of one warp: see
/// [`crate::abi::block_mode_shared_bytes`]).
#[repr(C)]
pub struct BlockShared {
    /// The tasks the block runs this step, in order: the first is a task, [`worker::IDLE`] or
    /// [`worker::STOP`]; the others (a detached launch's, see [`worker::STEP_TASKS`]) end at
    /// the first `IDLE`. Two sets used alternately by step parity, so that the scheduling warp
    /// can write the next step's while slow threads still read this one's.
    pub(crate) tasks: [[LocalU32; worker::STEP_TASKS as usize]; 2],
    /// Children the block's threads spawned in the current poll.
    pub(crate) spawned: LocalU32,
    /// Threads whose poll returned.
    pub(crate) returned: LocalU32,
    /// Threads whose poll suspended at a wait.
    pub(crate) suspended: LocalU32,
    /// Low half of the first wait's `Site` address, with bit 0 set (0: no wait yet).
    pub(crate) wait_lo: LocalU32,
    /// High half of the first wait's `Site` address.
    pub(crate) wait_hi: LocalU32,
    /// Set when a thread suspended at another wait than the first.
    pub(crate) mismatch: LocalU32,
    /// Thread 0's resume queue for the wait (a queue, or `record::SPAWN_QUEUE`).
    pub(crate) resume: LocalU32,
}

impl BlockShared {
    /// The state of a block at kernel start.
    pub const fn new() -> Self {
        Self {
            tasks: [const { [const { LocalU32::new(worker::IDLE) }; worker::STEP_TASKS as usize] };
                2],
            spawned: LocalU32::new(0),
            returned: LocalU32::new(0),
            suspended: LocalU32::new(0),
            wait_lo: LocalU32::new(0),
            wait_hi: LocalU32::new(0),
            mismatch: LocalU32::new(0),
            resume: LocalU32::new(crate::record::SPAWN_QUEUE),
        }
    }
}

impl Default for BlockShared {
    fn default() -> Self {
        Self::new()
    }
}
