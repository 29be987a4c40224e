//! Rule 9: no `impl Trait`, and nothing borrowed that is not `'static`: arguments are stored in
//! the child's record and results written into the parent's.

struct View<'a>(&'a [u64]);

#[gtap::function]
fn a(n: impl Into<u64>) -> u64 {
    n.into()
}

#[gtap::function]
fn b(n: u32) -> impl Copy {
    n
}

#[gtap::function]
fn c(data: &[u64], i: usize) -> u64 {
    data[i]
}

#[gtap::function]
fn d<'a>(data: &'a [u64]) -> &'a u64 {
    &data[0]
}

#[gtap::function]
fn e(view: View<'_>) -> u64 {
    view.0[0]
}

// Accepted: 'static data and raw pointers.
#[gtap::function]
fn f(data: &'static [u64], p: *const u64) -> u64 {
    data[0] + p as u64
}

fn main() {}
