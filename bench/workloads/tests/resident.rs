//! Inputs stay uploaded on the runtime that owns them and are uploaded again for another one.

use gtap_host::{Config, CpuMode, Runtime};
use gtap_workloads::resident::Resident;

#[test]
fn uploads_once_per_runtime() {
    let config = Config::new().max_task_memory_bytes(64 << 20);
    let a = Runtime::cpu(CpuMode::Parallel, &config).unwrap();
    let b = Runtime::cpu(CpuMode::Parallel, &config).unwrap();
    let mut resident = Resident::default();
    let mut uploads = 0;
    for (rt, value) in [(&a, 1u32), (&a, 2), (&b, 3), (&b, 4), (&a, 5)] {
        let buffer = resident
            .on(rt, |rt| {
                uploads += 1;
                rt.upload(&[value])
            })
            .unwrap();
        assert!(
            rt.download(buffer).is_ok(),
            "the buffer belongs to the runtime asking"
        );
    }
    // a (uploaded), a (kept), b (uploaded), b (kept), a (uploaded again).
    assert_eq!(uploads, 3);
}
