// The long SillyTavern chat the browser benchmarks import (long-chat.js into tavo,
// st-side-by-side.js into both apps): N alternating user / Seraphina messages, as JSONL.

/** @param {number} n */
export function jsonl(n) {
  const lines = [JSON.stringify({ user_name: 'User', character_name: 'Seraphina', create_date: '2024-01-01@00h00m00s', chat_metadata: {} })];
  for (let i = 0; i < n; i++) {
    const user = i % 2 === 1;
    lines.push(JSON.stringify({ name: user ? 'User' : 'Seraphina', is_user: user, is_system: false, send_date: 'January 1, 2024 8:00am',
      mes: `Message ${i}: ${user ? 'I walk further into the forest, *looking around*.' : 'She smiles. "The **path** is safe here; rest a while." ' + 'The trees hum softly. '.repeat(1 + (i % 5))}` }));
  }
  return lines.join('\n') + '\n';
}
