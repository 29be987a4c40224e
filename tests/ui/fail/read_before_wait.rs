//! Rule 5: a destination is not used before the wait that joins its child, in code or in
//! other macros' arguments (format strings included).

#[gtap::function]
fn fib(n: u32) -> u64 {
    let (mut a, mut b, mut c) = (0, 0, 0);
    gtap::task!(a = fib(n - 1));
    let early = a + 1;
    gtap::task!(b = fib(n - 2));
    assert!(b < 100);
    gtap::task!(c = fib(n - 3));
    let _ = format_args!("{c}");
    gtap::taskwait!();
    a + b + c + early
}

fn main() {}
