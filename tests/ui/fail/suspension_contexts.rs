//! Rule 8: `task!`/`taskwait!` in a closure, an `async` block or a nested function of a task
//! function; `.await` anywhere in a task function.

use core::future::Future;

#[gtap::function]
fn fib(n: u32) -> u64 {
    let mut a = 0;
    gtap::task!(a = fib(n - 1));
    let wait = || gtap::taskwait!();
    wait();
    let later = async {
        gtap::taskwait!();
    };
    drop(later);
    fn helper(n: u32) -> u64 {
        let mut b = 0;
        gtap::task!(b = fib(n));
        b
    }
    gtap::taskwait!();
    a + helper(n)
}

#[gtap::function]
fn awaits(n: u32, f: fn() -> core::future::Ready<u64>) -> u64 {
    let _ = n;
    let fut = f();
    let _: &dyn Future<Output = u64> = &fut;
    fut.await
}

fn main() {}
