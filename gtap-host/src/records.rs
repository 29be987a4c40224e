//! Task record sizes, as the compiler produced them: from the PTX for the GPU, from the
//! task functions linked into the program for the CPU executor.

/// The `__gtap_record_*` globals of a PTX module: (symbol, record bytes). Each is a `u32` that
/// `#[gtap::function]` exports; LLVM prints it either as `.u32 NAME = V;` or as a byte array
/// `.b8 NAME[4] = {b0, b1, b2, b3};` (trailing zero bytes may be omitted).
pub(crate) fn from_ptx(ptx: &str) -> Vec<(String, u32)> {
    ptx.lines().filter_map(parse_line).collect()
}

fn parse_line(line: &str) -> Option<(String, u32)> {
    let line = line.trim();
    if !line.contains(".global") {
        return None;
    }
    let start = line.find("__gtap_record_")?;
    let rest = &line[start..];
    let end = rest.find(['[', ' ', '=', ';']).unwrap_or(rest.len());
    let name = rest[..end].to_string();
    let value = line.split_once('=')?.1.trim().trim_end_matches(';').trim();
    let bytes = if let Some(list) = value.strip_prefix('{') {
        let list = list.trim_end_matches('}');
        let mut v = 0u32;
        for (i, b) in list
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .enumerate()
            .take(4)
        {
            v |= b.parse::<u8>().ok()? as u32 * (1 << (8 * i));
        }
        v
    } else {
        value.parse().ok()?
    };
    Some((name, bytes))
}

/// Record sizes of every task function linked into this program (for the CPU executor).
pub(crate) fn host() -> impl Iterator<Item = (&'static str, u32)> {
    gtap_device::task::TASK_RECORDS
        .iter()
        .map(|r| (r.name, r.bytes))
}

/// Names of the kernels (`.entry`) in a PTX module.
pub(crate) fn entries(ptx: &str) -> Vec<&str> {
    ptx.lines()
        .filter_map(|l| {
            let l = l.trim();
            let at = l.find(".entry ")?;
            let name = l[at + 7..].trim();
            let end = name
                .find(|c: char| c == '(' || c.is_whitespace())
                .unwrap_or(name.len());
            Some(&name[..end])
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_printings() {
        let ptx = "\
.visible .global .align 4 .u32 __gtap_record_ex_$_fib = 64;
.visible .global .align 4 .b8 __gtap_record_ex_$_nq[4] = {80, 1};
.visible .global .align 4 .b8 other[4] = {1};
";
        assert_eq!(
            from_ptx(ptx),
            vec![
                ("__gtap_record_ex_$_fib".to_string(), 64),
                ("__gtap_record_ex_$_nq".to_string(), 336)
            ]
        );
    }

    #[test]
    fn finds_entries() {
        let ptx = ".visible .entry fib_kernel(\n.param .u64 x\n)\n.visible .entry gtap_probe(\n";
        assert_eq!(entries(ptx), vec!["fib_kernel", "gtap_probe"]);
    }
}
