//! Reading LLVM IR text (`llvm-dis` output) and symbol names: which functions are kernels,
//! what size each task record has, and which task function a poll shim belongs to.

use std::collections::BTreeSet;

/// Kernels defined in an LLVM IR module (text): functions with the `ptx_kernel` calling
/// convention, and functions named in `nvvm.annotations` as kernels.
pub fn kernels_in_ir(ir: &str) -> Vec<String> {
    let mut found = BTreeSet::new();
    for line in ir.lines() {
        let head = line.split('(').next().unwrap_or("");
        let is_kernel = (line.starts_with("define ")
            && head.split_whitespace().any(|w| w == "ptx_kernel"))
            || (line.starts_with('!') && line.contains("!\"kernel\""));
        if let Some(name) = ir_function_name(line).filter(|_| is_kernel) {
            found.insert(name);
        }
    }
    found.into_iter().collect()
}

/// Functions of an LLVM IR module (text) that call themselves: the sequential leaves of
/// divide-and-conquer code (see [`crate::unrolling`]). A call is `call`, `tail call` or
/// `invoke` of the function's own `@name(` inside its body.
pub(crate) fn self_recursive_functions(ir: &str) -> Vec<String> {
    let mut found = BTreeSet::new();
    let mut current: Option<(String, String)> = None;
    for line in ir.lines() {
        if line.starts_with("define ") {
            current = ir_function_name(line.split('(').next().unwrap_or(""))
                .map(|name| (format!("@{}(", quoted(&name)), name));
        } else if line.starts_with('}') {
            current = None;
        } else if let Some((callee, name)) = &current
            && (line.contains("call ") || line.contains("invoke "))
            && line.contains(callee.as_str())
        {
            found.insert(name.clone());
        }
    }
    found.into_iter().collect()
}

/// `name` as IR writes it after `@`: quoted unless every character may stand bare.
fn quoted(name: &str) -> String {
    if name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '$' | '-'))
    {
        name.to_owned()
    } else {
        format!("\"{name}\"")
    }
}

/// The first `@name` or `@"name"` in a line of IR.
fn ir_function_name(line: &str) -> Option<String> {
    let at = line.find('@')?;
    let rest = &line[at + 1..];
    if let Some(q) = rest.strip_prefix('"') {
        let end = q.find('"')?;
        Some(q[..end].to_owned())
    } else {
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '$' | '-')))
            .unwrap_or(rest.len());
        (end > 0).then(|| rest[..end].to_owned())
    }
}

/// The prefix of the `u32` global holding a task function's record size, which
/// `#[gtap::function]` exports as `__gtap_record_<crate>$<function>$<hash>`.
pub(crate) const RECORD_PREFIX: &str = "__gtap_record_";

/// The record-size globals of an LLVM IR module (text): (symbol, bytes), sorted by symbol.
/// rustc writes each as `constant [4 x i8] c"..."` (little endian) or `constant i32 N`.
pub(crate) fn records_in_ir(ir: &str) -> Vec<(String, u32)> {
    u32_globals_in_ir(ir, RECORD_PREFIX)
}

/// The prefix of the `u32` global holding a kernel's register limit, which
/// `#[gtap::kernel(max_registers = R)]` exports as `__gtap_maxnreg_<kernel>`.
pub(crate) const MAXNREG_PREFIX: &str = "__gtap_maxnreg_";

/// The register limits of an LLVM IR module (text): (kernel, registers), sorted by kernel.
pub(crate) fn register_limits_in_ir(ir: &str) -> Vec<(String, u32)> {
    u32_globals_in_ir(ir, MAXNREG_PREFIX)
        .into_iter()
        .map(|(symbol, n)| (symbol[MAXNREG_PREFIX.len()..].to_owned(), n))
        .collect()
}

/// The `u32` globals of an LLVM IR module (text) whose names start with `prefix`: (symbol,
/// value), sorted by symbol.
fn u32_globals_in_ir(ir: &str, prefix: &str) -> Vec<(String, u32)> {
    let mut found: Vec<(String, u32)> = ir
        .lines()
        .filter(|l| l.starts_with('@'))
        .filter_map(|line| {
            let name = ir_function_name(line)?;
            if !name.starts_with(prefix) {
                return None;
            }
            let init = line.split_once(" = ")?.1;
            Some((name, record_value(init)?))
        })
        .collect();
    found.sort();
    found
}

/// The `u32` value of a record (or register limit) global's initializer.
fn record_value(init: &str) -> Option<u32> {
    if init.contains("zeroinitializer") {
        return Some(0);
    }
    if let Some(at) = init.find("c\"") {
        let bytes = llvm_string_bytes(&init[at + 2..])?;
        let mut v = [0u8; 4];
        for (d, b) in v.iter_mut().zip(bytes) {
            *d = b;
        }
        return Some(u32::from_le_bytes(v));
    }
    let after = &init[init.find(" i32 ")? + 5..];
    let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// The bytes of an LLVM string constant's body up to its closing quote (`\XX` escapes).
fn llvm_string_bytes(body: &str) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut it = body.bytes();
    while let Some(b) = it.next() {
        match b {
            b'"' => return Some(out),
            b'\\' => {
                let hex = [it.next()?, it.next()?];
                out.push(u8::from_str_radix(std::str::from_utf8(&hex).ok()?, 16).ok()?);
            }
            b => out.push(b),
        }
    }
    None
}

/// The (crate, function) a record symbol names: `__gtap_record_<crate>$<function>$<hash>`.
pub(crate) fn record_task(symbol: &str) -> Option<(&str, &str)> {
    let mut parts = symbol.strip_prefix(RECORD_PREFIX)?.split('$');
    Some((parts.next()?, parts.next()?))
}

/// The task function whose poll shim `symbol` is, as (crate, function): the shim is
/// `gtap_device::record::poll_shim::<F>`, where `F` is the unit struct `#[gtap::function]`
/// defines under the function's name; read from its v0-mangled name. `None` for every other
/// symbol (and for shapes of mangling this reader does not know).
pub(crate) fn poll_shim_task(symbol: &str) -> Option<(String, String)> {
    let at = symbol.find("9poll_shim")?;
    let mut m = Mangled(&symbol.as_bytes()[at + "9poll_shim".len()..]);
    let mut depth = 0;
    while m.peek() == Some(b'N') {
        m.skip(2); // `N` and the namespace tag.
        depth += 1;
    }
    if !m.eat(b'C') || depth == 0 {
        return None;
    }
    let krate = m.identifier()?;
    let mut name = String::new();
    for _ in 0..depth {
        name = m.identifier()?;
    }
    Some((krate, name))
}

/// A cursor over a v0-mangled symbol.
struct Mangled<'a>(&'a [u8]);

impl Mangled<'_> {
    fn peek(&self) -> Option<u8> {
        self.0.first().copied()
    }

    fn skip(&mut self, n: usize) {
        self.0 = &self.0[n.min(self.0.len())..];
    }

    fn eat(&mut self, b: u8) -> bool {
        let hit = self.peek() == Some(b);
        if hit {
            self.skip(1);
        }
        hit
    }

    /// `[s<base62>_] <decimal length> [_] <bytes>`; punycode (`u`) identifiers are refused.
    fn identifier(&mut self) -> Option<String> {
        if self.eat(b's') {
            let end = self.0.iter().position(|&b| b == b'_')?;
            self.skip(end + 1);
        }
        let digits = self.0.iter().take_while(|b| b.is_ascii_digit()).count();
        let len: usize = std::str::from_utf8(&self.0[..digits]).ok()?.parse().ok()?;
        self.skip(digits);
        self.eat(b'_');
        let ident = self.0.get(..len)?;
        self.skip(len);
        String::from_utf8(ident.to_vec()).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_kernels_in_ir() {
        let ir = "define ptx_kernel void @gtap_probe(ptr noundef %0) unnamed_addr #2 {\n\
                  define internal void @helper() {\n\
                  define dso_local ptx_kernel void @\"quoted name\"() {\n\
                  define void @annotated(i32 %x) {\n\
                  !0 = !{ptr @annotated, !\"kernel\", i32 1}\n\
                  !1 = !{ptr @other, !\"maxntidx\", i32 128}\n";
        assert_eq!(
            kernels_in_ir(ir),
            ["annotated", "gtap_probe", "quoted name"]
        );
    }

    #[test]
    fn finds_functions_that_call_themselves() {
        let ir = "define internal i32 @leaf(i32 %n) unnamed_addr #0 {\n\
                  start:\n  %r = tail call i32 @leaf(i32 %n)\n  ret i32 %r\n}\n\
                  define i32 @caller(i32 %n) {\n  %r = call i32 @leaf(i32 %n)\n  ret i32 %r\n}\n\
                  define void @\"odd name\"() {\n  call void @\"odd name\"()\n  ret void\n}\n\
                  define void @loop_only() {\n  br label %l\n}\n\
                  define void @names_itself() {\n  store ptr @names_itself, ptr null\n  ret void\n}\n\
                  define void @prefix() {\n  call void @prefix_longer()\n  ret void\n}\n";
        assert_eq!(self_recursive_functions(ir), ["leaf", "odd name"]);
    }

    #[test]
    fn reads_record_sizes_in_both_printings() {
        let ir = "@\"__gtap_record_ex$fib$3cc2\" = constant [4 x i8] c\"8\\00\\00\\00\", align 4\n\
                  @\"__gtap_record_ex$nq$9f\" = local_unnamed_addr constant i32 336, align 4\n\
                  @\"__gtap_record_ex$big$01\" = constant [4 x i8] c\"\\00\\01\\00\\00\", align 4\n\
                  @other = constant i32 5\n";
        assert_eq!(
            records_in_ir(ir),
            [
                ("__gtap_record_ex$big$01".to_string(), 256),
                ("__gtap_record_ex$fib$3cc2".to_string(), 56),
                ("__gtap_record_ex$nq$9f".to_string(), 336),
            ]
        );
        assert_eq!(
            record_task("__gtap_record_ex$fib$3cc2"),
            Some(("ex", "fib"))
        );
        assert_eq!(record_task("other"), None);
    }

    #[test]
    fn reads_register_limits_by_kernel() {
        let ir = "@__gtap_maxnreg_spmv_block_kernel = constant i32 80, align 4\n\
                  @__gtap_maxnreg_tree = local_unnamed_addr constant [4 x i8] c\"`\\00\\00\\00\", align 4\n\
                  @\"__gtap_record_ex$fib$3cc2\" = constant i32 56, align 4\n";
        assert_eq!(
            register_limits_in_ir(ir),
            [
                ("spmv_block_kernel".to_string(), 80),
                ("tree".to_string(), 96),
            ]
        );
    }

    #[test]
    fn names_the_task_function_of_a_poll_shim() {
        let fib = "_RINvNtCs1WQ7ITcE8At_11gtap_device6record9poll_shimNtNtCs4gtOk4FG5mU_\
                   13gtap_examples3fib3fibNCNvXBO_BM_NtNtB4_4task12TaskFunction5start0EBQ_";
        assert_eq!(
            poll_shim_task(fib),
            Some(("gtap_examples".to_string(), "fib".to_string()))
        );
        let nested = "_RINvNtCsX_11gtap_device6record9poll_shimNtNtNtCsY_4demo1a2bb10fib_cutoffNCE";
        assert_eq!(
            poll_shim_task(nested),
            Some(("demo".to_string(), "fib_cutoff".to_string()))
        );
        assert_eq!(
            poll_shim_task("_RNvNtCs1WQ7ITcE8At_11gtap_device4pool7restock"),
            None
        );
    }
}
