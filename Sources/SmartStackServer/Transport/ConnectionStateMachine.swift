import Collections
import SmartStackProtocol

/// What one Varlink connection is doing, without I/O: events in (input arrived, a call was answered, a task
/// finished, a gate opened, the input ended, the channel closed), actions out (the next call to answer, a task to
/// run, the next reply to write, a gate to watch, a stream to start, the connection to close). `VarlinkConnection`
/// performs the actions on its channel; this type decides them, and its tests drive every transition without a
/// channel (`ConnectionStateMachineTests`).
///
/// One call at a time is decoded and answered: calls that need no suspension are answered as they are decoded, their
/// outcomes queued in call order (one waiting for a gate, a commit, holds the ones after it); a call that must
/// suspend puts the connection in `runningTask` until its outcome comes back; a stream call waits for the replies
/// queued before it, then holds the connection (an open stream) or the calls after it (a bounded one).
struct ConnectionStateMachine {
    typealias Send = @Sendable (JSONObject) async throws -> Void
    typealias SendFrame = @Sendable ([UInt8]) async throws -> Void

    /// A stream call's replies, as the connection runs them.
    enum Stream {
        /// An open stream, sending whole frames from a task.
        case open(@Sendable (_ send: @escaping SendFrame) async throws -> Void)
        /// A stream that ends with a last reply, after which the connection serves the calls that follow.
        case bounded(@Sendable (_ send: @escaping Send) async throws -> CallOutcome)
        /// An open stream whose frames the service pushes from the loop.
        case push(FramePush)

        var isBounded: Bool {
            if case .bounded = self { return true }
            return false
        }
    }

    /// The connection's phase; a line per case.
    enum State {
        /// The peer's credentials are not known yet: nothing is read.
        case starting
        /// Decoding calls and answering them; their replies queue in call order.
        case serving
        /// A call runs as a task: nothing after it is decoded until its outcome comes (`taskFinished`).
        case runningTask
        /// A stream call was answered: it starts once the replies queued before it are written.
        case streamWaiting(Stream)
        /// An open stream runs and holds the connection: input is read only to notice the client leaving, and the
        /// connection closes when the stream ends. `push` is the pushed stream it serves, if it is one.
        case streaming(push: FramePush?)
        /// A bounded stream runs: nothing is read meanwhile, and what already arrived waits for its end.
        case boundedStreaming
        /// The channel closed, or the connection asked to close it: every event is ignored.
        case closed
    }

    /// Whether more calls can come.
    enum Input: Equatable {
        case open
        /// The client closed its side (or the service is shutting down): what arrived is answered, then the
        /// connection closes.
        case ended
        /// A frame was broken or the client left: nothing more is decoded; what came before is answered, then
        /// the connection closes.
        case broken
    }

    /// A call's outcome waiting to be written, in call order.
    private enum Pending {
        case ready(CallOutcome, oneway: Bool)
        case waiting(any ReplyGate, then: () -> CallOutcome, oneway: Bool)
    }

    /// What `nextCall` found.
    enum NextCall {
        /// A call to answer (`answered` takes its answer).
        case call(VarlinkCall)
        /// Nothing to decode now: no whole frame, or the state decodes nothing.
        case none
        /// The input's frames broke (the connection answers what came before, then closes).
        case framingError(VarlinkFramingError)
    }

    /// What the connection does after a call was answered.
    enum AfterAnswer {
        /// Go on decoding.
        case next
        /// Run `body` as a task and hand its outcome to `taskFinished`; nothing is decoded meanwhile.
        case runTask(@Sendable () async -> CallOutcome)
    }

    /// What `nextReply` found.
    enum NextReply {
        /// The next reply in call order (oneway calls are skipped: they get none).
        case reply(CallOutcome)
        /// The first queued reply waits for `gate`: nothing more is written until it opens. `watch` is false when
        /// the connection already asked to be told (once per gate).
        case blocked(any ReplyGate, watch: Bool)
        /// Nothing is queued.
        case none
    }

    /// What the connection does once the replies that could be written were.
    enum AfterReplies {
        case none
        /// Start the stream whose call was answered (every reply before it is written).
        case startStream(Stream)
        /// Close the channel: everything that arrived is answered and no more can come.
        case close
    }

    /// Replies queued beyond this stop reading until they are written.
    static let maxQueuedReplies = 1_024

    private(set) var state = State.starting
    private(set) var input = Input.open
    /// The connection spent its share of the loop's turn (``pauseDecoding()``): the frames that arrived stay
    /// undecoded, nothing more is read, and a connection whose input ended is not closed, until
    /// ``resumeDecoding()``.
    private(set) var decodingPaused = false
    private let maxFrameSize: Int
    private var decoder: VarlinkFrameDecoder
    private var queue: Deque<Pending> = []
    /// The gate the connection asked to be told about (the first queued reply's).
    private var watched: ObjectIdentifier?

    init(maxFrameSize: Int) {
        self.maxFrameSize = maxFrameSize
        self.decoder = VarlinkFrameDecoder(maxFrameSize: maxFrameSize)
    }

    // The queries below are `mutating` though they change nothing: the connection (a class) then calls them on its
    // machine in place. Called as non-mutating on a class's stored property, each copied the whole machine (a retain
    // and a release of its queue, its decoder's buffer and its state's payload) on every read: 4 % of the loop's time
    // serving `GetStack` 50 x 1.

    /// Replies queued and not yet written.
    var queuedReplies: Int {
        mutating get { queue.count }
    }

    /// The unfinished input the connection holds, counted against the service's input budget.
    var heldInput: Int {
        mutating get { input == .broken ? 0 : decoder.heldBytes }
    }

    /// The pushed stream the connection serves (started or waiting to start), told when the socket can take more.
    var push: FramePush? {
        switch state {
        case .streaming(let push): push
        case .streamWaiting(.push(let push)): push
        default: nil
        }
    }

    // MARK: Events

    /// The peer's credentials are known: calls can be read. True the first time (the connection asks for input).
    mutating func started() -> Bool {
        guard case .starting = state else { return false }
        state = .serving
        return true
    }

    /// Bytes arrived. While an open stream runs or waits they are dropped (input only tells that the client is
    /// there); before or during a bounded one they are kept for the calls after it.
    mutating func received(_ bytes: UnsafeRawBufferPointer) {
        guard input != .broken else { return }
        switch state {
        case .closed, .streaming: return
        case .streamWaiting(let stream) where !stream.isBounded: return
        case .starting, .serving, .runningTask, .streamWaiting, .boundedStreaming:
            // Copied as raw bytes (one memcpy; appending a buffer's view goes byte by byte).
            decoder.append(bytes)
        }
    }

    /// The client closed its side: what already arrived is answered, then the connection closes (unless a stream
    /// holds it).
    mutating func inputEnded() {
        if input == .open { input = .ended }
    }

    /// The connection's share of the turn is spent: the calls that arrived wait (undecoded) for `resumeDecoding`,
    /// so one client's pipelined calls neither hold the loop nor pile up replies in memory.
    mutating func pauseDecoding() {
        guard case .serving = state else { return }
        decodingPaused = true
    }

    /// The loop came back to the connection (its output can take more): decoding goes on.
    mutating func resumeDecoding() {
        decodingPaused = false
    }

    /// The next call to answer, if the state decodes and a whole frame arrived.
    mutating func nextCall() -> NextCall {
        guard case .serving = state, input != .broken, !decodingPaused else { return .none }
        do {
            let call = try decoder.nextFrame { bytes in
                Result { () throws(VarlinkFramingError) in try VarlinkCall(bytes: bytes) }
            }
            return call.map(NextCall.call) ?? .none
        } catch {
            // The stream of bytes can't be resynchronised: answer what came before, then close.
            input = .broken
            return .framingError(error)
        }
    }

    /// The call `nextCall` gave was answered (`.later` for a call that must suspend, a handler's `nil` included).
    mutating func answered(_ answer: ImmediateOutcome, oneway: Bool) -> AfterAnswer {
        guard case .serving = state else { return .next }
        switch answer {
        case .done(let outcome):
            enqueue(outcome, oneway: oneway)
            return .next
        case .waiting(let gate, let then):
            queue.append(.waiting(gate, then: then, oneway: oneway))
            return .next
        case .later(let run):
            state = .runningTask
            return .runTask(run)
        }
    }

    /// The call that ran as a task has its outcome: decoding resumes. Ignored once the connection closed.
    mutating func taskFinished(_ outcome: CallOutcome, oneway: Bool) {
        guard case .runningTask = state else { return }
        state = .serving
        enqueue(outcome, oneway: oneway)
    }

    /// The gate the connection watched opened (`nextReply` can go on).
    mutating func gateOpened(_ gate: ObjectIdentifier) {
        if watched == gate { watched = nil }
    }

    /// The next reply to write, in call order.
    mutating func nextReply() -> NextReply {
        while let first = queue.first {
            let outcome: CallOutcome
            let oneway: Bool
            switch first {
            case .ready(let known, let isOneway):
                outcome = known
                oneway = isOneway
            case .waiting(let gate, let then, let isOneway):
                guard gate.isOpen else {
                    let key = ObjectIdentifier(gate)
                    let watch = watched != key
                    watched = key
                    return .blocked(gate, watch: watch)
                }
                outcome = then()
                oneway = isOneway
            }
            queue.removeFirst()
            if !oneway { return .reply(outcome) }
        }
        return .none
    }

    /// Once the replies that could be written were: starts a stream whose turn it is, or closes a connection that
    /// has answered everything it will get.
    mutating func afterReplies() -> AfterReplies {
        guard queue.isEmpty else { return .none }
        switch state {
        case .streamWaiting(let stream):
            switch stream {
            case .bounded: state = .boundedStreaming
            case .open: state = .streaming(push: nil)
            case .push(let push): state = .streaming(push: push)
            }
            return .startStream(stream)
        case .serving where input != .open && (!decodingPaused || input == .broken):
            state = .closed
            return .close
        case .starting, .serving, .runningTask, .streaming, .boundedStreaming, .closed:
            return .none
        }
    }

    /// A bounded stream sent its last reply: the calls that arrived meanwhile are decoded next.
    mutating func boundedStreamEnded() {
        guard case .boundedStreaming = state else { return }
        state = .serving
    }

    /// The channel closed: nothing more is answered. Returns the pushed stream it served, to be told.
    mutating func closed() -> FramePush? {
        let push = self.push
        state = .closed
        input = .broken
        queue.removeAll()
        return push
    }

    /// Whether to ask the channel for more input, given whether its output can take more.
    mutating func wantsInput(writable: Bool) -> Bool {
        switch state {
        case .starting, .runningTask, .boundedStreaming, .closed:
            return false
        case .streaming:
            return true
        case .streamWaiting(let stream) where stream.isBounded:
            // A bounded stream leaves the calls after it in the socket until it has ended.
            return false
        case .serving, .streamWaiting:
            return input == .open && queue.count < Self.maxQueuedReplies && writable && !decodingPaused
        }
    }

    // MARK: Private

    /// Queues a call's outcome; a stream call instead waits for the replies queued before it (and an open one drops
    /// what follows it: it holds the connection).
    private mutating func enqueue(_ outcome: CallOutcome, oneway: Bool) {
        switch outcome {
        case .stream(let run):
            state = .streamWaiting(
                .open { sendFrame in
                    do {
                        try await run { parameters in
                            var frame: [UInt8] = []
                            VarlinkReply(parameters: parameters, continues: true).encode(into: &frame)
                            try await sendFrame(frame)
                        }
                    } catch let error as VarlinkError {
                        // A stream that ends with an error (the service stopping) sends it as its last reply.
                        try await sendFrame(VarlinkReply(error: error).encoded)
                    }
                })
            decoder = VarlinkFrameDecoder(maxFrameSize: maxFrameSize)
        case .boundedStream(let run):
            state = .streamWaiting(.bounded(run))
        case .push(let frames):
            state = .streamWaiting(.push(frames))
            decoder = VarlinkFrameDecoder(maxFrameSize: maxFrameSize)
        case .reply, .encoded, .failure:
            queue.append(.ready(outcome, oneway: oneway))
        }
    }
}
