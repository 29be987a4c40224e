//! Task-ID pools: each warp owns `slots_per_warp` task slots.
//!
//! A warp allocates ids only from its own pool; a finished task's id goes back to the pool of
//! the warp that owns it (`id / slots_per_warp`), whichever warp ran the task. Because a warp's
//! ids never migrate, "slots per warp" is an exact limit on the tasks a warp may have spawned
//! and not yet seen finish, on the GPU and in the CPU executor alike.
//!
//! # Protocol
//!
//! * Allocation counter `allocs` is warp-local (shared memory); the first `slots_per_warp`
//!   allocations hand out fresh ids `w * slots_per_warp + c`, so a zeroed pool needs no setup.
//! * Freed ids go into a bounded multi-producer ring of `slots_per_warp` cells (Vyukov's
//!   sequence-number scheme). Producer `p` (any warp, reserving `p` with one atomic add on
//!   `frees`) waits until cell `p % n` reads `2 * (p / n)` (acquire), writes the id, then
//!   stores `2 * (p / n) + 1` (release). The owner's allocation number `c >= n` consumes ring
//!   position `r = c - n`: it waits for `2 * (r / n) + 1` (acquire), reads the id, and hands the
//!   cell to the next round's producer with `2 * (r / n) + 2` (release).
//! * At most `n` ids exist, so a producer never laps an unconsumed cell; a consumer whose
//!   position no producer has reserved (`frees <= r`) has found the pool exhausted.

use core::sync::atomic::Ordering;

use crate::arch::{self, AtomicU32};
use crate::launch::Runtime;
use crate::scheduler::WarpShared;

/// Per-warp pool metadata in device memory.
#[repr(C)]
pub struct PoolMeta {
    /// Ring positions reserved by producers (ids freed so far).
    pub(crate) frees: AtomicU32,
    _pad: [u32; 3],
}

/// One cell of a warp's free-id ring.
#[repr(C)]
pub struct PoolCell {
    seq: AtomicU32,
    id: AtomicU32,
}

/// How long an allocation waits for a producer that reserved a cell but has not filled it, and
/// re-reads `frees` before calling the pool exhausted.
const PATIENCE: u32 = 1 << 16;

/// Allocates a task id from the calling lane's warp. `None` means the pool is exhausted.
#[inline]
pub(crate) fn alloc(rt: &Runtime, shared: &WarpShared, warp: u32) -> Option<u32> {
    let n = rt.slots_per_warp;
    let c = shared.allocs.fetch_add(1);
    if c < n {
        return Some(warp * n + c);
    }
    let r = c - n;
    let cell = rt.pool_cell(warp, r % n);
    let ready = 2 * (r / n) + 1;
    let mut waited = 0u32;
    loop {
        if cell.seq.load(Ordering::Acquire) == ready {
            let id = cell.id.load(Ordering::Relaxed);
            cell.seq.store(ready + 1, Ordering::Release);
            return Some(id);
        }
        let freed = rt.pool_meta(warp).frees.load(Ordering::Relaxed);
        if freed <= r {
            waited += 1;
            if waited > PATIENCE {
                return None;
            }
        }
        arch::backoff(32);
    }
}

/// Returns task `id` to its owner's pool. Callable from any warp.
#[inline]
pub(crate) fn free(rt: &Runtime, id: u32) {
    let n = rt.slots_per_warp;
    let owner = id / n;
    let p = rt.pool_meta(owner).frees.fetch_add(1, Ordering::Relaxed);
    let cell = rt.pool_cell(owner, p % n);
    let empty = 2 * (p / n);
    while cell.seq.load(Ordering::Acquire) != empty {
        // The consumer of this cell's previous round took its position but has not read it yet.
        arch::backoff(32);
    }
    cell.id.store(id, Ordering::Relaxed);
    cell.seq.store(empty + 1, Ordering::Release);
}

/// Tasks of warp `w` allocated and not yet freed (exact when the warp is quiescent).
#[inline]
pub(crate) fn live(rt: &Runtime, shared: &WarpShared, warp: u32) -> u32 {
    shared
        .allocs
        .load()
        .wrapping_sub(rt.pool_meta(warp).frees.load(Ordering::Relaxed))
}
