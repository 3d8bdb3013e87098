//! Reads the instance-data extensions of both languages: the document's `<data>` (its
//! `<value name=".." type=".."/>` and `<file name=".."/>` declarations), an activity's
//! `<reads>` and `<writes>`, and, in partition documents, an adjacent's `<carries>`. Apart
//! from the other readers because the three lists share one reading of names. A part that
//! cannot be read is left out or kept with a default, and its problem reported; what the names
//! refer to (declared, once, written before they are read) is checked by `validate`.

use super::rules::words;
use super::{Child, Ctx, abbreviate, attr_pos, many, suggest};
use crate::diagnostic::Pos;
use crate::model::{DataAccess, DataItem, DataKind, Input};
use crate::source_map::Node;
use crate::tree::Element;

const DECLARATIONS: &[Child] = &[many(&["value"]), many(&["file"])];
const VALUE_EXAMPLE: &str = "<value name=\"reading\" type=\"number\"/>";
const FILE_EXAMPLE: &str = "<file name=\"photo\"/>";
const TYPES: &[&str] = &["string", "number"];

impl Ctx {
    /// The declarations of the `<data>` element `el`, in document order. A declaration
    /// without a name is left out; one whose type cannot be read is kept as a string, so that
    /// its uses are not reported as undeclared (the problems are reported).
    pub fn data(&mut self, el: &Element) -> Vec<DataItem> {
        self.map.set(Node::Data, el.pos);
        self.check_shape(el, "<data>", DECLARATIONS, false);
        let mut items = Vec::new();
        for child in el.children_named(&["value", "file"]) {
            if let Some(item) = self.declaration(child, items.len()) {
                items.push(item);
            }
        }
        items
    }

    /// The declaration `el` (`<value>` or `<file>`), the `k`th kept; `None` without a name.
    fn declaration(&mut self, el: &Element, k: usize) -> Option<DataItem> {
        let is_file = el.name == "file";
        let name = el.attr(&["name"]).map(|n| n.trim().to_owned());
        let what = match &name {
            Some(n) => format!("<{} name=\"{}\"> of <data>", el.name, abbreviate(n)),
            None => format!("<{}> of <data>", el.name),
        };
        let (allowed, hint) = if is_file {
            (
                &["name"][..],
                format!(
                    "a <file> has only the attribute name, e.g. {FILE_EXAMPLE} (a file holds bytes \
                     of any kind)"
                ),
            )
        } else {
            (
                &["name", "type", "input", "default"][..],
                format!(
                    "its attributes are name, type, and input or default for a value given when \
                     an instance starts, e.g. {VALUE_EXAMPLE}"
                ),
            )
        };
        self.check_attrs(el, &what, allowed, &hint);
        self.check_empty(
            el,
            &what,
            if is_file { FILE_EXAMPLE } else { VALUE_EXAMPLE },
        );
        let kind = if is_file {
            DataKind::File
        } else {
            self.value_type(el, &what, name.as_deref())
        };
        let Some(name) = name else {
            let example = if is_file { FILE_EXAMPLE } else { VALUE_EXAMPLE };
            self.error(
                el.pos,
                format!(
                    "{what} has no name attribute; add the name activities read and write it by, \
                     e.g. {example}"
                ),
            );
            return None;
        };
        self.map.set(Node::DataItem(k), el.pos);
        self.map
            .set(Node::DataItemAttr(k, "name"), attr_pos(el, "name"));
        if el.attr(&["type"]).is_some() {
            self.map
                .set(Node::DataItemAttr(k, "type"), attr_pos(el, "type"));
        }
        if el.attr(&["default"]).is_some() {
            self.map
                .set(Node::DataItemAttr(k, "default"), attr_pos(el, "default"));
        }
        let input = if is_file {
            Input::No
        } else {
            self.input(el, &what, kind)
        };
        Some(DataItem { name, kind, input })
    }

    /// The `input` and `default` attributes of the `<value>` `el` (`what` in messages) of
    /// `kind`: `input="true"` (or `false`, the default), or `default="..."` fitting `kind`;
    /// not both.
    fn input(&mut self, el: &Element, what: &str, kind: DataKind) -> Input {
        let flag = el.attr(&["input"]).map(str::trim);
        let default = el.attr(&["default"]);
        let required = match flag {
            None | Some("false") => false,
            Some("true") => true,
            Some(other) => {
                self.error(
                    attr_pos(el, "input"),
                    format!(
                        "{what} has input=\"{}\"; expected true (an operator gives it when an \
                         instance starts) or false",
                        abbreviate(other)
                    ),
                );
                false
            }
        };
        let Some(default) = default else {
            return if required { Input::Required } else { Input::No };
        };
        if flag.is_some() {
            self.error(
                attr_pos(el, "input"),
                format!(
                    "{what} has both input and default; a default already makes it an input \
                     that a start may leave out: remove input"
                ),
            );
        }
        if kind == DataKind::Number
            && let Some(problem) = crate::model::number_problem(default)
        {
            self.error(
                attr_pos(el, "default"),
                format!("{what} has default=\"{}\": {problem}", abbreviate(default)),
            );
        }
        Input::Default(default.to_owned())
    }

    /// The `type` of the `<value>` `el` (`what` in messages) declaring `name`: `string` or
    /// `number` in any case; a string when it cannot be read (the problem is reported).
    fn value_type(&mut self, el: &Element, what: &str, name: Option<&str>) -> DataKind {
        let Some(raw) = el.attr(&["type"]) else {
            self.error(
                el.pos,
                format!(
                    "{what} has no type attribute; add type=\"string\" (text) or type=\"number\" \
                     (a decimal number), e.g. {VALUE_EXAMPLE}; a file is declared {FILE_EXAMPLE}"
                ),
            );
            return DataKind::String;
        };
        if let Some(kind) = DataKind::of_type_name(raw.trim()) {
            return kind;
        }
        let said = format!("{what} has type=\"{}\"", abbreviate(raw));
        let file = format!(
            "<file name=\"{}\"/>",
            name.map_or_else(|| "photo".to_owned(), abbreviate)
        );
        let message = if raw.trim().eq_ignore_ascii_case("file") {
            format!(
                "{said}; a file is declared with its own element, not as a value: write {file} \
                 (without type)"
            )
        } else {
            let hint = suggest(raw.trim(), TYPES)
                .map(|s| format!(" (did you mean {s}?)"))
                .unwrap_or_default();
            format!(
                "{said}, which is not a type of value{hint}; expected string or number (in any \
                 case), or declare a file with {file}"
            )
        };
        self.error(attr_pos(el, "type"), message);
        DataKind::String
    }

    /// Reports child elements or text inside `el` (`what` in messages), which says everything
    /// in its attributes, like `example`.
    fn check_empty(&mut self, el: &Element, what: &str, example: &str) {
        if let Some((pos, held)) = super::content_of_empty(el) {
            self.error(
                pos,
                format!(
                    "{what} holds {held}; a declaration is empty and says everything in its \
                     attributes, e.g. {example}"
                ),
            );
        }
    }

    /// The `<reads>` and `<writes>` among the children of activity `el`, the `index`th (`owner`
    /// in messages).
    pub fn data_access(&mut self, el: &Element, index: usize, owner: &str) -> DataAccess {
        let mut list = |name: &str, at: Node, each: fn(usize, usize) -> Node| {
            el.child(&[name])
                .map(|e| self.names(e, owner, at, |k| each(index, k)))
                .unwrap_or_default()
        };
        DataAccess {
            reads: list("reads", Node::Reads(index), Node::ReadName),
            writes: list("writes", Node::Writes(index), Node::WriteName),
        }
    }

    /// The names of the list element `el` (`<reads>`, `<writes>` or `<carries>`) of `owner`,
    /// separated by white space, in document order, repeats kept (`validate` reports them).
    /// `at` is where the list is mapped, `name` numbers each name for the source map.
    pub fn names(
        &mut self,
        el: &Element,
        owner: &str,
        at: Node,
        name: impl Fn(usize) -> Node,
    ) -> Vec<String> {
        self.map.set(at, el.value_pos());
        if let Some(child) = el.children.first() {
            self.error(
                child.pos,
                format!(
                    "<{list}> of {owner} holds <{}>; write the names as text, separated by \
                     spaces, e.g. <{list}>reading photo</{list}>",
                    child.name,
                    list = el.name
                ),
            );
        }
        let words: Vec<(&str, Pos)> = words(&el.text, el.value_pos());
        let mut names = Vec::with_capacity(words.len());
        for (k, (word, pos)) in words.into_iter().enumerate() {
            self.map.set(name(k), pos);
            names.push(word.to_owned());
        }
        names
    }
}
