//! Task-ID pools: each warp owns `slots_per_warp` task slots.
//!
//! A warp allocates ids from its own pool, and only once those are all out borrows never-used
//! ids of other warps (*Borrowing* below); a finished task's id goes back to the pool of the
//! warp that owns it, whichever warp ran the task. Because an id always returns to its owner,
//! "slots per warp" is an exact limit on the ids of a warp in use at once, on the GPU and in
//! the CPU executor alike.
//!
//! # Protocol
//!
//! Most tasks finish on the warp that spawned them, so the common path stays inside the warp:
//!
//! * **Stashes** (warp-local, shared memory on the GPU). During a step lanes only *pop* ids
//!   from `ready` and only *push* the warp's own finished ids onto `freed`, with one
//!   shared-memory atomic per lane; no device memory is touched. At the end of the step
//!   (after the warp barrier) `restock` moves `freed` into `ready` and, when `ready` is below
//!   half full, tops it up from the ring below, then from fresh ids (a
//!   block's scheduling warp, which takes back at most a few ids a step, has its leader move
//!   them alone when nothing else is needed: `restock_few`). A lane that finds `ready` empty
//!   (or `freed` full) mid-step falls back to the ring directly. The counters may overshoot
//!   under concurrent lanes; the restock clamps them.
//! * **Ring** (device memory): ids freed on *other* warps. Task ids are
//!   `warp << id_shift | index` with `2^id_shift >= slots_per_warp`, so the owner is a shift
//!   away. The ring has `n = 2^id_shift` cells (Vyukov's sequence-number scheme); a cell is one
//!   64-bit word, sequence number and id together, so relaxed accesses suffice: the id travels
//!   with the number that says it is there. Producer `p` (any warp, reserving `p` with one
//!   relaxed add on `frees`) waits until cell `p % n` reads `2 * (p / n)`, then writes
//!   `(2 * (p / n) + 1, id)`. The owner consumes ring position `t` (the warp-local `taken`):
//!   it waits for `2 * (t / n) + 1`, takes the id, and hands the cell to the next round's
//!   producer with `2 * (t / n) + 2`. At most `slots_per_warp <= n` ids exist, so a producer
//!   never laps an unconsumed cell.
//! * **Fresh ids** `w << id_shift | c` for `c` below `slots_per_warp`, the count `c` claimed
//!   with one relaxed add on the warp's `fresh` counter in device memory (the warp-local
//!   `fresh` caches the last value read, a lower bound). They are used only when the ring is
//!   empty, so a zeroed pool needs no setup and the slots in circulation stay few and hot in
//!   cache; the owner claims them a stash at a time, so the add is rare.
//! * **Borrowing.** A warp whose own ids are all out (stash, ring and fresh ids empty) claims a
//!   fresh id of another warp from that warp's `fresh` counter, the same add. The id stays the
//!   lender's: it is freed into the lender's ring like any id of that warp. Since every fresh
//!   id is claimed once, at most `slots_per_warp` ids of a warp exist, whoever holds them, so
//!   the whole grid's slots serve one deep computation (a chain far deeper than one warp's
//!   share) and a ring still never laps. (Per-warp live counts then straddle warps: `live` is
//!   exact for the grid, not per warp.)
//! * **Wrap-around.** Positions (`frees`, `taken`) are free-running `u32`s and wrap after 2^32;
//!   they are compared by distance (`after`), never by value, and sequence numbers are
//!   computed from the wrapped position, so round `2^(32 - id_shift)` is round 0 again.
//! * **Exhaustion.** An allocation takes only ring positions a producer has already reserved
//!   (`frees` after `taken`), then fresh ids, then borrowed ones; with none of those the pool is
//!   exhausted *for now* and `alloc` says so at once, without claiming a position it might
//!   never consume. The spawn then runs the child inline instead ([`crate::task`]). (Ids freed
//!   on this warp in the current step wait in `freed` until the step ends, so right at the
//!   limit they do not count.)
//! * **Aborts.** A producer waits for a consumer, a consumer for a producer. After a device
//!   error the other side may never come (a warp stopped, or gave up a position it had
//!   reserved), so every such wait reads the abort flag every `SPINS_PER_ABORT_CHECK`
//!   backoffs and gives up: the id is lost, which no longer matters. A restock whose take gave
//!   up empties the stash, which then has holes.
//! * **Ordering of the slot itself.** The task that frees a slot into another warp's ring has
//!   fenced after its last access to it (see [`crate::join`]), and the producer's store of
//!   the cell follows that fence, or is itself a release (in a launch whose tasks detach,
//!   whose steps fence only to publish): a release pattern. The consumer loads the cell with
//!   acquire (`ld.acquire.gpu`, an `Acquire` load on the CPU), because nothing fences between
//!   a take and the first write of the new record: an allocation writes it at once, and a
//!   restock runs after the step's fences, before the next step's polls. So the old task's
//!   accesses happen before the new task's, on the GPU and under Rust's model on the CPU. A
//!   warp-local recycle (the `freed` stash) stays within the warp, ordered by the warp barrier
//!   before the restock.
//! * **No generation counters.** GTaP stamps ids with a generation so that a child finishing
//!   after its parent's slot was recycled does not notify the slot's new task. Here a task
//!   finishes only after all its children have (the implicit wait of [`crate::join`]), so no
//!   notification can arrive late and ids need none.
//! * **Racecheck.** Lanes reach the slow path (`alloc_slow`, `borrow`) independently, and while
//!   one lane stores a hint (`frees_seen`, `fresh`, `lender`) another may load it. The protocol
//!   never relies on the order: a hint only ever holds a value its counter had, and a stale one
//!   costs a reload; a ring position is claimed only by the compare-and-swap on `taken`. But
//!   `LocalU32`'s loads and stores are plain accesses (racecheck reported these pairs even
//!   when they were relaxed `.cta` ones, as errors where lanes store different values), so the
//!   slow path reads and writes these counters with atomic read-modify-writes
//!   (`LocalU32::load_rmw`, `store_rmw`), which neither races nor trips racecheck; the common
//!   path (`take_ready`) was atomic already.

use core::sync::atomic::Ordering;

use crate::arch::{self, AtomicU32, AtomicU64, Broadcast, LocalU32, Warp};
use crate::lane::LaneView;
use crate::region::Region;

/// Ids a warp keeps at hand (and own ids it can take back) per step.
pub const STASH: u32 = 64;

/// Per-warp pool metadata in device memory, alone in its 128-byte line: every warp that
/// finishes one of this warp's tasks updates it, and sharing a line with another warp's
/// counter would make both contend.
#[repr(C, align(128))]
pub struct PoolMeta {
    /// Ring positions reserved by producers (ids freed so far on other warps).
    pub(crate) frees: AtomicU32,
    /// Fresh ids claimed, by the owner or borrowers (may overshoot `slots_per_warp`: a claim at
    /// or past it gets nothing).
    pub(crate) fresh: AtomicU32,
}

/// One cell of a warp's free-id ring.
#[repr(C)]
pub struct PoolCell(AtomicU64);

/// A cell's word: the sequence number (high half) and the id (low half), written together so
/// that a relaxed load sees both or neither.
#[inline(always)]
const fn cell(seq: u32, id: u32) -> u64 {
    ((seq as u64) << 32) | id as u64
}

/// A warp's pool state kept in shared memory.
#[repr(C)]
pub struct PoolLocal {
    /// Ids ready to hand out; lanes pop them during a step.
    ready: [LocalU32; STASH as usize],
    /// Ids in `ready` (as `i32`: lanes that overshoot drive it below zero).
    ready_len: LocalU32,
    /// The warp's own ids freed during the current step.
    freed: [LocalU32; STASH as usize],
    /// Pushes onto `freed` this step (may exceed `STASH`: the overflowing lanes free to the ring).
    freed_len: LocalU32,
    /// The owner's last view of its `PoolMeta::fresh`, at most `slots_per_warp` (a lower bound).
    fresh: LocalU32,
    /// The warp the last borrowed id came from (0: none yet; the search starts after it).
    lender: LocalU32,
    /// Ring positions consumed.
    taken: LocalU32,
    /// Last `frees` value read (a lower bound).
    frees_seen: LocalU32,
    /// Ids handed out to tasks.
    handed: LocalU32,
    /// Ids freed on this warp and taken back without the ring.
    kept: LocalU32,
    /// Children run inline because no id was free (wraps after 2^32).
    inlined: LocalU32,
    /// Children the parallel CPU executor polled at once (lazy task creation; wraps after 2^32).
    at_once: LocalU32,
}

impl PoolLocal {
    /// An empty pool state (kernel start).
    pub const fn new() -> Self {
        Self {
            ready: [const { LocalU32::new(0) }; STASH as usize],
            ready_len: LocalU32::new(0),
            freed: [const { LocalU32::new(0) }; STASH as usize],
            freed_len: LocalU32::new(0),
            fresh: LocalU32::new(0),
            lender: LocalU32::new(0),
            taken: LocalU32::new(0),
            frees_seen: LocalU32::new(0),
            handed: LocalU32::new(0),
            kept: LocalU32::new(0),
            inlined: LocalU32::new(0),
            at_once: LocalU32::new(0),
        }
    }
}

impl PoolLocal {
    /// Counts a child run inline (any lane, diverged or not).
    #[inline]
    pub(crate) fn count_inline(&self) {
        self.inlined.fetch_add(1);
    }

    /// Counts a child the parallel CPU executor polls at once instead of staging it.
    #[cfg(not(target_arch = "nvptx64"))]
    #[inline]
    pub(crate) fn count_at_once(&self) {
        self.at_once.fetch_add(1);
    }
}

impl Default for PoolLocal {
    fn default() -> Self {
        Self::new()
    }
}

/// Other warps an exhausted warp asks for a fresh id per allocation: a bounded search, so that
/// an allocation on a grid whose every fresh id is out costs a few reads, not one per warp.
const LENDERS_PER_ALLOC: u32 = 4;

/// Backoffs of a wait between two reads of the launch's abort flag: often enough that an error
/// elsewhere ends the wait within microseconds, rarely enough that the device-memory read costs
/// nothing.
const SPINS_PER_ABORT_CHECK: u32 = 64;

/// Whether free-running position `a` lies after position `b`. Ring positions wrap after 2^32,
/// so they are compared by their distance, never by value.
#[inline(always)]
pub(crate) fn after(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

/// A wait for another warp's step of the ring protocol. That warp may never take it once the
/// launch aborts (it stopped, or gave up a position itself), so a wait checks the abort flag
/// now and then and gives up: a device error must end the launch, never hang it.
struct Spin {
    spins: u32,
}

impl Spin {
    const fn new() -> Self {
        Self { spins: 0 }
    }

    /// Backs off once. `false`: the launch has aborted, stop waiting.
    #[inline]
    fn again(&mut self, region: &Region) -> bool {
        self.spins = self.spins.wrapping_add(1);
        if self.spins.is_multiple_of(SPINS_PER_ABORT_CHECK) && region.control().aborted() {
            return false;
        }
        arch::backoff(32);
        true
    }
}

/// Sequence number of the cell of ring position `p` while it is empty for `p`'s round; `+ 1`
/// says it holds an id. Wrapping: after 2^32 positions the rounds start again at 0, and so
/// does this number.
#[inline(always)]
fn empty_seq(region: &Region, p: u32) -> u32 {
    (p >> region.id_shift).wrapping_mul(2)
}

/// Allocates a task id from the calling lane's warp: [`take_ready`], else [`alloc_slow`].
#[cfg(test)]
pub(crate) fn alloc(lane: &LaneView) -> Option<u32> {
    take_ready(lane).or_else(|| alloc_slow(lane))
}

/// Takes an id from the warp's stash, the common case. `None`: the stash is empty (then
/// [`alloc_slow`]).
#[inline]
pub(crate) fn take_ready(lane: &LaneView) -> Option<u32> {
    let local = &lane.shared().pool;
    let have = local.ready_len.fetch_add(u32::MAX) as i32;
    if have <= 0 {
        return None;
    }
    local.handed.fetch_add(1);
    Some(local.ready[have as usize - 1].load())
}

/// Allocates a task id without the stash. `None` means no id is free now (the pool and the
/// fresh ids of the warps it asked are all out), or the launch aborted while the allocation
/// waited for a producer.
#[inline]
pub(crate) fn alloc_slow(lane: &LaneView) -> Option<u32> {
    let local = &lane.shared().pool;
    let id = take_unstashed(lane.region(), local, lane.warp);
    if id.is_some() {
        local.handed.fetch_add(1);
    }
    id
}

/// A reserved ring position, else a fresh id, else a borrowed one.
#[inline]
fn take_unstashed(region: &Region, local: &PoolLocal, warp: u32) -> Option<u32> {
    loop {
        let t = local.taken.load_rmw();
        let mut seen = local.frees_seen.load_rmw();
        if !after(seen, t) {
            seen = region.pool_meta(warp).frees.load(Ordering::Relaxed);
            // Lanes may store these out of order; a stale value only costs another reload.
            local.frees_seen.store_rmw(seen);
            if !after(seen, t) {
                break;
            }
        }
        if local.taken.compare_exchange(t, t.wrapping_add(1)) {
            return take(region, warp, t);
        }
    }
    if local.fresh.load_rmw() < region.slots_per_warp
        && let Some(id) = claim_fresh(region, warp, local)
    {
        return Some(id);
    }
    borrow(region, local, warp)
}

/// Claims one fresh id of warp `w`, or `None` when all of them are out. `local`: the owner's
/// pool state, to update its view of the counter.
#[inline]
fn claim_fresh(region: &Region, w: u32, local: &PoolLocal) -> Option<u32> {
    let c = region.pool_meta(w).fresh.fetch_add(1, Ordering::Relaxed);
    // Lanes may store these out of order; the view stays a lower bound.
    local
        .fresh
        .store_rmw(c.saturating_add(1).min(region.slots_per_warp));
    (c < region.slots_per_warp).then(|| region.task_id(w, c))
}

/// Claims a fresh id of another warp, starting with the one that lent the last (see
/// *Borrowing* in the module docs).
#[inline(never)]
fn borrow(region: &Region, local: &PoolLocal, me: u32) -> Option<u32> {
    let others = region.warps - 1;
    // `lender` counts the other warps after this one: 0 is warp `me + 1`.
    let first = local.lender.load_rmw();
    for k in 0..LENDERS_PER_ALLOC.min(others) {
        let j = (first + k) % others;
        let w = (me + 1 + j) % region.warps;
        let fresh = &region.pool_meta(w).fresh;
        // Read before the add: a lender whose ids are all out is passed by without a write.
        if fresh.load(Ordering::Relaxed) < region.slots_per_warp {
            let c = fresh.fetch_add(1, Ordering::Relaxed);
            if c < region.slots_per_warp {
                local.lender.store_rmw(j);
                return Some(region.task_id(w, c));
            }
        }
        local.lender.store_rmw((j + 1) % others);
    }
    None
}

/// Consumes ring position `t`, which a producer has reserved. `None`: the launch aborted
/// before the producer filled it.
#[inline]
fn take(region: &Region, warp: u32, t: u32) -> Option<u32> {
    let slot = &region.pool_cell(warp, t).0;
    let ready = empty_seq(region, t).wrapping_add(1);
    let mut spin = Spin::new();
    loop {
        // Acquire: pairs with the producer's release (a fence before its store, or a release
        // store), so that the freed task's last accesses to the slot happen before the new
        // task's record is written into it. No fence follows a take before that write (neither
        // in a poll's allocation nor between the restock and the next step's polls), so the
        // load itself must acquire.
        let word = slot.load(Ordering::Acquire);
        if (word >> 32) as u32 == ready {
            // Same word: the next round's producer cannot overwrite it before this read.
            let next_round = empty_seq(region, t.wrapping_add(1 << region.id_shift));
            slot.store(cell(next_round, 0), Ordering::Relaxed);
            return Some(word as u32);
        }
        // The producer reserved the position and is about to fill it.
        if !spin.again(region) {
            return None;
        }
    }
}

/// Returns task `id` to its owner's pool: onto the warp's own stash when this lane's warp owns
/// it, else into the owner's ring. The caller must have ordered its last accesses to the
/// task's slot before this call: with a fence (then `order` may be relaxed) or by passing
/// `Release`, since the owner may hand the slot out again at once.
#[inline]
pub(crate) fn free(lane: &LaneView, id: u32, order: Ordering) {
    let region = lane.region();
    if region.owner(id) == lane.warp {
        let local = &lane.shared().pool;
        let at = local.freed_len.fetch_add(1);
        if at < STASH {
            local.freed[at as usize].store(id);
            return;
        }
    }
    free_to_ring(region, id, order);
}

/// Puts `id` into its owner's ring. Gives up (the id is lost) if the launch aborts while it
/// waits for the cell.
#[inline]
fn free_to_ring(region: &Region, id: u32, order: Ordering) {
    let owner = region.owner(id);
    let p = region
        .pool_meta(owner)
        .frees
        .fetch_add(1, Ordering::Relaxed);
    let slot = &region.pool_cell(owner, p).0;
    let empty = empty_seq(region, p);
    let mut spin = Spin::new();
    while (slot.load(Ordering::Relaxed) >> 32) as u32 != empty {
        // The consumer of this cell's previous round took its position but has not read it yet.
        if !spin.again(region) {
            return;
        }
    }
    slot.store(cell(empty.wrapping_add(1), id), order);
}

/// How the lanes refill the stash `ready` at the end of a step, planned once by the warp's
/// leader: `moved` of the warp's own freed ids go into `ready` after its first `start`
/// entries, `spilled` more go back through the ring, then `from_ring` ids are taken from ring
/// position `ring_at` and `from_fresh` never-used ids from index `fresh_at`.
#[derive(Clone, Copy)]
struct RestockPlan {
    start: u32,
    moved: u32,
    spilled: u32,
    from_ring: u32,
    ring_at: u32,
    from_fresh: u32,
    fresh_at: u32,
}

impl Broadcast for RestockPlan {
    type Words = [u32; 7];
    #[inline(always)]
    fn to_words(self) -> [u32; 7] {
        [
            self.start,
            self.moved,
            self.spilled,
            self.from_ring,
            self.ring_at,
            self.from_fresh,
            self.fresh_at,
        ]
    }
    #[inline(always)]
    fn from_words(
        [
            start,
            moved,
            spilled,
            from_ring,
            ring_at,
            from_fresh,
            fresh_at,
        ]: [u32; 7],
    ) -> Self {
        RestockPlan {
            start,
            moved,
            spilled,
            from_ring,
            ring_at,
            from_fresh,
            fresh_at,
        }
    }
}

/// Own ids a block's scheduling warp moves back into `ready` with its leader alone.
const LEADER_MOVES: u32 = 4;

/// Block mode's restock, before [`restock`] (collective): when at most [`LEADER_MOVES`] of
/// the warp's own ids came back this step and `ready` stays at least half full, so that
/// nothing comes from the ring or the fresh ids, the leader moves them alone, with no plan
/// to broadcast and no lane loop. Returns whether it did; if not, [`restock`] must run. A
/// block step frees at most one task and spawns few: this is its common case. (Thread mode
/// frees up to a task per lane each step, and keeps the lanes' parallel copy.)
pub(crate) fn restock_few(warp: &Warp) -> bool {
    let local = &warp.shared().pool;
    let done = warp.leader(|| {
        let start = (local.ready_len.load() as i32).max(0) as u32;
        let freed = local.freed_len.load();
        if freed > LEADER_MOVES || start + freed < STASH / 2 || start + freed > STASH {
            return 0;
        }
        for j in 0..freed {
            local.ready[(start + j) as usize].store(local.freed[j as usize].load());
        }
        local.ready_len.store(start + freed);
        local.freed_len.store(0);
        local.kept.fetch_add(freed);
        1
    });
    if done != 0 {
        // As at the end of `restock`: the lanes see `ready` before they allocate again.
        warp.sync();
    }
    done != 0
}

/// End of step, after the warp barrier (collective): takes the warp's own freed ids back into
/// `ready` and fills it up from the ring, then from fresh ids. Lanes copy in parallel.
pub(crate) fn restock(warp: &Warp) {
    let region = warp.region();
    let local = &warp.shared().pool;
    let me = warp.id();
    let plan = warp.leader(|| {
        let start = (local.ready_len.load() as i32).max(0) as u32;
        let freed = local.freed_len.load().min(STASH);
        let moved = freed.min(STASH - start);
        let mut room = STASH - start - moved;
        let ring_at = local.taken.load();
        let mut from_ring = 0;
        // The ring is read (device memory) only when the stash runs low: most steps recycle the
        // warp's own ids and need no round trip.
        if start + moved < STASH / 2 {
            let frees = region.pool_meta(me).frees.load(Ordering::Relaxed);
            local.frees_seen.store(frees);
            // Only positions producers have reserved. (An allocation that gave up waiting may
            // have left `taken` ahead of `frees`; the launch is aborting then.)
            let available = frees.wrapping_sub(ring_at) as i32;
            from_ring = (available.max(0) as u32).min(room);
            room -= from_ring;
        }
        let (mut fresh_at, mut from_fresh) = (0, 0);
        let view = local.fresh.load();
        if start + moved < STASH / 2 && view < region.slots_per_warp && room > 0 {
            // A stash's worth of fresh ids with one add (borrowers may have claimed some).
            let want = (region.slots_per_warp - view).min(room);
            let c = region
                .pool_meta(me)
                .fresh
                .fetch_add(want, Ordering::Relaxed);
            local
                .fresh
                .store(c.saturating_add(want).min(region.slots_per_warp));
            fresh_at = c.min(region.slots_per_warp);
            from_fresh = (region.slots_per_warp - fresh_at).min(want);
        }
        local.taken.store(ring_at.wrapping_add(from_ring));
        local
            .ready_len
            .store(start + moved + from_ring + from_fresh);
        local.freed_len.store(0);
        local.kept.fetch_add(moved);
        RestockPlan {
            start,
            moved,
            spilled: freed - moved,
            from_ring,
            ring_at,
            from_fresh,
            fresh_at,
        }
    });
    let RestockPlan {
        start,
        moved,
        spilled,
        from_ring,
        ring_at,
        from_fresh,
        fresh_at,
    } = plan;
    let gave_up = warp.lanes(|lane| {
        let mut gave_up = false;
        let mut j = lane;
        while j < moved + spilled + from_ring + from_fresh {
            if j < moved {
                local.ready[(start + j) as usize].store(local.freed[j as usize].load());
            } else if j < moved + spilled {
                // More of the warp's own ids came back than `ready` holds: through the ring.
                // Relaxed: the slots' tasks ran on this warp, the ring's only consumer.
                free_to_ring(region, local.freed[j as usize].load(), Ordering::Relaxed);
            } else if j < moved + spilled + from_ring {
                let k = j - moved - spilled;
                match take(region, me, ring_at.wrapping_add(k)) {
                    Some(id) => local.ready[(start + moved + k) as usize].store(id),
                    None => gave_up = true,
                }
            } else {
                let k = j - moved - spilled - from_ring;
                local.ready[(start + moved + from_ring + k) as usize]
                    .store(region.task_id(me, fresh_at + k));
            }
            j += arch::WARP_SIZE;
        }
        gave_up
    });
    // A take gave up (the launch aborted): `ready` has holes, so hand out nothing from it in the
    // steps the warp runs before it sees the stop word. `from_ring` is the same on every lane,
    // so the common path pays no vote.
    if from_ring > 0 && warp.any(gave_up) {
        warp.leader_only(|| local.ready_len.store(0));
    }
    warp.sync();
}

/// Whether the warp has used less than half of its task slots so far (from warp-local
/// counters only: fresh ids handed out bound the slots in circulation).
#[inline]
pub(crate) fn roomy(region: &Region, local: &PoolLocal) -> bool {
    local.fresh.load() < region.slots_per_warp / 2
}

/// Children the warp's lanes ran inline.
#[inline]
pub(crate) fn inlined(local: &PoolLocal) -> u32 {
    local.inlined.load()
}

/// Children this warp polled at once (parallel CPU executor; see [`PoolLocal::count_at_once`]).
#[inline]
pub(crate) fn at_once(local: &PoolLocal) -> u32 {
    local.at_once.load()
}

/// Counts an id the parallel CPU executor hands to a task again without a trip through the
/// pool (`at_once.rs`): every task counts as handed out.
#[cfg(not(target_arch = "nvptx64"))]
#[inline]
pub(crate) fn count_reuse(lane: &LaneView) {
    lane.shared().pool.handed.fetch_add(1);
}

/// Ids the warp has handed out to tasks.
#[inline]
pub(crate) fn handed(local: &PoolLocal) -> u32 {
    local.handed.load()
}

/// Tasks of warp `w` allocated and not yet freed (exact when the warp is quiescent, between
/// steps, and no ids were borrowed: a borrowed id counts as allocated by the borrower and
/// freed to its lender). A lender can get back more ids than it handed out: the difference is
/// then below zero, and the warp holds none of its own (0, not a count wrapped past 2^32).
#[inline]
pub(crate) fn live(region: &Region, local: &PoolLocal, warp: u32) -> u32 {
    let back = local
        .kept
        .load()
        .wrapping_add(region.pool_meta(warp).frees.load(Ordering::Relaxed));
    // The counters are free-running and wrap: their distance, read as signed.
    (local.handed.load().wrapping_sub(back) as i32).max(0) as u32
}

/// Test only: starts `warp`'s free-id ring at position `at` instead of 0, with every cell
/// empty for the round of the position that will use it next.
#[cfg(test)]
pub(crate) fn preset_ring(region: &Region, local: &PoolLocal, warp: u32, at: u32) {
    local.taken.store(at);
    local.frees_seen.store(at);
    region.pool_meta(warp).frees.store(at, Ordering::Relaxed);
    for k in 0..1u32 << region.id_shift {
        let p = at.wrapping_add(k);
        region
            .pool_cell(warp, p)
            .0
            .store(cell(empty_seq(region, p), 0), Ordering::Relaxed);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::thread;
    use std::time::Duration;
    use std::vec::Vec;

    use super::*;
    use crate::testing::{Launch, geometry, within};

    /// `k` allocations on lane 0 of `warp`.
    fn alloc_on(warp: &Warp, k: usize) -> Vec<Option<u32>> {
        let mut out = Vec::new();
        warp.each(Warp::splat(()), |lane, ()| {
            if lane == 0 {
                out.extend((0..k).map(|_| alloc(&arch::current_lane())));
            }
        });
        out
    }

    /// Frees `ids` on lane 0 of `warp`.
    fn free_on(warp: &Warp, ids: &[u32]) {
        warp.each(Warp::splat(()), |lane, ()| {
            if lane == 0 {
                for &id in ids {
                    free(&arch::current_lane(), id, Ordering::Release);
                }
            }
        });
    }

    /// Waits until `handle`'s thread has been stuck for a while, then aborts the launch and
    /// expects the thread to give up.
    fn abort_unsticks<T: Send + 'static>(
        launch: &'static Launch,
        handle: thread::JoinHandle<T>,
    ) -> T {
        thread::sleep(Duration::from_millis(50));
        assert!(
            !handle.is_finished(),
            "the wait should last while the launch runs"
        );
        launch.region().control().abort();
        within(10, move || handle.join().expect("no panic"))
    }

    #[test]
    fn ring_positions_wrap_around() {
        within(60, || {
            for back in [1u32, 2, 3, 6, 1000] {
                let launch = Launch::leak(geometry(2, 4, 1));
                let region = launch.region();
                let (owner, other) = (Warp::new(region, 0, None), Warp::new(region, 1, None));
                let start = 0u32.wrapping_sub(back);
                preset_ring(region, &owner.shared().pool, 0, start);
                let all: Vec<u32> = (0..4).map(|i| region.task_id(0, i)).collect();
                // Four positions a round, through the stash (restock) and the ring directly.
                for round in 0..(back / 4 + 8) {
                    if round % 2 == 1 {
                        restock(&owner);
                    }
                    let mut ids: Vec<u32> = alloc_on(&owner, 4)
                        .into_iter()
                        .map(|id| id.expect("an id came back, the pool is not exhausted"))
                        .collect();
                    ids.sort_unstable();
                    assert_eq!(ids, all, "round {round}: each id out exactly once");
                    free_on(&other, &ids);
                }
                let frees = region.pool_meta(0).frees.load(Ordering::Relaxed);
                assert!(
                    frees < start,
                    "the ring crossed 2^32 positions (frees {frees})"
                );
            }
        });
    }

    #[test]
    fn free_gives_up_when_launch_aborts() {
        let launch = Launch::leak(geometry(2, 2, 1));
        let region = launch.region();
        let (owner, other) = (Warp::new(region, 0, None), Warp::new(region, 1, None));
        let ids = some(alloc_on(&owner, 2));
        // Both come back into ring positions 0 and 1, which the owner has not consumed.
        free_on(&other, &ids);
        // Freeing `ids[0]` again (as a warp that stopped mid-protocol might leave it) reserves
        // position 2, whose cell still holds round 0's id: the producer waits for a consumer
        // that will never come.
        let handle =
            thread::spawn(move || free_on(&Warp::new(launch.region(), 1, None), &ids[..1]));
        abort_unsticks(launch, handle);
    }

    #[test]
    fn an_exhausted_warp_borrows_fresh_ids_and_they_go_home() {
        let launch = Launch::leak(geometry(3, 2, 1));
        let region = launch.region();
        let (w0, w1, w2) = (
            Warp::new(region, 0, None),
            Warp::new(region, 1, None),
            Warp::new(region, 2, None),
        );
        // Warp 0's two ids, then warp 1's two, then warp 2's two; then nothing, at once.
        let ids = alloc_on(&w0, 7);
        let want: Vec<Option<u32>> = [(0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1)]
            .map(|(w, i)| Some(region.task_id(w, i)))
            .into_iter()
            .chain([None])
            .collect();
        assert_eq!(ids, want);
        assert_eq!(handed(&w0.shared().pool), 6);
        // The lenders have no fresh id left either, so they wait for their own to come back.
        assert_eq!(alloc_on(&w1, 1), [None]);
        // Freed on warp 0, the borrowed ids go into their owners' rings, where the owners take
        // them.
        free_on(&w0, &some(ids[2..6].to_vec()));
        // A lender got back two ids it never handed out itself: it holds no tasks (not a count
        // wrapped below zero).
        assert_eq!(live(region, &w1.shared().pool, 1), 0);
        assert_eq!(
            some(alloc_on(&w1, 2)),
            [region.task_id(1, 0), region.task_id(1, 1)]
        );
        assert_eq!(
            some(alloc_on(&w2, 2)),
            [region.task_id(2, 0), region.task_id(2, 1)]
        );
        assert_eq!(launch.error(), None);
    }

    #[test]
    fn a_single_warp_has_no_one_to_borrow_from() {
        let launch = Launch::leak(geometry(1, 2, 1));
        let warp = Warp::new(launch.region(), 0, None);
        assert_eq!(alloc_on(&warp, 3)[2], None);
    }

    #[test]
    fn take_gives_up_when_launch_aborts() {
        let launch = Launch::leak(geometry(2, 2, 1));
        // A producer reserved ring position 0 and stopped before filling it (as one that gives
        // up when the launch aborts does).
        launch.region().pool_meta(0).frees.add(1, Ordering::Relaxed);
        let handle = thread::spawn(move || alloc_on(&Warp::new(launch.region(), 0, None), 1));
        assert_eq!(abort_unsticks(launch, handle), [None]);
    }

    #[test]
    fn restock_gives_up_when_launch_aborts() {
        let launch = Launch::leak(geometry(2, 2, 1));
        launch.region().pool_meta(0).frees.add(1, Ordering::Relaxed);
        let handle = thread::spawn(move || {
            let owner = Warp::new(launch.region(), 0, None);
            restock(&owner);
            // The stash has a hole where the untaken id would be: it must hand out nothing.
            owner.shared().pool.ready_len.load() as i32
        });
        assert!(abort_unsticks(launch, handle) <= 0);
    }

    /// Ids `from..to` of warp `w`, newest first: the order a full stash hands them out.
    fn ids_down(region: &Region, w: u32, from: u32, to: u32) -> Vec<u32> {
        (from..to).rev().map(|i| region.task_id(w, i)).collect()
    }

    fn some(ids: Vec<Option<u32>>) -> Vec<u32> {
        ids.into_iter().map(|id| id.expect("an id")).collect()
    }

    #[test]
    fn restock_fills_the_stash_with_fresh_ids() {
        let launch = Launch::leak(geometry(2, 128, 1));
        let region = launch.region();
        let owner = Warp::new(region, 0, None);
        let local = &owner.shared().pool;
        restock(&owner);
        assert_eq!((local.ready_len.load(), local.fresh.load()), (STASH, STASH));
        assert_eq!(some(alloc_on(&owner, 3)), ids_down(region, 0, 61, 64));
        assert_eq!((handed(local), live(region, local, 0)), (3, 3));
        // Roomy means fewer than half the slots drawn fresh: 64 of 128 is not.
        assert!(!roomy(region, local));
        let wide = Launch::leak(geometry(2, 130, 1));
        let warp = Warp::new(wide.region(), 0, None);
        restock(&warp);
        assert!(roomy(wide.region(), &warp.shared().pool), "64 of 130");
    }

    #[test]
    fn own_frees_come_back_through_the_stash() {
        let launch = Launch::leak(geometry(2, 128, 1));
        let region = launch.region();
        let owner = Warp::new(region, 0, None);
        let local = &owner.shared().pool;
        restock(&owner);
        let ids = some(alloc_on(&owner, 3));
        free_on(&owner, &ids);
        assert_eq!(local.freed_len.load(), 3);
        restock(&owner);
        assert_eq!(local.ready_len.load(), STASH);
        assert_eq!(local.kept.load(), 3);
        assert_eq!(local.freed_len.load(), 0);
        assert_eq!(
            region.pool_meta(0).frees.load(Ordering::Relaxed),
            0,
            "no ring traffic"
        );
        assert_eq!(live(region, local, 0), 0);
        // The stash hands back the last id it took in.
        assert_eq!(some(alloc_on(&owner, 1)), [ids[2]]);
    }

    #[test]
    fn restock_spills_own_frees_that_do_not_fit_into_the_ring() {
        let at = u32::MAX - 10;
        let launch = Launch::leak(geometry(2, 128, 1));
        let region = launch.region();
        let owner = Warp::new(region, 0, None);
        let local = &owner.shared().pool;
        preset_ring(region, local, 0, at);
        restock(&owner);
        let first = some(alloc_on(&owner, 64));
        assert_eq!(first, ids_down(region, 0, 0, 64));
        restock(&owner);
        assert_eq!(local.fresh.load(), 128, "every fresh id is out");
        // A full stash: the 64 ids freed now cannot move into it.
        free_on(&owner, &first);
        restock(&owner);
        assert_eq!(local.ready_len.load(), STASH);
        assert_eq!(
            region.pool_meta(0).frees.load(Ordering::Relaxed),
            at.wrapping_add(64),
            "spilled into the ring across 2^32"
        );
        assert_eq!(some(alloc_on(&owner, 64)), ids_down(region, 0, 64, 128));
        // The stash is empty: allocations take the spilled ids from the ring.
        let mut again = some(alloc_on(&owner, 64));
        again.sort_unstable();
        let mut first = first;
        first.sort_unstable();
        assert_eq!(again, first);
        assert_eq!(local.taken.load(), at.wrapping_add(64));
    }

    #[test]
    fn restock_takes_from_the_ring_only_when_the_stash_runs_low() {
        let launch = Launch::leak(geometry(2, 128, 1));
        let region = launch.region();
        let (owner, other) = (Warp::new(region, 0, None), Warp::new(region, 1, None));
        let local = &owner.shared().pool;
        restock(&owner);
        let ids = some(alloc_on(&owner, 10));
        free_on(&other, &ids);
        // 54 ready, at least half the stash: the ring is not read.
        restock(&owner);
        assert_eq!((local.taken.load(), local.ready_len.load()), (0, 54));
        assert_eq!(region.pool_meta(0).frees.load(Ordering::Relaxed), 10);
        // 24 ready, below half: the ten freed elsewhere come in, then fresh ids.
        let _ = alloc_on(&owner, 30);
        restock(&owner);
        assert_eq!((local.taken.load(), local.ready_len.load()), (10, STASH));
        assert_eq!(local.fresh.load(), 94);
        let mut expected = ids_down(region, 0, 64, 94);
        expected.extend(ids.iter().rev());
        expected.extend(ids_down(region, 0, 0, 24));
        assert_eq!(some(alloc_on(&owner, 64)), expected);
    }

    #[test]
    fn positions_compare_by_distance() {
        assert!(after(1, 0));
        assert!(after(0, u32::MAX));
        assert!(after(5, u32::MAX - 5));
        assert!(!after(u32::MAX, 0));
        assert!(!after(7, 7));
    }
}
