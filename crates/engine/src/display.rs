//! The display copy of messages and card text: what the user sees, never what is stored or
//! sent (seed 002 §8.4 `display` / `sendAndDisplay`; SillyTavern's `markdownOnly` scripts run
//! from `messageFormatting` with `isMarkdown` and a depth).
//!
//! One text goes through two steps, in SillyTavern's order for a shown message:
//! 1. **Macros** (`{{user}}`, `{{char}}`, `{{getvar::x}}` …) are expanded with the chat's
//!    names and variables. Writes a macro would make (`{{setvar}}`) are dropped — showing a
//!    message must never change the chat — and random macros are seeded by the message id, so
//!    a message shows the same roll on every render. A message is not an EJS template (Tavo
//!    renders EJS in prompt fields only; `<%= … %>` in a message is shown as written); card
//!    text shown on its page is, as the model gets it.
//! 2. **The chat's `display` and `sendAndDisplay` regex rules** run with JavaScript semantics
//!    (the prompt crate's `message_views`, the same code the prompt builder's `send` copy uses)
//!    at the message's depth (0 = the newest message).
//!
//! Why here and not in the page: the rules' replacement strings carry macros and the
//! `substitution` modes expand macros into the pattern; the macro engine is Rust, and a second
//! one in JavaScript would drift. The browser app (one more door, no business logic) asks the
//! server for display copies — `GET /api/chats/{id}/view` per page and
//! `POST /api/chats/{id}/display` for a reply still streaming.

use tavo_model::{Character, CharacterId, Chat, ChatId, Message, MessageId, Persona, Role};
use tavo_prompt::macros::{MacroContext, MacroState, RenderOptions, Variables};
use tavo_prompt::regex::{self, JsRegex, RegexReport, RegexRules, RegexRun, Stage};
use tavo_store::{Store, StoreError, Tx, VarScope};

/// A message as shown.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DisplayCopy {
    /// The content as shown.
    pub content: String,
    /// The reasoning as shown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
}

/// What one chat's display copies are made from, read in one transaction.
#[derive(Debug, Clone)]
pub struct DisplayContext {
    characters: Vec<Character>,
    /// The chat's muted members (left out of `{{groupNotMuted}}`).
    muted: Vec<CharacterId>,
    persona: Option<Persona>,
    rules: RegexRules,
    display_rules: usize,
    variables: Variables,
    now: chrono::DateTime<chrono::FixedOffset>,
}

/// Reads the bindings a display copy needs (members, persona, regex groups, variables).
fn load_in(tx: &Tx<'_>, chat_id: ChatId) -> Result<DisplayContext, StoreError> {
    let chat = tx
        .get::<Chat>(chat_id)?
        .ok_or_else(|| StoreError::NotFound {
            kind: "chat",
            id: chat_id.to_string(),
        })?;
    let mut characters = Vec::new();
    for member in &chat.characters {
        if let Some(c) = tx.get::<Character>(member.id)? {
            characters.push(c);
        }
    }
    let persona = tx.chat_persona(&chat)?;
    let mut groups = Vec::new();
    for r in &chat.regexes {
        if let Some(g) = tx.get::<tavo_model::RegexGroup>(r.id)? {
            groups.push(g);
        }
    }
    let rules = RegexRules::from_groups(&groups);
    let display_rules = rules
        .rules()
        .iter()
        .filter(|r| Stage::Display.runs(r.entry.timing))
        .count();
    let variables = Variables {
        chat: tx.var_all(VarScope::Chat(chat_id.0))?,
        global: tx.var_all(VarScope::Global)?,
    };
    Ok(DisplayContext {
        characters,
        muted: chat.muted(),
        persona,
        rules,
        display_rules,
        variables,
        now: tavo_prompt::local_now(),
    })
}

impl DisplayContext {
    /// Reads chat `chat_id`'s display context; `NotFound` when the chat does not exist.
    pub fn load(store: &Store, chat_id: ChatId) -> Result<Self, StoreError> {
        store.read(|tx| load_in(tx, chat_id))
    }

    /// The same, inside a transaction the caller already holds (so a page of messages and
    /// the rules it is shown with are one snapshot).
    pub fn load_in(tx: &Tx<'_>, chat_id: ChatId) -> Result<Self, StoreError> {
        load_in(tx, chat_id)
    }

    /// A page of chat `chat_id`'s messages (see [`tavo_tools::reads::message_page`]) and the
    /// context it is shown with, read in one snapshot; `None` when the chat does not exist.
    pub fn with_page(
        store: &Store,
        chat_id: ChatId,
        before: Option<u64>,
        limit: u64,
    ) -> Result<Option<(tavo_tools::reads::MessagePage, Self)>, tavo_tools::ToolError> {
        tavo_tools::reads::message_page_with(store, chat_id, before, limit, |tx| {
            load_in(tx, chat_id)
        })
    }

    /// How many enabled `display` / `sendAndDisplay` rules the chat's regex groups hold. When
    /// none, a streamed reply only needs macro expansion at its end.
    pub fn display_rules(&self) -> usize {
        self.display_rules
    }

    fn macro_context(&self, speaker: Option<CharacterId>) -> MacroContext {
        let user = self
            .persona
            .as_ref()
            .map(|p| p.name.as_str())
            .unwrap_or("User");
        let group = self.characters.len() > 1;
        let character = speaker
            .and_then(|id| self.characters.iter().find(|c| c.id == Some(id)))
            .or_else(|| self.characters.first());
        let name = match character {
            Some(c) if group => c.display_name(),
            Some(c) => c.name.as_str(),
            None => "",
        };
        let mut ctx = MacroContext::new(user, name, self.now);
        if let Some(c) = character {
            ctx.description.clone_from(&c.description);
            ctx.personality.clone_from(&c.personality);
            ctx.char_scenario.clone_from(&c.scenario);
            ctx.char_version.clone_from(&c.character_version);
            ctx.creator_notes.clone_from(&c.creator_notes);
        }
        ctx.persona = self
            .persona
            .as_ref()
            .map(|p| p.description.clone())
            .unwrap_or_default();
        if group {
            ctx.group_members = self
                .characters
                .iter()
                .map(|c| c.display_name().to_owned())
                .collect();
            ctx.group_not_muted = self
                .characters
                .iter()
                .filter(|c| !c.id.is_some_and(|id| self.muted.contains(&id)))
                .map(|c| c.display_name().to_owned())
                .collect();
        }
        ctx
    }

    /// Expands macros in `text` as `speaker` (the chat's first member when `None`); variable
    /// writes are dropped. `seed` fixes random macros. `templates`: whether the text is an EJS
    /// template too — card text is (it is a prompt field, shown as the model gets it); a
    /// message is not (`<%= … %>` in a message is text, shown as written).
    fn expand(&self, text: &str, ctx: &MacroContext, seed: u64, templates: bool) -> String {
        if !text.contains("{{") && !text.contains('<') {
            return text.to_owned();
        }
        let options = RenderOptions {
            skip_templates: !templates,
            ..RenderOptions::default()
        };
        MacroState::new(self.variables.clone(), seed)
            .render_with(text, ctx, options)
            .text
    }

    /// Expands macros in a message's text except inside its `<script>` elements, which are left
    /// as written. A bubble's script runs later than its copy is made and reads the chat when it
    /// runs: `triggerSlash('/setvar key=n 1 | /echo {{getvar::n}}')` must see the value it has
    /// just set, which a `{{getvar::n}}` expanded at display time (to the old value) would hide.
    /// SillyTavern, whose scripts these are, expands no macros in a shown message at all past the
    /// greeting.
    fn expand_outside_scripts(&self, text: &str, ctx: &MacroContext, seed: u64) -> String {
        let spans = script_spans(text);
        if spans.is_empty() {
            return self.expand(text, ctx, seed, false);
        }
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for (start, end) in spans {
            out.push_str(&self.expand(&text[at..start], ctx, seed, false));
            out.push_str(&text[start..end]);
            at = end;
        }
        out.push_str(&self.expand(&text[at..], ctx, seed, false));
        out
    }

    /// Expands macros in `text` as the chat's first member (variable writes dropped, no EJS):
    /// a text written into the chat for its character, such as the image injection template.
    pub fn expand_macros(&self, text: &str, seed: u64) -> String {
        let ctx = self.macro_context(None);
        self.expand(text, &ctx, seed, false)
    }

    /// Renders a prompt template written for this chat outside its preset — the translation
    /// prompt, the group speaker-selection prompt: EJS first (when `ejs` is on, the
    /// `ejs.enabled` switch), then `{{…}}` macros, as the chat's first member. Variable writes
    /// are dropped (these requests are not the chat's generation). Placeholders the caller
    /// fills afterwards (`{{content}}`, `{{messages}}`) are not macros and stay as written.
    pub fn expand_template(&self, text: &str, seed: u64, ejs: bool) -> String {
        let ctx = self.macro_context(None);
        self.expand(text, &ctx, seed, ejs)
    }

    /// The display copy of `message` at `depth` (0 = the newest message of the chat). A rule
    /// that fails is skipped (the text is shown without it), as the prompt builder does.
    pub fn message(&self, message: &Message, depth: i64) -> DisplayCopy {
        let speaker = match message.role {
            Role::Assistant => message.character_id,
            _ => None,
        };
        let ctx = self.macro_context(speaker);
        let seed = message.id.map(|MessageId(id)| id as u64).unwrap_or(0);
        let mut shown = message.clone();
        shown.content = self.expand_outside_scripts(&message.content, &ctx, seed);
        shown.reasoning = message
            .reasoning
            .as_deref()
            .map(|r| self.expand(r, &ctx, seed, false));
        if self.display_rules > 0
            && let Ok(js) = JsRegex::shared()
        {
            let run = RegexRun {
                rules: &self.rules,
                js,
                ctx: &ctx,
            };
            let mut state = MacroState::new(self.variables.clone(), seed);
            let mut report = RegexReport::default();
            let views = regex::message_views(&run, &shown, depth, &mut state, &mut report);
            return DisplayCopy {
                content: views.display_content,
                reasoning: views.display_reasoning,
            };
        }
        DisplayCopy {
            content: shown.content,
            reasoning: shown.reasoning,
        }
    }
}

/// The byte ranges of `text`'s `<script …>…</script>` elements, tags included, in order; an
/// element left open runs to the end of the text (as an HTML parser reads it).
fn script_spans(text: &str) -> Vec<(usize, usize)> {
    const OPEN: &[u8] = b"<script";
    const CLOSE: &[u8] = b"</script";
    let bytes = text.as_bytes();
    let find = |needle: &[u8], from: usize| -> Option<usize> {
        bytes
            .get(from..)?
            .windows(needle.len())
            .position(|w| w.eq_ignore_ascii_case(needle))
            .map(|i| i + from)
    };
    let mut spans = Vec::new();
    let mut from = 0;
    while let Some(start) = find(OPEN, from) {
        // `<scripts>` or `<script-x>` is another element.
        let after = bytes.get(start + OPEN.len()).copied();
        if !matches!(
            after,
            Some(b'>' | b' ' | b'\t' | b'\n' | b'\r' | b'/') | None
        ) {
            from = start + OPEN.len();
            continue;
        }
        let end = match find(CLOSE, start + OPEN.len()) {
            Some(close) => bytes[close..]
                .iter()
                .position(|&b| b == b'>')
                .map_or(bytes.len(), |i| close + i + 1),
            None => bytes.len(),
        };
        spans.push((start, end));
        from = end;
    }
    spans
}

/// A character's card text as shown on its page: macros expanded with the character as
/// `{{char}}` and the default persona as `{{user}}` (Tavo's greeting picker shows greetings
/// so); no regex rules (they belong to chats).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CardDisplay {
    /// Description.
    pub description: String,
    /// Personality.
    pub personality: String,
    /// Scenario.
    pub scenario: String,
    /// First message.
    pub first_mes: String,
    /// Alternate greetings.
    pub alternate_greetings: Vec<String>,
    /// Creator's notes.
    pub creator_notes: String,
}

/// The display copy of character `id`'s card text; `NotFound` when it does not exist.
pub fn card_display(store: &Store, id: CharacterId) -> Result<CardDisplay, StoreError> {
    let (character, persona) = store.read(|tx| {
        let c = tx
            .get::<Character>(id)?
            .ok_or_else(|| StoreError::NotFound {
                kind: "character",
                id: id.to_string(),
            })?;
        let persona = tx.default_persona()?;
        Ok((c, persona))
    })?;
    let context = DisplayContext {
        characters: vec![character.clone()],
        muted: Vec::new(),
        persona,
        rules: RegexRules::default(),
        display_rules: 0,
        variables: Variables::default(),
        now: tavo_prompt::local_now(),
    };
    let ctx = context.macro_context(None);
    let show = |t: &str| context.expand(t, &ctx, 0, true);
    Ok(CardDisplay {
        description: show(&character.description),
        personality: show(&character.personality),
        scenario: show(&character.scenario),
        first_mes: show(&character.first_mes),
        alternate_greetings: character
            .alternate_greetings
            .iter()
            .map(|g| show(g))
            .collect(),
        creator_notes: show(&character.creator_notes),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tavo_model::{RegexEntry, RegexGroup, RegexPlacement, RegexTiming, Summary};

    fn store_with(rule_timing: RegexTiming) -> (tempfile::TempDir, Store, ChatId) {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(dir.path()).expect("store");
        let chat = store
            .write(|tx| {
                let c = tx.create(&Character {
                    name: "Seraphina".into(),
                    first_mes: "Hello {{user}}".into(),
                    ..Character::default()
                })?;
                tx.create(&Persona {
                    name: "Ann".into(),
                    active: true,
                    ..Persona::default()
                })?;
                let g = tx.create(&RegexGroup {
                    name: "hide status".into(),
                    entries: vec![RegexEntry {
                        name: "status".into(),
                        identifier: "s1".into(),
                        find_regex: r"/<status>[\s\S]*?<\/status>/g".into(),
                        replace_string: "[{{char}}'s status]".into(),
                        placements: vec![RegexPlacement::Char],
                        timing: rule_timing,
                        enabled: true,
                        ..RegexEntry::default()
                    }],
                    ..RegexGroup::default()
                })?;
                let mut chat = Chat {
                    name: "t".into(),
                    ..Chat::default()
                };
                chat.characters = vec![tavo_model::character::CharacterSummary {
                    id: c,
                    name: "Seraphina".into(),
                    avatar: None,
                }];
                chat.regexes = vec![Summary {
                    id: g,
                    name: "hide status".into(),
                }];
                tx.chat_create(&chat)
            })
            .expect("seed");
        (dir, store, chat)
    }

    fn reply(text: &str) -> Message {
        let mut m = Message::new(Role::Assistant, text);
        m.id = Some(MessageId(7));
        m
    }

    #[test]
    fn display_rules_and_macros_change_the_shown_copy_only() {
        let (_dir, store, chat) = store_with(RegexTiming::Display);
        let ctx = DisplayContext::load(&store, chat).expect("load");
        assert_eq!(ctx.display_rules(), 1);
        let m = reply("Hi {{user}}. <status>hp 3</status> Bye.");
        let shown = ctx.message(&m, 0);
        assert_eq!(shown.content, "Hi Ann. [Seraphina's status] Bye.");
        assert_eq!(m.content, "Hi {{user}}. <status>hp 3</status> Bye.");
    }

    #[test]
    fn macros_inside_scripts_are_left_for_the_script_to_read_when_it_runs() {
        let (_dir, store, chat) = store_with(RegexTiming::Send);
        let ctx = DisplayContext::load(&store, chat).expect("load");
        let text = "<p>{{user}}</p><SCRIPT type=\"module\">triggerSlash('/echo {{getvar::n}} {{user}}')</script >{{user}}<scripts>{{user}}</scripts><script>{{user}}";
        let shown = ctx.message(&reply(text), 0);
        assert_eq!(
            shown.content,
            "<p>Ann</p><SCRIPT type=\"module\">triggerSlash('/echo {{getvar::n}} {{user}}')</script >Ann<scripts>Ann</scripts><script>{{user}}"
        );
        assert_eq!(script_spans("no scripts {{user}}"), vec![]);
    }

    #[test]
    fn a_message_is_not_a_template_but_card_text_is() {
        let (_dir, store, chat) = store_with(RegexTiming::Display);
        let ctx = DisplayContext::load(&store, chat).expect("load");
        let shown = ctx.message(&reply("EJS looks like <%= 1 + 1 %>, {{user}}."), 0);
        assert_eq!(shown.content, "EJS looks like <%= 1 + 1 %>, Ann.");
        let id = store
            .write(|tx| {
                tx.create(&Character {
                    name: "Tpl".into(),
                    description: "<%= 40 + 2 %> for {{user}}".into(),
                    ..Character::default()
                })
            })
            .expect("card");
        let card = card_display(&store, id).expect("display");
        assert_eq!(card.description, "42 for Ann");
    }

    #[test]
    fn send_only_and_stored_rules_are_not_display_rules() {
        for timing in [
            RegexTiming::Send,
            RegexTiming::Receive,
            RegexTiming::EditAndReceive,
        ] {
            let (_dir, store, chat) = store_with(timing);
            let ctx = DisplayContext::load(&store, chat).expect("load");
            assert_eq!(ctx.display_rules(), 0, "{timing:?}");
            let shown = ctx.message(&reply("<status>x</status>"), 0);
            assert_eq!(shown.content, "<status>x</status>", "{timing:?}");
        }
    }

    #[test]
    fn setvar_in_a_shown_message_writes_nothing() {
        let (_dir, store, chat) = store_with(RegexTiming::Display);
        let ctx = DisplayContext::load(&store, chat).expect("load");
        let shown = ctx.message(&reply("a{{setvar::gold::5}}b {{getvar::gold}}"), 0);
        assert!(shown.content.starts_with("ab"), "{}", shown.content);
        let again = DisplayContext::load(&store, chat).expect("load");
        assert!(again.variables.chat.is_empty());
    }

    #[test]
    fn a_missing_chat_is_not_found() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(dir.path()).expect("store");
        assert!(matches!(
            DisplayContext::load(&store, ChatId(9)),
            Err(StoreError::NotFound { kind: "chat", .. })
        ));
    }
}
