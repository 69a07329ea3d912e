//! PNG character cards: walking chunks (never decoding pixels), reading the `chara` / `ccv3`
//! text chunks, and splicing new ones in before `IEND`.
//!
//! SillyTavern writes `tEXt` chunks after `IDAT`, so the chunk walker reads the whole file;
//! `iTXt` and `zTXt` (zlib) are read as well. A truncated or corrupt file is refused naming the
//! chunk and offset.

use crate::error::{FormatError, Result, Warning};
use std::io::Read;

/// The 8-byte PNG signature.
pub const SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1a, b'\n'];

/// Upper bound for a decompressed `zTXt`/`iTXt` payload (a card is a few MB at most).
const MAX_INFLATED: u64 = 64 * 1024 * 1024;

/// One raw chunk.
#[derive(Debug, Clone, Copy)]
pub struct Chunk<'a> {
    /// Four-byte type (`IHDR`, `tEXt` …).
    pub kind: [u8; 4],
    /// Chunk data.
    pub data: &'a [u8],
    /// Offset of the length field in the file.
    pub offset: usize,
}

/// Whether `bytes` start with the PNG signature.
pub fn is_png(bytes: &[u8]) -> bool {
    bytes.starts_with(&SIGNATURE)
}

/// Walks all chunks up to and including `IEND`; refuses truncation and a missing `IEND`.
pub fn chunks(bytes: &[u8]) -> Result<Vec<Chunk<'_>>> {
    if !is_png(bytes) {
        return Err(FormatError::whole(
            "not a PNG file (the 8-byte PNG signature is missing)",
        ));
    }
    let mut out = Vec::new();
    let mut pos = SIGNATURE.len();
    loop {
        if pos + 8 > bytes.len() {
            return Err(FormatError::at(
                format!("offset {pos}"),
                "the PNG is truncated: it ends before the IEND chunk (re-download or re-export the card)",
            ));
        }
        let len = u32::from_be_bytes([bytes[pos], bytes[pos + 1], bytes[pos + 2], bytes[pos + 3]])
            as usize;
        let kind = [
            bytes[pos + 4],
            bytes[pos + 5],
            bytes[pos + 6],
            bytes[pos + 7],
        ];
        let end = pos.checked_add(12).and_then(|p| p.checked_add(len));
        let Some(end) = end.filter(|e| *e <= bytes.len()) else {
            return Err(FormatError::at(
                format!("chunk {} at offset {pos}", String::from_utf8_lossy(&kind)),
                format!(
                    "the PNG is truncated: the chunk claims {len} bytes but only {} remain",
                    bytes.len().saturating_sub(pos + 12)
                ),
            ));
        };
        out.push(Chunk {
            kind,
            data: &bytes[pos + 8..pos + 8 + len],
            offset: pos,
        });
        pos = end;
        if &kind == b"IEND" {
            return Ok(out);
        }
    }
}

/// A decoded text chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextChunk {
    /// Keyword (`chara`, `ccv3` …) as written.
    pub keyword: String,
    /// Text value.
    pub text: String,
}

/// Reads every `tEXt`, `iTXt` and `zTXt` chunk. Undecodable chunks are skipped with a warning.
pub fn text_chunks(bytes: &[u8], warnings: &mut Vec<Warning>) -> Result<Vec<TextChunk>> {
    let mut out = Vec::new();
    for c in chunks(bytes)? {
        let where_ = format!(
            "chunk {} at offset {}",
            String::from_utf8_lossy(&c.kind),
            c.offset
        );
        let decoded = match &c.kind {
            b"tEXt" => decode_text_chunk(c.data),
            b"zTXt" => decode_ztxt_chunk(c.data),
            b"iTXt" => decode_itxt_chunk(c.data),
            _ => continue,
        };
        match decoded {
            Ok(t) => out.push(t),
            Err(msg) => warnings.push(Warning::at(
                "png.text-chunk",
                &where_,
                format!("skipped: {msg}"),
            )),
        }
    }
    Ok(out)
}

fn split_keyword(data: &[u8]) -> std::result::Result<(String, &[u8]), String> {
    let nul = data
        .iter()
        .position(|b| *b == 0)
        .ok_or("no keyword separator")?;
    let keyword: String = data[..nul].iter().map(|b| char::from(*b)).collect();
    Ok((keyword, &data[nul + 1..]))
}

fn latin1(bytes: &[u8]) -> String {
    bytes.iter().map(|b| char::from(*b)).collect()
}

fn inflate(data: &[u8]) -> std::result::Result<Vec<u8>, String> {
    let mut out = Vec::new();
    flate2::read::ZlibDecoder::new(data)
        .take(MAX_INFLATED + 1)
        .read_to_end(&mut out)
        .map_err(|e| format!("bad zlib data: {e}"))?;
    if out.len() as u64 > MAX_INFLATED {
        return Err(format!("decompresses to more than {MAX_INFLATED} bytes"));
    }
    Ok(out)
}

fn decode_text_chunk(data: &[u8]) -> std::result::Result<TextChunk, String> {
    let (keyword, rest) = split_keyword(data)?;
    Ok(TextChunk {
        keyword,
        text: latin1(rest),
    })
}

fn decode_ztxt_chunk(data: &[u8]) -> std::result::Result<TextChunk, String> {
    let (keyword, rest) = split_keyword(data)?;
    let (&method, compressed) = rest.split_first().ok_or("missing compression method")?;
    if method != 0 {
        return Err(format!("unknown compression method {method}"));
    }
    Ok(TextChunk {
        keyword,
        text: latin1(&inflate(compressed)?),
    })
}

fn decode_itxt_chunk(data: &[u8]) -> std::result::Result<TextChunk, String> {
    let (keyword, rest) = split_keyword(data)?;
    if rest.len() < 2 {
        return Err("truncated iTXt header".into());
    }
    let (flag, method, rest) = (rest[0], rest[1], &rest[2..]);
    let lang_end = rest
        .iter()
        .position(|b| *b == 0)
        .ok_or("missing language tag")?;
    let rest = &rest[lang_end + 1..];
    let tk_end = rest
        .iter()
        .position(|b| *b == 0)
        .ok_or("missing translated keyword")?;
    let body = &rest[tk_end + 1..];
    let raw = match (flag, method) {
        (0, _) => body.to_vec(),
        (1, 0) => inflate(body)?,
        (1, m) => return Err(format!("unknown compression method {m}")),
        (f, _) => return Err(format!("bad compression flag {f}")),
    };
    let text = String::from_utf8(raw).map_err(|_| "iTXt text is not UTF-8".to_string())?;
    Ok(TextChunk { keyword, text })
}

fn chunk_bytes(kind: &[u8; 4], data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() + 12);
    let len = u32::try_from(data.len()).unwrap_or(u32::MAX);
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let mut h = crc32fast::Hasher::new();
    h.update(kind);
    h.update(data);
    out.extend_from_slice(&h.finalize().to_be_bytes());
    out
}

/// Whether a text chunk keyword is one of the card keywords (case-insensitive, as SillyTavern).
pub fn is_card_keyword(keyword: &str) -> bool {
    keyword.eq_ignore_ascii_case("chara") || keyword.eq_ignore_ascii_case("ccv3")
}

fn is_card_chunk(c: &Chunk<'_>) -> bool {
    matches!(&c.kind, b"tEXt" | b"iTXt" | b"zTXt")
        && split_keyword(c.data).is_ok_and(|(k, _)| is_card_keyword(&k))
}

/// Returns the image with every `chara`/`ccv3` text chunk removed (all other bytes untouched).
pub fn strip_card_chunks(bytes: &[u8]) -> Result<Vec<u8>> {
    let chunks = chunks(bytes)?;
    let mut out = Vec::with_capacity(bytes.len());
    out.extend_from_slice(&SIGNATURE);
    for c in &chunks {
        if !is_card_chunk(c) {
            out.extend_from_slice(&bytes[c.offset..c.offset + 12 + c.data.len()]);
        }
    }
    Ok(out)
}

/// Splices `tEXt` chunks (keyword, ASCII text) into `image` just before `IEND`, after removing
/// any existing card chunks. The image data is kept byte for byte.
pub fn write_text_chunks(image: &[u8], texts: &[(&str, &str)]) -> Result<Vec<u8>> {
    let chunks = chunks(image)?;
    let mut out = Vec::with_capacity(
        image.len()
            + texts
                .iter()
                .map(|(k, t)| k.len() + t.len() + 13)
                .sum::<usize>(),
    );
    out.extend_from_slice(&SIGNATURE);
    for c in &chunks {
        if is_card_chunk(c) {
            continue;
        }
        if &c.kind == b"IEND" {
            for (k, t) in texts {
                let mut data = Vec::with_capacity(k.len() + 1 + t.len());
                data.extend_from_slice(k.as_bytes());
                data.push(0);
                data.extend_from_slice(t.as_bytes());
                out.extend_from_slice(&chunk_bytes(b"tEXt", &data));
            }
        }
        out.extend_from_slice(&image[c.offset..c.offset + 12 + c.data.len()]);
    }
    Ok(out)
}

/// A small valid placeholder image (64×64, one grey tone) for cards that have no avatar.
///
/// Written with the chunk writer above and flate2 (already here to read zTXt), so the `png`
/// crate is needed only by the tests that decode what we write.
pub fn placeholder_png() -> Result<Vec<u8>> {
    const SIDE: u32 = 64;
    let mut header = Vec::with_capacity(13);
    header.extend_from_slice(&SIDE.to_be_bytes());
    header.extend_from_slice(&SIDE.to_be_bytes());
    // Bit depth 8, colour type 2 (RGB), deflate, adaptive filtering, no interlace.
    header.extend_from_slice(&[8, 2, 0, 0, 0]);
    // Each scanline: filter type 0 (none), then the row's RGB bytes.
    let row = 1 + SIDE as usize * 3;
    let mut raw = vec![0x80u8; row * SIDE as usize];
    for line in raw.chunks_mut(row) {
        line[0] = 0;
    }
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    std::io::Write::write_all(&mut z, &raw)
        .map_err(|e| FormatError::whole(format!("cannot write placeholder PNG: {e}")))?;
    let data = z
        .finish()
        .map_err(|e| FormatError::whole(format!("cannot write placeholder PNG: {e}")))?;
    let mut out = Vec::with_capacity(SIGNATURE.len() + 64 + data.len());
    out.extend_from_slice(&SIGNATURE);
    out.extend_from_slice(&chunk_bytes(b"IHDR", &header));
    out.extend_from_slice(&chunk_bytes(b"IDAT", &data));
    out.extend_from_slice(&chunk_bytes(b"IEND", &[]));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_placeholder_decodes_as_a_grey_64_square() {
        let img = placeholder_png().unwrap();
        let mut reader = png::Decoder::new(std::io::Cursor::new(img))
            .read_info()
            .unwrap();
        let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
        let frame = reader.next_frame(&mut pixels).unwrap();
        assert_eq!((frame.width, frame.height), (64, 64));
        assert_eq!(frame.color_type, png::ColorType::Rgb);
        assert!(pixels[..frame.buffer_size()].iter().all(|&b| b == 0x80));
    }

    #[test]
    fn splice_and_read_back() {
        let img = placeholder_png().unwrap();
        let with = write_text_chunks(&img, &[("chara", "AAAA"), ("ccv3", "BBBB")]).unwrap();
        let mut w = Vec::new();
        let t = text_chunks(&with, &mut w).unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(
            t[1],
            TextChunk {
                keyword: "ccv3".into(),
                text: "BBBB".into()
            }
        );
        // Rewriting replaces instead of duplicating, and stripping restores the image.
        let again = write_text_chunks(&with, &[("chara", "CC")]).unwrap();
        assert_eq!(text_chunks(&again, &mut w).unwrap().len(), 1);
        assert_eq!(strip_card_chunks(&again).unwrap(), img);
        // The png crate still decodes the spliced file.
        let dec = png::Decoder::new(std::io::Cursor::new(again));
        assert!(dec.read_info().is_ok());
    }

    #[test]
    fn truncated_png_is_refused() {
        let bytes = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00";
        let e = chunks(bytes).unwrap_err();
        assert!(e.message.contains("truncated"), "{e}");
        assert!(chunks(b"GIF89a").is_err());
    }

    #[test]
    fn ztxt_and_itxt_are_read() {
        use std::io::Write;
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(b"hello").unwrap();
        let comp = z.finish().unwrap();
        let mut data = b"chara\0\0".to_vec();
        data.extend_from_slice(&comp);
        assert_eq!(decode_ztxt_chunk(&data).unwrap().text, "hello");
        let it = b"ccv3\0\0\0en\0\0h\xC3\xA9".to_vec();
        assert_eq!(decode_itxt_chunk(&it).unwrap().text, "hé");
    }
}
