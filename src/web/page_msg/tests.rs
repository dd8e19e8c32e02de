use super::*;

#[test]
fn page_messages_become_wire_messages() {
    let open = parse(r#"{"type":"open","session":"1","cols":80,"rows":24,"watch":true}"#).unwrap();
    let Ask::Wire(Up::Open {
        target, watch, cols, ..
    }) = to_wire(open, "/h").unwrap()
    else {
        panic!("not an open");
    };
    assert_eq!(
        target,
        Target::Attach {
            name: Some("1".into())
        }
    );
    assert!(watch);
    assert_eq!(cols, 80);
    assert_eq!(
        to_wire(parse(r#"{"type":"input","data":"hi\r"}"#).unwrap(), "/h"),
        Ok(Ask::Wire(Up::Input(b"hi\r".to_vec())))
    );
    assert_eq!(
        to_wire(parse(r#"{"type":"allow","session":"2"}"#).unwrap(), "/h"),
        Ok(Ask::Wire(Up::Guard {
            session: "2".into(),
            answer: GuardAnswer::Allow { usd: None }
        }))
    );
    assert_eq!(
        to_wire(parse(r#"{"type":"leave","session":"2"}"#).unwrap(), "/h"),
        Ok(Ask::Wire(Up::Guard {
            session: "2".into(),
            answer: GuardAnswer::Leave
        }))
    );
    assert_eq!(
        to_wire(parse(r#"{"type":"handoff","focus":"tests"}"#).unwrap(), "/h"),
        Ok(Ask::Wire(Up::Command(SessionCommand::Handoff {
            focus: Some("tests".into())
        })))
    );
    let ask = to_wire(
        parse(r#"{"type":"new","dir":"~/src","name":"api","worktree":"feat/x","cols":80,"rows":24}"#)
            .unwrap(),
        "/h",
    );
    assert_eq!(
        ask,
        Ok(Ask::New {
            plan: Plan {
                dir: "/h/src".into(),
                name: Some("api".into()),
                worktree: Some("feat/x".into()),
            },
            cols: 80,
            rows: 24
        })
    );
    let bad = parse(r#"{"type":"new","dir":"/x","name":"a\u0007","cols":80,"rows":24}"#).unwrap();
    assert!(to_wire(bad, "/h").unwrap_err().contains("control characters"));
}

#[test]
fn a_hop_to_another_machine_is_a_detach_that_names_it() {
    let down = Down::Hop {
        dest: "gpu".into(),
        name: "train".into(),
    };
    assert!(matches!(
        from_wire(down),
        Some(ToPage::Detached { reason }) if reason.contains("gpu") && reason.contains("train")
    ));
}

#[test]
fn garbage_and_silly_sizes_get_a_clear_error() {
    assert!(parse("{").unwrap_err().contains("did not understand"));
    assert!(parse(r#"{"type":"rm"}"#).is_err());
    assert!(
        parse(r#"{"type":"supervision","on":true,"force":true}"#).is_err(),
        "an unknown field"
    );
    assert!(parse(r#"{"type":"open","session":"1"}"#).is_err(), "no size");
    let huge = parse(r#"{"type":"resize","cols":0,"rows":24}"#).unwrap();
    assert!(to_wire(huge, "/h").unwrap_err().contains("out of range"));
}
