//! The runtime driven directly, with task functions lowered by hand (no macros): fib on the
//! CPU executor in both modes, against the sequential value.

use core::future::Future;

use gtap_device::__private::{Site, Suspend, TaskFunction, TaskInfo, entry, prepare_wait, spawn};
use gtap_device::Kernel;
use gtap_device::abi::{ErrorCode, ErrorReport, Geometry, LaunchParams, Layout};
use gtap_device::cpu::{self, Mode, RunError, State};

struct Fib;

static SITE: Site = Site {
    function: "fib",
    file: file!(),
    line: 1,
};

impl TaskFunction for Fib {
    type Args = (u32,);
    type Output = u64;
    const INFO: TaskInfo = TaskInfo {
        name: "fib",
        file: file!(),
        line: 1,
    };
    // The macro's shape: an `async` block, not an `async fn`.
    #[allow(clippy::manual_async_fn)]
    fn start((n,): (u32,)) -> impl Future<Output = u64> {
        async move {
            if n < 2 {
                return n as u64;
            }
            let (mut a, mut b) = (0u64, 0u64);
            spawn::<Fib>(&SITE, None, &raw mut a, (n - 1,));
            spawn::<Fib>(&SITE, Some(1), &raw mut b, (n - 2,));
            prepare_wait(&SITE, None);
            Suspend.await;
            a + b
        }
    }
}

fn fib_seq(n: u32) -> u64 {
    if n < 2 {
        n as u64
    } else {
        fib_seq(n - 1) + fib_seq(n - 2)
    }
}

/// What `#[gtap::kernel] fn fib_kernel(n: u32) -> u64 { gtap::entry!(fib(n)) }` expands to
/// on the host.
struct FibKernel;

impl Kernel for FibKernel {
    const NAME: &'static str = "fib_kernel";
    type Args = (u32,);
    type Output = u64;
    fn run_cpu(launch: &LaunchParams, (n,): (u32,)) -> u64 {
        entry::<Fib, (), 0>(launch, &SITE, (n,), ())
    }
}

fn run_with_stack(
    mode: Mode,
    geometry: Geometry,
    n: u32,
    stack_bytes: u32,
) -> Result<u64, Box<ErrorReport>> {
    let mut state = State::new(Layout::new(geometry).unwrap(), stack_bytes);
    match cpu::run::<FibKernel>(&mut state, mode, (n,)) {
        Ok(v) => Ok(v),
        Err(RunError::Aborted(record)) => Err(record),
        Err(RunError::Panicked(message)) => panic!("fib panicked: {message}"),
    }
}

fn run(mode: Mode, geometry: Geometry, n: u32) -> Result<u64, Box<ErrorReport>> {
    run_with_stack(mode, geometry, n, 1 << 20)
}

fn geometry(blocks: u32, warps_per_block: u32, slots: u32, queues: u32) -> Geometry {
    Geometry {
        blocks,
        warps_per_block,
        slots_per_warp: slots,
        num_queues: queues,
        slot_bytes: 64,
    }
}

#[test]
fn fib_deterministic_many_seeds() {
    for seed in 0..20 {
        let got = run(Mode::Deterministic { seed }, geometry(2, 2, 1024, 2), 18).unwrap();
        assert_eq!(got, fib_seq(18), "seed {seed}");
    }
}

#[test]
fn fib_parallel() {
    for _ in 0..5 {
        let got = run(Mode::Parallel, geometry(4, 1, 4096, 2), 24).unwrap();
        assert_eq!(got, fib_seq(24));
    }
}

#[test]
fn a_tiny_pool_runs_most_children_inline_and_stays_exact() {
    for mode in [Mode::Deterministic { seed: 1 }, Mode::Parallel] {
        let got = run(mode, geometry(1, 2, 16, 2), 20).unwrap_or_else(|e| {
            panic!(
                "{mode:?}: code {} value {} limit {} queue {}",
                e.code, e.value, e.limit, e.queue
            )
        });
        assert_eq!(got, fib_seq(20), "{mode:?}");
    }
}

#[test]
fn a_tiny_pool_without_stack_for_inline_children_is_a_typed_error() {
    let err = run_with_stack(
        Mode::Deterministic { seed: 1 },
        geometry(1, 1, 16, 2),
        20,
        1024,
    )
    .unwrap_err();
    assert_eq!(err.code, ErrorCode::PoolExhausted as u32);
    assert_eq!(err.limit, 16);
    assert!(err.value > 1024, "the stack it needed: {}", err.value);
    assert_eq!(ErrorReport::text(&err.task), "fib");
}
