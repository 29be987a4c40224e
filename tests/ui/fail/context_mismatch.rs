//! A task reads only the context its launch has: `entry!` gives its root the context of its
//! `context(..)` clause (or none), `task!` gives a child the spawning function's, and a
//! `gtap::Context` parameter comes first (after the block token) and once.

#[derive(Clone, Copy)]
struct Graph {
    vertices: u32,
}

#[derive(Clone, Copy)]
struct Matrix {
    rows: u32,
}

#[gtap::function]
fn visit(graph: gtap::Context<Graph>, v: u32) -> u32 {
    v + graph.vertices
}

#[gtap::function]
fn no_context(v: u32) -> u32 {
    let mut r = 0;
    gtap::task!(r = visit(v));
    gtap::taskwait!();
    r
}

#[gtap::kernel]
fn without_clause(v: u32) -> u32 {
    gtap::entry!(visit(v))
}

#[gtap::kernel]
fn other_type(v: u32) -> u32 {
    gtap::entry!(context(Matrix { rows: 3 }), visit(v))
}

#[gtap::function]
fn second(v: u32, graph: gtap::Context<Graph>) -> u32 {
    v + graph.vertices
}

#[gtap::function]
fn twice(a: gtap::Context<Graph>, b: gtap::Context<Graph>) -> u32 {
    a.vertices + b.vertices
}

fn main() {}
