//! The linker's account of what it wrote, read by the builder: which PTX module holds which
//! kernel, and the task record sizes, crate-wide and per module.
//!
//! rustc expects the linker to write one file (`-o OUT.ptx`); that file holds a single
//! comment line naming the manifest (`// gtap-modules: DIR/manifest.json`), and the modules
//! and the manifest are in `DIR` (`OUT` with the extension `modules`).

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::Error;

/// The line of the linker's output file that names the manifest.
const POINTER: &str = "// gtap-modules: ";

/// One kernel's module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModuleEntry {
    /// The kernels it holds (one, for now).
    pub kernels: Vec<String>,
    /// The PTX file.
    pub ptx: PathBuf,
    /// Record sizes (symbol, bytes) of the task functions whose code it holds.
    pub records: Vec<(String, u32)>,
}

/// Everything one link produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Manifest {
    /// `--target-cpu` of the link (`sm_70`, ...).
    pub target_cpu: String,
    /// Record sizes of every task function of the linked crates, measured before splitting.
    pub records: Vec<(String, u32)>,
    /// The modules, one per kernel.
    pub modules: Vec<ModuleEntry>,
}

/// Where the modules of a link whose output is `output` go.
pub(crate) fn modules_dir(output: &Path) -> PathBuf {
    output.with_extension("modules")
}

fn records_json(records: &[(String, u32)]) -> Value {
    records.iter().map(|(s, b)| json!([s, b])).collect()
}

fn records_from(v: &Value) -> Option<Vec<(String, u32)>> {
    v.as_array()?
        .iter()
        .map(|r| {
            Some((
                r[0].as_str()?.to_owned(),
                u32::try_from(r[1].as_u64()?).ok()?,
            ))
        })
        .collect()
}

impl Manifest {
    /// Writes the manifest into `dir` and the pointer to it into `output`.
    pub(crate) fn write(&self, dir: &Path, output: &Path) -> Result<(), Error> {
        let modules: Vec<Value> = self
            .modules
            .iter()
            .map(|m| {
                json!({
                    "kernels": m.kernels,
                    "ptx": m.ptx.to_string_lossy(),
                    "records": records_json(&m.records),
                })
            })
            .collect();
        let v = json!({
            "target_cpu": self.target_cpu,
            "records": records_json(&self.records),
            "modules": modules,
        });
        let path = dir.join("manifest.json");
        let text = serde_json::to_string_pretty(&v).unwrap_or_default();
        fs::write(&path, text).map_err(|e| Error::io("write", &path, e))?;
        let pointer = format!(
            "{POINTER}{}\n// (gtap's linker writes one PTX module per kernel; see that manifest)\n",
            path.display()
        );
        fs::write(output, pointer).map_err(|e| Error::io("write", output, e))
    }

    /// Reads the manifest named by a link's output file `output`.
    pub fn read(output: &Path) -> Result<Manifest, Error> {
        let text = fs::read_to_string(output).map_err(|e| Error::io("read", output, e))?;
        let path = text
            .lines()
            .find_map(|l| l.strip_prefix(POINTER))
            .map(PathBuf::from)
            .ok_or_else(|| {
                bad(
                    output,
                    "no `gtap-modules:` line: not written by this version of gtap's linker \
                     (remove the device build directory, `<target>/gtap-device`, and build again)",
                )
            })?;
        let json = fs::read_to_string(&path).map_err(|e| Error::io("read", &path, e))?;
        let v: Value = serde_json::from_str(&json).map_err(|e| bad(&path, &e.to_string()))?;
        Self::from_json(&v).ok_or_else(|| bad(&path, "missing or malformed fields"))
    }

    fn from_json(v: &Value) -> Option<Manifest> {
        let modules = v["modules"]
            .as_array()?
            .iter()
            .map(|m| {
                Some(ModuleEntry {
                    kernels: m["kernels"]
                        .as_array()?
                        .iter()
                        .map(|k| k.as_str().map(str::to_owned))
                        .collect::<Option<_>>()?,
                    ptx: PathBuf::from(m["ptx"].as_str()?),
                    records: records_from(&m["records"])?,
                })
            })
            .collect::<Option<_>>()?;
        Some(Manifest {
            target_cpu: v["target_cpu"].as_str()?.to_owned(),
            records: records_from(&v["records"])?,
            modules,
        })
    }
}

fn bad(path: &Path, problem: &str) -> Error {
    Error::BadToolOutput {
        command: format!("gtap's linker (reading `{}`)", path.display()),
        problem: problem.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_the_output_file() {
        let t = tempfile::tempdir().unwrap();
        let out = t.path().join("ex.ptx");
        let dir = modules_dir(&out);
        fs::create_dir_all(&dir).unwrap();
        let m = Manifest {
            target_cpu: "sm_90".into(),
            records: vec![
                ("__gtap_record_ex$fib$1".into(), 56),
                ("__gtap_record_ex$nq$2".into(), 124),
            ],
            modules: vec![ModuleEntry {
                kernels: vec!["fib_kernel".into()],
                ptx: dir.join("fib_kernel.ptx"),
                records: vec![("__gtap_record_ex$fib$1".into(), 56)],
            }],
        };
        m.write(&dir, &out).unwrap();
        assert_eq!(Manifest::read(&out).unwrap(), m);
        fs::write(&out, "// something else\n").unwrap();
        assert!(Manifest::read(&out).is_err());
    }
}
