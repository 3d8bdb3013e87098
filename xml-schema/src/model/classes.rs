//! Task classes (*Synchronization and Disconnected Operation in WorkToDo* (IC-03-006), §4.8): the
//! name an activity gives its class, which the synchronization manager keeps conflicting
//! activities apart by.

crate::text_id!(
    /// A task class's name (extension `class` of an activity): one word, at most
    /// [`crate::limits::MAX_ID_CHARS`] characters, as the organisation document's ids.
    ClassName
);

/// Why `name` cannot be a class name (`None` when it can), in words with what to do.
pub fn class_name_problem(name: &str) -> Option<String> {
    use crate::limits::MAX_ID_CHARS;
    let chars = name.chars().count();
    let fault = if name.is_empty() {
        "a class name cannot be empty".to_owned()
    } else if name.chars().any(char::is_whitespace) {
        format!(
            "class name \"{}\" contains white space",
            crate::read::abbreviate(name)
        )
    } else if chars > MAX_ID_CHARS {
        format!(
            "class name \"{}\" has {chars} characters, more than the {MAX_ID_CHARS} allowed \
             (MAX_ID_CHARS)",
            crate::read::abbreviate(name)
        )
    } else {
        return None;
    };
    Some(format!(
        "{fault}; a class name is one word of at most {MAX_ID_CHARS} characters, e.g. press"
    ))
}
