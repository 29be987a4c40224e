//! Compile-time diagnostics and accepted forms of the gtap macros (trybuild).
//!
//! `ui/fail/*.rs` must fail to compile with exactly the checked-in `.stderr`; regenerate with
//! `TRYBUILD=overwrite cargo test -p gtap-tests --test ui` and read every changed file.
//! `ui/pass/*.rs` must compile, and their `main` runs the kernels on the CPU executor.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("ui/fail/*.rs");
    t.pass("ui/pass/*.rs");
}
