//! `scripts/install` as an operator runs it, on the workspace's built programs: each installed
//! binary carries neither debug information nor symbols, its `.debug` file lies where its
//! `.gnu_debuglink` section says, and a command's error with `RUST_LIB_BACKTRACE=1` still shows
//! where it arose by file and line; with the `.debug` file taken away it cannot.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use mobiwf_tests::harness::run;
use mobiwf_tests::{binary, repo_root, scratch};

const PROGRAMS: [&str; 3] = ["mobiwf-controller", "mobiwf-node", "mobiwf-demo"];

/// The names of the ELF sections of `file` (`readelf -S`, from binutils like objcopy).
fn sections(file: &Path) -> Vec<String> {
    let out = run(
        Command::new("readelf").arg("-S").arg("-W").arg(file),
        Duration::from_secs(30),
    );
    out.expect_code(0, "readelf -S");
    out.stdout
        .lines()
        .filter_map(|line| {
            let (_, rest) = line.split_once("] ")?;
            Some(rest.split_whitespace().next()?.to_owned())
        })
        .collect()
}

/// Whether section `name` holds DWARF (`.debug_gdb_scripts`, loaded with the program, names
/// gdb's pretty-printers and is no debug information).
fn is_dwarf(name: &str) -> bool {
    name.starts_with(".debug_") && name != ".debug_gdb_scripts"
}

/// What the installed controller prints for a command that fails in our code (a submission
/// to an API where nothing listens), asked for where errors arise (`RUST_LIB_BACKTRACE`) or
/// only for panics' backtraces (`RUST_BACKTRACE`).
fn failing_command(installed: &Path, dir: &Path, variable: &str) -> String {
    let token = dir.join("operator.token");
    std::fs::write(&token, "not-a-real-token\n").unwrap();
    let workflow = repo_root().join("examples/paper/workflow.xml");
    let out = run(
        Command::new(installed.join("mobiwf-controller"))
            .args(["submit", "--api", "127.0.0.1:9"])
            .arg(&workflow)
            .env("MOBIWF_TOKEN_FILE", &token)
            .env_remove("RUST_LIB_BACKTRACE")
            .env_remove("RUST_BACKTRACE")
            .env(variable, "1"),
        Duration::from_secs(60),
    );
    assert_ne!(out.code, Some(0), "a submission to nothing cannot succeed");
    assert!(
        out.stderr.contains("mobiwf-controller: error: "),
        "{}",
        out.stderr
    );
    out.stderr
}

/// Whether a backtrace names one of the controller's own source files with a line.
fn names_our_lines(stderr: &str) -> bool {
    stderr.lines().any(|line| {
        let line = line.trim();
        line.starts_with("at ")
            && line.contains("controller/src/")
            && line
                .rsplit_once(".rs:")
                .is_some_and(|(_, at)| at.starts_with(|c: char| c.is_ascii_digit()))
    })
}

#[test]
fn installed_programs_are_stripped_and_their_backtraces_still_name_files_and_lines() {
    let built = binary("mobiwf-controller").unwrap();
    let dir = scratch("install").unwrap();
    // A prefix as an operator may give it: relative to where the command runs, with a space.
    let prefix = dir.join("installed here");
    let out = run(
        Command::new(repo_root().join("scripts/install"))
            .current_dir(&dir)
            .arg("--bin-dir")
            .arg(built.parent().unwrap())
            .args(["--prefix", "installed here"]),
        Duration::from_secs(300),
    );
    out.expect_code(0, "scripts/install");
    let bin = prefix.join("bin");
    for name in PROGRAMS {
        let installed = bin.join(name);
        let debug = bin.join(".debug").join(format!("{name}.debug"));
        assert!(out.stdout.contains(name), "{}", out.stdout);
        let names = sections(&installed);
        assert!(
            names.iter().any(|s| s == ".gnu_debuglink"),
            "{name}: {names:?}"
        );
        assert!(
            !names.iter().any(|s| is_dwarf(s) || s == ".symtab"),
            "{name} still carries debug information or symbols: {names:?}"
        );
        let kept = sections(&debug);
        assert!(kept.iter().any(|s| s == ".debug_line"), "{name}: {kept:?}");
        let (installed_size, built_size) = (
            std::fs::metadata(&installed).unwrap().len(),
            std::fs::metadata(built.with_file_name(name)).unwrap().len(),
        );
        assert!(
            installed_size < built_size,
            "{name}: {installed_size} bytes installed, {built_size} built"
        );
        let version = run(
            Command::new(&installed).arg("--version"),
            Duration::from_secs(30),
        );
        version.expect_code(0, name);
        assert!(version.stdout.starts_with(name), "{}", version.stdout);
    }

    let shown = failing_command(&bin, &dir, "RUST_BACKTRACE");
    assert!(
        !shown.contains("where it arose:"),
        "only asked for panics':\n{shown}"
    );
    let shown = failing_command(&bin, &dir, "RUST_LIB_BACKTRACE");
    assert!(shown.contains("where it arose:"), "{shown}");
    assert!(
        names_our_lines(&shown),
        "no file and line of ours:\n{shown}"
    );

    // Without its .debug file the same binary runs and says where, but not by file and line.
    let debug = bin.join(".debug/mobiwf-controller.debug");
    std::fs::rename(&debug, dir.join("moved.debug")).unwrap();
    let shown = failing_command(&bin, &dir, "RUST_LIB_BACKTRACE");
    assert!(shown.contains("where it arose:"), "{shown}");
    assert!(
        !names_our_lines(&shown),
        "file and line without the debug file:\n{shown}"
    );
}
