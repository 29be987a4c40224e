//! Rule 3, from the type checker: the spawned path must name a task function.

fn helper(n: u32) -> u64 {
    n as u64
}

#[gtap::function]
fn fib(n: u32) -> u64 {
    let mut a = 0;
    gtap::task!(a = helper(n));
    gtap::taskwait!();
    a
}

fn main() {}
