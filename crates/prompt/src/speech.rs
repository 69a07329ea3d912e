//! Voice playback rules (Tavo §14.2 "语音设置", §8.8): which part of a message is spoken.
//!
//! [`spoken_text`] is pure: a message's text and the [`PlaybackSettings`] in, the text to send
//! to the TTS provider out. Tavo names the switches (play narration, only play quotes, play
//! code blocks, play `<tag>` content) and the regex rules (name, regex, include / exclude) but
//! not their exact meaning; this module's choices, in the order they apply:
//!
//! 1. **Regex rules**, on the message as written (before anything is stripped, so a rule can
//!    match markup such as `\[voice\](.*?)\[/voice\]`). Patterns are JavaScript-style: a bare
//!    pattern or `/pattern/flags` (flags `i`, `m`, `s`, `u`; `g` and `y` are accepted and
//!    ignored — every match counts). Enabled **exclude** rules remove every whole match.
//!    When at least one enabled **include** rule exists, only text matched by an include rule
//!    is spoken — its first capture group when the pattern has one, else the whole match.
//!    Rules that fail to compile are skipped (saving them is refused, see
//!    [`validate_rules`]); a match that exceeds the backtracking limit ends that rule's matches,
//!    and all rules together get [`RULES_TIME_BUDGET`] of wall-clock time: a rule set still
//!    matching then stops where it is (what it found so far applies).
//! 2. **Code blocks**: ```` ``` ```` and `~~~` fences (CommonMark: up to three spaces of
//!    indent, the closing fence at least as long). Fence lines are never spoken; the content
//!    only with *play code blocks* (default off). Inline `` `code` `` is ordinary text with
//!    its backticks dropped.
//! 3. **Tags**: markup is never spoken. A custom element `<name …>…</name>` (Tavo's example:
//!    `<action>…</action>`, also `<thinking>`, `<status>`, `<状态>`) is *tag content*, spoken
//!    only with *play `<tag>` content* (default off) — nested tags and quotes inside included.
//!    Standard HTML formatting and layout elements (`b`, `i`, `em`, `strong`, `span`, `font`,
//!    `p`, `div`, `br`, `a`, `q`, `ul`, `li`, `h1`–`h6`, `details`, `summary`, `table`, …)
//!    are only markup: their content is ordinary text. `<script>` and `<style>` content and
//!    `<!-- comments -->` are never spoken. A tag left open is markup only.
//! 4. **Markdown** syntax is dropped: heading `#`s, list markers, blockquote `>`s, rules
//!    (`---`), table pipes, emphasis `*`, `~~`, `_` at word edges (`snake_case` keeps its
//!    underscore), backticks, link syntax (`[text](url)` speaks `text`) and images whole.
//!    Entities are not decoded.
//! 5. **Quotes** are the spans inside `"…"`, `“…”`, `„…“`/`„…”`, `「…」`, `『…』`, `«…»`, `＂…＂`,
//!    and whole blockquote lines (`> …`, which Tavo's docs name as "quotes"). Single quotes
//!    are not quote marks (apostrophes). A quote left open ends at the next blank line. The
//!    marks themselves are not spoken.
//! 6. What is left is **narration**: spoken with *play narration* (default on). *Only play
//!    quotes* (default off) speaks quotes alone — no narration, no code, no tag content.
//!    Quotes inside tag content follow the tag switch.
//!
//! Whitespace is normalised: runs become one space, or one line break when they held one;
//! removed text leaves a space, so words never run together. The output is therefore always
//! the input's characters in order with some removed, modulo whitespace (the proptests check
//! it).

use fancy_regex::{Regex, RegexBuilder};
use serde::{Deserialize, Serialize};

/// The most a rule may backtrack per match before it gives up (a pathological pattern costs
/// milliseconds, never a stalled request).
const BACKTRACK_LIMIT: usize = 100_000;

/// The wall-clock time all of a message's rules may take. The backtracking limit bounds one
/// match; a long message with many matches of a slow pattern is bounded by this, so speaking
/// a message never waits on its rules for long.
pub const RULES_TIME_BUDGET: std::time::Duration = std::time::Duration::from_millis(200);

/// Whether a regex rule selects or removes what it matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RuleMode {
    /// Only matched text is spoken.
    Include,
    /// Matched text is not spoken.
    Exclude,
}

/// One regex playback rule (Tavo §8.8: name + regex + include/exclude).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlaybackRule {
    /// Shown in the settings.
    pub name: String,
    /// A bare pattern or `/pattern/flags` (JavaScript syntax).
    pub regex: String,
    /// Include or exclude.
    pub mode: RuleMode,
    /// Off rules are kept but not applied.
    #[serde(default = "yes")]
    pub enabled: bool,
}

fn yes() -> bool {
    true
}

/// The §14.2 switches and the regex rules.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PlaybackSettings {
    /// Speak narration (text outside quotes). Default true.
    pub play_narration: bool,
    /// Speak quoted text only. Default false.
    pub only_quotes: bool,
    /// Speak the content of fenced code blocks. Default false.
    pub play_code_blocks: bool,
    /// Speak the content of custom `<tag>` elements. Default false.
    pub play_tag_content: bool,
    /// Regex rules, applied in order.
    pub rules: Vec<PlaybackRule>,
}

impl Default for PlaybackSettings {
    fn default() -> Self {
        Self {
            play_narration: true,
            only_quotes: false,
            play_code_blocks: false,
            play_tag_content: false,
            rules: Vec::new(),
        }
    }
}

/// A refused rule: the field path (`rules[2].regex`) and the problem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleError {
    /// `rules[i].name` or `rules[i].regex`.
    pub path: String,
    /// What is wrong.
    pub problem: String,
}

impl std::fmt::Display for RuleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path, self.problem)
    }
}

/// Splits `/pattern/flags` into its parts; anything else is a bare pattern.
fn split_literal(regex: &str) -> (&str, &str) {
    if let Some(rest) = regex.strip_prefix('/')
        && let Some(end) = rest.rfind('/')
    {
        let flags = &rest[end + 1..];
        if flags.chars().all(|c| "gimsuyd".contains(c)) {
            return (&rest[..end], flags);
        }
    }
    (regex, "")
}

/// Compiles one rule's regex.
pub fn compile(regex: &str) -> Result<Regex, String> {
    let (pattern, flags) = split_literal(regex);
    if pattern.is_empty() {
        return Err("the pattern is empty".into());
    }
    RegexBuilder::new(pattern)
        .case_insensitive(flags.contains('i'))
        .multi_line(flags.contains('m'))
        .dot_matches_new_line(flags.contains('s'))
        .backtrack_limit(BACKTRACK_LIMIT)
        .build()
        .map_err(|e| format!("not a valid regular expression: {e}"))
}

/// Checks every rule; each problem names its field (`rules[1].regex`).
pub fn validate_rules(rules: &[PlaybackRule]) -> Vec<RuleError> {
    let mut errors = Vec::new();
    for (i, rule) in rules.iter().enumerate() {
        if rule.name.trim().is_empty() {
            errors.push(RuleError {
                path: format!("rules[{i}].name"),
                problem: "must not be empty".into(),
            });
        }
        if let Err(problem) = compile(&rule.regex) {
            errors.push(RuleError {
                path: format!("rules[{i}].regex"),
                problem,
            });
        }
    }
    errors
}

/// HTML elements whose content is ordinary text (formatting and layout, not "tag content").
const MARKUP_ELEMENTS: &[&str] = &[
    "a",
    "abbr",
    "address",
    "article",
    "aside",
    "b",
    "bdi",
    "bdo",
    "big",
    "blockquote",
    "body",
    "caption",
    "center",
    "cite",
    "code",
    "dd",
    "del",
    "details",
    "dfn",
    "div",
    "dl",
    "dt",
    "em",
    "figcaption",
    "figure",
    "font",
    "footer",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "html",
    "i",
    "ins",
    "kbd",
    "label",
    "li",
    "main",
    "mark",
    "nav",
    "ol",
    "p",
    "pre",
    "q",
    "s",
    "samp",
    "section",
    "small",
    "span",
    "strike",
    "strong",
    "sub",
    "summary",
    "sup",
    "table",
    "tbody",
    "td",
    "tfoot",
    "th",
    "thead",
    "time",
    "tr",
    "tt",
    "u",
    "ul",
    "var",
];

/// Elements without content.
const VOID_ELEMENTS: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
    "wbr",
];

/// Elements whose content is never spoken.
const HIDDEN_ELEMENTS: &[&str] = &["script", "style", "head", "title", "template", "noscript"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TagKind {
    Markup,
    Hidden,
    Custom,
}

fn tag_kind(name: &str) -> TagKind {
    if HIDDEN_ELEMENTS.contains(&name) {
        TagKind::Hidden
    } else if MARKUP_ELEMENTS.contains(&name) || VOID_ELEMENTS.contains(&name) {
        TagKind::Markup
    } else {
        TagKind::Custom
    }
}

/// Per-character marks.
struct Marks {
    /// Removed by a regex rule.
    excluded: Vec<bool>,
    /// Syntax (tags, Markdown, quote marks, fences): never spoken.
    syntax: Vec<bool>,
    /// Inside a fenced code block.
    code: Vec<bool>,
    /// Inside a custom tag's content.
    tag: Vec<bool>,
    /// Inside a quote.
    quote: Vec<bool>,
    /// Inside `<script>`/`<style>`/a comment: never spoken.
    hidden: Vec<bool>,
}

impl Marks {
    fn new(n: usize) -> Self {
        Self {
            excluded: vec![false; n],
            syntax: vec![false; n],
            code: vec![false; n],
            tag: vec![false; n],
            quote: vec![false; n],
            hidden: vec![false; n],
        }
    }
}

/// The text of `text` that is spoken under `settings` (see the module documentation).
pub fn spoken_text(text: &str, settings: &PlaybackSettings) -> String {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let cs: Vec<char> = chars.iter().map(|&(_, c)| c).collect();
    let mut marks = Marks::new(cs.len());
    apply_rules(text, &chars, settings, &mut marks);
    mark_fences(&cs, &mut marks);
    mark_tags(&cs, &mut marks);
    mark_markdown(&cs, &mut marks);
    mark_quotes(&cs, &mut marks);
    render(&cs, &marks, settings)
}

/// The char index of a byte offset.
fn char_index(chars: &[(usize, char)], byte: usize) -> usize {
    chars.partition_point(|&(b, _)| b < byte)
}

fn apply_rules(text: &str, chars: &[(usize, char)], s: &PlaybackSettings, m: &mut Marks) {
    apply_rules_within(text, chars, s, m, RULES_TIME_BUDGET);
}

fn apply_rules_within(
    text: &str,
    chars: &[(usize, char)],
    s: &PlaybackSettings,
    m: &mut Marks,
    budget: std::time::Duration,
) {
    let n = chars.len();
    let started = std::time::Instant::now();
    let mut included: Option<Vec<bool>> = None;
    'rules: for rule in s.rules.iter().filter(|r| r.enabled) {
        let Ok(re) = compile(&rule.regex) else {
            continue;
        };
        let has_group = re.captures_len() > 1;
        for caps in re.captures_iter(text) {
            if started.elapsed() >= budget {
                break 'rules;
            }
            let Ok(caps) = caps else { break };
            let whole = caps.get(0);
            let chosen = match rule.mode {
                RuleMode::Include if has_group => caps.get(1),
                _ => whole,
            };
            let Some(range) = chosen else { continue };
            let (a, b) = (
                char_index(chars, range.start()),
                char_index(chars, range.end()),
            );
            match rule.mode {
                RuleMode::Exclude => m.excluded[a..b].iter_mut().for_each(|x| *x = true),
                RuleMode::Include => {
                    let inc = included.get_or_insert_with(|| vec![false; n]);
                    inc[a..b].iter_mut().for_each(|x| *x = true);
                }
            }
        }
    }
    // An include rule means "only matched text", also when it matched nothing (or ran out of
    // time before it could).
    let any_include = s
        .rules
        .iter()
        .any(|r| r.enabled && r.mode == RuleMode::Include && compile(&r.regex).is_ok());
    if any_include && included.is_none() {
        included = Some(vec![false; n]);
    }
    if let Some(inc) = included {
        for (x, keep) in m.excluded.iter_mut().zip(inc) {
            *x |= !keep;
        }
    }
}

/// Lines as `[start, end)` char ranges, the `\n` excluded.
fn lines(cs: &[char]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, &c) in cs.iter().enumerate() {
        if c == '\n' {
            out.push((start, i));
            start = i + 1;
        }
    }
    out.push((start, cs.len()));
    out
}

/// A fence line's character and length: up to three spaces, then 3+ backticks or tildes.
fn fence(cs: &[char], (a, b): (usize, usize)) -> Option<(char, usize, usize)> {
    let mut i = a;
    while i < b && i - a < 3 && cs[i] == ' ' {
        i += 1;
    }
    let c = *cs.get(i).filter(|_| i < b)?;
    if c != '`' && c != '~' {
        return None;
    }
    let run = cs[i..b].iter().take_while(|&&x| x == c).count();
    (run >= 3).then_some((c, run, i + run))
}

fn mark_fences(cs: &[char], m: &mut Marks) {
    let mut open: Option<(char, usize)> = None;
    for (a, b) in lines(cs) {
        let end = (b + 1).min(cs.len());
        match (open, fence(cs, (a, b))) {
            (None, Some((c, len, _))) => {
                open = Some((c, len));
                m.syntax[a..end].iter_mut().for_each(|x| *x = true);
            }
            (Some((c, len)), Some((c2, len2, after)))
                if c == c2 && len2 >= len && cs[after..b].iter().all(|x| x.is_whitespace()) =>
            {
                open = None;
                m.syntax[a..end].iter_mut().for_each(|x| *x = true);
            }
            (Some(_), _) => m.code[a..end].iter_mut().for_each(|x| *x = true),
            (None, None) => {}
        }
    }
}

/// A tag starting at `i` (`<`): its end (after `>`), lower-cased name, closing and
/// self-closing flags.
fn parse_tag(cs: &[char], i: usize) -> Option<(usize, String, bool, bool)> {
    let mut j = i + 1;
    let closing = cs.get(j) == Some(&'/');
    if closing {
        j += 1;
    }
    let first = *cs.get(j)?;
    if !first.is_alphabetic() {
        return None;
    }
    let name_start = j;
    while j < cs.len() && (cs[j].is_alphanumeric() || matches!(cs[j], '-' | '_' | ':' | '.')) {
        j += 1;
    }
    let name: String = cs[name_start..j].iter().collect::<String>().to_lowercase();
    // Attributes: up to `>`, quotes respected, bounded; a `<` or a blank line means "not a tag".
    let mut quote: Option<char> = None;
    let limit = (j + 2000).min(cs.len());
    while j < limit {
        let c = cs[j];
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None => match c {
                '"' | '\'' => quote = Some(c),
                '>' => {
                    let self_closing = cs[j - 1] == '/';
                    return Some((j + 1, name, closing, self_closing));
                }
                '<' => return None,
                _ => {}
            },
        }
        if c == '\n' && cs.get(j + 1) == Some(&'\n') {
            return None;
        }
        j += 1;
    }
    None
}

fn starts_with(cs: &[char], i: usize, s: &str) -> bool {
    (i..).zip(s.chars()).all(|(k, c)| cs.get(k) == Some(&c))
}

fn mark_tags(cs: &[char], m: &mut Marks) {
    // (name, kind, content start)
    let mut stack: Vec<(String, TagKind, usize)> = Vec::new();
    let mut i = 0;
    while i < cs.len() {
        if m.code[i] || cs[i] != '<' {
            i += 1;
            continue;
        }
        if starts_with(cs, i, "<!--") {
            let mut j = i + 4;
            while j < cs.len() && !starts_with(cs, j, "-->") {
                j += 1;
            }
            let end = (j + 3).min(cs.len());
            m.syntax[i..end].iter_mut().for_each(|x| *x = true);
            m.hidden[i..end].iter_mut().for_each(|x| *x = true);
            i = end;
            continue;
        }
        let Some((end, name, closing, self_closing)) = parse_tag(cs, i) else {
            i += 1;
            continue;
        };
        m.syntax[i..end].iter_mut().for_each(|x| *x = true);
        let kind = tag_kind(&name);
        if closing {
            if let Some(pos) = stack.iter().rposition(|(n, _, _)| *n == name) {
                let (_, kind, start) = stack[pos].clone();
                stack.truncate(pos);
                match kind {
                    TagKind::Custom => mark_range(&mut m.tag, start, i),
                    TagKind::Hidden => mark_range(&mut m.hidden, start, i),
                    TagKind::Markup => {}
                }
            }
        } else if !self_closing && !VOID_ELEMENTS.contains(&name.as_str()) {
            stack.push((name, kind, end));
        }
        i = end;
    }
}

fn mark_range(v: &mut [bool], a: usize, b: usize) {
    v[a..b].iter_mut().for_each(|x| *x = true);
}

fn mark_markdown(cs: &[char], m: &mut Marks) {
    for (a, b) in lines(cs) {
        if a < cs.len() && m.code[a] {
            continue;
        }
        line_markdown(cs, a, b, m);
    }
    // Inline: images, links, emphasis, backticks, pipes.
    let mut i = 0;
    while i < cs.len() {
        if m.code[i] || m.syntax[i] {
            i += 1;
            continue;
        }
        let c = cs[i];
        if c == '!' && cs.get(i + 1) == Some(&'[') {
            if let Some((_, end)) = link_at(cs, i + 1) {
                mark_range(&mut m.syntax, i, end);
                i = end;
                continue;
            }
        } else if c == '['
            && let Some((close, end)) = link_at(cs, i)
        {
            m.syntax[i] = true;
            mark_range(&mut m.syntax, close, end);
            i += 1;
            continue;
        }
        let word = |k: Option<&char>| k.is_some_and(|c| c.is_alphanumeric());
        let drop = match c {
            '*' | '`' | '|' => true,
            '~' => cs.get(i + 1) == Some(&'~') || (i > 0 && cs[i - 1] == '~'),
            '_' => !(i > 0 && word(cs.get(i - 1)) && word(cs.get(i + 1))),
            _ => false,
        };
        if drop {
            m.syntax[i] = true;
        }
        i += 1;
    }
}

/// A `[text](url)` at `i` (`[`): the index of `]` and the end after `)`. Within one line.
fn link_at(cs: &[char], i: usize) -> Option<(usize, usize)> {
    let mut j = i + 1;
    while j < cs.len() && cs[j] != ']' && cs[j] != '\n' && cs[j] != '[' {
        j += 1;
    }
    if cs.get(j) != Some(&']') || cs.get(j + 1) != Some(&'(') {
        return None;
    }
    let close = j;
    let mut k = j + 2;
    while k < cs.len() && cs[k] != ')' && cs[k] != '\n' && !cs[k].is_whitespace() {
        k += 1;
    }
    (cs.get(k) == Some(&')')).then_some((close, k + 1))
}

fn line_markdown(cs: &[char], a: usize, b: usize, m: &mut Marks) {
    let mut i = a;
    while i < b && i - a < 3 && cs[i] == ' ' {
        i += 1;
    }
    // A rule: only -, * or _ (3+) and spaces.
    let body: Vec<char> = cs[i..b].iter().copied().filter(|c| *c != ' ').collect();
    if body.len() >= 3 && body.iter().all(|&c| c == body[0]) && matches!(body[0], '-' | '*' | '_') {
        mark_range(&mut m.syntax, i, b);
        return;
    }
    // Table separator rows: |, -, :, spaces only.
    if body.len() >= 3
        && body.contains(&'-')
        && body.contains(&'|')
        && body.iter().all(|c| matches!(c, '|' | '-' | ':'))
    {
        mark_range(&mut m.syntax, i, b);
        return;
    }
    // Blockquote markers: the rest of the line is a quote.
    let mut quoted = false;
    while i < b && cs[i] == '>' {
        quoted = true;
        m.syntax[i] = true;
        i += 1;
        while i < b && cs[i] == ' ' {
            i += 1;
        }
    }
    if quoted {
        mark_range(&mut m.quote, i, b);
    }
    // Headings.
    let hashes = cs[i..b].iter().take_while(|&&c| c == '#').count();
    if (1..=6).contains(&hashes) && (i + hashes == b || cs[i + hashes] == ' ') {
        mark_range(&mut m.syntax, i, i + hashes);
        return;
    }
    // List markers.
    if i + 1 < b && matches!(cs[i], '-' | '+' | '*') && cs[i + 1] == ' ' {
        m.syntax[i] = true;
    }
}

/// The closing marks of an opening quote mark.
fn closers(c: char) -> Option<&'static [char]> {
    Some(match c {
        '"' => &['"'],
        '“' => &['”'],
        '„' => &['“', '”'],
        '「' => &['」'],
        '『' => &['』'],
        '«' => &['»'],
        '＂' => &['＂'],
        _ => return None,
    })
}

fn mark_quotes(cs: &[char], m: &mut Marks) {
    let mut open: Option<&'static [char]> = None;
    let mut i = 0;
    while i < cs.len() {
        let c = cs[i];
        // Code and markup (a tag's attribute quotes) are not prose.
        if m.code[i] || m.syntax[i] {
            i += 1;
            continue;
        }
        if c == '\n' {
            // A blank line ends an open quote.
            let mut j = i + 1;
            while j < cs.len() && cs[j] != '\n' && cs[j].is_whitespace() {
                j += 1;
            }
            if cs.get(j) == Some(&'\n') {
                open = None;
            }
        }
        match open {
            Some(close) if close.contains(&c) => {
                m.syntax[i] = true;
                open = None;
            }
            Some(_) => m.quote[i] = true,
            None => {
                if let Some(close) = closers(c) {
                    m.syntax[i] = true;
                    open = Some(close);
                }
            }
        }
        i += 1;
    }
}

fn spoken(i: usize, m: &Marks, s: &PlaybackSettings) -> bool {
    if m.excluded[i] || m.syntax[i] || m.hidden[i] {
        return false;
    }
    if m.code[i] {
        return s.play_code_blocks && !s.only_quotes;
    }
    if m.tag[i] && !s.play_tag_content {
        return false;
    }
    if m.quote[i] {
        return true;
    }
    if m.tag[i] {
        return !s.only_quotes;
    }
    s.play_narration && !s.only_quotes
}

fn render(cs: &[char], m: &Marks, s: &PlaybackSettings) -> String {
    let mut out = String::new();
    // 0: nothing pending, 1: a space, 2: a line break.
    let mut pending = 0u8;
    for (i, &c) in cs.iter().enumerate() {
        let keep = spoken(i, m, s);
        if c.is_whitespace() || !keep {
            let level = if c == '\n' { 2 } else { 1 };
            pending = pending.max(level);
            continue;
        }
        if !out.is_empty() {
            match pending {
                2 => out.push('\n'),
                1 => out.push(' '),
                _ => {}
            }
        }
        pending = 0;
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(f: impl FnOnce(&mut PlaybackSettings)) -> PlaybackSettings {
        let mut s = PlaybackSettings::default();
        f(&mut s);
        s
    }

    fn rule(name: &str, regex: &str, mode: RuleMode) -> PlaybackRule {
        PlaybackRule {
            name: name.into(),
            regex: regex.into(),
            mode,
            enabled: true,
        }
    }

    /// What the rules mark within `budget`: the spoken text after the rules alone.
    fn within(text: &str, s: &PlaybackSettings, budget: std::time::Duration) -> Vec<bool> {
        let chars: Vec<(usize, char)> = text.char_indices().collect();
        let mut marks = Marks::new(chars.len());
        apply_rules_within(text, &chars, s, &mut marks, budget);
        marks.excluded
    }

    #[test]
    fn rules_stop_at_their_time_budget_and_keep_their_meaning() {
        let text = "a [OOC: x] b";
        let exclude = with(|s| s.rules = vec![rule("ooc", r"\[OOC.*?\]", RuleMode::Exclude)]);
        let long = std::time::Duration::from_secs(5);
        assert_eq!(
            within(text, &exclude, long).iter().filter(|x| **x).count(),
            8
        );
        // Out of time before the first match: nothing is removed…
        let none = within(text, &exclude, std::time::Duration::ZERO);
        assert!(none.iter().all(|x| !x));
        // …and an include rule that could not run still speaks only what it matched: nothing.
        let include = with(|s| s.rules = vec![rule("say", r"b", RuleMode::Include)]);
        let all = within(text, &include, std::time::Duration::ZERO);
        assert!(all.iter().all(|x| *x));
        assert_eq!(
            within(text, &include, long).iter().filter(|x| !**x).count(),
            1
        );
    }

    #[test]
    fn plain_text_is_spoken_as_written() {
        let s = PlaybackSettings::default();
        assert_eq!(spoken_text("Hello there.", &s), "Hello there.");
        assert_eq!(spoken_text("  a \t b  \n\n c ", &s), "a b\nc");
        assert_eq!(spoken_text("", &s), "");
    }

    #[test]
    fn only_quotes_speaks_every_kind_of_quote_and_blockquotes() {
        let s = with(|s| s.only_quotes = true);
        let text = "She smiles. \"Hi,\" she says, “welcome”. 「ようこそ」『二重』«salut» ＂全角＂";
        assert_eq!(
            spoken_text(text, &s),
            "Hi, welcome ようこそ 二重 salut 全角"
        );
        assert_eq!(
            spoken_text("He waits.\n> I am here.\nDone.", &s),
            "I am here."
        );
        assert_eq!(spoken_text("No quotes at all.", &s), "");
        // Apostrophes are not quotes.
        assert_eq!(spoken_text("It's 'fine', isn't it", &s), "");
    }

    #[test]
    fn narration_off_keeps_quotes_only_among_prose() {
        let s = with(|s| s.play_narration = false);
        assert_eq!(
            spoken_text("*walks in* \"Good morning!\" *sits*", &s),
            "Good morning!"
        );
        let s = PlaybackSettings::default();
        assert_eq!(
            spoken_text("*walks in* \"Good morning!\" *sits*", &s),
            "walks in Good morning! sits"
        );
    }

    #[test]
    fn an_unclosed_quote_ends_at_a_blank_line() {
        let s = with(|s| s.only_quotes = true);
        assert_eq!(
            spoken_text("\"one\ntwo\n\nthree \"four\"", &s),
            "one\ntwo\nfour"
        );
    }

    #[test]
    fn code_blocks_follow_their_switch() {
        let text = "Look:\n```rust\nlet x = 1;\n```\nDone.";
        assert_eq!(
            spoken_text(text, &PlaybackSettings::default()),
            "Look:\nDone."
        );
        let s = with(|s| s.play_code_blocks = true);
        assert_eq!(spoken_text(text, &s), "Look:\nlet x = 1;\nDone.");
        // Unclosed fences run to the end; tildes fence too; quotes inside code are not quotes.
        let s = with(|s| s.only_quotes = true);
        assert_eq!(spoken_text("~~~\n\"not a quote\"\n~~~\n\"yes\"", &s), "yes");
        assert_eq!(
            spoken_text("a\n```\nrest", &PlaybackSettings::default()),
            "a"
        );
        // Inline code is text.
        assert_eq!(
            spoken_text("run `ls` now", &PlaybackSettings::default()),
            "run ls now"
        );
    }

    #[test]
    fn tag_content_follows_its_switch_and_markup_never_speaks() {
        let text = "She nods. <action>waves</action> \"Bye.\" <thinking>hmm \"no\"</thinking>";
        let s = PlaybackSettings::default();
        assert_eq!(spoken_text(text, &s), "She nods. Bye.");
        let s = with(|s| s.play_tag_content = true);
        assert_eq!(spoken_text(text, &s), "She nods. waves Bye. hmm no");
        let s = with(|s| {
            s.play_tag_content = true;
            s.only_quotes = true;
        });
        assert_eq!(spoken_text(text, &s), "Bye. no");
        // Formatting elements are markup; their attribute quotes are not quotes.
        let s = with(|s| s.only_quotes = true);
        assert_eq!(
            spoken_text("<span style=\"color:red\">\"red\"</span> text<br>", &s),
            "red"
        );
        assert_eq!(
            spoken_text(
                "a<br>b <b>bold</b> <状态>hp 10</状态> <script>x()</script><!-- c -->",
                &PlaybackSettings::default()
            ),
            "a b bold"
        );
        // Not tags: comparisons, hearts, unclosed custom tags.
        assert_eq!(
            spoken_text("1 < 2 and <3 <note>open", &PlaybackSettings::default()),
            "1 < 2 and <3 open"
        );
    }

    #[test]
    fn markdown_is_stripped() {
        let s = PlaybackSettings::default();
        assert_eq!(
            spoken_text(
                "# Title\n- **bold** and _it_ and ~~gone~~\n---\nsee [the docs](https://x.y/z) ![pic](a.png) snake_case",
                &s
            ),
            "Title\nbold and it and gone\nsee the docs snake_case"
        );
        assert_eq!(
            spoken_text("| a | b |\n|---|---|\n| 1 | 2 |", &s),
            "a b\n1 2"
        );
    }

    #[test]
    fn exclude_rules_remove_matches_and_include_rules_select() {
        let s = with(|s| s.rules = vec![rule("no brackets", r"\[.*?\]", RuleMode::Exclude)]);
        assert_eq!(spoken_text("Hi [OOC: note] there", &s), "Hi there");
        let s = with(|s| {
            s.rules = vec![rule(
                "voice tags",
                r"/\[voice\](.*?)\[\/voice\]/gi",
                RuleMode::Include,
            )]
        });
        assert_eq!(
            spoken_text(
                "skip [VOICE]say this[/voice] skip [voice]and this[/voice]",
                &s
            ),
            "say this and this"
        );
        // An include rule that matches nothing: nothing is spoken.
        let s = with(|s| s.rules = vec![rule("digits", r"\d+", RuleMode::Include)]);
        assert_eq!(spoken_text("no digits", &s), "");
        // Disabled and broken rules do nothing.
        let mut off = rule("off", "Hi", RuleMode::Exclude);
        off.enabled = false;
        let s = with(|s| s.rules = vec![off, rule("broken", "(", RuleMode::Exclude)]);
        assert_eq!(spoken_text("Hi there", &s), "Hi there");
        // Rules see the raw text, before quotes are chosen.
        let s = with(|s| {
            s.only_quotes = true;
            s.rules = vec![rule("not this", "\"skip\"", RuleMode::Exclude)];
        });
        assert_eq!(spoken_text("\"skip\" and \"keep\"", &s), "keep");
    }

    #[test]
    fn validation_names_the_field() {
        let rules = vec![
            rule("ok", r"\d", RuleMode::Include),
            rule(" ", r"(unclosed", RuleMode::Exclude),
            rule("empty", "//i", RuleMode::Exclude),
        ];
        let errors = validate_rules(&rules);
        let paths: Vec<_> = errors.iter().map(|e| e.path.as_str()).collect();
        assert_eq!(paths, ["rules[1].name", "rules[1].regex", "rules[2].regex"]);
        assert!(
            errors[1]
                .to_string()
                .starts_with("rules[1].regex: not a valid")
        );
    }

    #[test]
    fn settings_have_the_documented_json_shape_and_defaults() {
        let s: PlaybackSettings = serde_json::from_str("{}").expect("defaults");
        assert_eq!(s, PlaybackSettings::default());
        assert!(s.play_narration && !s.only_quotes && !s.play_code_blocks && !s.play_tag_content);
        let v = serde_json::to_value(with(|s| s.rules = vec![rule("r", "x", RuleMode::Exclude)]))
            .expect("json");
        assert_eq!(
            v,
            serde_json::json!({"playNarration": true, "onlyQuotes": false, "playCodeBlocks": false,
                "playTagContent": false, "rules": [{"name": "r", "regex": "x", "mode": "exclude", "enabled": true}]})
        );
    }
}
