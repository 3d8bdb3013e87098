//! Tests of the graph: the layout on graphs written by hand (`layout`), what the two outputs
//! hold and escape (`render`), and instances the book ran (`instances`, with the snapshots
//! of the paper's workflow).

mod instances;
mod layout;
mod render;

use mobiwf_proto::{ActivityId, Pass};

use crate::{ActivityBox, Edge, EdgeKind, Graph, LaneKey, Shown};

/// An activity in `partner`'s lane (`None`: the controller's), in `state`, first pass.
fn act(id: u64, partner: Option<&str>, state: Shown) -> ActivityBox {
    ActivityBox {
        id: ActivityId(id),
        name: format!("A{id}"),
        state,
        pass: Pass::FIRST,
        lane: partner.map_or(LaneKey::Controller, |p| LaneKey::Partner(p.to_owned())),
        node: None,
    }
}

/// An edge of `kind` without a label.
fn edge(from: u64, to: u64, kind: EdgeKind) -> Edge {
    Edge {
        from: ActivityId(from),
        to: ActivityId(to),
        kind,
        label: None,
    }
}

/// A precondition edge.
fn pre(from: u64, to: u64) -> Edge {
    edge(from, to, EdgeKind::Precondition)
}

/// A graph of `activities` and `edges`.
fn graph(activities: Vec<ActivityBox>, edges: Vec<Edge>) -> Graph {
    Graph {
        title: "test".to_owned(),
        activities,
        edges,
    }
}

/// One element of an SVG document: its name and attributes, and the attributes of the
/// elements it is inside (innermost first).
#[derive(Debug)]
struct Element {
    name: String,
    attributes: Vec<(String, String)>,
    within: Vec<Vec<(String, String)>>,
}

impl Element {
    fn get(&self, key: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The nearest enclosing element's value of `key`.
    fn within(&self, key: &str) -> Option<&str> {
        self.within
            .iter()
            .find_map(|attrs| attrs.iter().find(|(k, _)| k == key))
            .map(|(_, v)| v.as_str())
    }
}

/// Every element of `svg`, read with a real XML reader: the document is well-formed, and
/// its attributes are what a browser sees (unescaped).
fn elements(svg: &str) -> Vec<Element> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(svg);
    let mut open: Vec<Vec<(String, String)>> = Vec::new();
    let mut out = Vec::new();
    loop {
        let event = reader.read_event().expect("well-formed SVG");
        let (start, empty) = match &event {
            Event::Start(e) => (e, false),
            Event::Empty(e) => (e, true),
            Event::End(_) => {
                open.pop();
                continue;
            }
            Event::Eof => break,
            _ => continue,
        };
        let attributes: Vec<(String, String)> = start
            .attributes()
            .map(|a| {
                let a = a.expect("an attribute");
                (
                    a.key.as_ref().to_owned(),
                    a.normalized_value(quick_xml::XmlVersion::Implicit1_0)
                        .expect("an escaped value")
                        .into_owned(),
                )
            })
            .collect();
        out.push(Element {
            name: start.name().as_ref().to_owned(),
            attributes: attributes.clone(),
            within: open.iter().rev().cloned().collect(),
        });
        if !empty {
            open.push(attributes);
        }
    }
    assert!(open.is_empty(), "every element is closed");
    out
}

/// The text of every element of `svg` that holds some, unescaped, in document order.
fn texts(svg: &str) -> Vec<String> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(svg);
    let mut out = Vec::new();
    let mut text = String::new();
    loop {
        match reader.read_event().expect("well-formed SVG") {
            Event::Text(t) => text += &t.xml10_content(),
            Event::GeneralRef(r) => {
                let name: &str = &r;
                let c = match name {
                    "lt" => "<",
                    "gt" => ">",
                    "amp" => "&",
                    "quot" => "\"",
                    "apos" => "'",
                    other => panic!("an entity SVG does not know: {other}"),
                };
                text += c;
            }
            Event::Eof => break,
            _ => {
                if !text.trim().is_empty() {
                    out.push(std::mem::take(&mut text));
                }
                text.clear();
            }
        }
    }
    out
}
