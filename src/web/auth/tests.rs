use super::*;
use axum::http::HeaderValue;

#[test]
fn a_login_token_works_once() {
    let mut a = Auth::default();
    let now = Instant::now();
    a.add_login("tok".into(), now);
    let id = a.log_in("tok", "c1".into(), now).expect("a good token");
    assert_eq!(a.log_in("tok", "c2".into(), now), Err(Refused::BadToken), "used");
    assert_eq!(a.check("c1", now), Some(id));
    assert_eq!(a.check("c2", now), None);
    assert_eq!(a.check("c", now), None, "a prefix is not the credential");
}

#[test]
fn wrong_and_old_tokens_are_refused() {
    let mut a = Auth::default();
    let now = Instant::now();
    a.add_login("tok".into(), now);
    assert_eq!(a.log_in("tom", "c".into(), now), Err(Refused::BadToken));
    assert_eq!(a.log_in("", "c".into(), now), Err(Refused::BadToken));
    assert_eq!(
        a.log_in("tok", "c".into(), now + LOGIN_TTL),
        Err(Refused::BadToken),
        "too old"
    );
}

#[test]
fn logging_out_ends_one_login_and_all_ends_every_login_and_token() {
    let mut a = Auth::default();
    let now = Instant::now();
    for t in ["t1", "t2", "t3"] {
        a.add_login(t.into(), now);
    }
    let one = a.log_in("t1", "c1".into(), now).unwrap();
    let two = a.log_in("t2", "c2".into(), now).unwrap();
    a.log_out(one);
    assert_eq!(a.check("c1", now), None);
    assert!(!a.holds(one, now));
    assert!(a.holds(two, now));
    assert_eq!(a.log_out_all(), 1);
    assert!(!a.holds(two, now));
    assert_eq!(
        a.log_in("t3", "c3".into(), now),
        Err(Refused::BadToken),
        "a token printed before is ended too"
    );
}

#[test]
fn a_login_lasts_while_used() {
    let mut a = Auth::default();
    let now = Instant::now();
    a.add_login("t".into(), now);
    let id = a.log_in("t", "c".into(), now).unwrap();
    let later = now + SESSION_TTL - Duration::from_secs(1);
    assert!(a.holds(id, later), "an open socket counts as use");
    assert_eq!(
        a.check("c", later + SESSION_TTL - Duration::from_secs(1)),
        Some(id)
    );
    assert_eq!(a.check("c", later + SESSION_TTL * 3), None, "unused for too long");
}

#[test]
fn the_credential_comes_from_the_bearer_or_the_subprotocol_never_a_cookie() {
    let mut h = HeaderMap::new();
    h.insert(header::COOKIE, HeaderValue::from_static("pokeshell_session=abc"));
    assert_eq!(credential(&h), None);
    h.insert(header::AUTHORIZATION, HeaderValue::from_static("Bearer abc"));
    assert_eq!(credential(&h), Some("abc"));
    let mut ws = HeaderMap::new();
    ws.insert(
        header::SEC_WEBSOCKET_PROTOCOL,
        HeaderValue::from_static("pokeshell, pokeshell.login.def"),
    );
    assert_eq!(credential(&ws), Some("def"));
    ws.insert(
        header::SEC_WEBSOCKET_PROTOCOL,
        HeaderValue::from_static("pokeshell"),
    );
    assert_eq!(credential(&ws), None);
}

#[test]
fn the_shared_logins_tell_sockets_that_a_login_ended() {
    let logins = Logins::default();
    logins.add_login("tok".into());
    let credential = logins.log_in("tok").expect("a good token");
    assert_eq!(credential.len(), 64);
    let mut h = HeaderMap::new();
    h.insert(
        header::AUTHORIZATION,
        HeaderValue::from_str(&format!("Bearer {credential}")).unwrap(),
    );
    let id = logged_in(&logins, &h, None).expect("the credential logs in");
    let ended = logins.watch_ended();
    assert!(!ended.has_changed().unwrap());
    logins.log_out_all();
    assert!(ended.has_changed().unwrap(), "the sockets hear it");
    assert!(!logins.holds(id));
    assert_eq!(logged_in(&logins, &h, None), None);
}

#[test]
fn random_tokens_differ() {
    let (a, b) = (random_token().unwrap(), random_token().unwrap());
    assert_eq!(a.len(), 64);
    assert_ne!(a, b);
}

#[test]
fn a_logout_gives_back_the_push_subscriptions_of_that_login_only() {
    let mut a = Auth::default();
    let now = Instant::now();
    a.add_login("t1".into(), now);
    a.add_login("t2".into(), now);
    let one = a.log_in("t1", "c1".into(), now).unwrap();
    let two = a.log_in("t2", "c2".into(), now).unwrap();
    a.note_push(one, "https://push.example/a");
    a.note_push(one, "https://push.example/a");
    a.note_push(two, "https://push.example/b");
    assert_eq!(a.log_out(one), vec!["https://push.example/a".to_string()]);
    assert_eq!(a.log_out(one), Vec::<String>::new(), "once");
    assert_eq!(a.log_out(two), vec!["https://push.example/b".to_string()]);
}
