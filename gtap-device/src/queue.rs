//! Per-warp ring queues of runnable task ids, with batched pops, batched steals and
//! divergence-aware queue selection.
//!
//! # Protocol
//!
//! Each warp owns `num_queues` rings holding up to `queue_capacity` ids each (in a power-of-two
//! number of entries). Positions are free-running `u32` counters; entry = position & mask.
//!
//! * **Staging (during a step).** Lanes stage ids (new children, parents whose last child
//!   finished) per queue with a shared-memory add on `staged[q]` (one per lane: the hardware's
//!   same-address atomics cost less than electing a leader to add for the group,
//!   bench/NOTES.md entry 58). The first [`KEEP`] ids of a queue go to the warp's `keep[q]`
//!   area in shared memory; the rest go straight into the ring at `tail + (k - KEEP)`. Staged
//!   ids are invisible to other warps.
//! * **Fold (end of step, [`fold`]).** After a warp barrier the queue that received the most
//!   ids hands its kept ids to the warp as the next batch: they never touch device memory. The
//!   other queues' kept ids are copied into their rings behind the overflow. Then one
//!   converged release fence by every lane makes the records and ring entries of the step
//!   visible GPU-wide, and the leader *publishes* the ring entries with a relaxed add to each
//!   queue's `count`: a thief that sees the count (and fences) sees the entries and records.
//! * **`count`** is the number of published, unclaimed ids, `[head, tail)` minus what the owner
//!   has taken back. Owner pops and thief steals both claim by compare-and-swap on `count`, so
//!   together they never claim more than was published: the owner takes from the tail end
//!   (newest first), thieves from the head end (oldest first), and the two ranges cannot meet.
//! * **The owner's view of `count`** (`WarpShared::counts`, shared memory): only the owner adds
//!   to a `count` (its fold) and thieves only take, so the owner's running total of what it
//!   published and took back is an upper bound, exact until a thief claims. A pop expects the
//!   view in its compare-and-swap, whose failure returns the true count for the next attempt
//!   (smaller, so the loop ends); a queue the view says is empty is empty, and the owner's
//!   pick among its queues reads no device memory. A pop costs one round trip where a thief
//!   took nothing since, two otherwise, as a read and a compare-and-swap did before.
//! * **Thieves** serialise on the victim queue's `lock` (acquire), claim up to 32 ids, read
//!   `head` (only thieves write it, under the lock), let their lanes copy the ids out, then
//!   advance `head` and unlock (release). The owner re-reads `head` (acquire) before reusing a
//!   slot, so it never overwrites an id a thief has not copied yet.
//! * **Overflow list: no queue overflows.** A ring cannot be sized for what lands in it:
//!   continuations are staged on the warp of the last child, so a warp's rings also receive
//!   other warps' tasks, and `slots_per_warp / num_queues` bounds nothing. So a ring never has
//!   to: an id staged at a position the ring has no room for (`pos - head >= capacity`, against
//!   the warp's view of `head`) goes onto the warp's *overflow list* instead, a stack in shared
//!   memory (its head, `WarpShared::overflow`) linked through the tasks' own headers: a staged
//!   task is runnable, so its `pending` counter is unused (it is 0, and rewritten by the task's
//!   next wait before any child can decrement it) and holds the next id. Every runnable task
//!   has a record, so the list has room for every task there is: overflow is impossible by
//!   construction. Positions are handed out in staging order and the room is judged against
//!   one view of `head` per step (refreshed only by the fold's leader, after the step's
//!   staging), so the ids that fit are exactly the first ones of each queue and the fold
//!   publishes a contiguous range. The list is the warp's own: an idle warp takes its next
//!   batch from it before it pops its rings or steals ([`take_overflow`]), and thieves never see
//!   it (a ring that overflows is full of ids to steal). The common path pays one comparison
//!   per id staged past [`KEEP`], as the capacity check it replaces did.
//! * **Oldest first in a detached block launch.** A block-mode launch whose tasks never wait
//!   (`no_taskwait`) has no joins, so the depth-first order that bounds a joining launch's live
//!   tasks buys it nothing, and searches that correct labels (an asynchronous BFS) re-visit far
//!   less in the order they discovered their work: the block claims up to [`BLOCK_CLAIM`] of its
//!   own *oldest* ids at a time, half of what it published, as a thief does (under the queue's
//!   lock, [`pop_own_oldest`]), and runs them oldest first (in ring order: a step's ids past
//!   the first [`KEEP`] enter the ring ahead of those, see [`fold`]); thieves take half too. A
//!   child is run at once (kept by the fold) only by a block that has no claimed ids left, as
//!   a block always does in a joining launch. A queue holding more than half the block's task
//!   slots is popped newest first again, so the order never holds more tasks live than the
//!   depth-first one would need to drain (bench/NOTES.md entry 78).
//! * **Lazy publication in a joining block launch.** A block's fold (batches of one, tasks that
//!   join) places the ids it does not keep in the ring as a warp's does, but publishes them
//!   only when the block's view says thieves see the queue empty; until then they stay the
//!   block's own, counted in `WarpShared::private` at the ring's tail end, past the published
//!   ids. The block pops them first, newest first, with no atomic and no fence
//!   ([`pop_unpublished`]); the newest is usually the one its last spawning step did not keep,
//!   which that step's fold leaves in shared memory (`WarpShared::held_top`), so the pop that
//!   runs it does not read the ring. A fold that publishes them adds them all behind the
//!   published ids with one fence, so the published range stays contiguous. A block pops published ids
//!   only when it holds no unpublished ones, so `tails` is the published end whenever a
//!   compare-and-swap claims from it. The view is an upper bound that the block lowers only
//!   when it claims, so at each stop check it reads the true counts of the queues that hold
//!   unpublished ids ([`refresh_views`]): a block whose published ids were stolen publishes
//!   what it holds within [`STOP_CHECK_STEPS`](crate::scheduler::STOP_CHECK_STEPS) steps. A
//!   recursive launch keeps one published id a block for thieves, the oldest (the largest
//!   subtree), and its other spawns cost no fence and their pops no atomic.
//! * **DAQ**: an idle warp pops its fullest queue; a thief picks the victim's fullest queue; the
//!   fold keeps the queue that received the most, so a batch holds tasks of one kind.

use core::sync::atomic::Ordering;

use crate::arch::{self, AtomicU32, Broadcast, Lanes, WARP_SIZE, Warp};
use crate::lane::LaneView;
use crate::math::XorShift64;
use crate::record::NONE;
use crate::region::Region;
use crate::scheduler::WarpShared;

/// Ids a block claims at once from a queue in a detached launch (its own oldest, or a steal):
/// see "Oldest first" in the module docs.
pub(crate) const BLOCK_CLAIM: u32 = WARP_SIZE;

/// Ids of one queue a warp keeps in shared memory from one step to run in the next: a batch.
pub const KEEP: u32 = WARP_SIZE;

/// Metadata of one ring queue in device memory, alone in its 128-byte line so that the owner
/// and thieves of one queue do not contend with those of its neighbours.
#[repr(C, align(128))]
pub struct QueueMeta {
    /// Published ids not yet claimed.
    pub(crate) count: AtomicU32,
    /// Position of the oldest unclaimed id (written by thieves under `lock`).
    pub(crate) head: AtomicU32,
    /// Thieves' lock: 0 free, 1 held.
    pub(crate) lock: AtomicU32,
}

/// Ids warp `w` has published on its queues and no one has claimed yet: what thieves can take
/// from it now. Parallel CPU executor only (lazy spawns, see `task.rs`).
#[cfg(not(target_arch = "nvptx64"))]
#[inline]
pub(crate) fn published(region: &Region, w: u32) -> u32 {
    (0..region.num_queues)
        .map(|q| region.queue_meta(w, q).count.load(Ordering::Relaxed))
        .fold(0, u32::saturating_add)
}

/// Victims a thief tries per idle step.
const STEAL_TRIES: u32 = 4;

/// How many queues each warp has, as the scheduler's loops over them see it: `Q` where the
/// kernel fixes it (`#[gtap::kernel(queues = Q)]`, which the host checks against the launch's
/// count before it runs), so that the compiler unrolls them and keeps their state in
/// registers; the launch's count where `Q` is 0. `Q` above the runtime's limit does not compile
/// (the macros refuse it first).
#[inline(always)]
pub(crate) fn count<const Q: u32>(region: &Region) -> u32 {
    const {
        assert!(
            Q as usize <= crate::abi::MAX_QUEUES,
            "a kernel's `queues` is at most 16"
        )
    };
    if Q == 0 {
        region.num_queues
    } else {
        debug_assert_eq!(
            Q, region.num_queues,
            "kernel's queue count differs from the launch's"
        );
        Q
    }
}

#[inline(always)]
fn slot(region: &Region, warp: u32, q: u32, pos: u32) -> *mut u32 {
    // SAFETY: `pos % capacity` lies inside the ring of (warp, q).
    unsafe { region.ring(warp, q).add((pos & region.ring_mask) as usize) }
}

/// Reads the id at ring position `pos` of queue `q` of warp `warp`.
#[inline(always)]
pub(crate) fn read(region: &Region, warp: u32, q: u32, pos: u32) -> u32 {
    #[cfg(loom)]
    arch::shadow::read(slot(region, warp, q, pos) as usize);
    // SAFETY: the caller claimed `pos` (by pop, steal or end-of-step take-back), and the id was
    // written before the claim became visible.
    unsafe { slot(region, warp, q, pos).read() }
}

/// Stages `task` on queue `q` of the calling lane's warp. Per lane.
#[inline]
pub(crate) fn stage(lane: &LaneView, task: u32, q: u32) {
    let shared = lane.shared();
    let k = shared.staged[q as usize].fetch_add(1);
    if k < KEEP {
        shared.keep[q as usize][k as usize].store(task);
        return;
    }
    let pos = shared.tails[q as usize].load().wrapping_add(k - KEEP);
    place(lane.region(), shared, lane.warp, q, pos, task);
}

/// Writes `task` at ring position `pos` of the warp's own queue `q`, or, when the ring has no
/// room there, pushes it onto the warp's overflow list. Straight-line code, no call and no
/// loop: a kernel stages ids in many places, and what each of them costs in registers adds up.
#[inline(always)]
fn place(region: &Region, shared: &WarpShared, me: u32, q: u32, pos: u32, task: u32) {
    if pos.wrapping_sub(shared.heads[q as usize].load()) < region.queue_capacity {
        let entry = slot(region, me, q, pos);
        #[cfg(loom)]
        arch::shadow::write(entry as usize);
        // SAFETY: the position lies within capacity of the warp's last view of `head`, which
        // was read with acquire after the thieves that claimed older ids had copied them out.
        unsafe { entry.write(task) };
    } else {
        // Pushes onto the list. Lanes may push concurrently: each links to the head it
        // replaced; nobody walks the list before the warp barrier that ends the step.
        let next = shared.overflow.swap(task);
        // SAFETY: `task` is staged, so runnable: its lane owns the header until the warp runs
        // it, and `pending` is unused until its next wait (see the module docs).
        unsafe {
            (*region.header(task))
                .pending
                .store(next, Ordering::Relaxed)
        };
    }
}

/// Leader, when the warp has no batch: takes up to `max` (at most [`KEEP`]) ids off the warp's
/// overflow list into `keep[0]` (free between steps) and returns how many. The lanes read them
/// after a barrier.
#[inline]
pub(crate) fn take_overflow(region: &Region, shared: &WarpShared, max: u32) -> u32 {
    let mut id = shared.overflow.load();
    let mut n = 0;
    while id != NONE && n < max {
        shared.keep[0][n as usize].store(id);
        // SAFETY: a listed task is runnable and unpublished: only this warp touches it, and the
        // lane that pushed it wrote the link before a warp barrier that precedes this read.
        id = unsafe { (*region.header(id)).pending.load(Ordering::Relaxed) };
        n += 1;
    }
    shared.overflow.store(id);
    n
}

/// The queue with the most ids by `count` (a victim's published counts, or the owner's own
/// view of its counts), or a random non-empty one in the deterministic executor's
/// random-queue mode. Returns (queue, count).
#[inline]
fn pick<const Q: u32>(
    region: &Region,
    rng: &mut XorShift64,
    ids: impl Fn(u32) -> u32,
) -> (u32, u32) {
    let random = region.random_queue();
    let (mut best, mut best_n, mut seen) = (0, 0, 0u32);
    for q in 0..count::<Q>(region) {
        let c = ids(q);
        if c == 0 {
            continue;
        }
        seen += 1;
        let take = if random {
            rng.next_u64().is_multiple_of(seen as u64)
        } else {
            c > best_n
        };
        if take {
            (best, best_n) = (q, c);
        }
    }
    (best, best_n)
}

/// The queue of warp `warp` with the most published ids (device-memory reads): a thief's pick.
#[inline]
fn pick_victim_queue<const Q: u32>(region: &Region, warp: u32, rng: &mut XorShift64) -> (u32, u32) {
    pick::<Q>(region, rng, |q| {
        region.queue_meta(warp, q).count.load(Ordering::Relaxed)
    })
}

/// Ring positions `start..start + count` of one queue, claimed by a warp's leader; the lanes
/// then read the ids at them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Span {
    /// The first position (free-running; wraps).
    pub(crate) start: u32,
    /// How many positions.
    pub(crate) count: u32,
}

impl Span {
    /// No positions.
    pub(crate) const EMPTY: Span = Span { start: 0, count: 0 };
}

impl Broadcast for Span {
    type Words = [u32; 2];
    #[inline(always)]
    fn to_words(self) -> [u32; 2] {
        [self.start, self.count]
    }
    #[inline(always)]
    fn from_words([start, count]: [u32; 2]) -> Self {
        Span { start, count }
    }
}

/// Where a warp's next batch comes from: a span of queue `queue` of warp `owner`, the warp
/// itself after a pop of its own, another after a steal. A claim from the oldest end (a steal,
/// or a block's own oldest ids) leaves the queue locked until [`end_steal`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Claim {
    /// The queue the ids are in.
    pub(crate) queue: u32,
    /// The claimed positions.
    pub(crate) span: Span,
    /// The warp that owns the queue, [`NONE`] when nothing was claimed.
    pub(crate) owner: u32,
    /// Whether the claim holds the queue's lock (it took the oldest ids).
    pub(crate) locked: bool,
}

impl Claim {
    /// Nothing to run: no own ids, no steal.
    pub(crate) const NOTHING: Claim = Claim {
        queue: 0,
        span: Span::EMPTY,
        owner: NONE,
        locked: false,
    };
}

/// [`Claim::locked`] in the broadcast queue word (queues are far fewer than 2^31).
const LOCKED: u32 = 1 << 31;

impl Broadcast for Claim {
    type Words = [u32; 4];
    #[inline(always)]
    fn to_words(self) -> [u32; 4] {
        let queue = self.queue | if self.locked { LOCKED } else { 0 };
        [queue, self.span.start, self.span.count, self.owner]
    }
    #[inline(always)]
    fn from_words([queue, start, count, owner]: [u32; 4]) -> Self {
        Claim {
            queue: queue & !LOCKED,
            span: Span { start, count },
            owner,
            locked: queue & LOCKED != 0,
        }
    }
}

/// Leader: claims up to `max` ids (32 for a warp, 1 for a block) from the calling worker's own
/// fullest queue, newest first.
#[inline]
pub(crate) fn pop_own<const Q: u32>(
    region: &Region,
    shared: &WarpShared,
    me: u32,
    rng: &mut XorShift64,
    max: u32,
) -> Option<Claim> {
    loop {
        let (q, c) = pick::<Q>(region, rng, |q| shared.counts[q as usize].load());
        if c == 0 {
            return None;
        }
        if let Some(span) = claim_newest(region, shared, me, q, c, max) {
            return Some(Claim {
                queue: q,
                span,
                owner: me,
                locked: false,
            });
        }
    }
}

/// Block leader, in a detached launch: claims up to `max` of the oldest ids of the block's own
/// fullest queue, half of what it holds, as a thief does (the queue stays locked until
/// [`end_steal`]). `None` when the queue is empty, and when the block's view says it holds more
/// than half the block's task slots, which the newest-first pop drains (see "Oldest first" in
/// the module docs).
#[inline]
pub(crate) fn pop_own_oldest<const Q: u32>(
    region: &Region,
    shared: &WarpShared,
    me: u32,
    rng: &mut XorShift64,
    max: u32,
) -> Option<Claim> {
    let (q, seen) = pick::<Q>(region, rng, |q| shared.counts[q as usize].load());
    if seen == 0 || seen > region.slots_per_warp / 2 {
        return None;
    }
    let meta = region.queue_meta(me, q);
    // Thieves hold the lock only while they copy their claim out, and never wait while holding
    // it, so this ends.
    while meta.lock.compare_exchange(0, 1, Ordering::Acquire).is_err() {}
    let view = &shared.counts[q as usize];
    loop {
        // Relaxed, as the owner's newest-first claim: the ids and their records are this
        // block's own (see `claim_newest`).
        let c = meta.count.load(Ordering::Relaxed);
        if c == 0 {
            view.store(0);
            meta.lock.store(0, Ordering::Release);
            return None;
        }
        let n = c.div_ceil(2).min(max);
        if meta
            .count
            .compare_exchange(c, c - n, Ordering::Relaxed)
            .is_ok()
        {
            view.store(c - n);
            // Only lock holders write `head`.
            let head = meta.head.load(Ordering::Relaxed);
            return Some(Claim {
                queue: q,
                span: Span {
                    start: head,
                    count: n,
                },
                owner: me,
                locked: true,
            });
        }
    }
}

/// Leader: one attempt to claim up to `max` of the newest ids of the warp's own queue `q`,
/// expecting `seen` published ids (the warp's view, [`WarpShared::counts`]). On success the
/// warp's tail moves back over them. `None`: thieves claimed some since (the view now holds
/// what is left), read again.
#[inline]
fn claim_newest(
    region: &Region,
    shared: &WarpShared,
    me: u32,
    q: u32,
    seen: u32,
    max: u32,
) -> Option<Span> {
    let n = seen.min(max);
    // Relaxed: the claimed ids and their records were written by this warp (or acquired by one
    // of its lanes before it staged them), and the compare-and-swap only has to be atomic to
    // keep the owner's and the thieves' ranges apart. As a read-modify-write it continues the
    // release sequence of the fold's publication, so a thief that reads its value still
    // acquires everything published before. (AcqRel cost a membar and an L1 invalidation per
    // pop: 4.6 % of fib(40)'s stall samples at a7d111f.)
    let view = &shared.counts[q as usize];
    match region
        .queue_meta(me, q)
        .count
        .compare_exchange(seen, seen - n, Ordering::Relaxed)
    {
        Ok(_) => view.store(seen - n),
        Err(now) => {
            // Thieves only take, so `now < seen`: the next attempt expects less, and the view
            // stays an upper bound.
            view.store(now);
            return None;
        }
    }
    let tail = shared.tails[q as usize].load().wrapping_sub(n);
    shared.tails[q as usize].store(tail);
    Some(Span {
        start: tail,
        count: n,
    })
}

/// Leader: claims up to `max` of the newest published ids of the calling warp's own queue `q`,
/// to top up a batch that is not full (an empty span: none).
#[inline]
pub(crate) fn pop_own_at(region: &Region, shared: &WarpShared, me: u32, q: u32, max: u32) -> Span {
    // Everything published lies in [head, tail); with the warp's last view of `head` (a lower
    // bound) saying the ring is empty, skip the device-memory round trip.
    if shared.tails[q as usize].load() == shared.heads[q as usize].load() {
        return Span::EMPTY;
    }
    loop {
        let c = shared.counts[q as usize].load();
        if c == 0 {
            return Span::EMPTY;
        }
        if let Some(claimed) = claim_newest(region, shared, me, q, c, max) {
            return claimed;
        }
    }
}

/// Leader: tries a few random victims and claims up to `max` of the oldest ids of the victim's
/// fullest queue (with `half`, at most half of them). On success the victim queue stays locked
/// until [`end_steal`].
///
/// Workers are every `stride`-th warp: every warp in thread mode (`stride` 1, a constant the
/// division folds away), the first warp of each block in block mode (see [`crate::block`]).
#[inline]
pub(crate) fn try_steal<const Q: u32>(
    region: &Region,
    me: u32,
    rng: &mut XorShift64,
    max: u32,
    half: bool,
    stride: u32,
) -> Option<Claim> {
    let workers = region.warps / stride;
    if workers < 2 {
        return None;
    }
    let mine = me / stride;
    for _ in 0..STEAL_TRIES {
        // A random index below workers - 1 by multiply-shift (no division).
        let v = ((rng.next_u64() as u32 as u64 * (workers as u64 - 1)) >> 32) as u32;
        let victim = (if v >= mine { v + 1 } else { v }) * stride;
        let (q, c) = pick_victim_queue::<Q>(region, victim, rng);
        if c == 0 {
            continue;
        }
        let meta = region.queue_meta(victim, q);
        if meta.lock.compare_exchange(0, 1, Ordering::Acquire).is_err() {
            continue;
        }
        loop {
            let c = meta.count.load(Ordering::Relaxed);
            if c == 0 {
                meta.lock.store(0, Ordering::Release);
                break;
            }
            let n = if half { c.div_ceil(2) } else { c }.min(max);
            if meta
                .count
                .compare_exchange(c, c - n, Ordering::AcqRel)
                .is_ok()
            {
                let head = meta.head.load(Ordering::Relaxed);
                return Some(Claim {
                    queue: q,
                    span: Span {
                        start: head,
                        count: n,
                    },
                    owner: victim,
                    locked: true,
                });
            }
        }
    }
    None
}

/// Leader: the lanes have copied the ids of a locked claim out (a steal, or a block's own
/// oldest); advance the queue's head and unlock.
#[inline]
pub(crate) fn end_steal(region: &Region, victim: u32, q: u32, head: u32, n: u32) {
    let meta = region.queue_meta(victim, q);
    meta.head.store(head.wrapping_add(n), Ordering::Release);
    meta.lock.store(0, Ordering::Release);
}

/// The next batch a [`fold`] handed the warp.
#[derive(Clone, Copy)]
pub(crate) struct Batch {
    /// Each lane's task id, [`NONE`] past `len` (a block runs its batch from lane `len - 1`
    /// down, so there the lanes past `len` hold ids it already ran).
    pub(crate) ids: Lanes<u32>,
    /// How many lanes have a task (lanes `0..len`).
    pub(crate) len: u32,
    /// The queue the batch came from.
    pub(crate) queue: u32,
}

impl Batch {
    /// A block's next task, `id` of `queue`, as a batch of one (on lane 0); every lane passes
    /// the same `id`.
    #[inline(always)]
    pub(crate) fn one(warp: &Warp, id: u32, queue: u32) -> Batch {
        Batch {
            ids: warp.lanes(|lane| if lane == 0 { id } else { NONE }),
            len: 1,
            queue,
        }
    }
}

/// Whether a fold that keeps `KEPT` ids publishes lazily: a block (batches of one) in a launch
/// whose tasks join (see "Lazy publication" in the module docs).
#[inline(always)]
pub(crate) const fn lazy<const KEPT: u32, const DETACH: bool>() -> bool {
    KEPT == 1 && !DETACH
}

/// An unpublished id a block popped ([`pop_unpublished`]) and its queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Held {
    /// The queue it was on.
    pub(crate) queue: u32,
    /// The task, [`NONE`] when the block held nothing.
    pub(crate) id: u32,
}

impl Held {
    /// The block held no unpublished id.
    pub(crate) const NOTHING: Held = Held { queue: 0, id: NONE };
}

impl Broadcast for Held {
    type Words = [u32; 2];
    #[inline(always)]
    fn to_words(self) -> [u32; 2] {
        [self.queue, self.id]
    }
    #[inline(always)]
    fn from_words([queue, id]: [u32; 2]) -> Self {
        Held { queue, id }
    }
}

/// Block leader, in a joining launch: takes the newest unpublished id of the block's queue that
/// holds the most (see "Lazy publication" in the module docs), with no atomic: thieves cannot
/// see it. It reads the ring only when the fold that held the id did not leave it in
/// [`WarpShared::held_top`]. `None` when every id the block holds is published.
#[inline]
pub(crate) fn pop_unpublished<const Q: u32>(
    region: &Region,
    shared: &WarpShared,
    me: u32,
    rng: &mut XorShift64,
) -> Option<Held> {
    let (q, n) = pick::<Q>(region, rng, |q| shared.private[q as usize].load());
    if n == 0 {
        return None;
    }
    shared.private[q as usize].store(n - 1);
    let tail = shared.tails[q as usize].load().wrapping_sub(1);
    shared.tails[q as usize].store(tail);
    let top = shared.held_top.load();
    let id = if top != NONE && shared.held_top_queue.load() == q {
        // The id below it is not known without the ring.
        shared.held_top.store(NONE);
        top
    } else {
        read(region, me, q, tail)
    };
    Some(Held { queue: q, id })
}

/// Block leader, at a stop check in a joining launch: reads the true `count` of each queue that
/// holds unpublished ids into the block's view, so that the step's fold publishes them when
/// thieves have emptied the published part (see "Lazy publication" in the module docs).
#[inline]
pub(crate) fn refresh_views<const Q: u32>(region: &Region, shared: &WarpShared, me: u32) {
    for q in 0..count::<Q>(region) {
        if shared.private[q as usize].load() != 0 {
            // Relaxed: only a number; the view stays an upper bound, as only this block adds.
            let now = region.queue_meta(me, q).count.load(Ordering::Relaxed);
            shared.counts[q as usize].store(now);
        }
    }
}

/// Warp, after a barrier: ends the staging of a step (see the module docs). The queue that
/// received the most ids keeps its first `KEPT` as the next batch ([`KEEP`] for a warp, 1 for
/// a block, 0 for a block that still holds claimed ids); every other staged id is written to
/// the rings and published. `release` asks for the release fence even when nothing is
/// published (finished tasks are about to notify their parents). A `no_taskwait` launch counts
/// the folded ids among its live tasks before the fence (see "Kernels without waits" in
/// [`crate::scheduler`]).
pub(crate) fn fold<const KEPT: u32, const Q: u32, const DETACH: bool>(
    warp: &Warp,
    release: bool,
) -> Batch {
    const { assert!(KEPT <= KEEP) };
    let region = warp.region();
    let shared = warp.shared();
    let me = warp.id();
    let queues = count::<Q>(region);
    // Every lane reads the staged counts and reaches the same plan.
    let (mut best, mut best_n, mut published) = (0u32, 0u32, 0u32);
    for q in 0..queues {
        let s = shared.staged[q as usize].load();
        published += s;
        if s > best_n {
            (best, best_n) = (q, s);
        }
    }
    let folded = published;
    let keep = best_n.min(KEPT);
    published -= keep;
    if lazy::<KEPT, DETACH>() {
        // Publishes only queues that thieves see empty (see "Lazy publication" in the module
        // docs); every lane reaches the leader's decision below from the same views.
        published = 0;
        for q in 0..queues {
            let s = shared.staged[q as usize].load();
            let held = shared.private[q as usize].load() + if q == best { s - keep } else { s };
            if shared.counts[q as usize].load() == 0 {
                published += held;
            }
        }
    }
    let ids = warp.lanes(|lane| {
        for q in 0..queues {
            let s = shared.staged[q as usize].load();
            // The batch's own ids stay in `keep`; with `KEPT < KEEP` the kept ids past it are
            // placed behind the queue's other staged ids. (Constant-folded for a warp.)
            let first = if KEPT < KEEP && q == best { keep } else { 0 };
            if (KEPT == KEEP && q == best) || lane < first || lane >= s.min(KEEP) {
                continue;
            }
            let pos = shared.tails[q as usize]
                .load()
                .wrapping_add(s.saturating_sub(KEEP) + lane - first);
            let task = shared.keep[q as usize][lane as usize].load();
            place(region, shared, me, q, pos, task);
        }
        if lane < keep {
            shared.keep[best as usize][lane as usize].load()
        } else {
            NONE
        }
    });
    if DETACH && folded > 0 {
        // Before the fence, which orders it before the publication below (see "Kernels without
        // waits" in `crate::scheduler`).
        warp.leader_only(|| region.control().count_created(folded));
    }
    if release || published > 0 {
        // Release, by every lane: the records, results and counts this step wrote and the ring
        // entries above are visible GPU-wide before any publication or join notification.
        // Release only: nothing after it reads what another worker wrote without its own
        // acquire (a steal's fence, the fence after a join's last decrement).
        arch::fence_release();
    }
    // Every lane has read the staged counts and tails before the leader resets and moves them:
    // the lanes of a warp need not run together (racecheck saw a lane read `staged` after the
    // leader's reset in block mode), and a lane that read a moved tail would place its id
    // past the ring's published end, over an entry already published.
    warp.sync();
    warp.leader_only(|| {
        for q in 0..queues {
            let s = shared.staged[q as usize].load();
            let held = if lazy::<KEPT, DETACH>() {
                shared.private[q as usize].load()
            } else {
                0
            };
            if s == 0 && held == 0 {
                continue;
            }
            shared.staged[q as usize].store(0);
            let to_ring = if q == best { s - keep } else { s };
            if !lazy::<KEPT, DETACH>() && to_ring == 0 {
                continue;
            }
            // The lanes placed the first `room` of them in the ring, the rest on the overflow
            // list (the same view of `head`, so the same split).
            let tail = shared.tails[q as usize].load();
            let room = region.queue_capacity - tail.wrapping_sub(shared.heads[q as usize].load());
            let placed = to_ring.min(room);
            if lazy::<KEPT, DETACH>() {
                // The placed ids join the queue's unpublished newest ones, published together
                // only when thieves see the queue empty (the lanes fenced for exactly that).
                let view = &shared.counts[q as usize];
                let unpublished = held + placed;
                let top_here = shared.held_top_queue.load() == q;
                if unpublished > 0 && view.load() == 0 {
                    region
                        .queue_meta(me, q)
                        .count
                        .add(unpublished, Ordering::Relaxed);
                    view.store(unpublished);
                    shared.private[q as usize].store(0);
                    // The kept task's siblings may be among them: it owes nothing now (see
                    // "Owed decrements" in `crate::join`).
                    shared.siblings_held.store(0);
                    shared.pair_parent.store(NONE);
                    if top_here {
                        shared.held_top.store(NONE);
                    }
                } else {
                    shared.private[q as usize].store(unpublished);
                    if placed > 0 && placed == to_ring {
                        // The newest position holds the last of the lanes' ids (those staged
                        // past `KEEP` went into the ring ahead of them).
                        let newest = shared.keep[q as usize][(s.min(KEEP) - 1) as usize].load();
                        shared.held_top.store(newest);
                        shared.held_top_queue.store(q);
                    } else if placed > 0 && top_here {
                        // Some went to the overflow list: the ring's newest is not known.
                        shared.held_top.store(NONE);
                    }
                }
                shared.tails[q as usize].store(tail.wrapping_add(placed));
            } else if placed > 0 {
                // Relaxed: the lanes' fence above ordered everything it publishes.
                region
                    .queue_meta(me, q)
                    .count
                    .add(placed, Ordering::Relaxed);
                let view = &shared.counts[q as usize];
                view.store(view.load() + placed);
                shared.tails[q as usize].store(tail.wrapping_add(placed));
            }
            if to_ring > 0 && placed == room {
                // The ring looks full (or overflowed), but thieves may have made room since:
                // look again for the next step's staging. Acquire: they copied out the ids
                // they claimed before moving `head`.
                let head = region.queue_meta(me, q).head.load(Ordering::Acquire);
                shared.heads[q as usize].store(head);
            }
        }
    });
    // Nobody stages into `keep` again before every lane has taken its id out of it.
    warp.sync();
    Batch {
        ids,
        len: keep,
        queue: best,
    }
}

/// Block worker, after the joins of a task that finished: the id they staged (the parent
/// whose last child the task was), as the next batch of one, without a fold. It is the only id
/// of the step (a finished block task spawned nothing, and a block's joins run on lane 0
/// alone), and it stays unpublished, so there is nothing to place or fence. An empty batch
/// when the joins staged nothing. Readers of `keep` ran after the warp barrier that ended the
/// joins.
#[inline]
pub(crate) fn take_lone_staged<const Q: u32>(warp: &Warp) -> Batch {
    let (region, shared) = (warp.region(), warp.shared());
    let q = warp.leader(|| shared.first_staged(count::<Q>(region)).unwrap_or(NONE));
    if q == NONE {
        return Batch {
            ids: Warp::splat(NONE),
            len: 0,
            queue: 0,
        };
    }
    let ids = warp.lanes(|lane| {
        if lane == 0 {
            shared.keep[q as usize][0].load()
        } else {
            NONE
        }
    });
    warp.leader_only(|| {
        debug_assert_eq!(shared.staged[q as usize].load(), 1);
        shared.staged[q as usize].store(0);
    });
    Batch {
        ids,
        len: 1,
        queue: q,
    }
}

/// Test only: starts every ring position of `warp`'s queues at `at` (a warp at kernel start has
/// them all at 0), to run the wrap-around of the free-running counters.
#[cfg(test)]
pub(crate) fn preset_positions(region: &Region, shared: &WarpShared, warp: u32, at: u32) {
    for q in 0..region.num_queues {
        shared.tails[q as usize].store(at);
        shared.heads[q as usize].store(at);
        region.queue_meta(warp, q).head.store(at, Ordering::Relaxed);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::sync::atomic::AtomicU32 as StdAtomicU32;
    use std::thread;
    use std::vec::Vec;

    use super::*;
    use crate::testing::{Launch, geometry, within};

    /// Stages `ids` on queue `q` of `warp`, from lane 0, in order.
    fn stage_on(warp: &Warp, q: u32, ids: core::ops::Range<u32>) {
        warp.each(Warp::splat(()), |lane, ()| {
            if lane == 0 {
                for id in ids.clone() {
                    stage(&arch::current_lane(), id, q);
                }
            }
        });
        warp.sync();
    }

    /// The ids at ring positions `from..from + n` of `warp`'s queue `q`.
    fn ring_ids(region: &Region, warp: u32, q: u32, from: u32, n: u32) -> Vec<u32> {
        (0..n)
            .map(|k| read(region, warp, q, from.wrapping_add(k)))
            .collect()
    }

    /// Ring positions that start at 0 and ones that start just below 2^32 (they wrap mid-test).
    const STARTS: [u32; 3] = [0, u32::MAX - 4, u32::MAX];

    #[test]
    fn fold_keeps_the_first_32_and_publishes_the_rest() {
        for at in STARTS {
            let launch = Launch::leak(geometry(1, 64, 1));
            let region = launch.region();
            let warp = Warp::new(region, 0, None);
            preset_positions(region, warp.shared(), 0, at);
            stage_on(&warp, 0, 100..140);
            // Before the fold nothing is published: staged ids are invisible to thieves.
            assert_eq!(region.queue_meta(0, 0).count.load(Ordering::Relaxed), 0);
            let batch = fold::<KEEP, 0, false>(&warp, false);
            assert_eq!((batch.len, batch.queue), (KEEP, 0));
            let kept: Vec<u32> = batch.ids.to_vec();
            assert_eq!(kept, (100..132).collect::<Vec<_>>(), "start {at}");
            assert_eq!(region.queue_meta(0, 0).count.load(Ordering::Relaxed), 8);
            assert_eq!(warp.shared().tails[0].load(), at.wrapping_add(8));
            assert_eq!(
                ring_ids(region, 0, 0, at, 8),
                (132..140).collect::<Vec<_>>()
            );
            assert_eq!(warp.shared().staged[0].load(), 0, "the fold resets staging");
            assert_eq!(launch.error(), None);
        }
    }

    #[test]
    fn fold_keeps_the_queue_that_received_most() {
        let launch = Launch::leak(geometry(1, 64, 2));
        let region = launch.region();
        let warp = Warp::new(region, 0, None);
        stage_on(&warp, 0, 10..13);
        stage_on(&warp, 1, 20..25);
        let batch = fold::<KEEP, 0, false>(&warp, false);
        assert_eq!((batch.len, batch.queue), (5, 1));
        assert_eq!(batch.ids[..5], [20, 21, 22, 23, 24]);
        assert!(batch.ids[5..].iter().all(|&id| id == NONE));
        // The other queue's kept ids went to its ring, in staging order, and are published.
        assert_eq!(region.queue_meta(0, 0).count.load(Ordering::Relaxed), 3);
        assert_eq!(ring_ids(region, 0, 0, 0, 3), [10, 11, 12]);
        assert_eq!(region.queue_meta(0, 1).count.load(Ordering::Relaxed), 0);
        assert_eq!(warp.shared().tails[1].load(), 0);
    }

    #[test]
    fn fold_of_a_queue_past_keep_writes_kept_ids_behind_the_overflow() {
        // Queue 0 receives 40 (kept: the most), queue 1 receives 35: its 32 kept ids follow
        // the 3 that went straight to its ring.
        let launch = Launch::leak(geometry(1, 128, 2));
        let region = launch.region();
        let warp = Warp::new(region, 0, None);
        stage_on(&warp, 0, 0..40);
        stage_on(&warp, 1, 1000..1035);
        let batch = fold::<KEEP, 0, false>(&warp, false);
        assert_eq!((batch.len, batch.queue), (32, 0));
        assert_eq!(region.queue_meta(0, 1).count.load(Ordering::Relaxed), 35);
        let mut expected: Vec<u32> = (1032..1035).collect();
        expected.extend(1000..1032);
        assert_eq!(ring_ids(region, 0, 1, 0, 35), expected);
    }

    #[test]
    fn a_joining_block_publishes_only_when_thieves_see_its_queue_empty() {
        for at in STARTS {
            let launch = Launch::leak(geometry(2, 64, 1));
            let region = launch.region();
            let block = Warp::new(region, 0, None);
            let shared = block.shared();
            preset_positions(region, shared, 0, at);
            let count = || region.queue_meta(0, 0).count.load(Ordering::Relaxed);
            let mut rng = XorShift64::new(7);
            // Nothing published yet: the ids not kept are published at once.
            stage_on(&block, 0, 100..103);
            let batch = fold::<1, 0, false>(&block, false);
            assert_eq!((batch.ids[0], batch.len), (100, 1), "start {at}");
            assert_eq!((count(), shared.private[0].load()), (2, 0));
            // Thieves have those: the next child stays the block's own, behind them.
            stage_on(&block, 0, 200..202);
            assert_eq!(fold::<1, 0, false>(&block, false).ids[0], 200);
            assert_eq!((count(), shared.private[0].load()), (2, 1));
            assert_eq!(ring_ids(region, 0, 0, at, 3), [101, 102, 201]);
            // The block pops it with no claim, and the published ids stay where they were.
            let own = pop_unpublished::<0>(region, shared, 0, &mut rng);
            assert_eq!(own, Some(Held { queue: 0, id: 201 }));
            assert_eq!(shared.tails[0].load(), at.wrapping_add(2));
            assert_eq!(pop_unpublished::<0>(region, shared, 0, &mut rng), None);
            stage_on(&block, 0, 300..302);
            let _ = fold::<1, 0, false>(&block, false);
            assert_eq!((count(), shared.private[0].load()), (2, 1));
            // A thief takes both published ids; the block's view still says 2 until it reads
            // the count again, so an empty fold publishes nothing ...
            let stolen = try_steal::<0>(region, 1, &mut rng, WARP_SIZE, false, 1);
            assert_eq!(stolen, Some(claim(0, at, 2, 0)));
            end_steal(region, 0, 0, at, 2);
            let _ = fold::<1, 0, false>(&block, false);
            assert_eq!((count(), shared.private[0].load()), (0, 1));
            // ... and after its stop check's read, the next fold does.
            refresh_views::<0>(region, shared, 0);
            let _ = fold::<1, 0, false>(&block, false);
            assert_eq!((count(), shared.private[0].load()), (1, 0));
            let stolen = try_steal::<0>(region, 1, &mut rng, WARP_SIZE, false, 1);
            assert_eq!(stolen, Some(claim(0, at.wrapping_add(2), 1, 0)));
            assert_eq!(read(region, 0, 0, at.wrapping_add(2)), 301);
            end_steal(region, 0, 0, at.wrapping_add(2), 1);
            assert_eq!(launch.error(), None);
        }
    }

    /// A block pops the newest id it holds from `held_top`, where the fold that held it left
    /// it, and reads the ring for those below it; a fold that publishes, or one whose newest
    /// ids went to the overflow list, leaves nothing there.
    #[test]
    fn a_block_pops_its_newest_held_id_without_reading_the_ring() {
        let launch = Launch::leak(geometry(2, 64, 1));
        let region = launch.region();
        let block = Warp::new(region, 0, None);
        let shared = block.shared();
        let mut rng = XorShift64::new(7);
        let pop = |rng: &mut XorShift64| pop_unpublished::<0>(region, shared, 0, rng).map(|h| h.id);
        // The first fold publishes (thieves see nothing yet); the next two hold.
        stage_on(&block, 0, 10..12);
        let _ = fold::<1, 0, false>(&block, false);
        assert_eq!(shared.held_top.load(), NONE);
        stage_on(&block, 0, 20..23);
        let _ = fold::<1, 0, false>(&block, false);
        stage_on(&block, 0, 30..32);
        let _ = fold::<1, 0, false>(&block, false);
        assert_eq!(shared.private[0].load(), 3);
        assert_eq!(shared.held_top.load(), 31);
        // The newest comes from `held_top` even with its ring entry overwritten.
        let top = region
            .ring(0, 0)
            .wrapping_add((3 & region.ring_mask) as usize);
        // SAFETY: position 3 lies in the ring of (0, 0), which only this test touches.
        unsafe { top.write(999) };
        assert_eq!(pop(&mut rng), Some(31));
        assert_eq!(shared.held_top.load(), NONE);
        assert_eq!([pop(&mut rng), pop(&mut rng)], [Some(22), Some(21)]);
        assert_eq!(pop(&mut rng), None);
        // With room in the ring for one id, the newest goes to the overflow list: the ring's
        // newest is not known.
        stage_on(&block, 0, 40..42);
        let _ = fold::<1, 0, false>(&block, false);
        assert_eq!(shared.held_top.load(), 41);
        let room_for_one = shared.tails[0]
            .load()
            .wrapping_sub(region.queue_capacity - 1);
        shared.heads[0].store(room_for_one);
        stage_on(&block, 0, 50..53);
        let _ = fold::<1, 0, false>(&block, false);
        assert_eq!(shared.held_top.load(), NONE, "52 is on the overflow list");
        assert_eq!([pop(&mut rng), pop(&mut rng)], [Some(51), Some(41)]);
        // A fold that publishes leaves nothing in `held_top`.
        shared.heads[0].store(shared.tails[0].load());
        stage_on(&block, 0, 60..62);
        let _ = fold::<1, 0, false>(&block, false);
        assert_eq!(shared.held_top.load(), 61);
        // A thief takes the one id published first (11); at its stop check the block sees
        // the queue empty, and its next fold publishes what it holds.
        let stolen = try_steal::<0>(region, 1, &mut rng, WARP_SIZE, false, 1);
        assert_eq!(stolen.map(|c| c.span.count), Some(1));
        let c = stolen.expect("a claim");
        end_steal(region, 0, 0, c.span.start, c.span.count);
        refresh_views::<0>(region, shared, 0);
        let _ = fold::<1, 0, false>(&block, false);
        assert_eq!(shared.private[0].load(), 0, "published");
        assert_eq!(shared.held_top.load(), NONE);
        assert_eq!(launch.error(), None);
    }

    /// A fold that publishes a block's held ids publishes its kept task's siblings too, whose
    /// finish then owes nothing (see "Owed decrements" in `crate::join`).
    #[test]
    fn a_publishing_fold_clears_the_siblings_held_flag_and_the_pair() {
        let launch = Launch::leak(geometry(2, 64, 1));
        let region = launch.region();
        let block = Warp::new(region, 0, None);
        let shared = block.shared();
        // Nothing published yet: the fold publishes the siblings, and a local pair's sibling
        // (if it is among them) may now finish elsewhere.
        stage_on(&block, 0, 10..13);
        shared.siblings_held.store(1);
        shared.pair_parent.store(7);
        let _ = fold::<1, 0, false>(&block, false);
        assert_eq!(shared.pair_parent.load(), NONE);
        assert_eq!(
            shared.siblings_held.load(),
            0,
            "the siblings were published"
        );
        // Thieves see two ids: the next fold holds the siblings.
        stage_on(&block, 0, 20..22);
        shared.siblings_held.store(1);
        shared.pair_parent.store(7);
        let _ = fold::<1, 0, false>(&block, false);
        assert_eq!(shared.private[0].load(), 1);
        assert_eq!(shared.siblings_held.load(), 1, "the sibling is held");
        assert_eq!(shared.pair_parent.load(), 7);
    }

    #[test]
    fn an_empty_fold_hands_out_nothing() {
        let launch = Launch::leak(geometry(1, 64, 2));
        let warp = Warp::new(launch.region(), 0, None);
        let batch = fold::<KEEP, 0, false>(&warp, true);
        assert_eq!(batch.len, 0);
        assert!(batch.ids.iter().all(|&id| id == NONE));
    }

    /// A claim from the oldest end (a steal), which holds the queue's lock.
    fn claim(queue: u32, start: u32, count: u32, owner: u32) -> Claim {
        Claim {
            queue,
            span: Span { start, count },
            owner,
            locked: true,
        }
    }

    /// An owner's claim of its newest ids, which takes no lock.
    fn newest(queue: u32, start: u32, count: u32, owner: u32) -> Claim {
        Claim {
            locked: false,
            ..claim(queue, start, count, owner)
        }
    }

    /// Takes the warp's overflow list, a batch at a time.
    fn overflow_ids(region: &Region, shared: &WarpShared) -> Vec<u32> {
        let mut out = Vec::new();
        loop {
            let n = take_overflow(region, shared, KEEP);
            if n == 0 {
                return out;
            }
            out.extend((0..n).map(|i| shared.keep[0][i as usize].load()));
        }
    }

    #[test]
    fn staging_past_capacity_goes_to_the_overflow_list() {
        for at in STARTS {
            // Four queues of 16: 63 ids on one are 32 kept, 16 in the ring and 15 more.
            let launch = Launch::leak(geometry(1, 64, 4));
            let region = launch.region();
            let warp = Warp::new(region, 0, None);
            preset_positions(region, warp.shared(), 0, at);
            stage_on(&warp, 0, 0..63);
            let batch = fold::<KEEP, 0, false>(&warp, false);
            assert_eq!(
                batch.ids.to_vec(),
                (0..32).collect::<Vec<_>>(),
                "start {at}"
            );
            assert_eq!(region.queue_meta(0, 0).count.load(Ordering::Relaxed), 16);
            assert_eq!(warp.shared().tails[0].load(), at.wrapping_add(16));
            assert_eq!(ring_ids(region, 0, 0, at, 16), (32..48).collect::<Vec<_>>());
            // Newest first: the list is a stack.
            let listed = overflow_ids(region, warp.shared());
            assert_eq!(listed, (48..63).rev().collect::<Vec<_>>(), "start {at}");
            assert_eq!(warp.shared().overflow.load(), NONE);
            assert_eq!(launch.error(), None);
        }
    }

    #[test]
    fn the_overflow_list_hands_out_a_batch_at_a_time() {
        let launch = Launch::leak(geometry(1, 128, 2));
        let region = launch.region();
        let warp = Warp::new(region, 0, None);
        // 32 kept, 64 in the ring, 30 listed.
        stage_on(&warp, 1, 0..126);
        let _ = fold::<KEEP, 0, false>(&warp, false);
        assert_eq!(take_overflow(region, warp.shared(), KEEP), 30);
        assert_eq!(take_overflow(region, warp.shared(), KEEP), 0);
        stage_on(&warp, 0, 0..96);
        stage_on(&warp, 0, 96..128);
        let _ = fold::<KEEP, 0, false>(&warp, false);
        assert_eq!(
            take_overflow(region, warp.shared(), KEEP),
            32,
            "at most a warp's worth"
        );
    }

    #[test]
    fn a_thief_frees_ring_space_for_the_owner() {
        let launch = Launch::leak(geometry(2, 64, 2));
        let region = launch.region();
        let owner = Warp::new(region, 0, None);
        stage_on(&owner, 0, 0..64);
        let _ = fold::<KEEP, 0, false>(&owner, false);
        let mut rng = XorShift64::new(5);
        let stolen =
            try_steal::<0>(region, 1, &mut rng, WARP_SIZE, false, 1).expect("32 ids are published");
        assert_eq!(stolen, claim(0, 0, 32, 0));
        assert_eq!(ring_ids(region, 0, 0, 0, 32), (32..64).collect::<Vec<_>>());
        end_steal(region, 0, 0, 0, 32);
        // The owner last saw the ring full: what does not fit its view goes to the list ...
        stage_on(&owner, 0, 64..128);
        let _ = fold::<KEEP, 0, false>(&owner, false);
        assert_eq!(region.queue_meta(0, 0).count.load(Ordering::Relaxed), 0);
        assert_eq!(
            overflow_ids(region, owner.shared()),
            (96..128).rev().collect::<Vec<_>>()
        );
        // ... and that fold looked at `head` again: the ring is empty, 32 fit behind a batch.
        stage_on(&owner, 0, 0..64);
        let _ = fold::<KEEP, 0, false>(&owner, false);
        assert_eq!(region.queue_meta(0, 0).count.load(Ordering::Relaxed), 32);
        assert_eq!(ring_ids(region, 0, 0, 32, 32), (32..64).collect::<Vec<_>>());
        assert_eq!(owner.shared().overflow.load(), NONE);
        assert_eq!(launch.error(), None);
    }

    #[test]
    fn owner_pops_newest_and_thief_steals_oldest() {
        for at in STARTS {
            let launch = Launch::leak(geometry(2, 128, 1));
            let region = launch.region();
            let owner = Warp::new(region, 0, None);
            preset_positions(region, owner.shared(), 0, at);
            stage_on(&owner, 0, 0..100);
            let _ = fold::<KEEP, 0, false>(&owner, false);
            let mut rng = XorShift64::new(9);
            // 68 published at positions at..at + 68 (ids 32..100).
            let own = pop_own::<0>(region, owner.shared(), 0, &mut rng, WARP_SIZE);
            assert_eq!(own, Some(newest(0, at.wrapping_add(36), 32, 0)));
            assert_eq!(
                ring_ids(region, 0, 0, at.wrapping_add(36), 32),
                (68..100).collect::<Vec<_>>()
            );
            let stolen = try_steal::<0>(region, 1, &mut rng, WARP_SIZE, false, 1);
            assert_eq!(stolen, Some(claim(0, at, 32, 0)));
            assert_eq!(ring_ids(region, 0, 0, at, 32), (32..64).collect::<Vec<_>>());
            // While the thief holds the lock, other thieves pass this queue by.
            assert_eq!(
                try_steal::<0>(region, 1, &mut rng, WARP_SIZE, false, 1),
                None
            );
            end_steal(region, 0, 0, at, 32);
            assert_eq!(region.queue_meta(0, 0).lock.load(Ordering::Relaxed), 0);
            // The four in the middle: a top-up claims at most what it asks for.
            assert_eq!(
                pop_own_at(region, owner.shared(), 0, 0, 3),
                Span {
                    start: at.wrapping_add(33),
                    count: 3
                }
            );
            let own = pop_own::<0>(region, owner.shared(), 0, &mut rng, WARP_SIZE);
            assert_eq!(own, Some(newest(0, at.wrapping_add(32), 1, 0)));
            assert_eq!(read(region, 0, 0, at.wrapping_add(32)), 64);
            assert_eq!(
                pop_own::<0>(region, owner.shared(), 0, &mut rng, WARP_SIZE),
                None
            );
            assert_eq!(
                try_steal::<0>(region, 1, &mut rng, WARP_SIZE, false, 1),
                None
            );
            assert_eq!(pop_own_at(region, owner.shared(), 0, 0, 32), Span::EMPTY);
            assert_eq!(region.queue_meta(0, 0).count.load(Ordering::Relaxed), 0);
        }
    }

    #[test]
    fn a_block_claims_half_its_oldest_ids_under_the_lock() {
        for at in STARTS {
            let launch = Launch::leak(geometry(2, 128, 1));
            let region = launch.region();
            let owner = Warp::new(region, 0, None);
            preset_positions(region, owner.shared(), 0, at);
            // Fewer than `KEEP`, so the ring holds them in staging order.
            stage_on(&owner, 0, 0..30);
            // A block that still holds claimed ids keeps no child: all 30 are published.
            let batch = fold::<0, 0, true>(&owner, false);
            assert_eq!(batch.len, 0);
            let mut rng = XorShift64::new(9);
            let own = pop_own_oldest::<0>(region, owner.shared(), 0, &mut rng, BLOCK_CLAIM);
            assert_eq!(own, Some(claim(0, at, 15, 0)), "half, from the oldest end");
            assert_eq!(ring_ids(region, 0, 0, at, 15), (0..15).collect::<Vec<_>>());
            assert_eq!(owner.shared().counts[0].load(), 15, "the view follows");
            // The lock is held until the ids are copied out: thieves pass the queue by.
            assert_eq!(
                try_steal::<0>(region, 1, &mut rng, BLOCK_CLAIM, true, 1),
                None
            );
            end_steal(region, 0, 0, at, 15);
            let stolen = try_steal::<0>(region, 1, &mut rng, BLOCK_CLAIM, true, 1);
            assert_eq!(
                stolen,
                Some(claim(0, at.wrapping_add(15), 8, 0)),
                "thieves take half"
            );
            end_steal(region, 0, 0, at.wrapping_add(15), 8);
            // The view is stale (the thief took 8); the claim reads the true count.
            let own = pop_own_oldest::<0>(region, owner.shared(), 0, &mut rng, 4);
            assert_eq!(
                own,
                Some(claim(0, at.wrapping_add(23), 4, 0)),
                "at most `max`"
            );
            assert_eq!(
                ring_ids(region, 0, 0, at.wrapping_add(23), 4),
                (23..27).collect::<Vec<_>>()
            );
            end_steal(region, 0, 0, at.wrapping_add(23), 4);
            assert_eq!(owner.shared().counts[0].load(), 3);
            assert_eq!(region.queue_meta(0, 0).lock.load(Ordering::Relaxed), 0);
        }
    }

    #[test]
    fn a_block_holding_half_its_slots_leaves_its_oldest_ids() {
        let launch = Launch::leak(geometry(1, 64, 1));
        let region = launch.region();
        let owner = Warp::new(region, 0, None);
        let half = region.slots_per_warp / 2;
        stage_on(&owner, 0, 0..half + 1);
        let _ = fold::<0, 0, true>(&owner, false);
        let mut rng = XorShift64::new(3);
        assert_eq!(
            pop_own_oldest::<0>(region, owner.shared(), 0, &mut rng, BLOCK_CLAIM),
            None,
            "past half its slots a block drains newest first"
        );
        assert_eq!(region.queue_meta(0, 0).lock.load(Ordering::Relaxed), 0);
        let own = pop_own::<0>(region, owner.shared(), 0, &mut rng, 1);
        assert_eq!(own, Some(newest(0, half, 1, 0)));
    }

    #[test]
    fn a_claim_broadcasts_its_lock() {
        for c in [claim(2, 7, 3, 5), newest(2, 7, 3, 5), Claim::NOTHING] {
            assert_eq!(Claim::from_words(c.to_words()), c);
        }
    }

    #[test]
    fn a_warp_never_steals_from_itself() {
        let launch = Launch::leak(geometry(1, 64, 1));
        let warp = Warp::new(launch.region(), 0, None);
        stage_on(&warp, 0, 0..40);
        let _ = fold::<KEEP, 0, false>(&warp, false);
        assert_eq!(
            try_steal::<0>(
                launch.region(),
                0,
                &mut XorShift64::new(3),
                WARP_SIZE,
                false,
                1
            ),
            None
        );
        assert_eq!(
            launch
                .region()
                .queue_meta(0, 0)
                .count
                .load(Ordering::Relaxed),
            8
        );
    }

    #[test]
    fn pick_takes_the_fullest_queue() {
        let launch = Launch::leak(geometry(1, 66, 3));
        let region = launch.region();
        for (q, c) in [(0, 2), (1, 7), (2, 5)] {
            region.queue_meta(0, q).count.store(c, Ordering::Relaxed);
        }
        assert_eq!(
            pick_victim_queue::<0>(region, 0, &mut XorShift64::new(1)),
            (1, 7)
        );
    }

    /// The owner pops while two thieves steal, all on their own threads: every published id is
    /// claimed exactly once.
    #[test]
    fn concurrent_pops_and_steals_claim_each_id_once() {
        const IDS: u32 = 4000;
        const KEPT: u32 = KEEP;
        let launch = Launch::leak(geometry(3, 4096, 1));
        let claimed: &'static StdAtomicU32 = std::boxed::Box::leak(std::boxed::Box::default());
        let published = IDS - KEPT;
        let ids = within(20, move || {
            let (tx, rx) = std::sync::mpsc::channel();
            let owner_tx = tx.clone();
            let owner = thread::spawn(move || {
                let region = launch.region();
                let warp = Warp::new(region, 0, None);
                let at = u32::MAX - 1000;
                preset_positions(region, warp.shared(), 0, at);
                stage_on(&warp, 0, 0..IDS);
                let _ = fold::<KEEP, 0, false>(&warp, false);
                let mut rng = XorShift64::new(11);
                while claimed.load(Ordering::Relaxed) < published {
                    if let Some(own) = pop_own::<0>(region, warp.shared(), 0, &mut rng, WARP_SIZE) {
                        let Span { start, count: n } = own.span;
                        let got = ring_ids(region, 0, own.queue, start, n);
                        claimed.fetch_add(n, Ordering::Relaxed);
                        owner_tx.send(got).expect("receiver alive");
                        thread::yield_now();
                    }
                }
            });
            let thieves: Vec<_> = (1..3)
                .map(|me| {
                    let tx = tx.clone();
                    thread::spawn(move || {
                        let region = launch.region();
                        let mut rng = XorShift64::new(17 + me as u64);
                        while claimed.load(Ordering::Relaxed) < published {
                            if let Some(stolen) =
                                try_steal::<0>(region, me, &mut rng, WARP_SIZE, false, 1)
                            {
                                let Claim {
                                    queue: q,
                                    span: Span { start, count: n },
                                    owner: v,
                                    ..
                                } = stolen;
                                let got = ring_ids(region, v, q, start, n);
                                end_steal(region, v, q, start, n);
                                claimed.fetch_add(n, Ordering::Relaxed);
                                tx.send(got).expect("receiver alive");
                            }
                        }
                    })
                })
                .collect();
            drop(tx);
            owner.join().expect("owner");
            for t in thieves {
                t.join().expect("thief");
            }
            rx.iter().flatten().collect::<Vec<u32>>()
        });
        let mut ids = ids;
        ids.sort_unstable();
        assert_eq!(ids, (KEPT..IDS).collect::<Vec<_>>());
        assert_eq!(
            launch
                .region()
                .queue_meta(0, 0)
                .count
                .load(Ordering::Relaxed),
            0
        );
    }
}
