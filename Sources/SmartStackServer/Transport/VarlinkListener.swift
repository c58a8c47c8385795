public import Logging
public import NIOCore
import NIOPosix
public import ServiceLifecycle

#if canImport(Glibc)
    import Glibc
#endif

/// Where the service listens.
public enum ListenTarget: Sendable, Hashable, CustomStringConvertible {
    /// A Unix socket path the service binds itself.
    case path(String)
    /// A listening socket passed in (by systemd's socket activation), with the path it is bound to if known.
    case fileDescriptor(Int32, path: String?)

    public var description: String {
        switch self {
        case .path(let path): "unix:\(path)"
        case .fileDescriptor(let fd, let path): path.map { "unix:\($0) (fd \(fd))" } ?? "fd \(fd)"
        }
    }
}

/// Accepts Varlink connections on a Unix socket and serves each in its own task until shutdown.
public struct VarlinkListener: Service {
    public let target: ListenTarget
    let handler: any CallHandler
    let connections: ConnectionRegistry
    let maxFrameSize: Int
    let socketMode: mode_t
    let directoryMode: mode_t
    let logger: Logger
    let onListening: @Sendable () async -> Void
    let onShutdown: @Sendable () async -> Void
    /// The loop that accepts, serves every connection and runs the engine's actor.
    let eventLoop: any EventLoop

    public init(
        target: ListenTarget, handler: any CallHandler, connections: ConnectionRegistry, maxFrameSize: Int,
        socketMode: UInt32 = 0o600, directoryMode: UInt32 = 0o700, logger: Logger,
        eventLoop: any EventLoop,
        onListening: @escaping @Sendable () async -> Void = {}, onShutdown: @escaping @Sendable () async -> Void = {}
    ) {
        self.eventLoop = eventLoop
        self.target = target
        self.handler = handler
        self.connections = connections
        self.maxFrameSize = maxFrameSize
        self.socketMode = mode_t(socketMode)
        self.directoryMode = mode_t(directoryMode)
        self.logger = logger
        self.onListening = onListening
        self.onShutdown = onShutdown
    }

    /// Binds (or adopts) the socket; throws `ListenError` when it can't, before anything is served.
    public func bind() async throws -> NIOAsyncChannel<NIOAsyncChannel<ByteBuffer, ByteBuffer>, Never> {
        let bootstrap = ServerBootstrap(group: eventLoop)
            .serverChannelOption(.backlog, value: 512)
            .childChannelOption(.allowRemoteHalfClosure, value: true)
        let initializer: @Sendable (any Channel) -> EventLoopFuture<NIOAsyncChannel<ByteBuffer, ByteBuffer>> = {
            channel in
            channel.eventLoop.makeCompletedFuture {
                try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
            }
        }
        switch target {
        case .path(let path):
            try SocketPath.prepare(path, directoryMode: directoryMode)
            do {
                let server = try await bootstrap.bind(unixDomainSocketPath: path, childChannelInitializer: initializer)
                SocketPath.setMode(path, mode: socketMode)
                return server
            } catch {
                throw ListenError(path: path, reason: "\(error)")
            }
        case .fileDescriptor(let fd, let path):
            do {
                return try await bootstrap.bind(fd, childChannelInitializer: initializer)
            } catch {
                throw ListenError(path: path ?? "fd \(fd)", reason: "\(error)")
            }
        }
    }

    public func run() async throws {
        let server = try await bind()
        logger.info("listening", metadata: ["address": "\(target)"])
        await onListening()
        let serverChannel = server.channel
        let connections = self.connections
        let executor = EventLoopTaskExecutor(eventLoop)
        try await withGracefulShutdownHandler {
            try await withThrowingDiscardingTaskGroup { group in
                try await server.executeThenClose { inbound in
                    for try await connection in inbound {
                        guard connections.admit(connection.channel) else {
                            logger.warning("client rejected: connection limit", metadata: ["limit": "\(connections.limit)"])
                            // Closing through the async channel finishes its writer (NIO requires that).
                            group.addTask { try? await connection.executeThenClose { _, _ in } }
                            continue
                        }
                        group.addTask(executorPreference: executor) {
                            await VarlinkConnection(
                                channel: connection, handler: handler, maxFrameSize: maxFrameSize, logger: logger
                            ).run()
                            connections.remove(connection.channel)
                        }
                    }
                }
            }
        } onGracefulShutdown: {
            // Stop accepting, end streams, and let every connection answer what it already received.
            serverChannel.close(promise: nil)
            connections.closeInputs()
            Task { await onShutdown() }
        }
        if case .path(let path) = target { unlink(path) }
        logger.info("stopped listening", metadata: ["address": "\(target)"])
    }
}
