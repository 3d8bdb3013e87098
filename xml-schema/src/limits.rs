//! Named limits on input documents, so hostile or broken input costs bounded time and memory.
//!
//! Every limit is checked while reading; exceeding one produces a diagnostic that names the
//! limit, never a panic or an unbounded allocation.

/// Largest document accepted, in bytes (before decoding). A workflow of several thousand
/// activities fits in well under a megabyte.
pub const MAX_DOCUMENT_BYTES: usize = 4 * 1024 * 1024;

/// Deepest element nesting accepted. The deepest fixed construct of either language is
/// `workflow/activities/activity/preconditions/precondition/timeOut` (depth 6); dependency
/// rules nest deeper, `<and>` and `<or>` inside `workflow/activities/activity/depends` down to
/// a `term` at this depth (eleven `and`s and `or`s inside one another).
pub const MAX_DEPTH: usize = 16;

/// Most attributes accepted on one element. The workflow languages use at most two (`basis`
/// and `method` of `assignment`), the organisation document's `user` seven.
pub const MAX_ATTRIBUTES: usize = 8;

/// Deepest element nesting accepted in a BPMN document: diagram interchange nests six deep
/// (`definitions/BPMNDiagram/BPMNPlane/BPMNShape/BPMNLabel/Bounds`), modelers' extension
/// elements and nested lanes deeper.
pub const MAX_BPMN_DEPTH: usize = 32;

/// Most attributes accepted on one element of a BPMN document: modelers declare a dozen or
/// more namespaces on the root, and give tasks their own attributes beside BPMN's.
pub const MAX_BPMN_ATTRIBUTES: usize = 64;

/// Longest text content of one element, in bytes (after decoding), e.g. a `command`.
pub const MAX_TEXT_BYTES: usize = 64 * 1024;

/// Most elements accepted in one document, so that tiny empty elements cannot multiply
/// memory use far beyond [`MAX_DOCUMENT_BYTES`].
pub const MAX_ELEMENTS: usize = 200_000;

/// Most retries (`retries/count`) an activity may ask for: how many more tries after the
/// first failed one. A hundred tries, even seconds apart, is already more than a broken
/// command deserves.
pub const MAX_RETRIES: u32 = 100;

/// Longest `<deadline>` of an activity, in hours: a year. Longer is a typing mistake (a
/// deadline in minutes or seconds); the notices count 48, 24, 12 and 6 hours before it.
pub const MAX_DEADLINE_HOURS: u32 = 24 * 366;

/// Most roles an organisation document may declare. Every node holds a copy of the
/// organisation, so its size is bounded like a document's.
pub const MAX_ROLES: usize = 1_000;

/// Most departments an organisation document may declare.
pub const MAX_DEPARTMENTS: usize = 1_000;

/// Most teams an organisation document may declare.
pub const MAX_TEAMS: usize = 1_000;

/// Most users an organisation document may declare.
pub const MAX_USERS: usize = 10_000;

/// Longest id of a user, role, department or team, and longest device (node) name, in
/// characters. Ids are typed on command lines (`--user alice`) and shown in worklists.
pub const MAX_ID_CHARS: usize = 64;

/// Longest `name` of a user, role, department or team, in characters.
pub const MAX_NAME_CHARS: usize = 200;

/// Most terms one dependency rule (`<depends>`) may hold. Rules are evaluated on every state
/// change of an activity they name; a few dozen terms already say more than a person can read.
pub const MAX_RULE_TERMS: usize = 256;

/// Longest completion flag (`<route flag>`, `<merge flag>`, `complete --flag`, the flag file a
/// command writes), in characters. A flag names a decision ("approved"), not a report.
pub const MAX_FLAG_CHARS: usize = 64;

/// Longest definition name (`<name>` of a workflow, `deploy --name`), in characters: a name
/// operators type to start an instance.
pub const MAX_DEFINITION_NAME_CHARS: usize = 64;

/// Most names (`<value>` and `<file>`) one workflow's `<data>` may declare. Each instance keeps
/// every one on the nodes that use it.
pub const MAX_DATA_ITEMS: usize = 256;

/// Longest default of a `<value>` (`default="..."`, PDL's `STRING note "..."`), in bytes: the
/// longest value an instance may hold (the runtime's per-value limit, `MAX_VALUE_BYTES` of
/// `mobiwf-proto`, which a test there keeps equal), so that a default that passes here does
/// not fail every start on the nodes.
pub const MAX_DEFAULT_BYTES: usize = 64 * 1024;

/// Most bytes of defaults one definition's `<data>` may hold, all values together: as much
/// as one instance's values may hold (`MAX_INSTANCE_VALUE_BYTES` of `mobiwf-proto`).
pub const MAX_DEFAULTS_BYTES: usize = 1 << 20;

/// Longest data name, in characters. A name is also a file name in `MOBIWF_DATA_DIR`.
pub const MAX_DATA_NAME_CHARS: usize = 64;

/// Deepest nesting of `and(...)` and `or(...)` in one `DEPENDS` rule of a PDL text: as deep as
/// [`MAX_DEPTH`] lets a `<depends>` of the XML nest (eleven `and`s and `or`s inside one
/// another), so that every rule one language holds the other can hold too.
pub const MAX_RULE_DEPTH: usize = 11;

/// Longest bare word of a PDL text, in characters: a keyword, or a name or number written
/// without quotes. A longer name is written in quotes, where [`MAX_TEXT_BYTES`] applies, as to
/// the text of an XML element.
pub const MAX_WORD_CHARS: usize = 256;

/// Most problems one PDL text is reported with: reading stops at this many problems of form,
/// and problems beyond it are counted, not listed. A problem of form skips as little as one
/// word, so garbage would otherwise give one problem per word of a [`MAX_DOCUMENT_BYTES`] text.
pub const MAX_PDL_PROBLEMS: usize = 500;

/// How much of a text's beginning is looked at to tell its language by content (a BPMN
/// document's root element `definitions`), in bytes: declarations and comments before the
/// root are short; a root further in than this is not looked for, and the text is taken for
/// MobiWfMS XML.
pub const MAX_SNIFF_BYTES: usize = 64 * 1024;

/// Longest `timeDuration` of a BPMN timer, in seconds: the most an activity's time limit
/// (`timeOut`, whole seconds as a `u32`) holds, about 136 years.
pub const MAX_DURATION_SECS: u32 = u32::MAX;

/// Most orderings (`<ordering>`, PDL's `WORKFLOW_DEFINITIONS`) one ordering document may hold.
/// The controller looks through them at every request of an ordered task.
pub const MAX_ORDERINGS: usize = 256;

/// Most task pairs (`<order>`, the lines of a `RELATIVE_ORDER`) one ordering may hold: as many
/// as a workflow's tasks could sensibly be paired with another's.
pub const MAX_ORDER_PAIRS: usize = 1_000;
/// Most task classes a class document may declare. The controller checks every request
/// against the classes it conflicts with; a plant has a few dozen kinds of exclusive work.
pub const MAX_CLASSES: usize = 1_000;

/// Longest `<maxWait>` of a task class, in seconds: a day. A request for a class waits at
/// most this long before it is refused; longer is a typing mistake (minutes or milliseconds).
pub const MAX_WAIT_SECS: u32 = 86_400;

/// The most passes a `<loop>` may declare (`max`): a loop runs its body at most this often.
pub const MAX_LOOP_PASSES: u32 = 1_000;
