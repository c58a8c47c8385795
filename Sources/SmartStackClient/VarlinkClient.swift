import NIOCore
import NIOPosix
import SmartStackProtocol

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
            error.parameters.count == 0 ? error.name : "\(error.name) \(String(decoding: JSON.serialize(.object(error.parameters)), as: UTF8.self))"
        case .connection(let reason): "connection: \(reason)"
        case .protocolViolation(let reason): "protocol: \(reason)"
        }
    }
}

/// An async Varlink client over a Unix socket: one call at a time, or one stream, per connection.
public actor VarlinkClient {
    private let channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>
    private var inbound: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator
    private let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    private var decoder: VarlinkFrameDecoder
    /// The socket path connected to.
    public nonisolated let path: String

    /// Connects to the service at a Unix socket path.
    public static func connect(path: String, maxFrameSize: Int = 16 << 20) async throws(VarlinkClientError) -> VarlinkClient {
        do {
            let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connect(unixDomainSocketPath: path) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                    }
                }
            return VarlinkClient(channel: channel, path: path, maxFrameSize: maxFrameSize)
        } catch {
            throw .connection("cannot connect to \(path): \(error)")
        }
    }

    private init(channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>, path: String, maxFrameSize: Int) {
        self.channel = channel
        self.path = path
        self.inbound = channel.inbound.makeAsyncIterator()
        self.outbound = channel.outbound
        self.decoder = VarlinkFrameDecoder(maxFrameSize: maxFrameSize)
    }

    /// Calls a method and returns its reply's parameters; a typed error is thrown as `.remote`.
    public func call(_ method: String, _ parameters: JSONObject = [:]) async throws(VarlinkClientError) -> JSONObject {
        try await send(method, parameters, more: false, oneway: false)
        let reply = try await nextReply()
        return reply.parameters
    }

    /// Calls a method without waiting for (or getting) a reply.
    public func callOneway(_ method: String, _ parameters: JSONObject = [:]) async throws(VarlinkClientError) {
        try await send(method, parameters, more: false, oneway: true)
    }

    /// Calls a streaming method and hands each reply to `body` until the stream ends, `body` returns
    /// `false`, or the task is cancelled.
    public func stream(
        _ method: String, _ parameters: JSONObject = [:],
        _ body: (JSONObject) async throws -> Bool
    ) async throws {
        try await send(method, parameters, more: true, oneway: false)
        while true {
            let reply = try await nextReply()
            guard try await body(reply.parameters), reply.continues else { return }
        }
    }

    /// Closes the connection.
    public func close() async {
        outbound.finish()
        try? await channel.channel.close()
    }

    private func send(_ method: String, _ parameters: JSONObject, more: Bool, oneway: Bool) async throws(VarlinkClientError) {
        var message = JSONObject()
        message["method"] = .string(method)
        if parameters.count > 0 { message["parameters"] = .object(parameters) }
        if more { message["more"] = .bool(true) }
        if oneway { message["oneway"] = .bool(true) }
        var bytes = JSON.serialize(.object(message))
        bytes.append(0)
        do { try await outbound.write(ByteBuffer(bytes: bytes)) } catch { throw .connection("write failed: \(error)") }
    }

    private struct Reply {
        var parameters: JSONObject
        var continues: Bool
    }

    private func nextReply() async throws(VarlinkClientError) -> Reply {
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
