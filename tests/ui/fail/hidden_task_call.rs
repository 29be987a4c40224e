//! Rule 3: `task!` and `entry!` are followed by a direct call by path, optionally assigned;
//! never a call hidden in an expression, a method call, or a compound assignment.

struct S;

impl S {
    fn fib(&self, n: u32) -> u64 {
        n as u64
    }
}

#[gtap::function]
fn fib(n: u32) -> u64 {
    let (mut a, mut b, mut c, mut d, mut e) = (0, 0, 0, 0, 0);
    gtap::task!(a = fib(n - 1) + 1);
    gtap::task!(b = { fib(n - 2) });
    gtap::task!(c = S.fib(n));
    gtap::task!(d += fib(n - 2));
    gtap::task!(e = fib);
    gtap::task!(let f = fib(n));
    gtap::taskwait!();
    a + b + c + d + e
}

#[gtap::kernel]
fn k(n: u32) -> u64 {
    gtap::entry!(fib(n) * 2)
}

fn main() {}
