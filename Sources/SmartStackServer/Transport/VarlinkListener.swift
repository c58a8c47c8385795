public import Logging
public import NIOCore
import NIOPosix
import ServiceLifecycle

#if canImport(Glibc)
    import Glibc
#endif

/// Where the service listens.
public enum ListenTarget: Sendable, Hashable, CustomStringConvertible {
    /// A Unix socket path the service binds itself.
    case path(String)
    /// A listening socket passed in (by systemd's socket activation), with the path it is bound to if known.
    case fileDescriptor(Int32, path: String?)
    /// Several listening sockets passed in (a socket unit with several `ListenStream=`), all served alike.
    case fileDescriptors([Int32])

    public var description: String {
        switch self {
        case .path(let path): "unix:\(path)"
        case .fileDescriptor(let fd, let path): Self.describe(fd, path)
        case .fileDescriptors(let fds):
            fds.map { Self.describe($0, ListenTarget.boundPath(of: $0)) }.joined(separator: ", ")
        }
    }

    private static func describe(_ fd: Int32, _ path: String?) -> String {
        path.map { "unix:\($0) (fd \(fd))" } ?? "fd \(fd)"
    }

    /// The passed sockets to serve: one, or several.
    public static func passed(_ descriptors: [Int32]) -> ListenTarget? {
        switch descriptors.count {
        case 0: nil
        case 1: .fileDescriptor(descriptors[0], path: boundPath(of: descriptors[0]))
        default: .fileDescriptors(descriptors)
        }
    }
}

/// Accepts Varlink connections on a Unix socket and serves each in its own task until shutdown.
public struct VarlinkListener: NamedService {
    public let target: ListenTarget
    let handler: any CallHandler
    let connections: ConnectionRegistry
    let maxFrameSize: Int
    /// How long a connection may take to answer what it received once the service stops (then it is closed).
    let stopGrace: TimeAmount
    let socketMode: mode_t
    let directoryMode: mode_t
    let logger: Logger
    let onListening: @Sendable () async -> Void
    let onShutdown: @Sendable () async -> Void
    /// Where refused connections are reported (the journal).
    let reporter: any ServiceReporter
    /// The loop that accepts, serves every connection and runs the engine's actor.
    let eventLoop: any EventLoop
    /// Tells the loop's connections of commits (one hop per commit).
    let notifier: GateNotifier
    /// Flushes the loop's connections' lone replies once per turn of the loop.
    let flusher: TurnFlusher
    /// Resumes the loop's connections that paused with calls left, one pass each per round.
    let rounds: PassRounds
    /// Runs the connections' tasks (calls that may suspend, streams) on the loop.
    let executor: EventLoopTaskExecutor

    public init(
        target: ListenTarget, handler: any CallHandler, connections: ConnectionRegistry, maxFrameSize: Int,
        stopGrace: TimeAmount = .seconds(5), socketMode: UInt32 = 0o600, directoryMode: UInt32 = 0o700, logger: Logger,
        eventLoop: any EventLoop,
        onListening: @escaping @Sendable () async -> Void = {}, onShutdown: @escaping @Sendable () async -> Void = {},
        reporter: any ServiceReporter = SilentReporter()
    ) {
        self.reporter = reporter
        self.eventLoop = eventLoop
        self.notifier = GateNotifier(eventLoop: eventLoop)
        self.flusher = TurnFlusher(eventLoop: eventLoop)
        self.rounds = PassRounds(eventLoop: eventLoop)
        self.executor = EventLoopTaskExecutor(eventLoop)
        self.target = target
        self.handler = handler
        self.connections = connections
        self.maxFrameSize = maxFrameSize
        self.stopGrace = stopGrace
        self.socketMode = mode_t(socketMode)
        self.directoryMode = mode_t(directoryMode)
        self.logger = logger
        self.onListening = onListening
        self.onShutdown = onShutdown
    }

    public func run() async throws {
        switch target {
        case .fileDescriptor(let descriptor, _):
            try await serve(ActivatedSocket(descriptors: [descriptor], logger: logger), activated: true)
        case .fileDescriptors(let descriptors):
            try await serve(ActivatedSocket(descriptors: descriptors, logger: logger), activated: true)
        case .path(let path):
            // Bound here, not by NIO's `ServerBootstrap`, so connections are accepted as systemd's are: on a thread
            // of their own, each peer's uid known before it waits for the loop (`ActivatedSocket`).
            try SocketPath.prepare(path, directoryMode: directoryMode)
            let socket = try ActivatedSocket.bind(path: path, mode: socketMode, logger: logger)
            await serve(socket, activated: false)
            unlink(path)
        }
    }

    private func reportStop() {
        let closed = connections.closedAtStopCount
        if closed > 0 {
            logger.notice(
                "closed connections that had not finished when the stop's grace ended",
                metadata: ["connections": "\(closed)", "graceSeconds": "\(stopGrace.nanoseconds / 1_000_000_000)"])
        }
        logger.info("stopped listening", metadata: ["address": "\(target)"])
    }

    /// Serves a listening socket, systemd's (`activated`: accepted here, keeping the unit's backlog; the socket file
    /// is systemd's, neither removed nor re-bound) or one bound to `--listen`'s path: each connection accepted on the
    /// socket's own thread, admitted by its uid's connections waiting to be set up (`maxPendingConnectionsPerUID`),
    /// then handed to NIO.
    private func serve(_ socket: ActivatedSocket, activated: Bool) async {
        if activated {
            logger.info("listening", metadata: ["address": "\(target)", "activation": "systemd"])
        } else {
            logger.info("listening", metadata: ["address": "\(target)"])
        }
        await onListening()
        let connections = self.connections
        let reporter = self.reporter
        let stopGrace = self.stopGrace
        let accepted = socket.connections { peer in
            if connections.admitPending(uid: peer.uid) { return true }
            reporter.clientRejected(peer, .pendingConnectionsPerUID(connections.pendingPerUIDLimit))
            return false
        }
        let eventLoop = self.eventLoop
        let executor = self.executor
        let initializer = connectionInitializer()
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                for await descriptor in accepted {
                    group.addTask(executorPreference: executor) {
                        let connection: AcceptedConnection
                        let bootstrap = ClientBootstrap(group: eventLoop)
                            .channelOption(.allowRemoteHalfClosure, value: true)
                            .channelOption(.autoRead, value: false)
                        do {
                            connection = try await bootstrap.withConnectedSocket(
                                descriptor.descriptor, channelInitializer: initializer)
                            connections.settlePending(uid: descriptor.peer.uid)
                        } catch {
                            connections.settlePending(uid: descriptor.peer.uid)
                            logger.notice("could not take a connection", metadata: ["error": "\(error)"])
                            return
                        }
                        await serve(connection)
                    }
                }
            }
        } onGracefulShutdown: {
            socket.stop()
            connections.closeInputs(closingAllAfter: stopGrace)
            Task { await onShutdown() }
        }
        reportStop()
    }

    /// Admits a new channel and adds its connection handler, on its event loop as NIO creates it; over the limit
    /// (or while stopping) it gets no handler, and `serve` closes it and reports the peer.
    private func connectionInitializer() -> @Sendable (any Channel) -> EventLoopFuture<AcceptedConnection> {
        let connections = self.connections
        let handler = self.handler
        let maxFrameSize = self.maxFrameSize
        let logger = self.logger
        let notifier = self.notifier
        let executor = self.executor
        let flusher = self.flusher
        let rounds = self.rounds
        return { channel in
            channel.eventLoop.makeCompletedFuture {
                let peer = PeerCredentials.now(of: channel)
                // A refused channel is closed by `serve`, once NIO registered it: closed here, before its
                // registration (a socket systemd passed, `withConnectedSocket`), NIO asserted (a debug build
                // crashed on the first refused connection) or failed the registration, so it was never reported.
                if let refusal = connections.admit(channel, uid: peer.uid) {
                    return AcceptedConnection(channel: channel, refused: (peer, refusal))
                }
                channel.closeFuture.whenComplete { _ in connections.remove(channel) }
                try channel.pipeline.syncOperations.addHandler(
                    VarlinkConnection(
                        handler: handler, maxFrameSize: maxFrameSize, logger: logger, notifier: notifier,
                        executor: executor, registry: connections, flusher: flusher, rounds: rounds))
                return AcceptedConnection(channel: channel, refused: nil)
            }
        }
    }

    /// Waits until an accepted connection closes (so the listener's task group ends only when every connection
    /// has), or reports a refused one.
    private func serve(_ connection: AcceptedConnection) async {
        if let (peer, refusal) = connection.refused {
            connection.channel.close(promise: nil)
            switch refusal {
            case .limit(let limit):
                reporter.clientRejected(peer, .connectionLimit(limit))
                logger.debug("client rejected: connection limit", metadata: ["limit": "\(limit)", "peer": "\(peer)"])
            case .perUIDLimit(let limit):
                reporter.clientRejected(peer, .connectionsPerUID(limit))
                logger.debug(
                    "client rejected: connections per uid", metadata: ["limit": "\(limit)", "peer": "\(peer)"])
            }
            return
        }
        try? await connection.channel.closeFuture.get()
    }
}

/// A channel the listener accepted: served (its handler added), or refused with the peer's credentials.
public struct AcceptedConnection: Sendable {
    let channel: any Channel
    /// The refused peer and why, when the connection was closed at once (over a limit or while stopping).
    let refused: (PeerCredentials, ConnectionRegistry.Refusal)?
}
