//! Only `#[gtap::function(block)]` hands out a `gtap::Block`: thread-mode code cannot make one,
//! so it cannot call the block-cooperative helpers.

#[gtap::function]
fn sum(n: u32) -> u32 {
    let block = gtap::Block { _private: () };
    block.sum(n)
}

fn main() {}
