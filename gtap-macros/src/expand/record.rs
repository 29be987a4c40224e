//! The exported symbol carrying a task function's record size on the GPU.
//!
//! The host sizes task slots from the sizes the device compiler produced: each task function
//! exports a `u32` global named `__gtap_record_<crate>$<function>$<hash>`. The name must be a
//! valid PTX identifier (`[A-Za-z0-9_$]`; LLVM's NVPTX backend aborts on `:` in an exported
//! name, so `module_path!()` cannot be used) and unique in the device program, so the hash
//! covers the crate, the source file and the position of the function's name.

use proc_macro2::Span;

/// Where a task function is defined.
pub(crate) struct Origin {
    /// The crate being compiled (`CARGO_CRATE_NAME`).
    pub(crate) crate_name: String,
    /// The source file.
    pub(crate) file: String,
    /// Line of the function's name.
    pub(crate) line: usize,
    /// Column of the function's name.
    pub(crate) column: usize,
}

impl Origin {
    /// The origin of the token at `span`, inside a running proc macro.
    ///
    /// rustc answers the location queries; a proc-macro server that does not implement them
    /// (an IDE's) gets a placeholder location instead of a failed expansion.
    pub(crate) fn of(span: Span) -> Self {
        let span = span.unwrap();
        let location = std::panic::catch_unwind(|| (span.file(), span.line(), span.column()));
        let (file, line, column) = location.unwrap_or_default();
        Self {
            crate_name: std::env::var("CARGO_CRATE_NAME").unwrap_or_else(|_| "crate".into()),
            file,
            line,
            column,
        }
    }
}

/// The record symbol of `function`, defined at `origin`.
pub(crate) fn symbol(origin: &Origin, function: &str) -> String {
    let mut hash = Fnv::new();
    for part in [
        origin.crate_name.as_str(),
        &origin.file,
        &origin.line.to_string(),
        &origin.column.to_string(),
        function,
    ] {
        hash.write(part.as_bytes());
        hash.write(&[0]);
    }
    let krate: String = origin
        .crate_name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let function: String = function
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    format!("__gtap_record_{krate}${function}${:016x}", hash.0)
}

/// 64-bit FNV-1a: stable across Rust versions, unlike `DefaultHasher`.
struct Fnv(u64);

impl Fnv {
    fn new() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(file: &str, line: usize) -> Origin {
        Origin {
            crate_name: "ex".into(),
            file: file.into(),
            line,
            column: 7,
        }
    }

    #[test]
    fn symbols_are_ptx_identifiers_and_unique() {
        let a = symbol(&at("src/a.rs", 3), "leaf");
        let b = symbol(&at("src/b.rs", 3), "leaf");
        assert_ne!(a, b);
        assert!(a.starts_with("__gtap_record_ex$leaf$"));
        assert!(
            a.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
        );
    }
}
