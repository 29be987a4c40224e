//! Rules 9 and 10: kernels follow the same signature rules, take at most 16 parameters, and
//! only kernel-argument types.

#[gtap::function]
fn leaf(n: u32) -> u64 {
    n as u64
}

#[gtap::kernel]
async fn k_async(n: u32) -> u64 {
    gtap::entry!(leaf(n))
}

#[gtap::kernel]
fn k_generic<T>(n: u32, t: T) -> u64 {
    gtap::entry!(leaf(n))
}

#[gtap::kernel]
fn k_borrowed(n: &u32) -> u64 {
    gtap::entry!(leaf(*n))
}

#[gtap::kernel]
#[rustfmt::skip]
fn k_many(a: u32, b: u32, c: u32, d: u32, e: u32, f: u32, g: u32, h: u32, i: u32, j: u32, k: u32, l: u32, m: u32, n: u32, o: u32, p: u32, q: u32) -> u64 {
    gtap::entry!(leaf(a + b + c + d + e + f + g + h + i + j + k + l + m + n + o + p + q))
}

#[gtap::kernel]
fn k_str(n: u32, name: &'static str) -> u64 {
    let _ = name;
    gtap::entry!(leaf(n))
}

fn main() {}
