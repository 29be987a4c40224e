//! Task-ID pools: each warp owns `slots_per_warp` task slots.
//!
//! A warp allocates ids only from its own pool; a finished task's id goes back to the pool of
//! the warp that owns it, whichever warp ran the task. Because a warp's
//! ids never migrate, "slots per warp" is an exact limit on the tasks a warp may have spawned
//! and not yet seen finish, on the GPU and in the CPU executor alike.
//!
//! # Protocol
//!
//! * Task ids are `warp << id_shift | index` with `2^id_shift >= slots_per_warp`, so the owner
//!   is a shift away. Freed ids go into a bounded multi-producer ring of `n = 2^id_shift`
//!   cells (Vyukov's sequence-number scheme). A cell is one 64-bit word, sequence number and id
//!   together, so relaxed accesses suffice: the id travels with the number that says it is
//!   there. Producer `p` (any warp, reserving `p` with one relaxed add on `frees`) waits until
//!   cell `p % n` reads `2 * (p / n)`, then writes `(2 * (p / n) + 1, id)`. The owner consumes
//!   ring position `t` (counted by the warp-local `taken`): it waits for `2 * (t / n) + 1`,
//!   takes the id, and hands the cell to the next round's producer with `2 * (t / n) + 2`.
//! * What the id *names* (the slot) needs ordering of its own: the task that frees a slot has
//!   fenced after its last access to it (see [`crate::join`]), so the owner's new record cannot
//!   be overtaken by an access of the old task.
//! * Allocation prefers a recycled id: while `taken < frees` a lane claims position `taken` by
//!   compare-and-swap on the warp-local counter, so the slots in circulation stay few and hot in
//!   cache. Only when the ring is empty does it take a fresh id `w << id_shift | fresh`
//!   (the warp-local `fresh` counter), so a zeroed pool needs no setup.
//! * At most `slots_per_warp <= n` ids exist, so a producer never laps an unconsumed cell. Once every fresh id is
//!   out, an allocation claims the next ring position and waits for a producer; if none has
//!   reserved it (`frees <= t`) for a long while, the pool is exhausted.

use core::sync::atomic::Ordering;

use crate::arch::{self, AtomicU32, AtomicU64};
use crate::launch::Runtime;
use crate::scheduler::WarpShared;

/// Per-warp pool metadata in device memory, alone in its 128-byte line: every warp that
/// finishes one of this warp's tasks updates it, and sharing a line with another warp's
/// counter would make both contend.
#[repr(C, align(128))]
pub struct PoolMeta {
    /// Ring positions reserved by producers (ids freed so far).
    pub(crate) frees: AtomicU32,
}

/// One cell of a warp's free-id ring.
#[repr(C)]
pub struct PoolCell(AtomicU64);

/// A cell's word: the sequence number (high half) and the id (low half), written together so
/// that a relaxed load sees both or neither.
#[inline(always)]
const fn cell(seq: u32, id: u32) -> u64 {
    (seq as u64) << 32 | id as u64
}

/// How long an allocation waits for a producer that reserved a cell but has not filled it, and
/// re-reads `frees` before calling the pool exhausted.
const PATIENCE: u32 = 1 << 16;

/// Allocates a task id from the calling lane's warp. `None` means the pool is exhausted.
#[inline]
pub(crate) fn alloc(rt: &Runtime, shared: &WarpShared, warp: u32) -> Option<u32> {
    // A recycled id, while the ring has one. Counts stay below 2^32 within a launch.
    loop {
        let t = shared.taken.load();
        let mut seen = shared.frees_seen.load();
        if t >= seen {
            seen = rt.pool_meta(warp).frees.load(Ordering::Relaxed);
            // Lanes may store these out of order; a stale value only costs another reload.
            shared.frees_seen.store(seen);
            if t >= seen {
                break;
            }
        }
        if shared.taken.compare_exchange(t, t + 1) {
            return Some(take(rt, warp, t));
        }
    }
    let c = shared.fresh.fetch_add(1);
    if c < rt.slots_per_warp {
        return Some(rt.task_id(warp, c));
    }
    // Every id is out: wait for one to come back.
    let t = shared.taken.fetch_add(1);
    let mut waited = 0u32;
    while rt.pool_meta(warp).frees.load(Ordering::Relaxed) <= t {
        waited += 1;
        if waited > PATIENCE {
            return None;
        }
        arch::backoff(32);
    }
    Some(take(rt, warp, t))
}

/// Consumes ring position `t`, which a producer has reserved.
#[inline]
fn take(rt: &Runtime, warp: u32, t: u32) -> u32 {
    let slot = &rt.pool_cell(warp, t).0;
    let ready = 2 * (t >> rt.id_shift) + 1;
    loop {
        let word = slot.load(Ordering::Relaxed);
        if (word >> 32) as u32 == ready {
            // Same word: the next round's producer cannot overwrite it before this read.
            slot.store(cell(ready + 1, 0), Ordering::Relaxed);
            return word as u32;
        }
        // The producer reserved the position and is about to fill it.
        arch::backoff(32);
    }
}

/// Returns task `id` to its owner's pool. Callable from any warp. The caller must have ordered
/// its last accesses to the task's slot before this call: with a fence (then `order` may be
/// relaxed) or by passing `Release`, since the owner may hand the slot out again at once.
#[inline]
pub(crate) fn free(rt: &Runtime, id: u32, order: Ordering) {
    let owner = rt.owner(id);
    let p = rt.pool_meta(owner).frees.fetch_add(1, Ordering::Relaxed);
    let slot = &rt.pool_cell(owner, p).0;
    let empty = 2 * (p >> rt.id_shift);
    while (slot.load(Ordering::Relaxed) >> 32) as u32 != empty {
        // The consumer of this cell's previous round took its position but has not read it yet.
        arch::backoff(32);
    }
    slot.store(cell(empty + 1, id), order);
}

/// Ids warp `warp` has handed out (fresh or recycled).
#[inline]
pub(crate) fn allocated(rt: &Runtime, shared: &WarpShared) -> u32 {
    shared
        .fresh
        .load()
        .min(rt.slots_per_warp)
        .wrapping_add(shared.taken.load())
}

/// Tasks of warp `w` allocated and not yet freed (exact when the warp is quiescent).
#[inline]
pub(crate) fn live(rt: &Runtime, shared: &WarpShared, warp: u32) -> u32 {
    allocated(rt, shared).wrapping_sub(rt.pool_meta(warp).frees.load(Ordering::Relaxed))
}
