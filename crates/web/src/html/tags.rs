//! The HTML elements the converter treats differently, and their parsing properties.

/// An element kind. Everything not listed is [`Tag::Inline`] (rendered as its content).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tag {
    Html,
    Head,
    Body,
    Title,
    /// Content never reaches the model (scripts, media, forms controls, page chrome).
    Skipped,
    /// A void element that renders nothing (`meta`, `link`, `col`, ...).
    VoidOther,
    P,
    Div,
    Section,
    Article,
    Main,
    Header,
    Form,
    Fieldset,
    /// Other block containers (`figure`, `details`, `address`, `center`, ...).
    Block,
    Dl,
    Dt,
    Dd,
    Ul,
    Ol,
    Li,
    H(u8),
    Pre,
    Blockquote,
    Hr,
    Br,
    Img,
    A,
    Strong,
    Em,
    Code,
    Table,
    Caption,
    /// `thead`, `tbody`, `tfoot`.
    RowGroup,
    Tr,
    Td,
    Th,
    /// `svg` and `math`: foreign content (self-closing tags are honoured inside).
    Foreign,
    Inline,
}

impl Tag {
    /// Classifies a tag name (any case).
    pub(crate) fn of(name: &str) -> Tag {
        let mut buf = [0u8; 12];
        let bytes = name.as_bytes();
        if bytes.len() > buf.len() {
            return Tag::Inline;
        }
        for (d, s) in buf.iter_mut().zip(bytes) {
            *d = s.to_ascii_lowercase();
        }
        match &buf[..bytes.len()] {
            b"html" => Tag::Html,
            b"head" => Tag::Head,
            b"body" => Tag::Body,
            b"title" => Tag::Title,
            b"script" | b"style" | b"noscript" | b"template" | b"iframe" | b"canvas"
            | b"object" | b"button" | b"select" | b"textarea" | b"dialog" | b"map" | b"audio"
            | b"video" | b"nav" | b"footer" | b"aside" | b"xmp" | b"noembed" | b"noframes"
            | b"frameset" | b"datalist" | b"label" | b"menu" | b"optgroup" | b"option"
            | b"colgroup" => Tag::Skipped,
            b"meta" | b"link" | b"base" | b"col" | b"source" | b"track" | b"param" | b"input"
            | b"embed" | b"area" | b"keygen" | b"wbr" | b"frame" => Tag::VoidOther,
            b"p" => Tag::P,
            b"div" => Tag::Div,
            b"section" => Tag::Section,
            b"article" => Tag::Article,
            b"main" => Tag::Main,
            b"header" | b"hgroup" => Tag::Header,
            b"form" => Tag::Form,
            b"fieldset" => Tag::Fieldset,
            b"figure" | b"figcaption" | b"details" | b"summary" | b"address" | b"center"
            | b"legend" | b"listing" | b"search" => Tag::Block,
            b"dl" => Tag::Dl,
            b"dt" => Tag::Dt,
            b"dd" => Tag::Dd,
            b"ul" | b"dir" => Tag::Ul,
            b"ol" => Tag::Ol,
            b"li" => Tag::Li,
            b"h1" => Tag::H(1),
            b"h2" => Tag::H(2),
            b"h3" => Tag::H(3),
            b"h4" => Tag::H(4),
            b"h5" => Tag::H(5),
            b"h6" => Tag::H(6),
            b"pre" => Tag::Pre,
            b"blockquote" => Tag::Blockquote,
            b"hr" => Tag::Hr,
            b"br" => Tag::Br,
            b"img" | b"image" => Tag::Img,
            b"a" => Tag::A,
            b"strong" | b"b" => Tag::Strong,
            b"em" | b"i" => Tag::Em,
            b"code" | b"kbd" | b"samp" | b"tt" => Tag::Code,
            b"table" => Tag::Table,
            b"caption" => Tag::Caption,
            b"thead" | b"tbody" | b"tfoot" => Tag::RowGroup,
            b"tr" => Tag::Tr,
            b"td" => Tag::Td,
            b"th" => Tag::Th,
            b"svg" | b"math" => Tag::Foreign,
            _ => Tag::Inline,
        }
    }

    /// Elements that never have content.
    pub(crate) fn is_void(self) -> bool {
        matches!(self, Tag::VoidOther | Tag::Hr | Tag::Br | Tag::Img)
    }

    /// Block-level: starts on a new line and closes an open `<p>` (the standard's list, roughly).
    pub(crate) fn is_block(self) -> bool {
        matches!(
            self,
            Tag::P
                | Tag::Div
                | Tag::Section
                | Tag::Article
                | Tag::Main
                | Tag::Header
                | Tag::Form
                | Tag::Fieldset
                | Tag::Block
                | Tag::Dl
                | Tag::Dt
                | Tag::Dd
                | Tag::Ul
                | Tag::Ol
                | Tag::Li
                | Tag::H(_)
                | Tag::Pre
                | Tag::Blockquote
                | Tag::Hr
                | Tag::Table
        )
    }

    /// Where the search for an element to close stops (the standard's "scope" markers).
    pub(crate) fn is_scope_boundary(self) -> bool {
        matches!(
            self,
            Tag::Table | Tag::Td | Tag::Th | Tag::Caption | Tag::Html | Tag::Foreign
        )
    }

    /// Elements readability.js scores as paragraphs when they close.
    pub(crate) fn is_paragraph_like(self) -> bool {
        matches!(
            self,
            Tag::P | Tag::Pre | Tag::Td | Tag::Section | Tag::H(2..=6)
        )
    }

    /// Elements whose class and id are matched against readability's patterns.
    pub(crate) fn has_weight(self) -> bool {
        self.is_block()
            || matches!(
                self,
                Tag::Td | Tag::Th | Tag::Tr | Tag::RowGroup | Tag::Caption
            )
    }

    /// readability.js's initial score of a candidate by its tag.
    pub(crate) fn base_score(self) -> f32 {
        match self {
            Tag::Div => 5.0,
            Tag::Pre | Tag::Td | Tag::Blockquote => 3.0,
            Tag::Block | Tag::Ol | Tag::Ul | Tag::Dl | Tag::Dd | Tag::Dt | Tag::Li | Tag::Form => {
                -3.0
            }
            Tag::H(_) | Tag::Th => -5.0,
            _ => 0.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_case_insensitive() {
        assert_eq!(Tag::of("TABLE"), Tag::Table);
        assert_eq!(Tag::of("H3"), Tag::H(3));
        assert_eq!(Tag::of("Script"), Tag::Skipped);
        assert_eq!(Tag::of("custom-element-with-long-name"), Tag::Inline);
        assert!(Tag::of("img").is_void());
        assert!(Tag::of("ul").is_block() && !Tag::of("span").is_block());
    }
}
