//! Dialogue examples: the card's `mes_example` split on `<START>` into blocks, each block
//! opened by `basicPrompts.exampleMessageStart` and turned into messages with
//! SillyTavern's names `example_user` / `example_assistant` (role `system`).

use tavo_model::Role;

use super::message::PromptMessage;

/// Splits rendered example text into blocks of messages. `user` and `char` are the names
/// the lines start with (`Alex: hi`).
pub fn example_blocks(
    rendered: &str,
    user: &str,
    char: &str,
    start_marker: &str,
) -> Vec<Vec<PromptMessage>> {
    split_start(rendered)
        .into_iter()
        .filter_map(|block| {
            let block = block.trim();
            if block.is_empty() {
                return None;
            }
            let mut messages = Vec::new();
            if !start_marker.trim().is_empty() {
                messages.push(PromptMessage::new(Role::System, start_marker));
            }
            let user_prefix = format!("{user}:");
            let char_prefix = format!("{char}:");
            let mut current: Option<PromptMessage> = None;
            for line in block.lines() {
                let speaker = if !user.is_empty() && line.starts_with(&user_prefix) {
                    Some(("example_user", &line[user_prefix.len()..]))
                } else if !char.is_empty() && line.starts_with(&char_prefix) {
                    Some(("example_assistant", &line[char_prefix.len()..]))
                } else {
                    None
                };
                match speaker {
                    Some((name, text)) => {
                        messages.extend(current.take());
                        current = Some(PromptMessage {
                            role: Role::System,
                            content: text.trim().to_owned(),
                            name: Some(name.to_owned()),
                            sources: Vec::new(),
                            origin: None,
                        });
                    }
                    None => match &mut current {
                        Some(message) => {
                            message.content.push('\n');
                            message.content.push_str(line);
                        }
                        None => current = Some(PromptMessage::new(Role::System, line)),
                    },
                }
            }
            messages.extend(current);
            for m in &mut messages {
                let trimmed = m.content.trim_end();
                m.content.truncate(trimmed.len());
            }
            Some(messages)
        })
        .collect()
}

fn split_start(text: &str) -> Vec<&str> {
    let lower = text.to_ascii_lowercase();
    let mut blocks = Vec::new();
    let mut start = 0;
    for (pos, _) in lower.match_indices("<start>") {
        blocks.push(&text[start..pos]);
        start = pos + "<start>".len();
    }
    blocks.push(&text[start..]);
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_and_speakers() {
        let text = "<START>\nAlex: hi\nSera: hello\nand more\n<start>\nSera: second\n\n<START>\n";
        let blocks = example_blocks(text, "Alex", "Sera", "[Example Chat]");
        assert_eq!(blocks.len(), 2);
        assert_eq!(blocks[0].len(), 3);
        assert_eq!(blocks[0][0].content, "[Example Chat]");
        assert_eq!(blocks[0][1].name.as_deref(), Some("example_user"));
        assert_eq!(blocks[0][1].content, "hi");
        assert_eq!(blocks[0][2].name.as_deref(), Some("example_assistant"));
        assert_eq!(blocks[0][2].content, "hello\nand more");
        assert_eq!(blocks[1][1].content, "second");
    }

    #[test]
    fn text_without_speakers_is_one_system_message() {
        let blocks = example_blocks("Just prose.", "Alex", "Sera", "");
        assert_eq!(
            blocks,
            vec![vec![PromptMessage::new(Role::System, "Just prose.")]]
        );
    }
}
