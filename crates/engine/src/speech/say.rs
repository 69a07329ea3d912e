//! "Say": synthesize a text into the TTS cache without playing it — `tavo tts say` and `POST
//! /api/tts/say` (a connection test, a voice preview) — written once, so both doors refuse the
//! same texts and pick the same voice.

use super::config::{self, VoiceTarget};
use super::{Speech, SpeechError, Spoken};

/// Whose voice says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SayVoice {
    /// The voice bound to a character or a persona (its binding's connection and voice).
    Bound(VoiceTarget),
    /// A connection (the default one when `None`) with a voice id (the connection's `voice`
    /// option when `None`).
    Connection {
        /// The connection's name.
        name: Option<String>,
        /// The voice id.
        voice: Option<String>,
    },
}

/// What to say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SayRequest {
    /// The text.
    pub text: String,
    /// Whose voice.
    pub voice: SayVoice,
    /// Run the saved playback rules on the text first, as a play does.
    pub apply_playback_rules: bool,
}

fn nothing_to_say(after_rules: bool) -> SpeechError {
    SpeechError::Invalid {
        path: "text".into(),
        problem: if after_rules {
            "nothing is left to speak after the playback rules".into()
        } else {
            "must not be empty".into()
        },
    }
}

impl Speech {
    /// Synthesizes `req.text` in the voice asked for, through the cache (see the module docs).
    /// An empty text, or one the playback rules empty, is refused at `text`.
    pub async fn say(&self, req: SayRequest) -> Result<Spoken, SpeechError> {
        if req.text.trim().is_empty() {
            return Err(nothing_to_say(false));
        }
        let (conn, voice) = match req.voice {
            SayVoice::Bound(target) => {
                let (conn, voice) = self.resolve(target).await?;
                (conn, Some(voice))
            }
            SayVoice::Connection { name, voice } => {
                let conn = self
                    .blocking(move |s| config::pick_connection(s, name.as_deref()))
                    .await?;
                (conn, voice)
            }
        };
        let text = if req.apply_playback_rules {
            self.spoken_text(req.text).await?
        } else {
            req.text
        };
        if text.trim().is_empty() {
            return Err(nothing_to_say(true));
        }
        self.synthesize(conn, voice, text).await
    }
}
