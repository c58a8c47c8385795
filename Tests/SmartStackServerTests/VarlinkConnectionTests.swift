import Glibc
import Logging
import NIOCore
import NIOEmbedded
import SmartStackProtocol
import SmartStackStore
import Testing

@testable import SmartStackServer

/// The connection on an `EmbeddedChannel`, with a handler whose answers the test chooses: replies go out in call
/// order, in one write per read, whether known at once or after a commit; a broken frame ends the connection after
/// what came before it is answered; oneway calls get no reply.
@Suite("Varlink connection")
struct VarlinkConnectionTests {
    /// Answers `org.example.test.Echo` at once with its parameters, and `test.Commit` once `waiter` resolves (with
    /// `{"committed": true}` or `StorageFailed`).
    struct Handler: CallHandler {
        let waiter: CommitWaiter
        /// What `org.example.test.Follow` streams, if set.
        var push: FramePush? = nil

        static let shared: EncodedReply = {
            var frame: [UInt8] = []
            VarlinkReply(parameters: ["shared": .string(String(repeating: "x", count: 300))]).encode(into: &frame)
            return EncodedReply(frame: frame)
        }()

        func handle(_ call: VarlinkCall, peer: PeerCredentials) async -> CallOutcome {
            .failure(.methodNotFound(call.method))
        }

        func handleImmediately(_ call: VarlinkCall, peer: PeerCredentials) -> ImmediateOutcome? {
            switch call.method {
            case "org.example.test.Echo":
                return .done(.reply(call.parameters))
            case "org.example.test.Commit":
                return .waiting(for: waiter) { [waiter] in
                    switch waiter.outcome {
                    case .success?: .reply(["committed": .bool(true)])
                    case .failure?, nil: .failure(VarlinkError(name: "org.example.test.StorageFailed"))
                    }
                }
            case "org.example.test.Shared":
                // A reply encoded once and shared (as `GetStack`'s decisions are).
                return .done(.encoded(Self.shared))
            case "org.example.test.Follow":
                guard let push else { return .done(.failure(.methodNotFound(call.method))) }
                return .done(.push(push))
            default:
                return .done(.failure(.methodNotFound(call.method)))
            }
        }
    }

    /// A connection on an embedded channel, active, with `handler` (on `loop` and with `flusher` when given).
    /// The tests' pass: the service's calls and bytes, and no time limit, so that what they count does not depend on
    /// how fast the machine runs them (under a thread sanitizer, or on a loaded machine, 1 ms ended a pass after a
    /// few calls, and a test expecting one write saw two).
    static let untimed = PassBudget(
        nanoseconds: .max, calls: PassBudget.standard.calls, sharedBytes: PassBudget.standard.sharedBytes)

    static func connection(
        _ handler: any CallHandler, loop: EmbeddedEventLoop? = nil, flusher: TurnFlusher? = nil,
        pass: PassBudget = untimed
    ) throws -> EmbeddedChannel {
        let channel = loop.map { EmbeddedChannel(loop: $0) } ?? EmbeddedChannel()
        let loop = channel.embeddedEventLoop
        let connection = VarlinkConnection(
            handler: handler, maxFrameSize: 4_096, logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() },
            notifier: GateNotifier(eventLoop: loop), executor: EventLoopTaskExecutor(loop), flusher: flusher,
            pass: pass)
        try channel.pipeline.syncOperations.addHandler(connection)
        try channel.connect(to: SocketAddress(unixDomainSocketPath: "/tmp/test.sock")).wait()
        return channel
    }

    static func send(_ channel: EmbeddedChannel, _ frames: [String]) throws {
        var bytes: [UInt8] = []
        for frame in frames { bytes += Array(frame.utf8) + [0] }
        try channel.writeInbound(ByteBuffer(bytes: bytes))
        channel.pipeline.fireChannelReadComplete()
    }

    /// Every reply written so far, decoded, in order.
    static func replies(_ channel: EmbeddedChannel) throws -> [VarlinkReply] { try written(channel).replies }

    /// What was written so far: how many writes, and their replies decoded, in order.
    static func written(_ channel: EmbeddedChannel) throws -> (writes: Int, replies: [VarlinkReply]) {
        var writes = 0
        var bytes: [UInt8] = []
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) {
            writes += 1
            bytes += buffer.readableBytesView
        }
        let replies = try bytes.split(separator: 0, omittingEmptySubsequences: true).map {
            try VarlinkReply(frame: Array($0))
        }
        return (writes, replies)
    }

    @Test("pipelined calls are answered in call order, in one write")
    func pipelined() throws {
        let channel = try Self.connection(Handler(waiter: CommitWaiter()))
        try Self.send(channel, (1...5).map { #"{"method":"org.example.test.Echo","parameters":{"n":\#($0)}}"# })
        let (writes, replies) = try Self.written(channel)
        #expect(writes == 1)
        #expect(replies.map { $0.parameters["n"] } == (1...5).map { .int(Int64($0)) })
    }

    @Test("a pass ends after its calls: the rest are answered in later rounds, a pass each, in call order")
    func passes() throws {
        let pass = PassBudget(nanoseconds: .max, calls: 2, sharedBytes: PassBudget.standard.sharedBytes)
        let channel = try Self.connection(Handler(waiter: CommitWaiter()), pass: pass)
        try Self.send(channel, (1...5).map { #"{"method":"org.example.test.Echo","parameters":{"n":\#($0)}}"# })
        func next() throws -> [JSONValue?] { try Self.replies(channel).map { $0.parameters["n"] } }
        #expect(try next() == [.int(1), .int(2)])
        // The next round is scheduled a little ahead (`PassRounds.gap`): each round answers one pass.
        channel.embeddedEventLoop.advanceTime(by: PassRounds.gap)
        let second = try next()
        #expect(second == [.int(3), .int(4)])
        channel.embeddedEventLoop.advanceTime(by: PassRounds.gap)
        let third = try next()
        #expect(third == [.int(5)])
        channel.embeddedEventLoop.advanceTime(by: PassRounds.gap)
        #expect(try next().isEmpty)
    }

    @Test("a pass ends once its time is spent, after at least one call")
    func timedPass() throws {
        let pass = PassBudget(nanoseconds: 0, calls: PassBudget.standard.calls, sharedBytes: 1 << 20)
        let channel = try Self.connection(Handler(waiter: CommitWaiter()), pass: pass)
        try Self.send(channel, (1...3).map { #"{"method":"org.example.test.Echo","parameters":{"n":\#($0)}}"# })
        #expect(try Self.replies(channel).map { $0.parameters["n"] } == [.int(1)])
        channel.embeddedEventLoop.advanceTime(by: PassRounds.gap)
        #expect(try Self.replies(channel).map { $0.parameters["n"] } == [.int(2)])
        channel.embeddedEventLoop.advanceTime(by: PassRounds.gap)
        #expect(try Self.replies(channel).map { $0.parameters["n"] } == [.int(3)])
    }

    @Test(
        "a lone encoded reply is written from its shared buffer; several replies of both kinds go out in call order in one write"
    )
    func encodedReplies() throws {
        let channel = try Self.connection(Handler(waiter: CommitWaiter()))
        try Self.send(channel, [#"{"method":"org.example.test.Shared"}"#])
        let lone = try #require(try channel.readOutbound(as: ByteBuffer.self))
        #expect(Array(lone.readableBytesView) == Handler.shared.frame)
        #expect(try channel.readOutbound(as: ByteBuffer.self) == nil)

        let calls = [
            #"{"method":"org.example.test.Shared"}"#, #"{"method":"org.example.test.Echo","parameters":{"n":2}}"#,
            #"{"method":"org.example.test.Shared"}"#, #"{"method":"org.example.test.Shared","oneway":true}"#,
            #"{"method":"org.example.test.Nope"}"#, #"{"method":"org.example.test.Shared"}"#,
        ]
        try Self.send(channel, calls)
        let (writes, replies) = try Self.written(channel)
        #expect(writes == 1)
        #expect(replies.count == 5)
        #expect(replies.map { $0.parameters["shared"] != nil } == [true, false, true, false, true])
        #expect(replies[1].parameters["n"] == .int(2))
        #expect(replies[3].error?.name == "org.varlink.service.MethodNotFound")
        // The shared buffer is unchanged by being written and copied.
        #expect(Array(Handler.shared.buffer.readableBytesView) == Handler.shared.frame)
    }

    @Test("a reply waiting for its commit holds the replies after it until the commit is known")
    func afterCommit() throws {
        let waiter = CommitWaiter()
        let channel = try Self.connection(Handler(waiter: waiter))
        try Self.send(
            channel,
            [
                #"{"method":"org.example.test.Echo","parameters":{"n":1}}"#, #"{"method":"org.example.test.Commit"}"#,
                #"{"method":"org.example.test.Echo","parameters":{"n":3}}"#,
            ])
        #expect(try Self.replies(channel).map { $0.parameters["n"] } == [.int(1)])
        waiter.resolve(nil)
        channel.embeddedEventLoop.run()
        let rest = try Self.replies(channel)
        #expect(rest.count == 2)
        #expect(rest.first?.parameters["committed"] == .bool(true))
        #expect(rest.last?.parameters["n"] == .int(3))
    }

    /// Counts the reads the handlers after it ask of the channel.
    final class ReadCounter: ChannelOutboundHandler {
        typealias OutboundIn = ByteBuffer
        var reads = 0

        func read(context: ChannelHandlerContext) {
            reads += 1
            context.read()
        }
    }

    @Test(
        "a call waiting for its commit asks the channel for input once, after its read: not again when its reply goes out"
    )
    func oneReadPerInput() throws {
        let waiter = CommitWaiter()
        let channel = EmbeddedChannel()
        let counter = ReadCounter()
        try channel.pipeline.syncOperations.addHandler(counter)
        let connection = VarlinkConnection(
            handler: Handler(waiter: waiter), maxFrameSize: 4_096,
            logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() },
            notifier: GateNotifier(eventLoop: channel.embeddedEventLoop),
            executor: EventLoopTaskExecutor(channel.embeddedEventLoop), pass: Self.untimed)
        try channel.pipeline.syncOperations.addHandler(connection)
        try channel.connect(to: SocketAddress(unixDomainSocketPath: "/tmp/test.sock")).wait()
        #expect(counter.reads == 1)
        try Self.send(channel, [#"{"method":"org.example.test.Commit"}"#])
        #expect(counter.reads == 2)
        waiter.resolve(nil)
        channel.embeddedEventLoop.run()
        #expect(try Self.replies(channel).map { $0.parameters["committed"] } == [.bool(true)])
        // The read asked after the call is still pending: nothing came since.
        #expect(counter.reads == 2)
        try Self.send(channel, [#"{"method":"org.example.test.Echo","parameters":{"n":2}}"#])
        #expect(try Self.replies(channel).map { $0.parameters["n"] } == [.int(2)])
        #expect(counter.reads == 3)
    }

    @Test("a failed commit answers its call with the error, and the calls after it still get their replies")
    func failedCommit() throws {
        let waiter = CommitWaiter()
        let channel = try Self.connection(Handler(waiter: waiter))
        try Self.send(
            channel,
            [#"{"method":"org.example.test.Commit"}"#, #"{"method":"org.example.test.Echo","parameters":{"n":2}}"#])
        #expect(try Self.replies(channel).isEmpty)
        waiter.resolve(StoreFailure(reason: "disk full"))
        channel.embeddedEventLoop.run()
        let replies = try Self.replies(channel)
        #expect(replies.first?.error?.name == "org.example.test.StorageFailed")
        #expect(replies.last?.parameters["n"] == .int(2))
    }

    @Test("oneway calls get no reply; a broken frame closes the connection after what came before is answered")
    func onewayAndBroken() throws {
        let channel = try Self.connection(Handler(waiter: CommitWaiter()))
        try Self.send(
            channel,
            [
                #"{"method":"org.example.test.Echo","parameters":{"n":1},"oneway":true}"#,
                #"{"method":"org.example.test.Echo","parameters":{"n":2}}"#,
                "not json", #"{"method":"org.example.test.Echo","parameters":{"n":4}}"#,
            ])
        #expect(try Self.replies(channel).map { $0.parameters["n"] } == [.int(2)])
        #expect(!channel.isActive)
    }

    @Test(
        "a stream's connection closing does not tell the push of it at once, only on the loop's next turn (regression: the soak's crash)"
    )
    func closedInsideSend() throws {
        // A publish sends to every subscriber in one pass over them; the client leaving removes its subscription.
        // A write inside that pass can close the connection; told at once, the removal ran inside the pass, and
        // Swift's exclusivity check aborted the daemon.
        let push = FramePush(limit: 8)
        var gone = 0
        push.onClientGone = { gone += 1 }
        let channel = try Self.connection(Handler(waiter: CommitWaiter(), push: push))
        try Self.send(channel, [#"{"method":"org.example.test.Follow","more":true}"#])
        #expect(push.send(Array(#"{"continues":true}"#.utf8) + [0]))
        channel.embeddedEventLoop.run()
        #expect(try Self.replies(channel).count == 1)
        // The connection closes (as a failed write closes it) inside the caller's pass.
        channel.close(promise: nil)
        #expect(!channel.isActive)
        #expect(gone == 0)
        channel.embeddedEventLoop.run()
        #expect(gone == 1)
        #expect(!push.send(Array(#"{"continues":true}"#.utf8) + [0]))
    }

    /// `count` connections on one embedded loop sharing its `TurnFlusher`, answered by `handler`. The flusher's bound
    /// is a minute unless given: a test run on a busy machine may take longer than the service's 100 µs between two
    /// reads, and only `turnFlushBound` is about the bound.
    static func turn(
        _ count: Int, _ handler: Handler = Handler(waiter: CommitWaiter()), longestWait: TimeAmount = .seconds(60)
    ) throws -> (loop: EmbeddedEventLoop, channels: [EmbeddedChannel]) {
        let loop = EmbeddedEventLoop()
        let flusher = TurnFlusher(eventLoop: loop, longestWait: longestWait)
        return (loop, try (0..<count).map { _ in try connection(handler, loop: loop, flusher: flusher) })
    }

    /// One read of `frames` (each terminated), as the loop delivers it: the bytes, then the read's end.
    static func read(_ channel: EmbeddedChannel, _ frames: [String]) {
        channel.pipeline.fireChannelRead(ByteBuffer(bytes: frames.flatMap { Array($0.utf8) + [0] }))
        channel.pipeline.fireChannelReadComplete()
    }

    static func echo(_ n: Int) -> String { #"{"method":"org.example.test.Echo","parameters":{"n":\#(n)}}"# }

    /// The `n` of each reply written so far.
    static func numbers(_ channel: EmbeddedChannel) throws -> [JSONValue?] {
        try replies(channel).map { $0.parameters["n"] }
    }

    @Test("with a turn flusher, the turn's first reply goes out at once and the other connections' at the turn's end")
    func turnFlush() throws {
        let (loop, channels) = try Self.turn(3)
        // One turn: each connection reads a call (the reads come before the loop runs its tasks).
        for (n, channel) in channels.enumerated() { Self.read(channel, [Self.echo(n)]) }
        #expect(try Self.numbers(channels[0]) == [.int(0)])
        #expect(try Self.replies(channels[1]).isEmpty)
        #expect(try Self.replies(channels[2]).isEmpty)
        // The turn's end.
        loop.run()
        #expect(try Self.numbers(channels[1]) == [.int(1)])
        #expect(try Self.numbers(channels[2]) == [.int(2)])
        // The next turn's first reply goes out at once again.
        Self.read(channels[2], [Self.echo(5)])
        #expect(try Self.numbers(channels[2]) == [.int(5)])
    }

    @Test("with a turn flusher, replies that waited longer than the bound go out with the next one written")
    func turnFlushBound() throws {
        let (loop, channels) = try Self.turn(3, longestWait: .milliseconds(200))
        for n in 0..<2 { Self.read(channels[n], [Self.echo(n)]) }
        // Within 200 ms of the first reply deferred (no busy machine takes that long between two statements).
        #expect(try Self.replies(channels[1]).isEmpty)
        // A long call later in the same turn: the reply waiting since before it goes out with the next write.
        usleep(250_000)
        Self.read(channels[2], [Self.echo(2)])
        #expect(try Self.numbers(channels[1]) == [.int(1)])
        #expect(try Self.numbers(channels[2]) == [.int(2)])
        loop.run()
    }

    @Test("with a turn flusher, a read's several replies (a client pipelining) are flushed at once, not at its end")
    func pipelinedRepliesFlushAtOnce() throws {
        let (loop, channels) = try Self.turn(2)
        Self.read(channels[0], [Self.echo(0)])
        // Later in the turn, two calls in one read: both replies go out at once.
        Self.read(channels[1], [Self.echo(1), Self.echo(2)])
        #expect(try Self.numbers(channels[1]) == [.int(1), .int(2)])
        loop.run()
    }

    @Test("with a turn flusher, replies written when a commit is known (among the loop's tasks) are flushed at once")
    func commitRepliesFlushAtOnce() throws {
        let waiter = CommitWaiter()
        let (loop, channels) = try Self.turn(3, Handler(waiter: waiter))
        for channel in channels[0..<2] { Self.read(channel, [#"{"method":"org.example.test.Commit"}"#]) }
        #expect(try Self.replies(channels[0]).isEmpty)
        // The commit becomes known (its hop to the loop queued), and a check is queued behind it.
        waiter.resolve(nil)
        var seen: [[JSONValue?]] = []
        loop.execute {
            seen = channels[0..<2].map { (try? Self.replies($0))?.map { $0.parameters["committed"] } ?? [] }
        }
        // Then a read starts a turn whose end (queued after the check) would flush what it deferred.
        Self.read(channels[2], [Self.echo(2)])
        loop.run()
        // Both commit replies had gone out before the turn's end: none waited for it.
        #expect(seen == [[.bool(true)], [.bool(true)]])
    }

    @Test("with a turn flusher, a connection that closes flushes what it answered first")
    func turnFlushBeforeClose() throws {
        let (loop, channels) = try Self.turn(2)
        Self.read(channels[0], [Self.echo(0)])
        // The second connection's call then a broken frame: answered, flushed, closed, within the turn.
        Self.read(channels[1], [Self.echo(1), "not json"])
        #expect(!channels[1].isActive)
        #expect(try Self.numbers(channels[1]) == [.int(1)])
        loop.run()
    }
}

/// Connections kept for root and the service's own uid: a sixteenth of the limit, none under 16.
@Suite("Connection registry")
struct ConnectionRegistryTests {
    /// How many of `uid`'s connections the registry admits, of `count` tried.
    static func admitted(_ registry: ConnectionRegistry, uid: UInt32, count: Int) -> Int {
        (0..<count).filter { _ in registry.admit(EmbeddedChannel(), uid: uid) == nil }.count
    }

    @Test func aSixteenthIsKeptForTheExemptUIDs() {
        let registry = ConnectionRegistry(limit: 32, exempt: [0])
        #expect(registry.reservedForExempt == 2)
        #expect(Self.admitted(registry, uid: 1_000, count: 40) == 30)
        #expect(registry.admit(EmbeddedChannel(), uid: 65_534) == .limit(30))
        #expect(Self.admitted(registry, uid: 0, count: 5) == 2)
        #expect(registry.admit(EmbeddedChannel(), uid: 0) == .limit(32))
    }

    @Test("a small limit keeps one for the exempt uids (before, none: one uid could lock root out); a limit of 1 none")
    func aSmallLimitKeepsOne() {
        let registry = ConnectionRegistry(limit: 8, exempt: [0])
        #expect(registry.reservedForExempt == 1)
        #expect(Self.admitted(registry, uid: 1_000, count: 10) == 7)
        #expect(Self.admitted(registry, uid: 0, count: 2) == 1)
        #expect(ConnectionRegistry(limit: 1, exempt: [0]).reservedForExempt == 0)
    }
}
