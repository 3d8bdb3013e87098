//! Reads the applications extension of both languages: a definition's `<applications>` (each
//! `<application id="editor">` with its `<command>`, `<size>` and `<os>`), a definition
//! activity's `<application>editor</application>` (a name), and a partition activity's
//! `<application id="editor">...</application>` (the whole application, which derivation
//! copies there). Which activity may name which application is checked by `validate`.

use super::{Child, Ctx, abbreviate, attr_pos, many, one};
use crate::model::{
    Application, ApplicationId, MAX_APPLICATION_KIB, application_id_problem, os_problem,
};
use crate::source_map::Node;
use crate::tree::Element;

const APPLICATION: &[Child] = &[one(&["command"]), one(&["size"]), one(&["os"])];
const EXAMPLE: &str = "<application id=\"editor\"><command>editor \"$MOBIWF_DATA_DIR\"</command>\
                       <size>2048</size><os>linux</os></application>";

impl Ctx {
    /// The applications of the definition's `<applications>` element `el`, in document
    /// order; one without a usable id is left out (its problems reported).
    pub fn applications(&mut self, el: &Element) -> Vec<Application> {
        self.check_shape(el, "<applications>", &[many(&["application"])], false);
        let mut applications = Vec::new();
        for child in el.children_named(&["application"]) {
            let k = applications.len();
            if let Some(application) = self.application(child, "<applications>") {
                self.map.set(Node::Application(k), child.pos);
                applications.push(application);
            }
        }
        applications
    }

    /// The application `el` (`<application id="..">` with `<command>`, `<size>`, `<os>`),
    /// found in `whose` (for messages); `None` without a usable id or command.
    pub fn application(&mut self, el: &Element, whose: &str) -> Option<Application> {
        let raw = el.attr(&["id"]).map(|n| n.trim().to_owned());
        let what = match &raw {
            Some(id) => format!("<application id=\"{}\"> of {whose}", abbreviate(id)),
            None => format!("<application> of {whose}"),
        };
        let hint = format!("its only attribute is id, e.g. {EXAMPLE}");
        self.check_attrs(el, &what, &["id"], &hint);
        self.check_content(el, &what, APPLICATION);
        let id = match raw {
            None => {
                self.error(
                    el.pos,
                    format!(
                        "{what} has no id attribute; add the name activities use, e.g. {EXAMPLE}"
                    ),
                );
                None
            }
            Some(id) => match application_id_problem(&id) {
                Some(problem) => {
                    self.error(attr_pos(el, "id"), format!("{what}: {problem}"));
                    None
                }
                None => Some(ApplicationId::new(id)),
            },
        };
        let command = self.application_command(el, &what);
        let size_kib = el.child(&["size"]).and_then(|e| {
            let expected =
                format!("a size in KiB from 0 to {MAX_APPLICATION_KIB} (MAX_APPLICATION_KIB)");
            let n = self.integer(e, &what, &expected)?;
            match u64::try_from(n) {
                Ok(n) if n <= MAX_APPLICATION_KIB => Some(n),
                _ => {
                    self.error(
                        e.value_pos(),
                        format!("<size> of {what} is {n}; expected {expected}"),
                    );
                    None
                }
            }
        });
        let os = el.child(&["os"]).and_then(|e| {
            let text = self.leaf(e).trim().to_owned();
            match os_problem(&text) {
                Some(problem) => {
                    self.error(e.value_pos(), format!("<os> of {what}: {problem}"));
                    None
                }
                None => Some(text),
            }
        });
        Some(Application {
            id: id?,
            command: command?,
            size_kib: size_kib.unwrap_or(0),
            os,
        })
    }

    /// The `<command>` of the application `el`: required, and not blank.
    fn application_command(&mut self, el: &Element, what: &str) -> Option<String> {
        let Some(e) = el.child(&["command"]) else {
            self.error(
                el.pos,
                format!(
                    "{what} has no <command>; add the command line its device runs with sh -c, \
                     e.g. {EXAMPLE}"
                ),
            );
            return None;
        };
        let text = self.leaf(e).to_owned();
        if text.trim().is_empty() {
            self.error(
                e.value_pos(),
                format!(
                    "<command> of {what} is empty; write the command line its device runs with \
                     sh -c"
                ),
            );
            return None;
        }
        Some(text)
    }

    /// A definition activity's `<application>` `el`: the name of one of the definition's
    /// applications (`owner` in messages).
    pub fn application_name(&mut self, el: &Element, owner: &str) -> Option<ApplicationId> {
        let text = self.leaf(el).trim().to_owned();
        match application_id_problem(&text) {
            None => Some(ApplicationId::new(text)),
            Some(problem) => {
                self.error(
                    el.value_pos(),
                    format!("<application> of {owner}: {problem} (the id of one of the definition's <applications>)"),
                );
                None
            }
        }
    }
}
