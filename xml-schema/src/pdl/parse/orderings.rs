//! An ordering text: `WORKFLOW_DEFINITIONS P1 : P2;` then `RELATIVE_ORDER { T11 : T21; ... }`,
//! as many orderings as it holds, read straight into the model with where each part is.
//! Nothing else belongs in it: a definition's `WORKFLOW` and task models are deployed on
//! their own.

use super::Parser;
use crate::diagnostic::Pos;
use crate::model::{ActivityId, DefinitionName, OrderPair, Ordering, Orderings, Side, TaskRef};
use crate::pdl::ast::{Ref, Target};
use crate::pdl::grammar::Block;
use crate::pdl::lexer::{Kind, Token};
use crate::source_map::{Node, SourceMap};

/// The orderings of a text, with where their parts are.
pub(super) fn orderings(p: &mut Parser<'_>, map: &mut SourceMap) -> Orderings {
    p.block = Block::Orderings;
    let mut doc = Orderings::default();
    // Where the `RELATIVE_ORDER` of each ordering is, to report a second one.
    let mut relative: Vec<Option<Pos>> = Vec::new();
    loop {
        let token = p.peek().clone();
        match token.kind {
            Kind::End => break,
            Kind::Word if token.is_word("WORKFLOW_DEFINITIONS") => {
                p.bump();
                p.clause_start = p.diags.len();
                let i = doc.orderings.len();
                map.set(Node::Ordering(i), token.pos);
                doc.orderings.push(definitions(p, map, i));
                relative.push(None);
                p.end_clause("WORKFLOW_DEFINITIONS");
            }
            Kind::Word if token.is_word("RELATIVE_ORDER") => {
                p.bump();
                let i = relative.len().saturating_sub(1);
                match (doc.orderings.last_mut(), relative.last_mut()) {
                    (Some(ordering), Some(seen)) => {
                        if let Some(first) = *seen {
                            p.error(
                                token.pos,
                                format!(
                                    "the ordering of {} and {} has a second RELATIVE_ORDER \
                                     (the first is at {first}); write all its pairs in one",
                                    ordering.first, ordering.second
                                ),
                            );
                        }
                        seen.get_or_insert(token.pos);
                        relative_order(p, map, (i, ordering));
                    }
                    _ => {
                        p.error(
                            token.pos,
                            "this RELATIVE_ORDER follows no WORKFLOW_DEFINITIONS; write \
                             WORKFLOW_DEFINITIONS First : Second; before it, naming the two \
                             definitions its pairs are tasks of",
                        );
                        p.skip_clause();
                    }
                }
                p.eat(';');
            }
            _ => {
                stray(p, &token);
                p.skip_clause();
                p.eat('}');
            }
        }
    }
    doc
}

/// `P1 : P2` after `WORKFLOW_DEFINITIONS`: the two definitions of ordering `i`.
fn definitions(p: &mut Parser<'_>, map: &mut SourceMap, i: usize) -> Ordering {
    let first = definition(p, map, i, Side::First);
    let second = if first.is_none() {
        // What follows the name that could not be read is not worth more problems, nor is
        // the second name it leaves missing.
        map.set(
            Node::OrderingAttr(i, "second"),
            map.pos(Node::OrderingAttr(i, "first")),
        );
        None
    } else if p.eat(':') {
        definition(p, map, i, Side::Second)
    } else {
        let next = p.peek().clone();
        // The missing name is this problem, not one more.
        map.set(Node::OrderingAttr(i, "second"), next.pos);
        p.error(
            next.pos,
            format!(
                "expected : between the two definitions (WORKFLOW_DEFINITIONS First : Second), \
                 but found {}",
                next.shown()
            ),
        );
        None
    };
    Ordering {
        first: first.unwrap_or_default(),
        second: second.unwrap_or_default(),
        pairs: Vec::new(),
    }
}

/// The name of the definition on `side` of ordering `i`.
fn definition(
    p: &mut Parser<'_>,
    map: &mut SourceMap,
    i: usize,
    side: Side,
) -> Option<DefinitionName> {
    let at = p.here();
    // Where the name should be, so that the missing one is this problem, not one more.
    map.set(Node::OrderingAttr(i, side.word()), at);
    let named = p.name(&format!(
        "the name of the {} definition, as it is deployed",
        side.word()
    ))?;
    Some(DefinitionName::new(named.text))
}

/// `{ T11 : T21; ... }` after `RELATIVE_ORDER`: the pairs of ordering `i`, added to it.
fn relative_order(p: &mut Parser<'_>, map: &mut SourceMap, (i, o): (usize, &mut Ordering)) {
    let open = p.peek().clone();
    if !p.eat('{') {
        p.error(
            open.pos,
            format!(
                "expected {{ to open RELATIVE_ORDER, but found {}; write RELATIVE_ORDER {{ T1 : \
                 T2; }}",
                open.shown()
            ),
        );
        p.skip_clause();
        return;
    }
    loop {
        let token = p.peek().clone();
        match token.kind {
            Kind::Punct('}') => {
                p.bump();
                return;
            }
            Kind::End => {
                p.error(
                    open.pos,
                    "the { of RELATIVE_ORDER is never closed; add } after its last pair",
                );
                return;
            }
            // The next ordering: this one's } was forgotten.
            Kind::Word if Block::Orderings.keywords().contains(&token.text.as_ref()) => {
                p.error(
                    open.pos,
                    format!(
                        "the {{ of RELATIVE_ORDER is never closed ({} follows at {}); add }} \
                         after its last pair",
                        token.shown(),
                        token.pos
                    ),
                );
                return;
            }
            Kind::Punct(';') => {
                p.bump();
            }
            _ => {
                let j = o.pairs.len();
                // Set before reading: a pair written but not read is no ordering without pairs.
                map.set(Node::Order(i, j), token.pos);
                if let Some(pair) = pair(p, map, (i, j), o) {
                    o.pairs.push(pair);
                }
            }
        }
    }
}

/// `T11 : T21;`: pair `j` of ordering `i`; `None` when it cannot be read (the rest of it is
/// skipped).
fn pair(
    p: &mut Parser<'_>,
    map: &mut SourceMap,
    (i, j): (usize, usize),
    o: &Ordering,
) -> Option<OrderPair> {
    p.clause_start = p.diags.len();
    let first = task(p, map, (i, j), (Side::First, &o.first));
    let second = if first.is_some() && p.eat(':') {
        task(p, map, (i, j), (Side::Second, &o.second))
    } else {
        if first.is_some() {
            let next = p.peek().clone();
            p.error(
                next.pos,
                format!(
                    "expected : between the two tasks of a pair (First : Second), but found {}",
                    next.shown()
                ),
            );
        }
        p.skip_clause();
        return None;
    };
    p.end_clause("pair");
    Some(OrderPair {
        first: first?,
        second: second?,
    })
}

/// A task of `definition`, on `side` of pair `(i, j)`: its name, or its id.
fn task(
    p: &mut Parser<'_>,
    map: &mut SourceMap,
    (i, j): (usize, usize),
    (side, definition): (Side, &DefinitionName),
) -> Option<TaskRef> {
    let what = if definition.as_str().is_empty() {
        format!("the {} task of the pair", side.word())
    } else {
        format!("a task of {definition}")
    };
    let Ref { to, pos } = p.reference(&what)?;
    map.set(Node::OrderTask(i, j, side.word()), pos);
    Some(match to {
        Target::Name(name) => TaskRef::Name(name),
        Target::Id(id) => TaskRef::Id(ActivityId(id)),
    })
}

/// Reports `token`, which starts nothing an ordering text holds.
fn stray(p: &mut Parser<'_>, token: &Token<'_>) {
    let top = Block::Top.keywords().contains(&token.text.as_ref()) && token.kind == Kind::Word;
    if top {
        p.error(
            token.pos,
            format!(
                "{} belongs in a definition's text, and this is an ordering text (it holds \
                 WORKFLOW_DEFINITIONS): deploy the definition with `mobiwf-controller deploy \
                 FILE`, and keep its orderings in a text of their own",
                token.shown()
            ),
        );
    } else {
        p.unknown_clause(Block::Orderings, "an ordering text", token);
    }
}
