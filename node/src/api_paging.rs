//! Pages of the lists the node's API answers, so that no answer grows with the node's work:
//! `?page=N&limit=M` (pages from 1; at most [`MAX_API_PAGE`] entries, also the default). The
//! body is the page's entries as a JSON array, as it was before pages; `X-Total-Count` says
//! how many the whole list holds and a `Link` header names the next page while more follow
//! (*Web Linking*, RFC 8288, section 3), so a client that reads only the body reads the first
//! page, and one that follows `next` reads them all.

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};

use crate::api::error;
use crate::daemon::Window;

/// The most entries one page of an API list holds, and how many it holds unless `?limit=`
/// says fewer.
pub const MAX_API_PAGE: usize = 500;

/// The header that says how many entries the whole list holds.
pub const TOTAL_COUNT: &str = "x-total-count";

/// `?page=&limit=` as given: read by [`PageParams::page`], which says what is wrong.
#[derive(Debug, Default, Deserialize)]
pub struct PageParams {
    #[serde(default)]
    page: Option<String>,
    #[serde(default)]
    limit: Option<String>,
}

/// A page of an API list: its number (from 1) and its size (1 to [`MAX_API_PAGE`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApiPage {
    number: usize,
    limit: usize,
}

impl PageParams {
    /// The page asked for; a 400 answer saying what to give when a value cannot be read.
    pub fn page(&self) -> Result<ApiPage, Box<Response>> {
        let bad = |what: &str, value: &str| {
            let why = format!(
                "{what} must be a whole number from 1 (limit at most {MAX_API_PAGE}); got '{value}'"
            );
            Box::new(error(StatusCode::BAD_REQUEST, why))
        };
        let read = |what: &str, value: &Option<String>, most: usize| match value {
            None => Ok(None),
            Some(v) => match v.parse::<usize>() {
                Ok(n) if (1..=most).contains(&n) => Ok(Some(n)),
                _ => Err(bad(what, v)),
            },
        };
        Ok(ApiPage {
            number: read("page", &self.page, usize::MAX)?.unwrap_or(1),
            limit: read("limit", &self.limit, MAX_API_PAGE)?.unwrap_or(MAX_API_PAGE),
        })
    }
}

impl ApiPage {
    /// Which entries of the whole list the page holds.
    pub fn window(self) -> Window {
        Window {
            from: (self.number - 1).saturating_mul(self.limit),
            limit: self.limit,
        }
    }

    /// The entries of the whole list `all` the page holds.
    pub fn slice<T>(self, all: &[T]) -> &[T] {
        let from = self.window().from.min(all.len());
        let end = from.saturating_add(self.limit).min(all.len());
        &all[from..end]
    }

    /// The answer: `entries` (this page's) as a JSON array, with the whole list's `total` and,
    /// while more follow, the address of the next page: `path` with `query` (without page and
    /// limit; may be empty) and the next page's number.
    pub fn answer<T: Serialize>(
        self,
        entries: &[T],
        total: usize,
        path: &str,
        query: &str,
    ) -> Response {
        let mut response = Json(entries).into_response();
        let headers = response.headers_mut();
        headers.insert(TOTAL_COUNT, HeaderValue::from(total));
        let shown = self.window().from.saturating_add(entries.len());
        if shown < total && !entries.is_empty() {
            let sep = if query.is_empty() { "" } else { "&" };
            let next = format!(
                "<{path}?{query}{sep}page={}&limit={}>; rel=\"next\"",
                self.number + 1,
                self.limit
            );
            if let Ok(value) = HeaderValue::from_str(&next) {
                headers.insert(header::LINK, value);
            }
        }
        response
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn params(page: Option<&str>, limit: Option<&str>) -> PageParams {
        PageParams {
            page: page.map(str::to_owned),
            limit: limit.map(str::to_owned),
        }
    }

    fn page(page: Option<&str>, limit: Option<&str>) -> ApiPage {
        params(page, limit).page().expect("a readable page")
    }

    #[test]
    fn the_first_page_of_the_most_is_the_default() {
        assert_eq!(
            page(None, None),
            ApiPage {
                number: 1,
                limit: MAX_API_PAGE
            }
        );
        assert_eq!(
            page(Some("3"), Some("20")).window(),
            Window {
                from: 40,
                limit: 20
            }
        );
    }

    #[test]
    fn unreadable_pages_are_refused_saying_what_to_give() {
        for (p, l) in [
            (Some("0"), None),
            (Some("x"), None),
            (None, Some("0")),
            (None, Some("501")),
            (Some("-1"), Some("5")),
        ] {
            let refused = params(p, l).page().expect_err("refused");
            assert_eq!(refused.status(), StatusCode::BAD_REQUEST, "{p:?} {l:?}");
        }
    }

    #[test]
    fn a_slice_is_the_page_and_past_the_end_is_empty() {
        let all: Vec<u32> = (0..7).collect();
        assert_eq!(page(Some("2"), Some("3")).slice(&all), &[3, 4, 5]);
        assert_eq!(page(Some("3"), Some("3")).slice(&all), &[6]);
        assert!(page(Some("4"), Some("3")).slice(&all).is_empty());
    }

    #[test]
    fn the_next_page_is_linked_while_more_follow() {
        let all: Vec<u32> = (0..7).collect();
        let link = |number: &str, query: &str| {
            let p = page(Some(number), Some("3"));
            let answer = p.answer(p.slice(&all), all.len(), "/worklist", query);
            assert_eq!(answer.headers()[TOTAL_COUNT], "7");
            answer
                .headers()
                .get(header::LINK)
                .map(|v| v.to_str().expect("ascii").to_owned())
        };
        assert_eq!(
            link("1", "").as_deref(),
            Some("</worklist?page=2&limit=3>; rel=\"next\"")
        );
        assert_eq!(
            link("2", "order=priority").as_deref(),
            Some("</worklist?order=priority&page=3&limit=3>; rel=\"next\"")
        );
        assert_eq!(link("3", ""), None);
        assert_eq!(link("9", ""), None);
    }
}
