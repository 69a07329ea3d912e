#!/usr/bin/env python3
"""Re-fetch the browser app's vendored libraries from the npm registry and check their hashes.

The app (web/) has no build step: the few libraries it uses are ES module files copied out of
their npm tarballs into web/vendor/<name>-<version>/, beside their licences. This script is the
only way those files change:

    python3 scripts/vendor-web.py            # fetch every package, check each file's sha256
                                             # against web/vendor/SHA256SUMS, write the files
    python3 scripts/vendor-web.py --check    # also fail if a file in web/vendor differs
    python3 scripts/vendor-web.py --update   # after changing a version below: record new hashes

Tarballs are fetched with `npm pack` (the ordinary npm client, its configured registry); npm
itself checks each tarball against the registry's sha512 integrity.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENDOR = ROOT / "web" / "vendor"
SUMS = VENDOR / "SHA256SUMS"

# package, version, directory under web/vendor, [(path in the tarball, file name)]
PACKAGES = [
    ("preact", "11.2.0", "preact-11.2.0", [
        ("package/dist/preact.mjs", "preact.mjs"),
        ("package/hooks/dist/hooks.mjs", "hooks.mjs"),
        ("package/LICENSE", "LICENSE"),
    ]),
    ("htm", "3.1.1", "htm-3.1.1", [
        ("package/dist/htm.mjs", "htm.mjs"),
        ("package/LICENSE", "LICENSE"),
    ]),
    ("@preact/signals-core", "1.14.5", "signals-core-1.14.5", [
        ("package/dist/signals-core.mjs", "signals-core.mjs"),
        ("package/LICENSE", "LICENSE"),
    ]),
    ("@preact/signals", "2.11.4", "signals-2.11.4", [
        ("package/dist/signals.mjs", "signals.mjs"),
        ("package/LICENSE", "LICENSE"),
    ]),
    ("marked", "18.2.1", "marked-18.2.1", [
        ("package/lib/marked.esm.js", "marked.esm.js"),
        ("package/LICENSE", "LICENSE"),
    ]),
    ("dompurify", "3.5.0", "dompurify-3.5.0", [
        ("package/dist/purify.min.js", "purify.min.js"),
        ("package/LICENSE", "LICENSE"),
    ]),
]


def read_sums() -> dict[str, str]:
    sums: dict[str, str] = {}
    if SUMS.exists():
        for line in SUMS.read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                digest, name = line.split(None, 1)
                sums[name.strip()] = digest
    return sums


def npm_pack(spec: str, dest: Path) -> Path:
    out = subprocess.run(
        ["npm", "pack", spec, "--json", "--pack-destination", str(dest)],
        check=True, capture_output=True, text=True,
    ).stdout
    info = json.loads(out)[0]
    return dest / info["filename"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="also fail when web/vendor differs")
    mode.add_argument("--update", action="store_true", help="record the fetched files' hashes")
    args = ap.parse_args()

    recorded = read_sums()
    fetched: dict[str, bytes] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, version, folder, files in PACKAGES:
            tgz = npm_pack(f"{name}@{version}", Path(tmp))
            with tarfile.open(tgz, "r:gz") as tar:
                for member, out_name in files:
                    f = tar.extractfile(member)
                    if f is None:
                        print(f"error: {name}@{version}: {member} is not in the tarball", file=sys.stderr)
                        return 1
                    fetched[f"{folder}/{out_name}"] = f.read()
            print(f"fetched {name}@{version}", file=sys.stderr)

    failures = 0
    for rel, data in fetched.items():
        digest = hashlib.sha256(data).hexdigest()
        if not args.update and recorded.get(rel) != digest:
            print(f"error: {rel}: sha256 {digest} is not the recorded {recorded.get(rel)}", file=sys.stderr)
            failures += 1
        if args.check:
            path = VENDOR / rel
            if not path.exists() or path.read_bytes() != data:
                print(f"error: web/vendor/{rel} differs from the registry's file", file=sys.stderr)
                failures += 1
    if failures:
        return 1
    if not args.check:
        for rel, data in fetched.items():
            path = VENDOR / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        if args.update:
            lines = ["# sha256 of each vendored file, written by scripts/vendor-web.py --update"]
            lines += [f"{hashlib.sha256(d).hexdigest()}  {rel}" for rel, d in sorted(fetched.items())]
            SUMS.write_text("\n".join(lines) + "\n")
    print(f"{len(fetched)} files ok", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
