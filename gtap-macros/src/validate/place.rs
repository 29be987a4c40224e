//! Rule 4, the shape part: a `task!` destination is a place rooted at a local variable or
//! parameter (`x`, `x.0`, `arr[i]`, `s.f[i]`).
//!
//! The child writes its result through a raw pointer into the parent's task record, so the
//! place must live there: writing through a dereference (`*p`) or into a static would let the
//! write land outside the record, where nothing orders it with the parent's later reads.
//! Whether the root really is a local of the function is checked by the body walk, which knows
//! the scopes.

use syn::{Expr, Ident, Member};

use crate::diagnostics::with_help;
use crate::names::snippet;

/// A destination place.
pub(crate) struct Place {
    /// The root variable.
    pub(crate) root: Ident,
    /// Whether an index appears anywhere in the place (`arr[i]`): such places may be written by
    /// several children before one wait.
    pub(crate) indexed: bool,
    /// The projections after the root (`.0`, `.f`), for overlap checks; `None` once an index
    /// appears.
    pub(crate) fields: Vec<String>,
}

impl Place {
    /// Whether two non-indexed places with the same root variable overlap (one is a prefix of
    /// the other).
    pub(crate) fn overlaps(&self, other: &Place) -> bool {
        !self.indexed
            && !other.indexed
            && self.fields.iter().zip(&other.fields).all(|(a, b)| a == b)
    }
}

/// Analyses a destination expression.
pub(crate) fn place(dst: &Expr) -> syn::Result<Place> {
    let mut fields = Vec::new();
    let mut indexed = false;
    let mut at = dst;
    loop {
        match at {
            Expr::Path(p)
                if p.qself.is_none() && p.attrs.is_empty() && p.path.get_ident().is_some() =>
            {
                fields.reverse();
                return Ok(Place {
                    root: p.path.get_ident().cloned().expect("checked above"),
                    indexed,
                    fields,
                });
            }
            Expr::Path(p) => {
                return Err(syn::Error::new_spanned(
                    p,
                    with_help(
                        format!(
                            "`{}` is not a local variable or parameter: a child's result must \
                             land in this task's own record",
                            snippet(p)
                        ),
                        "write into a local, and copy it to its final place after \
                         `gtap::taskwait!()`",
                    ),
                ));
            }
            Expr::Field(f) => {
                fields.push(match &f.member {
                    Member::Named(n) => n.to_string(),
                    Member::Unnamed(i) => i.index.to_string(),
                });
                at = &f.base;
            }
            Expr::Index(i) => {
                indexed = true;
                fields.clear();
                at = &i.expr;
            }
            Expr::Paren(p) => at = &p.expr,
            Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => {
                return Err(syn::Error::new_spanned(
                    dst,
                    with_help(
                        format!(
                            "the destination `{}` writes through a dereference; a child's \
                             result must land in this task's own record",
                            snippet(dst)
                        ),
                        format!(
                            "write into a local, and copy it after the wait: `let mut t = \
                             Default::default(); gtap::task!(t = ..); gtap::taskwait!(); {} = t;`",
                            snippet(dst)
                        ),
                    ),
                ));
            }
            _ => {
                return Err(syn::Error::new_spanned(
                    dst,
                    with_help(
                        format!(
                            "`{}` is not a place rooted at a local variable or parameter",
                            snippet(dst)
                        ),
                        "write the result into a local (`x`), a field of one (`x.0`) or an \
                         element of one (`arr[i]`), and copy it after `gtap::taskwait!()`",
                    ),
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    #[test]
    fn places() {
        let p = place(&parse_quote!(s.f[i].g)).unwrap();
        assert_eq!(p.root, "s");
        assert!(p.indexed);
        let p = place(&parse_quote!(x.0)).unwrap();
        assert_eq!(p.fields, vec!["0"]);
        assert!(place(&parse_quote!(*p)).is_err());
        assert!(place(&parse_quote!(crate::X)).is_err());
        assert!(place(&parse_quote!(f().x)).is_err());
    }

    #[test]
    fn overlap() {
        let a = place(&parse_quote!(p)).unwrap();
        let b = place(&parse_quote!(p.0)).unwrap();
        let c = place(&parse_quote!(p.1)).unwrap();
        assert!(a.overlaps(&b));
        assert!(!b.overlaps(&c));
        assert!(b.overlaps(&b));
    }
}
