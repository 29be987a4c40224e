//! Collecting every error of one macro invocation, each spanned on the user's tokens.
//!
//! The macros never stop at the first problem: each check pushes its error here and carries on,
//! so one build shows all of them. [`Diagnostics::to_compile_errors`] turns the collection into
//! `compile_error!` invocations (one per error, [`syn::Error::combine`] keeps their spans).

use std::fmt::Display;

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;

/// The errors found so far in one macro invocation.
#[derive(Default)]
pub(crate) struct Diagnostics {
    errors: Option<syn::Error>,
}

impl Diagnostics {
    /// An empty collection.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Adds an error (which may itself hold several).
    pub(crate) fn push(&mut self, error: syn::Error) {
        match &mut self.errors {
            Some(all) => all.combine(error),
            None => self.errors = Some(error),
        }
    }

    /// Adds an error spanning `tokens` (from their first to their last token).
    pub(crate) fn spanned(&mut self, tokens: impl ToTokens, message: impl Display) {
        self.push(syn::Error::new_spanned(tokens, message));
    }

    /// Adds an error at `span`.
    pub(crate) fn at(&mut self, span: Span, message: impl Display) {
        self.push(syn::Error::new(span, message));
    }

    /// Whether any error was found.
    pub(crate) fn has_errors(&self) -> bool {
        self.errors.is_some()
    }

    /// The collected error, if any (to move errors from one collection to another).
    pub(crate) fn into_error(self) -> Option<syn::Error> {
        self.errors
    }

    /// One `compile_error!` per error, empty when there is none.
    pub(crate) fn to_compile_errors(&self) -> TokenStream {
        self.errors
            .as_ref()
            .map(syn::Error::to_compile_error)
            .unwrap_or_default()
    }
}

/// Formats an error message with a `help:` line saying what to write instead.
///
/// rustc prints the text of a `compile_error!` as it is, so the help goes on its own line,
/// in the style of rustc's own `= help:` notes.
pub(crate) fn with_help(message: impl Display, help: impl Display) -> String {
    format!("{message}\n= help: {help}")
}
