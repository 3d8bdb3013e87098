//! `GET /`: the instances, a page at a time, as `GET /instances` pages them
//! (`crate::listing`): filtered by state and by deployed definition, or found by id, each row
//! a link to its page.

use axum::extract::{Query, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use maud::{Markup, html};
use mobiwf_book::{InstanceState, InstanceSummary};
use mobiwf_proto::InstanceId;
use mobiwf_runtime::web;
use serde::Deserialize;

use super::Console;
use crate::listing::{self, Filter, Page};

/// Instances on one page of the console.
const PAGE: usize = 50;

/// What the list's form asks.
#[derive(Debug, Default, Deserialize)]
pub(super) struct ListQuery {
    #[serde(default)]
    state: Option<String>,
    #[serde(default)]
    definition: Option<String>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    after: Option<u64>,
}

impl ListQuery {
    /// The listing's filter, or what is wrong with the form.
    fn filter(&self) -> Result<Filter, String> {
        let state = non_empty(self.state.as_deref())
            .map(listing::parse_state)
            .transpose()?;
        Ok(Filter {
            state,
            definition: non_empty(self.definition.as_deref()).map(str::to_owned),
            ..Filter::default()
        })
    }

    /// The id searched for, if any, or what is wrong with it.
    fn id(&self) -> Result<Option<InstanceId>, String> {
        non_empty(self.id.as_deref())
            .map(|id| {
                id.parse()
                    .map(InstanceId)
                    .map_err(|_| format!("{id:?} is not an instance id (a number)"))
            })
            .transpose()
    }
}

fn non_empty(text: Option<&str>) -> Option<&str> {
    text.map(str::trim).filter(|t| !t.is_empty())
}

/// `GET /`.
pub(super) async fn page(
    State(console): State<Console>,
    headers: HeaderMap,
    uri: Uri,
    Query(q): Query<ListQuery>,
) -> Response {
    let signed = match super::allowed(&console, &headers, &uri, (&Method::GET, "/instances")) {
        Ok(signed) => signed,
        Err(instead) => return instead.into_response(),
    };
    let asked = q.filter().and_then(|f| Ok((f, q.id()?)));
    let (filter, id) = match asked {
        Ok(asked) => asked,
        Err(why) => return super::failed(&signed, StatusCode::BAD_REQUEST, &why),
    };
    let page = match id {
        // One instance: the first the filter lets through from it on, if it is that one.
        Some(id) => {
            let after = id.0.checked_sub(1).map(InstanceId);
            console
                .client
                .instances(filter, after, 1)
                .await
                .map(|p| Page {
                    instances: p.instances.into_iter().filter(|s| s.id == id).collect(),
                    next: None,
                })
        }
        None => {
            let after = q.after.map(InstanceId);
            console.client.instances(filter, after, PAGE).await
        }
    };
    let page = match page {
        Ok(page) => page,
        Err(e) => {
            let why = format!("cannot read the instance list: {e:#}");
            return super::failed(&signed, StatusCode::INTERNAL_SERVER_ERROR, &why);
        }
    };
    let csrf = signed.csrf();
    let body = html! {
        (super::nav(Some(super::Section::Instances)))
        h1 { "Instances" }
        (form(&q))
        (table(&page.instances))
        @if let Some(next) = page.next {
            p { a.next href=(next_link(&q, next)) { "Next page" } }
        }
    };
    web::html(
        StatusCode::OK,
        web::layout("Instances", Some(web::bar(&signed, &csrf)), &body),
    )
}

/// The filter form: a state, a definition's name, an id.
fn form(q: &ListQuery) -> Markup {
    let chosen = non_empty(q.state.as_deref()).unwrap_or("");
    html! {
        form.filter method="get" action="/" {
            label { "State "
                select name="state" {
                    option value="" selected[chosen.is_empty()] { "any" }
                    @for state in InstanceState::ALL {
                        option value=(state.as_str()) selected[chosen == state.as_str()] {
                            (state.as_str())
                        }
                    }
                }
            }
            label { " Definition "
                input type="text" name="definition" value=(q.definition.as_deref().unwrap_or(""));
            }
            label { " Id "
                input type="search" name="id" inputmode="numeric" value=(q.id.as_deref().unwrap_or(""));
            }
            " "
            button type="submit" { "Show" }
        }
    }
}

/// The rows of a page.
fn table(instances: &[InstanceSummary]) -> Markup {
    html! {
        @if instances.is_empty() {
            p.empty { "No instance here." }
        } @else {
            table.instances {
                thead { tr { th { "Id" } th { "Workflow" } th { "State" } th { "Definition" } th { "Submitted" } } }
                tbody {
                    @for s in instances {
                        tr data-instance=(s.id.0) data-state=(s.state.as_str()) {
                            td { a href=(format!("/console/instances/{}", s.id.0)) { (s.id.0) } }
                            td { (s.workflow.to_string()) " " small { (s.description) } }
                            td { (s.state.as_str()) }
                            td { (s.definition.as_ref().map_or(String::new(), |d| d.name.as_str().to_owned())) }
                            td { (mobiwf_book::format_time(s.submitted_ms)) }
                        }
                    }
                }
            }
        }
    }
}

/// The link to the page after `next`, with the same filter.
fn next_link(q: &ListQuery, next: InstanceId) -> String {
    let mut pairs = vec![("after", next.0.to_string())];
    if let Some(state) = non_empty(q.state.as_deref()) {
        pairs.push(("state", state.to_owned()));
    }
    if let Some(definition) = non_empty(q.definition.as_deref()) {
        pairs.push(("definition", definition.to_owned()));
    }
    let query: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{k}={}", encode(v)))
        .collect();
    format!("/?{}", query.join("&"))
}

/// `text` as a query value or a path segment: letters, digits and `-_.~` as they are, the
/// rest `%XX`.
pub(super) fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_next_page_keeps_the_filter_and_encodes_it() {
        let q = ListQuery {
            state: Some("running".into()),
            definition: Some("a&b c".into()),
            ..ListQuery::default()
        };
        assert_eq!(
            next_link(&q, InstanceId(9)),
            "/?after=9&state=running&definition=a%26b%20c"
        );
    }

    #[test]
    fn a_bad_state_or_id_is_said() {
        let q = ListQuery {
            state: Some("nope".into()),
            ..ListQuery::default()
        };
        assert!(q.filter().is_err());
        let q = ListQuery {
            id: Some("x".into()),
            ..ListQuery::default()
        };
        assert!(q.id().is_err());
        let q = ListQuery {
            id: Some(" 7 ".into()),
            ..ListQuery::default()
        };
        assert_eq!(q.id(), Ok(Some(InstanceId(7))));
    }
}
