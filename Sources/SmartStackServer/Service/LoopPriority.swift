import CLinux
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// The event loop's place among the service's own threads. Every call is answered on the loop; beside it run the
/// store's writer (a Dispatch queue of `userInitiated` QoS, which libdispatch runs at nice -2 on Linux: calls wait
/// for its commits, and at nice 0 the soak's tail grew, BENCHMARKS.md), the snapshot encoder and Dispatch's other
/// threads. On a busy CPU a call arriving while one of them runs a long time slice waited for that slice to end (the
/// soak's GetStack p99 under load, with the daemon on one core: 2.6x its unloaded p99). The loop asks for a short
/// slice instead (`sched_setattr(2)`'s `sched_runtime`, Linux 6.12's EEVDF): it keeps its share of the CPU, but its
/// earlier deadline lets it preempt those threads as soon as input wakes it. Nothing is raised above other
/// processes, so no privilege is needed.
enum LoopPriority {
    /// The slice the loop asks for: the shortest the kernel takes (0.1 ms).
    static let slice: UInt64 = 100_000

    /// Asks for the short slice for the calling thread (run on the loop); returns the slice now in force
    /// (0: the kernel keeps none for this policy), or nil when the kernel refused.
    @discardableResult
    static func requestShortSlice(logger: Logger) -> UInt64? {
        let granted = smartstack_request_slice(slice)
        guard granted >= 0 else {
            logger.debug("the event loop keeps the default time slice", metadata: ["errno": "\(errno)"])
            return nil
        }
        logger.debug("event loop time slice", metadata: ["nanoseconds": "\(granted)"])
        return UInt64(granted)
    }
}
