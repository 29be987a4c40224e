//! `max_registers = R` caps a kernel's registers per thread: an integer literal from 16 to 255,
//! given once, on a kernel only.

#[gtap::function]
fn leaf(n: u32) -> u32 {
    n
}

#[gtap::kernel(max_registers = 8)]
fn too_few(n: u32) -> u32 {
    gtap::entry!(leaf(n))
}

#[gtap::kernel(max_registers = "64")]
fn not_a_number(n: u32) -> u32 {
    gtap::entry!(leaf(n))
}

#[gtap::kernel(max_registers = 64, max_registers = 96)]
fn twice(n: u32) -> u32 {
    gtap::entry!(leaf(n))
}

#[gtap::function(max_registers = 64)]
fn on_a_function(n: u32) -> u32 {
    n
}

fn main() {}
