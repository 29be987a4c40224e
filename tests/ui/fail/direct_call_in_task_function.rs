//! Rule 2, inside gtap bodies: a known task function called directly is reported by the macro,
//! with no second error from the trap and no follow-up type errors.

#[gtap::function]
fn leaf(n: u32) -> u64 {
    n as u64
}

#[gtap::function]
fn fib(n: u32) -> u64 {
    if n < 2 {
        return leaf(n);
    }
    let mut a = 0;
    gtap::task!(a = leaf(n - 1));
    gtap::taskwait!();
    let b = fib(n - 2);
    a + b + 1
}

#[gtap::kernel]
fn k(n: u32) -> u64 {
    let direct = leaf(n);
    let root = gtap::entry!(leaf(n));
    direct + root
}

fn main() {}
