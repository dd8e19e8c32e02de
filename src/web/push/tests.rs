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
