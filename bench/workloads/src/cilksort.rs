//! Cilksort: a 4-way parallel mergesort with a parallel merge (GTaP's
//! `evaluation/2-comparison/cilksort/gtap_cilksort.cu`), and its EPAQ variant
//! (`evaluation/3-epaq/cilksort/cilksort_queue_{1,3}.cu`).
//!
//! `cilksort` splits its range into quarters, sorts them as four child tasks, merges them
//! pairwise into the scratch buffer as two `cilkmerge` tasks, and merges those back as a third.
//! Below [`SORT_CUTOFF`] elements a task sorts its range with a bitonic network in local memory;
//! `cilkmerge` splits the larger input at its middle, finds the split of the other by binary
//! search, and merges sequentially below [`MERGE_CUTOFF`] elements.
//!
//! The EPAQ variant ([`cilksort_epaq`]) has cutoffs of [`EPAQ_CUTOFF`] for both and sends tasks
//! that will run sequentially to their own queues: sorts to queue 1, merges to queue 2
//! (`cilksort_queue_3.cu`'s clauses). With one queue, every clause is queue 0, which is exactly
//! `cilksort_queue_1.cu` (no clauses): one pair of task functions serves both.
//!
//! Indices and lengths are `u32` (GTaP's are `int`): inputs have at most `u32::MAX` elements.

use gtap::SliceMut;

use crate::elements::{Elements, Owned};

#[cfg(not(target_arch = "nvptx64"))]
mod host;
#[cfg(not(target_arch = "nvptx64"))]
pub use host::{Cilksort, paper, quick, run_host};

/// Ranges shorter than this are sorted sequentially (`TASK_SPAWN_CUTOFF_SORT`).
pub const SORT_CUTOFF: u32 = 64;
/// Merges of fewer elements than this run sequentially (`TASK_SPAWN_CUTOFF_MERGE`).
pub const MERGE_CUTOFF: u32 = 256;
/// Both cutoffs of the EPAQ variant (`epaq_cilksort.sh`'s fastest point).
pub const EPAQ_CUTOFF: u32 = 256;

/// Merges the sorted `a_len` values at `src[a..]` and `b_len` values at `src[b..]` into
/// `dst[d..]` (GTaP's `merge_device`: ties take from `b`).
#[inline(always)]
pub fn merge<S: Elements + ?Sized, D: Elements + ?Sized>(
    src: &S,
    (a, a_len): (usize, usize),
    (b, b_len): (usize, usize),
    dst: &mut D,
    d: usize,
) {
    let (mut i, mut j, mut t) = (0, 0, d);
    while i < a_len && j < b_len {
        let (x, y) = (src.get(a + i), src.get(b + j));
        if x < y {
            dst.set(t, x);
            i += 1;
        } else {
            dst.set(t, y);
            j += 1;
        }
        t += 1;
    }
    for k in i..a_len {
        dst.set(t, src.get(a + k));
        t += 1;
    }
    for k in j..b_len {
        dst.set(t, src.get(b + k));
        t += 1;
    }
}

/// The largest index `k` in `0..len` with `src[x + k] <= val`, or -1 (GTaP's
/// `binary_search_device`).
#[inline(always)]
pub fn binary_search<S: Elements + ?Sized>(src: &S, x: usize, len: usize, val: i32) -> i64 {
    let (mut low, mut high) = (-1i64, len as i64);
    while low + 1 < high {
        let mid = (low + high) / 2;
        if src.get(x + mid as usize) <= val {
            low = mid;
        } else {
            high = mid;
        }
    }
    low
}

/// Sorts the `n < N` values at `arr[at..]` with a bitonic network over `N` slots padded with
/// `i32::MAX` (GTaP's `sort_small_device`, `N` = the sort cutoff).
#[inline(always)]
pub fn sort_small<const N: usize, A: Elements + ?Sized>(arr: &mut A, at: usize, n: usize) {
    let mut buf = [i32::MAX; N];
    for (i, slot) in buf.iter_mut().enumerate().take(n) {
        *slot = arr.get(at + i);
    }
    let mut k = 2;
    while k <= N {
        let mut j = k >> 1;
        while j > 0 {
            for i in 0..N {
                let ixj = i ^ j;
                if ixj > i {
                    let (x, y) = (buf[i], buf[ixj]);
                    let up = i & k == 0;
                    if (up && x > y) || (!up && x < y) {
                        buf[i] = y;
                        buf[ixj] = x;
                    }
                }
            }
            j >>= 1;
        }
        k <<= 1;
    }
    for (i, v) in buf.iter().enumerate().take(n) {
        arr.set(at + i, *v);
    }
}

/// Where a parallel merge splits the shorter input `b` when the longer input `a` (non-empty)
/// is split after its first `ceil(a_len / 2)` values: the number of `b`'s values that go left.
#[inline(always)]
pub fn merge_split<S: Elements + ?Sized>(
    src: &S,
    a: usize,
    a_len: usize,
    b: usize,
    b_len: usize,
) -> usize {
    (binary_search(src, b, b_len, src.get(a + a_len.div_ceil(2) - 1)) + 1) as usize
}

/// The quarter lengths `(len1, len2, len3, len4)` cilksort splits `n` into.
#[inline(always)]
pub fn quarters(n: u32) -> (u32, u32, u32, u32) {
    let len12 = n / 2;
    let len1 = len12 / 2;
    let len34 = n - len12;
    let len3 = len34 / 2;
    (len1, len12 - len1, len3, len34 - len3)
}

/// Merges `src[a..a + a_len]` and `src[b..b + b_len]` (both sorted) into `dst[d..]`.
#[gtap::function]
pub fn cilkmerge(
    src: SliceMut<i32>,
    a: u32,
    a_len: u32,
    b: u32,
    b_len: u32,
    dst: SliceMut<i32>,
    d: u32,
) {
    let (a, a_len, b, b_len) = if a_len < b_len {
        (b, b_len, a, a_len)
    } else {
        (a, a_len, b, b_len)
    };
    // SAFETY: this task reads only its two input ranges, which no task writes until it
    // finishes, and writes only `dst[d..d + a_len + b_len]`, which it alone owns.
    let (src_view, mut dst_view) = unsafe { (Owned::new(src), Owned::new(dst)) };
    if b_len == 0 {
        for i in 0..a_len as usize {
            dst_view.set(d as usize + i, src_view.get(a as usize + i));
        }
        return;
    }
    if a_len + b_len < MERGE_CUTOFF {
        merge(
            &src_view,
            (a as usize, a_len as usize),
            (b as usize, b_len as usize),
            &mut dst_view,
            d as usize,
        );
        return;
    }
    let a_split = a_len.div_ceil(2);
    let b_split = merge_split(
        &src_view,
        a as usize,
        a_len as usize,
        b as usize,
        b_len as usize,
    ) as u32;
    gtap::task!(cilkmerge(src, a, a_split, b, b_split, dst, d));
    gtap::task!(cilkmerge(
        src,
        a + a_split,
        a_len - a_split,
        b + b_split,
        b_len - b_split,
        dst,
        d + a_split + b_split
    ));
    gtap::taskwait!();
}

/// Sorts `data[at..at + n]`, using `tmp[at..at + n]` as scratch.
#[gtap::function]
pub fn cilksort(data: SliceMut<i32>, tmp: SliceMut<i32>, at: u32, n: u32) {
    if n < SORT_CUTOFF {
        // SAFETY: this task alone owns `data[at..at + n]`.
        let mut view = unsafe { Owned::new(data) };
        sort_small::<{ SORT_CUTOFF as usize }, _>(&mut view, at as usize, n as usize);
        return;
    }
    let (len1, len2, len3, len4) = quarters(n);
    let (len12, len34) = (len1 + len2, len3 + len4);
    gtap::task!(cilksort(data, tmp, at, len1));
    gtap::task!(cilksort(data, tmp, at + len1, len2));
    gtap::task!(cilksort(data, tmp, at + len12, len3));
    gtap::task!(cilksort(data, tmp, at + len12 + len3, len4));
    gtap::taskwait!();
    gtap::task!(cilkmerge(data, at, len1, at + len1, len2, tmp, at));
    gtap::task!(cilkmerge(
        data,
        at + len12,
        len3,
        at + len12 + len3,
        len4,
        tmp,
        at + len12
    ));
    gtap::taskwait!();
    gtap::task!(cilkmerge(tmp, at, len12, at + len12, len34, data, at));
    gtap::taskwait!();
}

/// Root kernel of [`cilksort`]: sorts `data` (at most `u32::MAX` values) using `tmp` (as long).
#[gtap::kernel]
pub fn cilksort_kernel(data: SliceMut<i32>, tmp: SliceMut<i32>) {
    gtap::entry!(cilksort(data, tmp, 0, data.len() as u32))
}

/// The EPAQ queue for a child that will run sequentially (`small`): `queue` if the runtime has
/// more than one queue, else 0 (the 1-queue variant has no clauses).
#[inline(always)]
fn epaq_queue(small: bool, queue: u32) -> u32 {
    if small && gtap::thread::num_queues() > 1 {
        queue
    } else {
        0
    }
}

/// [`cilkmerge`] with cutoff [`EPAQ_CUTOFF`]; sequential merges go to queue 2.
#[gtap::function]
pub fn cilkmerge_epaq(
    src: SliceMut<i32>,
    a: u32,
    a_len: u32,
    b: u32,
    b_len: u32,
    dst: SliceMut<i32>,
    d: u32,
) {
    let (a, a_len, b, b_len) = if a_len < b_len {
        (b, b_len, a, a_len)
    } else {
        (a, a_len, b, b_len)
    };
    // SAFETY: as in `cilkmerge`: the input ranges are read-only while this task runs and the
    // output range is this task's alone.
    let (src_view, mut dst_view) = unsafe { (Owned::new(src), Owned::new(dst)) };
    if b_len == 0 {
        for i in 0..a_len as usize {
            dst_view.set(d as usize + i, src_view.get(a as usize + i));
        }
        return;
    }
    if a_len + b_len < EPAQ_CUTOFF {
        merge(
            &src_view,
            (a as usize, a_len as usize),
            (b as usize, b_len as usize),
            &mut dst_view,
            d as usize,
        );
        return;
    }
    let a_split = a_len.div_ceil(2);
    let b_split = merge_split(
        &src_view,
        a as usize,
        a_len as usize,
        b as usize,
        b_len as usize,
    ) as u32;
    let (rest_a, rest_b) = (a_len - a_split, b_len - b_split);
    gtap::task!(
        queue(epaq_queue(a_split + b_split < EPAQ_CUTOFF, 2)),
        cilkmerge_epaq(src, a, a_split, b, b_split, dst, d)
    );
    gtap::task!(
        queue(epaq_queue(rest_a + rest_b < EPAQ_CUTOFF, 2)),
        cilkmerge_epaq(
            src,
            a + a_split,
            rest_a,
            b + b_split,
            rest_b,
            dst,
            d + a_split + b_split
        )
    );
    gtap::taskwait!();
}

/// [`cilksort`] with cutoff [`EPAQ_CUTOFF`]; sequential sorts go to queue 1, sequential merges
/// to queue 2.
#[gtap::function]
pub fn cilksort_epaq(data: SliceMut<i32>, tmp: SliceMut<i32>, at: u32, n: u32) {
    if n < EPAQ_CUTOFF {
        // SAFETY: this task alone owns `data[at..at + n]`.
        let mut view = unsafe { Owned::new(data) };
        sort_small::<{ EPAQ_CUTOFF as usize }, _>(&mut view, at as usize, n as usize);
        return;
    }
    let (len1, len2, len3, len4) = quarters(n);
    let (len12, len34) = (len1 + len2, len3 + len4);
    gtap::task!(
        queue(epaq_queue(len1 < EPAQ_CUTOFF, 1)),
        cilksort_epaq(data, tmp, at, len1)
    );
    gtap::task!(
        queue(epaq_queue(len2 < EPAQ_CUTOFF, 1)),
        cilksort_epaq(data, tmp, at + len1, len2)
    );
    gtap::task!(
        queue(epaq_queue(len3 < EPAQ_CUTOFF, 1)),
        cilksort_epaq(data, tmp, at + len12, len3)
    );
    gtap::task!(
        queue(epaq_queue(len4 < EPAQ_CUTOFF, 1)),
        cilksort_epaq(data, tmp, at + len12 + len3, len4)
    );
    gtap::taskwait!();
    gtap::task!(
        queue(epaq_queue(len12 < EPAQ_CUTOFF, 2)),
        cilkmerge_epaq(data, at, len1, at + len1, len2, tmp, at)
    );
    gtap::task!(
        queue(epaq_queue(len34 < EPAQ_CUTOFF, 2)),
        cilkmerge_epaq(
            data,
            at + len12,
            len3,
            at + len12 + len3,
            len4,
            tmp,
            at + len12
        )
    );
    gtap::taskwait!();
    gtap::task!(
        queue(epaq_queue(n < EPAQ_CUTOFF, 2)),
        cilkmerge_epaq(tmp, at, len12, at + len12, len34, data, at)
    );
    gtap::taskwait!();
}

/// Root kernel of [`cilksort_epaq`].
#[gtap::kernel]
pub fn cilksort_epaq_kernel(data: SliceMut<i32>, tmp: SliceMut<i32>) {
    gtap::entry!(cilksort_epaq(data, tmp, 0, data.len() as u32))
}
