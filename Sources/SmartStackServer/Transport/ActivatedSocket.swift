import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Accepts connections on a listening socket that systemd passed (socket activation), without calling
/// `listen()` on it again.
///
/// NIO's `ServerBootstrap.bind(_:)` re-listens an adopted socket with its own backlog (128), which would
/// override the unit's `Backlog=`. So the accepting is done here, on a thread of its own that polls the
/// socket and a wake-up pipe; each accepted connection is handed to NIO as a connected socket.
final class ActivatedSocket: Sendable {
    /// The listening socket (owned by this object from now on; systemd keeps its own copy).
    let descriptor: Int32
    /// The wake-up pipe: ``stop()`` writes to the second, the accept loop polls the first.
    private let wakeUp: (read: Int32, write: Int32)
    private let thread = DispatchQueue(label: "smartstackd.accept")
    private let stopped = Atomic<Bool>(false)

    /// Takes a listening `AF_UNIX` stream socket; throws `ListenError` when `descriptor` is not one.
    init(descriptor: Int32, path: String?) throws(ListenError) {
        let name = path ?? "fd \(descriptor)"
        var type: Int32 = 0
        var accepting: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_TYPE, &type, &length) == 0 else {
            throw ListenError(
                path: name, reason: "the passed descriptor is not a socket: \(String(cString: strerror(errno)))")
        }
        length = socklen_t(MemoryLayout<Int32>.size)
        guard type == Int32(SOCK_STREAM.rawValue),
            getsockopt(descriptor, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &length) == 0, accepting == 1
        else {
            throw ListenError(path: name, reason: "the passed socket is not a listening stream socket")
        }
        var pipeEnds: [Int32] = [-1, -1]
        guard pipe(&pipeEnds) == 0 else {
            throw ListenError(path: name, reason: "pipe: \(String(cString: strerror(errno)))")
        }
        for end in pipeEnds { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        // Non-blocking: a connection that goes away between poll() and accept() must not block the loop.
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        self.descriptor = descriptor
        self.wakeUp = (pipeEnds[0], pipeEnds[1])
    }

    /// The accepted connections (connected, non-blocking, close-on-exec descriptors) until ``stop()``.
    ///
    /// Call once. When the stream ends, the listening descriptor is closed.
    func connections() -> AsyncStream<Int32> {
        let (stream, continuation) = AsyncStream.makeStream(of: Int32.self)
        thread.async { [self] in
            acceptLoop(continuation)
            continuation.finish()
            close(descriptor)
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

    private func acceptLoop(_ continuation: AsyncStream<Int32>.Continuation) {
        var polled = [
            pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wakeUp.read, events: Int16(POLLIN), revents: 0),
        ]
        while !stopped.load(ordering: .relaxed) {
            polled[0].revents = 0
            polled[1].revents = 0
            let ready = poll(&polled, 2, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                return
            }
            if polled[1].revents != 0 { return }
            if polled[0].revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 { return }
            // Take everything that is waiting, then poll again.
            while true {
                let connection = accept(descriptor, nil, nil)
                if connection >= 0 {
                    _ = fcntl(connection, F_SETFD, FD_CLOEXEC)
                    _ = fcntl(connection, F_SETFL, fcntl(connection, F_GETFL) | O_NONBLOCK)
                    continuation.yield(connection)
                    continue
                }
                if errno == EINTR || errno == ECONNABORTED { continue }
                // EAGAIN: nothing left; EMFILE and friends: poll again rather than spin.
                if errno != EAGAIN && errno != EWOULDBLOCK { usleep(10_000) }
                break
            }
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
