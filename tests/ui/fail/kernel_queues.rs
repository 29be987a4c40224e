//! `queues = N` compiles a kernel for runtimes of N queues per worker: an integer literal from 1
//! to 16 (the runtime's limit), given once, on a kernel only.

#[gtap::function]
fn leaf(n: u32) -> u32 {
    n
}

#[gtap::kernel(queues = 0)]
fn none(n: u32) -> u32 {
    gtap::entry!(leaf(n))
}

#[gtap::kernel(queues = 17)]
fn above_the_limit(n: u32) -> u32 {
    gtap::entry!(leaf(n))
}

#[gtap::kernel(queues = N)]
fn not_a_literal(n: u32) -> u32 {
    gtap::entry!(leaf(n))
}

#[gtap::kernel(queues = 1, queues = 3)]
fn twice(n: u32) -> u32 {
    gtap::entry!(leaf(n))
}

#[gtap::function(queues = 1)]
fn on_a_function(n: u32) -> u32 {
    n
}

fn main() {}
