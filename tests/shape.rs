//! The shape of the code, checked on every test run: the pure cores are a boundary, not a
//! convention (the partition engine, the node's core, the controller's book and an instance's
//! graph, the people's desk and directory, the messages, the document languages, the shell's
//! delivery decisions and the simulator that drives them all link neither the network, the
//! disk nor the async runtime: `cargo tree` over their normal dependencies proves it), the two
//! daemons link neither each other (they meet only on the mesh; the demo, which runs both, is
//! a crate above them), and no source file outside tests grows past [`MAX_SOURCE_LINES`].
//! (Functions are held to 80 lines
//! by clippy's `too_many_lines`, see `clippy.toml`.)

#![allow(clippy::expect_used)] // a test: a failure is the report

use std::path::Path;
use std::process::Command;

use mobiwf_tests::repo_root;

/// Crates that do I/O or schedule it; none may be a normal dependency of a pure core.
const FORBIDDEN: &[&str] = &[
    "tokio",
    "libp2p",
    "rocksdb",
    "librocksdb-sys",
    "axum",
    "hyper",
    "mio",
];

fn normal_dependencies(package: &str) -> Vec<String> {
    let output = Command::new(env!("CARGO"))
        .args([
            "tree",
            "--locked",
            "--offline",
            "-p",
            package,
            "-e",
            "normal",
        ])
        .args(["--prefix", "none", "--format", "{p}"])
        .current_dir(repo_root())
        .output()
        .expect("cargo tree runs");
    assert!(
        output.status.success(),
        "cargo tree -p {package} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_pure_cores_link_no_io_crates() {
    for package in [
        "mobiwf-engine",
        "mobiwf-node-core",
        "mobiwf-book",
        "mobiwf-cluster",
        "mobiwf-graph",
        "mobiwf-people",
        "mobiwf-proto",
        "mobiwf-xml-schema",
        "mobiwf-delivery",
        "mobiwf-sim",
    ] {
        let deps = normal_dependencies(package);
        // Every core depends on serde: seeing it proves the tree was listed.
        assert!(
            deps.iter().any(|d| d == "serde"),
            "cargo tree -p {package} did not list its dependencies: {deps:?}"
        );
        let linked: Vec<&String> = deps
            .iter()
            .filter(|d| FORBIDDEN.contains(&d.as_str()) || d.starts_with("libp2p-"))
            .collect();
        assert!(
            linked.is_empty(),
            "{package} must stay pure, but links {linked:?}: move that code into the daemon"
        );
    }
}

#[test]
fn the_daemons_link_neither_each_other() {
    for (package, other) in [
        ("mobiwf-controller", "mobiwf-node"),
        ("mobiwf-node", "mobiwf-controller"),
    ] {
        let deps = normal_dependencies(package);
        assert!(
            deps.iter().any(|d| d == "mobiwf-runtime"),
            "cargo tree -p {package} did not list its dependencies: {deps:?}"
        );
        assert!(
            !deps.iter().any(|d| d == other),
            "{package} links {other}: what both need belongs in mobiwf-runtime (or \
             mobiwf-proto), and what runs both in one process in mobiwf-demo"
        );
    }
}

/// The longest a source file outside tests may be, in lines.
const MAX_SOURCE_LINES: usize = 600;

/// Source directories of the workspace's crates (tests, benches and fuzz targets aside).
const SOURCE_DIRS: &[&str] = &[
    "xml-schema/src",
    "proto/src",
    "delivery/src",
    "engine/src",
    "node-core/src",
    "book/src",
    "cluster/src",
    "graph/src",
    "people/src",
    "runtime/src",
    "node/src",
    "controller/src",
    "demo/src",
    "bench/src",
    "sim/src",
    "testkit/src",
];

/// True for a test module (`tests.rs`, or anything under a `tests/` directory) of a crate's
/// sources; `relative` is the path below the crate's `src/`.
fn is_test_source(relative: &Path) -> bool {
    relative.file_name().is_some_and(|n| n == "tests.rs")
        || relative.components().any(|c| c.as_os_str() == "tests")
}

fn long_files(src: &Path, dir: &Path, found: &mut Vec<String>) {
    let entries = std::fs::read_dir(dir).expect("a source directory");
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        let relative = path.strip_prefix(src).expect("below src");
        if path.is_dir() {
            long_files(src, &path, found);
        } else if path.extension().is_some_and(|e| e == "rs") && !is_test_source(relative) {
            let text = std::fs::read_to_string(&path).expect("a source file");
            let lines = text.lines().count();
            if lines > MAX_SOURCE_LINES {
                found.push(format!("{} ({lines} lines)", path.display()));
            }
        }
    }
}

#[test]
fn no_source_file_outside_tests_is_over_600_lines() {
    let mut found = Vec::new();
    for dir in SOURCE_DIRS {
        let src = repo_root().join(dir);
        long_files(&src, &src, &mut found);
    }
    assert!(
        found.is_empty(),
        "split these by purpose (one input or one concern per file): {found:?}"
    );
}
