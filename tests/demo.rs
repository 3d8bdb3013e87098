//! `mobiwf-demo --stay`, as a newcomer runs it: the demo runs the paper's workflow and the
//! people part, then stays up and prints two sign-in links, the operator's console and
//! alice's worklist on N2; each link is exchanged for a session cookie and leads to a page
//! that answers 200 (the console's instances; alice's worklist with the inspection left on
//! it); the command it prints for another console link makes one that works; SIGTERM then
//! stops the demo, which exits 0.
//!
//! Nothing waits for luck: the demo's output is read with a deadline.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "web/pages.rs"]
mod pages;

use std::io::BufRead;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use pages::Browser;

/// The demo's printed lines until the last one `--stay` prints, within `within`.
fn lines_until_staying(rx: &mpsc::Receiver<String>, within: Duration) -> Vec<String> {
    let deadline = Instant::now() + within;
    let mut seen = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) => {
                let last = line.starts_with("Ctrl-C stops the demo");
                seen.push(line);
                if last {
                    return seen;
                }
            }
            Err(e) => panic!(
                "the demo did not stay up ({e}); it printed:\n{}",
                seen.join("\n")
            ),
        }
    }
}

/// The URL on the line that starts with `label`.
fn url_after(lines: &[String], label: &str) -> String {
    let line = lines
        .iter()
        .find(|l| l.starts_with(label))
        .unwrap_or_else(|| panic!("no line {label:?} in:\n{}", lines.join("\n")));
    let url = line[label.len()..].trim().to_owned();
    assert!(url.starts_with("http://127.0.0.1:"), "{line}");
    assert!(url.contains("/login?code=mwf_login_"), "{line}");
    url
}

/// Runs the command on the line that starts with `label` (`cargo run -q -p BINARY -- ARGS`,
/// run here with the binary cargo built): the link it prints.
fn run_hint(lines: &[String], label: &str, binary: &str) -> String {
    let shown = format!("cargo run -q -p {binary} -- ");
    let args = lines
        .iter()
        .filter_map(|l| l.strip_prefix(label))
        .find_map(|l| l.trim_start().strip_prefix(shown.as_str()))
        .unwrap_or_else(|| panic!("no {label:?} {shown:?} in:\n{}", lines.join("\n")));
    let out = Command::new(mobiwf_tests::binary(binary).unwrap())
        .args(args.split_whitespace())
        .output()
        .unwrap();
    assert!(out.status.success(), "{args}: {out:?}");
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// Opens the sign-in link `url` in a fresh browser: signed in, sent on to `/`, which answers.
async fn sign_in(url: &str) -> (Browser, pages::Answer) {
    let rest = url.trim_start_matches("http://");
    let api = &rest[..rest.find('/').unwrap()];
    let mut browser = Browser::at(api);
    let signed = browser.open(url).await;
    assert_eq!(signed.status, 303, "{url}: {signed:?}");
    assert_eq!(signed.header("location"), "/");
    assert!(
        signed.header("set-cookie").contains("HttpOnly"),
        "{signed:?}"
    );
    let page = browser.get("/").await;
    assert_eq!(page.status, 200, "{url}: {page:?}");
    (browser, page)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_stays_up_with_the_console_and_a_worklist_to_open() {
    let mut demo = Command::new(mobiwf_tests::binary("mobiwf-demo").unwrap())
        .arg("--stay")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let stdout = demo.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let lines = lines_until_staying(&rx, Duration::from_secs(120));
    let console = url_after(&lines, "console (operator):");
    let worklist = url_after(&lines, "worklist (alice, N2):");
    assert!(
        lines.iter().any(|l| l.contains("click Select")),
        "no word on what to click:\n{}",
        lines.join("\n")
    );

    let (_, instances) = sign_in(&console).await;
    assert!(
        instances.body.contains("href=\"/console/instances/"),
        "{}",
        instances.body
    );
    // The commands the demo prints for other links make ones that work.
    let again = run_hint(&lines, "new console link:", "mobiwf-controller");
    let (_, instances) = sign_in(&again).await;
    assert!(
        instances.body.contains("href=\"/console/org\""),
        "{}",
        instances.body
    );
    let again = run_hint(&lines, "new worklist link:", "mobiwf-node");
    let (_, alice) = sign_in(&again).await;
    assert!(alice.body.contains("Inspect"), "{}", alice.body);

    let (_, alice) = sign_in(&worklist).await;
    assert!(alice.body.contains("alice"), "{}", alice.body);
    assert!(alice.body.contains("Inspect"), "{}", alice.body);
    // A link works once.
    let mut again = Browser::at("127.0.0.1:1");
    let spent = again.open(&console).await;
    assert_eq!(spent.status, 400, "{spent:?}");

    let term = Command::new("kill")
        .args(["-TERM", &demo.id().to_string()])
        .status()
        .unwrap();
    assert!(term.success());
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = demo.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "the demo did not stop on SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(0), "{status:?}");
}
