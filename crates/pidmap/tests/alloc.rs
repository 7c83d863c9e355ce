//! Allocation behaviour of a warmed handle, counted by a global allocator:
//! `iter()` borrows the handle (no new 64 KiB getdents buffer per call),
//! and `fill()` and `fill_info()` into a large enough `Vec` allocate
//! nothing (no allocation per record or per field), the default handle's
//! records of every task included (pidmap_info(2) where the kernel has
//! it, with the group fields once per process on a threaded system).

#![cfg(feature = "fallback")]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};

use pidmap::{ActiveBackend, Backend, InfoFields, Pidmap, Query, Target};

struct Counting;

static BYTES: AtomicUsize = AtomicUsize::new(0);
static CALLS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Whether this thread's allocations count: only the measured call's
    /// thread, so that the test harness's own threads (which may wake and
    /// allocate meanwhile on a loaded machine) are not charged to it.
    static COUNTED: Cell<bool> = const { Cell::new(false) };
}

// SAFETY: forwards to the system allocator, only counting.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // A const-initialized `Cell` without a destructor: reading it
        // never allocates (and reads false while the thread ends).
        if COUNTED.try_with(Cell::get).unwrap_or(false) {
            BYTES.fetch_add(layout.size(), Ordering::Relaxed);
            CALLS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static A: Counting = Counting;

/// What `f` allocates on this thread: its result, bytes and calls. The
/// handle runs no thread of its own, so this is all it allocates.
fn measure<R>(f: impl FnOnce() -> R) -> (R, usize, usize) {
    let (b, c) = (BYTES.load(Ordering::SeqCst), CALLS.load(Ordering::SeqCst));
    COUNTED.set(true);
    let r = f();
    COUNTED.set(false);
    (
        r,
        BYTES.load(Ordering::SeqCst) - b,
        CALLS.load(Ordering::SeqCst) - c,
    )
}

/// One test only: the counters are process-wide.
#[test]
fn warmed_handles_do_not_reallocate() {
    for backend in [Backend::Procfs, Backend::Auto] {
        let mut pm = Pidmap::with_backend(backend).unwrap();
        let mut v = Vec::with_capacity(1 << 16);
        pm.fill(Query::processes(), &mut v).unwrap();
        pm.fill(Query::threads(Target::Caller), &mut v).unwrap();
        let ((), bytes, calls) = measure(|| {
            pm.fill(Query::processes(), &mut v).unwrap();
            pm.fill(Query::threads(Target::Caller), &mut v).unwrap();
        });
        assert_eq!((bytes, calls), (0, 0), "{backend}: fill allocated");
        let mut infos = Vec::with_capacity(1 << 16);
        pm.fill_info(Query::threads(Target::Caller), InfoFields::ALL, &mut infos)
            .unwrap();
        let ((), bytes, calls) = measure(|| {
            pm.fill_info(Query::threads(Target::Caller), InfoFields::ALL, &mut infos)
                .unwrap();
        });
        assert!(!infos.is_empty());
        assert_eq!((bytes, calls), (0, 0), "{backend}: fill_info allocated");
        let (n, bytes, _) = measure(|| pm.iter(Query::threads(Target::Caller)).count());
        assert!(n >= 1);
        // The iterator's own id buffer only: far below a 64 KiB dirent buffer.
        assert!(bytes < 4096, "{backend}: iter allocated {bytes} bytes");
    }
    // A refresh of every task through the fallback, keeping files or
    // not: nothing allocated per record. Its buffers grow only when the
    // host gains tasks between refreshes: a few calls, not one per task.
    for keep in [false, true] {
        for fields in [InfoFields::ALL, InfoFields::TGID | InfoFields::RSS] {
            let mut pm = Pidmap::builder()
                .backend(Backend::Procfs)
                .keep_files(keep)
                .build()
                .unwrap();
            let mut infos = Vec::with_capacity(1 << 16);
            for _ in 0..2 {
                pm.fill_info(Query::all_tasks(), fields, &mut infos)
                    .unwrap();
            }
            let ((), _, calls) = measure(|| {
                pm.fill_info(Query::all_tasks(), fields, &mut infos)
                    .unwrap()
            });
            assert!(infos.len() > 20, "{} records", infos.len());
            assert!(
                calls < 16,
                "keep_files {keep}: {calls} allocations for {} records",
                infos.len()
            );
        }
    }
    default_handle_records_of_every_task();
}

/// The default handle's refresh of every task. With the series, the
/// records call allocates nothing at all once warm, in both of its ways:
/// one record per task, and (with 16 tasks per process, the handle's
/// threshold, which the parked threads make) the group fields once per
/// process. Without it, the fallback, within its few buffer growths.
fn default_handle_records_of_every_task() {
    let mut processes = Vec::new();
    let mut pm = Pidmap::new().unwrap();
    pm.fill(Query::processes(), &mut processes).unwrap();
    let top = InfoFields::TGID
        | InfoFields::PPID
        | InfoFields::STATE
        | InfoFields::CPU_TIME
        | InfoFields::RSS
        | InfoFields::START_TIME
        | InfoFields::COMM;
    for threads in [0, 16 * processes.len() + 8] {
        let release = Arc::new(Barrier::new(threads + 1));
        let parked: Vec<_> = (0..threads)
            .map(|_| {
                let release = Arc::clone(&release);
                std::thread::Builder::new()
                    .stack_size(64 * 1024)
                    .spawn(move || {
                        release.wait();
                    })
                    .expect("spawn thread")
            })
            .collect();
        for fields in [InfoFields::ALL, top, InfoFields::NONE] {
            let mut pm = Pidmap::new().unwrap();
            let mut infos = Vec::with_capacity(1 << 16);
            for _ in 0..2 {
                pm.fill_info(Query::all_tasks(), fields, &mut infos)
                    .unwrap();
            }
            let ((), _, calls) = measure(|| {
                pm.fill_info(Query::all_tasks(), fields, &mut infos)
                    .unwrap();
            });
            assert!(
                infos.len() > threads,
                "{} records with {threads} threads parked",
                infos.len()
            );
            if pm.info_backend().unwrap() == ActiveBackend::Syscall {
                assert_eq!(
                    calls,
                    0,
                    "records of {fields:?}, {} tasks: {calls} allocations",
                    infos.len()
                );
            } else {
                assert!(
                    calls < 16,
                    "fallback, {fields:?}: {calls} allocations for {} records",
                    infos.len()
                );
            }
        }
        release.wait();
        for t in parked {
            t.join().unwrap();
        }
    }
}
