//! A `gtap::Part` moved into a child belongs to the child: the parent cannot read, write or
//! split it again, before the wait or after (it gets the values back only through the child's
//! result and the `Loan` it kept).

use gtap::Part;

#[gtap::function]
fn fill(mut part: Part<u32>) -> Part<u32> {
    part.fill(1);
    part
}

#[gtap::function]
fn parent(data: Part<u32>) -> u32 {
    let (left, right, loan) = data.lend(2);
    let (mut l, mut r) = (Part::empty(), Part::empty());
    gtap::task!(l = fill(left));
    let early = left[0];
    gtap::task!(r = fill(right));
    let (again, _) = right.split_at(1);
    gtap::taskwait!();
    let _ = again;
    let whole = loan.join(l, r);
    whole[0] + early
}

#[gtap::function]
fn twice(data: Part<u32>) {
    let (mut a, mut b) = (Part::empty(), Part::empty());
    gtap::task!(a = fill(data));
    gtap::task!(b = fill(data));
    gtap::taskwait!();
    let _ = (a, b);
}

fn main() {}
