//! A namespace-aware view of the element tree: BPMN files spell the same element `task`,
//! `bpmn:task`, `bpmn2:task` or `semantic:task`, so the import matches elements and attributes
//! on the namespace a prefix is bound to, never on the prefix itself.

use std::collections::HashMap;

use crate::diagnostic::Pos;
use crate::tree::{Attribute, Element};

/// BPMN 2.0's model namespace.
pub(crate) const BPMN_MODEL: &str = "http://www.omg.org/spec/BPMN/20100524/MODEL";
/// Our extension namespace, for what BPMN cannot say (a task's command, retries, people).
pub(crate) const MOBIWF: &str = "urn:mobiwf";
/// Namespaces whose user-task attributes (`candidateGroups`, `candidateUsers`, `assignee`)
/// the import reads: Camunda's, Activiti's and Flowable's.
const ENGINES: &[&str] = &[
    "http://camunda.org/schema/1.0/bpmn",
    "http://activiti.org/bpmn",
    "http://flowable.org/bpmn",
];
/// BPMN's diagram interchange namespaces: drawing only, ignored.
const DIAGRAM: &[&str] = &[
    "http://www.omg.org/spec/BPMN/20100524/DI",
    "http://www.omg.org/spec/DD/20100524/DC",
    "http://www.omg.org/spec/DD/20100524/DI",
];

/// The namespace of a name, as far as the import cares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ns {
    /// BPMN's model namespace.
    Bpmn,
    /// Our extensions (`urn:mobiwf`).
    Mobiwf,
    /// A workflow engine's own attributes (Camunda, Activiti, Flowable).
    Engine,
    /// Diagram interchange: ignored.
    Diagram,
    /// No namespace (an attribute without prefix, or an element with no default namespace).
    None,
    /// Any other namespace (a modeler's own extensions, `xsi`).
    Other(String),
}

/// An element with the namespace of its name resolved, and its children likewise.
#[derive(Debug)]
pub(crate) struct El<'a> {
    /// The element as parsed: its qualified name (for messages), position and text.
    pub raw: &'a Element,
    pub ns: Ns,
    pub local: &'a str,
    pub attrs: Vec<Attr<'a>>,
    pub children: Vec<El<'a>>,
}

/// An attribute with the namespace of its name resolved (namespace declarations left out).
#[derive(Debug)]
pub(crate) struct Attr<'a> {
    pub raw: &'a Attribute,
    pub ns: Ns,
    pub local: &'a str,
}

impl<'a> El<'a> {
    /// Resolves the names of `root` and everything under it.
    pub fn resolve(root: &'a Element) -> El<'a> {
        resolve(root, &Scope::default())
    }

    /// Where the element starts.
    pub fn pos(&self) -> Pos {
        self.raw.pos
    }

    /// Whether this is BPMN's element `local`.
    pub fn is(&self, local: &str) -> bool {
        self.ns == Ns::Bpmn && self.local == local
    }

    /// The first BPMN child named `local`.
    pub fn bpmn_child(&self, local: &str) -> Option<&El<'a>> {
        self.children.iter().find(|c| c.is(local))
    }

    /// The value of the attribute `local` without namespace (BPMN's own attributes).
    pub fn attr(&self, local: &str) -> Option<&'a str> {
        self.attr_in(&Ns::None, local)
    }

    /// The value of the attribute `local` in namespace `ns`.
    pub fn attr_in(&self, ns: &Ns, local: &str) -> Option<&'a str> {
        self.attrs
            .iter()
            .find(|a| a.ns == *ns && a.local == local)
            .map(|a| a.raw.value.as_str())
    }

    /// Where the attribute `local` without namespace is, else the element.
    pub fn attr_pos(&self, local: &str) -> Pos {
        self.attrs
            .iter()
            .find(|a| a.ns == Ns::None && a.local == local)
            .map_or(self.pos(), |a| a.raw.pos)
    }

    /// The element's `id`, or empty.
    pub fn id(&self) -> &'a str {
        self.attr("id").unwrap_or_default()
    }

    /// How messages name the element: `<bpmn:task id="Task_1">`, with its name when it has
    /// one.
    pub fn label(&self) -> String {
        let mut out = format!("<{}", self.raw.name);
        if let Some(id) = self.attr("id") {
            out.push_str(&format!(" id=\"{id}\""));
        }
        out.push('>');
        if let Some(name) = self.attr("name").map(normalise).filter(|n| !n.is_empty()) {
            out.push_str(&format!(" ({name:?})"));
        }
        out
    }
}

/// Text with its runs of white space (line breaks included) made single spaces, trimmed.
pub(crate) fn normalise(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The prefixes bound where an element stands: the default namespace and each `xmlns:p`.
#[derive(Clone, Default)]
struct Scope {
    default: Option<String>,
    prefixes: HashMap<String, String>,
}

fn resolve<'a>(el: &'a Element, outer: &Scope) -> El<'a> {
    let mut scope = outer.clone();
    for a in &el.attrs {
        if a.name == "xmlns" {
            scope.default = Some(a.value.clone()).filter(|v| !v.is_empty());
        } else if let Some(prefix) = a.name.strip_prefix("xmlns:") {
            scope.prefixes.insert(prefix.to_owned(), a.value.clone());
        }
    }
    let (prefix, local) = split(&el.name);
    let uri = match prefix {
        Some(p) => scope.prefixes.get(p).map(String::as_str),
        None => scope.default.as_deref(),
    };
    let attrs = el
        .attrs
        .iter()
        .filter(|a| a.name != "xmlns" && !a.name.starts_with("xmlns:"))
        .map(|a| {
            let (prefix, local) = split(&a.name);
            // An attribute without prefix is in no namespace, whatever the default is.
            let uri = prefix.map(|p| scope.prefixes.get(p).map_or(p, String::as_str));
            Attr {
                raw: a,
                ns: ns_of(uri),
                local,
            }
        })
        .collect();
    El {
        raw: el,
        ns: ns_of(uri.or(prefix)),
        local,
        attrs,
        children: el.children.iter().map(|c| resolve(c, &scope)).collect(),
    }
}

/// `(prefix, local)` of a qualified name.
fn split(name: &str) -> (Option<&str>, &str) {
    match name.split_once(':') {
        Some((prefix, local)) => (Some(prefix), local),
        None => (None, name),
    }
}

/// What a namespace name is to the import; an unbound prefix stands for itself, so that it
/// matches nothing known.
fn ns_of(uri: Option<&str>) -> Ns {
    match uri {
        None => Ns::None,
        Some(BPMN_MODEL) => Ns::Bpmn,
        Some(MOBIWF) => Ns::Mobiwf,
        Some(u) if ENGINES.contains(&u) => Ns::Engine,
        Some(u) if DIAGRAM.contains(&u) => Ns::Diagram,
        Some(u) => Ns::Other(u.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::{BPMN, parse};

    #[test]
    fn names_are_matched_on_their_namespace_not_their_prefix() {
        let text = r#"<x:definitions xmlns:x="http://www.omg.org/spec/BPMN/20100524/MODEL"
            xmlns:c="http://camunda.org/schema/1.0/bpmn" xmlns:m="urn:mobiwf">
          <process xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" id="p">
            <userTask id="t" c:candidateGroups="tech"><x:extensionElements><m:command>true</m:command></x:extensionElements></userTask>
            <other:thing xmlns:other="urn:other"/>
          </process>
          <process id="not-bpmn"/>
        </x:definitions>"#;
        let root = parse(text, BPMN).unwrap();
        let el = El::resolve(&root);
        assert!(el.is("definitions"));
        let process = &el.children[0];
        assert!(process.is("process"));
        let task = &process.children[0];
        assert!(task.is("userTask"));
        assert_eq!(task.attr_in(&Ns::Engine, "candidateGroups"), Some("tech"));
        assert_eq!(task.attr("candidateGroups"), None);
        assert_eq!(task.children[0].children[0].ns, Ns::Mobiwf);
        assert_eq!(process.children[1].ns, Ns::Other("urn:other".to_owned()));
        assert_eq!(el.children[1].ns, Ns::None, "no default namespace there");
        assert_eq!(task.label(), "<userTask id=\"t\">");
    }
}
