import Logging
import NIOCore
public import SmartStackProtocol

/// What a call produced: a reply, a typed error, or a stream of replies.
public enum CallOutcome: Sendable {
    case reply(JSONObject)
    case failure(VarlinkError)
    /// A `more` call's replies: the closure sends each one (as `continues`) until the stream ends or the
    /// task is cancelled (the client went away).
    case stream(@Sendable (_ send: @escaping @Sendable (JSONObject) async throws -> Void) async throws -> Void)
}

/// Answers calls; the service's dispatcher, or a test's.
public protocol CallHandler: Sendable {
    func handle(_ call: VarlinkCall, peer: PeerCredentials) async -> CallOutcome
}

/// Serves one client: reads frames, answers calls in order, runs streams, and closes on framing errors.
///
/// Calls are answered inline as they are read, so a call costs no hand-off between tasks; the replies to
/// everything one read brought go out in one write. A client that pipelines faster than it is answered is
/// slowed by its socket, not buffered in our memory. A stream (`more`) runs in a child task while the loop
/// keeps reading only to notice the client leaving; the stream holds the connection until it ends, and then
/// the connection closes (calls sent after a stream call are not answered).
struct VarlinkConnection {
    let channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>
    let handler: any CallHandler
    let maxFrameSize: Int
    let logger: Logger

    func run() async {
        let peer = await PeerCredentials.of(channel.channel)
        let channel = self.channel.channel
        do {
            try await self.channel.executeThenClose { inbound, outbound in
                let closed = OneShotSignal()
                try await withThrowingTaskGroup(of: Void.self) { group in
                    defer { closed.fire() }
                    var decoder = VarlinkFrameDecoder(maxFrameSize: maxFrameSize)
                    var out: [UInt8] = []
                    out.reserveCapacity(4_096)
                    var streaming = false
                    reading: for try await buffer in inbound {
                        decoder.append(buffer.readableBytesView)
                        var broken = false
                        while !streaming {
                            let call: VarlinkCall
                            do {
                                guard let frame = try decoder.next() else { break }
                                call = try VarlinkCall(frame: frame)
                            } catch {
                                // Answer what came before the broken frame, then close: the stream of bytes
                                // can't be resynchronised.
                                logger.notice(
                                    "closing connection on a framing error",
                                    metadata: ["peer": "\(peer)", "error": "\(error)"])
                                broken = true
                                break
                            }
                            switch await handler.handle(call, peer: peer) {
                            case .reply(let parameters):
                                if !call.oneway { VarlinkReply(parameters: parameters).encode(into: &out) }
                            case .failure(let error):
                                if !call.oneway { VarlinkReply(error: error).encode(into: &out) }
                            case .stream(let run):
                                streaming = true
                                try await flush(&out, to: outbound)
                                group.addTask {
                                    // When the stream ends (cut off, shutdown, client gone) the connection ends.
                                    defer { channel.close(promise: nil) }
                                    try? await stream(run, outbound: outbound, closed: closed)
                                }
                            }
                        }
                        if streaming { decoder = VarlinkFrameDecoder(maxFrameSize: maxFrameSize) }
                        try await flush(&out, to: outbound)
                        if broken { break reading }
                    }
                }
            }
        } catch {
            logger.debug("connection closed", metadata: ["peer": "\(peer)", "error": "\(error)"])
        }
    }

    private func flush(_ out: inout [UInt8], to outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>) async throws {
        guard !out.isEmpty else { return }
        try await outbound.write(ByteBuffer(bytes: out))
        out.removeAll(keepingCapacity: true)
    }

    private func stream(
        _ run: @escaping @Sendable (_ send: @escaping @Sendable (JSONObject) async throws -> Void) async throws -> Void,
        outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>, closed: OneShotSignal
    ) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await run { parameters in
                    var frame: [UInt8] = []
                    VarlinkReply(parameters: parameters, continues: true).encode(into: &frame)
                    try await outbound.write(ByteBuffer(bytes: frame))
                }
            }
            group.addTask { await closed.wait() }
            try await group.next()
            group.cancelAll()
        }
    }
}
