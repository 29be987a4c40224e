//! The runtime driven directly, with task functions lowered by hand (no macros): fib on the
//! CPU executor in both modes, against the sequential value.

use core::future::Future;

use gtap_device::__private::{Site, Suspend, TaskFunction, TaskInfo, entry, prepare_wait, spawn};
use gtap_device::cpu::{Aborted, Driver, Mode};
use gtap_device::error::ErrorRecord;
use gtap_device::layout::Line;
use gtap_device::{Geometry, LaunchParams, Layout};

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

fn run(mode: Mode, geometry: Geometry, n: u32) -> Result<u64, Box<ErrorRecord>> {
    let layout = Layout::new(geometry).unwrap();
    let mut mem = vec![Line([0; 128]); (layout.bytes as usize).div_ceil(128)];
    let mut error = ErrorRecord::EMPTY;
    let driver = Driver { mode };
    let launch = LaunchParams {
        base: mem.as_mut_ptr() as u64,
        error: &raw mut error as u64,
        layout,
        options: 0,
        seed: 7,
        host: &raw const driver as u64,
    };
    match std::panic::catch_unwind(|| entry::<Fib>(&launch, &SITE, (n,))) {
        Ok(v) => Ok(v),
        Err(p) if p.is::<Aborted>() => Err(Box::new(error)),
        Err(p) => std::panic::resume_unwind(p),
    }
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
fn small_pool_is_a_typed_error() {
    let err = run(Mode::Deterministic { seed: 1 }, geometry(1, 1, 16, 2), 20).unwrap_err();
    assert_eq!(
        err.code,
        gtap_device::error::ErrorCode::PoolExhausted as u32
    );
    assert_eq!(err.limit, 16);
    assert_eq!(ErrorRecord::text(&err.task), "fib");
}
