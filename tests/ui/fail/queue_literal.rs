//! Rule 7: a literal queue index must be a non-negative integer.

#[gtap::function]
fn fib(n: u32) -> u64 {
    let (mut a, mut b, mut c) = (0, 0, 0);
    gtap::task!(queue(1.5), a = fib(n - 1));
    gtap::task!(queue("fast"), b = fib(n - 2));
    gtap::task!(queue(-1), c = fib(n - 3));
    gtap::taskwait!(queue(true));
    a + b + c
}

fn main() {}
