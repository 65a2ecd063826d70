//! Hints to the processor that change no result: loading a cache line
//! before it is needed.
//!
//! With tens of thousands of flows the simulator's state is far larger than
//! the caches, and most of a packet's cost is waiting for memory. Where the
//! code knows an address an event or two before it reads it, a prefetch
//! lets that load overlap the work in between.

/// Ask for the `lines` 64-byte cache lines starting at `r` to be loaded
/// into every cache level. A no-op where no prefetch instruction is known.
#[inline(always)]
pub fn prefetch<T>(r: &T, lines: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let p = (r as *const T).cast::<i8>();
        for i in 0..lines {
            // SAFETY: a prefetch never faults and reads nothing into the
            // program, whatever the address (`wrapping_add` makes none of
            // them undefined); SSE is part of every x86-64 processor.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(64 * i)) }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (r, lines);
}
