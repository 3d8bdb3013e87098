//! A person's browser as the web tests drive it over HTTP (reqwest, no redirects followed, the
//! session cookie kept by hand so every test sees it), the sign-in link the CLI prints, and a
//! live worklist read as server-sent events.
// Shared by the `web` and `browser` test binaries: each uses a part.
#![allow(dead_code)]

use std::time::Duration;

use mobiwf_tests::harness::Node;

/// `mobiwf-node login-link --data-dir D --user U [--path P]` on `node`: the URL it prints.
pub(crate) fn login_link(node: &Node, user: &str, path: Option<&str>) -> String {
    let mut args = vec!["login-link", "--user", user];
    if let Some(path) = path {
        args.extend(["--path", path]);
    }
    let out = node.cli(&args);
    out.expect_code(0, &format!("login-link --user {user}"));
    let url = out.stdout.trim().to_owned();
    let api = format!("http://{}/login?code=mwf_login_", node.api);
    assert!(
        url.starts_with(&api),
        "login-link printed {url:?}, not {api}..."
    );
    url
}

/// An HTTP answer.
#[derive(Debug)]
pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) headers: reqwest::header::HeaderMap,
    pub(crate) body: String,
}

impl Answer {
    /// A header's value (empty when absent).
    pub(crate) fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
    }

    /// The CSRF token the page carries (`<meta name="csrf-token">`).
    pub(crate) fn csrf(&self) -> String {
        let marker = r#"name="csrf-token" content=""#;
        let at = self
            .body
            .find(marker)
            .unwrap_or_else(|| panic!("no CSRF token on the page:\n{}", self.body));
        let rest = &self.body[at + marker.len()..];
        rest[..rest.find('"').unwrap()].to_owned()
    }
}

/// One browser on one node: its base URL and the session cookie it got, if any.
pub(crate) struct Browser {
    client: reqwest::Client,
    pub(crate) base: String,
    pub(crate) cookie: Option<String>,
}

impl Browser {
    /// A browser without a session, on `node`.
    pub(crate) fn on(node: &Node) -> Browser {
        Browser::at(&node.api)
    }

    /// A browser without a session, on the daemon whose API is at `api` (HOST:PORT).
    pub(crate) fn at(api: &str) -> Browser {
        // Every reqwest client takes its TLS from `runtime::tls` (no default provider).
        let client = mobiwf_runtime::tls::client_builder(None)
            .unwrap()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(30))
            .build()
            .unwrap();
        Browser {
            client,
            base: format!("http://{api}"),
            cookie: None,
        }
    }

    /// A browser signed in as `user` on `node` with a fresh login link.
    pub(crate) async fn signed_in(node: &Node, user: &str) -> Browser {
        let mut browser = Browser::on(node);
        let url = login_link(node, user, None);
        let answer = browser.open(&url).await;
        assert_eq!(answer.status, 303, "the login link goes on: {answer:?}");
        assert_eq!(answer.header("location"), "/", "{answer:?}");
        browser
    }

    /// GET `url` (absolute), keeping the session cookie it sets.
    pub(crate) async fn open(&mut self, url: &str) -> Answer {
        let answer = self.send(self.client.get(url)).await;
        let set = answer.header("set-cookie");
        if let Some(pair) = set.split(';').next().filter(|p| p.contains('=')) {
            let value = pair.split_once('=').map_or("", |(_, v)| v);
            self.cookie = (!value.is_empty()).then(|| pair.to_owned());
        }
        answer
    }

    /// GET `path` with the session cookie.
    pub(crate) async fn get(&self, path: &str) -> Answer {
        self.send(self.client.get(format!("{}{path}", self.base)))
            .await
    }

    /// POST the form `fields` to `path` with the session cookie.
    pub(crate) async fn post(&self, path: &str, fields: &[(&str, &str)]) -> Answer {
        let request = self
            .client
            .post(format!("{}{path}", self.base))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(encode(fields));
        self.send(request).await
    }

    /// POST a multipart form to `path` with the session cookie.
    pub(crate) async fn post_multipart(&self, path: &str, fields: &[(&str, &str)]) -> Answer {
        let boundary = "mobiwfTestBoundary7d3";
        let mut body = String::new();
        for (name, value) in fields {
            body.push_str(&format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
            ));
        }
        body.push_str(&format!("--{boundary}--\r\n"));
        let request = self
            .client
            .post(format!("{}{path}", self.base))
            .header(
                "content-type",
                format!("multipart/form-data; boundary={boundary}"),
            )
            .body(body);
        self.send(request).await
    }

    async fn send(&self, mut request: reqwest::RequestBuilder) -> Answer {
        if let Some(cookie) = &self.cookie {
            request = request.header("cookie", cookie);
        }
        let response = request.send().await.unwrap();
        Answer {
            status: response.status().as_u16(),
            headers: response.headers().clone(),
            body: response.text().await.unwrap(),
        }
    }

    /// The live worklist of `order`, resumed after `last_id` when given.
    pub(crate) async fn events(&self, last_id: Option<&str>) -> Events {
        self.events_at("/events", last_id).await
    }

    /// The server-sent events of `path` (a live worklist, a console's live instance),
    /// resumed after `last_id` when given.
    pub(crate) async fn events_at(&self, path: &str, last_id: Option<&str>) -> Events {
        let mut request = self.client.get(format!("{}{path}", self.base));
        if let Some(cookie) = &self.cookie {
            request = request.header("cookie", cookie);
        }
        if let Some(id) = last_id {
            request = request.header("last-event-id", id);
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), 200, "GET {path}: {response:?}");
        let kind = response.headers()["content-type"].to_str().unwrap();
        assert!(kind.starts_with("text/event-stream"), "{kind}");
        Events {
            response,
            buffer: String::new(),
        }
    }
}

/// `fields` as `application/x-www-form-urlencoded`.
fn encode(fields: &[(&str, &str)]) -> String {
    let byte = |b: u8| -> String {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            (b as char).to_string()
        } else {
            format!("%{b:02X}")
        }
    };
    let text = |s: &str| s.bytes().map(byte).collect::<String>();
    fields
        .iter()
        .map(|(k, v)| format!("{}={}", text(k), text(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// One event of a live worklist.
#[derive(Debug, Clone)]
pub(crate) struct Event {
    pub(crate) id: String,
    pub(crate) kind: String,
    pub(crate) data: String,
}

/// A live worklist being read.
pub(crate) struct Events {
    response: reqwest::Response,
    buffer: String,
}

impl Events {
    /// The next event (keep-alive comments skipped), within `within`.
    pub(crate) async fn next(&mut self, within: Duration) -> Event {
        tokio::time::timeout(within, self.next_event())
            .await
            .unwrap_or_else(|_| panic!("no event within {within:?}"))
    }

    async fn next_event(&mut self) -> Event {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let mut event = Event {
                    id: String::new(),
                    kind: String::new(),
                    data: String::new(),
                };
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("id: ").or(line.strip_prefix("id:")) {
                        event.id = v.to_owned();
                    } else if let Some(v) = line.strip_prefix("event: ") {
                        event.kind = v.to_owned();
                    } else if let Some(v) =
                        line.strip_prefix("data: ").or(line.strip_prefix("data:"))
                    {
                        event.data.push_str(v);
                    }
                }
                if !event.kind.is_empty() {
                    return event;
                }
                continue;
            }
            let chunk = self
                .response
                .chunk()
                .await
                .unwrap()
                .expect("the stream ended");
            self.buffer.push_str(&String::from_utf8_lossy(&chunk));
        }
    }
}
