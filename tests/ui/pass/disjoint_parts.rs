//! Reading or writing a part of a variable that a pending child does not write: `pair.1` while
//! a child writes `pair.0`, `r[1]` while one writes `r[0]`; and children writing elements whose
//! indices the macro cannot compare (`r[i]`, then `i += 1`, then `r[i]`).

include!("../support/cpu.rs");

#[gtap::function]
fn fib(n: u32) -> u64 {
    if n < 2 {
        return n as u64;
    }
    let mut pair = (0u64, n as u64);
    gtap::task!(pair.0 = fib(n - 1));
    let second = pair.1;
    pair.1 += 1;
    let mut r = [0u64; 3];
    gtap::task!(r[0] = fib(n - 2));
    r[1] = second;
    let mut i = 1;
    gtap::task!(r[i] = fib(n - 2));
    i += 1;
    gtap::task!(r[i] = fib(n - 2));
    gtap::taskwait!();
    pair.0 + r[0] + r[1] + r[2] - 2 * r[0] + (pair.1 - second - 1)
}

#[gtap::kernel]
fn fib_kernel(n: u32) -> u64 {
    gtap::entry!(fib(n))
}

fn main() {
    assert_eq!(cpu::run(fib_kernel, (15,)), 610);
}
