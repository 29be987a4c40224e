//! Structs as parameters: a `#[derive(gtap::KernelArg)]` struct of scalars and views (and one
//! nested in another) as a kernel parameter, and a plain `Copy` struct as a task function's
//! parameter and result; the kernel sees every field intact. More than eight kernel parameters.

include!("../support/cpu.rs");

use gtap::{Slice, SliceMut};

#[derive(Clone, Copy, Debug, PartialEq, gtap::KernelArg)]
#[repr(C)]
struct Scale {
    factor: u8,
    offset: f64,
}

#[derive(Clone, Copy, gtap::KernelArg)]
#[repr(C)]
struct Problem {
    flag: bool,
    values: Slice<u32>,
    scale: Scale,
    count: SliceMut<u64>,
    last: i16,
}

/// A task argument needs no derive: any `'static` value travels in the task record.
#[derive(Clone, Copy)]
struct Range {
    lo: usize,
    hi: usize,
}

#[gtap::function]
fn sum(values: Slice<u32>, range: Range) -> u64 {
    if range.hi - range.lo <= 2 {
        return values[range.lo..range.hi].iter().map(|&v| v as u64).sum();
    }
    let mid = (range.lo + range.hi) / 2;
    let (mut a, mut b) = (0, 0);
    gtap::task!(a = sum(values, Range { lo: range.lo, hi: mid }));
    gtap::task!(b = sum(values, Range { lo: mid, hi: range.hi }));
    gtap::taskwait!();
    a + b
}

#[gtap::function]
fn check(p: Problem) -> (u64, Scale, i16, bool) {
    let mut total = 0;
    gtap::task!(total = sum(p.values, Range { lo: 0, hi: p.values.len() }));
    gtap::taskwait!();
    p.count.atomic_add(0, 1);
    (total, p.scale, p.last, p.flag)
}

#[gtap::kernel]
fn struct_kernel(p: Problem) -> (u64, Scale, i16, bool) {
    gtap::entry!(check(p))
}

#[gtap::function]
fn add(a: u32, b: u32) -> u32 {
    a + b
}

#[gtap::kernel]
#[allow(clippy::too_many_arguments)]
fn many_kernel(a: u32, b: u32, c: u32, d: u32, e: u32, f: u32, g: u32, h: u32, i: u32, j: u32) -> u32 {
    gtap::entry!(add(a + b + c + d + e, f + g + h + i + j))
}

fn main() {
    let values: Vec<u32> = (1..=11).collect();
    let mut count = [0u64];
    // SAFETY: both outlive every launch; `values` is not modified and `count` is only reached
    // through the kernel's atomics.
    let (values_view, count_view) = unsafe {
        (
            Slice::from_raw_parts(values.as_ptr(), values.len()),
            SliceMut::from_raw_parts(count.as_mut_ptr(), 1),
        )
    };
    let scale = Scale { factor: 7, offset: -2.5 };
    let p = Problem {
        flag: true,
        values: values_view,
        scale,
        count: count_view,
        last: -300,
    };
    assert_eq!(cpu::run(struct_kernel, (p,)), (66, scale, -300, true));
    assert_eq!(count[0], 5, "one root per launch, five launches");
    assert_eq!(cpu::run(many_kernel, (1, 2, 3, 4, 5, 6, 7, 8, 9, 10)), 55);
}
