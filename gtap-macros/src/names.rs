//! Recognising gtap's macros and attributes by path, and naming things in messages.
//!
//! A proc macro sees paths, not resolved items, so `task!` is recognised by spelling:
//! `gtap::task!`, `::gtap::task!` or a bare `task!` (after `use gtap::task`).

use quote::ToTokens;
use syn::{Attribute, Path};

/// One of the macros that `#[gtap::function]` and `#[gtap::kernel]` rewrite in a body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum GtapMacro {
    /// `task!`: spawn a child.
    Task,
    /// `taskwait!`: join the children.
    Wait,
    /// `entry!`: start the root task from a kernel.
    Entry,
}

impl GtapMacro {
    /// Classifies a macro invocation's path; `None` for any other macro.
    pub(crate) fn of(path: &Path) -> Option<Self> {
        let last = gtap_path_last(path)?;
        match last.as_str() {
            "task" => Some(Self::Task),
            "taskwait" => Some(Self::Wait),
            "entry" => Some(Self::Entry),
            _ => None,
        }
    }

    /// How the user writes it, for messages.
    pub(crate) fn display(self) -> &'static str {
        match self {
            Self::Task => "gtap::task!",
            Self::Wait => "gtap::taskwait!",
            Self::Entry => "gtap::entry!",
        }
    }
}

/// The last segment of `path` if it is `NAME`, `gtap::NAME` or `::gtap::NAME` without generic
/// arguments.
fn gtap_path_last(path: &Path) -> Option<String> {
    let segments: Vec<_> = path.segments.iter().collect();
    if segments.iter().any(|s| !s.arguments.is_none()) {
        return None;
    }
    match segments.as_slice() {
        [only] if path.leading_colon.is_none() => Some(only.ident.to_string()),
        [krate, last] if krate.ident == "gtap" => Some(last.ident.to_string()),
        _ => None,
    }
}

/// Whether `attr` is `#[gtap::function]` or `#[gtap::kernel]` (also bare or with a leading
/// `::`): an item carrying it is lowered by its own expansion, not by the enclosing one.
pub(crate) fn is_gtap_attribute(attr: &Attribute) -> bool {
    matches!(
        gtap_path_last(attr.path()).as_deref(),
        Some("function" | "kernel")
    )
}

/// A path as a string without spaces (`crate::fib`), for comparisons and messages.
pub(crate) fn path_key(path: &Path) -> String {
    path.to_token_stream()
        .to_string()
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect()
}

/// Tokens as compact text for messages (`arr[i]`, `*p`).
pub(crate) fn snippet(tokens: &impl ToTokens) -> String {
    let text = tokens.to_token_stream().to_string();
    // `to_string` puts spaces between all tokens; drop the ones a person would not write.
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut prev = ' ';
    while let Some(c) = chars.next() {
        if c == ' ' {
            let next = chars.peek().copied().unwrap_or(' ');
            let glue_before = matches!(next, '.' | '[' | ']' | '(' | ')' | ',' | ':' | '!');
            let glue_after = matches!(prev, '.' | '[' | '(' | '&' | '*' | ':' | '!');
            if glue_before || glue_after {
                continue;
            }
        }
        out.push(c);
        prev = c;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    #[test]
    fn classifies_spellings() {
        assert_eq!(
            GtapMacro::of(&parse_quote!(gtap::task)),
            Some(GtapMacro::Task)
        );
        assert_eq!(
            GtapMacro::of(&parse_quote!(::gtap::taskwait)),
            Some(GtapMacro::Wait)
        );
        assert_eq!(GtapMacro::of(&parse_quote!(entry)), Some(GtapMacro::Entry));
        assert_eq!(GtapMacro::of(&parse_quote!(other::task)), None);
        assert_eq!(GtapMacro::of(&parse_quote!(::task)), None);
        assert_eq!(GtapMacro::of(&parse_quote!(println)), None);
    }

    #[test]
    fn snippets_read_like_source() {
        let e: syn::Expr = parse_quote!(s.f[i + 1]);
        assert_eq!(snippet(&e), "s.f[i + 1]");
        let e: syn::Expr = parse_quote!(*p);
        assert_eq!(snippet(&e), "*p");
        let e: syn::Expr = parse_quote!(crate::fib(n - 1));
        assert_eq!(snippet(&e), "crate::fib(n - 1)");
    }
}
