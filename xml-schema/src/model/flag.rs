//! Completion flags (the COMPLETION_FLAG of *A lightweight workflow engine based on a relational
//! structure* (He, Li, Jiao, Liu), §3.2.2): the word a person or a command ends an activity with,
//! which routes and `<merge flag>` read. One spelling rule for documents, the command line and the
//! flag file a command writes.

use crate::limits::MAX_FLAG_CHARS;

/// Why a text is not a completion flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlagFault {
    /// It is empty.
    Empty,
    /// It has this many characters, more than [`MAX_FLAG_CHARS`].
    TooLong(usize),
    /// It holds this character, which is not a letter, digit, `_`, `.` or `-`.
    BadChar(char),
}

/// What is wrong with `flag` as a completion flag, or `None` when it is one: 1 to
/// [`MAX_FLAG_CHARS`] characters of `A-Z a-z 0-9 _ . -`.
pub fn flag_fault(flag: &str) -> Option<FlagFault> {
    let chars = flag.chars().count();
    if flag.is_empty() {
        return Some(FlagFault::Empty);
    }
    if chars > MAX_FLAG_CHARS {
        return Some(FlagFault::TooLong(chars));
    }
    flag.chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')))
        .map(FlagFault::BadChar)
}

/// [`flag_fault`] in words, for a flag given on the command line, in an API call or in a
/// command's flag file.
pub fn flag_problem(flag: &str) -> Option<String> {
    let fault = match flag_fault(flag)? {
        FlagFault::Empty => "a completion flag cannot be empty".to_owned(),
        FlagFault::TooLong(chars) => format!(
            "completion flag of {chars} characters is over the limit of {MAX_FLAG_CHARS} \
             (MAX_FLAG_CHARS)"
        ),
        FlagFault::BadChar(c) => format!("completion flag {flag:?} holds {c:?}"),
    };
    Some(format!(
        "{fault}; a flag is 1 to {MAX_FLAG_CHARS} of the characters A-Z, a-z, 0-9, _, . and -, \
         e.g. approved"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_are_short_words() {
        assert_eq!(flag_problem("approved"), None);
        assert_eq!(flag_problem("v1.2-ok_"), None);
        assert_eq!(flag_fault(""), Some(FlagFault::Empty));
        assert_eq!(flag_fault("two words"), Some(FlagFault::BadChar(' ')));
        assert_eq!(flag_fault(&"x".repeat(65)), Some(FlagFault::TooLong(65)));
        assert!(flag_problem(&"x".repeat(65)).is_some_and(|m| m.contains("MAX_FLAG_CHARS")));
    }
}
