//! Launch contexts: a `gtap::Context` parameter (first in thread mode, after the block token
//! in block mode, imported or by path, any pattern name) receives `entry!(context(..), ..)`'s
//! value; a context-free function runs under any context and in a kernel without one; a
//! function named `context` is still a root call.

include!("../support/cpu.rs");

use gtap::Context;

#[derive(Clone, Copy)]
struct Offset {
    by: u64,
    times: u64,
}

#[gtap::function]
fn add(offset: Context<Offset>, n: u64) -> u64 {
    let mut doubled = 0;
    gtap::task!(doubled = double(n));
    gtap::taskwait!();
    doubled + offset.by * offset.times
}

#[gtap::function]
fn double(n: u64) -> u64 {
    2 * n
}

#[gtap::function]
fn context(n: u64) -> u64 {
    n + 1
}

#[gtap::function(block)]
fn add_block(block: &gtap::Block, o: gtap::Context<Offset>, n: u64) -> u64 {
    let by = o.by;
    block.max(n + by)
}

#[gtap::kernel]
fn with_context(n: u64) -> u64 {
    gtap::entry!(context(Offset { by: 3, times: 2 }), add(n))
}

#[gtap::kernel]
fn with_context_statement(n: u64) -> u64 {
    let r;
    gtap::entry!(context(Offset { by: 1, times: 1 }), r = add(n));
    r
}

#[gtap::kernel]
fn context_free_under_a_context(n: u64) -> u64 {
    gtap::entry!(context(Offset { by: 1, times: 1 }), double(n))
}

#[gtap::kernel]
fn root_named_context(n: u64) -> u64 {
    gtap::entry!(context(n))
}

#[gtap::kernel(block = 32)]
fn block_with_context(n: u64) -> u64 {
    gtap::entry!(context(Offset { by: 5, times: 0 }), add_block(n))
}

fn main() {
    assert_eq!(cpu::run(with_context, (4,)), 8 + 6);
    assert_eq!(cpu::run(with_context_statement, (4,)), 9);
    assert_eq!(cpu::run(context_free_under_a_context, (4,)), 8);
    assert_eq!(cpu::run(root_named_context, (4,)), 5);
    assert_eq!(cpu::run_block(block_with_context, 32, (4,)), 9);
}
