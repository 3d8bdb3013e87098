//! Reads the `retries` extension of an activity: `<retries><count>2</count><wait>1</wait></retries>`.

use super::{Child, Ctx, abbreviate, one};
use crate::limits::MAX_RETRIES;
use crate::model::Retries;
use crate::tree::Element;

const RETRIES: &[Child] = &[one(&["count"]), one(&["wait"])];

impl Ctx {
    /// The `retries` element `el` of `owner` (e.g. `activity 17`); a part that cannot be read
    /// keeps its default, and its problem is reported.
    pub fn retries(&mut self, el: &Element, owner: &str) -> Retries {
        let what = format!("<retries> of {owner}");
        let text = el.text.trim();
        if el.children.is_empty() && !text.is_empty() {
            // `<retries>2</retries>`: say how to write what was most likely meant, instead of
            // the general "only child elements belong there".
            self.error(
                el.value_pos(),
                format!(
                    "{what} holds the text \"{}\"; put the number of retries in <count> and \
                     the seconds between tries in <wait>, e.g. \
                     <retries><count>2</count><wait>1</wait></retries>",
                    abbreviate(text)
                ),
            );
            let mut bare = el.clone();
            bare.text.clear();
            bare.text_pos = None;
            self.check_shape(&bare, &what, RETRIES, false);
        } else {
            self.check_shape(el, &what, RETRIES, false);
        }
        Retries {
            count: el
                .child(&["count"])
                .and_then(|e| self.retry_count(e, &what))
                .unwrap_or(0),
            wait_secs: el
                .child(&["wait"])
                .and_then(|e| self.secs(e, &what))
                .unwrap_or(0),
        }
    }

    /// `retries/count`: 0 to [`MAX_RETRIES`].
    fn retry_count(&mut self, el: &Element, owner: &str) -> Option<u32> {
        let expected = format!(
            "how many more tries after a failed one, a whole number from 0 to {MAX_RETRIES} \
             (the limit MAX_RETRIES)"
        );
        let n = self.integer(el, owner, &expected)?;
        let count = u32::try_from(n).ok().filter(|c| *c <= MAX_RETRIES);
        if count.is_none() {
            self.error(
                el.value_pos(),
                format!("<{}> of {owner} is {n}; expected {expected}", el.name),
            );
        }
        count
    }
}
