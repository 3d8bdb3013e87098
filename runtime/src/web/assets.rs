//! The one script and the one style sheet every page uses, compiled into the binary and served
//! under a name that holds a hash of their content (`/assets/app-<hash>.js`), so a browser may
//! keep them for a year and still gets the new ones after an upgrade. Nothing comes from
//! another site: no CDN, no web fonts.

use std::sync::LazyLock;

use axum::extract::Path;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::secret;

const SCRIPT: &str = include_str!("assets/app.js");
const STYLE: &str = include_str!("assets/app.css");

/// One asset: its versioned name, its content type, its content.
struct Asset {
    name: String,
    content_type: &'static str,
    body: &'static str,
}

static ASSETS: LazyLock<[Asset; 2]> = LazyLock::new(|| {
    let named = |stem: &str, ext: &str, body: &'static str, content_type| Asset {
        name: format!("{stem}-{}.{ext}", &secret::hash(body)[..12]),
        content_type,
        body,
    };
    [
        named("app", "js", SCRIPT, "text/javascript; charset=utf-8"),
        named("app", "css", STYLE, "text/css; charset=utf-8"),
    ]
});

/// The path of the script, as pages link it.
pub fn script_path() -> String {
    format!("/assets/{}", ASSETS[0].name)
}

/// The path of the style sheet, as pages link it.
pub fn style_path() -> String {
    format!("/assets/{}", ASSETS[1].name)
}

/// `GET /assets/{name}`: the asset by its versioned name, cached for a year.
pub async fn serve(Path(name): Path<String>) -> Response {
    match ASSETS.iter().find(|a| a.name == name) {
        Some(asset) => (
            [
                (header::CONTENT_TYPE, asset.content_type),
                (header::CACHE_CONTROL, "public, max-age=31536000, immutable"),
            ],
            asset.body,
        )
            .into_response(),
        None => (StatusCode::NOT_FOUND, "no such asset").into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_carry_the_content_hash() {
        assert!(script_path().starts_with("/assets/app-") && script_path().ends_with(".js"));
        assert!(style_path().starts_with("/assets/app-") && style_path().ends_with(".css"));
        assert_ne!(script_path(), style_path());
        let hash = &secret::hash(SCRIPT)[..12];
        assert!(script_path().contains(hash));
    }
}
