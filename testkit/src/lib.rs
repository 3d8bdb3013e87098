//! What runs the real binaries for their tests, in one place: the end-to-end tests
//! (`tests/harness`), the chaos run (`chaos/`) and the runtime's own tests each had a copy.
//! [`process`]: commands with a time limit, daemons killed when dropped; [`args`]: the
//! daemons' command lines; [`netns`]: a network namespace behind a veth link; `flood`
//! (feature `flood`): a stranger's half-open connections. Nothing here panics but a test's assertion ([`process::Output::expect_code`]):
//! every failure is an error, which the chaos run reports and the tests' harness panics with.

pub mod args;
pub mod netns;
pub mod process;

#[cfg(feature = "flood")]
pub mod flood;
