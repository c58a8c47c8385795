import NIOCore
import NIOPosix
public import SmartStackProtocol

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

/// An async Varlink client over a Unix socket: one call at a time, or one stream, per connection.
///
/// Connections are scoped: `VarlinkClient.withConnection(path:)` opens one, runs the body with a client, and
/// closes it when the body returns or throws.
public struct VarlinkClient: ~Copyable {
    private var inbound: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator
    private let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    private var decoder: VarlinkFrameDecoder
    /// The socket path connected to.
    public let path: String

    /// Connects to the service at a Unix socket path and runs `body` with a client on that connection.
    public static func withConnection<Result: Sendable>(
        path: String, maxFrameSize: Int = 16 << 20, _ body: (inout VarlinkClient) async throws -> Result
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
            throw VarlinkClientError.connection("cannot connect to \(path): \(error)")
        }
        return try await channel.executeThenClose { inbound, outbound in
            var client = VarlinkClient(
                inbound: inbound.makeAsyncIterator(), outbound: outbound, path: path, maxFrameSize: maxFrameSize)
            return try await body(&client)
        }
    }

    private init(
        inbound: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator,
        outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>, path: String, maxFrameSize: Int
    ) {
        self.inbound = inbound
        self.outbound = outbound
        self.path = path
        self.decoder = VarlinkFrameDecoder(maxFrameSize: maxFrameSize)
    }

    /// Calls a method and returns its reply's parameters; a typed error is thrown as `.remote`.
    public mutating func call(_ method: String, _ parameters: JSONObject = JSONObject())
        async throws(VarlinkClientError)
        -> JSONObject
    {
        try await send(method, parameters, more: false, oneway: false)
        return try await nextReply().parameters
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
            let reply = try await nextReply()
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
                do throws(VarlinkClientError) { result = .success(try await nextReply().parameters) } catch {
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

    private mutating func nextReply() async throws(VarlinkClientError) -> Reply {
        while true {
            let frame: [UInt8]?
            do { frame = try decoder.next() } catch { throw .protocolViolation("\(error)") }
            if let frame {
                let value: JSONValue
                do { value = try JSON.parse(frame) } catch { throw .protocolViolation("reply is not JSON: \(error)") }
                guard case .object(let object) = value else { throw .protocolViolation("reply is not an object") }
                var parameters = JSONObject()
                if case .object(let given)? = object["parameters"] { parameters = given }
                if case .string(let name)? = object["error"] {
                    throw .remote(VarlinkError(name: name, parameters: parameters))
                }
                var continues = false
                if case .bool(let flag)? = object["continues"] { continues = flag }
                return Reply(parameters: parameters, continues: continues)
            }
            let buffer: ByteBuffer?
            do { buffer = try await inbound.next() } catch { throw .connection("read failed: \(error)") }
            guard let buffer else { throw .connection("the service closed the connection") }
            decoder.append(buffer.readableBytesView)
        }
    }
}
