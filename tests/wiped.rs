//! A node whose data directory is wiped with its key kept (a reinstalled device, a lost disk)
//! comes back as the same peer with a new store: its messages, numbered from 1 again, carry a
//! new incarnation, so the controller and its partners take them as new rather than drop them
//! as duplicates of the earlier store's. Instances still complete through it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use mobiwf_tests::harness::{PAPER_PLACEMENT, assert_all_succeeded, paper_mesh};
use mobiwf_tests::{repo_root, scratch};

#[test]
fn a_node_wiped_but_its_key_kept_is_new_to_everyone_and_instances_complete_through_it() {
    let dir = scratch("wiped").unwrap();
    let (controller, _p1, mut p2) = paper_mesh(&dir);
    let workflow = repo_root().join("examples/paper/workflow.xml");
    // Enough traffic that P2's sequence numbers used so far cover what it sends next.
    for _ in 0..3 {
        let id = controller.submit(&workflow);
        controller.wait(id, 60).expect_code(0, "an instance before the wipe");
    }

    p2.kill();
    let key = runtime_key_file();
    let mut wiped = 0;
    for entry in std::fs::read_dir(&p2.spec.dir).unwrap() {
        let path = entry.unwrap().path();
        if path.file_name().is_some_and(|n| n == key) {
            continue;
        }
        if path.is_dir() {
            std::fs::remove_dir_all(&path).unwrap();
        } else {
            std::fs::remove_file(&path).unwrap();
        }
        wiped += 1;
    }
    assert!(wiped > 0, "nothing but the key to wipe: the test proves nothing");
    p2.restart();

    for round in 0..3 {
        let id = controller.submit(&workflow);
        controller
            .wait(id, 60)
            .expect_code(0, &format!("instance {round} after the wipe"));
        assert_all_succeeded(&controller.status(id), &PAPER_PLACEMENT);
    }
}

fn runtime_key_file() -> &'static str {
    mobiwf_runtime::identity::KEY_FILE
}
