// DOMPurify, from its official minified build (the import map's `dompurify`). That build is a
// UMD script, not an ES module: evaluated as a module it finds neither `exports` nor `define`
// and sets `globalThis.DOMPurify`, which this module hands on. (The ES build is the same code
// unminified: 8 KB more brotli for every visitor, and the app keeps to a 150 KB budget.)

import 'dompurify';

/** @type {import('dompurify').DOMPurify} */
const DOMPurify = /** @type {any} */ (globalThis).DOMPurify;

export default DOMPurify;
