//! The addon's allocator: mimalloc for everything but large blocks, the system allocator for
//! those.
//!
//! The addon allocates on tokio's workers what the JS thread frees, and back, all the time;
//! glibc's arenas take that badly (malloc and free were ~16 % of all CPU at 64 tool calls in
//! flight) and mimalloc's per-thread heaps well. But mimalloc grows a large block by copying
//! it, where glibc remaps it in place, and keeps freed memory for a while: a buffer growing
//! towards the 64 MiB message limit then held the old copies too (peak RSS up by half again).
//! Blocks from [`LARGE`] (64 KiB) up go to the system allocator, which maps them on their own and
//! returns them when freed. Which allocator owns a block follows from its size, which Rust
//! passes back unchanged on every free and resize.
//!
//! mimalloc is built with `no_thp` (Cargo.toml): it does not ask for transparent huge pages for
//! its arena, which made every 2 MiB of it that was touched resident as a whole. It is mimalloc 2
//! with local-dynamic thread-locals, so that the addon loads into any thread and any number of
//! times into one process (Cargo.toml says what mimalloc 3 and initial-exec did instead).

use std::alloc::{GlobalAlloc, Layout, System};

use mimalloc::MiMalloc;

/// From this size up, blocks come from the system allocator (a stdio server's 64 KiB read
/// buffer among them: glibc hands out fresh pages for it, resident only as reads touch them).
const LARGE: usize = 64 << 10;

pub struct AddonAllocator;

fn large(layout: &Layout) -> bool {
    layout.size() >= LARGE
}

// SAFETY: every block is freed and resized by the allocator that made it (chosen by its size,
// the same at every call for one block), and a move between the two copies what the old block
// holds before freeing it.
unsafe impl GlobalAlloc for AddonAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        unsafe {
            if large(&layout) {
                System.alloc(layout)
            } else {
                MiMalloc.alloc(layout)
            }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        unsafe {
            if large(&layout) {
                System.alloc_zeroed(layout)
            } else {
                MiMalloc.alloc_zeroed(layout)
            }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe {
            if large(&layout) {
                System.dealloc(ptr, layout)
            } else {
                MiMalloc.dealloc(ptr, layout)
            }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        unsafe {
            let was_large = large(&layout);
            let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
            if was_large == large(&new_layout) {
                return if was_large {
                    System.realloc(ptr, layout, new_size)
                } else {
                    MiMalloc.realloc(ptr, layout, new_size)
                };
            }
            let new = self.alloc(new_layout);
            if !new.is_null() {
                std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                self.dealloc(ptr, layout);
            }
            new
        }
    }
}
