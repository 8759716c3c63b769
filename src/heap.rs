//! Giving freed memory back to the system after a large transient allocation.
//!
//! Parsing a large message (a `tools/list` of many thousands of tools) briefly needs several
//! times its size; glibc keeps what was freed in its per-thread arenas, so the host's RSS stays
//! at the peak long after. Where glibc is the allocator this hands the free pages back; other
//! allocators return memory on their own, and there it does nothing.

/// Returns freed heap memory to the system (glibc's `malloc_trim`). Costs a walk over the free
/// lists: call it after a large transient, not per message.
pub fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    unsafe {
        libc::malloc_trim(0);
    }
}
