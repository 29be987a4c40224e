//! A block-mode task function takes the block as its first parameter, and its arguments are
//! `Copy` (every thread of the block starts from them); a block-mode kernel names its block size,
//! a multiple of 32 up to 1024.

#[gtap::function(block)]
fn no_block(n: u32) -> u32 {
    n
}

#[gtap::function(block)]
fn not_copy(block: &gtap::Block, v: String) -> u32 {
    block.size() + v.len() as u32
}

#[gtap::kernel(block = 100)]
fn odd_block(n: u32) -> u32 {
    gtap::entry!(no_block(n))
}

#[gtap::kernel(block)]
fn no_size(n: u32) -> u32 {
    gtap::entry!(no_block(n))
}

fn main() {}
