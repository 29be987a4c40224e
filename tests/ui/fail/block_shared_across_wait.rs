//! A block's shared memory cannot be held across a wait: it is lent to a closure, which a
//! reference to it cannot leave (and which cannot contain a wait).

#[gtap::function(block)]
fn step(block: &gtap::Block, n: u32) -> u32 {
    let kept = block.shared(|mem: &gtap::SharedMem<u32>| mem);
    kept.store(0, n);
    let mut a = 0;
    if n > 0 && block.thread_index() == 0 {
        gtap::task!(a = step(n - 1));
    }
    gtap::taskwait!();
    kept.load(0) + a
}

fn main() {}
