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
//! These task functions pass their ranges as shared views ([`SliceMut`]), a pointer and a length
//! each, as GTaP's pass `int*` and `int`: a record holds its arguments and nothing else, and a
//! task claims its ranges as [`Part`](gtap::Part)s where it reads or writes them, which is `unsafe` (the
//! task graph, not the type system, keeps the ranges of running tasks apart). [`parts`] is the
//! same sort without `unsafe`: every task owns its ranges as parts and hands them back in its
//! result, at the price of larger records (its label ends in `_parts`; `bench/NOTES.md` entry 29
//! has both measured).

use gtap::SliceMut;

pub mod parts;

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

/// Merges the sorted `a` and `b` into `dst` (GTaP's `merge_device`: ties take from `b`).
#[inline(always)]
pub fn merge(a: &[i32], b: &[i32], dst: &mut [i32]) {
    let (mut i, mut j, mut t) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        let (x, y) = (a[i], b[j]);
        if x < y {
            dst[t] = x;
            i += 1;
        } else {
            dst[t] = y;
            j += 1;
        }
        t += 1;
    }
    for &v in &a[i..] {
        dst[t] = v;
        t += 1;
    }
    for &v in &b[j..] {
        dst[t] = v;
        t += 1;
    }
}

/// The largest index `k` with `src[k] <= val`, or -1 (GTaP's `binary_search_device`).
#[inline(always)]
pub fn binary_search(src: &[i32], val: i32) -> i64 {
    let (mut low, mut high) = (-1i64, src.len() as i64);
    while low + 1 < high {
        let mid = (low + high) / 2;
        if src[mid as usize] <= val {
            low = mid;
        } else {
            high = mid;
        }
    }
    low
}

/// Sorts the fewer than `N` values of `arr` with a bitonic network over `N` slots padded with
/// `i32::MAX` (GTaP's `sort_small_device`, `N` = the sort cutoff).
#[inline(always)]
pub fn sort_small<const N: usize>(arr: &mut [i32]) {
    let mut buf = [i32::MAX; N];
    for (slot, v) in buf.iter_mut().zip(arr.iter()) {
        *slot = *v;
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
    for (v, slot) in arr.iter_mut().zip(buf.iter()) {
        *v = *slot;
    }
}

/// Where a parallel merge splits the shorter input `short` when the longer input `long`
/// (non-empty) is split after its first `ceil(long.len() / 2)` values: the number of `short`'s
/// values that go left.
#[inline(always)]
pub fn merge_split(long: &[i32], short: &[i32]) -> usize {
    (binary_search(short, long[long.len().div_ceil(2) - 1]) + 1) as usize
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

/// Copies `src` to the front of `dst`.
#[inline(always)]
fn copy(src: &[i32], dst: &mut [i32]) {
    for (i, &v) in src.iter().enumerate() {
        dst[i] = v;
    }
}

/// A merge task's ranges: two sorted inputs and the range they are merged into.
type MergeRanges = (SliceMut<i32>, SliceMut<i32>, SliceMut<i32>);

/// A merge task's work before its children: merges `a` and `b` into `dst` when the inputs are
/// shorter than `cutoff` together (or one is empty) and returns `None`, else splits the three
/// ranges for two child merges (the longer input at its middle, the other by binary search).
///
/// A function of its own, so that the views it reads exist only here: a local of a task
/// function whose method is called (`len`) stays in the record across the wait.
///
/// # Safety
/// The ranges are the calling task's: disjoint from each other and from every range another
/// running task uses (what the sort's task graph ensures: the parent passes disjoint ranges and
/// does not touch them until the task and its children are finished).
#[inline(always)]
unsafe fn merge_or_split(
    a: SliceMut<i32>,
    b: SliceMut<i32>,
    dst: SliceMut<i32>,
    cutoff: u32,
) -> Option<[MergeRanges; 2]> {
    let (long, short) = if a.len() < b.len() { (b, a) } else { (a, b) };
    if short.is_empty() || long.len() + short.len() < cutoff as usize {
        // SAFETY: per the contract.
        let (long, short, mut dst) = unsafe { (long.claim(), short.claim(), dst.claim()) };
        if short.is_empty() {
            copy(&long, &mut dst);
        } else {
            merge(&long, &short, &mut dst);
        }
        return None;
    }
    let long_split = long.len().div_ceil(2);
    let short_split = {
        // SAFETY: per the contract; read before any child runs.
        let (long, short) = unsafe { (long.claim(), short.claim()) };
        merge_split(&long, &short)
    };
    let (long1, long2) = long.split_at(long_split);
    let (short1, short2) = short.split_at(short_split);
    let (dst1, dst2) = dst.split_at(long_split + short_split);
    Some([(long1, short1, dst1), (long2, short2, dst2)])
}

/// Merges the sorted `a` and `b` into `dst` (as long as both).
///
/// The three ranges are the task's own: the parent passes disjoint ranges and does not touch
/// them until this task and its children are finished.
#[gtap::function]
pub fn cilkmerge(a: SliceMut<i32>, b: SliceMut<i32>, dst: SliceMut<i32>) {
    // SAFETY: the task's own ranges (above).
    let Some([(a1, b1, dst1), (a2, b2, dst2)]) =
        (unsafe { merge_or_split(a, b, dst, MERGE_CUTOFF) })
    else {
        return;
    };
    gtap::task!(cilkmerge(a1, b1, dst1));
    gtap::task!(cilkmerge(a2, b2, dst2));
    gtap::taskwait!();
}

/// Sorts `data`, using `tmp` (as long) as scratch.
///
/// Both ranges are the task's own: its children get disjoint quarters of them, and each wait
/// ends the children that used them before the next step passes them on again.
#[gtap::function]
pub fn cilksort(data: SliceMut<i32>, tmp: SliceMut<i32>) {
    let n = data.len() as u32;
    if n < SORT_CUTOFF {
        // SAFETY: the task's own range (above).
        sort_small::<{ SORT_CUTOFF as usize }>(&mut unsafe { data.claim() });
        return;
    }
    let [d1, d2, d3, d4] = quartered(data);
    let [t1, t2, t3, t4] = quartered(tmp);
    gtap::task!(cilksort(d1, t1));
    gtap::task!(cilksort(d2, t2));
    gtap::task!(cilksort(d3, t3));
    gtap::task!(cilksort(d4, t4));
    gtap::taskwait!();
    let [d1, d2, d3, d4] = quartered(data);
    let (t12, t34) = halved(tmp);
    gtap::task!(cilkmerge(d1, d2, t12));
    gtap::task!(cilkmerge(d3, d4, t34));
    gtap::taskwait!();
    let (t12, t34) = halved(tmp);
    gtap::task!(cilkmerge(t12, t34, data));
    gtap::taskwait!();
}

/// A view split into cilksort's quarters ([`quarters`]).
#[inline(always)]
fn quartered(v: SliceMut<i32>) -> [SliceMut<i32>; 4] {
    let (len1, len2, len3, _) = quarters(v.len() as u32);
    let (v12, v34) = v.split_at((len1 + len2) as usize);
    let (v1, v2) = v12.split_at(len1 as usize);
    let (v3, v4) = v34.split_at(len3 as usize);
    [v1, v2, v3, v4]
}

/// A view split into cilksort's halves: its first two quarters (`n / 2` values, see
/// [`quarters`]) and its last two.
#[inline(always)]
fn halved(v: SliceMut<i32>) -> (SliceMut<i32>, SliceMut<i32>) {
    let half = v.len() / 2;
    v.split_at(half)
}

/// Root kernel of [`cilksort`]: sorts `data` (at most `u32::MAX` values) using `tmp` (as long).
/// The host passes two distinct buffers that nothing else reaches during the launch. Compiled
/// for any queue count: `queues = 1` measured no faster (`bench/NOTES.md`). At most 3 blocks a
/// multiprocessor, not the 4 its registers allow: 3.4 % faster capped than uncapped on an H200
/// (entry 105).
#[gtap::kernel(max_blocks_per_sm = 3)]
pub fn cilksort_kernel(data: SliceMut<i32>, tmp: SliceMut<i32>) {
    gtap::entry!(cilksort(data, tmp))
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
pub fn cilkmerge_epaq(a: SliceMut<i32>, b: SliceMut<i32>, dst: SliceMut<i32>) {
    // SAFETY: the task's own ranges (see `cilkmerge`).
    let Some([(a1, b1, dst1), (a2, b2, dst2)]) =
        (unsafe { merge_or_split(a, b, dst, EPAQ_CUTOFF) })
    else {
        return;
    };
    // By value: a borrowed local would stay in the record across the wait.
    let small = |dst: SliceMut<i32>| dst.len() < EPAQ_CUTOFF as usize;
    let (small1, small2) = (small(dst1), small(dst2));
    gtap::task!(queue(epaq_queue(small1, 2)), cilkmerge_epaq(a1, b1, dst1));
    gtap::task!(queue(epaq_queue(small2, 2)), cilkmerge_epaq(a2, b2, dst2));
    gtap::taskwait!();
}

/// [`cilksort`] with cutoff [`EPAQ_CUTOFF`]; sequential sorts go to queue 1, sequential merges
/// to queue 2.
#[gtap::function]
pub fn cilksort_epaq(data: SliceMut<i32>, tmp: SliceMut<i32>) {
    let n = data.len() as u32;
    if n < EPAQ_CUTOFF {
        // SAFETY: the task's own range (see `cilksort`).
        sort_small::<{ EPAQ_CUTOFF as usize }>(&mut unsafe { data.claim() });
        return;
    }
    let (len1, len2, len3, len4) = quarters(n);
    let (len12, len34) = (len1 + len2, len3 + len4);
    let [d1, d2, d3, d4] = quartered(data);
    let [t1, t2, t3, t4] = quartered(tmp);
    gtap::task!(
        queue(epaq_queue(len1 < EPAQ_CUTOFF, 1)),
        cilksort_epaq(d1, t1)
    );
    gtap::task!(
        queue(epaq_queue(len2 < EPAQ_CUTOFF, 1)),
        cilksort_epaq(d2, t2)
    );
    gtap::task!(
        queue(epaq_queue(len3 < EPAQ_CUTOFF, 1)),
        cilksort_epaq(d3, t3)
    );
    gtap::task!(
        queue(epaq_queue(len4 < EPAQ_CUTOFF, 1)),
        cilksort_epaq(d4, t4)
    );
    gtap::taskwait!();
    let [d1, d2, d3, d4] = quartered(data);
    let (t12, t34) = halved(tmp);
    let (len12, len34) = (len12 < EPAQ_CUTOFF, len34 < EPAQ_CUTOFF);
    gtap::task!(queue(epaq_queue(len12, 2)), cilkmerge_epaq(d1, d2, t12));
    gtap::task!(queue(epaq_queue(len34, 2)), cilkmerge_epaq(d3, d4, t34));
    gtap::taskwait!();
    let (t12, t34) = halved(tmp);
    gtap::task!(
        queue(epaq_queue(data.len() < EPAQ_CUTOFF as usize, 2)),
        cilkmerge_epaq(t12, t34, data)
    );
    gtap::taskwait!();
}

/// Root kernel of [`cilksort_epaq`] for any queue count (the host passes buffers as to
/// [`cilksort_kernel`]).
#[gtap::kernel]
pub fn cilksort_epaq_kernel(data: SliceMut<i32>, tmp: SliceMut<i32>) {
    gtap::entry!(cilksort_epaq(data, tmp))
}

/// [`cilksort_epaq_kernel`] compiled for 1 queue, as GTaP builds `cilksort_epaq` with
/// `GTAP_NUM_QUEUES=1`. At most 3 blocks a multiprocessor, as [`cilksort_kernel`] (2.2 to
/// 2.6 % faster capped than uncapped on two H200s, entries 104-105).
#[gtap::kernel(queues = 1, max_blocks_per_sm = 3)]
pub fn cilksort_epaq_q1_kernel(data: SliceMut<i32>, tmp: SliceMut<i32>) {
    gtap::entry!(cilksort_epaq(data, tmp))
}

/// [`cilksort_epaq_kernel`] compiled for 3 queues, as GTaP builds `cilksort_epaq` with
/// `GTAP_NUM_QUEUES=3`. At most 3 blocks a multiprocessor, as [`cilksort_kernel`] (3.0 to
/// 3.7 % faster capped than uncapped on two H200s, entries 104-105).
#[gtap::kernel(queues = 3, max_blocks_per_sm = 3)]
pub fn cilksort_epaq_q3_kernel(data: SliceMut<i32>, tmp: SliceMut<i32>) {
    gtap::entry!(cilksort_epaq(data, tmp))
}
