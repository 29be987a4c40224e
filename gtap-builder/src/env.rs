//! Where the builder reads its environment from: the process, or a map in tests.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

/// A source of environment variables. Toolchain discovery reads everything through this, so
/// tests can run it against a made-up environment.
pub trait Env {
    /// The value of `key`, if set.
    fn var_os(&self, key: &str) -> Option<OsString>;

    /// The value of `key` if set and not empty.
    fn non_empty(&self, key: &str) -> Option<OsString> {
        self.var_os(key).filter(|v| !v.is_empty())
    }

    /// True if `key` is set to something other than empty, `0`, `false` or `no`.
    fn flag(&self, key: &str) -> bool {
        match self.var_os(key) {
            None => false,
            Some(v) => !matches!(
                v.to_string_lossy().trim().to_ascii_lowercase().as_str(),
                "" | "0" | "false" | "no" | "off"
            ),
        }
    }
}

/// The environment of this process.
#[derive(Clone, Copy, Debug, Default)]
pub struct ProcessEnv;

impl Env for ProcessEnv {
    fn var_os(&self, key: &str) -> Option<OsString> {
        std::env::var_os(key)
    }
}

impl Env for HashMap<String, OsString> {
    fn var_os(&self, key: &str) -> Option<OsString> {
        self.get(key).cloned()
    }
}

impl Env for HashMap<&str, &str> {
    fn var_os(&self, key: &str) -> Option<OsString> {
        self.get(key).map(OsString::from)
    }
}

/// Finds `name` on the `PATH` of `env` (an executable regular file).
pub fn which(env: &dyn Env, name: &str) -> Option<PathBuf> {
    let path = env.var_os("PATH")?;
    std::env::split_paths(&path)
        .filter(|dir| !dir.as_os_str().is_empty())
        .map(|dir| dir.join(name))
        .find(|p| is_executable(p))
}

/// True if `path` is a regular file this process may execute.
pub fn is_executable(path: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(path) else {
        return false;
    };
    if !meta.is_file() {
        return false;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        true
    }
}

/// Shows an `OsStr` for messages.
pub(crate) fn lossy(s: &OsStr) -> String {
    s.to_string_lossy().into_owned()
}
