//! The runtime: initialise once, launch many times, reset, release on drop.

use std::marker::PhantomData;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use cudarc::driver::CudaStream;
use gtap_device::{DeviceCode, Kernel};

use crate::buffer::{Buffer, Storage};
use crate::config::Config;
use crate::cpu::{Cpu, CpuMode};
use crate::error::{Error, Result};
use crate::gpu::{self, Gpu, UntilPoisoned};
use crate::stats::{ModuleLoad, Stats};
use crate::timing;
use crate::trace::Trace;

/// The result of a launch: the root task's value and what the launch did.
#[derive(Clone, Debug)]
pub struct Launch<T> {
    /// What the kernel returned (normally the root task's result).
    pub result: T,
    /// Timings and scheduler statistics.
    pub stats: Stats,
    /// What every warp (a block-mode kernel: every block) did and when, if the runtime records
    /// a trace
    /// ([`Config::trace_events_per_warp`](crate::Config::trace_events_per_warp) or
    /// `GTAP_TRACE`); `None` otherwise. [`Trace::write_chrome_json`] exports it for Perfetto,
    /// and the workspace's `gtap-profile` command draws it.
    pub trace: Option<Trace>,
}

enum Backend {
    Gpu(Box<Gpu>),
    Cpu(Box<Cpu>),
}

/// Which executor a runtime uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BackendKind {
    /// An NVIDIA GPU.
    Gpu {
        /// The device's name.
        device: String,
    },
    /// The CPU executor.
    Cpu(CpuMode),
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A gtap runtime: task pools and queues allocated once, sized by a [`Config`], on the GPU or
/// on the CPU executor. Launch `#[gtap::kernel]`s with [`Runtime::launch`]; everything is
/// released when the runtime is dropped.
///
/// ```no_run
/// # fn demo(code: &gtap_host::DeviceCode) -> gtap_host::Result<()> {
/// let mut rt = gtap_host::Runtime::gpu(code, &gtap_host::Config::new().num_queues(3))?;
/// let threads = rt.self_test(132, 256)?; // the built-in probe kernel
/// println!("{threads} threads checked on {:?}", rt.backend());
/// # Ok(()) }
/// ```
pub struct Runtime {
    id: u64,
    backend: Backend,
    /// Whether the configuration sized it for block-mode kernels ([`Config::block_mode`]).
    block_mode: bool,
}

impl Runtime {
    /// A runtime on GPU 0 running the kernels of `code` (a crate's `DEVICE_CODE`).
    ///
    /// Fails with [`Error::NoDeviceCode`] if the program was built without device code,
    /// [`Error::NoGpu`] without a driver or device, [`Error::Config`] for an unusable
    /// configuration, and [`Error::GpuPoisoned`] (at once, without asking the driver) after a
    /// kernel fault earlier in this process, which the CUDA driver never recovers from.
    pub fn gpu(code: &DeviceCode, config: &Config) -> Result<Self> {
        Ok(Self::wrap(
            Backend::Gpu(Box::new(Gpu::new(code, config)?)),
            config,
        ))
    }

    /// A runtime on the caller's cudarc stream (and its context), for applications that already
    /// use cudarc. Every operation of the runtime is ordered on that stream: creating it (the
    /// allocation and clearing of its pools), [`upload`](Self::upload), each launch,
    /// [`download`](Self::download), [`reset`](Self::reset) and the frees when the runtime and
    /// its buffers are dropped. Calls that return data (launch, download) wait for the stream
    /// up to their own work, so they also wait for work the application enqueued before.
    pub fn gpu_on_stream(
        code: &DeviceCode,
        config: &Config,
        stream: Arc<CudaStream>,
    ) -> Result<Self> {
        Ok(Self::wrap(
            Backend::Gpu(Box::new(Gpu::with_stream(code, config, stream)?)),
            config,
        ))
    }

    /// A runtime on the CPU executor.
    pub fn cpu(mode: CpuMode, config: &Config) -> Result<Self> {
        Ok(Self::wrap(
            Backend::Cpu(Box::new(Cpu::new(mode, config)?)),
            config,
        ))
    }

    /// The GPU if there is one, the program has device code and no kernel fault poisoned the
    /// GPU earlier in this process; otherwise the work-first CPU executor. Returns the runtime
    /// and, when it fell back to the CPU, why.
    pub fn gpu_or_cpu(code: &DeviceCode, config: &Config) -> Result<(Self, Option<Error>)> {
        match Self::gpu(code, config) {
            Ok(rt) => Ok((rt, None)),
            Err(
                e @ (Error::NoGpu { .. } | Error::NoDeviceCode { .. } | Error::GpuPoisoned { .. }),
            ) => Ok((Self::cpu(CpuMode::WorkFirst, config)?, Some(e))),
            Err(e) => Err(e),
        }
    }

    fn wrap(backend: Backend, config: &Config) -> Self {
        Self {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            backend,
            block_mode: config.block_mode,
        }
    }

    /// Which executor this runtime uses.
    pub fn backend(&self) -> BackendKind {
        match &self.backend {
            Backend::Gpu(g) => BackendKind::Gpu {
                device: g.device_name.clone(),
            },
            Backend::Cpu(c) => BackendKind::Cpu(c.mode()),
        }
    }

    /// The resolved shape: grid, block size, slots per warp, queues, slot bytes, pool bytes.
    pub fn layout(&self) -> &gtap_device::abi::Layout {
        match &self.backend {
            Backend::Gpu(g) => g.layout(),
            Backend::Cpu(c) => c.layout(),
        }
    }

    /// How each kernel module was loaded onto the GPU so far (SASS or JIT, and how long it
    /// took); empty on the CPU executor.
    pub fn module_loads(&self) -> Vec<ModuleLoad> {
        match &self.backend {
            Backend::Gpu(g) => g.module_loads(),
            Backend::Cpu(_) => Vec::new(),
        }
    }

    /// Threads per block.
    pub fn block_size(&self) -> u32 {
        match &self.backend {
            Backend::Gpu(g) => g.block_size(),
            Backend::Cpu(c) => c.block_size(),
        }
    }

    /// Runs `kernel` with `args` to completion and returns its result with statistics.
    ///
    /// A device failure (pool exhausted, bad queue index, panic in a task)
    /// comes back as [`Error::Device`] with the task function, source line, thread and the
    /// limit involved; the runtime stays usable. A kernel fault (illegal address, trap, stack
    /// overflow) comes back as [`Error::KernelFault`], which names the likely causes and the
    /// stack setting. The CUDA driver makes the GPU unusable for the rest of the process after
    /// it: this runtime, its buffers and every other GPU runtime answer [`Error::ContextLost`],
    /// and a new [`Runtime::gpu`] fails with [`Error::GpuPoisoned`]; restart the process, or
    /// continue on the CPU executor.
    /// A launch in which no warp makes progress for
    /// [`Config::watchdog`](crate::Config::watchdog) is stopped and comes back as
    /// [`Error::Stalled`], saying what every warp was doing.
    ///
    /// With `GTAP_TIME=1` in the environment, every launch prints a timing report to stderr
    /// and the process prints a summary per kernel at exit. With `GTAP_TRACE=N` every launch
    /// records an event trace of up to `N` events per warp ([`Launch::trace`]), and with
    /// `GTAP_TRACE_DIR=DIR` too, writes it to `DIR/<kernel>-<n>.trace.json`.
    ///
    /// A block-mode kernel (`#[gtap::kernel(block = N)]`) needs a runtime configured with
    /// [`Config::block_mode`] and `block_size(N)`: otherwise [`Error::NotBlockMode`] or
    /// [`Error::BlockSizeMismatch`], before anything runs. A kernel compiled for `N` queues
    /// (`#[gtap::kernel(queues = N)]`) needs [`Config::num_queues`]`(N)`: otherwise
    /// [`Error::QueueCountMismatch`].
    pub fn launch<K: Kernel>(&mut self, kernel: K, args: K::Args) -> Result<Launch<K::Output>> {
        let _ = kernel;
        let runtime_queues = self.layout().geometry.num_queues;
        if K::QUEUES != 0 && K::QUEUES != runtime_queues {
            return Err(Error::QueueCountMismatch {
                kernel: K::NAME,
                kernel_queues: K::QUEUES,
                runtime_queues,
            });
        }
        if K::BLOCK_SIZE != 0 {
            if !self.block_mode {
                return Err(Error::NotBlockMode {
                    kernel: K::NAME,
                    kernel_block: K::BLOCK_SIZE,
                });
            }
            if self.block_size() != K::BLOCK_SIZE {
                return Err(Error::BlockSizeMismatch {
                    kernel: K::NAME,
                    kernel_block: K::BLOCK_SIZE,
                    runtime_block: self.block_size(),
                });
            }
        }
        let layout = *self.layout();
        let (launched, backend) = match &mut self.backend {
            Backend::Gpu(g) => (g.launch::<K>(args), "GPU"),
            Backend::Cpu(c) => (c.launch::<K>(args), "CPU executor"),
        };
        let launch = launched.map_err(|e| match e {
            Error::Device(d) => Error::Device(Box::new(d.with_pool(&layout))),
            other => other,
        })?;
        timing::record(K::NAME, backend, &launch.stats);
        if let Some(trace) = &launch.trace {
            crate::trace::save_if_asked(trace);
        }
        Ok(launch)
    }

    /// Returns every pool, queue and counter to its initial state and clears the last error.
    pub fn reset(&mut self) -> Result<()> {
        match &mut self.backend {
            Backend::Gpu(g) => g.reset(),
            Backend::Cpu(c) => c.reset(),
        }
    }

    /// On the CPU executor, switches to the deterministic schedule of `seed` without
    /// reallocating the pools (each launch clears the state the previous one left). The GPU has
    /// no schedule seed: there it does nothing.
    pub(crate) fn reseed(&mut self, seed: u64) {
        if let Backend::Cpu(c) = &mut self.backend {
            c.reseed(seed);
        }
    }

    /// Copies `data` into a new buffer of this runtime (on the GPU, allocated and copied in the
    /// order of the runtime's stream).
    pub fn upload<T: Copy + 'static>(&self, data: &[T]) -> Result<Buffer<T>> {
        let storage = match &self.backend {
            Backend::Gpu(g) => {
                let stream = g.stream()?;
                let memory = gpu::upload(stream, data)?;
                Storage::Gpu {
                    ptr: gpu::address(&memory, stream),
                    memory: UntilPoisoned::new(memory),
                }
            }
            Backend::Cpu(_) => Storage::Cpu(data.to_vec()),
        };
        Ok(Buffer {
            owner: self.id,
            storage,
            len: data.len(),
            _t: PhantomData,
        })
    }

    /// A new buffer of `len` copies of `value`.
    pub fn alloc_filled<T: Copy + 'static>(&self, len: usize, value: T) -> Result<Buffer<T>> {
        self.upload(&vec![value; len])
    }

    /// Copies a buffer back to the host.
    pub fn download<T: Copy + 'static>(&self, buffer: &Buffer<T>) -> Result<Vec<T>> {
        if buffer.owner != self.id {
            return Err(Error::ForeignBuffer);
        }
        match (&self.backend, &buffer.storage) {
            (Backend::Gpu(g), Storage::Gpu { memory, .. }) => {
                gpu::download(g.stream()?, memory.get()?)
            }
            (Backend::Cpu(_), Storage::Cpu(v)) => Ok(v.clone()),
            _ => Err(Error::ForeignBuffer),
        }
    }

    /// First light: runs the built-in probe kernel on the GPU over `blocks × block` threads and
    /// checks every thread's value, lane and atomic. Returns the number of threads checked.
    pub fn self_test(&mut self, blocks: u32, block: u32) -> Result<u32> {
        let Backend::Gpu(g) = &mut self.backend else {
            return Err(Error::NoGpu {
                reason: "self_test runs on the GPU, and this runtime is the CPU executor".into(),
            });
        };
        let (values, count) = g.probe(blocks, block)?;
        let n = blocks * block;
        for (gid, v) in values.iter().enumerate() {
            let want = gtap_device::abi::probe_value(gid as u32).wrapping_add(gid as u32 % 32);
            if *v != want {
                return Err(Error::SelfTest {
                    detail: format!("thread {gid} wrote {v:#x}, expected {want:#x}"),
                });
            }
        }
        if count != n {
            return Err(Error::SelfTest {
                detail: format!("the atomic counter reads {count}, expected {n}"),
            });
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Poisons this test binary's GPU state, which no other unit test of the crate uses.
    #[test]
    fn a_poisoned_gpu_is_refused_at_once_and_gpu_or_cpu_falls_back() {
        gpu::GPU.mark("kernel `k` faulted (a test)".into());
        let code = DeviceCode::Modules {
            arch: "sm_70",
            modules: &[],
            records: &[],
        };
        let config = Config::new();
        match Runtime::gpu(&code, &config) {
            Err(Error::GpuPoisoned { by }) => assert_eq!(by, "kernel `k` faulted (a test)"),
            Err(e) => panic!("expected GpuPoisoned, got {e}"),
            Ok(_) => panic!("a poisoned GPU gave a runtime"),
        }
        let (rt, why) = Runtime::gpu_or_cpu(&code, &config).unwrap();
        assert_eq!(rt.backend(), BackendKind::Cpu(CpuMode::WorkFirst));
        assert!(matches!(why, Some(Error::GpuPoisoned { .. })), "{why:?}");
    }
}
