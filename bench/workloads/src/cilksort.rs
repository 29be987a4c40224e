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
//! Every task owns the ranges it reads and writes as [`Part`]s and hands them back in its
//! result ([`Sorted`], [`Merged`]); the parent joins the returned halves with the
//! [`Loan`](gtap::Loan)s it kept, so no task function needs `unsafe`.

use gtap::{Part, SliceMut};

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

/// A sorted range and its scratch range, handed back to the parent that lent them.
#[derive(Default)]
pub struct Sorted {
    /// The sorted values.
    pub data: Part<i32>,
    /// The scratch values, as long.
    pub tmp: Part<i32>,
}

/// The two inputs of a merge and the range they were merged into, handed back to the parent.
#[derive(Default)]
pub struct Merged {
    /// The first input, as passed.
    pub a: Part<i32>,
    /// The second input, as passed.
    pub b: Part<i32>,
    /// The merged values.
    pub dst: Part<i32>,
}

impl Merged {
    /// The parts in the order the parent passed them, from the longer and shorter input.
    #[inline(always)]
    fn back(swapped: bool, long: Part<i32>, short: Part<i32>, dst: Part<i32>) -> Self {
        let (a, b) = if swapped {
            (short, long)
        } else {
            (long, short)
        };
        Self { a, b, dst }
    }
}

/// Copies `src` to the front of `dst`.
#[inline(always)]
fn copy(src: &[i32], dst: &mut [i32]) {
    for (i, &v) in src.iter().enumerate() {
        dst[i] = v;
    }
}

/// Merges the sorted `a` and `b` into `dst` (as long as both) and hands all three back.
#[gtap::function]
pub fn cilkmerge(a: Part<i32>, b: Part<i32>, mut dst: Part<i32>) -> Merged {
    let swapped = a.len() < b.len();
    let (long, short) = if swapped { (b, a) } else { (a, b) };
    if short.is_empty() {
        copy(&long, &mut dst);
        return Merged::back(swapped, long, short, dst);
    }
    if long.len() + short.len() < MERGE_CUTOFF as usize {
        merge(&long, &short, &mut dst);
        return Merged::back(swapped, long, short, dst);
    }
    let long_split = long.len().div_ceil(2);
    let short_split = merge_split(&long, &short);
    let (long1, long2, long_loan) = long.lend(long_split);
    let (short1, short2, short_loan) = short.lend(short_split);
    let (dst1, dst2, dst_loan) = dst.lend(long_split + short_split);
    let (mut left, mut right) = (Merged::default(), Merged::default());
    gtap::task!(left = cilkmerge(long1, short1, dst1));
    gtap::task!(right = cilkmerge(long2, short2, dst2));
    gtap::taskwait!();
    Merged::back(
        swapped,
        long_loan.join(left.a, right.a),
        short_loan.join(left.b, right.b),
        dst_loan.join(left.dst, right.dst),
    )
}

/// Sorts `data`, using `tmp` (as long) as scratch, and hands both back.
#[gtap::function]
pub fn cilksort(mut data: Part<i32>, tmp: Part<i32>) -> Sorted {
    let n = data.len() as u32;
    if n < SORT_CUTOFF {
        sort_small::<{ SORT_CUTOFF as usize }>(&mut data);
        return Sorted { data, tmp };
    }
    let (len1, len2, len3, _) = quarters(n);
    let (d12, d34, data_loan) = data.lend((len1 + len2) as usize);
    let (d1, d2, d12_loan) = d12.lend(len1 as usize);
    let (d3, d4, d34_loan) = d34.lend(len3 as usize);
    let (t12, t34, tmp_loan) = tmp.lend((len1 + len2) as usize);
    let (t1, t2, t12_loan) = t12.lend(len1 as usize);
    let (t3, t4, t34_loan) = t34.lend(len3 as usize);
    let mut q: [Sorted; 4] = Default::default();
    gtap::task!(q[0] = cilksort(d1, t1));
    gtap::task!(q[1] = cilksort(d2, t2));
    gtap::task!(q[2] = cilksort(d3, t3));
    gtap::task!(q[3] = cilksort(d4, t4));
    gtap::taskwait!();
    let [q1, q2, q3, q4] = q;
    let (mut m12, mut m34) = (Merged::default(), Merged::default());
    gtap::task!(m12 = cilkmerge(q1.data, q2.data, t12_loan.join(q1.tmp, q2.tmp)));
    gtap::task!(m34 = cilkmerge(q3.data, q4.data, t34_loan.join(q3.tmp, q4.tmp)));
    gtap::taskwait!();
    let data = data_loan.join(d12_loan.join(m12.a, m12.b), d34_loan.join(m34.a, m34.b));
    let mut all = Merged::default();
    gtap::task!(all = cilkmerge(m12.dst, m34.dst, data));
    gtap::taskwait!();
    Sorted {
        data: all.dst,
        tmp: tmp_loan.join(all.a, all.b),
    }
}

/// The root task: sorts `data` through [`cilksort`] (a kernel's result must be `Copy`, which
/// the parts that come back are not).
#[gtap::function]
pub fn cilksort_root(data: Part<i32>, tmp: Part<i32>) {
    let mut sorted = Sorted::default();
    gtap::task!(sorted = cilksort(data, tmp));
    gtap::taskwait!();
    // The parts handed back end here: the kernel returns nothing.
    let _ = sorted;
}

/// Root kernel of [`cilksort`]: sorts `data` (at most `u32::MAX` values) using `tmp` (as long).
#[gtap::kernel]
pub fn cilksort_kernel(data: SliceMut<i32>, tmp: SliceMut<i32>) {
    // SAFETY: the host passes two distinct buffers and nothing else reaches them.
    let (data, tmp) = unsafe { (data.claim(), tmp.claim()) };
    gtap::entry!(cilksort_root(data, tmp))
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
pub fn cilkmerge_epaq(a: Part<i32>, b: Part<i32>, mut dst: Part<i32>) -> Merged {
    let swapped = a.len() < b.len();
    let (long, short) = if swapped { (b, a) } else { (a, b) };
    if short.is_empty() {
        copy(&long, &mut dst);
        return Merged::back(swapped, long, short, dst);
    }
    if long.len() + short.len() < EPAQ_CUTOFF as usize {
        merge(&long, &short, &mut dst);
        return Merged::back(swapped, long, short, dst);
    }
    let long_split = long.len().div_ceil(2);
    let short_split = merge_split(&long, &short);
    let small1 = long_split + short_split < EPAQ_CUTOFF as usize;
    let small2 = long.len() + short.len() - long_split - short_split < EPAQ_CUTOFF as usize;
    let (long1, long2, long_loan) = long.lend(long_split);
    let (short1, short2, short_loan) = short.lend(short_split);
    let (dst1, dst2, dst_loan) = dst.lend(long_split + short_split);
    let (mut left, mut right) = (Merged::default(), Merged::default());
    gtap::task!(
        queue(epaq_queue(small1, 2)),
        left = cilkmerge_epaq(long1, short1, dst1)
    );
    gtap::task!(
        queue(epaq_queue(small2, 2)),
        right = cilkmerge_epaq(long2, short2, dst2)
    );
    gtap::taskwait!();
    Merged::back(
        swapped,
        long_loan.join(left.a, right.a),
        short_loan.join(left.b, right.b),
        dst_loan.join(left.dst, right.dst),
    )
}

/// [`cilksort`] with cutoff [`EPAQ_CUTOFF`]; sequential sorts go to queue 1, sequential merges
/// to queue 2.
#[gtap::function]
pub fn cilksort_epaq(mut data: Part<i32>, tmp: Part<i32>) -> Sorted {
    let n = data.len() as u32;
    if n < EPAQ_CUTOFF {
        sort_small::<{ EPAQ_CUTOFF as usize }>(&mut data);
        return Sorted { data, tmp };
    }
    let (len1, len2, len3, len4) = quarters(n);
    let (len12, len34) = (len1 + len2, len3 + len4);
    let (d12, d34, data_loan) = data.lend(len12 as usize);
    let (d1, d2, d12_loan) = d12.lend(len1 as usize);
    let (d3, d4, d34_loan) = d34.lend(len3 as usize);
    let (t12, t34, tmp_loan) = tmp.lend(len12 as usize);
    let (t1, t2, t12_loan) = t12.lend(len1 as usize);
    let (t3, t4, t34_loan) = t34.lend(len3 as usize);
    let mut q: [Sorted; 4] = Default::default();
    gtap::task!(
        queue(epaq_queue(len1 < EPAQ_CUTOFF, 1)),
        q[0] = cilksort_epaq(d1, t1)
    );
    gtap::task!(
        queue(epaq_queue(len2 < EPAQ_CUTOFF, 1)),
        q[1] = cilksort_epaq(d2, t2)
    );
    gtap::task!(
        queue(epaq_queue(len3 < EPAQ_CUTOFF, 1)),
        q[2] = cilksort_epaq(d3, t3)
    );
    gtap::task!(
        queue(epaq_queue(len4 < EPAQ_CUTOFF, 1)),
        q[3] = cilksort_epaq(d4, t4)
    );
    gtap::taskwait!();
    let [q1, q2, q3, q4] = q;
    let (mut m12, mut m34) = (Merged::default(), Merged::default());
    gtap::task!(
        queue(epaq_queue(len12 < EPAQ_CUTOFF, 2)),
        m12 = cilkmerge_epaq(q1.data, q2.data, t12_loan.join(q1.tmp, q2.tmp))
    );
    gtap::task!(
        queue(epaq_queue(len34 < EPAQ_CUTOFF, 2)),
        m34 = cilkmerge_epaq(q3.data, q4.data, t34_loan.join(q3.tmp, q4.tmp))
    );
    gtap::taskwait!();
    let data = data_loan.join(d12_loan.join(m12.a, m12.b), d34_loan.join(m34.a, m34.b));
    let mut all = Merged::default();
    gtap::task!(
        queue(epaq_queue(n < EPAQ_CUTOFF, 2)),
        all = cilkmerge_epaq(m12.dst, m34.dst, data)
    );
    gtap::taskwait!();
    Sorted {
        data: all.dst,
        tmp: tmp_loan.join(all.a, all.b),
    }
}

/// The root task of the EPAQ variant: sorts `data` through [`cilksort_epaq`].
#[gtap::function]
pub fn cilksort_epaq_root(data: Part<i32>, tmp: Part<i32>) {
    let mut sorted = Sorted::default();
    gtap::task!(sorted = cilksort_epaq(data, tmp));
    gtap::taskwait!();
    // The parts handed back end here: the kernel returns nothing.
    let _ = sorted;
}

/// Root kernel of [`cilksort_epaq`].
#[gtap::kernel]
pub fn cilksort_epaq_kernel(data: SliceMut<i32>, tmp: SliceMut<i32>) {
    // SAFETY: the host passes two distinct buffers and nothing else reaches them.
    let (data, tmp) = unsafe { (data.claim(), tmp.claim()) };
    gtap::entry!(cilksort_epaq_root(data, tmp))
}
