//! How every page looks and what it is sent with: the layout (the style sheet and the one
//! script, the signed-in bar with its sign-out form), the security headers on every answer of
//! the web routes, and the plain pages that say something went wrong. Everything is written
//! with `maud`, which escapes every value it is given.

use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use maud::{DOCTYPE, Markup, html};

use super::assets;

/// The Content-Security-Policy of every page: everything from this daemon only, no inline
/// script or style, no frames, forms only to this daemon.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; \
     style-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; \
     form-action 'self'; frame-ancestors 'none'";

/// Who is signed in, as the bar at the top shows it.
pub struct Bar<'a> {
    /// Whom the session speaks for, in words (`alice`, `role operator`).
    pub who: &'a str,
    /// The session's CSRF token (the sign-out form and the script's fetches carry it).
    pub csrf: &'a str,
}

/// A whole page: `title`, the bar when someone is signed in, then `body`.
pub fn layout(title: &str, bar: Option<Bar<'_>>, body: &Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                @if let Some(bar) = &bar {
                    meta name="csrf-token" content=(bar.csrf);
                }
                title { (title) " · mobiwf" }
                link rel="stylesheet" href=(assets::style_path());
                script src=(assets::script_path()) defer {}
            }
            body {
                header.bar {
                    a.home href="/" { "mobiwf" }
                    @if let Some(bar) = &bar {
                        span.who { (bar.who) }
                        form.signout method="post" action="/logout" {
                            input type="hidden" name="csrf" value=(bar.csrf);
                            button type="submit" { "Sign out" }
                        }
                    }
                }
                main { (body) }
            }
        }
    }
}

/// A page answer: `markup` as HTML with `status`, never cached (it shows one person's work).
pub fn html(status: StatusCode, markup: Markup) -> Response {
    (
        status,
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        markup.into_string(),
    )
        .into_response()
}

/// A page that says one thing (a refusal, a result), with a way back.
pub fn message(status: StatusCode, title: &str, text: &str, bar: Option<Bar<'_>>) -> Response {
    let body = html! {
        section.message {
            h1 { (title) }
            p { (text) }
            p { a href="/" { "Back to the worklist" } }
        }
    };
    html(status, layout(title, bar, &body))
}

/// The security headers every answer of the web routes carries (a layer).
pub async fn secure_headers(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    for (name, value) in [
        (header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::X_FRAME_OPTIONS, "DENY"),
        // A login link carries its code in the URL: no page tells another site where it was.
        (header::REFERRER_POLICY, "no-referrer"),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_escaped_and_the_page_links_only_its_own_assets() {
        let body = html! { p { ("<script>alert(1)</script>") } };
        let bar = Bar {
            who: "<b>alice</b>",
            csrf: "\"x\"",
        };
        let page = layout("<i>t</i>", Some(bar), &body).into_string();
        assert!(!page.contains("<script>alert(1)"), "{page}");
        assert!(
            page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "{page}"
        );
        assert!(page.contains("&lt;b&gt;alice&lt;/b&gt;"), "{page}");
        assert!(!page.contains("<i>t</i>"), "{page}");
        assert!(page.contains(&assets::script_path()));
        assert!(
            !page.contains("http://") && !page.contains("https://"),
            "{page}"
        );
        // The only script element is the asset: nothing inline.
        assert_eq!(page.matches("<script").count(), 1, "{page}");
    }
}
