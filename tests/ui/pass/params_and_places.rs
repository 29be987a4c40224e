//! Parameter patterns (`mut`, tuples), `'static` and raw-pointer parameters, struct results,
//! and destinations that are fields, elements and parameters.

include!("../support/cpu.rs");

#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Stats {
    sum: u64,
    count: u32,
}

struct Buckets {
    totals: [u64; 2],
}

static DATA: [u64; 8] = [1, 2, 3, 4, 5, 6, 7, 8];

#[gtap::function]
fn sum((lo, hi): (usize, usize), data: &'static [u64]) -> Stats {
    if hi - lo == 1 {
        return Stats {
            sum: data[lo],
            count: 1,
        };
    }
    let mid = (lo + hi) / 2;
    let mut halves = (Stats::default(), Stats::default());
    gtap::task!(halves.0 = sum((lo, mid), data));
    gtap::task!(halves.1 = sum((mid, hi), data));
    gtap::taskwait!();
    Stats {
        sum: halves.0.sum + halves.1.sum,
        count: halves.0.count + halves.1.count,
    }
}

#[gtap::function]
fn read(p: *const u64, i: usize) -> u64 {
    // SAFETY: `p` points to `DATA`, which has more than `i` elements.
    unsafe { *p.add(i) }
}

#[gtap::function]
fn places(mut acc: u64, p: *const u64) -> u64 {
    acc += 1;
    let mut b = Buckets { totals: [0; 2] };
    gtap::task!(b.totals[0] = read(p, 0));
    gtap::task!(b.totals[1] = read(p, 1));
    gtap::taskwait!();
    let base = acc;
    gtap::task!(acc = read(p, 7));
    gtap::taskwait!();
    base + acc + b.totals[0] + b.totals[1]
}

#[gtap::kernel]
fn sum_kernel(n: u32) -> Stats {
    gtap::entry!(sum((0, n as usize), &DATA))
}

#[gtap::kernel]
fn places_kernel(start: u64) -> u64 {
    gtap::entry!(places(start, DATA.as_ptr()))
}

fn main() {
    assert_eq!(cpu::run(sum_kernel, (8,)), Stats { sum: 36, count: 8 });
    assert_eq!(cpu::run(places_kernel, (10,)), 11 + 8 + 1 + 2);
}
