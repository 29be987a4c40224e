//! The map of a block's dynamic shared memory on the GPU: the launch's region view, one
//! [`WarpShared`] per warp, one [`LaneCtx`] and one [`Scratch`] per thread, each area 16-byte
//! aligned. Block mode ([`crate::block`]) adds the block's [`BlockShared`], an exchange cell of
//! [`EXCHANGE_BYTES`] per thread for the block-cooperative helpers, and the shared memory lent
//! to tasks (the launch's [`block_shared_bytes`](super::LaunchParams::block_shared_bytes), by
//! default [`DEFAULT_BLOCK_SHARED_BYTES`]), and has no [`Scratch`]: `gtap::thread::scratch` is
//! thread-mode memory (a block-mode task lends the block's memory instead), and without it a
//! block of one warp fits 32 to a multiprocessor. A block-mode block schedules with its first
//! warp only, so the areas of its other warps are never initialised or used: when it has more
//! than one warp, its state and exchange cells take their place (the lent memory follows the
//! lane contexts), and a block of one warp has them after the lane contexts. Every thread finds
//! its [`LaneCtx`], and the first warp its [`WarpShared`], at the same offsets in both modes.
//! The device places its state by these offsets and the host sizes the allocation with
//! [`shared_bytes`] or [`block_mode_shared_bytes`]; all the types are `#[repr(C)]` (or arrays)
//! with the same layout on host and device, so the host can compute it.

use super::align_up;
use crate::arch::WARP_SIZE;
use crate::block::BlockShared;
use crate::lane::{LaneCtx, Scratch};
use crate::region::Region;
use crate::scheduler::WarpShared;

const fn align16(n: usize) -> usize {
    align_up(n as u64, 16) as usize
}

/// Offset of warp `w`'s [`WarpShared`] in a block's shared-memory area.
pub(crate) const fn warp_area_offset(w: u32) -> usize {
    align16(core::mem::size_of::<Region>())
        + w as usize * align16(core::mem::size_of::<WarpShared>())
}

/// Offset of the lane contexts in a block's shared-memory area.
pub(crate) const fn lane_area_offset(warps_per_block: u32) -> usize {
    warp_area_offset(warps_per_block)
}

/// Offset of the threads' scratch memory in a block's shared-memory area.
pub(crate) const fn scratch_area_offset(threads: u32) -> usize {
    align16(
        lane_area_offset(threads / WARP_SIZE) + threads as usize * core::mem::size_of::<LaneCtx>(),
    )
}

/// Bytes of dynamic shared memory the GPU runtime needs per block of `threads` threads.
pub const fn shared_bytes(threads: u32) -> usize {
    scratch_area_offset(threads) + threads as usize * core::mem::size_of::<Scratch>()
}

/// [`shared_bytes`] for a launch without thread-mode scratch memory
/// ([`OPT_NO_SCRATCH`](super::OPT_NO_SCRATCH)): the map up to the scratch area.
pub const fn shared_bytes_without_scratch(threads: u32) -> usize {
    scratch_area_offset(threads)
}

/// Bytes of each thread's exchange cell: the largest value a block-cooperative helper
/// (`reduce`, `broadcast`, scans) moves between threads.
pub const EXCHANGE_BYTES: usize = 32;

/// Bytes of shared memory a block-mode task may borrow (`gtap::Block::shared`) when the
/// configuration does not say.
pub const DEFAULT_BLOCK_SHARED_BYTES: u32 = 4096;

/// Whether a block-mode block of `threads` threads keeps its [`BlockShared`] and exchange
/// cells in the areas of its warps after the first (true for every block of two warps or more).
const fn overlays_idle_warps(threads: u32) -> bool {
    let idle = (threads / WARP_SIZE).saturating_sub(1) as usize;
    align16(core::mem::size_of::<BlockShared>()) + threads as usize * EXCHANGE_BYTES
        <= idle * align16(core::mem::size_of::<WarpShared>())
}

/// End of the areas a block-mode block shares with the thread-mode map: the lane contexts (it
/// has no [`Scratch`]), 16-byte aligned.
const fn block_mode_lanes_end(threads: u32) -> usize {
    scratch_area_offset(threads)
}

/// Offset of the block-mode state ([`BlockShared`]) in a block's shared-memory area.
pub(crate) const fn block_area_offset(threads: u32) -> usize {
    if overlays_idle_warps(threads) {
        warp_area_offset(1)
    } else {
        block_mode_lanes_end(threads)
    }
}

/// Offset of the threads' exchange cells in a block-mode block's shared-memory area.
pub(crate) const fn exchange_area_offset(threads: u32) -> usize {
    align16(block_area_offset(threads) + core::mem::size_of::<BlockShared>())
}

/// Offset of the shared memory lent to block-mode tasks.
pub(crate) const fn user_area_offset(threads: u32) -> usize {
    if overlays_idle_warps(threads) {
        block_mode_lanes_end(threads)
    } else {
        exchange_area_offset(threads) + threads as usize * EXCHANGE_BYTES
    }
}

/// Bytes of dynamic shared memory a block-mode kernel needs per block of `threads` threads
/// that lends its tasks `lent` bytes.
pub const fn block_mode_shared_bytes(threads: u32, lent: u32) -> usize {
    user_area_offset(threads) + lent as usize
}

#[cfg(test)]
mod tests {
    use core::mem::size_of;

    use super::*;

    /// Every block size a launch may have: whole warps, up to 1024 threads.
    fn block_sizes() -> impl Iterator<Item = u32> {
        (1..=32).map(|warps| warps * WARP_SIZE)
    }

    #[test]
    fn areas_are_aligned_in_order_and_do_not_overlap() {
        for threads in block_sizes() {
            let warps = threads / WARP_SIZE;
            // (start, bytes) of every area, in address order.
            let mut areas = std::vec![(0, size_of::<Region>())];
            areas.extend((0..warps).map(|w| (warp_area_offset(w), size_of::<WarpShared>())));
            areas.push((
                lane_area_offset(warps),
                threads as usize * size_of::<LaneCtx>(),
            ));
            areas.push((
                scratch_area_offset(threads),
                threads as usize * size_of::<Scratch>(),
            ));
            for pair in areas.windows(2) {
                let ((start, bytes), (next, _)) = (pair[0], pair[1]);
                assert_eq!(next % 16, 0, "{threads} threads: area at {next} is aligned");
                assert!(
                    start + bytes <= next,
                    "{threads} threads: area at {start} overlaps the one at {next}"
                );
            }
            let &(last, bytes) = areas.last().expect("areas");
            assert_eq!(shared_bytes(threads), last + bytes, "{threads} threads");
        }
    }

    #[test]
    fn each_thread_and_warp_gets_its_own_cells() {
        // A lane finds its context by thread index and its warp state by warp index: the
        // areas must be sized per thread and per warp, not per block.
        let per_warp = warp_area_offset(1) - warp_area_offset(0);
        assert!(per_warp >= size_of::<WarpShared>());
        let small = shared_bytes(WARP_SIZE);
        let large = shared_bytes(32 * WARP_SIZE);
        let per_thread = size_of::<LaneCtx>() + size_of::<Scratch>();
        assert!(large - small >= 31 * (per_warp + WARP_SIZE as usize * per_thread));
    }

    #[test]
    fn block_mode_areas_miss_every_area_block_mode_uses() {
        for threads in block_sizes() {
            let warps = threads / WARP_SIZE;
            // What block mode uses of the thread-mode map: the region view, the first warp's
            // state, every thread's context (no scratch memory).
            let mut areas = std::vec![
                (0, size_of::<Region>()),
                (warp_area_offset(0), size_of::<WarpShared>()),
                (
                    lane_area_offset(warps),
                    threads as usize * size_of::<LaneCtx>(),
                ),
                (block_area_offset(threads), size_of::<BlockShared>()),
                (
                    exchange_area_offset(threads),
                    threads as usize * EXCHANGE_BYTES,
                ),
                (
                    user_area_offset(threads),
                    DEFAULT_BLOCK_SHARED_BYTES as usize
                ),
            ];
            areas.sort();
            for pair in areas.windows(2) {
                let ((start, bytes), (next, _)) = (pair[0], pair[1]);
                assert_eq!(next % 16, 0, "{threads} threads: area at {next} is aligned");
                assert!(
                    start + bytes <= next,
                    "{threads} threads: area at {start} overlaps the one at {next}"
                );
            }
            let end = areas.iter().map(|&(start, bytes)| start + bytes).max();
            assert_eq!(
                Some(block_mode_shared_bytes(threads, DEFAULT_BLOCK_SHARED_BYTES)),
                end,
                "{threads} threads: the allocation ends with the last area"
            );
            assert!(
                block_mode_shared_bytes(threads, DEFAULT_BLOCK_SHARED_BYTES) <= 227 * 1024,
                "{threads} threads"
            );
            assert_eq!(
                block_mode_shared_bytes(threads, 0),
                user_area_offset(threads),
                "nothing lent, nothing after the last area"
            );
        }
    }

    #[test]
    fn a_block_of_one_warp_lending_nothing_fits_32_to_a_multiprocessor() {
        // 228 KiB of shared memory a multiprocessor (H100, H200), of which the driver reserves
        // 1 KiB a block; 32 blocks is the most a multiprocessor holds.
        let per_block = block_mode_shared_bytes(WARP_SIZE, 0) + 1024;
        assert!(32 * per_block <= 228 * 1024, "{per_block} bytes a block");
    }

    #[test]
    fn blocks_of_several_warps_need_thread_mode_less_its_scratch_and_the_lent_memory() {
        assert!(!overlays_idle_warps(WARP_SIZE));
        for threads in block_sizes().skip(1) {
            assert!(overlays_idle_warps(threads), "{threads} threads");
            assert_eq!(
                block_mode_shared_bytes(threads, 0),
                shared_bytes(threads) - threads as usize * size_of::<Scratch>()
            );
        }
        // One warp: the block's areas follow the lane contexts.
        assert_eq!(block_area_offset(WARP_SIZE), scratch_area_offset(WARP_SIZE));
    }

    #[test]
    fn the_largest_block_fits_a_multiprocessor() {
        // 227 KiB is the most shared memory a block may have on sm_90 (the H100/H200): every
        // block size the host accepts must be launchable there, and two blocks of 256
        // threads must fit one multiprocessor (the occupancy `MAX_REGISTERS` is chosen for).
        assert!(shared_bytes(1024) <= 227 * 1024);
        assert!(2 * shared_bytes(256) <= 227 * 1024);
    }
}
