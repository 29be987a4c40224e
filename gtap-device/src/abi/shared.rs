//! The map of a block's dynamic shared memory on the GPU: the launch's region view, one
//! [`WarpShared`] per warp, one [`LaneCtx`] and one [`Scratch`] per thread, each area 16-byte
//! aligned. The device places its state by these offsets and the host sizes the allocation
//! with [`shared_bytes`]; all the types are `#[repr(C)]` (or arrays) with the same layout on
//! host and device, so the host can compute it.

use super::align_up;
use crate::arch::WARP_SIZE;
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
