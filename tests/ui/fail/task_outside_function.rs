//! Rule 1: `task!` and `taskwait!` only inside a `#[gtap::function]`.

#[gtap::function]
fn fib(n: u32) -> u64 {
    n as u64
}

fn not_a_task_function(n: u32) -> u64 {
    let mut a = 0;
    gtap::task!(a = fib(n));
    gtap::taskwait!();
    a
}

fn main() {}
