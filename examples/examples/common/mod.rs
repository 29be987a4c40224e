//! What every example does around its kernel: parse its sizes, start a runtime (the GPU when
//! there is one, else the CPU executor, saying why), report a launch, and turn the check
//! against the sequential reference into the exit status.

use std::process::ExitCode;
use std::str::FromStr;

use gtap_host::{Config, DeviceCode, Launch, Runtime};

/// The `i`-th command-line argument (1-based), or `default` when it is absent.
///
/// # Panics
/// When the argument is present but does not parse: an example's usage error.
pub fn arg<T: FromStr>(i: usize, default: T) -> T {
    match std::env::args().nth(i) {
        None => default,
        Some(s) => s
            .parse()
            .unwrap_or_else(|_| panic!("argument {i} ({s:?}) is not a valid number")),
    }
}

/// A runtime on the GPU, or on the CPU executor when there is no usable GPU (the reason is
/// printed, so a CPU run is never mistaken for a GPU one).
pub fn runtime(code: &DeviceCode, config: &Config) -> Runtime {
    let (rt, fallback) = Runtime::gpu_or_cpu(code, config).expect("a runtime");
    match fallback {
        Some(why) => println!("no GPU run ({why}); running on the CPU executor"),
        None => println!("running on {:?}", rt.backend()),
    }
    rt
}

/// Prints what a launch did: its kernel time, whole-launch time and tasks.
pub fn report<T>(what: &str, launch: &Launch<T>) {
    let s = &launch.stats;
    let at_once = match s.tasks_run_at_once {
        0 => String::new(),
        n => format!(", {n} of them polled at once by their parent's thread"),
    };
    println!(
        "{what}: kernel {:.3} ms, launch {:.3} ms, {} tasks ({} steals{at_once})",
        s.kernel_ms, s.launch_ms, s.tasks_spawned, s.steals
    );
}

/// The exit status of a check against the sequential reference.
pub fn verdict(ok: bool, what: &str) -> ExitCode {
    if ok {
        println!("{what}: matches the sequential reference");
        ExitCode::SUCCESS
    } else {
        println!("{what}: DIFFERS from the sequential reference");
        ExitCode::FAILURE
    }
}
