//! Cilksort without `unsafe`: the same sort as [`super::cilksort`], over [`Part`]s.
//!
//! Every task owns the ranges it reads and writes as parts and hands them back in its result
//! ([`Sorted`], [`Merged`]); the parent joins the returned halves with the
//! [`Loan`](gtap::Loan)s it kept. What a task keeps across a wait (the loans, the results its
//! children write) is saved in its record, so these records are several times the views'
//! (`bench/NOTES.md` entry 29 has both measured). Each group of results lives in a block that
//! ends with the wait that fills it: a local's storage is in the record until its scope ends,
//! so results scoped to the whole body would all be in the record at every wait.

use gtap::{Part, SliceMut};

use super::{MERGE_CUTOFF, SORT_CUTOFF, copy, merge, merge_split, quarters, sort_small};

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

/// Merges the sorted `a` and `b` into `dst` (as long as both) and hands all three back.
#[gtap::function]
pub fn cilkmerge_parts(a: Part<i32>, b: Part<i32>, mut dst: Part<i32>) -> Merged {
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
    gtap::task!(left = cilkmerge_parts(long1, short1, dst1));
    gtap::task!(right = cilkmerge_parts(long2, short2, dst2));
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
pub fn cilksort_parts(mut data: Part<i32>, tmp: Part<i32>) -> Sorted {
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
    let [q1, q2, q3, q4] = {
        let mut q: [Sorted; 4] = Default::default();
        gtap::task!(q[0] = cilksort_parts(d1, t1));
        gtap::task!(q[1] = cilksort_parts(d2, t2));
        gtap::task!(q[2] = cilksort_parts(d3, t3));
        gtap::task!(q[3] = cilksort_parts(d4, t4));
        gtap::taskwait!();
        q
    };
    let (m12, m34) = {
        let (mut m12, mut m34) = (Merged::default(), Merged::default());
        gtap::task!(m12 = cilkmerge_parts(q1.data, q2.data, t12_loan.join(q1.tmp, q2.tmp)));
        gtap::task!(m34 = cilkmerge_parts(q3.data, q4.data, t34_loan.join(q3.tmp, q4.tmp)));
        gtap::taskwait!();
        (m12, m34)
    };
    let data = data_loan.join(d12_loan.join(m12.a, m12.b), d34_loan.join(m34.a, m34.b));
    let mut all = Merged::default();
    gtap::task!(all = cilkmerge_parts(m12.dst, m34.dst, data));
    gtap::taskwait!();
    Sorted {
        data: all.dst,
        tmp: tmp_loan.join(all.a, all.b),
    }
}

/// The root task: sorts `data` through [`cilksort_parts`] (a kernel's result must be `Copy`,
/// which the parts that come back are not).
#[gtap::function]
pub fn cilksort_parts_root(data: Part<i32>, tmp: Part<i32>) {
    let mut sorted = Sorted::default();
    gtap::task!(sorted = cilksort_parts(data, tmp));
    gtap::taskwait!();
    // The parts handed back end here: the kernel returns nothing.
    let _ = sorted;
}

/// Root kernel of [`cilksort_parts`]: sorts `data` (at most `u32::MAX` values) using `tmp` (as
/// long).
#[gtap::kernel(queues = 1)]
pub fn cilksort_parts_kernel(data: SliceMut<i32>, tmp: SliceMut<i32>) {
    // SAFETY: the host passes two distinct buffers and nothing else reaches them.
    let (data, tmp) = unsafe { (data.claim(), tmp.claim()) };
    gtap::entry!(cilksort_parts_root(data, tmp))
}
