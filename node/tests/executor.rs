//! The command runner runs each activity's command at most once, even when asked again (as a
//! restarted node does), and reports interrupted runs instead of repeating them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use mobiwf_node::command_policy::CommandPolicy;
use mobiwf_node::executor::{Execution, Wrapper, execute, kill, run_dir, start_time};
use mobiwf_proto::{ActivityId, InstanceId, PartitionId};

fn execution(command: &str) -> Execution {
    Execution {
        instance: InstanceId(3),
        partition: PartitionId(1),
        activity: ActivityId(7),
        attempt: 0,
        command: command.to_owned(),
        partner: "P1".to_owned(),
        reads: Vec::new(),
        writes: Vec::new(),
        run: mobiwf_node::executor::RunKind::Try,
        held: None,
    }
}

#[tokio::test]
async fn a_command_runs_once_with_its_environment_and_its_exit_decides() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("log");
    let cmd = format!(
        "echo \"$MOBIWF_INSTANCE $MOBIWF_PARTITION $MOBIWF_ACTIVITY $MOBIWF_PARTNER\" >> {}",
        log.display()
    );
    let e = execution(&cmd);
    let first = execute(dir.path(), &e, &CommandPolicy::Any).await;
    assert!(first.finish.succeeded(), "{first:?}");
    // Asked again (a restart that finds the activity running): the recorded outcome, no rerun.
    let second = execute(dir.path(), &e, &CommandPolicy::Any).await;
    assert_eq!(first, second);
    assert_eq!(std::fs::read_to_string(&log).expect("log"), "3 1 7 P1\n");
}

#[tokio::test]
async fn a_failing_command_fails_with_its_status_and_output_is_kept() {
    let dir = tempfile::tempdir().expect("tempdir");
    let e = execution("echo oops; exit 3");
    let ended = execute(dir.path(), &e, &CommandPolicy::Any).await;
    assert!(!ended.finish.succeeded());
    assert_eq!(ended.finish.detail(), Some("command exited with status 3"));
    let output = std::fs::read_to_string(run_dir(dir.path(), &e).join("output")).expect("output");
    assert_eq!(output, "oops\n");
}

#[tokio::test]
async fn a_claimed_run_whose_process_is_gone_is_reported_interrupted_not_rerun() {
    let dir = tempfile::tempdir().expect("tempdir");
    let marker = dir.path().join("ran");
    let e = execution(&format!("touch {}", marker.display()));
    // What a node killed together with its command leaves: a claim, a dead pid, no exit.
    let run = run_dir(dir.path(), &e);
    std::fs::create_dir_all(run.join("claim")).expect("claim");
    let mut dead = std::process::Command::new("true").spawn().expect("spawn");
    let pid = dead.id();
    dead.wait().expect("wait");
    std::fs::write(run.join("claim").join("pid"), pid.to_string()).expect("pid");
    let ended = execute(dir.path(), &e, &CommandPolicy::Any).await;
    assert!(!ended.finish.succeeded());
    assert!(
        ended
            .finish
            .detail()
            .unwrap_or("")
            .starts_with("interrupted"),
        "{ended:?}"
    );
    assert!(!marker.exists(), "the command ran again");
}

#[tokio::test]
async fn a_live_pid_with_another_start_time_is_not_taken_for_the_wrapper() {
    // A real process under the recorded pid, as after a reboot or on a busy machine that
    // recycled the pid: it is another process, so the run is interrupted, not watched forever.
    let mut stranger = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .expect("spawn");
    let pid = stranger.id();
    let started = start_time(pid).expect("a start time in /proc");
    let itself = Wrapper {
        pid,
        started: Some(started),
    };
    assert!(itself.alive());
    let recycled = Wrapper {
        pid,
        started: Some(started + 1),
    };
    assert!(!recycled.alive());
    assert_eq!(Wrapper::parse(&format!("{pid} {started}\n")), Some(itself));
    assert_eq!(
        Wrapper::parse(&format!("{pid}\n")),
        Some(Wrapper { pid, started: None })
    );

    let dir = tempfile::tempdir().expect("tempdir");
    let marker = dir.path().join("ran");
    let e = execution(&format!("touch {}", marker.display()));
    let run = run_dir(dir.path(), &e);
    std::fs::create_dir_all(run.join("claim")).expect("claim");
    std::fs::write(
        run.join("claim").join("pid"),
        format!("{pid} {}\n", started + 1),
    )
    .expect("pid");
    let ended = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        execute(dir.path(), &e, &CommandPolicy::Any),
    )
    .await
    .expect("judged at once, not watched while the stranger lives");
    assert!(
        ended
            .finish
            .detail()
            .unwrap_or("")
            .starts_with("interrupted"),
        "{ended:?}"
    );
    assert!(!marker.exists(), "the command ran again");
    // Killing that run must not kill the stranger.
    kill(dir.path(), &e).expect("kill");
    assert!(
        stranger.try_wait().expect("try_wait").is_none(),
        "the stranger was killed"
    );
    stranger.kill().expect("kill");
    stranger.wait().expect("wait");
    assert!(!itself.alive());
}

#[tokio::test]
async fn the_wrapper_records_its_own_start_time() {
    let dir = tempfile::tempdir().expect("tempdir");
    let e = execution("sleep 30");
    let running = {
        let (data, e) = (dir.path().to_owned(), e.clone());
        tokio::spawn(async move { execute(&data, &e, &CommandPolicy::Any).await })
    };
    let pid = run_dir(dir.path(), &e).join("claim").join("pid");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !pid.exists() {
        assert!(std::time::Instant::now() < deadline, "never started");
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let text = std::fs::read_to_string(&pid).expect("pid");
    let wrapper = Wrapper::parse(&text).expect("a pid");
    assert_eq!(wrapper.started, start_time(wrapper.pid), "{text:?}");
    assert!(wrapper.started.is_some(), "{text:?}");
    assert!(wrapper.alive());
    kill(dir.path(), &e).expect("kill");
    let ended = running.await.expect("join");
    assert!(!ended.finish.succeeded(), "{ended:?}");
}

#[tokio::test]
async fn a_running_command_can_be_killed_and_ends_failed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let e = execution("sleep 30");
    let running = {
        let (data, e) = (dir.path().to_owned(), e.clone());
        tokio::spawn(async move { execute(&data, &e, &CommandPolicy::Any).await })
    };
    let pid = run_dir(dir.path(), &e).join("claim").join("pid");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !pid.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the command never started"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    kill(dir.path(), &e).expect("kill");
    let ended = running.await.expect("join");
    assert!(!ended.finish.succeeded(), "{ended:?}");
}

#[tokio::test]
async fn a_command_killed_before_its_wrapper_started_never_runs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let marker = dir.path().join("ran");
    let e = execution(&format!("touch {}", marker.display()));
    // The kill comes first (a timeOut or a cancel just after the start was decided).
    kill(dir.path(), &e).expect("kill");
    let ended = execute(dir.path(), &e, &CommandPolicy::Any).await;
    assert!(!ended.finish.succeeded(), "{ended:?}");
    assert_eq!(
        ended.finish.detail(),
        Some("killed before its command started")
    );
    assert!(!marker.exists(), "the command ran");
    // Asked again (a restart): the same outcome, nothing run.
    assert_eq!(execute(dir.path(), &e, &CommandPolicy::Any).await, ended);
    assert!(!marker.exists(), "the command ran");
}

#[tokio::test]
async fn a_command_reads_its_data_from_files_and_what_it_leaves_is_written() {
    use mobiwf_node::files::Files;
    use mobiwf_proto::{DataValue, Datum};
    use mobiwf_xml_schema::DataKind;

    let dir = tempfile::tempdir().expect("tempdir");
    let files = Files::new(dir.path());
    let mut e = execution(
        "test \"$(cat \"$MOBIWF_DATA_DIR/reading\")\" = 42 && \
         echo $(( $(cat \"$MOBIWF_DATA_DIR/reading\") + 1 )) > \"$MOBIWF_DATA_DIR/reading\" && \
         printf 'report of %s' \"$MOBIWF_PARTNER\" > \"$MOBIWF_DATA_DIR/report\"",
    );
    e.reads = vec![Datum {
        name: "reading".into(),
        value: DataValue::Number("42".into()),
        by: mobiwf_proto::Writer::Activity(ActivityId(1)),
        at_us: 5,
        pass: Default::default(),
    }];
    e.writes = vec![
        ("reading".into(), DataKind::Number),
        ("report".into(), DataKind::File),
    ];
    let ended = execute(dir.path(), &e, &CommandPolicy::Any).await;
    assert!(ended.finish.succeeded(), "{ended:?}");
    let report = files.put_bytes(b"report of P1").expect("put");
    assert_eq!(
        ended.written,
        vec![
            ("reading".to_owned(), DataValue::Number("43".into())),
            ("report".to_owned(), DataValue::File(report.clone())),
        ]
    );
    assert!(files.has(&report));
    // Asked again (a restarted node), the same run says the same.
    assert_eq!(execute(dir.path(), &e, &CommandPolicy::Any).await, ended);
}

#[tokio::test]
async fn a_compensation_runs_once_in_its_own_directory_and_says_it_is_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("log");
    let cmd = format!(
        "echo \"$MOBIWF_ACTIVITY $MOBIWF_COMPENSATION\" >> {}",
        log.display()
    );
    let work = execution(&cmd);
    assert!(
        execute(dir.path(), &work, &CommandPolicy::Any)
            .await
            .finish
            .succeeded()
    );
    let undo = Execution {
        run: mobiwf_node::executor::RunKind::Compensation,
        ..work.clone()
    };
    assert!(run_dir(dir.path(), &undo).ends_with("3-1-7.compensation"));
    assert!(
        execute(dir.path(), &undo, &CommandPolicy::Any)
            .await
            .finish
            .succeeded()
    );
    // Asked again (a restarted node): what happened, not a second run.
    assert!(
        execute(dir.path(), &undo, &CommandPolicy::Any)
            .await
            .finish
            .succeeded()
    );
    // A rerun's try counts on from the earlier ones: a directory of its own too.
    let again = Execution { attempt: 1, ..work };
    assert!(run_dir(dir.path(), &again).ends_with("3-1-7.1"));
    assert!(
        execute(dir.path(), &again, &CommandPolicy::Any)
            .await
            .finish
            .succeeded()
    );
    assert_eq!(
        std::fs::read_to_string(&log).expect("log"),
        "7 0\n7 1\n7 0\n"
    );
}

#[tokio::test]
async fn a_refused_command_never_starts_and_fails_with_the_reason() {
    let dir = tempfile::tempdir().expect("tempdir");
    let marker = dir.path().join("ran");
    let e = execution(&format!("touch {}", marker.display()));
    let ended = execute(dir.path(), &e, &CommandPolicy::None).await;
    assert!(!ended.finish.succeeded());
    let detail = ended.finish.into_detail().unwrap_or_default();
    assert!(detail.contains("--commands none"), "{detail}");
    assert!(!marker.exists(), "the refused command ran");
    assert!(!run_dir(dir.path(), &e).join("claim").exists());
}

#[tokio::test]
async fn a_command_started_before_a_restart_is_followed_whatever_the_policy_is_now() {
    let dir = tempfile::tempdir().expect("tempdir");
    let e = execution("exit 0");
    assert!(
        execute(dir.path(), &e, &CommandPolicy::Any)
            .await
            .finish
            .succeeded()
    );
    // Restarted with --commands none: the run that happened is reported, not refused.
    assert!(
        execute(dir.path(), &e, &CommandPolicy::None)
            .await
            .finish
            .succeeded()
    );
}
