//! The GPU side of the watchdog: the host waits for a launch by querying the event recorded
//! after it, reads the warps' status words out of the runtime's region by a copy on a second
//! stream (the copy engine runs beside the persistent kernel), and stops a stalled launch by
//! copying the watchdog's value into the stop word the same way.

use std::ffi::c_void;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cudarc::driver::sys::CUdeviceptr;
use cudarc::driver::{CudaContext, CudaEvent, CudaStream, DriverError, result};
use gtap_device::abi::Layout;
use gtap_device::abi::STOPPED_BY_WATCHDOG;

use crate::watchdog::Watched;

/// How long a wait queries the launch's end event back to back (yielding the CPU between
/// queries) before it starts to sleep: a short launch ends as promptly as with a synchronize.
const SPIN: Duration = Duration::from_millis(1);

/// Longest sleep between two queries of the launch's end event: short enough that a long
/// launch is seen to end at most this late, long enough that waiting costs no CPU to speak of.
const LONGEST_NAP: Duration = Duration::from_micros(200);

/// Pinned host memory for `len` values of `T`, which copies on a stream need; freed on drop.
struct Pinned<T: Copy> {
    ptr: *mut T,
    len: usize,
    ctx: Arc<CudaContext>,
}

impl<T: Copy> Pinned<T> {
    fn new(ctx: &Arc<CudaContext>, len: usize) -> Result<Self, DriverError> {
        ctx.bind_to_thread()?;
        // SAFETY: plain pinned allocation, owned by the returned value.
        let ptr = unsafe { result::malloc_host(len.max(1) * std::mem::size_of::<T>(), 0) }?;
        Ok(Self {
            ptr: ptr as *mut T,
            len,
            ctx: ctx.clone(),
        })
    }

    fn as_mut_slice(&mut self) -> &mut [T] {
        // SAFETY: `len` values of pinned memory owned by `self`; only copies this module waits
        // for write it, so no one else touches it while the slice lives.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl<T: Copy> Drop for Pinned<T> {
    fn drop(&mut self) {
        if self.ctx.bind_to_thread().is_ok() {
            // SAFETY: allocated by `malloc_host`, freed once.
            let _ = unsafe { result::free_host(self.ptr as *mut c_void) };
        }
    }
}

/// What the watchdog keeps between launches: its stream and pinned buffers.
pub(super) struct GpuWatch {
    stream: Arc<CudaStream>,
    words: Pinned<u64>,
    stop_word: Pinned<u32>,
}

impl GpuWatch {
    /// A watch for launches of up to `warps` warps.
    pub(super) fn new(ctx: &Arc<CudaContext>, warps: usize) -> Result<Self, DriverError> {
        Ok(Self {
            stream: ctx.new_stream()?,
            words: Pinned::new(ctx, warps)?,
            stop_word: Pinned::new(ctx, 1)?,
        })
    }

    /// Watches the launch recorded between `start` and `end` on the runtime's stream, in the
    /// region at `base` laid out by `layout` (this launch's grid). The watch stream's copies
    /// wait for `start`: the region's allocation and clearing come before it.
    pub(super) fn launch<'a>(
        &'a mut self,
        start: &CudaEvent,
        end: &'a CudaEvent,
        base: CUdeviceptr,
        layout: &Layout,
    ) -> Result<Launched<'a>, DriverError> {
        self.stream.wait(start)?;
        Ok(Launched {
            watch: self,
            end,
            status: base + layout.status,
            stop_word: base + layout.stop_word(),
        })
    }
}

/// One launch under watch.
pub(super) struct Launched<'a> {
    watch: &'a mut GpuWatch,
    end: &'a CudaEvent,
    status: CUdeviceptr,
    stop_word: CUdeviceptr,
}

impl Watched for Launched<'_> {
    type Error = DriverError;

    fn wait(&mut self, pause: Duration) -> Result<bool, DriverError> {
        let start = Instant::now();
        let until = start + pause;
        let mut nap = Duration::from_micros(5);
        loop {
            if self.end.try_is_complete()? {
                return Ok(true);
            }
            let now = Instant::now();
            if now >= until {
                return Ok(false);
            }
            if now - start < SPIN {
                std::thread::yield_now();
            } else {
                std::thread::sleep(nap.min(until - now));
                nap = (nap * 2).min(LONGEST_NAP);
            }
        }
    }

    fn read(&mut self, words: &mut [u64]) -> Result<(), DriverError> {
        let n = words.len();
        let stream = self.watch.stream.cu_stream();
        let pinned = &mut self.watch.words.as_mut_slice()[..n];
        // SAFETY: `status` holds one word per warp of this launch (`n`) in the live region;
        // the destination is pinned host memory of that size, and the copy is waited for.
        unsafe { result::memcpy_dtoh_async(pinned, self.status, stream) }?;
        self.watch.stream.synchronize()?;
        words.copy_from_slice(&self.watch.words.as_mut_slice()[..n]);
        Ok(())
    }

    fn stop(&mut self) -> Result<(), DriverError> {
        let stream = self.watch.stream.cu_stream();
        let value = self.watch.stop_word.as_mut_slice();
        value[0] = STOPPED_BY_WATCHDOG;
        // SAFETY: the stop word is a live u32 of the region; the source is pinned and the copy
        // is waited for. Workers read the word with acquire loads; this plain write only has to
        // become visible, and nothing else is ordered by it.
        unsafe { result::memcpy_htod_async(self.stop_word, value, stream) }?;
        self.watch.stream.synchronize()
    }
}
