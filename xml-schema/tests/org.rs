//! The organisation document, the third language: reading into the model with positions, the
//! corpus of broken documents with their exact diagnostics (`tests/org/broken/`, snapshots in
//! `tests/snapshots/org__*.snap`), the limits, the writer (defaults left out,
//! `read(write(x)) == x` for any valid organisation) and `xsd/organisation.xsd` against
//! `xmllint` (which, as in `xsd.rs`, must be installed: the test fails without it).
//!
//! To accept new or changed snapshots: `INSTA_UPDATE=always cargo test -p mobiwf-xml-schema
//! --test org`, then review the `.snap` files with `git diff`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use common::corpus::{check_all, check_lines, files, snapshot_settings};
use common::xmllint::{
    EXPECT_MARKER, Verdict, XMLLINT_EXIT_INVALID, assert_no_problems, expected_error, xmllint,
};
use mobiwf_xml_schema::limits::{
    MAX_DEPARTMENTS, MAX_ID_CHARS, MAX_NAME_CHARS, MAX_ROLES, MAX_TEAMS, MAX_USERS,
};
use mobiwf_xml_schema::*;
use proptest::prelude::*;

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn fixture(name: &str) -> PathBuf {
    crate_dir().join("tests/org").join(name)
}

fn load_file(path: &Path) -> Organisation {
    let bytes = fs::read(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    load_organisation(&bytes)
        .unwrap_or_else(|d| panic!("{}", d.render(&path.display().to_string())))
        .value
}

/// The problems of `src`, rendered as for a file named `org.xml`.
fn problems(src: &str) -> String {
    match load_organisation(src.as_bytes()) {
        Ok(_) => String::new(),
        Err(d) => d.render("org.xml"),
    }
}

fn grant(role: &str, priority: i64) -> RoleGrant {
    RoleGrant {
        role: role.into(),
        priority,
    }
}

#[test]
fn the_brief_example_loads_to_its_model() {
    let org = load_file(&fixture("brief.xml"));
    let expected = Organisation {
        roles: vec![
            Role {
                id: "tech".into(),
                name: "Technician".into(),
            },
            Role {
                id: "supervisor".into(),
                name: String::new(),
            },
        ],
        departments: vec![
            Department {
                id: "ops".into(),
                name: String::new(),
                parent: None,
            },
            Department {
                id: "field".into(),
                name: String::new(),
                parent: Some("ops".into()),
            },
        ],
        teams: vec![
            Team {
                id: "north".into(),
                name: String::new(),
                parent: None,
            },
            Team {
                id: "north-east".into(),
                name: String::new(),
                parent: Some("north".into()),
            },
        ],
        users: vec![
            User {
                id: "alice".into(),
                name: "Alice".into(),
                department: Some("field".into()),
                teams: vec!["north".into()],
                device: Some("N2".into()),
                on_leave: false,
                logged_on: true,
                roles: vec![grant("tech", 2)],
            },
            User {
                id: "bob".into(),
                name: "Bob".into(),
                department: Some("field".into()),
                teams: vec!["north-east".into()],
                device: Some("N3".into()),
                on_leave: false,
                logged_on: true,
                roles: vec![grant("tech", 1)],
            },
        ],
    };
    assert_eq!(org, expected);
}

#[test]
fn the_readme_example_loads() {
    let org = load_file(&crate_dir().join("../examples/organisation.xml"));
    let who: Vec<(&str, Option<&str>, Vec<&str>)> = org
        .users
        .iter()
        .map(|u| {
            let roles = u.roles.iter().map(|g| g.role.as_str()).collect();
            (u.id.as_str(), u.device.as_deref(), roles)
        })
        .collect();
    assert_eq!(
        who,
        vec![
            ("alice", Some("N2"), vec!["tech"]),
            ("bob", Some("N3"), vec!["tech"]),
            ("carol", Some("N2"), vec!["tech"]),
            ("dave", Some("N1"), vec!["supervisor", "administrator"]),
        ]
    );
    assert!(org.users.iter().all(|u| !u.on_leave && u.logged_on));
    let field = org.departments.iter().find(|d| d.id.as_str() == "field");
    assert_eq!(field.and_then(|d| d.parent.clone()), Some("ops".into()));
    assert_eq!(org.teams.len(), 1);
}

#[test]
fn a_user_s_teams_are_its_attribute_then_its_children() {
    let src = r#"<organisation>
      <teams><team id="a"/><team id="b"/><team id="c"/></teams>
      <users><user id="u" team="b"><team id="c"/><role id="r"/><team id="a"/></user></users>
      <roles><role id="r"/></roles>
    </organisation>"#;
    let org = load_organisation(src.as_bytes()).unwrap().value;
    let teams: Vec<&str> = org.users[0].teams.iter().map(TeamId::as_str).collect();
    assert_eq!(teams, ["b", "c", "a"]);
}

#[test]
fn flags_and_priorities_have_defaults_and_are_read() {
    let src = r#"<organisation><roles><role id="r"/></roles><users>
      <user id="a"><role id="r"/></user>
      <user id="b" onLeave="true" loggedOn="false"><role id="r" priority="-7"/></user>
    </users></organisation>"#;
    let org = load_organisation(src.as_bytes()).unwrap().value;
    let (a, b) = (&org.users[0], &org.users[1]);
    assert_eq!(
        (a.on_leave, a.logged_on, a.roles[0].priority),
        (false, true, 0)
    );
    assert_eq!(
        (b.on_leave, b.logged_on, b.roles[0].priority),
        (true, false, -7)
    );
    assert_eq!((a.device.clone(), a.department.clone()), (None, None));
}

#[test]
fn empty_documents_and_sections_are_fine() {
    for src in [
        "<organisation/>",
        "<organisation><roles/><departments/><teams/><users/></organisation>",
        "<?xml version=\"1.0\"?>\n<organisation xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" xsi:noNamespaceSchemaLocation=\"organisation.xsd\"/>",
    ] {
        let org = load_organisation(src.as_bytes()).unwrap().value;
        assert_eq!(org, Organisation::default(), "{src}");
    }
}

#[test]
fn the_source_map_points_at_elements_and_attributes() {
    let src = fs::read(fixture("brief.xml")).unwrap();
    let map = load_organisation(&src).unwrap().source_map;
    let at = |line, column| Pos { line, column };
    assert_eq!(map.pos(Node::Root), at(1, 1));
    assert_eq!(map.pos(Node::Role(1)), at(2, 45));
    assert_eq!(map.pos(Node::DepartmentAttr(1, "parent")), at(3, 61));
    assert_eq!(map.pos(Node::User(1)), at(8, 5));
    assert_eq!(map.pos(Node::UserAttr(1, "device")), at(8, 50));
    assert_eq!(map.pos(Node::Grant(0, 0)), at(7, 7));
    assert_eq!(map.pos(Node::GrantAttr(1, 0, "priority")), at(9, 23));
    assert_eq!(map.pos(Node::UserTeam(0, 0)), at(6, 54));
    assert_eq!(map.pos(Node::UserTeam(1, 0)), at(9, 43));
}

/// Checks one corpus file: at least one diagnostic, each line well shaped, and the rendered
/// text equal to its snapshot.
fn check_broken_file(path: &Path, failures: &mut Vec<String>) {
    let file_name = path.file_name().unwrap().to_str().unwrap();
    let stem = path.file_stem().unwrap().to_str().unwrap();
    let bytes = fs::read(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let rendered = match load_organisation(&bytes) {
        Ok(_) => {
            failures.push(format!("{file_name}: loads, but every file here is broken"));
            String::new()
        }
        Err(diagnostics) => diagnostics.render(file_name),
    };
    check_lines(file_name, &bytes, &rendered, failures);
    snapshot_settings(path, &bytes).bind(|| insta::assert_snapshot!(stem, rendered));
}

#[test]
fn broken_documents() {
    let files = files(&fixture("broken"));
    assert!(files.len() > 1, "the corpus is empty");
    let report = check_all(&files, check_broken_file);
    assert!(report.is_empty(), "{} files checked\n{report}", files.len());
}

#[test]
fn every_problem_is_reported_at_once() {
    let bytes = fs::read(fixture("broken/many-problems.xml")).unwrap();
    let diagnostics = load_organisation(&bytes).unwrap_err();
    // The misspelt attribute, the duplicate role, the cycle, the unknown department, team
    // and role, the bad priority and the bad onLeave.
    assert_eq!(diagnostics.len(), 8, "{}", diagnostics.render("many.xml"));
}

#[test]
fn counts_beyond_the_limits_are_refused() {
    let roles: String = (0..=MAX_ROLES)
        .map(|i| format!("<role id=\"r{i}\"/>\n"))
        .collect();
    let src = format!("<organisation><roles>\n{roles}</roles></organisation>");
    let line = MAX_ROLES + 2;
    assert_eq!(
        problems(&src),
        format!(
            "org.xml:{line}:1: error: the organisation declares {} roles, more than the \
             {MAX_ROLES} allowed (MAX_ROLES); every node holds a copy of the organisation, so \
             keep it within the limit\n",
            MAX_ROLES + 1
        )
    );
    let users: String = (0..=MAX_USERS)
        .map(|i| format!("<user id=\"u{i}\"/>\n"))
        .collect();
    let src = format!("<organisation><users>\n{users}</users></organisation>");
    let rendered = problems(&src);
    assert!(
        rendered.starts_with(&format!("org.xml:{}:1: error: ", MAX_USERS + 2))
            && rendered.contains("(MAX_USERS)")
            && rendered.lines().count() == 1,
        "{rendered}"
    );
    let fine: String = (0..MAX_USERS)
        .map(|i| format!("<user id=\"u{i}\"/>"))
        .collect();
    let src = format!("<organisation><users>{fine}</users></organisation>");
    assert_eq!(problems(&src), "");
}

#[test]
fn lengths_beyond_the_limits_are_refused() {
    let id = "x".repeat(MAX_ID_CHARS);
    let src = format!("<organisation><roles><role id=\"{id}\"/></roles></organisation>");
    assert_eq!(problems(&src), "");
    let src = format!("<organisation><roles><role id=\"{id}y\"/></roles></organisation>");
    assert!(
        problems(&src).contains("(MAX_ID_CHARS)"),
        "{}",
        problems(&src)
    );
    let name = "é".repeat(MAX_NAME_CHARS + 1);
    let src =
        format!("<organisation><users><user id=\"a\" name=\"{name}\"/></users></organisation>");
    assert_eq!(
        problems(&src),
        format!(
            "org.xml:1:35: error: the name of user a has {} characters, more than the \
             {MAX_NAME_CHARS} allowed (MAX_NAME_CHARS); shorten it\n",
            MAX_NAME_CHARS + 1
        )
    );
    let device = "n".repeat(MAX_ID_CHARS + 1);
    let src =
        format!("<organisation><users><user id=\"a\" device=\"{device}\"/></users></organisation>");
    assert!(problems(&src).contains("org.xml:1:35: error: the device of user a"));
}

#[test]
fn models_built_in_code_are_validated_without_positions() {
    let mut org = load_file(&fixture("brief.xml"));
    org.departments[0].parent = Some("field".into());
    org.users[0].roles.push(grant("pilot", 0));
    let diagnostics = validate_organisation(&org, &SourceMap::default());
    let rendered = Diagnostics(diagnostics).render("code");
    assert_eq!(
        rendered,
        "code: error: department cycle: ops -> field -> ops (each is part of the next); \
         departments form a tree, so remove or change the parent of one of them\n\
         code: error: a role of user alice is \"pilot\", which is not declared in <roles>; \
         declare it in <roles> with <role id=\"pilot\"/>, or correct the id\n"
    );
}

#[test]
fn the_writer_leaves_defaults_out() {
    let org = load_file(&fixture("brief.xml"));
    let expected = r#"<?xml version="1.0" encoding="UTF-8"?>
<organisation>
  <roles>
    <role id="tech" name="Technician"/>
    <role id="supervisor"/>
  </roles>
  <departments>
    <department id="ops"/>
    <department id="field" parent="ops"/>
  </departments>
  <teams>
    <team id="north"/>
    <team id="north-east" parent="north"/>
  </teams>
  <users>
    <user id="alice" name="Alice" department="field" team="north" device="N2">
      <role id="tech" priority="2"/>
    </user>
    <user id="bob" name="Bob" department="field" team="north-east" device="N3">
      <role id="tech" priority="1"/>
    </user>
  </users>
</organisation>
"#;
    assert_eq!(write_organisation(&org), expected);
    assert_eq!(
        write_organisation(&Organisation::default()),
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<organisation/>\n"
    );
}

#[test]
fn the_writer_writes_every_non_default() {
    let mut org = load_file(&crate_dir().join("../examples/organisation.xml"));
    let dave = &mut org.users[3];
    dave.on_leave = true;
    dave.logged_on = false;
    dave.teams = vec!["north".into(), "north".into()];
    dave.name = "D \"the boss\" <&>\t\r\n".into();
    let text = write_organisation(&org);
    assert!(
        text.contains(
            "<user id=\"dave\" name=\"D &quot;the boss&quot; &lt;&amp;&gt;&#9;&#13;&#10;\" \
             department=\"ops\" team=\"north\" device=\"N1\" onLeave=\"true\" loggedOn=\"false\">"
        ),
        "{text}"
    );
    assert!(
        text.contains("    <team id=\"north\"/>\n    </user>"),
        "{text}"
    );
}

/// Ids as the reader accepts them: one word, short.
fn id() -> impl Strategy<Value = String> {
    proptest::string::string_regex("[a-zA-Z0-9_.:@é-]{1,12}").unwrap()
}

/// Text an attribute can carry: any non-control character, plus tab, newline and carriage
/// return, including XML's special characters and surrounding whitespace.
fn text() -> impl Strategy<Value = String> {
    proptest::string::string_regex("(\\PC|[\\t\\n\\r <>&\"'])*")
        .unwrap()
        .prop_map(|s| s.chars().take(24).collect())
}

/// `n` distinct ids.
fn ids(n: std::ops::Range<usize>) -> impl Strategy<Value = Vec<String>> {
    prop::collection::btree_set(id(), n).prop_map(|set| set.into_iter().collect())
}

/// For each of `n` items, a parent among the items before it (or none): a forest.
fn forest(ids: &[String], picks: &[(bool, usize)]) -> Vec<Option<String>> {
    (0..ids.len())
        .map(|i| {
            let (has, k) = picks.get(i).copied().unwrap_or_default();
            (has && i > 0).then(|| ids[k % i].clone())
        })
        .collect()
}

/// Picks from `from` by the numbers of `picks`, each at most once, in the order picked.
fn pick(from: &[String], picks: &[usize]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for &k in picks {
        if let Some(id) = from.get(k % from.len().max(1))
            && !out.contains(id)
        {
            out.push(id.clone());
        }
    }
    out
}

type UserParts = (
    (String, Option<usize>, Vec<usize>, Option<String>),
    (bool, bool, Vec<(usize, i64)>),
);

fn user_parts() -> impl Strategy<Value = UserParts> {
    (
        (
            text(),
            prop::option::of(any::<usize>()),
            prop::collection::vec(any::<usize>(), 0..3),
            prop::option::of(id()),
        ),
        (
            any::<bool>(),
            any::<bool>(),
            prop::collection::vec((any::<usize>(), any::<i64>()), 0..3),
        ),
    )
}

/// Any organisation the reader accepts: unique ids, references to declared ids, forests.
fn organisation() -> impl Strategy<Value = Organisation> {
    (
        (ids(0..4), ids(0..4), ids(0..4), ids(0..5)),
        prop::collection::vec((text(), any::<bool>(), any::<usize>()), 12),
        prop::collection::vec(user_parts(), 5),
    )
        .prop_map(|((roles, departments, teams, users), extra, parts)| {
            let department_parents = forest(
                &departments,
                &extra.iter().map(|(_, b, k)| (*b, *k)).collect::<Vec<_>>(),
            );
            let team_parents = forest(
                &teams,
                &extra
                    .iter()
                    .rev()
                    .map(|(_, b, k)| (*b, *k))
                    .collect::<Vec<_>>(),
            );
            let name = |i: usize| extra[i % extra.len()].0.clone();
            Organisation {
                roles: (roles.iter().enumerate())
                    .map(|(i, id)| Role {
                        id: id.as_str().into(),
                        name: name(i),
                    })
                    .collect(),
                departments: (departments.iter().zip(department_parents).enumerate())
                    .map(|(i, (id, parent))| Department {
                        id: id.as_str().into(),
                        name: name(i + 4),
                        parent: parent.map(DepartmentId::new),
                    })
                    .collect(),
                teams: (teams.iter().zip(team_parents).enumerate())
                    .map(|(i, (id, parent))| Team {
                        id: id.as_str().into(),
                        name: name(i + 8),
                        parent: parent.map(TeamId::new),
                    })
                    .collect(),
                users: (users.iter().zip(parts))
                    .map(|(id, parts)| user(id, parts, (&roles, &departments, &teams)))
                    .collect(),
            }
        })
}

fn user(
    id: &str,
    ((name, department, teams_picked, device), (on_leave, logged_on, grants)): UserParts,
    (roles, departments, teams): (&[String], &[String], &[String]),
) -> User {
    let role_ids = pick(roles, &grants.iter().map(|(k, _)| *k).collect::<Vec<_>>());
    User {
        id: id.into(),
        name,
        department: department
            .and_then(|k| departments.get(k % departments.len().max(1)))
            .map(|d| d.as_str().into()),
        teams: pick(teams, &teams_picked)
            .into_iter()
            .map(TeamId::new)
            .collect(),
        device,
        on_leave,
        logged_on,
        roles: (role_ids.into_iter().zip(&grants))
            .map(|(role, (_, priority))| RoleGrant {
                role: RoleId::new(role),
                priority: *priority,
            })
            .collect(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn written_organisations_read_back_equal(org in organisation()) {
        let problems = validate_organisation(&org, &SourceMap::default());
        prop_assert!(problems.is_empty(), "the generator made an invalid value: {problems:?}");
        let text = write_organisation(&org);
        match load_organisation(text.as_bytes()) {
            Ok(loaded) => prop_assert_eq!(loaded.value, org, "written:\n{}", text),
            Err(d) => prop_assert!(false, "{}\nwritten:\n{}", d.render("written.xml"), text),
        }
    }

    #[test]
    fn cut_or_damaged_documents_never_panic(org in organisation(), cut in any::<usize>(), byte in any::<u8>()) {
        let mut bytes = write_organisation(&org).into_bytes();
        let at = cut % (bytes.len() + 1);
        if byte % 2 == 0 {
            bytes.truncate(at);
        } else if at < bytes.len() {
            bytes[at] = byte;
        }
        if let Err(d) = load_organisation(&bytes) {
            prop_assert!(!d.is_empty());
            let _ = d.render("damaged.xml");
        }
    }
}

// ----------------------------------------------------------------------------- the XSD

/// Broken documents that XSD 1.0 cannot refuse: cycles (identity constraints cannot follow
/// chains of parents), and a team named both in a user's `team` attribute and in a `team`
/// child (a field cannot be an attribute on one node and a child's attribute on another).
/// Every other document of the corpus must be refused by the XSD too.
const BEYOND_XSD: &[&str] = &[
    "department-cycle.xml",
    "team-cycle.xml",
    "team-named-twice.xml",
];

fn schema() -> PathBuf {
    crate_dir().join("xsd/organisation.xsd")
}

fn check_valid(document: &Path) -> Option<String> {
    let Verdict { code, stderr } = xmllint(&schema(), document);
    (code != Some(0)).then(|| {
        format!(
            "{} should validate against organisation.xsd but xmllint exited with {code:?}:\n{stderr}",
            document.display()
        )
    })
}

#[test]
fn the_xsd_accepts_valid_documents() {
    let valid = files(&fixture("xsd/valid"));
    assert!(!valid.is_empty(), "no document in tests/org/xsd/valid");
    let mut documents = vec![
        crate_dir().join("../examples/organisation.xml"),
        fixture("brief.xml"),
    ];
    documents.extend(valid);
    let mut problems = Vec::new();
    for document in &documents {
        // What the XSD accepts, the reader accepts too.
        if let Err(d) = load_organisation(&fs::read(document).unwrap()) {
            problems.push(d.render(&document.display().to_string()));
        }
        problems.extend(check_valid(document));
    }
    assert_no_problems(&problems);
}

#[test]
fn the_xsd_refuses_invalid_documents_for_the_expected_reason() {
    let invalid = files(&fixture("xsd/invalid"));
    assert!(!invalid.is_empty(), "no document in tests/org/xsd/invalid");
    let mut problems = Vec::new();
    for document in invalid {
        let text = fs::read_to_string(&document).unwrap();
        let Some(expected) = expected_error(&text) else {
            problems.push(format!(
                "{}: add a `<!-- {EXPECT_MARKER} TEXT -->` comment",
                document.display()
            ));
            continue;
        };
        let Verdict { code, stderr } = xmllint(&schema(), &document);
        if code != Some(XMLLINT_EXIT_INVALID) || !stderr.contains(expected) {
            problems.push(format!(
                "{} should be refused with `{expected}` (exit {XMLLINT_EXIT_INVALID}); xmllint \
                 exited with {code:?}:\n{stderr}",
                document.display()
            ));
        }
        // What the XSD refuses, the reader refuses too.
        if load_organisation(text.as_bytes()).is_ok() {
            problems.push(format!("{}: the reader accepts it", document.display()));
        }
    }
    assert_no_problems(&problems);
}

#[test]
fn the_xsd_refuses_the_broken_corpus() {
    let mut problems = Vec::new();
    for document in files(&fixture("broken")) {
        let name = document.file_name().unwrap().to_str().unwrap();
        let Verdict { code, stderr } = xmllint(&schema(), &document);
        let refused = code != Some(0);
        if refused == BEYOND_XSD.contains(&name) {
            problems.push(format!(
                "{name}: xmllint exited with {code:?} (listed in BEYOND_XSD: {}):\n{stderr}",
                BEYOND_XSD.contains(&name)
            ));
        }
    }
    assert_no_problems(&problems);
}

#[test]
fn the_xsd_and_the_reader_agree_on_the_count_limits() {
    let out = std::env::temp_dir().join(format!("mobiwf-org-limits-{}", std::process::id()));
    fs::create_dir_all(&out).unwrap();
    let mut problems = Vec::new();
    let kinds = [
        ("roles", "role", MAX_ROLES),
        ("departments", "department", MAX_DEPARTMENTS),
        ("teams", "team", MAX_TEAMS),
        ("users", "user", MAX_USERS),
    ];
    for (section, item, limit) in kinds {
        for n in [limit, limit + 1] {
            let items: String = (0..n).map(|i| format!("<{item} id=\"x{i}\"/>")).collect();
            let src = format!("<organisation><{section}>{items}</{section}></organisation>");
            let path = out.join(format!("{section}-{n}.xml"));
            fs::write(&path, &src).unwrap();
            let Verdict { code, .. } = xmllint(&schema(), &path);
            let read = load_organisation(src.as_bytes()).is_ok();
            if (code == Some(0), read) != (n <= limit, n <= limit) {
                problems.push(format!(
                    "{n} {section}: xmllint exited with {code:?}, the reader {}",
                    if read { "accepts" } else { "refuses" }
                ));
            }
        }
    }
    fs::remove_dir_all(&out).ok();
    assert_no_problems(&problems);
}

/// A file of its own for each document handed to `xmllint` (tests run in parallel).
fn scratch_file(what: &str) -> PathBuf {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!("mobiwf-org-{what}-{}-{n}.xml", std::process::id()))
}

/// Whether `org`, written, passes the XSD: the problem when not.
fn written_passes_the_xsd(org: &Organisation) -> Option<String> {
    let path = scratch_file("written");
    fs::write(&path, write_organisation(org)).unwrap();
    let problem = check_valid(&path);
    fs::remove_file(&path).ok();
    problem
}

#[test]
fn the_written_example_passes_the_xsd() {
    let example = load_file(&crate_dir().join("../examples/organisation.xml"));
    assert_no_problems(&Vec::from_iter(written_passes_the_xsd(&example)));
}

proptest! {
    // Fresh organisations on every run; few, as each case runs xmllint.
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn written_documents_pass_the_xsd(org in organisation()) {
        if let Some(problem) = written_passes_the_xsd(&org) {
            prop_assert!(false, "{}\nwritten:\n{}", problem, write_organisation(&org));
        }
    }
}

#[test]
fn check_detects_an_organisation_document() {
    let good = br#"<organisation><roles><role id="tech"/></roles></organisation>"#;
    assert_eq!(
        mobiwf_xml_schema::detect_kind(good).unwrap(),
        mobiwf_xml_schema::DocumentKind::Organisation
    );
    assert!(mobiwf_xml_schema::check(good).is_empty());
    let bad = br#"<organisation><users><user id="a"><role id="x"/></user></users></organisation>"#;
    let rendered = mobiwf_xml_schema::check(bad).render("org.xml");
    assert!(rendered.starts_with("org.xml:1:"), "{rendered}");
    assert!(
        rendered.contains("\"x\", which is not declared in <roles>"),
        "{rendered}"
    );
}
