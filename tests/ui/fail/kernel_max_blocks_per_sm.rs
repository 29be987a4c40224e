//! `max_blocks_per_sm = N` caps the blocks a multiprocessor a kernel's launches use: an integer
//! literal from 1 to 32, given once, on a kernel only.

#[gtap::function]
fn leaf(n: u32) -> u32 {
    n
}

#[gtap::kernel(max_blocks_per_sm = 0)]
fn none(n: u32) -> u32 {
    gtap::entry!(leaf(n))
}

#[gtap::kernel(max_blocks_per_sm = 33)]
fn too_many(n: u32) -> u32 {
    gtap::entry!(leaf(n))
}

#[gtap::kernel(max_blocks_per_sm = 4, max_blocks_per_sm = 2)]
fn twice(n: u32) -> u32 {
    gtap::entry!(leaf(n))
}

#[gtap::function(max_blocks_per_sm = 4)]
fn on_a_function(n: u32) -> u32 {
    n
}

fn main() {}
