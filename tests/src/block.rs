//! Block-mode fixtures: kernels that break the collective-wait rule on purpose, and a program
//! that uses every block helper, checked against a sequential computation.

/// Threads per block of the block-mode fixtures.
pub const BLOCK: u32 = 64;

/// Thread 0 returns early while the others wait (`early = true`), or threads reach two
/// different waits (`early = false`): a partial wait, reported as a typed device error.
#[gtap::function(block)]
pub fn partial_wait(block: &gtap::Block, early: bool) -> u32 {
    let mut x = 0;
    if block.thread_index() == 0 {
        if early {
            return 1;
        }
        gtap::task!(x = one());
        gtap::taskwait!();
        return x;
    }
    gtap::taskwait!();
    x
}

/// A leaf block task.
#[gtap::function(block)]
pub fn one(block: &gtap::Block) -> u32 {
    block.sum(1) / block.size()
}

/// Root of [`partial_wait`].
#[gtap::kernel(block = 64)]
pub fn partial_wait_kernel(early: bool) -> u32 {
    gtap::entry!(partial_wait(early))
}

/// The words of `u64` the block's lent shared memory holds (`Config::block_shared_bytes` / 8),
/// as every thread sees them; each thread first writes word `thread_index()` when the area has
/// room for it, or, with `touch`, word 0 whatever the size (past the end of an empty area: a
/// panic naming this line).
#[gtap::function(block)]
pub fn shared_words(block: &gtap::Block, touch: bool) -> u32 {
    let t = block.thread_index() as usize;
    let words = block.shared(|mem: &gtap::SharedMem<u64>| {
        if t < mem.len() {
            mem.store(t, t as u64);
        }
        if touch {
            mem.store(0, 0);
        }
        mem.len() as u32
    });
    block.min(words)
}

/// Root of [`shared_words`].
#[gtap::kernel(block = 64)]
pub fn shared_words_kernel(touch: bool) -> u32 {
    gtap::entry!(shared_words(touch))
}

/// Arguments used after waits in each way the record's shared arguments must get right (see
/// `gtap-macros`' `shared_args`): `depth` and `scale` are read after waits (bound again from the
/// record), `acc` is `mut` and changed before a wait (kept in each thread's frame), `salt` is
/// bound again by the body (kept), and a wait sits in a loop. Thread 0 spawns the children.
#[gtap::function(block)]
pub fn args_after_waits(
    block: &gtap::Block,
    depth: u32,
    mut acc: u64,
    salt: u64,
    scale: u64,
) -> u64 {
    let t = block.thread_index() as u64;
    acc += t;
    let mut got = [0u64; 1];
    if depth > 0 && t == 0 {
        gtap::task!(got[0] = args_after_waits(depth - 1, acc, salt + 1, scale));
    }
    gtap::taskwait!();
    let salt = salt * 3;
    let mut sum = depth as u64 * scale + salt + acc + got[0];
    if depth > 1 {
        for i in 0..2u64 {
            if t == 0 {
                gtap::task!(got[0] = args_after_waits(0, i, salt, scale));
            }
            gtap::taskwait!();
            sum += got[0] + depth as u64 * scale + i;
        }
    }
    block.sum(sum)
}

/// Root of [`args_after_waits`].
#[gtap::kernel(block = 64)]
pub fn args_after_waits_kernel(depth: u32, acc: u64, salt: u64, scale: u64) -> u64 {
    gtap::entry!(args_after_waits(depth, acc, salt, scale))
}

/// Sequential reference of [`args_after_waits`] for blocks of `threads` threads.
pub fn args_after_waits_seq(depth: u32, acc: u64, salt: u64, scale: u64, threads: u32) -> u64 {
    (0..threads as u64)
        .map(|t| {
            let acc = acc + t;
            let mut got = if depth > 0 && t == 0 {
                args_after_waits_seq(depth - 1, acc, salt + 1, scale, threads)
            } else {
                0
            };
            let salt = salt * 3;
            let mut sum = depth as u64 * scale + salt + acc + got;
            if depth > 1 {
                for i in 0..2u64 {
                    if t == 0 {
                        got = args_after_waits_seq(0, i, salt, scale, threads);
                    }
                    sum += got + depth as u64 * scale + i;
                }
            }
            sum
        })
        .sum()
}

/// Four arguments, all used after the wait and nothing else kept: its frames hold no copy of
/// them (see `gtap-macros`' `shared_args`).
#[gtap::function(block)]
pub fn four_after_wait(block: &gtap::Block, a: u64, b: u64, c: u64, d: u64) -> u64 {
    if a > 0 && block.thread_index() == 0 {
        gtap::task!(four_after_wait(a - 1, b, c, d));
    }
    gtap::taskwait!();
    a + b + c + d
}

/// Root of [`four_after_wait`].
#[gtap::kernel(block = 64)]
pub fn four_after_wait_kernel(a: u64, b: u64, c: u64, d: u64) -> u64 {
    gtap::entry!(four_after_wait(a, b, c, d))
}

/// Thread `at` of the block panics (when `at` is below the block size), before the others call
/// a helper that waits for every thread: a typed device error naming this function, not a hang.
#[gtap::function(block)]
pub fn panics_at(block: &gtap::Block, at: u32) -> u32 {
    if block.thread_index() == at {
        panic!("a block-mode thread panicked on purpose");
    }
    block.sum(1)
}

/// Root of [`panics_at`].
#[gtap::kernel(block = 64)]
pub fn panics_at_kernel(at: u32) -> u32 {
    gtap::entry!(panics_at(at))
}

/// Every helper at once, on values that depend on the thread: returns (thread 0's view of) a
/// checksum of the results, and spawns `depth` levels of children from every thread whose
/// index is a multiple of 16, so that per-thread spawns and results are exercised too.
#[gtap::function(block)]
pub fn helpers(block: &gtap::Block, depth: u32, salt: u32) -> u64 {
    let t = block.thread_index();
    let v = (t as u64 + 1) * (salt as u64 + 3);
    let sum = block.sum(v);
    let min = block.min(v);
    let max = block.max(v);
    let from7 = block.broadcast(v, 7);
    let before = block.prefix_sum(v);
    let upto = block.inclusive_scan(v, |a, b| a + b);
    let mut strided = 0u64;
    block.for_each(0..1000, |i| strided += i as u64);
    let strided = block.sum(strided);
    // Other index types, and a range ending at `u64::MAX`, whose strides overflow: every index
    // once.
    let mut wide = 0u64;
    block.for_each(3..1003usize, |i| wide += 2 * i as u64);
    block.for_each(u64::MAX - 100..u64::MAX, |i| wide += 3 * (u64::MAX - i));
    block.for_each(-50i64..50, |i| wide += (i + 50) as u64);
    let wide_ok = block.sum(wide) == 2 * (3..1003).sum::<u64>() + 3 * 5050 + 4950;
    // Shared memory: every thread writes its word, reads its neighbour's after a barrier.
    let neighbour = block.shared(|mem: &gtap::SharedMem<u32>| {
        mem.store(t as usize, t * 3);
        block.sync();
        let n = mem.load(((t + 1) % block.size()) as usize);
        block.sync();
        n
    });
    let ok = before + v == upto && neighbour == ((t + 1) % block.size()) * 3 && wide_ok;
    let all_ok = block.min(ok as u32);
    let mut children = [0u64; 1];
    if depth > 0 && t.is_multiple_of(16) {
        gtap::task!(children[0] = helpers(depth - 1, salt + t));
    }
    gtap::taskwait!();
    // Every spawning thread got its own child's result: sum them over the block.
    let below = block.sum(children[0]);
    sum ^ min.rotate_left(8)
        ^ max.rotate_left(16)
        ^ from7.rotate_left(24)
        ^ strided.rotate_left(32)
        ^ (all_ok as u64).rotate_left(40)
        ^ below.wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// Root of [`helpers`].
#[gtap::kernel(block = 64)]
pub fn helpers_kernel(depth: u32, salt: u32) -> u64 {
    gtap::entry!(helpers(depth, salt))
}

/// Sequential reference of [`helpers`] for blocks of `threads` threads.
pub fn helpers_seq(depth: u32, salt: u32, threads: u32) -> u64 {
    let v = |t: u32| (t as u64 + 1) * (salt as u64 + 3);
    let sum: u64 = (0..threads).map(v).sum();
    let min = v(0);
    let max = v(threads - 1);
    let from7 = v(7 % threads);
    let strided: u64 = (0..1000u64).sum();
    let below: u64 = if depth > 0 {
        (0..threads)
            .filter(|t| t % 16 == 0)
            .map(|t| helpers_seq(depth - 1, salt + t, threads))
            .fold(0u64, |a, b| a.wrapping_add(b))
    } else {
        0
    };
    sum ^ min.rotate_left(8)
        ^ max.rotate_left(16)
        ^ from7.rotate_left(24)
        ^ strided.rotate_left(32)
        ^ 1u64.rotate_left(40)
        ^ below.wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// Threads per block of [`wide_sum_kernel`]: seven warps, not a power of two, so that the
/// reduction's first rounds pair threads of different warps and its last run in the first.
pub const WIDE_BLOCK: u32 = 224;

/// Thread `t`'s operand of [`wide_sum`]: magnitudes far apart, so that the floating-point sum
/// depends on the order of its additions.
pub fn wide_value(t: u32, salt: u32) -> f64 {
    let big = if t.is_multiple_of(5) { 1.0e12 } else { 1.0 };
    big / (t as f64 + 1.0) + salt as f64 / 7.0
}

/// The block's floating-point sum of [`wide_value`] (the bits of thread 0's view, the task's
/// result): it shows which pairs the reduction added, in which order.
#[gtap::function(block)]
pub fn wide_sum(block: &gtap::Block, salt: u32) -> u64 {
    block.sum(wide_value(block.thread_index(), salt)).to_bits()
}

/// Root of [`wide_sum`].
#[gtap::kernel(block = 224)]
pub fn wide_sum_kernel(salt: u32) -> u64 {
    gtap::entry!(wide_sum(salt))
}

/// Sequential reference of [`wide_sum`]: the documented tree of [`gtap::Block::reduce`] (round
/// by round, thread `t` adds thread `t + half`'s value to its own).
pub fn wide_sum_seq(salt: u32, threads: u32) -> u64 {
    let mut cells = [0.0f64; 1024];
    for (t, c) in cells.iter_mut().enumerate().take(threads as usize) {
        *c = wide_value(t as u32, salt);
    }
    let mut half = threads.next_power_of_two() / 2;
    while half > 0 {
        for t in 0..half.min(threads - half) as usize {
            cells[t] += cells[t + half as usize];
        }
        half /= 2;
    }
    cells[0].to_bits()
}

/// 1 when, for ranges of 0 to `3 * size() + 5` indices from `start` (in `u32`, whose strides
/// overflow near its largest value, and in `i64`), [`gtap::Block::for_each`] called every
/// thread with exactly the indices its doc promises, in that order: `start + thread_index()`,
/// then every `size()`-th before the range's end. Each thread checks its own calls against
/// those indices, counted in `u64`.
#[gtap::function(block)]
pub fn strided_indices(block: &gtap::Block, start: u32) -> u32 {
    let (t, s) = (block.thread_index() as u64, block.size());
    let mut ok = true;
    for len in [
        0,
        1,
        s - 1,
        s,
        s + 1,
        2 * s - 1,
        2 * s,
        2 * s + 1,
        3 * s + 5,
    ] {
        let end = start.saturating_add(len) as u64;
        let (mut want, mut wanted) = (0u64, 0u32);
        let mut i = start as u64 + t;
        while i < end {
            want = want.wrapping_mul(31).wrapping_add(i);
            wanted += 1;
            i += s as u64;
        }
        let (mut got, mut calls) = (0u64, 0u32);
        block.for_each(start..end as u32, |i| {
            got = got.wrapping_mul(31).wrapping_add(i as u64);
            calls += 1;
        });
        ok &= got == want && calls == wanted;
        let (mut got, mut calls) = (0u64, 0u32);
        block.for_each(start as i64..end as i64, |i| {
            got = got.wrapping_mul(31).wrapping_add(i as u64);
            calls += 1;
        });
        ok &= got == want && calls == wanted;
    }
    block.min(ok as u32)
}

/// Root of [`strided_indices`], on [`WIDE_BLOCK`] threads (seven warps).
#[gtap::kernel(block = 224)]
pub fn strided_indices_kernel(start: u32) -> u32 {
    gtap::entry!(strided_indices(start))
}

/// Starts for [`strided_indices_kernel`]: 0, an odd one, and one whose ranges end at
/// `u32::MAX`, where a stride past the end overflows.
pub const STRIDE_STARTS: [u32; 3] = [0, 1001, u32::MAX - 3 * WIDE_BLOCK - 5];

/// A block-mode task asking for thread-mode scratch memory, which block mode does not have.
#[gtap::function(block)]
pub fn wants_scratch(block: &gtap::Block) -> u32 {
    gtap::thread::scratch(|s| s[0]) + block.thread_index()
}

/// Root of [`wants_scratch`].
#[gtap::kernel(block = 64)]
pub fn wants_scratch_kernel() -> u32 {
    gtap::entry!(wants_scratch())
}

/// Both joins of block mode in one tree, waits and returns with children outstanding: node
/// `node` of a binary tree with `depth` levels below it. Thread 0 counts the node in `out[0]`,
/// adds its number to `out[1]` and spawns both children. A node whose number is a multiple of
/// 3 returns its number at once, its children finishing after it (the implicit wait); the
/// others wait and return their number plus their children's values.
#[gtap::function(block)]
pub fn mixed_joins(block: &gtap::Block, out: gtap::SliceMut<u64>, node: u64, depth: u32) -> u64 {
    let first = block.thread_index() == 0;
    if first {
        out.atomic_add(0, 1);
        out.atomic_add(1, node);
    }
    if depth == 0 {
        return node;
    }
    let (mut a, mut b) = (0, 0);
    if first {
        gtap::task!(a = mixed_joins(out, 2 * node, depth - 1));
        gtap::task!(b = mixed_joins(out, 2 * node + 1, depth - 1));
    }
    if node.is_multiple_of(3) {
        return node;
    }
    gtap::taskwait!();
    node + a + b
}

/// Root of [`mixed_joins`] (node 1).
#[gtap::kernel(block = 64)]
pub fn mixed_joins_kernel(out: gtap::SliceMut<u64>, depth: u32) -> u64 {
    gtap::entry!(mixed_joins(out, 1, depth))
}

/// [`mixed_joins`]'s value and what it leaves in `out`, computed sequentially.
pub fn mixed_joins_seq(depth: u32) -> (u64, [u64; 2]) {
    fn value(node: u64, depth: u32) -> u64 {
        if depth == 0 || node.is_multiple_of(3) {
            return node;
        }
        node + value(2 * node, depth - 1) + value(2 * node + 1, depth - 1)
    }
    let nodes = (1u64 << (depth + 1)) - 1;
    (value(1, depth), [nodes, nodes * (nodes + 1) / 2])
}
