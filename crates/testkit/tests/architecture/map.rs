//! The map stays true: ARCHITECTURE.md's list of the edges between the workspace's crates is
//! the edges the Cargo.toml files declare, exactly, and the bird's-eye diagram names every
//! crate. A new dependency, or one removed, fails here until the map says so.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

use serde_json::Value;

/// What a dependency is for: shipped code (`[dependencies]`, `[build-dependencies]`) or only
/// tests, benches and examples (`[dev-dependencies]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Use {
    /// Normal and build dependencies: in the shipped code.
    Shipped,
    /// Dev-dependencies.
    Dev,
}

/// A workspace package as `cargo metadata` describes it.
#[derive(Debug)]
pub struct Package {
    /// The package name (`tavo-engine`, `tavo` for the CLI).
    pub name: String,
    /// Its folder under `crates/` (`engine`, `cli`): the name ARCHITECTURE.md uses.
    pub dir: String,
    /// Every dependency, by package name.
    pub deps: Vec<(String, Use)>,
}

/// The workspace's packages (`cargo metadata --no-deps`).
pub fn workspace() -> Vec<Package> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap_or_else(|e| panic!("cannot run cargo metadata: {e}"));
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("cargo metadata is not JSON: {e}"));
    let mut packages = Vec::new();
    for package in meta["packages"].as_array().into_iter().flatten() {
        let manifest = std::path::Path::new(package["manifest_path"].as_str().unwrap_or_default());
        let dir = manifest
            .parent()
            .and_then(|d| d.file_name())
            .and_then(|d| d.to_str())
            .unwrap_or_default();
        let deps = package["dependencies"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|d| {
                let kind = match d["kind"].as_str() {
                    Some("dev") => Use::Dev,
                    _ => Use::Shipped,
                };
                Some((d["name"].as_str()?.to_owned(), kind))
            })
            .collect();
        packages.push(Package {
            name: package["name"].as_str().unwrap_or_default().to_owned(),
            dir: dir.to_owned(),
            deps,
        });
    }
    packages
}

/// Edges between workspace crates, by folder name: crate → the crates it depends on.
pub type Edges = BTreeMap<String, BTreeSet<String>>;

/// The edges between workspace crates in `packages`: shipped ones, and the crates that only
/// the dev-dependencies add.
pub fn crate_edges(packages: &[Package]) -> (Edges, Edges) {
    let dir_of: BTreeMap<&str, &str> = packages
        .iter()
        .map(|p| (p.name.as_str(), p.dir.as_str()))
        .collect();
    let mut shipped = Edges::new();
    let mut dev = Edges::new();
    for p in packages {
        let of = |want: Use| -> BTreeSet<String> {
            p.deps
                .iter()
                .filter(|(_, u)| *u == want)
                .filter_map(|(name, _)| dir_of.get(name.as_str()).map(|d| (*d).to_owned()))
                .collect()
        };
        let normal = of(Use::Shipped);
        let dev_only: BTreeSet<String> = of(Use::Dev).difference(&normal).cloned().collect();
        if !dev_only.is_empty() {
            dev.insert(p.dir.clone(), dev_only);
        }
        shipped.insert(p.dir.clone(), normal);
    }
    (shipped, dev)
}

/// Marks the edge list in ARCHITECTURE.md: the fenced block right after this line.
pub const EDGE_LIST_MARK: &str =
    "<!-- crate edges: checked by crates/testkit/tests/architecture/map.rs -->";

/// The arrow of a shipped edge and of a dev-only edge in the list.
const SHIPPED: char = '→';
const DEV: char = '⇢';

/// The edge list of an ARCHITECTURE.md: each line `crate → deps…` (every crate once, even with
/// nothing after the arrow) or `crate ⇢ deps…` (what its dev-dependencies add).
pub fn listed_edges(md: &str) -> Result<(Edges, Edges), String> {
    let block = fenced_block_after(md, EDGE_LIST_MARK)
        .ok_or_else(|| format!("no fenced block after {EDGE_LIST_MARK}"))?;
    let mut shipped = Edges::new();
    let mut dev = Edges::new();
    for line in block.lines().filter(|l| !l.trim().is_empty()) {
        let (arrow, at) = line
            .char_indices()
            .find(|(_, c)| *c == SHIPPED || *c == DEV)
            .map(|(at, c)| (c, at))
            .ok_or_else(|| format!("no {SHIPPED} or {DEV} in {line:?}"))?;
        let krate = line[..at].trim().to_owned();
        let deps = line[at + arrow.len_utf8()..]
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|d| !d.is_empty())
            .map(str::to_owned)
            .collect();
        let edges = if arrow == SHIPPED {
            &mut shipped
        } else {
            &mut dev
        };
        if edges.insert(krate.clone(), deps).is_some() {
            return Err(format!("{krate} {arrow} is listed twice"));
        }
    }
    Ok((shipped, dev))
}

/// The text of the first fenced block after the line `mark`.
fn fenced_block_after<'a>(md: &'a str, mark: &str) -> Option<&'a str> {
    let after = &md[md.find(mark)? + mark.len()..];
    let open = after.find("```")?;
    let body = &after[open..];
    let body = &body[body.find('\n')? + 1..];
    Some(&body[..body.find("```")?])
}

/// The edge list as ARCHITECTURE.md should hold it, lower crates first.
pub fn render(shipped: &Edges, dev: &Edges) -> String {
    let mut order: Vec<&String> = shipped.keys().collect();
    order.sort_by_key(|k| (depth(shipped, k), k.as_str()));
    let width = order.iter().map(|k| k.len()).max().unwrap_or(0);
    let mut out = String::new();
    for (arrow, edges) in [(SHIPPED, shipped), (DEV, dev)] {
        for k in order.iter().filter(|k| edges.contains_key(**k)) {
            let mut deps: Vec<&String> = edges[*k].iter().collect();
            deps.sort_by_key(|d| (depth(shipped, d), d.as_str()));
            let deps: Vec<&str> = deps.iter().map(|d| d.as_str()).collect();
            let line = format!("{k:width$} {arrow} {}", deps.join(" "));
            out.push_str(line.trim_end());
            out.push('\n');
        }
    }
    out
}

/// The length of the longest chain of shipped edges below `krate`.
fn depth(shipped: &Edges, krate: &str) -> usize {
    shipped
        .get(krate)
        .into_iter()
        .flatten()
        .map(|d| 1 + depth(shipped, d))
        .max()
        .unwrap_or(0)
}

/// The shipped edges not implied by others (the transitive reduction): what a diagram draws.
pub fn reduction(shipped: &Edges) -> Edges {
    let reaches = |from: &str, to: &str| {
        let mut stack = vec![from.to_owned()];
        let mut seen = BTreeSet::new();
        while let Some(k) = stack.pop() {
            for d in shipped.get(&k).into_iter().flatten() {
                if d == to {
                    return true;
                }
                if seen.insert(d.clone()) {
                    stack.push(d.clone());
                }
            }
        }
        false
    };
    shipped
        .iter()
        .map(|(k, deps)| {
            let direct = deps
                .iter()
                .filter(|d| !deps.iter().any(|via| via != *d && reaches(via, d)))
                .cloned()
                .collect();
            (k.clone(), direct)
        })
        .collect()
}

fn architecture_md() -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ARCHITECTURE.md");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn architecture_md_lists_the_crate_edges_the_cargo_toml_files_declare() {
    let packages = workspace();
    assert!(packages.len() > 5, "not the tavo workspace");
    let (shipped, dev) = crate_edges(&packages);
    let md = architecture_md();
    let (listed_shipped, listed_dev) = listed_edges(&md).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        listed_shipped == shipped && listed_dev == dev,
        "ARCHITECTURE.md's edge list is not what the Cargo.toml files say. It should read:\n\n{}\n\
         and the bird's-eye diagram draw these edges (the others follow from them):\n{}",
        render(&shipped, &dev),
        render(&reduction(&shipped), &Edges::new())
    );
    let diagram = fenced_block_after(&md, "## Bird's-eye view").unwrap_or_default();
    let missing: Vec<&str> = packages
        .iter()
        .map(|p| p.dir.as_str())
        .filter(|d| !diagram.contains(&format!("crates/{d}")))
        .collect();
    assert!(
        missing.is_empty(),
        "the bird's-eye diagram leaves out {missing:?}"
    );
}

#[test]
fn the_edge_list_reader_takes_both_arrows_and_refuses_a_crate_listed_twice() {
    let md = format!(
        "text\n{EDGE_LIST_MARK}\n\n```text\nmodel   →\nstore   → model\nprompt  → model, store\nstore   ⇢ formats\n```\n"
    );
    let (shipped, dev) = listed_edges(&md).unwrap_or_else(|e| panic!("{e}"));
    let set = |s: &[&str]| s.iter().map(|s| (*s).to_owned()).collect::<BTreeSet<_>>();
    assert_eq!(shipped["model"], set(&[]));
    assert_eq!(shipped["prompt"], set(&["model", "store"]));
    assert_eq!(dev["store"], set(&["formats"]));
    assert_eq!(
        render(&shipped, &dev),
        "model  →\nstore  → model\nprompt → model store\nstore  ⇢ formats\n"
    );
    assert_eq!(reduction(&shipped)["prompt"], set(&["store"]));
    let twice = md.replace("prompt  → model, store", "store → model");
    assert!(listed_edges(&twice).is_err());
    assert!(listed_edges("no list here").is_err());
}
