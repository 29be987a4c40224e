//! Rule 4, from the type checker: a destination has the task function's result type.

#[gtap::function]
fn fib(n: u32) -> u64 {
    let mut c = 0u32;
    gtap::task!(c = fib(n - 3));
    gtap::taskwait!();
    c as u64
}

fn main() {}
