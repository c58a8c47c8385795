// smartstack-nio-floor: the fastest a swift-nio server on one event loop answers `smartstack-load`'s calls, doing no
// work per call, so the service's socket figures can be read against what its transport allows.
//
// Usage: smartstack-nio-floor --listen PATH [--mode echo|hop] [--reply-bytes N] [--call-work NS] [--commit-work NS]
//
// It reads NUL-terminated frames and answers each with a fixed reply of a donation's size
// (`{"parameters":{"id":"…"}}`; `--reply-bytes N` pads it to N bytes, 2399 for a `GetStack` of ten widgets): nothing
// is decoded, looked up, stored or encoded. The channel is set up as
// smartstackd's is (one event loop, autoRead off, a read asked after each turn's replies), replies are flushed once
// per read, and the process stops on SIGTERM.
//
// - `echo`: every call is answered in the turn that read it, as smartstackd answers a `GetStack`.
// - `hop`: every call waits for an empty "commit", as smartstackd's durable `Donate` waits for the store's writer:
//   at the end of the loop's turn the turn's waiting connections are handed to a second thread, which hands them
//   straight back (no SQL, no fsync); then each writes its replies. This is the shape of the twenty-second
//   session's "no write" build, without the service's own work.
//
// `--call-work NS` spins the loop's thread NS nanoseconds per call (the service's own work on the loop), and
// `--commit-work NS` the commit thread NS nanoseconds per call it commits (the store's work per donation): a model of
// where a durable call's time goes, to see which budget reaches which rate.
//
// BENCHMARKS.md ("Twenty-third session") has what it measured beside Redis and smartstackd.

#if canImport(Glibc)
    import Glibc
#endif
import Dispatch
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

enum Mode: String { case echo, hop }

/// The reply to every call: as long as the reply to a donation with a load client's id, or padded (`--reply-bytes`).
nonisolated(unsafe) var replyBytes = Array(#"{"parameters":{"id":"1764284400-3-12345"}}"#.utf8) + [0]

/// Per-call work, spun on the thread's CPU clock (`--call-work`, `--commit-work`): nanoseconds.
nonisolated(unsafe) var callWork = 0
nonisolated(unsafe) var commitWork = 0

/// Spins the calling thread for `nanoseconds` of its CPU time.
func spin(_ nanoseconds: Int) {
    guard nanoseconds > 0 else { return }
    var now = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
    let end = Int(now.tv_sec) * 1_000_000_000 + Int(now.tv_nsec) + nanoseconds
    repeat {
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
    } while Int(now.tv_sec) * 1_000_000_000 + Int(now.tv_nsec) < end
}

/// Hands each loop turn's batch of waiting connections to its own thread and back, as the store's writer does with a
/// group commit: one wake of the thread per batch, one task back on the loop per batch.
final class EmptyCommitter: @unchecked Sendable {
    private let lock = NIOLock()
    private let wake = DispatchSemaphore(value: 0)
    private var queued: [Handed] = []
    private let loop: any EventLoop

    init(loop: any EventLoop) {
        self.loop = loop
        let thread = Thread { [self] in run() }
        thread.start()
    }

    func commit(_ batch: Handed) {
        lock.withLock { queued.append(batch) }
        wake.signal()
    }

    private func run() {
        while true {
            wake.wait()
            let batches = lock.withLock {
                defer { queued.removeAll(keepingCapacity: true) }
                return queued
            }
            for batch in batches {
                spin(commitWork * batch.calls)
                loop.execute { for connection in batch.connections { connection.committed() } }
            }
        }
    }
}

/// A turn's batch on its way to the commit thread and back: only the loop touches its connections.
struct Handed: @unchecked Sendable {
    let connections: [FloorConnection]
    /// The calls the batch holds.
    let calls: Int
}

/// What the loop's connections share: the turn's batch of connections waiting for the empty commit.
final class Turn {
    var waiting: [FloorConnection] = []
    var calls = 0
    var scheduled = false
    let committer: EmptyCommitter?

    init(committer: EmptyCommitter?) { self.committer = committer }

    func wait(_ connection: FloorConnection, calls count: Int, on loop: any EventLoop) {
        waiting.append(connection)
        calls &+= count
        guard !scheduled, let committer else { return }
        scheduled = true
        // After this turn's reads: the batch is everything read in the turn.
        let turn = NIOLoopBound(self, eventLoop: loop)
        loop.execute {
            let batch = Handed(connections: turn.value.waiting, calls: turn.value.calls)
            turn.value.waiting.removeAll(keepingCapacity: true)
            turn.value.calls = 0
            turn.value.scheduled = false
            committer.commit(batch)
        }
    }
}

final class FloorConnection: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let turn: Turn
    private var context: ChannelHandlerContext?
    /// Calls read whose replies are not written yet.
    private var unanswered = 0
    /// Calls waiting for the empty commit (`hop`).
    private var waiting = 0

    init(turn: Turn) { self.turn = turn }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    func channelActive(context: ChannelHandlerContext) {
        context.read()
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        // Frames are counted, not kept: a load client's frames are small and whole in practice, and a frame split
        // over two reads is counted once, at its NUL.
        let frames = buffer.readableBytesView.reduce(0) { $0 &+ ($1 == 0 ? 1 : 0) }
        unanswered &+= frames
        spin(callWork * frames)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        guard unanswered > 0 else { return context.read() }
        if turn.committer == nil {
            answer(context)
        } else {
            waiting = unanswered
            unanswered = 0
            turn.wait(self, calls: waiting, on: context.eventLoop)
        }
    }

    func committed() {
        guard let context else { return }
        unanswered = waiting
        waiting = 0
        answer(context)
    }

    private func answer(_ context: ChannelHandlerContext) {
        var out = context.channel.allocator.buffer(capacity: replyBytes.count * unanswered)
        for _ in 0..<unanswered { out.writeBytes(replyBytes) }
        unanswered = 0
        context.writeAndFlush(wrapOutboundOut(out), promise: nil)
        context.read()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) { context.close(promise: nil) }
}

let usage =
    "usage: smartstack-nio-floor --listen PATH [--mode echo|hop] [--reply-bytes N] [--call-work NS] [--commit-work NS]"

/// Stops with the usage and what was wrong (exit 2).
func refuse(_ problem: String) -> Never {
    FileHandle.standardError.write(Data("smartstack-nio-floor: \(problem)\n\(usage)\n".utf8))
    exit(2)
}

/// The value after `option`, as a count of at least `minimum`.
func count(_ value: String?, for option: String, minimum: Int = 0) -> Int {
    guard let value, let number = Int(value), number >= minimum else {
        refuse("\(option) wants a whole number of at least \(minimum), not \(value ?? "nothing")")
    }
    return number
}

var listen: String?
var mode = Mode.echo
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--listen":
        guard let path = arguments.next() else { refuse("--listen wants a path") }
        listen = path
    case "--mode":
        let value = arguments.next()
        guard let chosen = value.flatMap(Mode.init(rawValue:)) else {
            refuse("--mode is echo or hop, not \(value ?? "nothing")")
        }
        mode = chosen
    case "--reply-bytes":
        // Spaces before the closing brace: still one JSON object, NUL included in the count.
        let wanted = count(arguments.next(), for: "--reply-bytes", minimum: replyBytes.count)
        replyBytes.insert(contentsOf: repeatElement(0x20, count: wanted - replyBytes.count), at: replyBytes.count - 2)
    case "--call-work": callWork = count(arguments.next(), for: "--call-work")
    case "--commit-work": commitWork = count(arguments.next(), for: "--commit-work")
    default: refuse("unknown argument \(argument)")
    }
}
guard let path = listen else { refuse("--listen is required") }

let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
let loop = group.next()
let hop = mode == .hop
let turn = try loop.submit { NIOLoopBound(Turn(committer: hop ? EmptyCommitter(loop: loop) : nil), eventLoop: loop) }
    .wait()
let channel = try ServerBootstrap(group: group)
    .serverChannelOption(.backlog, value: 512)
    .childChannelOption(.autoRead, value: false)
    .childChannelInitializer { channel in
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(FloorConnection(turn: turn.value))
        }
    }
    .bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true)
    .wait()
print("smartstack-nio-floor (\(mode.rawValue)) listening on \(path)")
// Printed before anything else: a SIGTERM ends the process without flushing stdout.
fflush(nil)
signal(SIGTERM, SIG_IGN)
let stop = DispatchSource.makeSignalSource(signal: SIGTERM)
stop.setEventHandler { @Sendable in _exit(0) }
stop.resume()
try channel.closeFuture.wait()
