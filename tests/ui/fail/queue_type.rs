//! Rule 7: a queue expression of a non-integer type fails the `QueueIndex` bound.

#[gtap::function]
fn fib(n: u32, weight: f32) -> u64 {
    let mut a = 0;
    gtap::task!(queue(weight), a = fib(n - 1, weight));
    gtap::taskwait!();
    a
}

fn main() {}
