import NIOCore
import NIOPosix

#if canImport(Glibc)
    import Glibc
#endif
public import SmartStackProtocol
import Synchronization

/// Why a call did not return a reply.
public enum VarlinkClientError: Error, Sendable, CustomStringConvertible {
    /// The service answered with a typed error.
    case remote(VarlinkError)
    /// The connection could not be made or broke.
    case connection(String)
    /// The service sent something that is not a Varlink reply.
    case protocolViolation(String)

    public var description: String {
        switch self {
        case .remote(let error):
            error.parameters.count == 0
                ? error.name
                : "\(error.name) \(String(decoding: JSON.serialize(.object(error.parameters)), as: UTF8.self))"
        case .connection(let reason): "connection: \(reason)"
        case .protocolViolation(let reason): "protocol: \(reason)"
        }
    }
}

/// An async Varlink client over a Unix socket: one call at a time, one stream, or a pipeline of calls
/// (`pipeline(count:window:call:reply:)`) per connection.
///
/// Connections are scoped: `VarlinkClient.withConnection(path:)` opens one, runs the body with a client, and
/// closes it when the body returns or throws.
public struct VarlinkClient: ~Copyable {
    private var inbound: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator
    private let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    private var decoder: VarlinkFrameDecoder
    private let channel: any Channel
    /// The longest a call waits for its reply (not a stream for its next one); nil: no limit. Past it the connection
    /// is closed and the call fails with `.connection`, as systemd's `varlinkctl --timeout` does.
    public let replyTimeout: Duration?
    /// The socket path connected to.
    public let path: String

    /// Connects to the service at a Unix socket path and runs `body` with a client on that connection.
    public static func withConnection<Result: Sendable>(
        path: String, maxFrameSize: Int = 16 << 20, replyTimeout: Duration? = nil,
        _ body: (inout VarlinkClient) async throws -> Result
    ) async throws -> Result {
        let channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>
        do {
            channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connect(unixDomainSocketPath: path) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            throw VarlinkClientError.connection("cannot connect to \(path): \(Self.reason(error, path: path))")
        }
        let underlying = channel.channel
        return try await channel.executeThenClose { inbound, outbound in
            var client = VarlinkClient(
                inbound: inbound.makeAsyncIterator(), outbound: outbound, channel: underlying, path: path,
                maxFrameSize: maxFrameSize, replyTimeout: replyTimeout)
            return try await body(&client)
        }
    }

    private init(
        inbound: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator,
        outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>, channel: any Channel, path: String, maxFrameSize: Int,
        replyTimeout: Duration?
    ) {
        self.inbound = inbound
        self.outbound = outbound
        self.channel = channel
        self.path = path
        self.replyTimeout = replyTimeout
        self.decoder = VarlinkFrameDecoder(maxFrameSize: maxFrameSize)
    }

    /// Calls a method and returns its reply's parameters; a typed error is thrown as `.remote`.
    public mutating func call(_ method: String, _ parameters: JSONObject = JSONObject())
        async throws(VarlinkClientError)
        -> JSONObject
    {
        try await send(method, parameters, more: false, oneway: false)
        return try await nextReply(more: false, timeout: replyTimeout).parameters
    }

    /// Calls the request's method with its parameters (`client.call(GetStackRequest(stack: home))`) and returns
    /// the reply's parameters; a typed error is thrown as `.remote`. A streaming method's request goes to
    /// `stream(_:_:)`.
    public mutating func call<Request: VarlinkMethodRequest>(_ request: Request) async throws(VarlinkClientError)
        -> JSONObject
    {
        try await call(Request.method.rawValue, request.wireParameters)
    }

    /// Calls the request's streaming method (`Subscribe`, `WatchReloads`) and hands each reply to `body` until
    /// the stream ends or `body` returns `false`.
    public mutating func stream<Request: VarlinkMethodRequest>(
        _ request: Request, _ body: (JSONObject) async throws -> Bool
    ) async throws {
        try await stream(Request.method.rawValue, request.wireParameters, body)
    }

    /// Calls a method without waiting for (or getting) a reply.
    public mutating func callOneway(_ method: String, _ parameters: JSONObject = JSONObject())
        async throws(VarlinkClientError)
    {
        try await send(method, parameters, more: false, oneway: true)
    }

    /// Calls a streaming method and hands each reply to `body` until the stream ends or `body` returns `false`.
    public mutating func stream(
        _ method: String, _ parameters: JSONObject = JSONObject(), _ body: (JSONObject) async throws -> Bool
    ) async throws {
        try await send(method, parameters, more: true, oneway: false)
        while true {
            let reply = try await nextReply(more: true, timeout: nil)
            guard try await body(reply.parameters), reply.continues else { return }
        }
    }

    /// Makes `count` calls pipelined: up to two windows of calls are written ahead of the replies, which come
    /// back in call order. `call(i)` gives the i-th call; `reply(i, result)` gets its reply or typed error.
    ///
    /// A typed error answers one call and the pipeline goes on; a broken connection ends it with
    /// `VarlinkClientError.connection`. At most `2 × window` calls are unanswered at any time, so neither side's
    /// socket buffer fills while the other waits.
    public mutating func pipeline(
        count: Int, window: Int = 256, call: (Int) -> (method: String, parameters: JSONObject),
        reply: (Int, Result<JSONObject, VarlinkError>) async throws -> Void
    ) async throws {
        let window = max(1, window)
        var sent = 0
        var received = 0
        while received < count {
            while sent < count, sent - received < 2 * window {
                var bytes: [UInt8] = []
                let end = min(count, sent + window)
                for index in sent..<end {
                    let (method, parameters) = call(index)
                    Self.encode(method, parameters, more: false, oneway: false, into: &bytes)
                }
                do { try await outbound.write(ByteBuffer(bytes: bytes)) } catch {
                    throw VarlinkClientError.connection("write failed: \(error)")
                }
                sent = end
            }
            let target = min(sent, received + window)
            while received < target {
                let result: Result<JSONObject, VarlinkError>
                do throws(VarlinkClientError) {
                    result = .success(try await nextReply(more: false, timeout: replyTimeout).parameters)
                } catch {
                    guard case .remote(let remote) = error else { throw error }
                    result = .failure(remote)
                }
                try await reply(received, result)
                received += 1
            }
        }
    }

    private func send(_ method: String, _ parameters: JSONObject, more: Bool, oneway: Bool)
        async throws(VarlinkClientError)
    {
        var bytes: [UInt8] = []
        Self.encode(method, parameters, more: more, oneway: oneway, into: &bytes)
        do { try await outbound.write(ByteBuffer(bytes: bytes)) } catch { throw .connection("write failed: \(error)") }
    }

    /// Appends one NUL-terminated call message to `bytes`.
    private static func encode(
        _ method: String, _ parameters: JSONObject, more: Bool, oneway: Bool, into bytes: inout [UInt8]
    ) {
        var message = JSONObject()
        message["method"] = .string(method)
        if parameters.count > 0 { message["parameters"] = .object(parameters) }
        if more { message["more"] = .bool(true) }
        if oneway { message["oneway"] = .bool(true) }
        JSON.serialize(.object(message), into: &bytes)
        bytes.append(0)
    }

    private struct Reply {
        var parameters: JSONObject
        var continues: Bool
    }

    /// The next reply. Its envelope is checked as sd-varlink and the reference client check it: `error` a string,
    /// `parameters` an object, `continues` a boolean and only on a call made with `more`. Past `timeout` without it
    /// the connection is closed and the wait fails.
    private mutating func nextReply(more: Bool, timeout: Duration?) async throws(VarlinkClientError) -> Reply {
        let timedOut = Self.armTimeout(timeout, on: channel)
        defer { timedOut?.task.cancel() }
        while true {
            let frame: [UInt8]?
            do { frame = try decoder.next() } catch { throw .protocolViolation("\(error)") }
            if let frame { return try Self.reply(frame, more: more) }
            let buffer: ByteBuffer?
            do { buffer = try await inbound.next() } catch {
                if let timedOut, timedOut.fired.hasFired { throw Self.noReply(timeout) }
                throw .connection("read failed: \(error)")
            }
            guard let buffer else {
                if let timedOut, timedOut.fired.hasFired { throw Self.noReply(timeout) }
                throw .connection("the service closed the connection")
            }
            decoder.append(buffer.readableBytesView)
        }
    }

    private static func noReply(_ timeout: Duration?) -> VarlinkClientError {
        .connection("connected, but no reply within \(timeout.map(Self.seconds) ?? "the time allowed")")
    }

    /// A duration as seconds, to the millisecond: `5 s`, `0.001 s` (whole seconds printed 0 for 0.001).
    static func seconds(_ duration: Duration) -> String {
        let (whole, fraction) = duration.components
        let seconds = Double(whole) + Double(fraction) / 1e18
        return seconds == seconds.rounded() ? "\(Int64(seconds)) s" : "\((seconds * 1_000).rounded() / 1_000) s"
    }

    /// Why a connect failed, in words: the system's text for its errno (swift-nio's description names its own
    /// function, `connect(descriptor:addr:size:): … (errno: 2)`), and "not a socket" for a path that exists but is
    /// not one (the system says "Connection refused", as for a socket nobody listens on).
    static func reason(_ error: any Error, path: String) -> String {
        guard let io = error as? IOError else { return "\(error)" }
        var status = stat()
        if io.errnoCode == ECONNREFUSED, stat(path, &status) == 0, status.st_mode & S_IFMT != S_IFSOCK {
            return "it is not a socket"
        }
        return String(cString: strerror(io.errnoCode))
    }

    /// Closes the channel when `timeout` passes (nil: never); `fired` tells the wait why it ended.
    private static func armTimeout(_ timeout: Duration?, on channel: any Channel) -> (
        task: Scheduled<Void>, fired: TimeoutFlag
    )? {
        guard let timeout else { return nil }
        let fired = TimeoutFlag()
        let nanoseconds = timeout.components.seconds * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000
        let task = channel.eventLoop.scheduleTask(in: .nanoseconds(nanoseconds)) {
            fired.fire()
            channel.close(promise: nil)
        }
        return (task, fired)
    }

    /// One reply frame, its envelope checked (`VarlinkReply(frame:)`), and `continues` only on a call made with
    /// `more`.
    private static func reply(_ frame: [UInt8], more: Bool) throws(VarlinkClientError) -> Reply {
        let reply: VarlinkReply
        do { reply = try VarlinkReply(frame: frame) } catch { throw .protocolViolation("reply: \(error)") }
        if let error = reply.error { throw .remote(error) }
        if reply.continues, !more { throw .protocolViolation("a reply with 'continues' to a call made without 'more'") }
        return Reply(parameters: reply.parameters, continues: reply.continues)
    }
}

/// Set when a reply's wait timed out.
final class TimeoutFlag: Sendable {
    private let value = Atomic<Bool>(false)
    func fire() { value.store(true, ordering: .releasing) }
    var hasFired: Bool { value.load(ordering: .acquiring) }
}
