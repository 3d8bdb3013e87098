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

/// How long a request for a class waits by default before it is refused, in seconds
/// (WorkToDo's retries, one a second, sixty of them).
pub const DEFAULT_MAX_WAIT_SECS: u32 = 60;

/// The class document the controller's synchronization manager decides by: every task class
/// an activity may name, which others it conflicts with and how long a request may wait.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ClassDocument {
    /// The classes, in document order.
    pub classes: Vec<TaskClass>,
}

/// One task class.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskClass {
    /// Its name (`id`).
    pub id: ClassName,
    /// The classes it conflicts with (`<conflicts>`): either side naming the other is
    /// enough; naming itself makes its activities mutually exclusive.
    pub conflicts: Vec<ClassName>,
    /// How long a request may wait before it is refused, in seconds (`<maxWait>`; 0: refused
    /// unless granted at once).
    pub max_wait_secs: u32,
}

impl TaskClass {
    /// A class that conflicts with nothing and waits the default time.
    pub fn new(id: impl Into<ClassName>) -> TaskClass {
        TaskClass {
            id: id.into(),
            conflicts: Vec::new(),
            max_wait_secs: DEFAULT_MAX_WAIT_SECS,
        }
    }
}

impl ClassDocument {
    /// The class named `name`.
    pub fn class(&self, name: &ClassName) -> Option<&TaskClass> {
        self.classes.iter().find(|c| &c.id == name)
    }

    /// True when an activity of class `a` and one of class `b` may not run at once: either
    /// names the other among its conflicts (a class naming itself: two of its own).
    pub fn conflict(&self, a: &ClassName, b: &ClassName) -> bool {
        let names = |x: &ClassName, y: &ClassName| {
            self.class(x)
                .is_some_and(|c| c.conflicts.iter().any(|n| n == y))
        };
        names(a, b) || names(b, a)
    }
}
