//! Which encoding an OpenAI model counts with: tiktoken's own table (`tiktoken/model.py`, as
//! tiktoken-rs 0.12 carries it), for the models of the two encodings counted exactly. The
//! retired completion models of p50k/r50k/gpt2 (`text-davinci-003`, `davinci`, …) are not
//! here: the OpenAI API no longer serves them, and they count with the estimate.

use super::Encoding;

/// Model names that are the whole name.
const EXACT: &[(&str, Encoding)] = &[
    ("o1", Encoding::O200kBase),
    ("o3", Encoding::O200kBase),
    ("o4-mini", Encoding::O200kBase),
    ("gpt-5", Encoding::O200kBase),
    ("gpt-4.1", Encoding::O200kBase),
    ("gpt-4o", Encoding::O200kBase),
    ("gpt-4", Encoding::Cl100kBase),
    ("gpt-3.5-turbo", Encoding::Cl100kBase),
    ("gpt-3.5", Encoding::Cl100kBase),
    ("gpt-35-turbo", Encoding::Cl100kBase),
    ("davinci-002", Encoding::Cl100kBase),
    ("babbage-002", Encoding::Cl100kBase),
    ("text-embedding-ada-002", Encoding::Cl100kBase),
    ("text-embedding-3-small", Encoding::Cl100kBase),
    ("text-embedding-3-large", Encoding::Cl100kBase),
];

/// Prefixes, tried after [`EXACT`] in tiktoken's order; the first that matches wins.
const PREFIXES: &[(&str, Encoding)] = &[
    ("o1-", Encoding::O200kBase),
    ("o3-", Encoding::O200kBase),
    ("o4-mini-", Encoding::O200kBase),
    ("gpt-5", Encoding::O200kBase),
    ("gpt-4.5-", Encoding::O200kBase),
    ("gpt-4.1-", Encoding::O200kBase),
    ("chatgpt-4o-", Encoding::O200kBase),
    ("gpt-4o-", Encoding::O200kBase),
    ("gpt-4-", Encoding::Cl100kBase),
    ("gpt-3.5-turbo-", Encoding::Cl100kBase),
    ("gpt-35-turbo-", Encoding::Cl100kBase),
    // o200k_harmony: o200k_base with more special tokens, which plain text never encodes to.
    ("gpt-oss-", Encoding::O200kBase),
    ("codex-mini", Encoding::O200kBase),
];

/// The encoding of a model name (already lower-case, without a provider prefix such as
/// `openai/`), as tiktoken maps it; fine-tuned `ft:BASE:…` names count as their base.
pub(crate) fn encoding_for_model(name: &str) -> Option<Encoding> {
    if let Some(rest) = name.strip_prefix("ft:") {
        return encoding_for_model(rest.split(':').next().unwrap_or(rest));
    }
    EXACT
        .iter()
        .find(|(model, _)| *model == name)
        .or_else(|| PREFIXES.iter().find(|(prefix, _)| name.starts_with(prefix)))
        .map(|(_, encoding)| *encoding)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_map_as_tiktoken_maps_them() {
        for (model, expected) in [
            ("gpt-4o", Some(Encoding::O200kBase)),
            ("gpt-4o-mini", Some(Encoding::O200kBase)),
            ("gpt-4.1-nano", Some(Encoding::O200kBase)),
            ("gpt-5.4-mini", Some(Encoding::O200kBase)),
            ("o3-mini", Some(Encoding::O200kBase)),
            ("chatgpt-4o-latest", Some(Encoding::O200kBase)),
            ("gpt-oss-120b", Some(Encoding::O200kBase)),
            (
                "ft:gpt-4o-mini-2024-07-18:acme::abc",
                Some(Encoding::O200kBase),
            ),
            ("gpt-4", Some(Encoding::Cl100kBase)),
            ("gpt-4-turbo", Some(Encoding::Cl100kBase)),
            ("gpt-3.5-turbo-0125", Some(Encoding::Cl100kBase)),
            ("text-davinci-003", None),
            ("gpt-6", None),
        ] {
            assert_eq!(encoding_for_model(model), expected, "{model}");
        }
    }

    #[test]
    fn the_table_agrees_with_tiktoken_rs() {
        use tiktoken_rs::tokenizer::{Tokenizer, get_tokenizer};
        let names = EXACT.iter().chain(PREFIXES).map(|(m, _)| m.to_string());
        let more = [
            "gpt-4o-2024-08-06",
            "gpt-4-0613",
            "gpt-4.5-preview",
            "o1-mini",
            "gpt-3.5",
        ];
        for name in names.chain(more.iter().map(|m| m.to_string())) {
            let expected = match get_tokenizer(&name) {
                Some(Tokenizer::O200kBase | Tokenizer::O200kHarmony) => Some(Encoding::O200kBase),
                Some(Tokenizer::Cl100kBase) => Some(Encoding::Cl100kBase),
                _ => None,
            };
            assert_eq!(encoding_for_model(&name), expected, "{name}");
        }
    }
}
