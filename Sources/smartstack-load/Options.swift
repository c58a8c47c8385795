// smartstack-load's options and the small helpers every part uses.

#if canImport(Glibc)
    import Glibc
#endif

/// The server's protocol: smartstackd's Varlink, or Redis's RESP (to measure Redis with the same client shape).
enum WireProtocol: String {
    case varlink, redis
}

/// What each client sends.
enum LoadMethod: String, CaseIterable {
    /// Varlink: `Donate`, each with its own id (a durable write).
    case donate
    /// Varlink: `GetStack` of the stack `load` (10 widgets, `--widgets`).
    case getstack
    /// Varlink: 90% `GetStack`, 9% `Donate`, 1% `SubmitTimeline`.
    case mixed
    /// RESP: `ZADD load <score> <member>`, each member its own (a durable write with AOF).
    case zadd
    /// RESP: `ZREVRANGE load 0 9` of a 10-member sorted set (`--widgets` members).
    case zrevrange

    var wireProtocol: WireProtocol {
        switch self {
        case .donate, .getstack, .mixed: .varlink
        case .zadd, .zrevrange: .redis
        }
    }
}

struct Options {
    var path = ""
    var clients = 50
    var window = 1
    /// Driver threads; the clients are dealt out among them. 1 (the default) is how redis-benchmark and wrk
    /// drive many connections: the load generator then costs little of the machine the service runs on.
    var threads = 1
    var seconds = 5.0
    var warmup = 1.0
    var method = LoadMethod.donate
    /// Varlink only: connections that `Subscribe` to the stack and read every decision pushed (not counted as calls).
    var subscribers = 0
    /// Calls a second offered by all clients together, each client's spread evenly over time (0: each client sends
    /// as soon as its window allows, saturating the server). A paced load measures latency under a given load
    /// rather than the queueing of a saturated server (the soak uses it).
    var rate = 0
    /// Widgets in the stack `load` (members of Redis's sorted set): what a read returns.
    var widgets = 10
    /// Prints one JSON object instead of the sentence.
    var json = false
    /// Makes donation ids and sorted-set members unique across runs against the same server.
    let runID = String(UInt32.random(in: 0...UInt32.max), radix: 36)

    static let usage =
        "usage: smartstack-load --socket PATH [--method donate|getstack|mixed|zadd|zrevrange] [--clients N] "
        + "[--window W] [--threads T] [--seconds S] [--warmup S] [--subscribers N] [--rate CALLS_PER_SECOND] [--widgets N] [--json]"

    static func parse(_ arguments: [String]) -> Options {
        var options = Options()
        var index = 0
        func value() -> String {
            index += 1
            guard index < arguments.count else { fail("missing value for \(arguments[index - 1])") }
            return arguments[index]
        }
        func count(_ text: String, allowZero: Bool = false) -> Int {
            guard let number = Int(text), number > 0 || (allowZero && number == 0) else {
                fail("\(arguments[index - 1]) needs a \(allowZero ? "non-negative" : "positive") integer, not \(text)")
            }
            return number
        }
        func seconds(_ text: String) -> Double {
            guard let number = Double(text), number.isFinite, number >= 0 else {
                fail("\(arguments[index - 1]) needs a number of seconds, not \(text)")
            }
            return number
        }
        while index < arguments.count {
            switch arguments[index] {
            case "--socket": options.path = value()
            case "--clients": options.clients = count(value())
            case "--window": options.window = count(value())
            case "--threads": options.threads = count(value())
            case "--seconds": options.seconds = seconds(value())
            case "--warmup": options.warmup = seconds(value())
            case "--subscribers": options.subscribers = count(value(), allowZero: true)
            case "--rate": options.rate = count(value(), allowZero: true)
            case "--widgets":
                options.widgets = count(value())
                if options.widgets > 100 { fail("--widgets takes at most 100 (a stack's limit)") }
            case "--json": options.json = true
            case "--method":
                let text = value()
                guard let method = LoadMethod(rawValue: text) else { fail("unknown method \(text)") }
                options.method = method
            default: fail("unknown argument \(arguments[index])")
            }
            index += 1
        }
        if options.path.isEmpty { fail(usage) }
        if options.subscribers > 0, options.method.wireProtocol != .varlink {
            fail("--subscribers needs a Varlink method")
        }
        options.threads = min(options.threads, options.clients)
        return options
    }
}

func fail(_ message: String) -> Never {
    var text = "smartstack-load: \(message)\n"
    text.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    exit(2)
}

func monotonicNanos() -> UInt64 {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
}

func connectUnix(_ path: String) -> Int32 {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { fail("socket: \(errno)") }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { buffer in
        for (index, byte) in path.utf8.enumerated() where index < buffer.count - 1 { buffer[index] = byte }
    }
    let result = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
        }
    }
    guard result == 0 else { fail("connect \(path): errno \(errno)") }
    return fd
}

/// Writes all of `bytes`, waiting with poll(2) when the socket's buffer is full (the socket may be non-blocking).
func sendAll(_ fd: Int32, _ bytes: [UInt8]) {
    var offset = 0
    while offset < bytes.count {
        let sent = bytes.withUnsafeBytes {
            send(fd, $0.baseAddress.map { $0 + offset }, bytes.count - offset, Int32(MSG_NOSIGNAL))
        }
        if sent > 0 {
            offset += sent
        } else if sent < 0 && (errno == EAGAIN || errno == EINTR) {
            var waiting = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            _ = poll(&waiting, 1, 100)
        } else {
            fail("send: errno \(errno)")
        }
    }
}
