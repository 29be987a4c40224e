//! Rule 5: a `macro_rules!` defined in the body whose expansion reads a destination, invoked
//! before the wait that joins the child writing it.

#[gtap::function]
fn fib(n: u32) -> u64 {
    if n < 2 {
        return n as u64;
    }
    let (mut a, mut b) = (0, 0);
    macro_rules! plus_one {
        () => {
            a + 1
        };
    }
    gtap::task!(a = fib(n - 1));
    let early = plus_one!();
    gtap::task!(b = fib(n - 2));
    gtap::taskwait!();
    a + b + early + plus_one!()
}

fn main() {}
