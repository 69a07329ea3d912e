// The generated lorebook of the workbench test and its benchmark: entry i of a big book, with
// two keys, ~80 characters of content, every position, some disabled and some constant.

export const POSITIONS = ['lorebookBefore', 'lorebookAfter', 'atDepth', 'topOfExampleMessages', 'bottomOfExampleMessages'];

/** @param {number} i */
export function entry(i) {
  return {
    identifier: `e${i}`,
    name: `Entry ${i}`,
    content: `Lore number ${i}: the ${['river', 'forest', 'castle', 'harbour'][i % 4]} keeps secret ${i * 7919 % 10007}.`
      + (i === 7777 ? ' The needle-in-the-haystack lives here.' : ''),
    keywords: [`key${i}`, `word${i % 97}`],
    secondaryKeywords: i % 10 === 0 ? [`extra${i}`] : [],
    enabled: i % 13 !== 0,
    strategy: i % 50 === 0 ? 'constant' : 'keyword',
    injectionPosition: POSITIONS[i % POSITIONS.length],
    injectionDepth: i % 5,
    order: i % 200,
  };
}

/** A book of `n` generated entries. @param {number} n */
export function bigBook(n) {
  return { name: 'Big book', entries: Array.from({ length: n }, (_, i) => entry(i)) };
}
