//! Rule 9: a task function is a plain free function.

#[gtap::function]
async fn a(n: u32) -> u64 {
    n as u64
}

#[gtap::function]
const fn b(n: u32) -> u64 {
    n as u64
}

#[gtap::function]
unsafe fn c(n: u32) -> u64 {
    n as u64
}

#[gtap::function]
extern "C" fn d(n: u32) -> u64 {
    n as u64
}

#[gtap::function]
fn e<T: Copy>(n: T) -> T {
    n
}

struct S;

impl S {
    #[gtap::function]
    fn f(&self, n: u32) -> u64 {
        n as u64
    }
}

fn main() {}
