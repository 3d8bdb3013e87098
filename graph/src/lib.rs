//! An instance's graph, for operators (`mobiwf-controller graph`, the API's
//! `GET /instances/{id}/graph`): pure, no I/O. The graph (`model`) is made from what the
//! controller knows of an instance (`build`): its activities with their states, passes and
//! partners from the book, its edges from the definition. It is laid out (`layout`) as a
//! layered DAG, one horizontal lane per partner, and written as SVG (`svg`) or DOT (`dot`),
//! both coloured by state with one legend (`state`); every name is escaped (`escape`).

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod build;
mod dot;
pub mod escape;
pub mod layout;
mod model;
mod state;
mod svg;

#[cfg(test)]
mod tests;

pub use dot::dot;
pub use layout::Layout;
pub use model::{ActivityBox, Edge, EdgeKind, Graph, LaneKey};
pub use state::{Shown, Style};
pub use svg::svg;

/// The two ways a graph is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// An SVG document (`image/svg+xml`).
    Svg,
    /// Graphviz's DOT (`text/vnd.graphviz`).
    Dot,
}

impl Format {
    /// The format a word names (`svg`, `dot`), or why not.
    pub fn parse(word: &str) -> Result<Format, String> {
        match word {
            "svg" => Ok(Format::Svg),
            "dot" => Ok(Format::Dot),
            other => Err(format!(
                "unknown graph format {other:?}: ask for svg or dot"
            )),
        }
    }

    /// Its word.
    pub fn word(self) -> &'static str {
        match self {
            Format::Svg => "svg",
            Format::Dot => "dot",
        }
    }

    /// The media type an answer in it has.
    pub fn media_type(self) -> &'static str {
        match self {
            Format::Svg => "image/svg+xml; charset=utf-8",
            Format::Dot => "text/vnd.graphviz; charset=utf-8",
        }
    }

    /// `graph` written in it.
    pub fn render(self, graph: &Graph) -> String {
        match self {
            Format::Svg => svg(graph),
            Format::Dot => dot(graph),
        }
    }
}
