//! Rule 4: destinations are places rooted at a local or parameter: not statics, paths, or
//! expressions that are not places.

static mut TOTAL: u64 = 0;

mod m {
    pub static mut X: u64 = 0;
}

struct Pair(u64, u64);

fn pair() -> Pair {
    Pair(0, 0)
}

#[gtap::function]
fn fib(n: u32) -> u64 {
    gtap::task!(TOTAL = fib(n - 1));
    gtap::task!(m::X = fib(n - 1));
    gtap::task!(pair().0 = fib(n - 2));
    gtap::taskwait!();
    0
}

fn main() {}
