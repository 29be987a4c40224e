//! A first gtap crate: a task function that sums a binary tree of ranges, its root kernel, and
//! the device code the build script embeds.
//!
//! The library is compiled twice: for the host (ordinary `std` Rust, plus the CPU executor) and,
//! by `build.rs`, for the GPU, where there is no `std`. Hence `no_std` on the GPU only, and
//! host-only items (such as `DEVICE_CODE`) behind `cfg(not(target_arch = "nvptx64"))`.

#![cfg_attr(target_arch = "nvptx64", no_std)]

/// Below this many numbers a task sums its range itself instead of spawning.
pub const CUTOFF: u64 = 64;

/// The sum of `lo..hi`: halves the range into two child tasks until it is shorter than
/// [`CUTOFF`], then adds sequentially.
#[gtap::function]
pub fn range_sum(lo: u64, hi: u64) -> u64 {
    if hi - lo <= CUTOFF {
        return (lo..hi).sum();
    }
    let mid = lo + (hi - lo) / 2;
    let (mut left, mut right) = (0, 0);
    gtap::task!(left = range_sum(lo, mid));
    gtap::task!(right = range_sum(mid, hi));
    gtap::taskwait!();
    left + right
}

/// The root kernel: the host launches this, and it runs `range_sum(0, n)` as the root task.
#[gtap::kernel]
pub fn range_sum_kernel(n: u64) -> u64 {
    gtap::entry!(range_sum(0, n))
}

/// The reference the binary checks against: `0 + 1 + ... + (n - 1)`.
pub fn range_sum_reference(n: u64) -> u64 {
    n * n.saturating_sub(1) / 2
}

/// This crate's kernels for the GPU, built by `build.rs` (or why there are none).
#[cfg(not(target_arch = "nvptx64"))]
pub static DEVICE_CODE: gtap::DeviceCode = gtap::device_code!();
