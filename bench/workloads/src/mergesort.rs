//! Recursive mergesort (GTaP's `evaluation/2-comparison/mergesort/gtap_mergesort.cu`): a task
//! splits its range in two child tasks down to [`CUTOFF`] elements, sorts smaller ranges with a
//! sequential recursive mergesort, and merges the two sorted halves sequentially through the
//! scratch buffer (into it, then back).
//!
//! Ranges are inclusive `left..=right` of `i32` indices, as in GTaP.

use gtap::SliceMut;

use crate::elements::{Elements, Owned};

#[cfg(not(target_arch = "nvptx64"))]
mod host;
#[cfg(not(target_arch = "nvptx64"))]
pub use host::{Mergesort, paper, quick, run_host};

/// Ranges longer than this are split into two tasks (`TASK_SPAWN_CUTOFF`).
pub const CUTOFF: i32 = 128;

/// Merges the sorted `a[left..=mid]` and `a[mid + 1..=right]` into `buf[left..=right]`, then
/// copies that back to `a` (GTaP's `merge_device`: ties take from the left half).
#[inline(always)]
pub fn merge<A: Elements + ?Sized, B: Elements + ?Sized>(
    a: &mut A,
    buf: &mut B,
    left: usize,
    mid: usize,
    right: usize,
) {
    let (mut i, mut j, mut k) = (left, mid + 1, left);
    while i <= mid && j <= right {
        let (x, y) = (a.get(i), a.get(j));
        if x <= y {
            buf.set(k, x);
            i += 1;
        } else {
            buf.set(k, y);
            j += 1;
        }
        k += 1;
    }
    for t in (i..=mid).chain(j..=right) {
        buf.set(k, a.get(t));
        k += 1;
    }
    for t in left..=right {
        a.set(t, buf.get(t));
    }
}

/// Sorts `a[left..=right]` by recursive mergesort through `buf` (GTaP's `mergesort_rec_device`).
///
/// On the GPU the recursion lives on the thread stack (1 KiB by default, shared with the
/// scheduler's and the task's frames): single elements are not recursed into (they are sorted
/// already, GTaP's call returns at once), so [`CUTOFF`] = 128 elements need 7 frames.
pub fn mergesort_seq<A: Elements + ?Sized, B: Elements + ?Sized>(
    a: &mut A,
    buf: &mut B,
    left: usize,
    right: usize,
) {
    let mid = left + ((right - left) >> 1);
    if left < mid {
        mergesort_seq(a, buf, left, mid);
    }
    if mid + 1 < right {
        mergesort_seq(a, buf, mid + 1, right);
    }
    merge(a, buf, left, mid, right);
}

/// Sorts `data[left..=right]`, using `buf[left..=right]` as scratch.
#[gtap::function]
pub fn mergesort(data: SliceMut<i32>, buf: SliceMut<i32>, left: i32, right: i32) {
    if left >= right {
        return;
    }
    let n = right - left + 1;
    let mid = left + ((right - left) >> 1);
    if n > CUTOFF {
        gtap::task!(mergesort(data, buf, left, mid));
        gtap::task!(mergesort(data, buf, mid + 1, right));
        gtap::taskwait!();
    } else {
        // SAFETY: this task alone owns `data[left..=right]` and `buf[left..=right]`.
        let (mut a, mut b) = unsafe { (Owned::new(data), Owned::new(buf)) };
        mergesort_seq(&mut a, &mut b, left as usize, right as usize);
        return;
    }
    // SAFETY: the children that wrote both halves have finished; this task alone owns the
    // ranges from here on.
    let (mut a, mut b) = unsafe { (Owned::new(data), Owned::new(buf)) };
    merge(&mut a, &mut b, left as usize, mid as usize, right as usize);
}

/// Root kernel of [`mergesort`]: sorts `data` (at most `i32::MAX` values) using `buf` (as
/// long).
#[gtap::kernel]
pub fn mergesort_kernel(data: SliceMut<i32>, buf: SliceMut<i32>) {
    gtap::entry!(mergesort(data, buf, 0, data.len() as i32 - 1))
}
