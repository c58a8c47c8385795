import CLinux
import Logging
import NIOCore
public import SmartStackProtocol

/// What a call produced: a reply, a typed error, or a stream of replies.
public enum CallOutcome: Sendable {
    case reply(JSONObject)
    /// A reply already encoded as its frame (a decision encoded once and sent to every caller that asks for it).
    case encoded(EncodedReply)
    case failure(VarlinkError)
    /// A `more` call's replies: the closure sends each one (as `continues`) until the stream ends or the
    /// task is cancelled (the client went away).
    case stream(@Sendable (_ send: @escaping @Sendable (JSONObject) async throws -> Void) async throws -> Void)
    /// A `more` call's replies pushed from the event loop as they come (`FramePush`), without a task: what a
    /// subscription to published decisions uses.
    case push(FramePush)
    /// A `more` call's replies that end: the closure sends each reply but the last (as `continues`) and returns
    /// the last one (a reply, sent without `continues`, or an error), after which the connection serves the
    /// calls that follow, as the Varlink specification has it.
    case boundedStream(
        @Sendable (_ send: @escaping @Sendable (JSONObject) async throws -> Void) async throws -> CallOutcome)
}

/// A reply's frame, NUL terminator included, as `VarlinkReply(parameters:).encode(into:)` writes it.
public struct EncodedReply: Sendable {
    /// The frame as a buffer, made once: a reply sent to many calls and subscribers is written from it to each
    /// (buffers share their storage) instead of copied per connection.
    let buffer: ByteBuffer

    /// A frame encoded elsewhere (it must be one whole reply, NUL included).
    public init(frame: [UInt8]) {
        self.buffer = ByteBuffer(bytes: frame)
    }

    /// The frame's bytes (NUL included).
    public var frame: [UInt8] { Array(buffer.readableBytesView) }
}

/// What a call answered on the connection's event loop produced.
public enum ImmediateOutcome {
    /// The reply or error is known now.
    case done(CallOutcome)
    /// The call's reply is known once `gate` opens (its event committed): `then` runs on the event loop and gives
    /// the reply (or the error when it could not be stored). The replies after it wait in call order.
    case waiting(for: any ReplyGate, then: () -> CallOutcome)
    /// The call has to suspend: `run` runs as a task on the event loop's executor, and the connection decodes
    /// nothing further until it is answered.
    case later(@Sendable () async -> CallOutcome)
}

/// Answers calls; the service's dispatcher, or a test's.
public protocol CallHandler: Sendable {
    func handle(_ call: VarlinkCall, peer: PeerCredentials) async -> CallOutcome
    /// Answers `call` right away, on the event loop its connection is served on (the engine's), when that
    /// needs no suspension; `nil` sends the call to `handle`.
    func handleImmediately(_ call: VarlinkCall, peer: PeerCredentials) -> ImmediateOutcome?
}

extension CallHandler {
    public func handleImmediately(_ call: VarlinkCall, peer: PeerCredentials) -> ImmediateOutcome? { nil }
}

/// Serves one client on its channel's event loop: reads frames, answers calls in order, runs streams, and closes
/// on framing errors.
///
/// Calls that need no suspension (the dispatcher's `handleImmediately`: reads and recording calls) are answered
/// inline as they are decoded, their replies queued in call order until what they wait for (a commit, an opaque
/// `ReplyGate` here) is done, so a call costs no task and no thread hop, and one commit wakes every connection
/// waiting for it once. A call that must suspend runs as a task, and the connection reads and decodes nothing
/// further until it is answered. The replies to everything one read brought go out in one write.
///
/// Reading pauses while the socket's output is full or many replies wait, so a client that pipelines faster than
/// it reads is slowed by its socket, not buffered in our memory. A stream (`more`) holds the connection until it
/// ends; input is then only read to notice the client leaving, and the connection closes when the stream ends
/// (calls sent after a stream call are not answered). A bounded stream ends with a last reply without
/// `continues`; nothing is read meanwhile, and the calls that follow it are answered as usual.
///
/// What to do at each event is decided by a `ConnectionStateMachine` (no I/O, tested transition by transition);
/// this handler feeds it the channel's events and performs its actions: reads, writes, tasks, closing.
final class VarlinkConnection: ChannelInboundHandler, GateWatcher {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    typealias Send = ConnectionStateMachine.Send
    typealias SendFrame = ConnectionStateMachine.SendFrame

    private let handler: any CallHandler
    private let logger: Logger
    private let notifier: GateNotifier
    private let executor: EventLoopTaskExecutor
    /// Where the connection's unfinished input is counted against the service's input budget.
    private let registry: ConnectionRegistry?
    private var context: ChannelHandlerContext?
    private var peer = PeerCredentials.unknown
    /// What the connection does; this class performs it on the channel.
    private var machine: ConnectionStateMachine
    /// The unfinished input last reported to the registry's budget.
    private var reportedInput = 0
    private var scratch: [UInt8] = []
    /// The task running a stream's replies (open or bounded), cancelled when the client leaves.
    private var streamTask: Task<Void, Never>?
    /// Flushes the replies of the loop's connections once per turn (the listener's); without one, each write is
    /// flushed at once.
    private let flusher: TurnFlusher?
    /// Resumes paused connections in rounds (the listener's, one per loop; a connection made without one makes its
    /// own when it first pauses).
    private var rounds: PassRounds?
    /// A read was asked of the channel and no input has come since: the channel's own `readPending` (NIO clears it as
    /// input is delivered, or at the end of input). Asking again would change nothing and cost a pass through the
    /// pipeline: a durable call asked twice, after its read and after its commit.
    private var readRequested = false
    /// Decoding was paused (its share of the turn spent) and a task on the loop will resume it.
    private var resumeScheduled = false
    /// The replies encoded and not yet written (`collect`): a lone encoded reply's own buffer, or several copied into
    /// `out`; `collected` counts them.
    private var lone: ByteBuffer?
    private var out = ByteBuffer()
    private var collected = 0

    /// This connection's share of one pass over its input (`PassBudget.standard` but in tests).
    private let pass: PassBudget

    init(
        handler: any CallHandler, maxFrameSize: Int, logger: Logger, notifier: GateNotifier,
        executor: EventLoopTaskExecutor, registry: ConnectionRegistry? = nil, flusher: TurnFlusher? = nil,
        rounds: PassRounds? = nil, pass: PassBudget = .standard
    ) {
        self.pass = pass
        self.registry = registry
        self.flusher = flusher
        self.rounds = rounds
        self.handler = handler
        self.logger = logger
        self.notifier = notifier
        self.executor = executor
        self.machine = ConnectionStateMachine(maxFrameSize: maxFrameSize)
        scratch.reserveCapacity(4_096)
    }

    // MARK: Channel events

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive { start(context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        streamTask?.cancel()
        if let push = machine.closed() {
            // Told on the loop's next turn: a write inside a publish can close the channel, and the subscription's
            // removal must not run inside that publish's pass over the subscribers.
            context.eventLoop.execute { push.connectionClosed() }
        }
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        readRequested = false
        let buffer = unwrapInboundIn(data)
        buffer.withUnsafeReadableBytes { machine.received($0) }
        process()
        holdInput()
    }

    /// Counts what the connection holds against the input budget; over it, the connection holding the most input is
    /// closed (this one or another: all of them run on this event loop).
    private func holdInput() {
        guard let registry, let channel = context?.channel else { return }
        let held = machine.heldInput
        // Nearly every read ends with every frame answered and nothing held: no change to report.
        guard held != reportedInput else { return }
        reportedInput = held
        guard let victim = registry.holdInput(channel, bytes: held) else { return }
        logger.notice(
            "closing the connection holding the most unfinished input: input budget reached",
            metadata: ["budget": "\(registry.inputBudget)"])
        victim.close(promise: nil)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        drain(inTurn: true)
        readIfPossible()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        machine.push?.writable()
        scheduleResume()
        readIfPossible()
        context.fireChannelWritabilityChanged()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, case .inputClosed = event {
            readRequested = false
            // Answer what already arrived, then close (unless a stream holds the connection).
            machine.inputEnded()
            process()
            drain()
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        logger.debug("connection closed", metadata: ["peer": "\(peer)", "error": "\(error)"])
        context.close(promise: nil)
    }

    // MARK: Calls

    /// Reads the peer's credentials (the access policy needs them), then starts reading.
    private func start(_ context: ChannelHandlerContext) {
        guard machine.started() else { return }
        peer = PeerCredentials.now(of: context.channel)
        readIfPossible()
    }

    /// Asks for more input when the connection wants it (not while a call runs, the output is full, or many
    /// replies wait).
    ///
    /// The machine knows whether the channel is active: it wants nothing before `start` or after `channelInactive`.
    private func readIfPossible() {
        guard !readRequested, let context, machine.wantsInput(writable: context.channel.isWritable) else { return }
        readRequested = true
        context.read()
    }

    /// Decodes and answers the calls received, in order, until one has to run as a task or the connection's share of
    /// the pass is spent (`pass`: its time, calls or shared bytes): then decoding pauses until `scheduleResume` finds the
    /// output able to take more.
    private func process() {
        var calls = 0
        // Whether the last call built its reply here (so it may have been costly): the clock is read after such a
        // call, and after every 8th; cheap pipelined calls (a shared encoded decision, a write waiting for its
        // commit) read it seldom.
        var built = false
        var sharedBytes = 0
        let began = smartstack_monotonic_nanoseconds()
        while true {
            if calls > 0 {
                // Nothing more arrived (a client with one call in flight): no clock to read again.
                if machine.heldInput == 0 { return }
                if calls >= pass.calls || sharedBytes >= pass.sharedBytes
                    || ((built || calls & 7 == 0)
                        && smartstack_monotonic_nanoseconds() &- began >= pass.nanoseconds)
                {
                    machine.pauseDecoding()
                    return
                }
            }
            calls &+= 1
            let call: VarlinkCall
            switch machine.nextCall() {
            case .none:
                return
            case .framingError(let error):
                logger.notice(
                    "closing connection on a framing error", metadata: ["peer": "\(peer)", "error": "\(error)"])
                return
            case .call(let decoded):
                call = decoded
                registry?.countCall()
            }
            let answer: ImmediateOutcome
            if let immediate = handler.handleImmediately(call, peer: peer) {
                answer = immediate
            } else {
                let handler = self.handler
                let peer = self.peer
                answer = .later { await handler.handle(call, peer: peer) }
            }
            built = answer.buildsReply
            if case .done(.encoded(let shared)) = answer { sharedBytes &+= shared.buffer.readableBytes }
            switch machine.answered(answer, oneway: call.oneway) {
            case .next:
                // A reply built here, with more calls waiting: encoded as the pass goes, so the pass's time counts it.
                if built, machine.heldInput > 0 { collect() }
            case .runTask(let body): run(call, body)
            }
        }
    }

    /// Runs a call that suspends as a task on the loop's executor; the connection waits for its outcome.
    private func run(_ call: VarlinkCall, _ body: @escaping @Sendable () async -> CallOutcome) {
        guard let context else { return }
        let connection = NIOLoopBound(self, eventLoop: context.eventLoop)
        let eventLoop = context.eventLoop
        Task(executorPreference: executor) {
            let outcome = await body()
            eventLoop.execute { connection.value.finished(call, outcome) }
        }
    }

    private func finished(_ call: VarlinkCall, _ outcome: CallOutcome) {
        machine.taskFinished(outcome, oneway: call.oneway)
        guard context != nil else { return }
        process()
        // The frames that waited behind the task were just answered: the budget stops counting them now, not at
        // the connection's next read (which may never come).
        holdInput()
        drain()
        readIfPossible()
    }

    /// Resumes a paused connection in the loop's next round (`PassRounds`), once its output can take more (after the
    /// replies of the pass were written; a socket that cannot take them resumes it when it can,
    /// `channelWritabilityChanged`).
    private func scheduleResume() {
        guard machine.decodingPaused, !resumeScheduled, let context, context.channel.isWritable else { return }
        resumeScheduled = true
        let rounds = self.rounds ?? PassRounds(eventLoop: context.eventLoop)
        self.rounds = rounds
        rounds.add { self.resume() }
    }

    private func resume() {
        resumeScheduled = false
        guard context != nil, machine.decodingPaused else { return }
        machine.resumeDecoding()
        process()
        holdInput()
        drain()
        readIfPossible()
    }

    // MARK: Replies

    /// Encodes the replies whose outcome is known, in call order, into the pass's output (`lone`, `out`); stops at the
    /// first that waits for a gate. A lone encoded reply is kept as its own buffer (shared with every call that gets
    /// the same decision: no copy); several are copied into one buffer. Called between the calls of a pipelined pass
    /// too, so the pass's time counts what its replies cost to encode.
    private func collect() {
        guard let context else { return }
        replies: while true {
            let outcome: CallOutcome
            switch machine.nextReply() {
            case .none:
                return
            case .blocked(let gate, let watch):
                if watch { self.watch(gate) }
                return
            case .reply(let next):
                outcome = next
            }
            collected &+= 1
            if case .encoded(let reply) = outcome, lone == nil, out.writerIndex == 0 {
                lone = reply.buffer
                continue
            }
            if let written = lone {
                lone = nil
                // Room for as many replies of its size as are queued (bounded; the buffer grows past it).
                let expected = written.readableBytes &* min(machine.queuedReplies &+ 2, 256)
                out = context.channel.allocator.buffer(capacity: max(expected, 4_096))
                out.writeImmutableBuffer(written)
            }
            let reply: VarlinkReply
            switch outcome {
            case .reply(let parameters): reply = VarlinkReply(parameters: parameters)
            case .failure(let error): reply = VarlinkReply(error: error)
            case .encoded(let encoded):
                out.writeImmutableBuffer(encoded.buffer)
                continue replies
            case .stream, .boundedStream, .push: continue replies  // streams never queue
            }
            scratch.removeAll(keepingCapacity: true)
            reply.encode(into: &scratch)
            out.writeBytes(scratch)
        }
    }

    /// Writes the replies whose outcome is known, in call order, in one write; waits for the first pending commit.
    /// Then starts a stream whose turn it is, or closes a connection that is finishing.
    ///
    /// `inTurn`: the drain follows a read, among the loop's other reads of this turn. A lone reply written then is
    /// flushed with the turn's others (`TurnFlusher`): its client, with one call in flight, is asleep until it comes.
    /// Several replies (a client pipelining, busy with its window) are flushed at once, so the client refills its
    /// window sooner; deferred, they cost the mixed load 12 % (server CPU per call 4.55 -> 5.15 us). Any other drain
    /// (a commit known, a task finished) runs among the loop's tasks, after the turn's reads: it flushes at once,
    /// since a flush deferred from there would wait for the next turn's reads.
    private func drain(inTurn: Bool = false) {
        guard let context else { return }
        collect()
        if let written = lone ?? (out.readableBytes > 0 ? out : nil) {
            context.write(wrapOutboundOut(written), promise: nil)
            flush(context, withTurn: inTurn && collected == 1)
        }
        lone = nil
        out = ByteBuffer()
        collected = 0
        scheduleResume()
        switch machine.afterReplies() {
        case .none: break
        case .startStream(let stream):
            // What was answered goes out before the stream's frames (which flush on their own).
            context.flush()
            startStream(stream, context: context)
        case .close:
            // ...and before the connection closes.
            context.flush()
            context.close(promise: nil)
        }
    }

    /// Flushes the replies just written: with the turn's others when asked and the loop has a flusher, else at once.
    private func flush(_ context: ChannelHandlerContext, withTurn: Bool) {
        if withTurn, let flusher { flusher.flush(context) } else { context.flush() }
    }

    /// Asks to be told when `gate` opens (`gateOpened`).
    private func watch(_ gate: any ReplyGate) {
        notifier.notify(when: gate, self)
    }

    /// The gate the first queued reply waited for opened: the replies it held are written.
    func gateOpened(_ gate: ObjectIdentifier) {
        machine.gateOpened(gate)
        drain()
        readIfPossible()
    }

    /// Runs a stream's replies: pushed from the loop, or on a task, each written when the previous one was; the
    /// connection closes when an open stream ends, and serves the next calls when a bounded one has sent its last
    /// reply. A client that leaves cancels the task; a cancelled write closes the connection.
    private func startStream(_ stream: ConnectionStateMachine.Stream, context: ChannelHandlerContext) {
        switch stream {
        case .open(let run):
            streamTask = Self.runStream(run, on: context.channel, executor: executor)
        case .push(let frames):
            // Ended before it started (cut off, or the service stopping): the connection closes.
            if frames.hasEnded {
                context.close(promise: nil)
            } else {
                frames.start(on: context.channel)
            }
        case .bounded(let run):
            let connection = NIOLoopBound(self, eventLoop: context.eventLoop)
            let eventLoop = context.eventLoop
            streamTask = Self.runBoundedStream(run, on: context.channel, executor: executor) {
                eventLoop.execute { connection.value.boundedStreamEnded() }
            }
        }
        readIfPossible()
    }

    /// A bounded stream sent its last reply: the calls that came meanwhile are answered, then reading resumes.
    private func boundedStreamEnded() {
        streamTask = nil
        machine.boundedStreamEnded()
        guard context != nil else { return }
        process()
        holdInput()
        drain()
        readIfPossible()
    }

    /// Runs a bounded stream: its replies with `continues`, then its last one; `ended` once that was written.
    private static func runBoundedStream(
        _ run: @escaping @Sendable (_ send: @escaping Send) async throws -> CallOutcome, on channel: any Channel,
        executor: EventLoopTaskExecutor, ended: @escaping @Sendable () -> Void
    ) -> Task<Void, Never> {
        Task(executorPreference: executor) {
            do {
                let last = try await run { parameters in
                    var frame: [UInt8] = []
                    VarlinkReply(parameters: parameters, continues: true).encode(into: &frame)
                    try await write(frame, to: channel)
                }
                try await write(lastFrame(last), to: channel)
                ended()
            } catch {
                channel.close(promise: nil)
            }
        }
    }

    /// A bounded stream's last reply, without `continues`.
    private static func lastFrame(_ outcome: CallOutcome) -> [UInt8] {
        var frame: [UInt8] = []
        switch outcome {
        case .reply(let parameters): VarlinkReply(parameters: parameters).encode(into: &frame)
        case .encoded(let reply): frame = reply.frame
        case .failure(let error): VarlinkReply(error: error).encode(into: &frame)
        case .stream, .boundedStream, .push: VarlinkReply(parameters: [:]).encode(into: &frame)  // not a last reply
        }
        return frame
    }

    private static func runStream(
        _ run: @escaping @Sendable (_ send: @escaping SendFrame) async throws -> Void, on channel: any Channel,
        executor: EventLoopTaskExecutor
    ) -> Task<Void, Never> {
        Task(executorPreference: executor) {
            try? await run { frame in try await push(frame, to: channel) }
            channel.close(promise: nil)
        }
    }

    /// Sends a stream's frame: while the socket takes what is written, without waiting for the write (a push to many
    /// subscribers then costs one write each, not a suspension each); once it is full, waiting for the write, so a
    /// client that stops reading holds its stream (whose bounded queue then cuts it off), not our memory.
    private static func push(_ frame: [UInt8], to channel: any Channel) async throws {
        guard channel.isWritable else { return try await write(frame, to: channel) }
        try Task.checkCancellation()
        channel.writeAndFlush(ByteBuffer(bytes: frame), promise: nil)
    }

    private static func write(_ frame: [UInt8], to channel: any Channel) async throws {
        let promise = channel.eventLoop.makePromise(of: Void.self)
        channel.writeAndFlush(ByteBuffer(bytes: frame), promise: promise)
        try await withTaskCancellationHandler {
            try await promise.futureResult.get()
        } onCancel: {
            channel.close(promise: nil)
        }
    }
}

extension ImmediateOutcome {
    /// Whether the call's reply was built as its answer (a reply object or an error, encoded when written), rather
    /// than a frame encoded once and shared, or a reply that waits for a commit.
    fileprivate var buildsReply: Bool {
        guard case .done(let outcome) = self else { return false }
        switch outcome {
        case .reply, .failure: return true
        case .encoded, .stream, .push, .boundedStream: return false
        }
    }
}
