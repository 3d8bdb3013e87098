//! Named limits on input documents, so hostile or broken input costs bounded time and memory.
//!
//! Every limit is checked while reading; exceeding one produces a diagnostic that names the
//! limit, never a panic or an unbounded allocation.

/// Largest document accepted, in bytes (before decoding). A workflow of several thousand
/// activities fits in well under a megabyte.
pub const MAX_DOCUMENT_BYTES: usize = 4 * 1024 * 1024;

/// Deepest element nesting accepted. The deepest construct of either language is
/// `workflow/activities/activity/preconditions/precondition/timeOut` (depth 6).
pub const MAX_DEPTH: usize = 16;

/// Most attributes accepted on one element. The languages use at most two (`basis` and
/// `method` of `assignment`).
pub const MAX_ATTRIBUTES: usize = 8;

/// Longest text content of one element, in bytes (after decoding), e.g. a `command`.
pub const MAX_TEXT_BYTES: usize = 64 * 1024;

/// Most elements accepted in one document, so that tiny empty elements cannot multiply
/// memory use far beyond [`MAX_DOCUMENT_BYTES`].
pub const MAX_ELEMENTS: usize = 200_000;

/// Most retries (`retries/count`) an activity may ask for: how many more tries after the
/// first failed one. A hundred tries, even seconds apart, is already more than a broken
/// command deserves.
pub const MAX_RETRIES: u32 = 100;
