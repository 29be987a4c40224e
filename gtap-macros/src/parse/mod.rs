//! Parsing: the annotated item and the arguments of the body macros, as written.

pub(crate) mod input;
pub(crate) mod item;

pub(crate) use input::{EntryInput, TaskInput, WaitInput};
pub(crate) use item::{FnKind, Mode, parse_item};
