// The event loop's own work per call, without sockets: `--calls` in smartstack-wire-bench.
//
// A call over the socket costs the loop its read and write system calls (the same for any server) and the service's
// own work: decoding, the dispatcher, the host and the engine, queuing the event, publishing once per commit, and
// encoding the reply once its commit resolved. This measures the second part alone, on the loop's thread CPU clock,
// with the real `ServiceDispatcher` and `EngineHost` on a real NIO event loop: turns of 50 calls (as 50 clients with
// a call in flight each bring), each call decoded and answered by `handleImmediately`, the turn's commit resolved
// when the host flushes at the turn's end (a writer that costs nothing, on no other thread), and every reply encoded
// once its commit resolved, on the loop, as the connection does.

#if canImport(Glibc)
    import Glibc
#endif
import BenchSupport
import Logging
import NIOCore
import NIOPosix
import SmartStackCore
import SmartStackProtocol
import SmartStackServer
import SmartStackStore
import Synchronization

/// A log whose commits resolve when the host flushes (at the end of the loop's turn), so a turn's calls share one
/// commit as they do with the SQLite writer, and waiting for it costs nothing. Events are queued under a lock as the
/// SQLite log queues them, and dropped when their commit resolves (nothing is read back: the donation filter answers
/// for every new id).
final class TurnCommitLog: MemoryBackedEventLog {
    let memory = InMemoryEventLog()
    private let pending = Mutex<(events: [EngineEvent], waiter: CommitWaiter?)>(([], nil))

    func enqueue(_ events: [EngineEvent]) -> CommitTicket {
        let ticket = queue(events)
        flush()
        return ticket
    }

    func enqueueHeld(_ event: EngineEvent) -> CommitTicket { queue([event]) }

    private func queue(_ events: [EngineEvent]) -> CommitTicket {
        .pending(
            pending.withLock { pending in
                pending.events += events
                if let waiter = pending.waiter { return waiter }
                let next = CommitWaiter()
                pending.waiter = next
                return next
            })
    }

    func flush() {
        let due = pending.withLock { pending in
            defer { pending = ([], nil) }
            return pending.waiter
        }
        due?.resolve(nil)
    }

    var status: EventLogStatus { .accepting }
}

/// Drives turns of calls on the loop and encodes their replies as the connection would; used on the loop only.
final class CallPathDriver: @unchecked Sendable {
    static let callsPerTurn = 50
    let loop: any EventLoop
    let dispatcher: ServiceDispatcher
    /// Every call's frame (without its NUL), in order.
    let frames: [[UInt8]]
    private var next = 0
    private var scratch: [UInt8] = []
    /// The replies of the turn that wait for its commit.
    private var waiting: [() -> CallOutcome] = []
    private var started: UInt64 = 0
    private(set) var failures = 0
    private var done: EventLoopPromise<UInt64>?

    init(loop: any EventLoop, dispatcher: ServiceDispatcher, frames: [[UInt8]]) {
        self.loop = loop
        self.dispatcher = dispatcher
        self.frames = frames
        scratch.reserveCapacity(4_096)
    }

    /// Runs every frame in turns; the loop thread's CPU nanoseconds for all of them.
    func run() async throws -> UInt64 {
        let promise = loop.makePromise(of: UInt64.self)
        loop.execute {
            self.done = promise
            self.started = threadCPUNanoseconds()
            self.turn()
        }
        return try await promise.futureResult.get()
    }

    private func turn() {
        var gate: (any ReplyGate)?
        for _ in 0..<Self.callsPerTurn where next < frames.count {
            let outcome = frames[next].withUnsafeBufferPointer { bytes -> ImmediateOutcome? in
                guard let call = try? VarlinkCall(bytes: bytes) else { return nil }
                return dispatcher.handleImmediately(call, peer: CallPathBench.peer)
            }
            next += 1
            switch outcome {
            case .done(let answer)?:
                encode(answer)
            case .waiting(let commit, let then)?:
                gate = commit
                waiting.append(then)
            case .later?, nil:
                failures += 1
            }
        }
        guard let gate else { return endTurn() }
        gate.whenOpen { self.loop.execute { self.repliesCommitted() } }
    }

    private func repliesCommitted() {
        for reply in waiting { encode(reply()) }
        waiting.removeAll(keepingCapacity: true)
        endTurn()
    }

    private func endTurn() {
        guard next < frames.count else {
            done?.succeed(threadCPUNanoseconds() - started)
            return
        }
        loop.execute { self.turn() }
    }

    private func encode(_ outcome: CallOutcome) {
        scratch.removeAll(keepingCapacity: true)
        switch outcome {
        case .reply(let parameters): VarlinkReply(parameters: parameters).encode(into: &scratch)
        case .encoded: break  // written from its shared buffer, as the connection writes a lone reply
        case .failure(let error):
            failures += 1
            VarlinkReply(error: error).encode(into: &scratch)
        case .stream, .boundedStream, .push: failures += 1
        }
    }
}

enum CallPathBench {
    static let peer = PeerCredentials(pid: 1, uid: 0, gid: 0)
    static let logger = Logger(label: "call-path") { _ in SwiftLogNoOpLogHandler() }

    /// The frames of one run: `count` calls of `method` (`Donate`, each with an id of its own, or `GetStack`).
    static func frames(_ method: String, count: Int, run: Int) -> [[UInt8]] {
        (0..<count).map { sequence in
            frame(method) { bytes in
                if method == "GetStack" {
                    LoadFrames.getStack(to: &bytes)
                } else {
                    LoadFrames.donate(runID: "run\(run)", client: sequence % 50, sequence: sequence, to: &bytes)
                }
            }.bytes
        }
    }

    /// One run on a fresh service: the loop's CPU nanoseconds per call.
    static func measure(_ method: String, calls: Int, run: Int, on loop: any EventLoop) async throws -> Double {
        let host = EngineHost(
            settings: EngineSettings(), clock: SystemServiceClock(), log: TurnCommitLog(), logger: logger,
            eventLoop: loop)
        _ = try await host.restore()
        let dispatcher = ServiceDispatcher(
            host: host, connections: ConnectionRegistry(limit: 64), levels: LogLevelControl(.info), maxListLimit: 100,
            logger: logger)
        for setUp in LoadFrames.setUp(widgets: 10) {
            let call = try setUp.dropLast().withUnsafeBufferPointer { try VarlinkCall(bytes: $0) }
            if case .failure(let error) = await dispatcher.handle(call, peer: peer) {
                throw CallPathError(reason: "setting up the stack: \(error.name)")
            }
        }
        let driver = CallPathDriver(loop: loop, dispatcher: dispatcher, frames: frames(method, count: calls, run: run))
        let nanoseconds = try await driver.run()
        await host.stop()
        guard driver.failures == 0 else { throw CallPathError(reason: "\(driver.failures) calls of \(method) failed") }
        return Double(nanoseconds) / Double(calls)
    }

    /// The runs' figures for each method.
    static func run(runs: Int, calls: Int, only: String?) async throws -> [(name: String, runs: [Double])] {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        var results: [(name: String, runs: [Double])] = []
        for method in ["Donate", "GetStack"] where only == nil || only == method {
            _ = try await measure(method, calls: calls / 10, run: -1, on: loop)  // warm-up
            var figures: [Double] = []
            for run in 0..<runs { figures.append(try await measure(method, calls: calls, run: run, on: loop)) }
            results.append(("answer \(method) on the loop", figures))
        }
        // The group is left running: the hosts' last timers may still fire on it, and the process ends next.
        withExtendedLifetime(group) {}
        return results
    }
}

struct CallPathError: Error, CustomStringConvertible {
    let reason: String
    var description: String { reason }
}
