//! The mesh of the people tests: a controller, the host H and the field devices D1 and D2
//! as separate processes, the organisation applied and replicated, and one helper per thing a
//! person or an administrator does or looks at (worklists, notices, history).
// Shared by the `people` and `people_assignment` test binaries: each uses a part.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Duration;

use mobiwf_tests::harness::{CLI_TIMEOUT, CmdOutput, Controller, Node, start_nodes_with, wait_for};
use mobiwf_tests::scratch;
use serde_json::Value;

use crate::documents::organisation;

/// How long the test waits for something that should happen at once.
pub(crate) const SOON: Duration = Duration::from_secs(30);
/// `wait --timeout` for an instance whose last work item was just completed.
pub(crate) const WAIT_SECS: u64 = 30;

/// A controller, the host H (skills 1) and the devices D1 and D2 (skills 99, which no
/// workflow uses), all registered, with an organisation applied; every process is killed when
/// it is dropped.
pub(crate) struct Mesh {
    dir: PathBuf,
    pub(crate) controller: Controller,
    pub(crate) h: Node,
    pub(crate) d1: Node,
    pub(crate) d2: Node,
    /// Each user's device name, from `org show --json`.
    devices: BTreeMap<String, String>,
}

impl Mesh {
    /// Starts the controller, H, D1 and D2 in a fresh scratch directory, applies the
    /// organisation with these `<user>` lines, and waits until every node holds it.
    pub(crate) fn start(test: &str, users: &str) -> Mesh {
        Mesh::start_with(test, users, &[])
    }

    /// [`Mesh::start`], the controller and every node with these more options (e.g.
    /// `--hour-ms 100`).
    pub(crate) fn start_with(test: &str, users: &str, extra: &[&str]) -> Mesh {
        let dir = scratch(test).unwrap();
        let controller =
            Controller::start_with(&dir.join("controller"), "/ip4/127.0.0.1/tcp/0", extra);
        let nodes = [("H", "1"), ("D1", "99"), ("D2", "99")];
        let mut nodes = start_nodes_with(&dir, &controller, &nodes, extra).into_iter();
        let (Some(h), Some(d1), Some(d2)) = (nodes.next(), nodes.next(), nodes.next()) else {
            unreachable!("three nodes were started")
        };
        let mut mesh = Mesh {
            dir,
            controller,
            h,
            d1,
            d2,
            devices: BTreeMap::new(),
        };
        mesh.apply_org(users);
        mesh
    }

    /// `org show --json`, parsed.
    pub(crate) fn org_show(&self) -> Value {
        let out = self.controller.cli(&["org", "show", "--json"], CLI_TIMEOUT);
        out.expect_code(0, "org show --json");
        serde_json::from_str(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "org show --json printed invalid JSON ({e}):\n{}",
                out.stdout
            )
        })
    }

    /// Applies the organisation with these users; returns the directory version every node
    /// then holds.
    pub(crate) fn apply_org(&mut self, users: &str) -> u64 {
        let file = self.dir.join("organisation.xml");
        std::fs::write(&file, organisation(users)).unwrap();
        let out = self
            .controller
            .cli(&["org", "apply", &file.display().to_string()], CLI_TIMEOUT);
        out.expect_code(0, "org apply of a valid organisation document");
        assert!(
            out.stdout
                .contains("organisation applied: directory version"),
            "org apply should say which directory version it made:\n{}",
            out.stdout
        );
        let show = self.org_show();
        self.devices.clear();
        for user in show["users"].as_array().expect("org show --json has users") {
            let id = user["id"].as_str().expect("every user has an id");
            if let Some(device) = user["device"].as_str() {
                assert_eq!(
                    user["device_registered"], true,
                    "user {id}'s device {device} is a registered node:\n{show:#}"
                );
                self.devices.insert(id.to_owned(), device.to_owned());
            }
        }
        wait_for(
            "H, D1 and D2 to hold the controller's directory version",
            SOON,
            || {
                let version = self.org_show()["version"].as_u64()?;
                [&self.h, &self.d1, &self.d2]
                    .iter()
                    .all(|n| n.directory_version() == Some(version))
                    .then_some(version)
            },
        )
    }

    pub(crate) fn node(&self, name: &str) -> &Node {
        [&self.h, &self.d1, &self.d2]
            .into_iter()
            .find(|n| n.spec.name == name)
            .unwrap_or_else(|| panic!("no node named {name} in the mesh"))
    }

    /// The node that holds `user`'s worklist.
    pub(crate) fn device(&self, user: &str) -> &Node {
        let name = self
            .devices
            .get(user)
            .unwrap_or_else(|| panic!("user {user} has no device in the directory"));
        self.node(name)
    }

    /// Writes a document into the scratch directory.
    pub(crate) fn write(&self, name: &str, text: &str) -> PathBuf {
        let file = self.dir.join(name);
        std::fs::write(&file, text).unwrap();
        file
    }

    /// `worklist --user U --json` on U's device: U's open items.
    pub(crate) fn worklist(&self, user: &str) -> Vec<Value> {
        let out = self
            .device(user)
            .cli(&["worklist", "--user", user, "--json"]);
        out.expect_code(
            0,
            &format!("worklist --user {user} --json on {user}'s device"),
        );
        serde_json::from_str::<Value>(&out.stdout)
            .unwrap_or_else(|e| panic!("worklist of {user}: invalid JSON ({e}):\n{}", out.stdout))
            .as_array()
            .cloned()
            .unwrap_or_else(|| panic!("worklist of {user} is not an array:\n{}", out.stdout))
    }

    /// The item of (instance, activity) on `user`'s worklist.
    pub(crate) fn item(&self, user: &str, id: u64, activity: u64) -> Option<Value> {
        self.worklist(user).into_iter().find(|i| {
            i["instance"].as_u64() == Some(id) && i["activity"].as_u64() == Some(activity)
        })
    }

    /// Waits until `user`'s worklist shows the item in `state` (offered, selected, locked).
    pub(crate) fn wait_item(&self, user: &str, id: u64, activity: u64, state: &str) -> Value {
        wait_for(
            format!("{user}'s worklist to show activity {activity} of instance {id} {state}"),
            SOON,
            || {
                self.item(user, id, activity)
                    .filter(|i| i["state"].as_str() == Some(state))
            },
        )
    }

    /// Waits until the item has left `user`'s worklist.
    pub(crate) fn wait_gone(&self, user: &str, id: u64, activity: u64) {
        wait_for(
            format!("activity {activity} of instance {id} to leave {user}'s worklist"),
            SOON,
            || self.item(user, id, activity).is_none().then_some(()),
        );
    }

    /// `mobiwf-node ACTION ID ACTIVITY --user U EXTRA...` on U's device.
    pub(crate) fn act(
        &self,
        user: &str,
        action: &str,
        id: u64,
        activity: u64,
        extra: &[&str],
    ) -> CmdOutput {
        let (id, activity) = (id.to_string(), activity.to_string());
        let mut args = vec![action, id.as_str(), activity.as_str(), "--user", user];
        args.extend_from_slice(extra);
        self.device(user).cli(&args)
    }

    /// `act`, which must exit 0.
    pub(crate) fn ok(&self, user: &str, action: &str, id: u64, activity: u64, extra: &[&str]) {
        self.act(user, action, id, activity, extra).expect_code(
            0,
            &format!("{user} {action}s activity {activity} of instance {id} {extra:?}"),
        );
    }

    /// `user` selects and completes the item, and the instance then succeeds.
    pub(crate) fn work(&self, user: &str, id: u64, activity: u64) {
        self.ok(user, "select", id, activity, &[]);
        self.ok(user, "complete", id, activity, &[]);
        self.succeeded(id);
    }

    /// `wait ID`, which must exit 0.
    pub(crate) fn succeeded(&self, id: u64) {
        self.controller
            .wait(id, WAIT_SECS)
            .expect_code(0, &format!("instance {id} succeeds"));
    }

    /// `notices --user U --json` on U's device.
    pub(crate) fn notices(&self, user: &str) -> Vec<Value> {
        let out = self
            .device(user)
            .cli(&["notices", "--user", user, "--json"]);
        out.expect_code(0, &format!("notices --user {user} --json"));
        serde_json::from_str::<Value>(&out.stdout)
            .unwrap_or_else(|e| panic!("notices of {user}: invalid JSON ({e}):\n{}", out.stdout))
            .as_array()
            .cloned()
            .unwrap_or_else(|| panic!("notices of {user} are not an array:\n{}", out.stdout))
    }

    /// Waits for a notice of `kind` about instance `id` to `user`.
    pub(crate) fn wait_notice(&self, user: &str, id: u64, kind: &str) -> Value {
        wait_for(
            format!("a {kind:?} notice about instance {id} to {user}"),
            SOON,
            || {
                self.notices(user).into_iter().find(|n| {
                    n["instance"].as_u64() == Some(id) && n["kind"].as_str() == Some(kind)
                })
            },
        )
    }

    /// Waits for an event of instance `id` whose text contains `text`.
    pub(crate) fn wait_history(&self, id: u64, text: &str) -> Value {
        wait_for(
            format!("an event {text:?} in the history of instance {id}"),
            SOON,
            || {
                self.controller
                    .history(id)
                    .into_iter()
                    .find(|e| e["what"].as_str().is_some_and(|w| w.contains(text)))
            },
        )
    }

    /// The users of the first `item: offered to A, B` event of instance `id` (waited for).
    pub(crate) fn offered_to(&self, id: u64) -> Vec<String> {
        let event = self.wait_history(id, "item: offered to ");
        users_after(event["what"].as_str().unwrap_or(""), "item: offered to ")
    }

    /// Every user named by any `offered to` event of instance `id` so far.
    pub(crate) fn ever_offered(&self, id: u64) -> BTreeSet<String> {
        self.controller
            .history(id)
            .iter()
            .filter_map(|e| e["what"].as_str())
            .filter(|w| w.contains("item: offered to "))
            .flat_map(|w| users_after(w, "item: offered to "))
            .collect()
    }

    /// Panics unless `user`'s worklist is empty.
    pub(crate) fn assert_empty(&self, user: &str, when: &str) {
        let list = self.worklist(user);
        assert!(
            list.is_empty(),
            "{user}'s worklist should stay empty ({when}), but it shows {list:#?}"
        );
    }
}

/// The comma-separated user ids after `marker` in an event text (`alice, bob` -> both).
pub(crate) fn users_after(what: &str, marker: &str) -> Vec<String> {
    let list = what.split_once(marker).map_or("", |(_, rest)| rest);
    // Only the list: anything after it in parentheses or after `;` or `:` is not a user.
    let list = list.split(['(', ';', ':']).next().unwrap_or("");
    list.split(',')
        .filter_map(|u| u.split_whitespace().next())
        .map(|u| u.trim_matches(|c: char| !c.is_alphanumeric() && c != '-' && c != '_'))
        .filter(|u| !u.is_empty())
        .map(str::to_owned)
        .collect()
}
