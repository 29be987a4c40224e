//! Variables mentioned inside another macro's arguments (`assert_eq!(a, 1)`, `println!("{a}")`),
//! which syn keeps as plain tokens: needed for rule 5.

use proc_macro2::{Span, TokenStream, TokenTree};

/// The identifiers in `tokens` that may be variables, with their spans: not field or method
/// names (after `.`), path segments (next to `::`) or macro names (before `!`), plus the names
/// captured by format strings (`"{a}"`, `"{a:>8}"`).
pub(crate) fn variables(tokens: TokenStream) -> Vec<(String, Span)> {
    let mut out = Vec::new();
    collect(tokens, &mut out);
    out
}

/// The identifiers that may be variables in the transcribers of a `macro_rules!` body
/// (`(matcher) => { transcriber };` ...), without its metavariables (`$x`).
pub(crate) fn transcribed(tokens: TokenStream) -> Vec<(String, Span)> {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    let mut out = Vec::new();
    for (i, tree) in trees.iter().enumerate() {
        let arrow = i >= 2
            && matches!(&trees[i - 2], TokenTree::Punct(p) if p.as_char() == '=')
            && matches!(&trees[i - 1], TokenTree::Punct(p) if p.as_char() == '>');
        if let (true, TokenTree::Group(g)) = (arrow, tree) {
            collect(g.stream(), &mut out);
        }
    }
    out
}

fn collect(tokens: TokenStream, out: &mut Vec<(String, Span)>) {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    let punct = |i: Option<usize>, c: char| {
        i.and_then(|i| trees.get(i))
            .is_some_and(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == c))
    };
    for (i, tree) in trees.iter().enumerate() {
        match tree {
            TokenTree::Group(g) => collect(g.stream(), out),
            TokenTree::Ident(ident) => {
                let before = i.checked_sub(1);
                let field = punct(before, '.');
                let after_path = punct(before, ':') && punct(i.checked_sub(2), ':');
                let before_path = punct(Some(i + 1), ':') && punct(Some(i + 2), ':');
                let macro_name = punct(Some(i + 1), '!');
                let metavariable = punct(before, '$');
                if !(field || after_path || before_path || macro_name || metavariable) {
                    out.push((ident.to_string(), ident.span()));
                }
            }
            TokenTree::Literal(lit) => {
                let tree = TokenTree::Literal(lit.clone());
                if let Ok(s) = syn::parse2::<syn::LitStr>(tree.into()) {
                    for name in format_captures(&s.value()) {
                        out.push((name, lit.span()));
                    }
                }
            }
            TokenTree::Punct(_) => {}
        }
    }
}

/// The variable names a format string captures implicitly.
fn format_captures(s: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '{' {
            continue;
        }
        if chars.peek() == Some(&'{') {
            chars.next();
            continue;
        }
        let mut name = String::new();
        while let Some(&c) = chars.peek() {
            if c.is_alphanumeric() || c == '_' {
                name.push(c);
                chars.next();
            } else {
                break;
            }
        }
        let closes = matches!(chars.peek(), Some('}' | ':'));
        if closes && name.chars().next().is_some_and(|c| !c.is_ascii_digit()) {
            names.push(name);
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    fn names(t: TokenStream) -> Vec<String> {
        variables(t).into_iter().map(|(n, _)| n).collect()
    }

    #[test]
    fn skips_fields_paths_and_macros() {
        assert_eq!(
            names(quote!(a, s.f, core::mem::size_of::<T>(), inner!(b))),
            ["a", "s", "T", "b"]
        );
    }

    #[test]
    fn macro_rules_transcribers() {
        let body = quote!(($x:expr) => { a + $x }; () => { b.len() });
        let names: Vec<String> = transcribed(body).into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["a", "b"]);
    }

    #[test]
    fn format_strings() {
        assert_eq!(format_captures("{a} {{b}} {c:>4} {0} {}"), ["a", "c"]);
        assert_eq!(names(quote!("{x}", y)), ["x", "y"]);
    }
}
