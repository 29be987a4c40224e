//! Divide and conquer over a `gtap::Part` without `unsafe` in task functions: a parent lends
//! the halves of its part to two children, which hand them back as their results; after the
//! wait the `Loan` joins them and the parent works on the whole again. Shared `Slice`s split
//! alongside.

include!("../support/cpu.rs");

use gtap::{Part, Slice, SliceMut};

/// Sets every value of `part` to twice the matching value of `from` plus one, in parallel
/// halves; returns the part and the sum of its values.
#[gtap::function]
fn fill(mut part: Part<u64>, from: Slice<u64>) -> (Part<u64>, u64) {
    if part.len() <= 2 {
        for (v, f) in part.iter_mut().zip(from.iter()) {
            *v = f * 2 + 1;
        }
        let sum = part.iter().sum();
        return (part, sum);
    }
    let mid = part.len() / 2;
    let (left, right, loan) = part.lend(mid);
    let (from_left, from_right) = from.split_at(mid);
    let (mut l, mut r) = ((Part::empty(), 0), (Part::empty(), 0));
    gtap::task!(l = fill(left, from_left));
    gtap::task!(r = fill(right, from_right));
    gtap::taskwait!();
    let mut whole = loan.join(l.0, r.0);
    // The parent owns the whole again: reverse it twice.
    whole.reverse();
    whole.reverse();
    (whole, l.1 + r.1)
}

#[gtap::function]
fn root(data: Part<u64>, from: Slice<u64>) -> u64 {
    let n = data.len();
    let mut out = (Part::empty(), 0);
    gtap::task!(out = fill(data, from.range(..n)));
    gtap::taskwait!();
    let (part, sum) = out;
    assert_eq!(part.iter().sum::<u64>(), sum);
    assert_eq!(part[n - 1], from[n - 1] * 2 + 1);
    sum
}

#[gtap::kernel]
fn fill_kernel(data: SliceMut<u64>, from: Slice<u64>) -> u64 {
    // SAFETY: `main` passes distinct buffers and nothing else reaches `data`.
    let data = unsafe { data.claim() };
    gtap::entry!(root(data, from))
}

fn main() {
    let from: Vec<u64> = (0..20).collect();
    let mut data = vec![0u64; 13];
    // SAFETY: both vectors outlive every launch; `from` is not modified, and `data` is only
    // reached through the kernel.
    let (data_view, from_view) = unsafe {
        (
            SliceMut::from_raw_parts(data.as_mut_ptr(), data.len()),
            Slice::from_raw_parts(from.as_ptr(), from.len()),
        )
    };
    let sum = cpu::run(fill_kernel, (data_view, from_view));
    assert_eq!(sum, (0..13u64).map(|v| v * 2 + 1).sum::<u64>());
    assert_eq!(data, (0..13u64).map(|v| v * 2 + 1).collect::<Vec<_>>());
}
