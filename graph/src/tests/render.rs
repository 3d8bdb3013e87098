//! What the SVG and DOT documents hold: each activity's state and lane in the attributes a
//! page reads, the legend, the edges' kinds, and names escaped wherever they go.

use super::*;
use crate::escape;

const SCRIPT: &str = "<script>alert(1)</script>";

/// The SVG's activity elements: (id, state, class, partner of the enclosing lane).
fn activities(svg: &str) -> Vec<(String, String, String, Option<String>)> {
    elements(svg)
        .into_iter()
        .filter(|e| e.get("data-activity").is_some())
        .map(|e| {
            (
                e.get("data-activity").unwrap_or_default().to_owned(),
                e.get("data-state").unwrap_or_default().to_owned(),
                e.get("class").unwrap_or_default().to_owned(),
                e.within("data-partner").map(str::to_owned),
            )
        })
        .collect()
}

#[test]
fn each_activity_says_its_state_and_sits_in_its_partners_lane() {
    let mut paused = act(3, Some("P2"), Shown::Paused);
    paused.pass = Pass(2);
    let mut placed = act(4, None, Shown::Running);
    placed.node = Some("P3".to_owned());
    let g = graph(
        vec![
            act(1, Some("P1"), Shown::Succeeded),
            act(2, Some("P1"), Shown::Synchronizing),
            paused,
            placed,
        ],
        vec![pre(1, 2), pre(2, 3), edge(3, 4, EdgeKind::Contingency)],
    );
    let svg = crate::svg(&g);
    let p = |s: &str| Some(s.to_owned());
    let row = |id: &str, state: &str, lane: Option<String>| {
        (
            id.to_owned(),
            state.to_owned(),
            format!("state-{state}"),
            lane,
        )
    };
    assert_eq!(
        activities(&svg),
        vec![
            row("1", "succeeded", p("P1")),
            row("2", "synchronizing", p("P1")),
            row("3", "paused", p("P2")),
            row("4", "running", None),
        ]
    );
    let all = elements(&svg);
    let lanes: Vec<(Option<&str>, Option<&str>)> = all
        .iter()
        .filter(|e| e.name == "g" && e.get("class") == Some("lane"))
        .map(|e| (e.get("data-lane"), e.get("data-partner")))
        .collect();
    assert_eq!(
        lanes,
        vec![
            (Some("partner"), Some("P1")),
            (Some("partner"), Some("P2")),
            (Some("controller"), None)
        ]
    );
    let placed = all
        .iter()
        .find(|e| e.get("data-activity") == Some("4"))
        .expect("activity 4");
    assert_eq!(placed.within("data-lane"), Some("controller"));
    assert_eq!(placed.get("data-node"), Some("P3"));
    // Each box is filled with its state's colour.
    let fill_of = |id: &str| {
        all.iter()
            .find(|e| e.name == "rect" && e.within("data-activity") == Some(id))
            .and_then(|e| e.get("fill"))
            .map(str::to_owned)
    };
    assert_eq!(fill_of("1").as_deref(), Some(Shown::Succeeded.style().fill));
    assert_eq!(fill_of("3").as_deref(), Some(Shown::Paused.style().fill));
    // The pass shows after the first only.
    let shown = texts(&svg);
    assert!(shown.contains(&"id 3#2 · paused".to_owned()), "{shown:?}");
    assert!(shown.contains(&"id 1 · succeeded".to_owned()), "{shown:?}");
    assert!(
        shown.contains(&"id 4 · running · on P3".to_owned()),
        "{shown:?}"
    );
}

#[test]
fn the_legend_lists_every_state_once_and_never_as_an_activity() {
    let svg = crate::svg(&graph(vec![act(1, Some("P1"), Shown::Running)], vec![]));
    let legend: Vec<String> = elements(&svg)
        .iter()
        .filter_map(|e| e.get("data-legend").map(str::to_owned))
        .collect();
    let mut want: Vec<String> = Shown::ALL.iter().map(|s| s.word().to_owned()).collect();
    want.extend(["precondition", "contingency", "loop"].map(str::to_owned));
    assert_eq!(legend, want);
    assert_eq!(
        activities(&svg).len(),
        1,
        "only the activity has data-activity"
    );
    let states = elements(&svg)
        .iter()
        .filter(|e| e.get("data-state").is_some())
        .count();
    assert_eq!(states, 1, "only the activity has data-state");
    // Every state's colours are its own.
    let mut fills: Vec<&str> = Shown::ALL.iter().map(|s| s.style().fill).collect();
    fills.sort_unstable();
    fills.dedup();
    assert_eq!(fills.len(), Shown::ALL.len());
}

#[test]
fn a_name_is_escaped_wherever_it_goes() {
    let mut a = act(1, Some("P\"1&<x>"), Shown::Failed);
    a.name = SCRIPT.to_owned();
    let mut b = act(2, None, Shown::NotReady);
    b.name = "it's \"B\"\\n".to_owned();
    b.node = Some("<n>".to_owned());
    let mut contingency = edge(1, 2, EdgeKind::Contingency);
    contingency.label = Some("a<b".to_owned());
    let mut g = graph(vec![a, b], vec![contingency]);
    g.title = format!("instance 1: workflow 1 ({SCRIPT}), running");
    let svg = crate::svg(&g);
    assert!(!svg.contains("<script"), "{svg}");
    assert!(
        svg.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "{svg}"
    );
    // A real XML reader gives the names back as they were.
    let all = elements(&svg);
    assert!(
        all.iter()
            .any(|e| e.get("data-partner") == Some("P\"1&<x>"))
    );
    assert!(all.iter().any(|e| e.get("data-node") == Some("<n>")));
    let shown = texts(&svg);
    assert!(
        shown.iter().any(|t| t == "<script>alert(1)</s…"),
        "{shown:?}"
    );
    assert!(shown.iter().any(|t| t == "it's \"B\"\\n"), "{shown:?}");
    assert!(shown.iter().any(|t| t == "a<b"), "{shown:?}");
    assert!(
        shown.iter().any(|t| t.contains(SCRIPT)),
        "the title: {shown:?}"
    );

    let dot = crate::dot(&g);
    assert!(dot.contains("label=\"P\\\"1&<x>\""), "{dot}");
    assert!(dot.contains("label=\"it's \\\"B\\\"\\\\n\\nid 2"), "{dot}");
    assert!(
        dot.contains("label=\"<script>alert(1)</script>\\nid 1"),
        "{dot}"
    );
    // The title is in an HTML-like label: escaped as XML there.
    assert!(
        dot.contains("(&lt;script&gt;alert(1)&lt;/script&gt;)"),
        "{dot}"
    );
    // Outside escapes, quotes pair up: no name ends a string early.
    let unescaped = dot.replace("\\\\", "").replace("\\\"", "");
    for line in unescaped.lines() {
        assert_eq!(line.matches('"').count() % 2, 0, "{line}");
    }
}

#[test]
fn escaping_keeps_what_xml_can_hold_and_replaces_the_rest() {
    assert_eq!(escape::xml("a&b<c>\"d'"), "a&amp;b&lt;c&gt;&quot;d&apos;");
    assert_eq!(escape::xml("bell\u{7}tab\t"), "bell\u{FFFD}tab\t");
    assert_eq!(escape::xml("é 😀"), "é 😀");
    assert_eq!(escape::dot("a\"b\\c\nd\u{1}"), "a\\\"b\\\\c\\nd ");
    assert_eq!(escape::cut("abcdef", 4), "abc…");
    assert_eq!(escape::cut("abcd", 4), "abcd");
}

#[test]
fn a_loops_back_edge_is_a_labelled_arc_and_does_not_rank_in_dot() {
    let mut back = edge(3, 2, EdgeKind::Loop);
    back.label = Some("while again, max 4".to_owned());
    let g = graph(
        vec![
            act(1, Some("P1"), Shown::Succeeded),
            act(2, Some("P1"), Shown::Succeeded),
            act(3, Some("P2"), Shown::Running),
        ],
        vec![pre(1, 2), pre(2, 3), back],
    );
    let svg = crate::svg(&g);
    let all = elements(&svg);
    let looped = all
        .iter()
        .find(|e| e.name == "path" && e.within("class") == Some("edge loop"))
        .expect("the loop's path");
    let d = looped.get("d").expect("a path");
    // An arc back: from the top of 3's box (further right) to the top of 2's, rising above
    // both.
    let numbers: Vec<i64> = d
        .split(|c: char| !c.is_ascii_digit() && c != '-')
        .filter_map(|t| t.parse().ok())
        .collect();
    let [x1, y1, _, c1, _, c2, x2, y2] = numbers[..] else {
        panic!("a cubic curve: {d}");
    };
    assert!(x1 > x2, "{d}");
    assert!(c1 < y1.min(y2) && c2 < y1.min(y2), "{d}");
    assert!(texts(&svg).contains(&"while again, max 4".to_owned()));
    let dot = crate::dot(&g);
    assert!(
        dot.contains(
            "\"3\" -> \"2\" [class=\"edge loop\", color=\"#7048e8\", fontcolor=\"#7048e8\", \
             constraint=false, label=\"while again, max 4\"];"
        ),
        "{dot}"
    );
}

#[test]
fn a_skipped_path_is_greyed() {
    // 1 routed to 2; 3 was skipped, and so are its edges.
    let g = graph(
        vec![
            act(1, Some("P1"), Shown::Succeeded),
            act(2, Some("P1"), Shown::Running),
            act(3, Some("P1"), Shown::Skipped),
            act(4, Some("P1"), Shown::Skipped),
        ],
        vec![pre(1, 2), pre(1, 3), pre(3, 4)],
    );
    let svg = crate::svg(&g);
    let classes: Vec<(String, String, String)> = elements(&svg)
        .iter()
        .filter(|e| e.get("data-from").is_some())
        .map(|e| {
            (
                e.get("data-from").unwrap_or_default().to_owned(),
                e.get("data-to").unwrap_or_default().to_owned(),
                e.get("class").unwrap_or_default().to_owned(),
            )
        })
        .collect();
    let c = |f: &str, t: &str, class: &str| (f.to_owned(), t.to_owned(), class.to_owned());
    assert_eq!(
        classes,
        vec![
            c("1", "2", "edge precondition"),
            c("1", "3", "edge precondition skipped"),
            c("3", "4", "edge precondition skipped"),
        ]
    );
    let skipped_box = elements(&svg)
        .into_iter()
        .find(|e| e.name == "rect" && e.within("data-activity") == Some("3"))
        .expect("3's box");
    assert_eq!(skipped_box.get("stroke-dasharray"), Some("5 3"));
    let dot = crate::dot(&g);
    assert!(dot.contains("\"1\" -> \"3\" [class=\"edge precondition\", color=\"#ced4da\""));
    assert!(dot.contains("style=\"rounded,filled,dashed\""));
}

#[test]
fn dot_has_a_cluster_per_lane_and_the_columns_as_ranks() {
    let g = graph(
        vec![
            act(1, Some("P1"), Shown::Succeeded),
            act(2, Some("P2"), Shown::Running),
            act(3, None, Shown::NotReady),
        ],
        vec![pre(1, 2), edge(2, 3, EdgeKind::Contingency)],
    );
    let dot = crate::dot(&g);
    assert!(
        dot.contains("subgraph \"cluster_lane_0\" {\n    label=\"P1\";"),
        "{dot}"
    );
    assert!(
        dot.contains("subgraph \"cluster_lane_1\" {\n    label=\"P2\";"),
        "{dot}"
    );
    assert!(
        dot.contains("label=\"contingency (placed by the controller)\";"),
        "{dot}"
    );
    for rank in [
        "{ rank=same; \"1\"; }",
        "{ rank=same; \"2\"; }",
        "{ rank=same; \"3\"; }",
    ] {
        assert!(dot.contains(rank), "{rank} in {dot}");
    }
    assert!(dot.contains("class=\"state-running\""), "{dot}");
    assert!(dot.contains("\"2\" -> \"3\" [class=\"edge contingency\", color=\"#e03131\", fontcolor=\"#e03131\", style=dashed];"), "{dot}");
    // The legend is in the caption, under the title: it takes no rank.
    assert!(dot.contains("labelloc=t, label=<<table"), "{dot}");
    for state in Shown::ALL {
        let cell = format!("<td bgcolor=\"{}\"", state.style().fill);
        assert!(dot.contains(&cell), "{state:?} in {dot}");
    }
}

#[test]
fn an_empty_graph_is_still_a_document() {
    let g = graph(vec![], vec![]);
    let svg = crate::svg(&g);
    assert!(elements(&svg).iter().any(|e| e.name == "svg"));
    assert!(crate::dot(&g).starts_with("digraph"));
}

#[test]
fn a_format_is_named_by_its_word() {
    use crate::Format;
    assert_eq!(Format::parse("svg"), Ok(Format::Svg));
    assert_eq!(Format::parse("dot"), Ok(Format::Dot));
    assert!(Format::parse("png").is_err_and(|e| e.contains("svg or dot")));
    for f in [Format::Svg, Format::Dot] {
        assert_eq!(Format::parse(f.word()), Ok(f));
    }
}
