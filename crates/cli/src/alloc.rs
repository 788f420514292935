//! How long the allocator keeps freed memory before it returns it to the kernel.
//!
//! mimalloc returns ("purges") freed memory to the kernel after a delay, 1 s by default. A
//! benchmark or a service runs one batch after another, each allocating and freeing hundreds
//! of megabytes; with the default, each batch finds the previous one's memory returned and
//! faults it in again, page by page, zeroed by the kernel (on the 2-core VM, four runs of
//! mal-lut16-ohv at 100,000 blocks took 1.56-1.79 s of system time, and 0.90-0.98 s with a
//! delay of 10 s). With a delay of 10 s, memory freed by one batch serves the next. Runs that
//! follow each other then peak somewhat higher, since one run's memory is still held when
//! the next starts (docs/PERFORMANCE.md, "Warm-up runs and the allocator's purge delay").
//! `MIMALLOC_PURGE_DELAY` (milliseconds, `-1`: never) still overrides it.
//!
//! mimalloc's options have no safe interface, so this file is one of the few where
//! `unsafe` is allowed (STYLE.md rule 1).
#![allow(unsafe_code)]

use core::ffi::{c_int, c_long};

use libmimalloc_sys::{mi_option_get, mi_option_set};

/// `mi_option_purge_delay` in mimalloc's `include/mimalloc.h` (the option enum's 16th entry;
/// the sys crate does not export it as a constant).
const MI_OPTION_PURGE_DELAY: c_int = 15;

/// mimalloc's own default for that option, in milliseconds.
const MIMALLOC_DEFAULT_MS: c_long = 1_000;

/// The delay the CLI sets, in milliseconds.
pub const PURGE_DELAY_MS: c_long = 10_000;

/// The environment variables through which mimalloc reads the option (current and legacy name).
const ENV: [&str; 2] = ["MIMALLOC_PURGE_DELAY", "MIMALLOC_RESET_DELAY"];

/// The purge delay in milliseconds, as mimalloc will use it.
pub fn purge_delay_ms() -> c_long {
    // SAFETY: reads one entry of mimalloc's option table, an index within it; the table is
    // initialised when the allocator loads, before `main`.
    unsafe { mi_option_get(MI_OPTION_PURGE_DELAY) }
}

/// Sets the purge delay to [`PURGE_DELAY_MS`] unless the environment sets it. Leaves it alone
/// if the option does not have mimalloc's documented default (another mimalloc version whose
/// option enum is numbered differently). Call at the start of `main`, before any thread starts.
pub fn configure() {
    if ENV.iter().any(|v| std::env::var_os(v).is_some()) {
        return;
    }
    if purge_delay_ms() == MIMALLOC_DEFAULT_MS {
        // SAFETY: writes one entry of mimalloc's option table (an index within it). mimalloc
        // does not lock the table, so this runs while `main` is the only thread.
        unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, PURGE_DELAY_MS) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_purge_delay_is_set_unless_the_environment_sets_it() {
        if ENV.iter().any(|v| std::env::var_os(v).is_some()) {
            return;
        }
        // The unit tests use the binary's global allocator, so the option is mimalloc's:
        // still its default, or already set by another test's call.
        let before = purge_delay_ms();
        assert!(
            before == MIMALLOC_DEFAULT_MS || before == PURGE_DELAY_MS,
            "{before}"
        );
        configure();
        assert_eq!(purge_delay_ms(), PURGE_DELAY_MS);
    }
}
