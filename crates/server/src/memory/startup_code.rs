//! Letting go of the executable's pages that only start-up needed.
//!
//! Why: `tavo` is a 60 MB executable, and starting a server runs code spread all over it —
//! argument parsing for every command, the route table and its OpenAPI document, migrations,
//! the operation registry's schemas, the tokenizer pattern's compilation. Each first touch of
//! a code page maps it *and* its cached neighbours (the kernel's fault-around, 64 KiB), so
//! after start-up ≈ 33 MB of the file were mapped into the process — counted in its RSS —
//! while the idle server runs a few hundred kilobytes of it (issue 29; the floor of the same
//! libraries serving one route is 9 MB, see BENCHMARKS.md).
//!
//! These pages are clean, shared page cache: dropping them from the process's page tables
//! (`MADV_DONTNEED` on a private mapping that was never written) frees nothing anyone else
//! uses, loses no data, and the code still in use maps straight back from the page cache on
//! its next run, without disk I/O. What is released is decided from `/proc/self/smaps`: only
//! mappings of the executable itself that are neither writable nor hold a private copy of a
//! page (the relocated read-only data, `RELRO`, does: dropping it would bring back the
//! unrelocated bytes, so it is never touched).

/// One mapping of `/proc/self/smaps`, with what the release needs to know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Mapping {
    /// First address.
    pub start: usize,
    /// One past the last address.
    pub end: usize,
    /// `rwxp`-style permissions.
    pub perms: String,
    /// The file mapped, if any.
    pub path: String,
    /// Resident kilobytes.
    pub rss_kb: u64,
    /// Kilobytes of anonymous pages: in a file mapping, the pages this process copied on write
    /// (the loader's relocations). `Private_Dirty` is not this: a freshly written executable's
    /// page cache is dirty until written back, and those pages are still the file's.
    pub private_copies_kb: u64,
}

impl Mapping {
    /// A clean, read-only mapping of `exe`: safe to drop from the page tables.
    fn releasable(&self, exe: &str) -> bool {
        self.path == exe
            && !self.perms.contains('w')
            && self.private_copies_kb == 0
            && self.rss_kb > 0
    }
}

/// Parses `/proc/PID/smaps`. Lines it does not know are skipped; a malformed header ends the
/// mapping before it (nothing is guessed).
pub(crate) fn parse_smaps(text: &str) -> Vec<Mapping> {
    let mut out: Vec<Mapping> = Vec::new();
    for line in text.lines() {
        let mut words = line.split_whitespace();
        let Some(first) = words.next() else { continue };
        if let Some((a, b)) = first.split_once('-')
            && let (Ok(start), Ok(end)) =
                (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16))
        {
            let perms = words.next().unwrap_or_default().to_owned();
            // offset, device, inode, then the path (which may contain spaces).
            let path = words.skip(3).collect::<Vec<_>>().join(" ");
            out.push(Mapping {
                start,
                end,
                perms,
                path,
                rss_kb: 0,
                private_copies_kb: 0,
            });
            continue;
        }
        let Some(m) = out.last_mut() else { continue };
        let kb = || {
            line.split_whitespace()
                .nth(1)
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0)
        };
        match first {
            "Rss:" => m.rss_kb = kb(),
            "Anonymous:" => m.private_copies_kb = kb(),
            _ => {}
        }
    }
    out
}

/// Drops the executable's clean read-only pages from this process's page tables; answers the
/// kilobytes that were resident in the mappings released. Linux only; elsewhere nothing.
#[allow(unsafe_code)] // FFI: madvise on mappings checked above (see the module's notes).
pub fn release_startup_code() -> u64 {
    #[cfg(target_os = "linux")]
    {
        let Ok(exe) = std::fs::read_link("/proc/self/exe") else {
            return 0;
        };
        let Ok(smaps) = std::fs::read_to_string("/proc/self/smaps") else {
            return 0;
        };
        let exe = exe.to_string_lossy();
        let mut released = 0;
        for m in parse_smaps(&smaps).iter().filter(|m| m.releasable(&exe)) {
            // SAFETY: the range is a whole mapping the kernel just listed, of the executable
            // file, read-only and without a single private copy of a page: MADV_DONTNEED only
            // unmaps its pages, which map back unchanged from the file's page cache when
            // touched (the code running this call included). No Rust object lives there.
            let done = unsafe {
                libc::madvise(
                    m.start as *mut libc::c_void,
                    m.end - m.start,
                    libc::MADV_DONTNEED,
                )
            };
            if done == 0 {
                released += m.rss_kb;
            }
        }
        released
    }
    #[cfg(not(target_os = "linux"))]
    {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMAPS: &str = "\
5581a0a00000-5581a0c00000 r--p 00000000 08:01 123 /opt/tavo
Size:               2048 kB
Rss:                 512 kB
Private_Dirty:         0 kB
Anonymous:             0 kB
5581a0c00000-5581a3000000 r-xp 00200000 08:01 123 /opt/tavo
Rss:               20480 kB
Private_Dirty:     20480 kB
Anonymous:             0 kB
5581a3000000-5581a3100000 r--p 02600000 08:01 123 /opt/tavo
Rss:                1024 kB
Private_Dirty:       900 kB
Anonymous:           900 kB
5581a3100000-5581a3200000 rw-p 02700000 08:01 123 /opt/tavo
Rss:                  64 kB
Anonymous:            64 kB
7f0000000000-7f0000100000 r-xp 00000000 08:01 9 /usr/lib/libc.so.6
Rss:                 900 kB
Anonymous:             0 kB
7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0 [stack]
Rss:                  16 kB
";

    #[test]
    fn only_clean_read_only_mappings_of_the_executable_are_released() {
        let maps = parse_smaps(SMAPS);
        assert_eq!(maps.len(), 6);
        let released: Vec<_> = maps
            .iter()
            .filter(|m| m.releasable("/opt/tavo"))
            .map(|m| (m.perms.as_str(), m.rss_kb))
            .collect();
        // Not the relocated read-only data (private copies), not .data, not libc, not the stack.
        assert_eq!(released, [("r--p", 512), ("r-xp", 20480)]);
    }

    #[test]
    fn a_path_with_spaces_is_read_whole() {
        let maps = parse_smaps("1000-2000 r-xp 00000000 08:01 5 /opt/my apps/tavo\nRss: 4 kB\n");
        assert_eq!(maps[0].path, "/opt/my apps/tavo");
        assert!(maps[0].releasable("/opt/my apps/tavo"));
    }

    #[test]
    fn the_process_keeps_running_after_its_code_is_released() {
        let before = std::hint::black_box(parse_smaps(SMAPS).len());
        let released = release_startup_code();
        // The code and data of this very test are mapped back as they run.
        assert_eq!(std::hint::black_box(parse_smaps(SMAPS).len()), before);
        if cfg!(target_os = "linux") {
            assert!(released > 0, "the test binary's own code was resident");
        }
    }
}
