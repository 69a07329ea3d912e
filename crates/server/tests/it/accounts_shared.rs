//! The shared library of a server with accounts: an admin publishes, every user reads and
//! copies, nobody but an admin writes it, and a copy is its user's alone.

use serde_json::{Value, json};

use crate::accounts::{AccountsLab, as_user};
use crate::support::{corpus, multipart};

async fn json_of(r: reqwest::RequestBuilder) -> (u16, Value) {
    let r = r.send().await.expect("send");
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

fn names(list: &Value) -> Vec<String> {
    list.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|i| i["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn an_admin_publishes_users_read_and_copy_and_nobody_else_writes() {
    let lab = AccountsLab::start().await;
    let ann = as_user(&lab.login("ann", "password-ann").await.expect("ann"));
    let bob = as_user(&lab.login("bob", "password-bob").await.expect("bob"));

    // Nothing is shared until an admin says so: ann's own card is not in the shared list.
    let png = corpus("cards/st-default_Seraphina.png");
    let (ct, body) = multipart(&[("Seraphina.png", &png)], &[]);
    let (status, imported) = json_of(
        ann.post(lab.url("/api/import"))
            .header("content-type", ct)
            .body(body),
    )
    .await;
    assert_eq!(status, 200, "{imported}");
    let card = imported["results"][0]["characterId"]
        .as_i64()
        .expect("card id");
    let (status, list) = json_of(bob.get(lab.url("/api/shared"))).await;
    assert_eq!((status, list["items"].clone()), (200, json!([])));

    // Bob is no admin: he cannot publish his own or anyone's.
    let (status, _) = json_of(
        bob.post(lab.url("/api/admin/shared"))
            .json(&json!({"kind": "character", "id": card})),
    )
    .await;
    assert_eq!(status, 403);
    let (status, err) = json_of(
        ann.post(lab.url("/api/admin/shared"))
            .json(&json!({"kind": "chat", "id": 1})),
    )
    .await;
    assert_eq!(status, 400, "a chat is a person's: {err}");

    let (status, published) = json_of(
        ann.post(lab.url("/api/admin/shared"))
            .json(&json!({"kind": "character", "id": card})),
    )
    .await;
    assert_eq!(status, 201, "{published}");
    let shared_id = published["item"]["id"].as_i64().expect("shared id");
    assert_eq!(published["item"]["publishedBy"], "ann");

    let (status, list) = json_of(bob.get(lab.url("/api/shared"))).await;
    assert_eq!(status, 200);
    assert_eq!(
        names(&list["items"]),
        vec!["Seraphina".to_owned()],
        "{list}"
    );
    assert_eq!(list["items"][0]["kind"], "character");
    let (status, item) =
        json_of(bob.get(lab.url(&format!("/api/shared/character/{shared_id}")))).await;
    assert_eq!(status, 200, "{item}");
    assert_eq!(item["name"], "Seraphina");
    assert_eq!(item["shared"]["publishedBy"], "ann");
    let avatar = bob
        .get(lab.url(&format!("/api/shared/characters/{shared_id}/avatar")))
        .send()
        .await
        .expect("avatar");
    assert_eq!(avatar.status().as_u16(), 200);
    assert_eq!(
        avatar.headers().get("content-type").map(|v| v.as_bytes()),
        Some(&b"image/png"[..])
    );

    // Read-only for users: no route writes a shared item in place, and only an admin
    // unpublishes.
    for (method, path) in [
        ("PUT", format!("/api/shared/character/{shared_id}")),
        ("DELETE", format!("/api/shared/character/{shared_id}")),
        ("PATCH", format!("/api/shared/character/{shared_id}")),
    ] {
        let r = bob
            .request(method.parse().expect("method"), lab.url(&path))
            .json(&json!({"name": "Changed"}))
            .send()
            .await
            .expect("send");
        assert_eq!(r.status().as_u16(), 405, "{method} {path}");
    }
    let (status, _) =
        json_of(bob.delete(lab.url(&format!("/api/admin/shared/character/{shared_id}")))).await;
    assert_eq!(status, 403);

    // Without a session, nothing.
    let anonymous = reqwest::Client::new()
        .get(lab.url("/api/shared"))
        .send()
        .await
        .expect("send");
    assert_eq!(anonymous.status().as_u16(), 401);

    // Bob copies it: it is his, with its lorebook, and ann's library does not change.
    let (_, anns_before) = json_of(ann.get(lab.url("/api/library/character"))).await;
    let (status, copied) =
        json_of(bob.post(lab.url(&format!("/api/shared/character/{shared_id}/copy")))).await;
    assert_eq!(status, 201, "{copied}");
    let mine = copied["id"].as_i64().expect("copy id");
    assert_eq!(copied["from"]["id"], shared_id);
    let (status, bobs) = json_of(bob.get(lab.url(&format!("/api/library/character/{mine}")))).await;
    assert_eq!((status, bobs["name"].clone()), (200, json!("Seraphina")));
    let mut changed = bobs.clone();
    changed["name"] = json!("Bob's Seraphina");
    let (status, answer) = json_of(
        bob.put(lab.url(&format!("/api/library/character/{mine}")))
            .json(&changed),
    )
    .await;
    assert_eq!(status, 200, "bob changes his copy: {answer}");
    let (_, anns_after) = json_of(ann.get(lab.url("/api/library/character"))).await;
    assert_eq!(
        anns_before, anns_after,
        "a copy lands in bob's library only"
    );
    let (_, item) = json_of(bob.get(lab.url(&format!("/api/shared/character/{shared_id}")))).await;
    assert_eq!(item["name"], "Seraphina", "the shared card is unchanged");

    // A theme too; an official one is everyone's already.
    let (status, theme) = json_of(
        ann.post(lab.url("/api/ops/tavo_theme_create"))
            .json(&json!({"theme": {"name": "Night market"}})),
    )
    .await;
    assert_eq!(status, 200, "{theme}");
    let theme_id = theme["result"]["id"]
        .as_i64()
        .or_else(|| theme["id"].as_i64())
        .unwrap_or_else(|| panic!("theme id in {theme}"));
    let (status, _) = json_of(
        ann.post(lab.url("/api/admin/shared"))
            .json(&json!({"kind": "themes", "id": theme_id})),
    )
    .await;
    assert_eq!(status, 201);
    let (status, _) = json_of(
        ann.post(lab.url("/api/admin/shared"))
            .json(&json!({"kind": "theme", "id": 1})),
    )
    .await;
    assert_eq!(status, 400);
    let (_, list) = json_of(bob.get(lab.url("/api/shared"))).await;
    let theme_shared = list["items"][1]["id"].as_i64().expect("theme");
    let (status, _) =
        json_of(bob.post(lab.url(&format!("/api/shared/theme/{theme_shared}/copy")))).await;
    assert_eq!(status, 201);
    let (_, themes) = json_of(
        bob.post(lab.url("/api/ops/tavo_theme_all"))
            .json(&json!({})),
    )
    .await;
    assert!(themes.to_string().contains("Night market"), "{themes}");

    // Unpublished: gone from the shared library, bob's copy stays his.
    let (status, _) =
        json_of(ann.delete(lab.url(&format!("/api/admin/shared/character/{shared_id}")))).await;
    assert_eq!(status, 204);
    let (status, _) =
        json_of(bob.get(lab.url(&format!("/api/shared/character/{shared_id}")))).await;
    assert_eq!(status, 404);
    let (status, _) =
        json_of(bob.post(lab.url(&format!("/api/shared/character/{shared_id}/copy")))).await;
    assert_eq!(status, 404);
    let (status, bobs) = json_of(bob.get(lab.url(&format!("/api/library/character/{mine}")))).await;
    assert_eq!(
        (status, bobs["name"].clone()),
        (200, json!("Bob's Seraphina"))
    );
    let (_, list) = json_of(bob.get(lab.url("/api/shared"))).await;
    assert_eq!(names(&list["items"]), vec!["Night market".to_owned()]);
}
