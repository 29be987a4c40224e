//! A kernel mixes no modes: thread-mode code cannot spawn or enter a block-mode task function,
//! nor block-mode code a thread-mode one (the `ThreadTask`/`BlockTask` bounds).

#[gtap::function(block)]
fn per_block(block: &gtap::Block, n: u32) -> u32 {
    let mut x = 0;
    if block.thread_index() == 0 {
        gtap::task!(x = per_thread(n));
    }
    gtap::taskwait!();
    x
}

#[gtap::function]
fn per_thread(n: u32) -> u32 {
    let mut x = 0;
    gtap::task!(x = per_block(n));
    gtap::taskwait!();
    x
}

#[gtap::kernel]
fn thread_kernel(n: u32) -> u32 {
    gtap::entry!(per_block(n))
}

#[gtap::kernel(block = 64)]
fn block_kernel(n: u32) -> u32 {
    gtap::entry!(per_thread(n))
}

fn main() {}
