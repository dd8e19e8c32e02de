use std::os::unix::fs::PermissionsExt;

use super::*;

/// A subscription as a browser would make one: its own P-256 key and a 16-byte secret.
fn browser_subscription(endpoint: &str) -> Subscription {
    let secret = web_push_native::p256::SecretKey::random(
        &mut web_push_native::p256::elliptic_curve::rand_core::OsRng,
    );
    let point = web_push_native::p256::elliptic_curve::sec1::ToEncodedPoint::to_encoded_point(
        &secret.public_key(),
        false,
    );
    Subscription {
        endpoint: endpoint.into(),
        p256dh: URL_SAFE_NO_PAD.encode(point.as_bytes()),
        auth: URL_SAFE_NO_PAD.encode([7u8; 16]),
        origin: "https://box.tailnet.ts.net".into(),
    }
}

fn mode(path: &std::path::Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn the_vapid_key_is_made_once_and_kept_private() {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::at(tmp.path().join("state/push"));
    let first = store.public_key().unwrap();
    assert_eq!(
        URL_SAFE_NO_PAD.decode(&first).unwrap().len(),
        65,
        "an uncompressed P-256 point"
    );
    assert_eq!(store.public_key().unwrap(), first, "the same key the next time");
    assert_eq!(mode(&tmp.path().join("state/push")), 0o700);
    assert_eq!(mode(&tmp.path().join("state/push/vapid.json")), 0o600);
}

#[test]
fn subscriptions_are_kept_replaced_bounded_and_removed() {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::at(tmp.path().join("push"));
    let a = browser_subscription("https://push.example/a");
    store.add(a.clone()).unwrap();
    assert_eq!(mode(&tmp.path().join("push/subscriptions.json")), 0o600);
    let mut again = browser_subscription("https://push.example/a");
    again.origin = "https://other".into();
    store.add(again.clone()).unwrap();
    assert_eq!(
        store.subscriptions().unwrap(),
        vec![again],
        "one per endpoint, the newest"
    );
    for i in 0..MAX_SUBSCRIPTIONS {
        store
            .add(browser_subscription(&format!("https://push.example/{i}")))
            .unwrap();
    }
    let kept = store.subscriptions().unwrap();
    assert_eq!(kept.len(), MAX_SUBSCRIPTIONS);
    assert!(
        !kept.iter().any(|s| s.endpoint.ends_with("/a")),
        "the oldest went"
    );
    assert!(store.remove("https://push.example/0").unwrap());
    assert!(!store.remove("https://push.example/0").unwrap(), "gone already");
    assert_eq!(store.subscriptions().unwrap().len(), MAX_SUBSCRIPTIONS - 1);
}

#[test]
fn bad_subscriptions_are_refused_with_the_reason() {
    let good = browser_subscription("https://push.example/x");
    assert_eq!(check(&good), Ok(()));
    assert!(
        check(&browser_subscription("http://127.0.0.1:9/x")).is_ok(),
        "loopback may be http"
    );
    assert!(check(&browser_subscription("http://[::1]:9/x")).is_ok());
    assert!(
        check(&browser_subscription("http://push.example/x"))
            .unwrap_err()
            .contains("https")
    );
    assert!(check(&browser_subscription("ftp://push.example/x")).is_err());
    assert!(
        check(&browser_subscription(&format!(
            "https://push.example/{}",
            "x".repeat(3000)
        )))
        .is_err()
    );
    let mut bad = good.clone();
    bad.auth = URL_SAFE_NO_PAD.encode([1u8; 15]);
    assert!(check(&bad).unwrap_err().contains("16 bytes"));
    let mut bad = good.clone();
    bad.p256dh = URL_SAFE_NO_PAD.encode([4u8; 65]);
    assert!(check(&bad).unwrap_err().contains("P-256"));
    let mut bad = good;
    bad.p256dh = "not base64!".into();
    assert!(check(&bad).is_err());
}

/// Second red-team pass (issue 34): a logged-in page could hand over an endpoint on a private
/// network or the cloud's metadata address, and an origin of 60,000 characters that every push then
/// read and sent in its signature.
#[test]
fn endpoints_inside_private_networks_and_oversized_origins_are_refused() {
    for endpoint in [
        "https://169.254.169.254/latest/meta-data",
        "https://10.1.2.3:8443/p",
        "https://192.168.1.1/",
        "https://172.16.0.9/",
        "https://100.64.0.1/",
        "https://0.0.0.0/",
        "https://[fe80::1]/",
        "https://[fd00::1]/",
        "https://[::ffff:10.0.0.1]/",
        "https://[::]/",
        "http://169.254.169.254/",
        "http://[::ffff:10.0.0.1]:9000/push",
        "http://push.example/a",
        "https://user:pw@push.example/a",
    ] {
        assert!(
            check(&browser_subscription(endpoint)).is_err(),
            "{endpoint} was taken"
        );
    }
    for endpoint in [
        "https://push.example/a",
        "https://fcm.googleapis.com/fcm/send/x",
        "https://203.0.113.9/p",
        "http://127.0.0.1:9000/push",
        "https://[::1]/push",
        "http://localhost:9000/push",
        "http://[::1]:9000/push",
        "http://[::ffff:127.0.0.1]:9000/push",
    ] {
        assert_eq!(check(&browser_subscription(endpoint)), Ok(()), "{endpoint}");
    }
    let mut long = browser_subscription("https://push.example/a");
    long.origin = format!("https://{}", "a".repeat(60_000));
    assert!(check(&long).is_err(), "an origin of 60,000 characters");
    for origin in ["javascript:alert(1)", "https://a b", "https://x\n"] {
        let mut odd = browser_subscription("https://push.example/a");
        odd.origin = origin.into();
        assert!(check(&odd).is_err(), "{origin:?}");
    }
    let mut none = browser_subscription("https://push.example/a");
    none.origin = String::new();
    assert_eq!(check(&none), Ok(()), "an older page sends no origin");
}

/// "Log out everywhere" forgets every device's subscription (a lost phone's too).
#[test]
fn every_subscription_can_be_forgotten_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::at(tmp.path().join("push"));
    assert_eq!(store.remove_all(), Ok(0), "no file yet");
    store.add(browser_subscription("https://push.example/a")).unwrap();
    store.add(browser_subscription("https://push.example/b")).unwrap();
    assert_eq!(store.remove_all(), Ok(2));
    assert_eq!(store.subscriptions().unwrap(), vec![]);
    assert_eq!(mode(&tmp.path().join("push/subscriptions.json")), 0o600);
}
