//! `/api/plugins`: install (dry run, refusal, reinstall), list with search and locale, the full
//! view, files, enable/disable, settings and uninstall — the operations `tavo plugin` runs.

use std::collections::BTreeMap;

use crate::support::{TestServer, client, send};
use serde_json::json;

fn package(version: &str, entry: &str) -> Vec<u8> {
    let manifest = json!({
        "id": "org.test.hello", "name": {"$t": "name"}, "version": version, "specVersion": 2,
        "entry": entry, "author": "Ann", "cover": "cover.png",
        "localization": {"defaultLocale": "en", "resources": {"en": "locales/en.json", "zh-CN": "locales/zh.json"}},
        "contributes": {
            "inputActions": [{"id": "greet", "label": {"$t": "greet"}}],
            "htmlFragments": [{"id": "bar", "src": "ui/bar.html", "mount": "/messages?role=character"}],
            "settings": {"schema": [{"type": "switch", "key": "loud", "label": "Loud", "default": false}]}
        }
    });
    let files = BTreeMap::from([
        (
            "manifest.json".to_owned(),
            serde_json::to_vec(&manifest).expect("json"),
        ),
        (
            "entry.js".to_owned(),
            b"tavo.plugin.onInputAction('greet', () => {});".to_vec(),
        ),
        ("ui/bar.html".to_owned(), b"<b>bar</b>".to_vec()),
        ("cover.png".to_owned(), b"\x89PNG\r\n\x1a\n".to_vec()),
        (
            "locales/en.json".to_owned(),
            br#"{"name": "Hello", "greet": "Greet"}"#.to_vec(),
        ),
        (
            "locales/zh.json".to_owned(),
            "{\"name\": \"你好\", \"greet\": \"问候\"}"
                .as_bytes()
                .to_vec(),
        ),
    ]);
    tavo_formats::plugin::write_package(&files).expect("zip")
}

#[tokio::test]
async fn install_list_view_configure_and_uninstall() {
    let s = TestServer::start().await;
    let c = client();
    let post = |q: &str, body: Vec<u8>| {
        c.post(s.url(&format!("/api/plugins{q}")))
            .header("content-type", "application/zip")
            .header("x-filename", "h%C3%A9llo.tpg")
            .body(body)
    };
    let (st, dry) = send(post("?dryRun=true", package("1.0.0", "entry.js"))).await;
    assert_eq!(st, 200, "{dry}");
    assert_eq!(
        (dry["installed"].clone(), dry["plugin"]["name"].clone()),
        (json!(false), json!("Hello"))
    );
    let (_, none) = send(c.get(s.url("/api/plugins"))).await;
    assert_eq!(none, json!([]));

    let (st, bad) = send(post("", package("01.0", "entry.js"))).await;
    assert_eq!(st, 422, "{bad}");
    assert_eq!(bad["error"]["code"], "invalid_plugin");
    assert!(
        bad["error"]["message"]
            .as_str()
            .unwrap_or("")
            .starts_with("héllo.tpg: manifest.json: version: "),
        "{bad}"
    );
    assert_eq!(bad["error"]["details"]["field"], "version");
    let (st, bad) = send(post("", package("1.0.0", "missing.js"))).await;
    assert_eq!(
        (st, bad["error"]["details"]["field"].clone()),
        (422, json!("entry"))
    );

    let (st, done) = send(post("?locale=zh-CN", package("1.0.0", "entry.js"))).await;
    assert_eq!(st, 201, "{done}");
    assert_eq!(done["plugin"]["name"], "你好");
    let (_, list) = send(
        c.get(s.url("/api/plugins?q=ann"))
            .header("accept-language", "zh-CN,zh;q=0.9"),
    )
    .await;
    assert_eq!(list[0]["name"], "你好", "{list}");
    assert_eq!(
        list[0]["tags"],
        json!(["inputActions", "htmlFragments", "settings", "hooks"])
    );
    let (_, list) = send(c.get(s.url("/api/plugins?q=nobody"))).await;
    assert_eq!(list, json!([]));

    let (st, d) = send(c.get(s.url("/api/plugins/org.test.hello"))).await;
    assert_eq!(st, 200, "{d}");
    assert_eq!(d["contributes"]["inputActions"][0]["label"], "Greet");
    assert_eq!(
        d["contributes"]["htmlFragments"][0]["point"],
        "/messages/end"
    );
    assert_eq!(d["contributes"]["htmlFragments"][0]["role"], "character");
    assert_eq!(d["config"], json!({"loud": false}));
    assert_eq!(d["i18n"]["supportedLocales"], json!(["en", "zh-CN"]));

    let r = c
        .get(s.url("/api/plugins/org.test.hello/files/ui/bar.html"))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-security-policy"], "sandbox");
    assert_eq!(r.text().await.expect("text"), "<b>bar</b>");
    let (st, _) = send(c.get(s.url("/api/plugins/org.test.hello/files/nope.js"))).await;
    assert_eq!(st, 404);

    let (st, e) = send(
        c.put(s.url("/api/plugins/org.test.hello/config"))
            .json(&json!({"key": "loud", "value": "yes"})),
    )
    .await;
    assert_eq!(st, 400, "{e}");
    let (st, cfg) = send(
        c.put(s.url("/api/plugins/org.test.hello/config"))
            .json(&json!({"key": "loud", "value": true})),
    )
    .await;
    assert_eq!((st, cfg["config"]["loud"].clone()), (200, json!(true)));

    let (st, p) = send(
        c.put(s.url("/api/plugins/org.test.hello/enabled"))
            .json(&json!({"enabled": false})),
    )
    .await;
    assert_eq!((st, p["enabled"].clone()), (200, json!(false)));
    let (_, rt) = send(c.get(s.url("/api/plugins/runtime"))).await;
    assert_eq!(rt, json!([]));
    // A reinstall replaces the files and keeps settings and state.
    let (st, again) = send(post("", package("1.1.0", "entry.js"))).await;
    assert_eq!(
        (
            st,
            again["replaces"]["version"].clone(),
            again["plugin"]["enabled"].clone()
        ),
        (201, json!("1.0.0"), json!(false))
    );
    let (_, cfg) = send(c.get(s.url("/api/plugins/org.test.hello/config"))).await;
    assert_eq!(cfg["overrides"], json!({"loud": true}));
    let (_, cfg) = send(c.delete(s.url("/api/plugins/org.test.hello/config"))).await;
    assert_eq!(cfg, json!({"config": {"loud": false}, "overrides": {}}));
    send(
        c.put(s.url("/api/plugins/org.test.hello/enabled"))
            .json(&json!({"enabled": true})),
    )
    .await;
    let (_, rt) = send(c.get(s.url("/api/plugins/runtime"))).await;
    assert_eq!(rt[0]["entry"], "entry.js");

    let r = c
        .delete(s.url("/api/plugins/org.test.hello"))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 204);
    let (st, _) = send(c.get(s.url("/api/plugins/org.test.hello"))).await;
    assert_eq!(st, 404);
}
