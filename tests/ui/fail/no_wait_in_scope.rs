//! Rule 6: a wait must follow each spawn while its destination is alive, or the child would
//! write into storage the task no longer owns.

#[gtap::function]
fn fib(n: u32) -> u64 {
    let mut total = 0;
    {
        let mut x = 0;
        gtap::task!(x = fib(n - 1));
        total += 1;
    }
    gtap::taskwait!();
    for i in 0..n {
        let mut y = 0;
        gtap::task!(y = fib(i));
        if i > 3 {
            gtap::taskwait!();
        }
        total += 1;
    }
    for i in 0..n {
        let mut z = 0;
        gtap::task!(z = fib(i));
        if i > 2 {
            break;
        }
        gtap::taskwait!();
        total += z;
    }
    let mut last = 0;
    gtap::task!(last = fib(n - 2));
    total
}

fn main() {}
