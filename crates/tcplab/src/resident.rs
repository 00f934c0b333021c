//! The pages of this program's machine code given back while it runs one scenario (issue 28:
//! peak RSS ≤ 2× htsim's). Used by `tcplab run` (tcplab-native): before the build
//! (`run::prepare_with_limits_owned`) and before the event loop.
//!
//! The kernel maps a program's code into the process 64 KB at a time around each page it runs
//! ("fault-around"), so by the first event nearly all of tcplab-native's 4.9 MB of code is
//! resident: the argument parser, the TOML reader, the memory estimate, the build, which the run
//! never uses again. [`release_code_pages`] unmaps the code's resident pages at once
//! (`madvise(MADV_DONTNEED)` on the executable mapping); what runs next maps back only the code
//! it runs, from the page cache (a few dozen minor faults). Figures: benches/htsim-dumbbell/RESULTS.md.
//!
//! Only a mapping no page of which this process has written is released: dropping a written
//! (private) page would lose the write, e.g. a debugger's breakpoint. The code is never written
//! otherwise (a position-independent executable has no text relocations).

/// The executable mapping holding `addr` in `/proc/self/smaps` text: its address range, unless
/// any of its pages is private to this process (written: `Anonymous` above 0 kB).
pub fn code_mapping(smaps: &str, addr: usize) -> Option<(usize, usize)> {
    let mut current: Option<(usize, usize)> = None;
    for line in smaps.lines() {
        let mut words = line.split_whitespace();
        let Some(first) = words.next() else { continue };
        if let Some((a, b)) = first.split_once('-').and_then(|(a, b)| Some((usize::from_str_radix(a, 16).ok()?, usize::from_str_radix(b, 16).ok()?))) {
            // a mapping's first line: "start-end perms offset dev inode [path]"
            let perms = words.next().unwrap_or("");
            current = (perms == "r-xp" && a <= addr && addr < b).then_some((a, b));
        } else if first == "Anonymous:" {
            if let Some(range) = current {
                let kb: u64 = words.next().and_then(|w| w.parse().ok()).unwrap_or(u64::MAX);
                return (kb == 0).then_some(range);
            }
        }
    }
    None
}

/// Give back the resident pages of this program's code (see the module's text). Does nothing
/// where /proc is unreadable or the code was written to.
pub fn release_code_pages() {
    let here = release_code_pages as fn() as usize;
    let Ok(smaps) = std::fs::read_to_string("/proc/self/smaps") else { return };
    if let Some((start, end)) = code_mapping(&smaps, here) {
        // SAFETY: the range is a whole private, read-only, executable file mapping that this
        // process never wrote to: its pages are read back from the file when next run.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_DONTNEED);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMAPS: &str = "\
55d0c0000000-55d0c0100000 r--p 00000000 fe:00 123 /usr/bin/tcplab-native
Rss:                 640 kB
Anonymous:             0 kB
55d0c0100000-55d0c0600000 r-xp 00100000 fe:00 123 /usr/bin/tcplab-native
Size:               5120 kB
Rss:                4460 kB
Anonymous:             0 kB
VmFlags: rd ex mr mw me
55d0c0600000-55d0c0700000 r--p 00600000 fe:00 123 /usr/bin/tcplab-native
Anonymous:            92 kB
7f0000000000-7f0000100000 r-xp 00000000 fe:00 9 /usr/lib/libc.so.6
Anonymous:             0 kB
";

    /// The executable mapping holding the address, not another one (libc's, the read-only data).
    #[test]
    fn finds_the_code_mapping_of_an_address() {
        assert_eq!(code_mapping(SMAPS, 0x55d0c0123456), Some((0x55d0c0100000, 0x55d0c0600000)));
        assert_eq!(code_mapping(SMAPS, 0x55d0c0000010), None, "read-only data is not code");
        assert_eq!(code_mapping(SMAPS, 0x55d0c0600010), None);
        assert_eq!(code_mapping(SMAPS, 0x1000), None, "an address in no mapping");
    }

    /// A code mapping with a written page (a debugger's breakpoint) is kept.
    #[test]
    fn keeps_a_written_mapping() {
        let written = SMAPS.replacen("Anonymous:             0 kB\nVmFlags", "Anonymous:             4 kB\nVmFlags", 1);
        assert_eq!(code_mapping(&written, 0x55d0c0123456), None);
    }

    /// Released, the code's resident pages go and the program goes on running it.
    #[test]
    fn releases_this_programs_code() {
        let rss = || {
            let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
            let here = releases_this_programs_code as fn() as usize;
            let mut in_code = false;
            for line in smaps.lines() {
                if let Some((a, b)) = line.split_whitespace().next().and_then(|w| w.split_once('-')) {
                    if let (Ok(a), Ok(b)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16)) {
                        in_code = a <= here && here < b;
                        continue;
                    }
                }
                if in_code && line.starts_with("Rss:") {
                    return line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap();
                }
            }
            panic!("no mapping holds this test's code")
        };
        // touch code all over the test binary first (its resident pages go up)
        let _ = format!("{:?} {}", std::env::args().collect::<Vec<_>>(), serde_json::json!({"a": [1.5, 2]}));
        let before = rss();
        release_code_pages();
        let after = rss();
        assert!(after < before, "resident code {before} kB before, {after} kB after");
        assert_eq!(code_mapping(SMAPS, 0x55d0c0123456).map(|(a, b)| b - a), Some(5 << 20), "still runs");
    }
}
