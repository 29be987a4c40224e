//! Block mode's accepted forms: `#[gtap::function(block)]` with the block first (any pattern),
//! per-thread spawns from every thread, in loops and under conditions, with and without
//! destinations and queue clauses, waits in branches every thread takes, a task that returns
//! with children still running, and the helpers. Run on the CPU executor.

include!("../support/cpu.rs");

/// Counts the nodes of a complete binary tree of `height`, one block per node, thread 0
/// spawning: the result is thread 0's.
#[gtap::function(block)]
pub fn nodes(block: &gtap::Block, height: u32) -> u64 {
    if height == 0 {
        return 1;
    }
    let (mut l, mut r) = (0, 0);
    if block.thread_index() == 0 {
        gtap::task!(l = nodes(height - 1));
        gtap::task!(queue(1), r = nodes(height - 1));
    }
    gtap::taskwait!(queue(height % 2));
    l + r + 1
}

/// Every thread spawns one leaf into its own destination, then the block sums what each got.
#[gtap::function(block)]
pub fn per_thread(b: &gtap::Block, base: u32) -> u32 {
    let mut mine = 0;
    gtap::task!(mine = leaf(base + b.thread_index()));
    gtap::taskwait!();
    let total = b.sum(mine);
    // A wait with no children outstanding anywhere in the block is a no-op.
    gtap::taskwait!();
    total
}

/// A leaf block task: thread 0's value is the task's result.
#[gtap::function(block)]
pub fn leaf(_block: &gtap::Block, v: u32) -> u32 {
    v
}

/// Returns with children still running (the implicit wait), spawned in a loop by some threads
/// and discarded.
#[gtap::function(block)]
pub fn fire_and_forget(block: &gtap::Block, n: u32) -> u32 {
    if block.thread_index() < 2 {
        for i in 0..n {
            gtap::task!(leaf(i));
        }
    }
    block.size()
}

/// Helpers: a broadcast, both scans, the extremes, the lent shared memory.
#[gtap::function(block)]
pub fn helpers(block: &gtap::Block, seed: u64) -> u64 {
    let t = block.thread_index() as u64;
    let v = seed * (t + 1);
    let first = block.broadcast(v, 0);
    let before = block.exclusive_scan(v, 0, |a, b| a + b);
    let upto = block.inclusive_scan(v, |a, b| a + b);
    let prefix = block.prefix_sum(v);
    let (lo, hi) = (block.min(v), block.max(v));
    let squares = block.shared(|mem: &gtap::SharedMem<u64>| {
        mem.store(t as usize, t * t);
        block.sync();
        let other = mem.load((block.size() as usize - 1) - t as usize);
        block.sync();
        other
    });
    let ok = before == prefix && upto == prefix + v && first == seed && lo == seed && hi == seed * block.size() as u64;
    block.min(ok as u64) * 1_000_000 + block.sum(squares)
}

#[gtap::kernel(block = 32, queues = 2)]
pub fn nodes_kernel(height: u32) -> u64 {
    gtap::entry!(nodes(height))
}

#[gtap::kernel(max_registers = 96, block = 64)]
pub fn per_thread_kernel(base: u32) -> u32 {
    gtap::entry!(per_thread(base))
}

#[gtap::kernel(block = 32)]
pub fn fire_kernel(n: u32) -> u32 {
    let size = gtap::entry!(fire_and_forget(n));
    size + 1
}

#[gtap::kernel(no_taskwait, block = 32)]
pub fn fire_detached_kernel(n: u32) -> u32 {
    gtap::entry!(fire_and_forget(n))
}

#[gtap::kernel(block = 32)]
pub fn helpers_kernel(seed: u64) -> u64 {
    gtap::entry!(helpers(seed))
}

fn main() {
    assert_eq!(cpu::run_block(nodes_kernel, 32, (5,)), 63);
    assert_eq!(cpu::run_block(per_thread_kernel, 64, (10,)), (10..74).sum::<u32>());
    assert_eq!(cpu::run_block(fire_kernel, 32, (3,)), 33);
    assert_eq!(cpu::run_block(fire_detached_kernel, 32, (3,)), 32);
    let squares: u64 = (0..32u64).map(|t| t * t).sum();
    assert_eq!(cpu::run_block(helpers_kernel, 32, (7,)), 1_000_000 + squares);
}
