//! The client side of the token check, for both CLIs and the benchmark: an HTTP client that
//! shows a bearer token with every request, and a token given in the environment.

/// An HTTP client that sends `Authorization: Bearer TOKEN` with every request (marked
/// sensitive, so it never shows in a debug print), or a plain one without a token.
pub fn bearer_client(token: Option<&str>) -> anyhow::Result<reqwest::Client> {
    let mut builder = reqwest::Client::builder();
    if let Some(token) = token {
        let mut bearer = reqwest::header::HeaderValue::from_str(&format!("Bearer {token}"))
            .map_err(|_| anyhow::anyhow!("the API token holds characters a token cannot"))?;
        bearer.set_sensitive(true);
        builder = builder.default_headers(reqwest::header::HeaderMap::from_iter([(
            reqwest::header::AUTHORIZATION,
            bearer,
        )]));
    }
    Ok(builder.build()?)
}

/// The token in environment variable `var`, trimmed; none when unset or blank.
pub fn token_from_env(var: &str) -> Option<String> {
    std::env::var(var)
        .ok()
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.is_empty())
}
