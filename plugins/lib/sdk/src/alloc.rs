//! A size-class allocator for single-threaded components, to install as a plugin's
//! `#[global_allocator]` in front of wasi-libc's dlmalloc.
//!
//! Why by hand: a component instance lives for one call, runs on one thread and allocates
//! mostly small, short-lived objects (parsed templates, values, strings). dlmalloc's
//! coalescing and binning were a fifth of the rendering component's time under `perf`
//! (2026-12-06, `capstan template` of bitnami/wordpress); the general-purpose crates
//! (`talc` was measured) keep that bookkeeping. Here a small block costs a table lookup and
//! a pointer pop, its release a pointer push: Rust passes the size back on `dealloc`, so no
//! block header is needed. Blocks of up to [`LARGEST_SMALL`] bytes (alignment up to 8) come
//! from per-size free lists refilled by carving 64 KiB chunks; anything larger goes to the
//! system allocator. Freed small blocks are reused for the same size class only, never
//! handed back: fine for an instance that is thrown away after its call.
//!
//! Memory that crosses the component boundary is `malloc`'s. The canonical ABI places the
//! arguments of an export and the results of an import with the component's exported
//! `cabi_realloc`, and wasi-libc `free()`s some of those itself (the environment list it
//! reads on the first `getenv`, for one). Rust's standard library exports a `cabi_realloc`
//! that calls the global allocator, so with this allocator installed wasi-libc would free
//! blocks dlmalloc never made and corrupt its heap (measured: every backend given a WASI
//! environment variable trapped in `dlfree`). The macro therefore also exports a
//! `cabi_realloc` of its own that allocates with `malloc` ([`SizeClassAllocator::cabi_realloc`]).
//! Rust then owns some `malloc` blocks as `String`s and `Vec`s and frees or grows them
//! through this allocator; their real size is dlmalloc's, not their layout's size class,
//! so they must not join the free lists. Chunks are therefore 64 KiB-aligned and their
//! pages recorded: a block is ours exactly when its page is, and every other block goes
//! back to the system allocator that made it.
//!
//! A plugin opts in with `capstan_plugin_sdk::use_size_class_allocator!();` at its crate
//! root (a no-op where it does not apply: natively, or with threads).

/// Install [`SizeClassAllocator`] as the crate's global allocator when built as a
/// single-threaded WebAssembly component.
#[macro_export]
macro_rules! use_size_class_allocator {
    () => {
        #[cfg(all(target_arch = "wasm32", not(target_feature = "atomics")))]
        #[global_allocator]
        static SIZE_CLASS_ALLOCATOR: $crate::alloc::SizeClassAllocator =
            $crate::alloc::SizeClassAllocator::new();

        /// The canonical ABI's allocation function, on `malloc` (see
        /// `capstan_plugin_sdk::alloc`): a strong definition, so it replaces the weak ones of
        /// Rust's standard library and wasi-libc.
        #[cfg(all(target_arch = "wasm32", not(target_feature = "atomics")))]
        #[unsafe(no_mangle)]
        unsafe extern "C" fn cabi_realloc(
            old_block: *mut u8,
            old_size: usize,
            align: usize,
            new_size: usize,
        ) -> *mut u8 {
            // SAFETY: the canonical ABI's contract for `cabi_realloc`, passed on.
            unsafe { SIZE_CLASS_ALLOCATOR.cabi_realloc(old_block, old_size, align, new_size) }
        }
    };
}

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::UnsafeCell;
use std::ptr;

/// The block sizes, each a multiple of 8 (so every block stays 8-aligned).
const CLASS_SIZES: [usize; 24] = [
    8, 16, 24, 32, 40, 48, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384, 448, 512, 640, 768,
    1024, 1536, 2048,
];

/// The largest allocation served from the size classes.
pub const LARGEST_SMALL: usize = 2048;

/// Largest alignment a small block guarantees.
const SMALL_ALIGN: usize = 8;

/// log2 of the chunk size: chunks are one 64 KiB page each, aligned to it.
const CHUNK_SHIFT: u32 = 16;

/// Bytes carved into blocks at a time (one WebAssembly page).
const CHUNK_BYTES: usize = 1 << CHUNK_SHIFT;

/// The class of each size rounded up to 8 (`CLASS_OF[(size + 7) / 8]`).
const CLASS_OF: [u8; LARGEST_SMALL / 8 + 1] = {
    let mut table = [0u8; LARGEST_SMALL / 8 + 1];
    let mut eighths = 0;
    let mut class = 0;
    while eighths <= LARGEST_SMALL / 8 {
        while CLASS_SIZES[class] < eighths * 8 {
            class += 1;
        }
        table[eighths] = class as u8;
        eighths += 1;
    }
    table
};

/// Which 64 KiB pages are chunks of this allocator: one bit per page of the 4 GiB a
/// 32-bit address space holds (8 KiB). What WebAssembly uses; natively only in tests.
#[cfg(any(target_pointer_width = "32", test))]
struct PageBitmap {
    bits: [u32; (1 << (32 - CHUNK_SHIFT)) / 32],
}

#[cfg(any(target_pointer_width = "32", test))]
impl PageBitmap {
    const fn new() -> Self {
        PageBitmap {
            bits: [0; (1 << (32 - CHUNK_SHIFT)) / 32],
        }
    }

    #[inline(always)]
    fn contains(&self, address: usize) -> bool {
        let page = address >> CHUNK_SHIFT;
        self.bits[page >> 5] & (1 << (page & 31)) != 0
    }

    fn insert(&mut self, chunk: usize) {
        let page = chunk >> CHUNK_SHIFT;
        self.bits[page >> 5] |= 1 << (page & 31);
    }
}

/// Which chunks are this allocator's, on 64-bit hosts (where the allocator only runs in
/// its own tests): the sorted page numbers. Also the reference the bitmap is tested
/// against.
#[cfg(any(not(target_pointer_width = "32"), test))]
struct PageList {
    pages: Vec<usize>,
}

#[cfg(any(not(target_pointer_width = "32"), test))]
impl PageList {
    const fn new() -> Self {
        PageList { pages: Vec::new() }
    }

    fn contains(&self, address: usize) -> bool {
        self.pages.binary_search(&(address >> CHUNK_SHIFT)).is_ok()
    }

    fn insert(&mut self, chunk: usize) {
        let page = chunk >> CHUNK_SHIFT;
        if let Err(at) = self.pages.binary_search(&page) {
            self.pages.insert(at, page);
        }
    }
}

#[cfg(target_pointer_width = "32")]
type OwnedPages = PageBitmap;

#[cfg(not(target_pointer_width = "32"))]
type OwnedPages = PageList;

struct Pools {
    /// Head of each class's list of free blocks; each free block holds the next pointer.
    free: [*mut u8; CLASS_SIZES.len()],
    /// The uncarved rest of the current chunk.
    cursor: *mut u8,
    end: *mut u8,
    /// The pages of every chunk carved so far.
    owned: OwnedPages,
}

/// See the module documentation.
pub struct SizeClassAllocator {
    pools: UnsafeCell<Pools>,
}

// SAFETY: the allocator is only for targets without threads (a `wasm32-wasip2` component
// without the `atomics` feature): no two calls can run at once. Natively it exists only
// for its tests, which use one instance from one thread.
#[cfg(any(test, all(target_arch = "wasm32", not(target_feature = "atomics"))))]
unsafe impl Sync for SizeClassAllocator {}

impl SizeClassAllocator {
    /// An allocator with no memory yet.
    pub const fn new() -> Self {
        SizeClassAllocator {
            pools: UnsafeCell::new(Pools {
                free: [ptr::null_mut(); CLASS_SIZES.len()],
                cursor: ptr::null_mut(),
                end: ptr::null_mut(),
                owned: OwnedPages::new(),
            }),
        }
    }

    /// The size class of `layout`, if it is served from the free lists.
    #[inline(always)]
    fn class_of(layout: Layout) -> Option<usize> {
        if layout.size() <= LARGEST_SMALL && layout.align() <= SMALL_ALIGN {
            Some(usize::from(CLASS_OF[layout.size().div_ceil(8)]))
        } else {
            None
        }
    }

    /// Whether `block` lies in one of this allocator's chunks (otherwise the system
    /// allocator made it: see the module documentation).
    ///
    /// # Safety
    /// No other call into this allocator may be running.
    #[inline(always)]
    unsafe fn owns(&self, block: *mut u8) -> bool {
        // SAFETY: single-threaded by the caller's contract; only read here.
        let pools = unsafe { &*self.pools.get() };
        pools.owned.contains(block as usize)
    }

    /// A block of `class`: a freed one, or a new one carved from the chunk.
    ///
    /// # Safety
    /// No other call into this allocator may be running.
    #[inline(always)]
    unsafe fn take(&self, class: usize) -> *mut u8 {
        // SAFETY: single-threaded by the caller's contract, so this is the only reference.
        let pools = unsafe { &mut *self.pools.get() };
        let head = pools.free[class];
        if !head.is_null() {
            // SAFETY: a free block of this class holds the next free block's address.
            pools.free[class] = unsafe { head.cast::<*mut u8>().read() };
            return head;
        }
        // SAFETY: single-threaded by the caller's contract.
        unsafe { self.carve(class) }
    }

    /// A new block of `class` carved from the chunk (a new chunk when the current one is
    /// used up; the unusable tail of the old one is left).
    ///
    /// # Safety
    /// No other call into this allocator may be running.
    #[inline(never)]
    unsafe fn carve(&self, class: usize) -> *mut u8 {
        // SAFETY: single-threaded by the caller's contract, so this is the only reference.
        let pools = unsafe { &mut *self.pools.get() };
        let size = CLASS_SIZES[class];
        if (pools.end as usize) - (pools.cursor as usize) < size {
            // SAFETY: the layout is non-zero and valid (a power-of-two size and alignment).
            let chunk = unsafe {
                System.alloc(Layout::from_size_align_unchecked(CHUNK_BYTES, CHUNK_BYTES))
            };
            if chunk.is_null() {
                return chunk;
            }
            pools.owned.insert(chunk as usize);
            pools.cursor = chunk;
            // SAFETY: one past the end of the chunk just allocated.
            pools.end = unsafe { chunk.add(CHUNK_BYTES) };
        }
        let block = pools.cursor;
        // SAFETY: `size` bytes remain before `end` (checked above).
        pools.cursor = unsafe { block.add(size) };
        block
    }

    /// Put `block` of `class` on its free list.
    ///
    /// # Safety
    /// `block` came from [`Self::take`] with the same class and is no longer used; no other
    /// call into this allocator may be running.
    #[inline(always)]
    unsafe fn give_back(&self, block: *mut u8, class: usize) {
        // SAFETY: single-threaded by the caller's contract.
        let pools = unsafe { &mut *self.pools.get() };
        // SAFETY: blocks are 8-aligned and at least 8 bytes, room for one pointer.
        unsafe { block.cast::<*mut u8>().write(pools.free[class]) };
        pools.free[class] = block;
    }
}

impl SizeClassAllocator {
    /// The canonical ABI's `cabi_realloc` on the system allocator (`malloc`), whatever
    /// Rust's global allocator is: a new block of `new_size` bytes aligned to `align` when
    /// `old_size` is 0, else `old_block` resized. A block of this allocator (never passed by
    /// the canonical ABI, which only asks for new blocks) is moved out to the system's.
    /// Traps when memory runs out, as the canonical ABI expects.
    ///
    /// # Safety
    /// `align` is a power of two; a non-zero `old_size` comes with the block and size of an
    /// earlier allocation with this `align`; no other call into this allocator is running.
    pub unsafe fn cabi_realloc(
        &self,
        old_block: *mut u8,
        old_size: usize,
        align: usize,
        new_size: usize,
    ) -> *mut u8 {
        if new_size == 0 {
            if old_size != 0 {
                // SAFETY: an earlier allocation of this layout, by the caller's contract.
                unsafe {
                    self.dealloc(
                        old_block,
                        Layout::from_size_align_unchecked(old_size, align),
                    )
                };
            }
            return ptr::without_provenance_mut(align);
        }
        // SAFETY: `align` is a power of two and `new_size` non-zero (caller's contract).
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, align) };
        let block = if old_size == 0 {
            // SAFETY: a non-zero size.
            unsafe { System.alloc(new_layout) }
        } else {
            // SAFETY: an earlier allocation of this layout, by the caller's contract.
            let old_layout = unsafe { Layout::from_size_align_unchecked(old_size, align) };
            // SAFETY: single-threaded by the caller's contract.
            if unsafe { self.owns(old_block) } {
                // SAFETY: a fresh system block; the old contents copied, then released.
                unsafe {
                    let moved = System.alloc(new_layout);
                    if !moved.is_null() {
                        ptr::copy_nonoverlapping(old_block, moved, old_size.min(new_size));
                        self.dealloc(old_block, old_layout);
                    }
                    moved
                }
            } else {
                // SAFETY: a system block of `old_layout`.
                unsafe { System.realloc(old_block, old_layout, new_size) }
            }
        };
        if block.is_null() {
            std::alloc::handle_alloc_error(new_layout);
        }
        block
    }
}

impl Default for SizeClassAllocator {
    fn default() -> Self {
        Self::new()
    }
}

// SAFETY: small blocks are distinct, 8-aligned and at least `layout.size()` bytes (the class
// is the smallest that fits, and alignment above 8 goes to `System`); a block is only reused
// after `dealloc`; a block outside the chunks is `System`'s, whatever its layout, and goes
// back to it.
unsafe impl GlobalAlloc for SizeClassAllocator {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match Self::class_of(layout) {
            // SAFETY: single-threaded (see `Sync`).
            Some(class) => unsafe { self.take(class) },
            // SAFETY: forwarded with the caller's guarantees.
            None => unsafe { System.alloc(layout) },
        }
    }

    #[inline]
    unsafe fn dealloc(&self, block: *mut u8, layout: Layout) {
        // SAFETY: single-threaded (see `Sync`).
        if unsafe { self.owns(block) } {
            // Blocks in the chunks were all allocated by `take` with a small layout.
            if let Some(class) = Self::class_of(layout) {
                // SAFETY: allocated by `take` with this layout, hence this class.
                unsafe { self.give_back(block, class) }
            }
        } else {
            // SAFETY: allocated by `System` (here, or by `malloc` through `cabi_realloc`).
            unsafe { System.dealloc(block, layout) }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        match Self::class_of(layout) {
            Some(class) => {
                // SAFETY: single-threaded; the block has at least `layout.size()` bytes.
                unsafe {
                    let block = self.take(class);
                    if !block.is_null() {
                        block.write_bytes(0, layout.size());
                    }
                    block
                }
            }
            // SAFETY: forwarded; fresh system memory may come zeroed without a memset.
            None => unsafe { System.alloc_zeroed(layout) },
        }
    }

    unsafe fn realloc(&self, block: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: single-threaded (see `Sync`).
        if !unsafe { self.owns(block) } {
            // SAFETY: a `System` block stays with `System`, which knows its real size.
            return unsafe { System.realloc(block, layout, new_size) };
        }
        // SAFETY: the caller guarantees `new_size` with `layout.align()` is a valid layout.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        if Self::class_of(new_layout) == Self::class_of(layout) {
            // Still fits the same block (an owned block always has a class).
            return block;
        }
        // SAFETY: a fresh allocation of the new layout, the old contents copied (up to the
        // smaller size), then the old block released by its own layout.
        unsafe {
            let moved = self.alloc(new_layout);
            if !moved.is_null() {
                ptr::copy_nonoverlapping(block, moved, layout.size().min(new_size));
                self.dealloc(block, layout);
            }
            moved
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_size_gets_the_smallest_class_that_holds_it() {
        for size in 1..=LARGEST_SMALL {
            let class =
                SizeClassAllocator::class_of(Layout::from_size_align(size, 1).unwrap()).unwrap();
            assert!(
                CLASS_SIZES[class] >= size,
                "{size} in class of {}",
                CLASS_SIZES[class]
            );
            if class > 0 {
                assert!(CLASS_SIZES[class - 1] < size, "{size} fits the class below");
            }
        }
        let large = Layout::from_size_align(LARGEST_SMALL + 1, 8).unwrap();
        assert_eq!(SizeClassAllocator::class_of(large), None);
        let over_aligned = Layout::from_size_align(32, 16).unwrap();
        assert_eq!(SizeClassAllocator::class_of(over_aligned), None);
    }

    #[test]
    fn a_freed_block_is_reused_for_its_class_only() {
        let allocator = SizeClassAllocator::new();
        let small = Layout::from_size_align(20, 4).unwrap();
        let other = Layout::from_size_align(100, 8).unwrap();
        unsafe {
            let a = allocator.alloc(small);
            allocator.dealloc(a, small);
            let b = allocator.alloc(other);
            assert_ne!(a, b, "a block of another class took the freed one");
            let c = allocator.alloc(Layout::from_size_align(24, 8).unwrap());
            assert_eq!(a, c, "the freed block of the class was not reused");
        }
    }

    #[test]
    fn realloc_keeps_the_block_within_its_class_and_moves_the_contents_out_of_it() {
        let allocator = SizeClassAllocator::new();
        let layout = Layout::from_size_align(17, 1).unwrap();
        unsafe {
            let block = allocator.alloc(layout);
            block.copy_from_nonoverlapping(b"0123456789abcdefg".as_ptr(), 17);
            let same = allocator.realloc(block, layout, 24);
            assert_eq!(same, block);
            let grown = allocator.realloc(same, Layout::from_size_align(24, 1).unwrap(), 5000);
            assert_ne!(grown, block);
            assert_eq!(std::slice::from_raw_parts(grown, 17), b"0123456789abcdefg");
            let shrunk = allocator.realloc(grown, Layout::from_size_align(5000, 1).unwrap(), 3);
            assert_eq!(std::slice::from_raw_parts(shrunk, 3), b"012");
            allocator.dealloc(shrunk, Layout::from_size_align(3, 1).unwrap());
        }
    }

    /// Blocks `malloc` made (as wasi-libc's `cabi_realloc` does for the canonical ABI) and
    /// Rust then frees or grows through this allocator stay the system allocator's: never
    /// reused for a size class, never grown in place past their real size.
    #[test]
    fn blocks_the_system_allocator_made_go_back_to_it() {
        let allocator = SizeClassAllocator::new();
        let layout = Layout::from_size_align(20, 1).unwrap();
        unsafe {
            let ours = allocator.alloc(layout);
            assert!(allocator.owns(ours));
            let foreign = System.alloc(layout);
            assert!(!allocator.owns(foreign));
            foreign.copy_from_nonoverlapping(b"01234567890123456789".as_ptr(), 20);
            let grown = allocator.realloc(foreign, layout, 24);
            assert!(
                !allocator.owns(grown),
                "a foreign block was taken into a class"
            );
            assert_eq!(
                std::slice::from_raw_parts(grown, 20),
                b"01234567890123456789"
            );
            let grown_layout = Layout::from_size_align(24, 1).unwrap();
            allocator.dealloc(grown, grown_layout);
            let next = allocator.alloc(grown_layout);
            assert_ne!(
                next, grown,
                "a freed foreign block was handed out as a class block"
            );
            assert!(allocator.owns(next));
            allocator.dealloc(next, grown_layout);
            allocator.dealloc(ours, layout);
        }
    }

    #[test]
    fn cabi_realloc_hands_out_system_blocks_only() {
        let allocator = SizeClassAllocator::new();
        unsafe {
            let fresh = allocator.cabi_realloc(ptr::null_mut(), 0, 1, 20);
            assert!(
                !allocator.owns(fresh),
                "the canonical ABI got a size-class block"
            );
            fresh.copy_from_nonoverlapping(b"01234567890123456789".as_ptr(), 20);
            let grown = allocator.cabi_realloc(fresh, 20, 1, 4000);
            assert!(!allocator.owns(grown));
            assert_eq!(
                std::slice::from_raw_parts(grown, 20),
                b"01234567890123456789"
            );
            let layout = Layout::from_size_align(16, 8).unwrap();
            let ours = allocator.alloc(layout);
            assert!(allocator.owns(ours));
            ours.write_bytes(7, 16);
            let moved = allocator.cabi_realloc(ours, 16, 8, 32);
            assert!(
                !allocator.owns(moved),
                "a size-class block stayed in its class"
            );
            assert_eq!(std::slice::from_raw_parts(moved, 16), [7; 16]);
            assert_eq!(allocator.cabi_realloc(ptr::null_mut(), 0, 8, 0) as usize, 8);
            System.dealloc(moved, Layout::from_size_align(32, 8).unwrap());
            System.dealloc(grown, Layout::from_size_align(4000, 1).unwrap());
        }
    }

    /// Many live blocks of mixed sizes, each filled with its own byte, freed in a scrambled
    /// order and reallocated: no block may overlap another (its bytes would change).
    #[test]
    fn live_blocks_never_overlap() {
        let allocator = SizeClassAllocator::new();
        let mut live: Vec<(*mut u8, Layout, u8)> = Vec::new();
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        unsafe {
            for round in 0..20_000u32 {
                let pick = next();
                if pick % 3 == 0 && !live.is_empty() {
                    let (block, layout, fill) = live.swap_remove((pick as usize / 3) % live.len());
                    let bytes = std::slice::from_raw_parts(block, layout.size());
                    assert!(bytes.iter().all(|b| *b == fill), "block overwritten");
                    allocator.dealloc(block, layout);
                    continue;
                }
                let size = 1 + (next() % 3000) as usize;
                let align = 1 << (next() % 5);
                let layout = Layout::from_size_align(size, align).unwrap();
                let block = if pick % 3 == 1 {
                    allocator.alloc_zeroed(layout)
                } else {
                    allocator.alloc(layout)
                };
                assert!(!block.is_null());
                assert_eq!(block as usize % align, 0, "misaligned for {layout:?}");
                if pick % 3 == 1 {
                    let bytes = std::slice::from_raw_parts(block, size);
                    assert!(bytes.iter().all(|b| *b == 0), "not zeroed");
                }
                let fill = round as u8;
                block.write_bytes(fill, size);
                live.push((block, layout, fill));
            }
            for (block, layout, fill) in live {
                let bytes = std::slice::from_raw_parts(block, layout.size());
                assert!(bytes.iter().all(|b| *b == fill), "block overwritten");
                allocator.dealloc(block, layout);
            }
        }
    }

    #[allow(dead_code)]
    mod xorshift {
        include!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../test-support/xorshift.rs"
        ));
    }
    use xorshift::Rng;

    /// A size: at and around every class boundary, small, up to twice the largest small
    /// block, and now and then beyond a chunk.
    fn size(rng: &mut Rng) -> usize {
        match rng.below(10) {
            0..=3 => {
                let class = CLASS_SIZES[rng.below(CLASS_SIZES.len())];
                (class + rng.below(3)).saturating_sub(1).max(1)
            }
            4..=6 => 1 + rng.below(64),
            7 | 8 => 1 + rng.below(2 * LARGEST_SMALL),
            _ => 1 + rng.below(3 * CHUNK_BYTES / 2),
        }
    }

    /// An alignment: mostly what the size classes serve, now and then more.
    fn align(rng: &mut Rng) -> usize {
        [1, 1, 2, 4, 8, 8, 8, 16, 32, 64][rng.below(10)]
    }

    /// Who made a block the size-class allocator was handed: itself, or the system
    /// allocator (as `malloc` blocks reach Rust through the canonical ABI).
    #[derive(Clone, Copy, PartialEq, Debug)]
    enum Maker {
        Classes,
        System,
    }

    /// One live block: its address under the size-class allocator and under `System`
    /// doing the same operations, its layout, and who made the first.
    struct Live {
        ours: *mut u8,
        reference: *mut u8,
        layout: Layout,
        maker: Maker,
    }

    /// Fill both copies of a block with the same bytes: a byte of the operation's number
    /// throughout, its number at either end.
    ///
    /// # Safety
    /// Both blocks are live with at least `size` bytes.
    unsafe fn fill(ours: *mut u8, reference: *mut u8, size: usize, stamp: u64) {
        for block in [ours, reference] {
            unsafe {
                block.write_bytes(stamp as u8, size);
                let mark = stamp.to_le_bytes();
                let n = mark.len().min(size);
                block.copy_from_nonoverlapping(mark.as_ptr(), n);
                block
                    .add(size - n)
                    .copy_from_nonoverlapping(mark.as_ptr(), n);
            }
        }
    }

    /// The two copies of `live` hold the same bytes.
    ///
    /// # Safety
    /// `live`'s blocks are live with its layout's size.
    unsafe fn same_contents(live: &Live, step: usize) {
        let (ours, reference) = unsafe {
            (
                std::slice::from_raw_parts(live.ours, live.layout.size()),
                std::slice::from_raw_parts(live.reference, live.layout.size()),
            )
        };
        assert!(
            ours == reference,
            "step {step}: the contents of a block of {:?} ({:?}'s) changed",
            live.layout,
            live.maker
        );
    }

    /// Add `live`'s block to `spans` (start to end and step), failing if it overlaps one
    /// already there.
    fn claim(
        spans: &mut std::collections::BTreeMap<usize, (usize, usize)>,
        live: &Live,
        step: usize,
    ) {
        let (start, end) = (live.ours as usize, live.ours as usize + live.layout.size());
        if let Some((&before, &(before_end, made))) = spans.range(..=start).next_back() {
            assert!(
                before_end <= start,
                "step {step}: a block of {:?} at {start:#x} overlaps the block at {before:#x}..{before_end:#x} of step {made}",
                live.layout
            );
        }
        if let Some((&after, &(_, made))) = spans.range(start..).next() {
            assert!(
                end <= after,
                "step {step}: a block of {:?} at {start:#x}..{end:#x} overlaps the block at {after:#x} of step {made}",
                live.layout
            );
        }
        spans.insert(start, (end, step));
    }

    /// The page bitmap WebAssembly uses answers as the sorted page list does, on generated
    /// chunk addresses across the 32-bit space (its first and last pages included) and
    /// addresses in and around them.
    #[test]
    #[cfg(target_pointer_width = "64")]
    fn the_page_bitmap_answers_as_the_page_list() {
        let mut rng = Rng(0xb17_3a90_0043_0005);
        let mut bitmap = Box::new(PageBitmap::new());
        let mut list = PageList::new();
        let top = 1usize << 32;
        for step in 0..20_000 {
            let chunk = match rng.below(8) {
                0 => 0,
                1 => top - CHUNK_BYTES,
                _ => rng.below(top >> CHUNK_SHIFT) << CHUNK_SHIFT,
            };
            bitmap.insert(chunk);
            list.insert(chunk);
            for _ in 0..8 {
                let address = match rng.below(3) {
                    0 => chunk + rng.below(CHUNK_BYTES),
                    1 => (chunk + CHUNK_BYTES + rng.below(3 * CHUNK_BYTES)) % top,
                    _ => rng.below(top),
                };
                assert_eq!(
                    bitmap.contains(address),
                    list.contains(address),
                    "step {step}: address {address:#x}"
                );
            }
        }
    }

    /// A generated sequence of 500,000 allocations (plain and zeroed), reallocations to
    /// other sizes (within and across size classes, to and from the system allocator's
    /// sizes), releases in a scrambled order, blocks the system allocator made handed to
    /// this one to grow and free, and the canonical ABI's `cabi_realloc`, done by the
    /// size-class allocator and, alike, by `System`: every block is aligned, never
    /// overlaps another live one, keeps its contents through every later step (compared
    /// with the `System` copy byte for byte, each step's block at once and every live block
    /// every 5,000 steps), and a block is the size classes' exactly when its layout is
    /// small and no one else made it.
    #[test]
    fn generated_operations_keep_every_block_as_the_system_allocator_does() {
        const STEPS: usize = 500_000;
        let allocator = SizeClassAllocator::new();
        let mut rng = Rng(0xa110_c0de_0043_0005);
        let mut live: Vec<Live> = Vec::new();
        let mut spans = std::collections::BTreeMap::new();
        let mut counts = [0usize; 7];
        unsafe {
            for step in 0..STEPS {
                // Grow the live set early, keep it around a few thousand blocks after.
                let kind = if live.is_empty() {
                    0
                } else if live.len() > 4000 {
                    3 + rng.below(4)
                } else {
                    rng.below(7)
                };
                counts[kind] += 1;
                match kind {
                    // A new block, plain or zeroed, from the size classes (or the system
                    // allocator for large or over-aligned layouts).
                    0 | 1 => {
                        let layout =
                            Layout::from_size_align(size(&mut rng), align(&mut rng)).unwrap();
                        let (ours, reference) = if kind == 1 {
                            (allocator.alloc_zeroed(layout), System.alloc_zeroed(layout))
                        } else {
                            (allocator.alloc(layout), System.alloc(layout))
                        };
                        assert!(
                            !ours.is_null() && !reference.is_null(),
                            "step {step}: out of memory"
                        );
                        assert_eq!(
                            ours as usize % layout.align(),
                            0,
                            "step {step}: {layout:?} misaligned"
                        );
                        assert_eq!(
                            allocator.owns(ours),
                            SizeClassAllocator::class_of(layout).is_some(),
                            "step {step}: {layout:?} from the wrong allocator"
                        );
                        if kind == 1 {
                            let zeroed = std::slice::from_raw_parts(ours, layout.size());
                            assert!(
                                zeroed.iter().all(|&b| b == 0),
                                "step {step}: {layout:?} not zeroed"
                            );
                        } else {
                            fill(ours, reference, layout.size(), step as u64);
                        }
                        let block = Live {
                            ours,
                            reference,
                            layout,
                            maker: Maker::Classes,
                        };
                        claim(&mut spans, &block, step);
                        live.push(block);
                    }
                    // A block the system allocator made (`malloc`'s, through the canonical
                    // ABI), now Rust's: `cabi_realloc` of a fresh block, or `System` itself.
                    2 => {
                        let layout =
                            Layout::from_size_align(size(&mut rng), align(&mut rng)).unwrap();
                        let ours = if rng.below(2) == 0 {
                            allocator.cabi_realloc(
                                ptr::null_mut(),
                                0,
                                layout.align(),
                                layout.size(),
                            )
                        } else {
                            System.alloc(layout)
                        };
                        let reference = System.alloc(layout);
                        assert!(
                            !allocator.owns(ours),
                            "step {step}: a system block in a chunk"
                        );
                        fill(ours, reference, layout.size(), step as u64);
                        let block = Live {
                            ours,
                            reference,
                            layout,
                            maker: Maker::System,
                        };
                        claim(&mut spans, &block, step);
                        live.push(block);
                    }
                    // Release a block through this allocator (whoever made it).
                    3 | 4 => {
                        let block = live.swap_remove(rng.below(live.len()));
                        same_contents(&block, step);
                        spans.remove(&(block.ours as usize));
                        allocator.dealloc(block.ours, block.layout);
                        System.dealloc(block.reference, block.layout);
                    }
                    // Grow or shrink a block, through `realloc` or the canonical ABI's
                    // `cabi_realloc` (which moves a size-class block out to the system).
                    _ => {
                        let at = rng.below(live.len());
                        let block = live.swap_remove(at);
                        same_contents(&block, step);
                        spans.remove(&(block.ours as usize));
                        let new_size = size(&mut rng);
                        let new_layout =
                            Layout::from_size_align(new_size, block.layout.align()).unwrap();
                        let through_abi = kind == 6 && rng.below(3) == 0;
                        let was_ours = allocator.owns(block.ours);
                        let ours = if through_abi {
                            allocator.cabi_realloc(
                                block.ours,
                                block.layout.size(),
                                block.layout.align(),
                                new_size,
                            )
                        } else {
                            allocator.realloc(block.ours, block.layout, new_size)
                        };
                        let reference = System.realloc(block.reference, block.layout, new_size);
                        assert!(
                            !ours.is_null() && !reference.is_null(),
                            "step {step}: out of memory"
                        );
                        assert_eq!(
                            ours as usize % new_layout.align(),
                            0,
                            "step {step}: {new_layout:?} misaligned"
                        );
                        let maker = if through_abi {
                            Maker::System
                        } else {
                            block.maker
                        };
                        // A system block stays the system's; a size-class block stays in
                        // the classes while the new size is small (in its block, or
                        // another); the canonical ABI's blocks are all the system's.
                        let expected_ours = !through_abi
                            && was_ours
                            && SizeClassAllocator::class_of(new_layout).is_some();
                        assert_eq!(
                            allocator.owns(ours),
                            expected_ours,
                            "step {step}: {:?} ({:?}'s) reallocated to {new_size} from the wrong allocator",
                            block.layout,
                            block.maker
                        );
                        let moved = Live {
                            ours,
                            reference,
                            layout: new_layout,
                            maker,
                        };
                        // The kept part is unchanged, then the block is written anew.
                        let kept = block.layout.size().min(new_size);
                        assert!(
                            std::slice::from_raw_parts(ours, kept)
                                == std::slice::from_raw_parts(reference, kept),
                            "step {step}: {:?} ({:?}'s) lost its contents reallocated to {new_size}",
                            block.layout,
                            block.maker
                        );
                        fill(ours, reference, new_size, step as u64);
                        claim(&mut spans, &moved, step);
                        live.push(moved);
                    }
                }
                if step % 5000 == 4999 {
                    for block in &live {
                        same_contents(block, step);
                    }
                }
            }
            for block in live {
                same_contents(&block, STEPS);
                allocator.dealloc(block.ours, block.layout);
                System.dealloc(block.reference, block.layout);
            }
        }
        eprintln!(
            "{STEPS} generated allocator steps alike with System: {} allocations, {} zeroed, {} system blocks, {} releases, {} reallocations",
            counts[0],
            counts[1],
            counts[2],
            counts[3] + counts[4],
            counts[5] + counts[6]
        );
    }
}
