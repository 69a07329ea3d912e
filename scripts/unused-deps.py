#!/usr/bin/env python3
"""Fails when a crate declares a dependency its code never names (what `cargo machete` checks,
without building it on every CI run).

For every workspace member, each dependency of `[dependencies]`, `[dev-dependencies]` and
`[build-dependencies]` must appear as `name::`, `use name`, `extern crate name` or
`name!`/`#[name` in the sources that can use it: `src/` and `build.rs` for normal
dependencies, plus `tests/`, `benches/` and `examples/` for dev-dependencies. A dependency
that is used only through a feature or a macro of another crate is listed in the crate's
`[package.metadata.unused-deps] ignore = [...]` with the reason beside it.
"""
import pathlib
import re
import sys
import tomllib

ROOT = pathlib.Path(__file__).resolve().parent.parent


def members():
    workspace = tomllib.loads((ROOT / "Cargo.toml").read_text())
    for pattern in workspace["workspace"]["members"]:
        for path in sorted(ROOT.glob(pattern)):
            if (path / "Cargo.toml").exists():
                yield path


def sources(crate, dirs):
    text = []
    for d in dirs:
        p = crate / d
        if p.is_file():
            text.append(p.read_text(errors="replace"))
        elif p.is_dir():
            for f in sorted(p.rglob("*.rs")):
                text.append(f.read_text(errors="replace"))
    return "\n".join(text)


def used(name, text):
    ident = re.escape(name.replace("-", "_"))
    return re.search(rf"(\b{ident}::|\buse\s+{ident}\b|extern\s+crate\s+{ident}\b|\b{ident}!|#\[{ident}\b)", text) is not None


def main():
    problems = []
    for crate in members():
        manifest = tomllib.loads((crate / "Cargo.toml").read_text())
        ignore = set(manifest.get("package", {}).get("metadata", {}).get("unused-deps", {}).get("ignore", []))
        lib_text = sources(crate, ["src", "build.rs"])
        dev_text = lib_text + sources(crate, ["tests", "benches", "examples"])
        for table, text in (("dependencies", lib_text), ("build-dependencies", lib_text), ("dev-dependencies", dev_text)):
            for dep, spec in manifest.get(table, {}).items():
                name = spec.get("package", dep) if isinstance(spec, dict) else dep
                if dep in ignore:
                    continue
                # A renamed dependency is named in code by its key, not its package.
                if not used(dep, text) and not used(name, text):
                    problems.append(f"{crate.relative_to(ROOT)}: [{table}] {dep} is never used")
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} unused dependencies; remove them, or list one under "
              "[package.metadata.unused-deps] ignore with the reason")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
