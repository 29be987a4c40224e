//! Device fixtures of the integration tests: kernels that misuse the runtime on purpose
//! (device errors), and programs whose result depends on scheduling (caught by the
//! deterministic CPU executor). The examples themselves live in `gtap-examples`.

#![no_std]

#[cfg(not(target_arch = "nvptx64"))]
extern crate std;

/// The device code of these fixtures, one module per kernel (or why there is none).
#[cfg(not(target_arch = "nvptx64"))]
pub static DEVICE_CODE: gtap::DeviceCode = gtap::device_code!();

pub mod context;
pub mod params;
pub mod random_trees;
#[cfg(not(target_arch = "nvptx64"))]
pub mod trace_check;

/// Spawns `fanout` children per level, `depth` levels deep, holding every task until its
/// children finish: `fanout^depth` leaves, enough to exhaust a small pool.
#[gtap::function]
pub fn wide(depth: u32, fanout: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    let mut counts = [0u64; 8];
    for i in 0..fanout.min(8) {
        gtap::task!(counts[i as usize] = wide(depth - 1, fanout));
    }
    gtap::taskwait!();
    counts.iter().sum()
}

/// Root of [`wide`].
#[gtap::kernel]
pub fn wide_kernel(depth: u32, fanout: u32) -> u64 {
    gtap::entry!(wide(depth, fanout))
}

/// Spawns onto queue `queue`, which may be out of range.
#[gtap::function]
pub fn bad_queue(queue: u32) -> u32 {
    let mut x = 0;
    gtap::task!(queue(queue), x = leaf(7));
    gtap::taskwait!();
    x
}

/// A leaf task.
#[gtap::function]
pub fn leaf(v: u32) -> u32 {
    v
}

/// Root of [`bad_queue`].
#[gtap::kernel]
pub fn bad_queue_kernel(queue: u32) -> u32 {
    gtap::entry!(bad_queue(queue))
}

/// Sums the decimal digits of `n` and of the numbers derived from it in a binary tree of
/// `depth` levels, each task through its thread's scratch memory: a thread-mode program that
/// needs `gtap::thread::scratch` (see [`digits_seq`]).
#[gtap::function]
pub fn digits(depth: u32, n: u32) -> u32 {
    let own = gtap::thread::scratch(|s| {
        let (mut k, mut m) = (0, n);
        while m > 0 && k < s.len() {
            s[k] = m % 10;
            m /= 10;
            k += 1;
        }
        s[..k].iter().sum::<u32>()
    });
    if depth == 0 {
        return own;
    }
    let (mut a, mut b) = (0, 0);
    gtap::task!(a = digits(depth - 1, n.wrapping_mul(3).wrapping_add(1)));
    gtap::task!(b = digits(depth - 1, n.wrapping_mul(7).wrapping_add(2)));
    gtap::taskwait!();
    own + a + b
}

/// [`digits`], sequentially and without scratch memory.
pub fn digits_seq(depth: u32, n: u32) -> u32 {
    let (mut own, mut m) = (0, n);
    while m > 0 {
        own += m % 10;
        m /= 10;
    }
    if depth == 0 {
        return own;
    }
    own + digits_seq(depth - 1, n.wrapping_mul(3).wrapping_add(1))
        + digits_seq(depth - 1, n.wrapping_mul(7).wrapping_add(2))
}

/// Root of [`digits`].
#[gtap::kernel]
pub fn digits_kernel(depth: u32, n: u32) -> u32 {
    gtap::entry!(digits(depth, n))
}

/// Divides by `d` in a task several levels down (panics when `d == 0`).
#[gtap::function]
pub fn divide(levels: u32, d: u32) -> u32 {
    if levels == 0 {
        return 100 / d;
    }
    let (mut a, mut b) = (0, 0);
    gtap::task!(a = divide(levels - 1, d));
    gtap::task!(b = divide(levels - 1, d));
    gtap::taskwait!();
    a + b
}

/// Root of [`divide`].
#[gtap::kernel]
pub fn divide_kernel(levels: u32, d: u32) -> u32 {
    gtap::entry!(divide(levels, d))
}

/// A wrong program: remembers its lane before a wait and reports whether it resumed on the same
/// lane. On a GPU the answer depends on scheduling; the deterministic executor varies it.
#[gtap::function]
pub fn same_lane(depth: u32) -> u64 {
    let before = gtap::thread::lane();
    let (mut a, mut b) = (0, 0);
    if depth > 0 {
        gtap::task!(a = same_lane(depth - 1));
        gtap::task!(b = same_lane(depth - 1));
    }
    gtap::taskwait!();
    a + b + (gtap::thread::lane() == before) as u64
}

/// Root of [`same_lane`].
#[gtap::kernel]
pub fn same_lane_kernel(depth: u32) -> u64 {
    gtap::entry!(same_lane(depth))
}

/// A correct program with queue clauses and waits in every position Rust allows: `match`,
/// loops, early returns and `?`.
#[gtap::function]
pub fn shapes(n: u32) -> Result<u64, u32> {
    if n == 0 {
        return Ok(1);
    }
    let queues = gtap::thread::num_queues();
    let mut total = 0;
    match n % 3 {
        0 => {
            let mut x = Ok(0);
            gtap::task!(queue(n % queues), x = shapes(n - 1));
            gtap::taskwait!(queue((n + 1) % queues));
            total += x? + 1;
        }
        1 => {
            let mut i = 0;
            while i < 2 {
                let mut x = Ok(0);
                gtap::task!(x = shapes(n - 1));
                gtap::taskwait!();
                total += x?;
                i += 1;
            }
        }
        _ => {
            let mut parts = [Ok(0), Ok(0)];
            for k in 0..2u32 {
                gtap::task!(queue(k % queues), parts[k as usize] = shapes(n - 1));
            }
            gtap::taskwait!();
            for p in parts {
                total += p?;
            }
        }
    }
    if n == 13 {
        return Err(n);
    }
    Ok(total)
}

/// Sequential reference of [`shapes`].
pub fn shapes_seq(n: u32) -> Result<u64, u32> {
    if n == 0 {
        return Ok(1);
    }
    let total = match n % 3 {
        0 => shapes_seq(n - 1)? + 1,
        1 => shapes_seq(n - 1)? * 2,
        _ => shapes_seq(n - 1)? * 2,
    };
    if n == 13 { Err(n) } else { Ok(total) }
}

/// Root of [`shapes`]; returns the value or `u64::MAX - err`.
#[gtap::kernel]
pub fn shapes_kernel(n: u32) -> u64 {
    let result = gtap::entry!(shapes(n));
    match result {
        Ok(v) => v,
        Err(e) => u64::MAX - e as u64,
    }
}

/// Spawns `k` leaf children onto queue 1 before joining them. A warp keeps the first 32 ids a
/// step stages on a queue in shared memory; the rest go to the queue's ring. With 4 queues of
/// 16 ids each (64 slots per warp), more than 48 children do not fit the ring while the pool
/// still has room (they go to the warp's overflow list; once a queue overflow error).
#[gtap::function]
pub fn flood(k: u32) -> u32 {
    let mut values = [0u32; 60];
    for i in 0..k.min(60) {
        gtap::task!(queue(1), values[i as usize] = leaf(i));
    }
    gtap::taskwait!();
    values.iter().sum()
}

/// Root of [`flood`].
#[gtap::kernel]
pub fn flood_kernel(k: u32) -> u32 {
    gtap::entry!(flood(k))
}

/// Counts the subsets of `items[i..]` that sum to `target`: an ordinary recursive function,
/// as a task's sequential leaf would be, one stack frame per item (the take branch is pruned
/// when the item is larger than what is left). Deep enough, it overflows the GPU thread stack.
pub fn subset_count(items: gtap::Slice<u32>, i: usize, target: u32) -> u64 {
    if i == items.len() {
        return (target == 0) as u64;
    }
    let without = subset_count(items, i + 1, target);
    let item = items[i];
    if item > target {
        return without;
    }
    without + subset_count(items, i + 1, target - item)
}

/// A task whose leaf is [`subset_count`] over all of `items`.
#[gtap::function]
pub fn subsets(items: gtap::Slice<u32>, target: u32) -> u64 {
    subset_count(items, 0, target)
}

/// Root of [`subsets`].
#[gtap::kernel]
pub fn subsets_kernel(items: gtap::Slice<u32>, target: u32) -> u64 {
    gtap::entry!(subsets(items, target))
}

/// Fibonacci, for a correct launch after a stalled one on the same runtime.
#[gtap::function]
pub fn fib(n: u32) -> u64 {
    if n < 2 {
        return n as u64;
    }
    let (mut a, mut b) = (0, 0);
    gtap::task!(a = fib(n - 1));
    gtap::task!(b = fib(n - 2));
    gtap::taskwait!();
    a + b
}

/// Root of [`fib`].
#[gtap::kernel]
pub fn fib_kernel(n: u32) -> u64 {
    gtap::entry!(fib(n))
}

/// Root of [`fib`] on at most one block a multiprocessor.
#[gtap::kernel(max_blocks_per_sm = 1)]
pub fn fib_one_block_per_sm_kernel(n: u32) -> u64 {
    gtap::entry!(fib(n))
}

/// Waits for `flag[0]` to become nonzero, which nothing ever sets: a launch that cannot
/// finish. The loop checks `gtap::thread::stop_requested`, so the watchdog can stop it.
#[gtap::function]
pub fn wait_for_flag(flag: gtap::SliceMut<u32>) -> u32 {
    let mut spins = 0u32;
    while flag.atomic_add(0, 0) == 0 {
        if gtap::thread::stop_requested() {
            return spins;
        }
        spins = spins.wrapping_add(1);
    }
    spins
}

/// Computes `fib(n)` beside a task that waits forever for `flag[0]`: the launch stalls once
/// the Fibonacci tree is done.
#[gtap::function]
pub fn stall(flag: gtap::SliceMut<u32>, n: u32) -> u64 {
    let (mut a, mut b) = (0, 0);
    gtap::task!(a = fib(n));
    gtap::task!(b = wait_for_flag(flag));
    gtap::taskwait!();
    a + b as u64
}

/// Root of [`stall`].
#[gtap::kernel]
pub fn stall_kernel(flag: gtap::SliceMut<u32>, n: u32) -> u64 {
    gtap::entry!(stall(flag, n))
}

/// A chain of tasks `n` deep: each spawns the next as its only child and waits for it, so all
/// `n` are live at once, on the warp that spawned the first (nothing is published for others
/// to steal) unless it runs out of slots.
#[gtap::function]
pub fn chain(n: u32) -> u32 {
    if n == 0 {
        return 0;
    }
    let mut below = 0;
    gtap::task!(below = chain(n - 1));
    gtap::taskwait!();
    below + 1
}

/// Root of [`chain`]: returns its depth.
#[gtap::kernel]
pub fn chain_kernel(n: u32) -> u32 {
    gtap::entry!(chain(n))
}

/// Task `i` of chain `chain` (of `len`): stores 1 at its index of `out`, spawns the chain's
/// next task and returns without waiting for it (joined by the implicit wait at the end), the
/// shape of a graph search's tasks.
#[gtap::function]
pub fn strand(chain: u32, i: u32, len: u32, out: gtap::SliceMut<u32>) {
    out.atomic_store((chain * len + i) as usize, 1);
    if i + 1 < len {
        gtap::task!(strand(chain, i + 1, len, out));
    }
}

/// `chains` chains of [`strand`] tasks, `len` each; `out` holds `chains * len` values.
#[gtap::function]
pub fn strands(chains: u32, len: u32, out: gtap::SliceMut<u32>) {
    for chain in 0..chains {
        gtap::task!(strand(chain, 0, len, out));
    }
}

/// Root kernel of [`strands`].
#[gtap::kernel]
pub fn strands_kernel(chains: u32, len: u32, out: gtap::SliceMut<u32>) {
    gtap::entry!(strands(chains, len, out))
}

pub mod block;
pub mod detached;

/// Stores 1 at `out[0]`.
#[gtap::function]
pub fn mark(out: gtap::SliceMut<u32>) {
    out.atomic_store(0, 1);
}

/// A scheduling bug the macros cannot see: reads `out[0]`, which its child writes, before the
/// wait that joins the child (through a buffer, not the child's destination). Returns 0 when
/// the parent reads first, 1 when the child ran first.
#[gtap::function]
pub fn peek(out: gtap::SliceMut<u32>) -> u32 {
    gtap::task!(mark(out));
    let early = out.atomic_add(0, 0);
    gtap::taskwait!();
    early
}

/// Root kernel of [`peek`]; `out` holds one zero.
#[gtap::kernel]
pub fn peek_kernel(out: gtap::SliceMut<u32>) -> u32 {
    gtap::entry!(peek(out))
}
