//! Completion flags (seed 002's COMPLETION_FLAG): the word a person or a command ends an
//! activity with, which routes and `<merge flag>` read. One spelling rule for documents, the
//! command line and the flag file a command writes.

use crate::limits::MAX_FLAG_CHARS;

/// What is wrong with `flag` as a completion flag, or `None` when it is one: 1 to
/// [`MAX_FLAG_CHARS`] characters of `A-Z a-z 0-9 _ . -`.
pub fn flag_problem(flag: &str) -> Option<String> {
    if flag.is_empty() {
        return Some("a completion flag cannot be empty".to_owned());
    }
    if flag.chars().count() > MAX_FLAG_CHARS {
        return Some(format!(
            "completion flag {flag:?} is longer than {MAX_FLAG_CHARS} characters \
             (MAX_FLAG_CHARS); a flag names a decision, e.g. approved"
        ));
    }
    if let Some(c) = flag
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')))
    {
        return Some(format!(
            "completion flag {flag:?} holds {c:?}; a flag is made of letters, digits, '_', '.' \
             and '-', e.g. approved"
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_are_short_words() {
        assert_eq!(flag_problem("approved"), None);
        assert_eq!(flag_problem("v1.2-ok_"), None);
        assert!(flag_problem("").is_some());
        assert!(flag_problem("two words").is_some_and(|m| m.contains("' '")));
        assert!(flag_problem(&"x".repeat(65)).is_some_and(|m| m.contains("MAX_FLAG_CHARS")));
    }
}
