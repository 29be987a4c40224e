//! Rule 4: a child's result must land in the task's own record, not behind a pointer.

#[gtap::function]
fn fib(n: u32, out: *mut u64) -> u64 {
    gtap::task!(*out = fib(n - 1, out));
    gtap::taskwait!();
    0
}

fn main() {}
