//! [`ImageType`]: which image format some bytes hold, from their signature.
//!
//! Avatars arrive as PNG (card images), JPEG or WebP (charx icons, uploads) and are stored and
//! exported byte for byte — pixels are never decoded — so the only thing the library needs to
//! know about an image is its type: for the MIME type it is served with and for the file
//! extension an export writes it under. The store and the file formats ask this one function.

/// The image formats an avatar can be in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ImageType {
    /// `image/png`.
    Png,
    /// `image/jpeg`.
    Jpeg,
    /// `image/gif`.
    Gif,
    /// `image/webp`.
    Webp,
}

impl ImageType {
    /// The type of `bytes`, from their first bytes; `None` for anything else.
    pub fn sniff(bytes: &[u8]) -> Option<Self> {
        if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
            Some(ImageType::Png)
        } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
            Some(ImageType::Jpeg)
        } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
            Some(ImageType::Gif)
        } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
            Some(ImageType::Webp)
        } else {
            None
        }
    }

    /// The MIME type.
    pub fn mime_type(self) -> &'static str {
        match self {
            ImageType::Png => "image/png",
            ImageType::Jpeg => "image/jpeg",
            ImageType::Gif => "image/gif",
            ImageType::Webp => "image/webp",
        }
    }

    /// The usual file extension, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            ImageType::Png => "png",
            ImageType::Jpeg => "jpg",
            ImageType::Gif => "gif",
            ImageType::Webp => "webp",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_name_their_type() {
        let table: &[(&[u8], Option<ImageType>)] = &[
            (b"\x89PNG\r\n\x1a\n\0\0", Some(ImageType::Png)),
            (b"\xFF\xD8\xFF\xE0\0\x10JFIF", Some(ImageType::Jpeg)),
            (b"GIF89a...", Some(ImageType::Gif)),
            (b"RIFF\x10\0\0\0WEBPVP8 ", Some(ImageType::Webp)),
            (b"RIFF\x10\0\0\0WAVEfmt ", None),
            (b"RIFF", None),
            (b"\x89PNG", None),
            (b"", None),
        ];
        for (bytes, want) in table {
            assert_eq!(ImageType::sniff(bytes), *want, "{bytes:?}");
        }
        assert_eq!(ImageType::Webp.mime_type(), "image/webp");
        assert_eq!(ImageType::Jpeg.extension(), "jpg");
    }
}
