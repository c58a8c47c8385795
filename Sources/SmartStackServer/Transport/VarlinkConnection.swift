import AsyncAlgorithms
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
/// A reader task decodes frames into batches (all calls that arrived together) and hands them to the
/// processor through a channel without buffering, so a client that pipelines faster than it is answered
/// is slowed by the socket, not by our memory. Replies to one batch go out in one write.
struct VarlinkConnection {
    let channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>
    let handler: any CallHandler
    let maxFrameSize: Int
    let logger: Logger

    func run() async {
        let peer = await PeerCredentials.of(channel.channel)
        do {
            try await channel.executeThenClose { inbound, outbound in
                let batches = AsyncChannel<[VarlinkCall]>()
                let closed = OneShotSignal()
                await withTaskGroup(of: Void.self) { group in
                    group.addTask {
                        await read(inbound, into: batches, peer: peer)
                        closed.fire()
                        batches.finish()
                    }
                    // The processor answers every call that arrived, even after the client closed its side;
                    // when it ends (all answered, a failed write, a stream cut off) the reader is cancelled.
                    do {
                        try await process(batches, outbound: outbound, closed: closed, peer: peer)
                    } catch {
                        logger.debug("connection ended", metadata: ["peer": "\(peer)", "error": "\(error)"])
                    }
                    group.cancelAll()
                }
            }
        } catch {
            logger.debug("connection closed with error", metadata: ["peer": "\(peer)", "error": "\(error)"])
        }
    }

    private func read(
        _ inbound: NIOAsyncChannelInboundStream<ByteBuffer>, into batches: AsyncChannel<[VarlinkCall]>,
        peer: PeerCredentials
    ) async {
        var decoder = VarlinkFrameDecoder(maxFrameSize: maxFrameSize)
        do {
            for try await buffer in inbound {
                decoder.append(buffer.readableBytesView)
                var batch: [VarlinkCall] = []
                do {
                    while let frame = try decoder.next() { batch.append(try VarlinkCall(frame: frame)) }
                } catch {
                    // Answer what came before the broken frame, then close: the stream can't be resynchronised.
                    logger.notice("closing connection on a framing error", metadata: ["peer": "\(peer)", "error": "\(error)"])
                    if !batch.isEmpty { await batches.send(batch) }
                    return
                }
                if !batch.isEmpty { await batches.send(batch) }
            }
        } catch {
            logger.debug("read failed", metadata: ["peer": "\(peer)", "error": "\(error)"])
        }
    }

    private func process(
        _ batches: AsyncChannel<[VarlinkCall]>, outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>,
        closed: OneShotSignal, peer: PeerCredentials
    ) async throws {
        var out: [UInt8] = []
        out.reserveCapacity(4_096)
        for await batch in batches {
            for call in batch {
                let outcome = await handler.handle(call, peer: peer)
                switch outcome {
                case .reply(let parameters):
                    guard !call.oneway else { continue }
                    VarlinkReply(parameters: parameters).encode(into: &out)
                case .failure(let error):
                    guard !call.oneway else { continue }
                    VarlinkReply(error: error).encode(into: &out)
                case .stream(let run):
                    if !out.isEmpty {
                        try await outbound.write(ByteBuffer(bytes: out))
                        out.removeAll(keepingCapacity: true)
                    }
                    try await stream(run, outbound: outbound, closed: closed)
                    // A stream ends only when the service cuts it off (a slow reader, shutdown) or the client
                    // went away; either way the connection is done.
                    return
                }
            }
            if !out.isEmpty {
                try await outbound.write(ByteBuffer(bytes: out))
                out.removeAll(keepingCapacity: true)
            }
        }
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
