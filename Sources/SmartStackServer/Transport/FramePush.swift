import Collections
import NIOCore

/// A stream's frames pushed from the event loop straight to its connection: no task and no suspension per frame,
/// and one write per subscriber per turn of the loop however many frames the turn's publishes made.
///
/// Created when the stream call is answered (frames sent before the connection starts the stream wait here, in
/// order, behind the replies to the calls before it), started by the connection once those are written. While the
/// socket takes output, a frame is written at once; otherwise it waits, and more than `limit` waiting frames (a
/// client that stopped reading) end the stream: `send` returns false and the connection is closed. Used on the
/// connection's event loop only (the engine's).
public final class FramePush: @unchecked Sendable {
    private enum State {
        case waiting
        case started(any Channel)
        case ended
    }

    private var state = State.waiting
    private var queued: Deque<ByteBuffer> = []
    private var limit: Int
    /// `finish()` came before the stream started: close once started, after what waited (and its last frame).
    private var finishing = false
    private var lastFrame: ByteBuffer?
    /// A flush is scheduled for the end of the loop's turn.
    private var flushScheduled = false
    /// Called once when the client leaves (the subscription is then removed); not when the service ends the
    /// stream itself (`close`, `finish`).
    public var onClientGone: (() -> Void)?

    /// `limit`: frames that may wait for the socket before the stream is ended.
    public init(limit: Int) { self.limit = limit }

    /// Sends a frame now when the socket takes it, else queues it. False when the stream has ended or more than
    /// `limit` frames wait (then the caller drops the subscription, which calls `close`).
    func send(_ frame: ByteBuffer) -> Bool {
        switch state {
        case .ended:
            return false
        case .waiting:
            queued.append(frame)
        case .started(let channel):
            if queued.isEmpty {
                // Frames written earlier in this turn and not yet flushed may fill the channel's buffer: those go
                // out now, so only a client that does not read ever finds the socket full.
                if !channel.isWritable { channel.flush() }
                if channel.isWritable {
                    channel.write(frame, promise: nil)
                    flushAtEndOfTurn(channel)
                    return true
                }
            }
            queued.append(frame)
            flush(channel)
        }
        return queued.count <= limit
    }

    /// Flushes once the loop's current turn is done: a publish per call, many calls read in one turn, reach a
    /// subscriber as one write instead of one each (a write(2) per frame per subscriber was a third of the loop's
    /// time with 100 subscribers).
    private func flushAtEndOfTurn(_ channel: any Channel) {
        guard !flushScheduled else { return }
        flushScheduled = true
        channel.eventLoop.execute { [self] in
            flushScheduled = false
            channel.flush()
        }
    }

    /// Sends one of the frames the stream starts with: they do not count against `limit` (a subscription may
    /// follow more stacks than `limit`).
    func sendInitial(_ frame: ByteBuffer) -> Bool {
        limit += 1
        return send(frame)
    }

    /// `send` of a frame in an array (tests, callers without a buffer).
    public func send(_ frame: [UInt8]) -> Bool { send(ByteBuffer(bytes: frame)) }

    /// `sendInitial` of a frame in an array.
    public func sendInitial(_ frame: [UInt8]) -> Bool { sendInitial(ByteBuffer(bytes: frame)) }

    /// The connection starts the stream (the replies before it are written): what waited goes out.
    func start(on channel: any Channel) {
        guard case .waiting = state else { return }
        state = .started(channel)
        if finishing {
            finish(with: lastFrame)
        } else {
            flush(channel)
        }
    }

    /// The socket takes output again.
    func writable() {
        if case .started(let channel) = state { flush(channel) }
    }

    private func flush(_ channel: any Channel) {
        var wrote = false
        while channel.isWritable, let frame = queued.popFirst() {
            channel.write(frame, promise: nil)
            wrote = true
        }
        if wrote { channel.flush() }
    }

    /// The service ends the stream (shutdown): what waits is written, then `last` (the stream's last reply, an error
    /// saying why it ends), then the connection closes.
    public func finish(with last: [UInt8]? = nil) {
        finish(with: last.map { ByteBuffer(bytes: $0) })
    }

    private func finish(with last: ByteBuffer?) {
        switch state {
        case .ended:
            return
        case .waiting:
            finishing = true
            lastFrame = last
        case .started(let channel):
            state = .ended
            for frame in queued { channel.write(frame, promise: nil) }
            queued.removeAll()
            channel.writeAndFlush(last ?? ByteBuffer(), promise: nil)
            channel.close(promise: nil)
        }
    }

    /// The service drops the stream at once (its client stopped reading): the connection closes, what waited is
    /// dropped.
    public func close() {
        let channel: (any Channel)?
        if case .started(let started) = state { channel = started } else { channel = nil }
        state = .ended
        queued.removeAll()
        onClientGone = nil
        channel?.close(promise: nil)
    }

    /// The connection closed (the client left, or a close above took effect).
    func connectionClosed() {
        if case .ended = state {
            onClientGone = nil
            return
        }
        state = .ended
        queued.removeAll()
        let gone = onClientGone
        onClientGone = nil
        gone?()
    }

    /// Whether the stream was ended before the connection started it (it then closes without streaming).
    var hasEnded: Bool {
        if case .ended = state { return true }
        return false
    }
}
