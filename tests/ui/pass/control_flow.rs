//! Beyond GTaP: `taskwait!` inside `match` arms, `if`/`else`, `loop`/`while`/`for` (labeled
//! too), nested blocks, after early `return` and `?` in task functions returning `Result`.
//! No type annotations on the locals that live across the waits.

include!("../support/cpu.rs");

#[gtap::function]
fn leaf(n: u32) -> u64 {
    n as u64
}

#[gtap::function]
fn tree(n: u32) -> u64 {
    match n {
        0 => 1,
        1 => {
            let mut a = 0;
            gtap::task!(a = tree(0));
            gtap::taskwait!();
            a + 1
        }
        _ => {
            let (mut a, mut b) = (0, 0);
            gtap::task!(a = tree(n - 1));
            gtap::task!(b = tree(n - 2));
            gtap::taskwait!();
            a + b
        }
    }
}

#[gtap::function]
fn branches(n: u32) -> u64 {
    if n == 0 {
        return 0;
    }
    let mut a = 0;
    gtap::task!(a = leaf(n));
    // Waits on every arm of a `match` or branch of an `if`.
    match n % 3 {
        0 => gtap::taskwait!(queue(0)),
        1 => gtap::taskwait!(queue(1)),
        _ => gtap::taskwait!(),
    }
    let mut b = 0;
    if n % 2 == 0 {
        gtap::task!(b = leaf(1));
        gtap::taskwait!();
    } else {
        gtap::task!(b = leaf(2));
        gtap::taskwait!();
    }
    a + b
}

#[gtap::function]
fn loops(n: u32) -> u64 {
    let mut total = 0;
    for i in 0..n {
        let mut x = 0;
        gtap::task!(x = leaf(i));
        gtap::taskwait!();
        total += x;
    }
    let mut i = 0;
    while i < n {
        let mut x = 0;
        gtap::task!(x = leaf(i));
        gtap::taskwait!();
        total += x;
        i += 1;
    }
    let mut parts = [0; 4];
    for (k, part) in (0..4).zip(0..) {
        gtap::task!(parts[k] = leaf(part));
    }
    gtap::taskwait!();
    total += parts.iter().sum::<u64>();
    'outer: loop {
        let mut x = 0;
        gtap::task!(x = leaf(n));
        gtap::taskwait!();
        for _ in 0..3 {
            if x > 0 {
                break 'outer;
            }
        }
        break;
    }
    let block = {
        let mut y = 0;
        gtap::task!(y = leaf(7));
        gtap::taskwait!();
        y * 2
    };
    total + block
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Error {
    TooDeep,
}

#[gtap::function]
fn checked(n: u32) -> Result<u64, Error> {
    if n > 30 {
        return Err(Error::TooDeep);
    }
    if n < 2 {
        return Ok(n as u64);
    }
    let (mut a, mut b) = (Ok(0), Ok(0));
    gtap::task!(a = checked(n - 1));
    gtap::task!(b = checked(n - 2));
    gtap::taskwait!();
    Ok(a? + b?)
}

#[gtap::function]
fn checked_root(n: u32) -> Result<u64, Error> {
    let mut r = Ok(0);
    gtap::task!(r = checked(n));
    gtap::taskwait!();
    let v = r?;
    let mut deep = Ok(0);
    gtap::task!(deep = checked(v as u32 + 31));
    gtap::taskwait!();
    deep?;
    Ok(v)
}

#[gtap::kernel]
fn tree_kernel(n: u32) -> u64 {
    gtap::entry!(tree(n))
}

#[gtap::kernel]
fn branches_kernel(n: u32) -> u64 {
    gtap::entry!(branches(n))
}

#[gtap::kernel]
fn loops_kernel(n: u32) -> u64 {
    gtap::entry!(loops(n))
}

#[gtap::kernel]
fn checked_kernel(n: u32) -> Result<u64, Error> {
    gtap::entry!(checked(n))
}

#[gtap::kernel]
fn checked_root_kernel(n: u32) -> Result<u64, Error> {
    gtap::entry!(checked_root(n))
}

fn main() {
    assert_eq!(cpu::run(tree_kernel, (12,)), 377);
    for n in 0..7 {
        let b = if n == 0 {
            0
        } else {
            n as u64 + if n % 2 == 0 { 1 } else { 2 }
        };
        assert_eq!(cpu::run(branches_kernel, (n,)), b);
    }
    let n = 5u64;
    assert_eq!(cpu::run(loops_kernel, (5,)), 2 * n * (n - 1) / 2 + 6 + 14);
    assert_eq!(cpu::run(checked_kernel, (15,)), Ok(610));
    assert_eq!(cpu::run(checked_kernel, (31,)), Err(Error::TooDeep));
    assert_eq!(cpu::run(checked_root_kernel, (3,)), Err(Error::TooDeep));
}
