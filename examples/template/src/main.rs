//! Runs the template's kernel on the GPU when there is one, otherwise (saying why) on the CPU
//! executor, and checks the result.
//!
//! `GTAP_TEMPLATE_CPU=1` skips the GPU and runs on the CPU executor.

use std::process::ExitCode;

use gtap_host::{Config, CpuMode, Runtime};
use gtap_template::{DEVICE_CODE, range_sum_kernel, range_sum_reference};

fn main() -> ExitCode {
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("gtap-template: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> gtap_host::Result<bool> {
    let config = Config::new();
    let mut rt = if std::env::var_os("GTAP_TEMPLATE_CPU").is_some_and(|v| v == "1") {
        println!("GTAP_TEMPLATE_CPU=1: running on the CPU executor");
        Runtime::cpu(CpuMode::WorkFirst, &config)?
    } else {
        let (rt, fallback) = Runtime::gpu_or_cpu(&DEVICE_CODE, &config)?;
        if let Some(why) = fallback {
            println!("running on the CPU executor, because: {why}");
        }
        rt
    };
    let n = 1 << 20;
    let launch = rt.launch(range_sum_kernel, (n,))?;
    let want = range_sum_reference(n);
    println!(
        "range_sum(0, {n}) = {} (expected {want}) on {:?}: {} tasks in {:.2} ms",
        launch.result,
        rt.backend(),
        launch.stats.tasks_spawned,
        launch.stats.kernel_ms
    );
    Ok(launch.result == want)
}
