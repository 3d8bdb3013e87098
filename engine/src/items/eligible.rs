//! Who may be given a work item by someone else's doing (a delegation, an administrator's
//! insert): a user of the directory who is not on leave, has a registered device and is not
//! away (disconnected: their device could not take it).

use mobiwf_people::Directory;
use mobiwf_proto::{UserId, Verdict};

/// Whether `user` may be given the item: known, not on leave, with a registered device, and
/// not away.
pub(super) fn may_be_given(dir: &Directory, user: &UserId) -> Result<(), Verdict> {
    let invalid = |reason: String| Verdict::Invalid { reason };
    let Some(found) = dir.user(user.as_str()) else {
        return Err(invalid(format!(
            "there is no user {user} in the organisation directory (version {})",
            dir.version
        )));
    };
    if found.on_leave {
        return Err(invalid(format!("{user} is on leave")));
    }
    if dir.device_of(user.as_str()).is_none() {
        return Err(invalid(format!(
            "{user} has no registered device to hold their worklist"
        )));
    }
    if dir.is_away(user.as_str()) {
        return Err(invalid(format!(
            "{user} is disconnected: give it to someone else, or wait until they reconnect"
        )));
    }
    Ok(())
}
