//! SpMV on the CPU executor and its host versions, and the matrix generator against values
//! printed by GTaP's C++ `gen_random_csr` with libstdc++'s `std::mt19937`.

use gtap_host::{CpuMode, Runtime};
use gtap_workloads::measure::Workload;
use gtap_workloads::spmv::{self, Csr, Mt19937, Spmv, gen_random_csr};

/// The same rolling hashes the C++ printed: columns, and the values' bit patterns.
fn hashes(m: &Csr) -> (u64, u64) {
    let fold = |h: u64, x: u64| h.wrapping_mul(31).wrapping_add(x);
    let cols = m.col.iter().fold(0, |h, &c| fold(h, c as u32 as u64));
    let vals = m.val.iter().fold(0, |h, &v| fold(h, v.to_bits()));
    (cols, vals)
}

#[test]
fn mt19937_matches_libstdcxx() {
    let mut rng = Mt19937::new(42);
    assert_eq!([rng.next_u32(), rng.next_u32()], [1608637542, 3421126067]);
}

#[test]
fn generated_matrices_match_gtap_generator() {
    // gen_random_csr(1000, 300, std::mt19937(42)): many duplicate columns per row.
    let m = gen_random_csr(1000, 300, &mut Mt19937::new(42));
    assert_eq!(m.col.len(), 248053);
    assert_eq!(m.row_ptr[1..5], [199, 215, 649, 913]);
    assert_eq!(m.col[..5], [0, 5, 7, 13, 14]);
    // -0x1.a28ace1188f82p-2, -0x1.93f9502d7765p-1, -0x1.64119c841cfe8p-4
    let bits: Vec<u64> = m.val[..3].iter().map(|v| v.to_bits()).collect();
    assert_eq!(
        bits,
        [
            0xbfda_28ac_e118_8f82,
            0xbfe9_3f95_02d7_7650,
            0xbfb6_4119_c841_cfe8
        ]
    );
    assert_eq!(hashes(&m), (8010103141534959332, 3667732386785848180));

    // gen_random_csr(20000, 30, std::mt19937(42)): the quick size.
    let m = gen_random_csr(20000, 30, &mut Mt19937::new(42));
    assert_eq!(m.col.len(), 597850);
    assert_eq!(m.row_ptr[1..5], [23, 71, 83, 132]);
    assert_eq!(m.col[..5], [411, 1128, 1161, 1999, 2857]);
    assert_eq!(hashes(&m), (4460284073187903228, 7867643903217606485));
}

#[test]
fn spmv_runs_on_the_cpu_executor() {
    let mut w = Spmv::new(3000, 20);
    assert_eq!(w.label(), "spmv3000_thread");
    for mode in [CpuMode::Parallel, CpuMode::Deterministic { seed: 5 }] {
        let mut rt = Runtime::cpu(mode, &w.config()).expect("CPU runtime");
        let s = w.gpu(&mut rt).expect("CPU executor run");
        assert!(s.verified, "{mode:?}: {}", s.note);
    }
    assert!(w.sequential().unwrap().verified);
    assert!(w.rayon().unwrap().verified);
}

#[test]
fn spmv_block_runs_on_the_cpu_executor() {
    let mut w = Spmv::block(300, 200);
    assert_eq!(w.label(), "spmv300_block");
    for mode in [CpuMode::Parallel, CpuMode::Deterministic { seed: 5 }] {
        let mut rt = Runtime::cpu(mode, &w.config()).expect("CPU runtime");
        let s = w.gpu(&mut rt).expect("CPU executor run");
        assert!(s.verified, "{mode:?}: {}", s.note);
    }
}

#[test]
fn check_rejects_wrong_and_unwritten_rows() {
    let w = Spmv::new(100, 10);
    let mut y = vec![f64::NAN; 100];
    spmv::run_host(w.matrix(), &[1.0; 100], &mut y, false);
    assert_eq!(w.bad_rows(&y), 0);
    let mut wrong = y.clone();
    wrong[7] += 1e-6 * (1.0 + wrong[7].abs());
    assert_eq!(w.bad_rows(&wrong), 1);
    let mut unwritten = y;
    unwritten[99] = f64::NAN;
    assert_eq!(w.bad_rows(&unwritten), 1);
}

/// The full matrix of GTaP's example (3.4 GiB; about a minute in release mode on 2 cores):
/// `cargo test --release -p gtap-workloads --test spmv -- --ignored`.
#[test]
#[ignore = "generates the full 3.4 GiB matrix"]
fn full_matrix_matches_gtap_generator() {
    let m = gen_random_csr(1_000_000, 300, &mut Mt19937::new(42));
    assert_eq!(m.col.len(), 299_823_981);
    assert_eq!(m.row_ptr[1..5], [225, 510, 967, 1488]);
    assert_eq!(m.col[..5], [778, 5522, 7066, 13264, 14079]);
    assert_eq!(hashes(&m), (15534079789830167744, 6524829301372460224));
}
