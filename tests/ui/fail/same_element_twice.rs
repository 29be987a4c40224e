//! Rule 5: two children writing the same array element before a wait, where the macro can tell:
//! the same literal index, or the same index variable bound without `mut`.

#[gtap::function]
fn fib(n: u32) -> u64 {
    if n < 2 {
        return n as u64;
    }
    let mut r = [0u64; 2];
    gtap::task!(r[0] = fib(n - 1));
    gtap::task!(r[0] = fib(n - 2));
    gtap::taskwait!();
    for k in 0..2 {
        gtap::task!(r[k] = fib(n - 1));
        gtap::task!(r[k] = fib(n - 2));
        gtap::taskwait!();
    }
    r[0] + r[1]
}

fn main() {}
