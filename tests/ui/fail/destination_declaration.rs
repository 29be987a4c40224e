//! Rule 4, from the borrow checker: a destination is declared `mut` and initialised (the child
//! writes through a pointer to it).

#[gtap::function]
fn fib(n: u32) -> u64 {
    let a = 0;
    let b: u64;
    gtap::task!(a = fib(n - 1));
    gtap::task!(b = fib(n - 2));
    gtap::taskwait!();
    a + b
}

fn main() {}
