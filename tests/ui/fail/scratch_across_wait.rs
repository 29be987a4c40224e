//! A thread's scratch memory cannot be held across a wait: a reference to it cannot leave the
//! closure that lends it (and a wait cannot be written inside that closure, see
//! `suspension_contexts`).

#[gtap::function]
fn sum(n: u32) -> u32 {
    let kept = gtap::thread::scratch(|s| s);
    kept[0] = n;
    let mut a = 0;
    if n > 0 {
        gtap::task!(a = sum(n - 1));
    }
    gtap::taskwait!();
    kept[0] + a
}

fn main() {}
