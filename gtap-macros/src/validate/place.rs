//! Rule 4, the shape part: a `task!` destination is a place rooted at a local variable or
//! parameter (`x`, `x.0`, `arr[i]`, `s.f[i]`).
//!
//! The child writes its result through a raw pointer into the parent's task record, so the
//! place must live there: writing through a dereference (`*p`) or into a static would let the
//! write land outside the record, where nothing orders it with the parent's later reads.
//! Whether the root really is a local of the function is checked by the body walk, which knows
//! the scopes.

use syn::{Expr, Ident, Lit, Member};

use crate::diagnostics::with_help;
use crate::names::snippet;
use crate::validate::scope::BindingId;

/// A destination place, or a place a body reads (`pair.1`, `arr[0]`).
pub(crate) struct Place {
    /// The root variable.
    pub(crate) root: Ident,
    /// Whether an index appears anywhere in the place (`arr[i]`): such places may be written by
    /// several children before one wait.
    pub(crate) indexed: bool,
    /// The projections after the root, outermost first, for overlap checks.
    pub(crate) steps: Vec<Step>,
}

/// One projection of a place.
pub(crate) enum Step {
    /// `.f` or `.0`.
    Field(String),
    /// `[..]`.
    Index(Index),
}

/// An index, as far as the macro can know its value.
pub(crate) enum Index {
    /// An integer literal.
    Literal(u128),
    /// A variable, not yet resolved ([`Place::resolve`]).
    Name(Ident),
    /// A variable that cannot change while it is in scope (bound without `mut`).
    Fixed(BindingId),
    /// Anything else.
    Unknown,
}

/// How two places with the same root relate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Overlap {
    /// Certainly apart: different fields or different literal indices.
    Disjoint,
    /// Certainly overlapping: one is the other or a part of it.
    Overlapping,
    /// Depends on indices the macro cannot compare.
    Unknown,
}

impl Place {
    /// Resolves variable indices: `fixed(name)` is the binding of a variable that cannot change
    /// while it is in scope, if `name` is one.
    pub(crate) fn resolve(&mut self, fixed: impl Fn(&Ident) -> Option<BindingId>) {
        for step in &mut self.steps {
            if let Step::Index(index) = step
                && let Index::Name(name) = index
            {
                *index = fixed(name).map_or(Index::Unknown, Index::Fixed);
            }
        }
    }

    /// How this place relates to `other` (same root variable): overlapping when one is a
    /// prefix of the other, disjoint as soon as a field or a known index differs.
    pub(crate) fn overlap(&self, other: &Place) -> Overlap {
        let mut unknown = false;
        for (a, b) in self.steps.iter().zip(&other.steps) {
            match (a, b) {
                (Step::Field(x), Step::Field(y)) if x != y => return Overlap::Disjoint,
                (Step::Field(_), Step::Field(_)) => {}
                (Step::Index(Index::Literal(x)), Step::Index(Index::Literal(y))) if x != y => {
                    return Overlap::Disjoint;
                }
                (Step::Index(Index::Literal(_)), Step::Index(Index::Literal(_))) => {}
                (Step::Index(Index::Fixed(x)), Step::Index(Index::Fixed(y))) if x == y => {}
                _ => unknown = true,
            }
        }
        if unknown {
            Overlap::Unknown
        } else {
            Overlap::Overlapping
        }
    }
}

/// What an index expression is, as far as the macro can tell.
fn index_of(expr: &Expr) -> Index {
    match expr {
        Expr::Lit(l) => match &l.lit {
            Lit::Int(i) => i.base10_parse().map_or(Index::Unknown, Index::Literal),
            _ => Index::Unknown,
        },
        Expr::Path(p) if p.qself.is_none() => p
            .path
            .get_ident()
            .map_or(Index::Unknown, |i| Index::Name(i.clone())),
        Expr::Paren(p) => index_of(&p.expr),
        _ => Index::Unknown,
    }
}

/// Analyses a destination expression.
pub(crate) fn place(dst: &Expr) -> syn::Result<Place> {
    let mut steps = Vec::new();
    let mut indexed = false;
    let mut at = dst;
    loop {
        match at {
            Expr::Path(p)
                if p.qself.is_none() && p.attrs.is_empty() && p.path.get_ident().is_some() =>
            {
                steps.reverse();
                return Ok(Place {
                    root: p.path.get_ident().cloned().expect("checked above"),
                    indexed,
                    steps,
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
                steps.push(Step::Field(match &f.member {
                    Member::Named(n) => n.to_string(),
                    Member::Unnamed(i) => i.index.to_string(),
                }));
                at = &f.base;
            }
            Expr::Index(i) => {
                indexed = true;
                steps.push(Step::Index(index_of(&i.index)));
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
        assert_eq!(p.steps.len(), 3);
        let p = place(&parse_quote!(x.0)).unwrap();
        assert!(matches!(&p.steps[..], [Step::Field(f)] if f == "0"));
        assert!(place(&parse_quote!(*p)).is_err());
        assert!(place(&parse_quote!(crate::X)).is_err());
        assert!(place(&parse_quote!(f().x)).is_err());
    }

    fn overlap_of(a: Expr, b: Expr) -> Overlap {
        let fixed = |name: &Ident| (name == "k").then_some(BindingId::for_tests(7));
        let (mut a, mut b) = (place(&a).unwrap(), place(&b).unwrap());
        a.resolve(fixed);
        b.resolve(fixed);
        a.overlap(&b)
    }

    #[test]
    fn overlap() {
        use Overlap::*;
        assert_eq!(overlap_of(parse_quote!(p), parse_quote!(p.0)), Overlapping);
        assert_eq!(overlap_of(parse_quote!(p.0), parse_quote!(p.1)), Disjoint);
        assert_eq!(
            overlap_of(parse_quote!(p.0), parse_quote!(p.0)),
            Overlapping
        );
        assert_eq!(
            overlap_of(parse_quote!(r[0]), parse_quote!(r[0])),
            Overlapping
        );
        assert_eq!(overlap_of(parse_quote!(r[0]), parse_quote!(r[1])), Disjoint);
        assert_eq!(
            overlap_of(parse_quote!(r[0].1), parse_quote!(r[0].0)),
            Disjoint
        );
        assert_eq!(
            overlap_of(parse_quote!(r[k]), parse_quote!(r[k])),
            Overlapping
        );
        assert_eq!(overlap_of(parse_quote!(r[i]), parse_quote!(r[i])), Unknown);
        assert_eq!(
            overlap_of(parse_quote!(r[i].0), parse_quote!(r[j].1)),
            Disjoint
        );
        assert_eq!(overlap_of(parse_quote!(r), parse_quote!(r[i])), Overlapping);
    }
}
