//! Recursive mergesort (GTaP's `evaluation/2-comparison/mergesort/gtap_mergesort.cu`): a task
//! splits its range in two child tasks down to [`CUTOFF`] elements, sorts smaller ranges with a
//! sequential recursive mergesort, and merges the two sorted halves sequentially through the
//! scratch buffer (into it, then back).
//!
//! Ranges are inclusive `left..=right` of `i32` indices, as in GTaP.

use gtap::{Part, SliceMut};

#[cfg(not(target_arch = "nvptx64"))]
mod host;
#[cfg(not(target_arch = "nvptx64"))]
pub use host::{Mergesort, paper, quick, run_host};

/// Ranges longer than this are split into two tasks (`TASK_SPAWN_CUTOFF`).
pub const CUTOFF: i32 = 128;

/// Merges the sorted `a[left..=mid]` and `a[mid + 1..=right]` into `buf[left..=right]`, then
/// copies that back to `a` (GTaP's `merge_device`: ties take from the left half).
#[inline(always)]
pub fn merge(a: &mut [i32], buf: &mut [i32], left: usize, mid: usize, right: usize) {
    let (mut i, mut j, mut k) = (left, mid + 1, left);
    while i <= mid && j <= right {
        let (x, y) = (a[i], a[j]);
        if x <= y {
            buf[k] = x;
            i += 1;
        } else {
            buf[k] = y;
            j += 1;
        }
        k += 1;
    }
    for t in (i..=mid).chain(j..=right) {
        buf[k] = a[t];
        k += 1;
    }
    // An element loop, not `copy_from_slice`: NVPTX expands a memcpy of unknown length into a
    // byte loop.
    #[allow(clippy::manual_memcpy)]
    for t in left..=right {
        a[t] = buf[t];
    }
}

/// Sorts `a[left..=right]` by recursive mergesort through `buf` (GTaP's `mergesort_rec_device`).
///
/// On the GPU the recursion lives on the thread stack (1 KiB by default, shared with the
/// scheduler's and the task's frames): single elements are not recursed into (they are sorted
/// already, GTaP's call returns at once), so [`CUTOFF`] = 128 elements need 7 frames.
pub fn mergesort_seq(a: &mut [i32], buf: &mut [i32], left: usize, right: usize) {
    let mid = left + ((right - left) >> 1);
    if left < mid {
        mergesort_seq(a, buf, left, mid);
    }
    if mid + 1 < right {
        mergesort_seq(a, buf, mid + 1, right);
    }
    merge(a, buf, left, mid, right);
}

/// Where a range of `n` values splits: its first half (the longer one when `n` is odd).
#[inline(always)]
pub fn half(n: usize) -> usize {
    (n - 1) / 2 + 1
}

/// A sorted range and its scratch range, handed back to the parent that lent them.
#[derive(Default)]
pub struct Sorted {
    /// The sorted values.
    pub data: Part<i32>,
    /// The scratch values, as long.
    pub buf: Part<i32>,
}

/// Sorts `data`, using `buf` (as long) as scratch, and hands both back.
#[gtap::function]
pub fn mergesort(mut data: Part<i32>, mut buf: Part<i32>) -> Sorted {
    let n = data.len();
    if n <= CUTOFF as usize {
        if n > 1 {
            mergesort_seq(&mut data, &mut buf, 0, n - 1);
        }
        return Sorted { data, buf };
    }
    let half = half(n);
    let (data_left, data_right, data_loan) = data.lend(half);
    let (buf_left, buf_right, buf_loan) = buf.lend(half);
    let (mut left, mut right) = (Sorted::default(), Sorted::default());
    gtap::task!(left = mergesort(data_left, buf_left));
    gtap::task!(right = mergesort(data_right, buf_right));
    gtap::taskwait!();
    let mut data = data_loan.join(left.data, right.data);
    let mut buf = buf_loan.join(left.buf, right.buf);
    merge(&mut data, &mut buf, 0, half - 1, n - 1);
    Sorted { data, buf }
}

/// The root task: sorts `data` through [`mergesort`] (a kernel's result must be `Copy`, which
/// the parts that come back are not).
#[gtap::function]
pub fn mergesort_root(data: Part<i32>, buf: Part<i32>) {
    let mut sorted = Sorted::default();
    gtap::task!(sorted = mergesort(data, buf));
    gtap::taskwait!();
    // The parts handed back end here: the kernel returns nothing.
    let _ = sorted;
}

/// Root kernel of [`mergesort`]: sorts `data` (at most `i32::MAX` values) using `buf` (as
/// long).
#[gtap::kernel(queues = 1)]
pub fn mergesort_kernel(data: SliceMut<i32>, buf: SliceMut<i32>) {
    // SAFETY: the host passes two distinct buffers and nothing else reaches them.
    let (data, buf) = unsafe { (data.claim(), buf.claim()) };
    gtap::entry!(mergesort_root(data, buf))
}
