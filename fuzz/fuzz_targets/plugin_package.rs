//! Plugin packages (`.tpg`): reading never panics, whatever the zip or the manifest holds.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = tavo_formats::plugin::read_package(data);
    let files = std::collections::BTreeMap::from([("manifest.json".to_owned(), data.to_vec())]);
    let _ = tavo_formats::plugin::from_files(files, Vec::new());
});
