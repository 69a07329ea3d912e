// Turndown on the same pages as benches/html_to_markdown.rs, for the ratio in BENCHMARKS.md.
// Install Turndown outside the repository and point NODE_PATH at it (the generated page of
// the Rust bench is written by `TAVO_BENCH_WRITE_GENERATED=/tmp/g.html cargo bench ...`):
//   mkdir -p /tmp/td && (cd /tmp/td && npm install turndown)
//   NODE_PATH=/tmp/td/node_modules node crates/web/benches/turndown.js FILE.html...
// Prints, per page, the best of 5 runs of `new TurndownService().turndown(html)` in MB/s
// (MB = 2^20 bytes, the unit criterion reports as MiB/s), after one warm-up run.
const fs = require("fs");
const TurndownService = require("turndown");

for (const file of process.argv.slice(2)) {
  const html = fs.readFileSync(file, "utf8");
  const bytes = Buffer.byteLength(html);
  const service = new TurndownService({ headingStyle: "atx", codeBlockStyle: "fenced" });
  service.remove(["script", "style", "noscript", "template"]);
  service.turndown(html);
  let best = Infinity;
  let out = "";
  for (let i = 0; i < 5; i++) {
    const t0 = process.hrtime.bigint();
    out = service.turndown(html);
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    best = Math.min(best, ms);
  }
  const mibps = bytes / 1048576 / (best / 1000);
  console.log(`${file}\t${(bytes / 1048576).toFixed(2)} MiB\t${best.toFixed(1)} ms\t${mibps.toFixed(1)} MiB/s\t-> ${(out.length / 1024).toFixed(0)} KiB`);
}
