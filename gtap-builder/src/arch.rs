//! GPU architectures (`sm_XX`) that device code can be built for.

use std::fmt;
use std::str::FromStr;

use crate::Error;

/// The architectures LLVM 22's NVPTX backend knows that gtap can run on. gtap's runtime uses
/// atomics with explicit semantics and scope (`atom.acq_rel.gpu`, `ld.acquire.gpu`), which PTX
/// has from `sm_70` on, so older architectures are refused.
pub const KNOWN_ARCHS: &[&str] = &[
    "sm_70", "sm_72", "sm_75", "sm_80", "sm_86", "sm_87", "sm_88", "sm_89", "sm_90", "sm_90a",
    "sm_100", "sm_100a", "sm_100f", "sm_101", "sm_101a", "sm_101f", "sm_103", "sm_103a", "sm_103f",
    "sm_110", "sm_110a", "sm_110f", "sm_120", "sm_120a", "sm_120f", "sm_121", "sm_121a", "sm_121f",
];

/// The oldest architecture gtap supports, and the default: PTX built for it is JIT-compiled by
/// the driver for every newer GPU.
pub const DEFAULT_ARCH: &str = "sm_70";

/// A validated GPU architecture such as `sm_70` or `sm_90a`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Arch(String);

impl Arch {
    /// The default architecture, [`DEFAULT_ARCH`].
    pub fn default_arch() -> Self {
        Arch(DEFAULT_ARCH.to_owned())
    }

    /// Validates `value` (`sm_70`, `sm_90a`, ...). Surrounding whitespace is ignored.
    pub fn parse(value: &str) -> Result<Self, Error> {
        let v = value.trim();
        let invalid = |problem: String| Error::InvalidArch {
            value: value.to_owned(),
            problem,
        };
        let Some(rest) = v.strip_prefix("sm_") else {
            return Err(invalid(
                "an architecture is written `sm_` and a number, e.g. `sm_70` or `sm_90`".into(),
            ));
        };
        let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
        let suffix = &rest[digits.len()..];
        let Ok(number) = digits.parse::<u32>() else {
            return Err(invalid(
                "an architecture is written `sm_` and a number, e.g. `sm_70` or `sm_90`".into(),
            ));
        };
        if !matches!(suffix, "" | "a" | "f") {
            return Err(invalid(format!(
                "unknown suffix `{suffix}` (only `a` and `f` exist, e.g. `sm_90a`)"
            )));
        }
        if number < 70 {
            return Err(invalid(
                "gtap needs sm_70 or newer: its runtime uses scoped acquire/release atomics".into(),
            ));
        }
        if !KNOWN_ARCHS.contains(&v) {
            return Err(invalid(format!(
                "not an architecture LLVM 22 knows; known: {}",
                KNOWN_ARCHS.join(", ")
            )));
        }
        Ok(Arch(v.to_owned()))
    }

    /// The compute capability as a number: 90 for `sm_90` and `sm_90a`.
    pub fn number(&self) -> u32 {
        let digits: String = self.0[3..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        digits.parse().unwrap_or(0)
    }

    /// The architecture as written, e.g. `sm_70`.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Default for Arch {
    fn default() -> Self {
        Self::default_arch()
    }
}

impl FromStr for Arch {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        Arch::parse(s)
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_known() {
        for a in KNOWN_ARCHS {
            assert_eq!(Arch::parse(a).unwrap().as_str(), *a);
        }
        assert_eq!(Arch::parse(" sm_90 ").unwrap().as_str(), "sm_90");
        assert_eq!(Arch::default().as_str(), "sm_70");
    }

    #[test]
    fn rejects_bad() {
        for bad in [
            "",
            "sm",
            "sm_",
            "90",
            "compute_90",
            "sm_60",
            "sm_35",
            "sm_90x",
            "sm_91",
            "SM_90",
        ] {
            let err = Arch::parse(bad).unwrap_err();
            assert!(matches!(err, Error::InvalidArch { .. }), "{bad}: {err:?}");
            assert!(err.to_string().contains("GPU architecture"), "{err}");
        }
        assert!(
            Arch::parse("sm_61")
                .unwrap_err()
                .to_string()
                .contains("sm_70 or newer")
        );
    }
}
