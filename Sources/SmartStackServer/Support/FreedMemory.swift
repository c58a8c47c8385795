import CLinux
import Dispatch
import Synchronization

/// Gives the memory freed after a burst of allocations (start-up's replay, a rebuild) back to the system: glibc
/// keeps freed heap pages of each thread's arena otherwise, so resident memory would stay at the burst's peak.
enum FreedMemory {
    /// Now, on the calling thread (start-up, before the service answers calls).
    static func release() { _ = malloc_trim(0) }

    /// Soon, off the event loop, and at most once every `interval` seconds: a trim walks every arena's free
    /// chunks (milliseconds on a grown heap), and rebuilds can follow each other closely.
    static func releaseSoon(interval: Double = 10) {
        let now = DispatchTime.now().uptimeNanoseconds
        let due = UInt64(interval * 1e9)
        let last = lastTrim.load(ordering: .relaxed)
        guard last == 0 || now &- last >= due else { return }
        guard lastTrim.compareExchange(expected: last, desired: now, ordering: .relaxed).exchanged else { return }
        trimQueue.async { release() }
    }

    private static let lastTrim = Atomic<UInt64>(0)
    private static let trimQueue = DispatchQueue(label: "smartstackd.trim", qos: .utility)
}

/// How glibc's allocator returns large blocks.
public enum AllocatorTuning {
    /// Blocks of at least this many bytes are mapped on their own and given back to the system when freed.
    public static let mmapThreshold: Int32 = 4 << 20

    /// Fixes glibc's mmap threshold at `mmapThreshold`, unless `GLIBC_TUNABLES` sets the allocator's own (the
    /// operator's choice wins). By default glibc raises the threshold to the size of every mapped block freed, up to
    /// 32 MiB: after the start freed the stored state's buffers (a snapshot of several megabytes read and decoded),
    /// blocks that size came from the heap, and what they left behind stayed resident. With 1,000 stacks × 10
    /// widgets and 1,000,000 stored donations, resident memory after start-up 56.6 → 51.7 MiB (BENCHMARKS.md,
    /// thirty-seventh session). A fixed threshold also keeps the heap's trim threshold at its default (128 KiB).
    /// Nothing on a call's path allocates blocks this large; at 128 KiB, pipelined GetStack replies did, and 50 × 64
    /// fell to half. Returns whether it was set.
    @discardableResult
    public static func apply(environment: [String: String]) -> Bool {
        if let tunables = environment["GLIBC_TUNABLES"], tunables.contains("malloc.mmap_threshold") { return false }
        return mallopt(M_MMAP_THRESHOLD, mmapThreshold) == 1
    }
}
