//! Pieces shared by the benchmarks that run each case in its own process.

/// Large blocks on huge pages, as in the `satqm` command (see
/// `satqm_core::alloc`).
#[global_allocator]
static ALLOC: satqm_core::alloc::HugePages = satqm_core::alloc::HugePages;

/// Peak resident memory of this process (VmHWM), KiB; 0 where
/// `/proc/self/status` is not available.
pub fn peak_rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

/// CPU time this process has run so far, seconds (`/proc/self/schedstat`,
/// nanoseconds); 0 where it is not available. On a machine shared with
/// other work it is steadier than wall time.
pub fn cpu_s() -> f64 {
    std::fs::read_to_string("/proc/self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(0.0, |ns| ns * 1e-9)
}
