//! SillyTavern personas: `settings.json`'s `power_user.personas` (avatar file name → name),
//! `power_user.persona_descriptions` (avatar file name → `{description, position, depth, role,
//! lorebook, title, …}`) and `power_user.default_persona` (an avatar file name).
//!
//! Each persona becomes one Tavo persona in the order of `personas`: `name`, `description`,
//! `active` for the default persona, `sortIndex` its place. The avatar file name is kept under
//! `extra.sillyTavernAvatar` and the rest of its description object (position, depth, role,
//! lorebook, title, connections …) under `extra.sillyTavernPersona`. The avatar images live in
//! SillyTavern's `User Avatars/` folder, not in `settings.json`, so they are not imported (one
//! warning says so).

use crate::error::{FormatError, Result};
use crate::value::{Ctx, type_name};
use serde_json::{Map, Value, json};
use tavo_model::Persona;

/// Key of the persona's SillyTavern avatar file name in `Persona::extra`.
pub const AVATAR_KEY: &str = "sillyTavernAvatar";
/// Key of the rest of the persona's `persona_descriptions` object in `Persona::extra`.
pub const PERSONA_KEY: &str = "sillyTavernPersona";

/// Whether a parsed JSON value is a SillyTavern `settings.json` with personas.
pub fn looks_like_settings(v: &Value) -> bool {
    v.get("power_user")
        .and_then(|p| p.get("personas"))
        .is_some_and(Value::is_object)
}

/// The personas of a SillyTavern `settings.json`; an error when it has none.
pub fn from_st_settings(ctx: &mut Ctx, v: &Value) -> Result<Vec<Persona>> {
    let power = v
        .get("power_user")
        .and_then(Value::as_object)
        .ok_or_else(|| FormatError::at("power_user", "missing: not a SillyTavern settings.json"))?;
    let names = match power.get("personas") {
        Some(Value::Object(o)) => o,
        Some(other) => {
            return Err(FormatError::at(
                "power_user.personas",
                format!("expected an object, found {}", type_name(other)),
            ));
        }
        None => return Err(FormatError::at("power_user.personas", "missing")),
    };
    if names.is_empty() {
        return Err(FormatError::at(
            "power_user.personas",
            "the settings hold no personas",
        ));
    }
    let empty = Map::new();
    let descriptions = match power.get("persona_descriptions") {
        Some(Value::Object(o)) => o,
        None | Some(Value::Null) => &empty,
        Some(other) => {
            ctx.warn(
                "persona.descriptions",
                "power_user.persona_descriptions",
                format!(
                    "expected an object, found {}; the personas were imported without descriptions",
                    type_name(other)
                ),
            );
            &empty
        }
    };
    let default = power.get("default_persona").and_then(Value::as_str);
    let mut out = Vec::with_capacity(names.len());
    for (i, (avatar, name)) in names.iter().enumerate() {
        let path = format!("power_user.personas[{avatar:?}]");
        let name = match name.as_str().map(str::trim).filter(|s| !s.is_empty()) {
            Some(n) => n.to_owned(),
            None => {
                let stem = crate::text::file_stem(avatar);
                ctx.warn(
                    "persona.name",
                    &path,
                    format!(
                        "the persona has no name; it was named after its avatar file ({stem:?})"
                    ),
                );
                stem
            }
        };
        let dpath = format!("power_user.persona_descriptions[{avatar:?}]");
        let mut rest = match descriptions.get(avatar) {
            Some(Value::Object(o)) => o.clone(),
            None => Map::new(),
            Some(other) => {
                ctx.warn(
                    "persona.description",
                    &dpath,
                    format!("expected an object, found {}; ignored", type_name(other)),
                );
                Map::new()
            }
        };
        let description = match rest.shift_remove("description") {
            Some(Value::String(s)) => s,
            None | Some(Value::Null) => String::new(),
            Some(other) => {
                ctx.warn(
                    "persona.description",
                    &format!("{dpath}.description"),
                    format!(
                        "expected a string, found {}; kept as found",
                        type_name(&other)
                    ),
                );
                rest.insert("description".into(), other);
                String::new()
            }
        };
        let mut persona = Persona {
            name,
            description,
            active: default == Some(avatar.as_str()),
            sort_index: i as i64,
            ..Default::default()
        };
        persona.extra.insert(AVATAR_KEY.into(), json!(avatar));
        if !rest.is_empty() {
            persona
                .extra
                .insert(PERSONA_KEY.into(), Value::Object(rest));
        }
        out.push(persona);
    }
    if let Some(d) = default
        && !names.contains_key(d)
    {
        ctx.warn(
            "persona.default",
            "power_user.default_persona",
            format!(
                "the default persona {d:?} is not among the personas; none was made the default"
            ),
        );
    }
    ctx.warn(
        "persona.avatar",
        "power_user.personas",
        "persona images are files in SillyTavern's `User Avatars/` folder, not in settings.json; \
         they were not imported (the file names are kept as `sillyTavernAvatar`)",
    );
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn personas_descriptions_and_default() {
        let v = json!({"power_user": {
            "personas": {"a.png": "Ann", "b.png": "", "c.png": "Cy"},
            "persona_descriptions": {
                "a.png": {"description": "tall", "position": 0, "depth": 2, "role": 0, "lorebook": "L"},
                "c.png": {"description": "short"}
            },
            "default_persona": "c.png"
        }});
        assert!(looks_like_settings(&v));
        let mut ctx = Ctx::default();
        let p = from_st_settings(&mut ctx, &v).unwrap();
        assert_eq!(
            p.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(),
            ["Ann", "b", "Cy"]
        );
        assert_eq!(p[0].description, "tall");
        assert_eq!(p[0].extra[PERSONA_KEY]["lorebook"], "L");
        assert_eq!(p[0].extra[AVATAR_KEY], "a.png");
        assert!(!p[0].active && p[2].active);
        assert_eq!(p[2].sort_index, 2);
        let codes: Vec<&str> = ctx.warnings.iter().map(|w| w.code.as_str()).collect();
        assert_eq!(codes, ["persona.name", "persona.avatar"]);
    }

    #[test]
    fn no_personas_is_an_error_with_its_path() {
        let e = from_st_settings(
            &mut Ctx::default(),
            &json!({"power_user": {"personas": {}}}),
        )
        .unwrap_err();
        assert_eq!(e.path, "power_user.personas");
        let e = from_st_settings(&mut Ctx::default(), &json!({"power_user": {"personas": 3}}))
            .unwrap_err();
        assert!(e.message.contains("expected an object"), "{e:?}");
    }
}
