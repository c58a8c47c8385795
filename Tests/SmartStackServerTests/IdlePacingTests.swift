import CLinux
import Synchronization
import Testing

@testable import SmartStackServer

#if canImport(Glibc)
    import Glibc
#endif

/// Idle-priority work (rebuilds, replays of the past, scans) gives the CPU back every 0.5 ms of work: SCHED_IDLE alone
/// let it run a whole time slice ahead of a runnable event loop (docs/storage.md, "Work off the loop").
@Suite("Idle-priority work is paced")
struct IdlePacingTests {
    struct Outcome: Sendable {
        var policy: Int32
        var name: String
        var sleeps: Int
        var switches: Int
        var cpuSeconds: Double
    }

    /// The calling thread's context switches, voluntary and not, from /proc. A nap counts either way: the thread
    /// blocks in `nanosleep` (voluntary), or, on a busy machine, an idle-priority thread is preempted between arming
    /// the nap's timer and blocking on it, and finds the timer expired when it runs again (involuntary).
    static func contextSwitches() -> Int {
        guard let file = fopen("/proc/thread-self/status", "r") else { return -1 }
        defer { fclose(file) }
        var line = [CChar](repeating: 0, count: 256)
        var switches = 0
        var found = 0
        while fgets(&line, Int32(line.count), file) != nil {
            let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if text.hasPrefix("voluntary_ctxt_switches:") || text.hasPrefix("nonvoluntary_ctxt_switches:") {
                guard let count = Int(text.split(separator: ":")[1].trimmingCharacters(in: .whitespacesAndNewlines))
                else { return -1 }
                switches += count
                found += 1
            }
        }
        return found == 2 ? switches : -1
    }

    /// The calling thread's CPU time in nanoseconds.
    static func threadCPUNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    /// Calls `smartstack_pace` as a replay would, until the thread has worked `cpuSeconds` (its CPU time: an idle
    /// thread on a busy machine gets little of the wall time) or `wallSeconds` passed.
    static func work(cpuSeconds: Double, wallSeconds: Double) -> Outcome {
        var name = [CChar](repeating: 0, count: 32)
        pthread_getname_np(pthread_self(), &name, name.count)
        let switchesBefore = contextSwitches()
        let began = smartstack_monotonic_nanoseconds()
        let cpuBegan = threadCPUNanoseconds()
        var sleeps = 0
        var sink = 0.0
        while threadCPUNanoseconds() - cpuBegan < UInt64(cpuSeconds * 1e9),
            smartstack_monotonic_nanoseconds() - began < UInt64(wallSeconds * 1e9)
        {
            for index in 0..<64 { sink += Double(index).squareRoot() }
            sleeps += Int(smartstack_pace())
        }
        return Outcome(
            policy: sched_getscheduler(0),
            name: String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self),
            sleeps: sleeps + (sink < 0 ? 1 : 0), switches: contextSwitches() - switchesBefore,
            cpuSeconds: Double(threadCPUNanoseconds() - cpuBegan) / 1e9)
    }

    @Test("an idle thread runs under SCHED_IDLE, is named, and sleeps about every 0.5 ms of work")
    func idleThreadsArePaced() async throws {
        let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
            let started = IdleThread.start {
                continuation.resume(returning: Self.work(cpuSeconds: 0.02, wallSeconds: 30))
            }
            #expect(started)
        }
        #expect(outcome.policy == 5)  // SCHED_IDLE
        #expect(outcome.name == "smartstack-idle")
        // At least one nap per 0.5 ms of the thread's CPU time (the pace counts wall time, which is longer): about
        // 40 in 20 ms of work.
        #expect(outcome.cpuSeconds >= 0.02, "worked \(outcome.cpuSeconds) s of CPU in 30 s")
        #expect(outcome.sleeps >= 20, "slept \(outcome.sleeps) times in \(outcome.cpuSeconds) s of CPU")
        #expect(outcome.switches >= outcome.sleeps / 2, "\(outcome.switches) context switches")
    }

    @Test("other threads are not paced")
    func otherThreadsAreNot() {
        let outcome = Self.work(cpuSeconds: 0.01, wallSeconds: 5)
        #expect(outcome.sleeps == 0)
    }
}
