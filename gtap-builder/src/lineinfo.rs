//! Source lines in the SASS (`GTAP_LINEINFO=1`), for profilers: Nsight Compute's source view
//! and `nvdisasm -g` then name the Rust file and line of each instruction.
//!
//! The nested build compiles with `-Cdebuginfo=line-tables-only`. LLVM's NVPTX backend then
//! writes `.file` and `.loc` directives, but it also marks the module `.target sm_XX, debug`
//! and adds DWARF sections, and `ptxas` compiles such a module as debug code (unoptimised).
//! So each module keeps its line directives and loses the rest (what `nvcc -lineinfo` writes),
//! and `ptxas` runs with `-lineinfo`. The code is the release build's, up to what the line
//! tables change in LLVM's optimisations (measured: a few dozen bytes of spills more or less
//! on the block kernels), so profile with it and time without it.

use crate::env::Env;

/// The variable that asks for line tables.
pub const VAR: &str = "GTAP_LINEINFO";

/// The flag the nested build adds to every crate's `rustc` for line tables.
pub const RUSTC_FLAG: &str = "-Cdebuginfo=line-tables-only";

/// Whether [`VAR`] asks for line tables (set, and not `0`, `false`, `no` or `off`).
pub fn requested(env: &dyn Env) -> bool {
    env.flag(VAR)
}

/// `ptx` with its line directives only: the `debug` option of `.target` and every `.debug_*`
/// section removed, everything else unchanged.
pub fn line_directives_only(ptx: &str) -> String {
    let mut out = String::with_capacity(ptx.len());
    let mut in_section = false;
    for line in ptx.lines() {
        let t = line.trim();
        if in_section {
            // A DWARF section's body ends at its closing brace, alone on its line.
            in_section = t != "}";
            continue;
        }
        if t.starts_with(".section") && t.contains(".debug_") {
            // `.section .debug_x { }` on one line, or a body up to a line of its own `}`.
            in_section = !t.ends_with('}');
            continue;
        }
        if let Some(options) = t.strip_prefix(".target ") {
            let kept: Vec<&str> = options
                .split(',')
                .map(str::trim)
                .filter(|o| *o != "debug")
                .collect();
            out.push_str(".target ");
            out.push_str(&kept.join(", "));
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    const DEBUG_PTX: &str = "\
.version 8.6
.target sm_90, debug
.address_size 64

.visible .entry k()
{
\t.loc\t1 140 0
\tret;
}
\t.file\t1 \"/src/lib.rs\"
\t.section\t.debug_abbrev
\t{
.b8 1
.b8 17
\t}
\t.section\t.debug_info
\t{
.b32 1
\t}
\t.section\t.debug_macinfo\t{\t}
";

    #[test]
    fn keeps_line_directives_and_drops_the_debug_target_and_sections() {
        let out = line_directives_only(DEBUG_PTX);
        assert_eq!(
            out,
            "\
.version 8.6
.target sm_90
.address_size 64

.visible .entry k()
{
\t.loc\t1 140 0
\tret;
}
\t.file\t1 \"/src/lib.rs\"
"
        );
    }

    #[test]
    fn a_module_without_debug_information_is_unchanged() {
        let ptx =
            ".version 8.6\n.target sm_90\n.address_size 64\n\n.visible .entry k()\n{\n\tret;\n}\n";
        assert_eq!(line_directives_only(ptx), ptx);
    }

    #[test]
    fn the_variable_is_a_flag() {
        let env = |v: &str| HashMap::from([(VAR.to_string(), v.into())]);
        assert!(requested(&env("1")));
        assert!(!requested(&env("0")));
        assert!(!requested(&HashMap::<String, std::ffi::OsString>::new()));
    }
}
