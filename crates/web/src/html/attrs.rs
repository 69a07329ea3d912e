//! The attributes the converter reads from a start tag, in one pass over its source.

use super::tokenizer::Tokenizer;

#[derive(Debug, Default)]
pub(crate) struct Attrs<'a> {
    pub(crate) class: &'a str,
    pub(crate) id: &'a str,
    pub(crate) href: &'a str,
    pub(crate) src: &'a str,
    pub(crate) data_src: &'a str,
    pub(crate) alt: &'a str,
    pub(crate) title: &'a str,
    pub(crate) style: &'a str,
    pub(crate) role: &'a str,
    pub(crate) colspan: &'a str,
    pub(crate) start: &'a str,
    pub(crate) lang: &'a str,
    pub(crate) hidden: bool,
    pub(crate) aria_hidden: bool,
}

pub(crate) fn read_attrs<'a>(tokens: &Tokenizer<'a>, range: (usize, usize)) -> Attrs<'a> {
    let mut a = Attrs::default();
    if range.0 >= range.1 {
        return a;
    }
    for (name, value) in tokens.attrs(range) {
        let slot = match name.len() {
            2 if name.eq_ignore_ascii_case("id") => &mut a.id,
            3 if name.eq_ignore_ascii_case("src") => &mut a.src,
            3 if name.eq_ignore_ascii_case("alt") => &mut a.alt,
            4 if name.eq_ignore_ascii_case("href") => &mut a.href,
            4 if name.eq_ignore_ascii_case("role") => &mut a.role,
            5 if name.eq_ignore_ascii_case("class") => &mut a.class,
            5 if name.eq_ignore_ascii_case("title") => &mut a.title,
            5 if name.eq_ignore_ascii_case("style") => &mut a.style,
            5 if name.eq_ignore_ascii_case("start") => &mut a.start,
            6 if name.eq_ignore_ascii_case("hidden") => {
                a.hidden = true;
                continue;
            }
            7 if name.eq_ignore_ascii_case("colspan") => &mut a.colspan,
            8 if name.eq_ignore_ascii_case("data-src") => &mut a.data_src,
            9 if name.eq_ignore_ascii_case("data-lang") => &mut a.lang,
            11 if name.eq_ignore_ascii_case("aria-hidden") => {
                a.aria_hidden = value.trim().eq_ignore_ascii_case("true");
                continue;
            }
            13 if name.eq_ignore_ascii_case("data-language") => &mut a.lang,
            13 if name.eq_ignore_ascii_case("data-original") && a.data_src.is_empty() => {
                &mut a.data_src
            }
            _ => continue,
        };
        if slot.is_empty() {
            *slot = value;
        }
    }
    a
}

/// `display:none` or `visibility:hidden` in an inline style.
pub(crate) fn style_hides(style: &str) -> bool {
    if style.is_empty() {
        return false;
    }
    let compact: String = style
        .bytes()
        .filter(|b| !b.is_ascii_whitespace())
        .map(|b| b.to_ascii_lowercase() as char)
        .collect();
    compact.contains("display:none") || compact.contains("visibility:hidden")
}

/// ARIA roles of page chrome (readability.js's unlikely roles).
pub(crate) fn role_is_chrome(role: &str) -> bool {
    const ROLES: &[&str] = &[
        "menu",
        "menubar",
        "complementary",
        "navigation",
        "alert",
        "alertdialog",
        "dialog",
    ];
    !role.is_empty() && ROLES.iter().any(|r| r.eq_ignore_ascii_case(role.trim()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_and_hiding() {
        let html = r#"<img SRC="a.png" alt='x' data-original="b.png" Hidden aria-hidden=" TRUE ">"#;
        let mut tk = Tokenizer::new(html);
        let Some(super::super::tokenizer::Token::Start { attrs, .. }) = tk.next() else {
            panic!("start tag expected");
        };
        let a = read_attrs(&tk, attrs);
        assert_eq!((a.src, a.alt, a.data_src), ("a.png", "x", "b.png"));
        assert!(a.hidden && a.aria_hidden);
        assert!(style_hides("color: red; DISPLAY : none"));
        assert!(!style_hides("display:block"));
        assert!(role_is_chrome("Navigation") && !role_is_chrome("main"));
    }
}
