//! The documentation's fib: both queue clauses, a doc comment, the expression form of
//! `entry!`. Run on the CPU executor.

include!("../support/cpu.rs");

/// Fibonacci numbers, two children per call.
#[gtap::function]
pub fn fib(n: u32) -> u64 {
    if n < 2 {
        return n as u64;
    }
    let (mut a, mut b) = (0, 0);
    gtap::task!(a = fib(n - 1));
    gtap::task!(queue(1), b = fib(n - 2));
    gtap::taskwait!(queue(n % 2));
    a + b
}

/// Starts `fib(n)`.
#[gtap::kernel]
pub fn fib_kernel(n: u32) -> u64 {
    gtap::entry!(fib(n))
}

fn main() {
    assert_eq!(cpu::run(fib_kernel, (20,)), 6765);
}
