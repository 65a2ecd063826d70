//! A global allocator for programs that run large simulations: the
//! system's, asking Linux to back large blocks with huge pages.
//!
//! With tens of thousands of flows every packet reads links, flows and
//! routing entries scattered over hundreds of megabytes. On 4 KiB pages
//! nearly each of those reads also misses the TLB and walks the page
//! tables; on 2 MiB pages the walks mostly vanish. Linux grants huge pages
//! to anonymous memory when transparent huge pages are `always` on, or, if
//! they are `madvise` (a common default), to ranges a program marks with
//! `MADV_HUGEPAGE`; this allocator marks every block of at least
//! [`HUGE_FROM`] bytes. It changes no result, only where memory lies.
//!
//! A binary opts in:
//!
//! ```ignore
//! #[global_allocator]
//! static ALLOC: satqm_core::alloc::HugePages = satqm_core::alloc::HugePages;
//! ```

use std::alloc::{GlobalAlloc, Layout, System};

/// Blocks of this many bytes or more are marked for huge pages (two huge
/// pages: a block must span at least one whole, aligned huge page to gain).
pub const HUGE_FROM: usize = 4 << 20;

/// The system allocator, with large blocks marked for huge pages (Linux;
/// elsewhere the system allocator alone).
#[derive(Debug, Clone, Copy, Default)]
pub struct HugePages;

/// Mark `[ptr, ptr + size)` for huge pages. A hint: a refusal is ignored.
#[inline]
fn advise(ptr: *mut u8, size: usize) {
    #[cfg(target_os = "linux")]
    if !ptr.is_null() && size >= HUGE_FROM {
        // madvise wants a page-aligned start: mark the whole pages inside.
        const PAGE: usize = 4096;
        let start = (ptr as usize).next_multiple_of(PAGE);
        let end = (ptr as usize + size) & !(PAGE - 1);
        if end > start {
            // SAFETY: the range lies inside a block this allocator just
            // handed out; MADV_HUGEPAGE changes no contents, only how the
            // kernel backs the pages.
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (ptr, size);
}

// SAFETY: every call is passed on to the system allocator unchanged; the
// advice afterwards touches no memory.
unsafe impl GlobalAlloc for HugePages {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        advise(p, layout.size());
        p
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        advise(p, layout.size());
        p
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        advise(p, new_size);
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether the mapping that holds `addr` is marked for huge pages
    /// (its `VmFlags` has `hg`); true where the kernel has no huge pages
    /// to mark for.
    #[cfg(target_os = "linux")]
    fn marked(addr: usize) -> bool {
        if !std::path::Path::new("/sys/kernel/mm/transparent_hugepage").exists() {
            return true;
        }
        let flags = vm_flags(addr).expect("the block is mapped");
        flags.split_whitespace().any(|f| f == "hg")
    }

    /// The `VmFlags` of the mapping that holds `addr` (Linux).
    #[cfg(target_os = "linux")]
    fn vm_flags(addr: usize) -> Option<String> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
        let mut inside = false;
        for line in smaps.lines() {
            let range = line.split_whitespace().next().unwrap_or("");
            if let Some((a, b)) = range.split_once('-') {
                if let (Ok(a), Ok(b)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16))
                {
                    inside = a <= addr && addr < b;
                    continue;
                }
            }
            if inside {
                if let Some(flags) = line.strip_prefix("VmFlags:") {
                    return Some(flags.to_string());
                }
            }
        }
        None
    }

    /// A large block is the system's memory, usable and grown as any, and
    /// (on Linux) marked for huge pages; a small one is served as usual.
    #[test]
    fn large_blocks_are_marked_for_huge_pages() {
        let a = HugePages;
        let size = 2 * HUGE_FROM;
        let layout = Layout::from_size_align(size, 8).unwrap();
        unsafe {
            let p = a.alloc(layout);
            assert!(!p.is_null());
            p.write_bytes(7, size);
            #[cfg(target_os = "linux")]
            assert!(marked(p as usize + size / 2));
            let q = a.realloc(p, layout, 2 * size);
            assert!(!q.is_null());
            assert_eq!(*q.add(size - 1), 7);
            #[cfg(target_os = "linux")]
            assert!(marked(q as usize + size + size / 2));
            a.dealloc(q, Layout::from_size_align(2 * size, 8).unwrap());

            let small = Layout::from_size_align(64, 8).unwrap();
            let s = a.alloc_zeroed(small);
            assert_eq!(*s.add(63), 0);
            a.dealloc(s, small);
        }
    }
}
