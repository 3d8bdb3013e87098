//! Cross-reference checks on a read model: ids, cycles, placement, skills.
//!
//! Each check reports at the place in the document a person would edit, and says how to fix
//! it. All checks run, so one pass shows every problem.

mod cycles;
mod definition;
mod partition;

pub use definition::validate_definition;
pub use partition::validate_partition;

use std::collections::HashMap;
use std::hash::Hash;

use crate::diagnostic::{Diagnostic, Pos};

/// Reports every repeated id among `items` (at the repetition, naming the first).
fn duplicates<K: Copy + Eq + Hash + std::fmt::Display>(
    diags: &mut Vec<Diagnostic>,
    what: &str,
    items: impl Iterator<Item = (K, Pos)>,
) {
    let mut first: HashMap<K, Pos> = HashMap::new();
    for (id, pos) in items {
        if let Some(at) = first.get(&id) {
            diags.push(Diagnostic::new(
                pos,
                format!(
                    "duplicate {what} id {id}: {what} {id} is already defined at {at}; give each {what} its own id"
                ),
            ));
        } else {
            first.insert(id, pos);
        }
    }
}

/// `a, b and c`.
fn list<T: std::fmt::Display>(items: &[T]) -> String {
    let words: Vec<String> = items.iter().map(ToString::to_string).collect();
    match words.as_slice() {
        [] => "none".to_string(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}
