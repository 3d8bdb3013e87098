//! Applications (*A Workflow Management System for Mobile Devices*; WorkToDo's PDL `APPLICATION
//! Name { COMMAND "sh"; SIZE n; OS word; }`): the program a person's device starts when they
//! select a semi-automatic activity, defined once in a workflow and named by its activities.

use crate::limits::MAX_ID_CHARS;

crate::text_id!(
    /// An application's name (`<application id>`): one word, at most [`MAX_ID_CHARS`]
    /// characters, as the organisation document's ids.
    ApplicationId
);

/// The largest `<size>` of an application, in KiB: 1 TiB, far beyond any device's disk, so
/// that sums of sizes never overflow.
pub const MAX_APPLICATION_KIB: u64 = 1 << 30;

/// One application: what its device runs, how much it takes there, and where it runs.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Application {
    /// `@id`: what activities name it by.
    pub id: ApplicationId,
    /// `command`: the command line the device runs with `sh -c` (not empty).
    pub command: String,
    /// `size`: what it takes on a device, in KiB (a device that goes offline takes it along
    /// unless it has it installed); default 0.
    pub size_kib: u64,
    /// `os`: the operating system it runs on, as Rust names them (`linux`, `macos`, `windows`,
    /// ...); default none (any).
    pub os: Option<String>,
}

/// Why `name` cannot be a `what` (an application's id, an operating system; `None` when it
/// can), in words with what to do; `example` shows a good one.
pub fn word_problem(what: &str, name: &str, example: &str) -> Option<String> {
    let chars = name.chars().count();
    let fault = if name.is_empty() {
        format!("{what} cannot be empty")
    } else if name.chars().any(char::is_whitespace) {
        format!(
            "{what} \"{}\" contains white space",
            crate::read::abbreviate(name)
        )
    } else if chars > MAX_ID_CHARS {
        format!(
            "{what} \"{}\" has {chars} characters, more than the {MAX_ID_CHARS} allowed \
             (MAX_ID_CHARS)",
            crate::read::abbreviate(name)
        )
    } else {
        return None;
    };
    Some(format!(
        "{fault}; {what} is one word of at most {MAX_ID_CHARS} characters, e.g. {example}"
    ))
}

/// Why `name` cannot be an application's id, or `None`.
pub fn application_id_problem(name: &str) -> Option<String> {
    word_problem("an application name", name, "editor")
}

/// Why `name` cannot be an operating system's name, or `None`.
pub fn os_problem(name: &str) -> Option<String> {
    word_problem("an operating system", name, "linux")
}
