//! `task!` targets named in every scope a body can name them from: a path from the crate
//! root, a `use` at the top of the body (also a glob), and a `use` inside an inner block. The
//! root's `TaskFunction::poll_spawned` polls the first kinds directly and leaves the last to the
//! record's poll pointer; all of them must compile and give the same sums.

include!("../support/cpu.rs");

mod leaves {
    #[gtap::function]
    pub fn leaf(n: u64) -> u64 {
        n
    }

    #[gtap::function]
    pub fn double(n: u64) -> u64 {
        2 * n
    }

    pub mod more {
        #[gtap::function]
        pub fn triple(n: u64) -> u64 {
            3 * n
        }

        #[gtap::function]
        pub fn square(n: u64) -> u64 {
            n * n
        }
    }
}

#[gtap::function]
fn root(n: u64) -> u64 {
    use leaves::leaf;
    use leaves::more::*;
    let (mut a, mut b, mut c, mut d) = (0, 0, 0, 0);
    gtap::task!(a = leaf(n));
    gtap::task!(b = crate::leaves::double(n));
    gtap::task!(c = triple(n));
    {
        use leaves::more::square as sq;
        gtap::task!(d = sq(n));
        gtap::taskwait!();
    }
    a + b + c + d
}

#[gtap::kernel]
fn root_kernel(n: u64) -> u64 {
    gtap::entry!(root(n))
}

fn main() {
    assert_eq!(cpu::run(root_kernel, (7,)), 7 + 14 + 21 + 49);
}
