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
    /// Where refused connections are reported (the journal).
    let reporter: any ServiceReporter
    /// The loop that accepts, serves every connection and runs the engine's actor.
    let eventLoop: any EventLoop

    public init(
        target: ListenTarget, handler: any CallHandler, connections: ConnectionRegistry, maxFrameSize: Int,
        socketMode: UInt32 = 0o600, directoryMode: UInt32 = 0o700, logger: Logger,
        eventLoop: any EventLoop,
        onListening: @escaping @Sendable () async -> Void = {}, onShutdown: @escaping @Sendable () async -> Void = {},
        reporter: any ServiceReporter = SilentReporter()
    ) {
        self.reporter = reporter
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
    ///
    /// Accepted connections come out as plain channels that do not read yet; `serve` adds each one's
    /// ``VarlinkConnection`` handler, which starts reading. (An async channel NIO accepted while the server was
    /// closing would be dropped unfinished, which NIO treats as a fatal error; a plain channel is just closed.)
    public func bind() async throws -> NIOAsyncChannel<any Channel, Never> {
        let bootstrap = ServerBootstrap(group: eventLoop)
            .serverChannelOption(.backlog, value: 512)
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            .childChannelOption(.autoRead, value: false)
        let initializer: @Sendable (any Channel) -> EventLoopFuture<any Channel> = { channel in
            channel.eventLoop.makeSucceededFuture(channel)
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
        if case .fileDescriptor(let descriptor, let path) = target {
            try await runActivated(ActivatedSocket(descriptor: descriptor, path: path))
            return
        }
        let server = try await bind()
        logger.info("listening", metadata: ["address": "\(target)"])
        await onListening()
        let serverChannel = server.channel
        let connections = self.connections
        let executor = EventLoopTaskExecutor(eventLoop)
        let notifier = CommitNotifier(eventLoop: eventLoop)
        try await withGracefulShutdownHandler {
            try await withThrowingDiscardingTaskGroup { group in
                try await server.executeThenClose { inbound in
                    for try await channel in inbound {
                        group.addTask(executorPreference: executor) {
                            await serve(channel, notifier: notifier, executor: executor)
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

    /// Serves a socket systemd passed: accepted here (keeping the unit's backlog), each connection handed
    /// to NIO. The socket file is systemd's: it is neither removed nor re-bound.
    private func runActivated(_ socket: ActivatedSocket) async throws {
        logger.info("listening", metadata: ["address": "\(target)", "activation": "systemd"])
        await onListening()
        let connections = self.connections
        let accepted = socket.connections()
        let eventLoop = self.eventLoop
        let executor = EventLoopTaskExecutor(eventLoop)
        let notifier = CommitNotifier(eventLoop: eventLoop)
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                for await descriptor in accepted {
                    group.addTask(executorPreference: executor) {
                        let channel: any Channel
                        let bootstrap = ClientBootstrap(group: eventLoop)
                            .channelOption(.allowRemoteHalfClosure, value: true)
                            .channelOption(.autoRead, value: false)
                        do {
                            channel = try await bootstrap.withConnectedSocket(descriptor) { channel in
                                channel.eventLoop.makeSucceededFuture(channel)
                            }
                        } catch {
                            logger.notice("could not take a connection", metadata: ["error": "\(error)"])
                            return
                        }
                        await serve(channel, notifier: notifier, executor: executor)
                    }
                }
            }
        } onGracefulShutdown: {
            socket.stop()
            connections.closeInputs()
            Task { await onShutdown() }
        }
        logger.info("stopped listening", metadata: ["address": "\(target)"])
    }

    /// Serves one accepted connection until it closes, or closes it at once (with a journal entry) over the limit.
    private func serve(_ channel: any Channel, notifier: CommitNotifier, executor: EventLoopTaskExecutor) async {
        guard connections.admit(channel) else {
            let peer = await PeerCredentials.of(channel)
            reporter.clientRejected(peer, .connectionLimit(connections.limit))
            logger.debug(
                "client rejected: connection limit", metadata: ["limit": "\(connections.limit)", "peer": "\(peer)"])
            channel.close(promise: nil)
            return
        }
        let handler = self.handler
        let maxFrameSize = self.maxFrameSize
        let logger = self.logger
        do {
            // The connection reads only once its handler is in place (accepted channels do not read by themselves).
            try await channel.eventLoop.submit {
                try channel.pipeline.syncOperations.addHandler(
                    VarlinkConnection(
                        handler: handler, maxFrameSize: maxFrameSize, logger: logger, notifier: notifier,
                        executor: executor))
            }.get()
            try? await channel.closeFuture.get()
        } catch {
            channel.close(promise: nil)
        }
        connections.remove(channel)
    }
}
