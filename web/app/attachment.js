// An image for the next message (Tavo §14.4, image sending): picked in the composer, saved as a
// chat file at once (`tavo_file_save`, so the message itself stays small and the image is kept
// with the chat), and sent as the message's `image`. The server describes it for the model
// when image sending is on; the stored text never changes.
import { op } from './api.js';
import { chatView, setAttachment } from './store.js';

/** What the server sends to a description model at most (engine `describe::MAX_IMAGE_BYTES`). */
export const MAX_IMAGE_BYTES = 10 * 1024 * 1024;

/** The formats every provider takes (engine `describe`, `sniff_mime`). */
export const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/webp', 'image/gif'];

/** A chat-file name for an upload: the picked name's safe characters, made unique. @param {string} name */
function fileName(name) {
  const dot = name.lastIndexOf('.');
  const stem = (dot > 0 ? name.slice(0, dot) : name).replace(/[^\p{L}\p{N}_-]+/gu, '_').slice(0, 60) || 'image';
  const ext = dot > 0 ? name.slice(dot + 1).replace(/[^a-z0-9]/gi, '').slice(0, 5).toLowerCase() : 'png';
  return `upload-${Date.now().toString(36)}-${stem}.${ext || 'png'}`;
}

/** @param {Blob} file @returns {Promise<string>} */
function dataUrl(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(reader.error || new Error('the file could not be read'));
    reader.readAsDataURL(file);
  });
}

/**
 * Saves `file` as a file of the open chat and attaches it to the next message. Refuses what the
 * server would refuse, before any upload.
 * @param {File} file
 */
export async function attachImage(file) {
  const chatId = chatView.id.value;
  if (chatId == null) throw new Error('open a chat first');
  if (!file.type.startsWith('image/')) throw new Error(`${file.name} is not an image`);
  if (!IMAGE_TYPES.includes(file.type)) throw new Error(`${file.name}: only PNG, JPEG, WebP and GIF images can be sent`);
  if (file.size > MAX_IMAGE_BYTES) throw new Error(`${file.name} is ${(file.size / 1048576).toFixed(1)} MB; at most 10 MB can be sent`);
  const saved = await op('tavo_file_save', { name: fileName(file.name), content: await dataUrl(file), options: { scope: 'chat', encoding: 'dataUrl' } }, { chat: chatId });
  if (chatView.id.value !== chatId) return;
  const name = String(saved.name || saved.path.split('/').pop());
  setAttachment({ path: saved.path, name: file.name, url: `/api/chats/${chatId}/files/${encodeURIComponent(name)}` });
}
