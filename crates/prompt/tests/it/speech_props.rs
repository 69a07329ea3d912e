//! Properties of the voice playback rules (`tavo_prompt::speech`): whatever the message and
//! the switches, [`spoken_text`] never panics and only ever removes characters — its output is
//! the input's non-whitespace characters in order, some left out.

use proptest::prelude::*;
use tavo_prompt::speech::{PlaybackRule, PlaybackSettings, RuleMode, spoken_text};

/// Text rich in the syntax the rules look at.
fn message() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("\"".to_owned()),
        Just("“".to_owned()),
        Just("”".to_owned()),
        Just("「".to_owned()),
        Just("」".to_owned()),
        Just("«".to_owned()),
        Just("»".to_owned()),
        Just("„".to_owned()),
        Just("```".to_owned()),
        Just("~~~".to_owned()),
        Just("\n".to_owned()),
        Just("\n\n".to_owned()),
        Just("> ".to_owned()),
        Just("# ".to_owned()),
        Just("- ".to_owned()),
        Just("*".to_owned()),
        Just("_".to_owned()),
        Just("`".to_owned()),
        Just("|".to_owned()),
        Just("<action>".to_owned()),
        Just("</action>".to_owned()),
        Just("<b>".to_owned()),
        Just("</b>".to_owned()),
        Just("<br/>".to_owned()),
        Just("<span style=\"a>b\">".to_owned()),
        Just("<!--".to_owned()),
        Just("-->".to_owned()),
        Just("<script>".to_owned()),
        Just("</script>".to_owned()),
        Just("[link](http://x)".to_owned()),
        Just("![img](a.png)".to_owned()),
        Just("<".to_owned()),
        Just(">".to_owned()),
        "[a-z ]{0,8}",
        "\\PC{0,4}",
    ];
    prop::collection::vec(piece, 0..40).prop_map(|v| v.concat())
}

fn settings() -> impl Strategy<Value = PlaybackSettings> {
    let rule = (
        prop_oneof![
            Just(r"\d+"),
            Just(r"\[.*?\]"),
            Just(r"/(a+)+b/i"),
            Just(r#""([^"]*)""#),
            Just("("),
            Just(r"(?<=a)b"),
            Just(r"\s"),
        ],
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(regex, include, enabled)| PlaybackRule {
            name: "r".into(),
            regex: regex.into(),
            mode: if include {
                RuleMode::Include
            } else {
                RuleMode::Exclude
            },
            enabled,
        });
    (
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        prop::collection::vec(rule, 0..3),
    )
        .prop_map(|(a, b, c, d, rules)| PlaybackSettings {
            play_narration: a,
            only_quotes: b,
            play_code_blocks: c,
            play_tag_content: d,
            rules,
        })
}

fn is_subsequence(small: &[char], big: &[char]) -> bool {
    let mut it = big.iter();
    small.iter().all(|c| it.any(|b| b == c))
}

fn solid(s: &str) -> Vec<char> {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn output_is_a_subsequence_of_the_input(text in message(), s in settings()) {
        let out = spoken_text(&text, &s);
        prop_assert!(is_subsequence(&solid(&out), &solid(&text)), "{text:?} → {out:?}");
        prop_assert_eq!(out.trim(), out.as_str(), "no leading or trailing whitespace");
        prop_assert!(!out.contains("  "), "whitespace runs are collapsed: {:?}", out);
    }

    #[test]
    fn arbitrary_unicode_never_panics(text in "\\PC{0,200}", s in settings()) {
        let out = spoken_text(&text, &s);
        prop_assert!(is_subsequence(&solid(&out), &solid(&text)));
    }

    #[test]
    fn plain_words_are_spoken_whole_by_default(words in prop::collection::vec("[a-zA-Z0-9,.!?]{1,10}", 0..20)) {
        let text = words.join(" ");
        prop_assert_eq!(spoken_text(&text, &PlaybackSettings::default()), text);
    }

    #[test]
    fn only_quotes_is_never_more_than_the_default(text in message()) {
        let all = spoken_text(&text, &PlaybackSettings { play_code_blocks: true, play_tag_content: true, ..PlaybackSettings::default() });
        let quotes = spoken_text(&text, &PlaybackSettings { only_quotes: true, play_code_blocks: true, play_tag_content: true, ..PlaybackSettings::default() });
        prop_assert!(is_subsequence(&solid(&quotes), &solid(&all)), "{text:?}: {quotes:?} ⊄ {all:?}");
    }
}
