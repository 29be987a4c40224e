//! Rule 3: a task-function call nested as an argument of the spawn.

#[gtap::function]
fn fib(n: u32) -> u64 {
    let mut x = 0;
    gtap::task!(x = fib(fib(n - 1) as u32));
    gtap::taskwait!();
    x
}

fn main() {}
