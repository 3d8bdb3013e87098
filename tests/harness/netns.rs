//! A network namespace joined to the host by a veth link, for tests where a link is cut and
//! restored, or a node moves to another address: the workspace's `mobiwf-testkit` makes it
//! (in the end-to-end tests' scope), and its failures are the test's panics here. Needs root
//! and `ip netns`: a test then skips, unless [`REQUIRE_NETNS`] is `1` (CI sets it), where it
//! fails: a skip passes in cargo's summary, and CI must not pass having run none of them.
//! Each skip is also listed in the file [`super::SKIP_LOG`] names, for `scripts/test`'s
//! summary.

use std::ops::Deref;

pub use mobiwf_testkit::netns::ip;
use mobiwf_testkit::netns::{self as testkit, E2E};

use super::process::or_panic;
use super::skip;

/// The environment variable that turns a namespace test's skip into a failure when `1`.
pub const REQUIRE_NETNS: &str = "MOBIWF_REQUIRE_NETNS";

/// A network namespace and a veth pair into it, removed when dropped (its name and addresses
/// are the fields of [`testkit::Netns`]). The link's subnet is a /24: the host end is `.1`,
/// the namespace's first address `.2`; [`Netns::move_to`] gives the namespace another one (a
/// device that moved).
pub struct Netns(testkit::Netns);

impl Deref for Netns {
    type Target = testkit::Netns;

    fn deref(&self) -> &testkit::Netns {
        &self.0
    }
}

impl Netns {
    /// The namespace, or `None` when this machine does not allow it: the test is skipped
    /// (the reason on stderr and in [`super::SKIP_LOG`]'s file), or fails when
    /// [`REQUIRE_NETNS`] is `1`. `tag` (a letter or two) tells apart the namespaces of one
    /// test process.
    pub fn create_or_skip(tag: &str) -> Option<Netns> {
        match testkit::Netns::create(E2E, tag) {
            Ok(net) => Some(Netns(net)),
            Err(why) => {
                skip(
                    REQUIRE_NETNS,
                    &format!(
                        "cannot set up a network namespace ({why:#}); needs root and `ip netns`"
                    ),
                );
                None
            }
        }
    }

    /// Moves the namespace to another address of the link (`.<host>`): the old one is gone.
    pub fn move_to(&mut self, host: u8) {
        or_panic(self.0.move_to(host));
    }

    /// Cuts (`false`) or restores (`true`) the link.
    pub fn link(&self, up: bool) {
        or_panic(self.0.link(up));
    }
}
