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
