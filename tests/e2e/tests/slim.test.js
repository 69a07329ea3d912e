// The server serves the app's own scripts and style sheets without comments and indentation
// (crates/server/src/slim.rs), line for line. This checks what a real `tavo serve` sends
// against web/ with a different lexer — TypeScript's parser — so a slip in slim.rs (a `//`
// taken out of a string, a regex read as a division) fails here, not in a user's browser.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { ROOT, startMock, startTavo } from '../lib/harness.js';

const WEB = join(ROOT, 'web');

/** @type {Awaited<ReturnType<typeof startMock>>} */ let mock;
/** @type {Awaited<ReturnType<typeof startTavo>>} */ let tavo;

before(async () => {
  mock = await startMock({ turns: [{ text: 'ok' }], repeatLast: true });
  tavo = await startTavo({ mock });
});

after(async () => {
  await tavo?.stop();
  mock?.stop();
});

/** @param {string} dir @returns {string[]} paths relative to web/ */
function files(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return files(path);
    return [relative(WEB, path).replaceAll('\\', '/')];
  });
}

/** @param {string} rel */
async function served(rel) {
  const res = await fetch(`${tavo.url}/${rel}`);
  assert.equal(res.status, 200, rel);
  return res.text();
}

/**
 * The program as TypeScript parses it: every node's kind in order and every leaf's text, with
 * the text of `html`-tagged templates taken without the blanks that follow a newline (the one
 * change slim.rs makes inside a literal). Parse errors are part of it.
 * @param {string} name @param {string} text
 */
function program(name, text) {
  const sf = ts.createSourceFile(name, text, ts.ScriptTarget.ESNext, true, ts.ScriptKind.JS);
  /** @type {string[]} */
  const out = [];
  /** @param {ts.Node} node */
  const inHtmlTemplate = (node) => {
    let n = node.parent;
    while (n && !ts.isTaggedTemplateExpression(n)) {
      if (!ts.isTemplateExpression(n) && !ts.isTemplateSpan(n)) return false;
      n = n.parent;
    }
    return !!n && n.tag.getText(sf) === 'html';
  };
  /** @param {ts.Node} node */
  const visit = (node) => {
    // JSDoc comments are nodes in TypeScript's tree of a .js file; comments are what goes.
    const children = node.getChildren(sf).filter((c) => c.kind < ts.SyntaxKind.FirstJSDocNode || c.kind > ts.SyntaxKind.LastJSDocNode);
    if (children.length === 0) {
      let leaf = node.getText(sf);
      if (ts.isTemplateLiteralKind(node.kind) && inHtmlTemplate(node)) leaf = leaf.replace(/\n[ \t]+/g, '\n').replace(/[ \t]+\n/g, '\n');
      out.push(`${ts.SyntaxKind[node.kind]} ${leaf}`);
    } else {
      out.push(ts.SyntaxKind[node.kind]);
      children.forEach(visit);
    }
  };
  visit(sf);
  // @ts-ignore parseDiagnostics is internal but stable: what the parser could not read.
  const errors = (sf.parseDiagnostics || []).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  return { nodes: out, errors };
}

/** @param {string} css */
// Whitespace compared as CSS reads it: any run is one blank, and none is needed beside
// `{ } ; ,` or after `:` (before a `:` it is a descendant combinator, so it is kept).
const cssTokens = (css) => css.replace(/\/\*[\s\S]*?\*\//g, ' ').replace(/\s+/g, ' ').replace(/ ?([{};,]) ?/g, '$1').replace(/: /g, ':').trim();

test('every script is served as the same program, line for line, with fewer bytes', async () => {
  const scripts = files(join(WEB, 'app')).filter((f) => f.endsWith('.js'));
  assert.ok(scripts.length > 50, `found only ${scripts.length} scripts`);
  let sourceBytes = 0;
  let servedBytes = 0;
  for (const rel of scripts) {
    const source = readFileSync(join(WEB, rel), 'utf8');
    const text = await served(rel);
    sourceBytes += source.length;
    servedBytes += text.length;
    assert.equal(text.split('\n').length, source.split('\n').length, `${rel}: lines moved`);
    const want = program(rel, source);
    const got = program(rel, text);
    assert.deepEqual(got.errors, want.errors, `${rel}: parse errors differ`);
    assert.deepEqual(got.nodes, want.nodes, `${rel}: the served program differs from the source`);
  }
  assert.ok(servedBytes < sourceBytes * 0.9, `served ${servedBytes} of ${sourceBytes} bytes`);
});

test('style sheets lose only comments and blanks; vendored files are served byte for byte', async () => {
  for (const rel of files(WEB).filter((f) => f.endsWith('.css'))) {
    const source = readFileSync(join(WEB, rel), 'utf8');
    const text = await served(rel);
    assert.equal(text.split('\n').length, source.split('\n').length, `${rel}: lines moved`);
    assert.equal(cssTokens(text), cssTokens(source), rel);
  }
  for (const rel of files(join(WEB, 'vendor')).filter((f) => /\.m?js$/.test(f))) {
    assert.equal(await served(rel), readFileSync(join(WEB, rel), 'utf8'), rel);
  }
});
