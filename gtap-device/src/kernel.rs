//! Kernels: what `#[gtap::kernel]` and `entry!` expand to.
//!
//! On the GPU a kernel is a PTX entry taking `(LaunchParams, *mut Output, args...)`; every
//! thread runs the body, `entry!` turns every thread into a scheduler worker, and thread 0
//! writes the body's return value. On the host the same body is reachable through the
//! [`Kernel`] trait, which the CPU executor calls.

use crate::abi::LaunchParams;
use crate::context::RunsIn;
use crate::slice::{Slice, SliceMut};
use crate::task::{BlockTask, Site, TaskFunction, ThreadTask};

/// A value that may be passed to a kernel: plain data with the same layout on host and device.
///
/// Implement it for a struct with `#[derive(gtap::KernelArg)]`, which checks the conditions
/// below.
///
/// # Safety
/// The type must be `Copy`, contain no host-only pointers, and have the same size and layout on
/// `x86_64` and `nvptx64`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be passed to a gtap kernel",
    label = "not a kernel argument",
    note = "kernel arguments are integers, floats, bools, `gtap::Slice`/`gtap::SliceMut` views of device buffers, and `#[repr(C)]` structs of those with `#[derive(gtap::KernelArg)]`"
)]
pub unsafe trait KernelArg: Copy + 'static {}

macro_rules! kernel_arg {
    ($($t:ty),*) => {$(
        // SAFETY: primitive with identical layout on both targets.
        unsafe impl KernelArg for $t {}
    )*};
}
kernel_arg!(u8, u16, u32, u64, i8, i16, i32, i64, f32, f64, bool);
// SAFETY: a pointer and a length, laid out by `#[repr(C)]`; the host creates it from device
// memory.
unsafe impl<T: 'static> KernelArg for Slice<T> {}
// SAFETY: as for `Slice`.
unsafe impl<T: 'static> KernelArg for SliceMut<T> {}

/// A tuple of [`KernelArg`]s: the parameters of a kernel after the runtime's own.
pub trait KernelArgs: Copy + 'static {
    /// Calls `f` with the address of each argument, in order (for `cuLaunchKernel`).
    fn each_param(&self, f: &mut dyn FnMut(*const u8));
}

macro_rules! kernel_args {
    ($(($($name:ident : $t:ident),*)),*) => {$(
        impl<$($t: KernelArg),*> KernelArgs for ($($t,)*) {
            #[allow(unused_variables)]
            fn each_param(&self, f: &mut dyn FnMut(*const u8)) {
                let ($($name,)*) = self;
                $( f($name as *const $t as *const u8); )*
            }
        }
    )*};
}
kernel_args!(
    (),
    (a: A),
    (a: A, b: B),
    (a: A, b: B, c: C),
    (a: A, b: B, c: C, d: D),
    (a: A, b: B, c: C, d: D, e: E),
    (a: A, b: B, c: C, d: D, e: E, g: G),
    (a: A, b: B, c: C, d: D, e: E, g: G, h: H),
    (a: A, b: B, c: C, d: D, e: E, g: G, h: H, i: I),
    (a: A, b: B, c: C, d: D, e: E, g: G, h: H, i: I, j: J),
    (a: A, b: B, c: C, d: D, e: E, g: G, h: H, i: I, j: J, k: K),
    (a: A, b: B, c: C, d: D, e: E, g: G, h: H, i: I, j: J, k: K, l: L),
    (a: A, b: B, c: C, d: D, e: E, g: G, h: H, i: I, j: J, k: K, l: L, m: M),
    (a: A, b: B, c: C, d: D, e: E, g: G, h: H, i: I, j: J, k: K, l: L, m: M, n: N),
    (a: A, b: B, c: C, d: D, e: E, g: G, h: H, i: I, j: J, k: K, l: L, m: M, n: N, o: O),
    (a: A, b: B, c: C, d: D, e: E, g: G, h: H, i: I, j: J, k: K, l: L, m: M, n: N, o: O, p: P),
    (a: A, b: B, c: C, d: D, e: E, g: G, h: H, i: I, j: J, k: K, l: L, m: M, n: N, o: O, p: P, q: Q)
);

/// A kernel defined with `#[gtap::kernel]`, as the host sees it.
pub trait Kernel: 'static {
    /// The PTX entry name.
    const NAME: &'static str;
    /// The user's parameters, as a tuple.
    type Args: KernelArgs;
    /// What the kernel returns to the host.
    type Output: Copy + 'static;
    /// Threads per block of a block-mode kernel (`#[gtap::kernel(block = N)]`), which the host
    /// checks against the runtime's block size at launch; 0 for a thread-mode kernel.
    const BLOCK_SIZE: u32 = 0;
    /// Queues per worker that the kernel is compiled for (`#[gtap::kernel(queues = N)]`),
    /// which the host checks against the runtime's queue count at launch; 0 when the kernel
    /// runs with any count.
    const QUEUES: u32 = 0;
    /// The most blocks a multiprocessor this kernel's GPU launches use
    /// (`#[gtap::kernel(max_blocks_per_sm = N)]`); 0 for as many as it keeps resident. The CPU
    /// executor ignores it.
    const MAX_BLOCKS_PER_SM: u32 = 0;
    /// Runs the kernel body on the host (the CPU executor calls this).
    #[cfg(not(target_arch = "nvptx64"))]
    fn run_cpu(launch: &LaunchParams, args: Self::Args) -> Self::Output;
}

/// `entry!` in a thread-mode kernel: [`entry`], for thread-mode task functions only, with the
/// launch's `context` (`()` without a `context(..)` clause), which the root must run in.
#[inline(always)]
pub fn entry_thread<T: ThreadTask + RunsIn<C>, C: Copy + 'static, const Q: u32>(
    launch: &LaunchParams,
    site: &'static Site,
    args: T::Args,
    context: C,
) -> T::Output
where
    T::Output: Copy,
{
    entry::<T, C, Q>(launch, site, args, context)
}

/// `entry!` in a block-mode kernel: runs the task graph rooted at the block-mode task `T(args)`
/// to completion, one task per block, and returns thread 0's result of the root. `Q` as in
/// [`entry`].
#[inline(always)]
pub fn entry_block<T: BlockTask + RunsIn<C>, C: Copy + 'static, const Q: u32>(
    launch: &LaunchParams,
    site: &'static Site,
    args: T::Args,
    context: C,
) -> T::Output
where
    T::Output: Copy,
{
    #[cfg(target_arch = "nvptx64")]
    {
        gpu::entry_block::<T, C, Q>(launch, site, args, context)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        crate::cpu::block::entry::<T, C, Q>(launch, site, args, context)
    }
}

/// `entry!`: runs the task graph rooted at `T(args)` to completion, with the launch context
/// `context`, and returns the root's result. Every thread of the grid must call it (on the
/// host: the CPU executor's thread). `Q` is the kernel's [`Kernel::QUEUES`]: its schedulers
/// loop over that many queues, a constant, or over the launch's count when it is 0.
#[inline(always)]
pub fn entry<T: TaskFunction, C: Copy + 'static, const Q: u32>(
    launch: &LaunchParams,
    site: &'static Site,
    args: T::Args,
    context: C,
) -> T::Output
where
    T::Output: Copy,
{
    #[cfg(target_arch = "nvptx64")]
    {
        gpu::entry::<T, C, Q>(launch, site, args, context)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        crate::cpu::entry::<T, C, Q>(launch, site, args, context)
    }
}

#[cfg(target_arch = "nvptx64")]
mod gpu {
    use super::*;
    use crate::arch::{self, Warp};
    use crate::queue::KEEP;
    use crate::region::Region;
    use crate::scheduler::Worker;
    use crate::task::create_root;

    #[inline(always)]
    pub(super) fn entry<T: TaskFunction, C: Copy + 'static, const Q: u32>(
        launch: &LaunchParams,
        site: &'static Site,
        args: T::Args,
        context: C,
    ) -> T::Output
    where
        T::Output: Copy,
    {
        let region = Region::new(launch);
        arch::init_block(&region);
        let warp = Warp::current();
        let mut worker = Worker::<KEEP, Q>::new(&warp);
        // The kernel set or cleared the option in its copy of the launch parameters, so this
        // test is constant-folded: the kernel holds the scheduler of its own kind of launch.
        with_detach!(region.no_taskwait(), D => {
            if warp.id() == 0 {
                worker.start_root_as::<D>(|w| create_root::<T>(w, site, args, context));
            }
            worker.run_as::<T, D>();
        });
        if warp.region().control().aborted() {
            // No result: the host reports the recorded error instead.
            arch::exit_thread();
        }
        // Acquire: the root's result was written before the stop word was set to finished.
        arch::fence_acquire();
        // SAFETY: the root finished, so the result area holds its `T::Output`.
        unsafe { (region.root_result as *const T::Output).read() }
    }

    #[inline(always)]
    pub(super) fn entry_block<T: crate::task::BlockTask, C: Copy + 'static, const Q: u32>(
        launch: &LaunchParams,
        site: &'static Site,
        args: T::Args,
        context: C,
    ) -> T::Output
    where
        T::Output: Copy,
    {
        let region = Region::new(launch);
        arch::init_block_mode(&region);
        let schedules = arch::thread_index() < arch::WARP_SIZE;
        // Constant-folded, as in `entry`.
        let aborted = with_detach!(region.no_taskwait(), D => {
            // Only the block's first warp schedules, and only its threads use this warp's state.
            let warp = Warp::first_of_block(!D);
            let mut worker =
                crate::block::worker::BlockWorker::<Q>::new(schedules.then_some(&warp));
            if arch::block_index() == 0 {
                worker.start_root_as::<D>(|w| {
                    crate::block::task::create_root::<T>(w, site, args, context)
                });
            }
            worker.run_as::<T, D>();
            warp.region().control().aborted()
        });
        if aborted {
            arch::exit_thread();
        }
        // Acquire: the root's result was written before the stop word was set to finished.
        arch::fence_acquire();
        // SAFETY: the root finished, so the result area holds its `T::Output`.
        unsafe { (region.root_result as *const T::Output).read() }
    }
}

/// Start of a block-mode kernel's body (`#[gtap::kernel(block = N)]` on the GPU): tells the
/// compiler that its blocks have `threads` threads, so that what depends on the block size
/// (the block's shared-memory offsets, the helpers' loops over its threads) is constant.
///
/// # Safety
/// The kernel is launched in blocks of `threads` threads only: `gtap-host` checks a block-mode
/// kernel's `Kernel::BLOCK_SIZE` against the runtime's block size before every launch
/// (`Error::BlockSizeMismatch`).
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub unsafe fn assume_block_size(threads: u32) {
    // SAFETY: per the contract.
    unsafe { crate::arch::assume_block_threads(threads) };
}

/// Stores a kernel's return value for the host (thread 0 of block 0 only on the GPU).
///
/// # Safety
/// `out` must point to writable memory for one `T`.
#[inline(always)]
pub unsafe fn write_result<T: Copy>(out: *mut T, value: T) {
    if crate::arch::block_index() == 0 && crate::arch::thread_index() == 0 {
        // SAFETY: per the contract.
        unsafe { out.write(value) }
    }
}

/// Calls `f` with the address of each parameter of a kernel's PTX entry, in the order
/// [`ptx_kernel!`](crate::__ptx_kernel) declares them: the launch parameters, the pointer to
/// the output buffer, then the user's arguments. The host passes these addresses to
/// `cuLaunchKernel`, so the entry's signature is written here only.
pub fn each_entry_param<A: KernelArgs>(
    launch: &LaunchParams,
    out: &u64,
    args: &A,
    f: &mut dyn FnMut(*const u8),
) {
    f(launch as *const LaunchParams as *const u8);
    f(out as *const u64 as *const u8);
    args.each_param(f);
}

/// Defines a PTX kernel entry. Used by `#[gtap::kernel]`; the `ptx-kernel` ABI is unstable,
/// and this macro lets user crates use it without enabling the feature themselves. The host
/// passes the parameters through [`each_entry_param`]: change both together.
#[doc(hidden)]
#[macro_export]
#[cfg_attr(target_arch = "nvptx64", allow_internal_unstable(abi_ptx))]
macro_rules! __ptx_kernel {
    ($(#[$m:meta])* $vis:vis fn $name:ident($launch:ident $(, $arg:ident : $ty:ty)* $(,)?) -> $out:ty $body:block) => {
        $(#[$m])*
        #[unsafe(no_mangle)]
        $vis unsafe extern "ptx-kernel" fn $name(
            __gtap_params: $crate::__private::LaunchParams,
            __gtap_out: *mut $out
            $(, $arg: $ty)*
        ) {
            let $launch = &__gtap_params;
            #[allow(unused_mut)]
            let __gtap_value: $out = (move || $body)();
            // SAFETY: the host passes a device buffer for one `$out`.
            unsafe { $crate::__private::write_result(__gtap_out, __gtap_value) };
        }
    };
}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::vec::Vec;

    use super::*;
    use crate::abi::{Geometry, Layout};

    fn params() -> LaunchParams {
        let geometry = Geometry {
            blocks: 1,
            warps_per_block: 1,
            slots_per_warp: 32,
            num_queues: 1,
            slot_bytes: 64,
        };
        LaunchParams {
            base: 0,
            error: 0,
            layout: Layout::new(geometry).expect("valid geometry"),
            options: 0,
            seed: 0,
            stack_bytes: 0,
            block_shared_bytes: 0,
            host: 0,
        }
    }

    #[test]
    fn entry_params_are_launch_output_then_arguments_in_order() {
        let launch = params();
        let out = 0u64;
        let args = (1u32, 2.5f64, 3u8);
        let mut seen = Vec::new();
        each_entry_param(&launch, &out, &args, &mut |p| seen.push(p));
        let expected: [*const u8; 5] = [
            &launch as *const LaunchParams as *const u8,
            &out as *const u64 as *const u8,
            &args.0 as *const u32 as *const u8,
            &args.1 as *const f64 as *const u8,
            &args.2 as *const u8,
        ];
        assert_eq!(seen, expected);
    }

    #[test]
    fn a_kernel_without_arguments_has_two_params() {
        let launch = params();
        let mut count = 0;
        each_entry_param(&launch, &0, &(), &mut |_| count += 1);
        assert_eq!(count, 2);
    }

    #[test]
    fn write_result_writes_for_thread_0_of_block_0() {
        // Outside a simulated warp the host reports block 0, thread 0: the CPU executor's
        // thread, which is the one that returns the kernel's value.
        let mut out = 0u64;
        // SAFETY: `out` is a writable `u64`.
        unsafe { write_result(&mut out, 42) };
        assert_eq!(out, 42);
    }
}
