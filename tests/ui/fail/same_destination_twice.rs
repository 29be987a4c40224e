//! Rule 5: two children writing the same (or overlapping) non-indexed place before a wait.

#[gtap::function]
fn pair(n: u32) -> (u64, u64) {
    (n as u64, 0)
}

#[gtap::function]
fn fib(n: u32) -> u64 {
    let mut a = 0;
    let mut p = (0, 0);
    gtap::task!(a = fib(n - 1));
    gtap::task!(a = fib(n - 2));
    gtap::task!(p.0 = fib(n - 1));
    gtap::task!(p = pair(n));
    gtap::taskwait!();
    let mut total = 0;
    for i in 0..n {
        gtap::task!(total = fib(i));
    }
    gtap::taskwait!();
    a + p.0 + total
}

fn main() {}
