import Logging
import NIOPosix
import Testing

@testable import SmartStackServer

#if canImport(Glibc)
    import Glibc
#endif

/// The event loop asks the scheduler for a short time slice (EEVDF's `sched_runtime`), so input wakes it ahead of the
/// service's other threads; a kernel without it keeps its default and the service runs on.
@Suite("Event loop priority")
struct LoopPriorityTests {
    /// This kernel's release as (major, minor).
    static var kernel: (Int, Int) {
        var names = utsname()
        uname(&names)
        let release = withUnsafeBytes(of: &names.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let parts = release.split(whereSeparator: { !$0.isNumber }).prefix(2).compactMap { Int($0) }
        return (parts.first ?? 0, parts.dropFirst().first ?? 0)
    }

    @Test(
        "a thread that asks gets the 0.1 ms slice (Linux 6.12 and later), as /proc reports it; other threads keep theirs"
    )
    func shortSlice() throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        defer { try? group.syncShutdownGracefully() }
        let loops = Array(group.makeIterator())
        let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        let granted = try loops[0].submit { LoopPriority.requestShortSlice(logger: logger) }.wait()
        let asked = try loops[0].submit { Self.procSlice() }.wait()
        let other = try loops[1].submit { Self.procSlice() }.wait()
        let (major, minor) = Self.kernel
        guard major > 6 || (major == 6 && minor >= 12) else {
            // Accepted and ignored before EEVDF's custom slices: nothing to see, nothing broken.
            #expect(granted != nil)
            return
        }
        #expect(granted == LoopPriority.slice)
        // /proc/thread-self/sched exists with the scheduler's debug statistics (this project's kernels have them).
        if let asked, let other {
            #expect(asked == LoopPriority.slice)
            #expect(other != LoopPriority.slice)
        }
    }

    /// The calling thread's `se.slice` from /proc/thread-self/sched, in nanoseconds.
    static func procSlice() -> UInt64? {
        guard let file = fopen("/proc/thread-self/sched", "r") else { return nil }
        defer { fclose(file) }
        var line: UnsafeMutablePointer<CChar>?
        var capacity = 0
        defer { free(line) }
        while getline(&line, &capacity, file) > 0 {
            guard let line else { continue }
            let text = String(cString: line)
            guard text.hasPrefix("se.slice") else { continue }
            return text.split(separator: ":").last.flatMap { UInt64(String($0.filter(\.isNumber))) }
        }
        return nil
    }
}
