//! The block-cooperative helpers are methods of `gtap::Block`, and only a block-mode task
//! function receives one: a thread-mode task function cannot take one as a parameter (nor make
//! one: `block_token_private.rs`).

#[gtap::function]
fn with_block(block: &gtap::Block, n: u32) -> u32 {
    block.sum(n)
}

fn main() {}
