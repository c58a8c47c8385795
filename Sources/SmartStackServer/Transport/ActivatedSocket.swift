import Dispatch
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Accepts connections on listening sockets: those systemd passed (socket activation), without calling `listen()` on
/// them again, or one bound to a path here (`bind(path:mode:)`).
///
/// NIO's `ServerBootstrap.bind(_:)` re-listens an adopted socket with its own backlog (128), which would
/// override the unit's `Backlog=`. So the accepting is done here, on a thread of its own that polls the
/// sockets and a wake-up pipe; each accepted connection is handed to NIO as a connected socket. The thread takes
/// every connection waiting as soon as it comes, reads its peer's credentials and asks `admit` first: a uid that
/// connects faster than the loop sets connections up is closed at once here, at the cost of an accept, rather than
/// filling the kernel's backlog, ahead of everyone else's connections, with its own.
final class ActivatedSocket: Sendable {
    /// The listening sockets (owned by this object from now on; systemd keeps its own copies).
    let descriptors: [Int32]
    /// The wake-up pipe: ``stop()`` writes to the second, the accept loop polls the first.
    private let wakeUp: (read: Int32, write: Int32)
    private let thread = DispatchQueue(label: "smartstackd.accept")
    private let stopped = Atomic<Bool>(false)

    /// An accepted connection: the connected descriptor and its peer.
    struct Accepted: Sendable {
        var descriptor: Int32
        var peer: PeerCredentials
    }

    /// Connections the kernel queues on a socket bound here before they are accepted. A connection waits behind all
    /// those queued before it, whoever made them, so a deeper queue is a longer wait when one uid connects in a loop
    /// (SOMAXCONN, 4,096: a victim's connection waited 82 ms behind such a loop; 512: see BENCHMARKS.md).
    static let backlog: Int32 = 512

    /// Binds a new listening socket at `path` (made ready by `SocketPath.prepare`) with `backlog`,
    /// sets its mode, and serves it; throws `ListenError` naming the path when it can't.
    static func bind(path: String, mode: mode_t, logger: Logger) throws(ListenError) -> ActivatedSocket {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else {
            throw ListenError(path: path, reason: "socket: \(String(cString: strerror(errno)))")
        }
        let bound = SocketPath.withAddress(path) { Glibc.bind(descriptor, $0, $1) }
        guard bound == 0, listen(descriptor, Self.backlog) == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw ListenError(path: path, reason: reason)
        }
        SocketPath.setMode(path, mode: mode)
        return try ActivatedSocket(descriptors: [descriptor], logger: logger)
    }

    /// Takes the listening `AF_UNIX` stream sockets among `descriptors`. One that is not (a FIFO or datagram socket
    /// a unit also named `varlink`) is left alone with a warning; throws `ListenError` when none is.
    init(descriptors: [Int32], logger: Logger) throws(ListenError) {
        var usable: [Int32] = []
        var problems: [String] = []
        for descriptor in descriptors {
            let name =
                ActivatedSocket.boundPath(of: descriptor).map { "unix:\($0) (fd \(descriptor))" }
                ?? "fd \(descriptor)"
            if let problem = Self.problem(with: descriptor) {
                problems.append("\(name): \(problem)")
                continue
            }
            // Non-blocking: a connection that goes away between poll() and accept() must not block the loop.
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
            usable.append(descriptor)
        }
        guard !usable.isEmpty else {
            throw ListenError(
                path: descriptors.map { "fd \($0)" }.joined(separator: ", "),
                reason: problems.joined(separator: "; "))
        }
        for problem in problems { logger.warning("a passed socket is not served", metadata: ["reason": "\(problem)"]) }
        var pipeEnds: [Int32] = [-1, -1]
        guard pipe(&pipeEnds) == 0 else {
            throw ListenError(path: "fd \(usable[0])", reason: "pipe: \(String(cString: strerror(errno)))")
        }
        for end in pipeEnds { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        self.descriptors = usable
        self.wakeUp = (pipeEnds[0], pipeEnds[1])
    }

    /// Why `descriptor` cannot be served: not a socket, or not a listening stream socket.
    private static func problem(with descriptor: Int32) -> String? {
        var type: Int32 = 0
        var accepting: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_TYPE, &type, &length) == 0 else {
            return "the passed descriptor is not a socket: \(String(cString: strerror(errno)))"
        }
        length = socklen_t(MemoryLayout<Int32>.size)
        guard type == Int32(SOCK_STREAM.rawValue),
            getsockopt(descriptor, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &length) == 0, accepting == 1
        else { return "the passed socket is not a listening stream socket" }
        return nil
    }

    /// The accepted connections (connected, non-blocking, close-on-exec descriptors) until ``stop()``: those `admit`
    /// let through (it is asked on the accepting thread, and must return at once); the others are closed at once.
    ///
    /// Call once. When the stream ends, the listening descriptors are closed.
    func connections(admit: @escaping @Sendable (PeerCredentials) -> Bool = { _ in true }) -> AsyncStream<Accepted> {
        let (stream, continuation) = AsyncStream.makeStream(of: Accepted.self)
        thread.async { [self] in
            acceptLoop(continuation, admit: admit)
            continuation.finish()
            for descriptor in descriptors { close(descriptor) }
            close(wakeUp.read)
            close(wakeUp.write)
        }
        return stream
    }

    /// Stops accepting (from any thread); the stream of connections ends.
    func stop() {
        guard !stopped.exchange(true, ordering: .relaxed) else { return }
        var one: UInt8 = 1
        _ = write(wakeUp.write, &one, 1)
    }

    private func acceptLoop(
        _ continuation: AsyncStream<Accepted>.Continuation, admit: @Sendable (PeerCredentials) -> Bool
    ) {
        // The wake-up pipe first, then every listening socket; a socket that fails is no longer polled.
        var polled = [pollfd(fd: wakeUp.read, events: Int16(POLLIN), revents: 0)]
        polled += descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        while !stopped.load(ordering: .relaxed), polled.count > 1 {
            for index in polled.indices { polled[index].revents = 0 }
            let ready = poll(&polled, nfds_t(polled.count), -1)
            if ready < 0 {
                if errno == EINTR { continue }
                return
            }
            if polled[0].revents != 0 { return }
            var failed: [Int] = []
            for index in polled.indices.dropFirst() where polled[index].revents != 0 {
                if polled[index].revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 {
                    failed.append(index)
                    continue
                }
                acceptWaiting(on: polled[index].fd, continuation, admit: admit)
            }
            for index in failed.reversed() { polled.remove(at: index) }
        }
    }

    /// Takes every connection waiting on `descriptor`.
    private func acceptWaiting(
        on descriptor: Int32, _ continuation: AsyncStream<Accepted>.Continuation,
        admit: @Sendable (PeerCredentials) -> Bool
    ) {
        while true {
            let connection = accept(descriptor, nil, nil)
            if connection >= 0 {
                _ = fcntl(connection, F_SETFD, FD_CLOEXEC)
                _ = fcntl(connection, F_SETFL, fcntl(connection, F_GETFL) | O_NONBLOCK)
                let peer = PeerCredentials.of(descriptor: connection)
                guard admit(peer) else {
                    close(connection)
                    continue
                }
                continuation.yield(Accepted(descriptor: connection, peer: peer))
                continue
            }
            if errno == EINTR || errno == ECONNABORTED { continue }
            // EAGAIN: nothing left; EMFILE and friends: poll again rather than spin.
            if errno != EAGAIN && errno != EWOULDBLOCK { usleep(10_000) }
            return
        }
    }

    /// The path a Unix socket is bound to (`getsockname`), or `nil` for an unnamed or abstract one.
    static func boundPath(of descriptor: Int32) -> String? {
        var address = sockaddr_un()
        var length = socklen_t(MemoryLayout<sockaddr_un>.size)
        let result = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard result == 0, address.sun_family == sa_family_t(AF_UNIX) else { return nil }
        let bytes = withUnsafeBytes(of: &address.sun_path) { Array($0.prefix(while: { $0 != 0 })) }
        guard !bytes.isEmpty else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension ListenTarget {
    /// The path a passed Unix socket is bound to, for messages; `nil` when it has none.
    public static func boundPath(of descriptor: Int32) -> String? {
        ActivatedSocket.boundPath(of: descriptor)
    }
}
