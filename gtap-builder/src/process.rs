//! Running the external tools (rustc, LLVM, ptxas): one runner, so every failure reads the same.

use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;

use crate::Error;

/// Runs `program args` (in `cwd` when given) and returns its stdout; a spawn failure or a
/// non-zero exit is an [`Error`] carrying the command line and what the tool printed.
pub(crate) fn run<S: AsRef<OsStr>>(
    program: &Path,
    args: &[S],
    cwd: Option<&Path>,
) -> Result<String, Error> {
    Ok(run_with_stderr(program, args, cwd)?.0)
}

/// [`run`], returning stdout and stderr (ptxas reports resource usage on stderr).
pub(crate) fn run_with_stderr<S: AsRef<OsStr>>(
    program: &Path,
    args: &[S],
    cwd: Option<&Path>,
) -> Result<(String, String), Error> {
    let mut cmd = Command::new(program);
    cmd.args(args);
    if let Some(d) = cwd {
        cmd.current_dir(d);
    }
    let out = cmd.output().map_err(|source| Error::Spawn {
        program: program.to_owned(),
        source,
    })?;
    let stderr = String::from_utf8_lossy(&out.stderr).trim().to_owned();
    if !out.status.success() {
        return Err(Error::ToolFailed {
            command: command_line(program, args.iter().map(AsRef::as_ref)),
            status: out.status.to_string(),
            output: explain_bitcode_errors(stderr),
        });
    }
    Ok((String::from_utf8_lossy(&out.stdout).into_owned(), stderr))
}

/// LLVM tools older than the rustc that wrote the bitcode fail with cryptic reader errors.
fn explain_bitcode_errors(mut text: String) -> String {
    if text.contains("Unknown attribute kind")
        || text.contains("Invalid record")
        || text.contains("Unknown bitstream version")
        || text.contains("bitcode files")
    {
        text.push_str(
            "\n(this usually means the LLVM tools are older than the rustc that wrote the \
             bitcode: use the tools of the device rustc's LLVM major version)",
        );
    }
    text
}

/// Renders a command line for messages.
pub(crate) fn command_line<'a>(
    program: &Path,
    args: impl IntoIterator<Item = &'a OsStr>,
) -> String {
    let mut s = program.display().to_string();
    for a in args {
        let a = a.to_string_lossy();
        s.push(' ');
        if a.is_empty() || a.contains([' ', '\'', '"', '\\', '$']) {
            s.push('\'');
            s.push_str(&a.replace('\'', "'\\''"));
            s.push('\'');
        } else {
            s.push_str(&a);
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_lines_are_quoted() {
        let s = command_line(
            Path::new("/usr/bin/cargo"),
            ["rustc", "a b", ""].iter().map(OsStr::new),
        );
        assert_eq!(s, "/usr/bin/cargo rustc 'a b' ''");
    }

    #[test]
    fn failures_carry_the_command_and_output() {
        let e = run(Path::new("sh"), &["-c", "echo oops >&2; exit 3"], None).unwrap_err();
        let text = e.to_string();
        assert!(text.contains("sh -c") && text.contains("oops"), "{text}");
        let e = run::<&str>(Path::new("/nonexistent/tool"), &[], None).unwrap_err();
        assert!(matches!(e, Error::Spawn { .. }), "{e:?}");
    }
}
