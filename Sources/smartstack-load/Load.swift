// The load generator: options, non-blocking Unix-socket clients driven by epoll on a few threads, and the
// report.

#if canImport(Glibc)
    import Glibc
#endif
import CEpoll
import Synchronization

struct Options {
    var path = ""
    var clients = 50
    var window = 1
    /// Driver threads; the clients are dealt out among them. 1 (the default) is how redis-benchmark and wrk
    /// drive many connections: the load generator then costs little of the machine the service runs on.
    var threads = 1
    var seconds = 5.0
    var warmup = 1.0
    var method = "donate"
    /// Makes donation ids unique across runs against the same service.
    let runID = String(UInt32.random(in: 0...UInt32.max), radix: 36)

    static func parse(_ arguments: [String]) -> Options {
        var options = Options()
        var index = 0
        func value() -> String {
            index += 1
            guard index < arguments.count else { fail("missing value for \(arguments[index - 1])") }
            return arguments[index]
        }
        func positive(_ text: String) -> Int {
            guard let number = Int(text), number > 0 else { fail("\(arguments[index - 1]) needs a positive integer, not \(text)") }
            return number
        }
        while index < arguments.count {
            switch arguments[index] {
            case "--socket": options.path = value()
            case "--clients": options.clients = positive(value())
            case "--window": options.window = positive(value())
            case "--threads": options.threads = positive(value())
            case "--seconds": options.seconds = Double(value()) ?? options.seconds
            case "--warmup": options.warmup = Double(value()) ?? options.warmup
            case "--method": options.method = value()
            default: fail("unknown argument \(arguments[index])")
            }
            index += 1
        }
        if options.path.isEmpty {
            fail("usage: smartstack-load --socket PATH [--clients N] [--window W] [--threads T] [--seconds S] [--method donate|getstack]")
        }
        guard ["donate", "getstack"].contains(options.method) else { fail("unknown method \(options.method)") }
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
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    guard result == 0 else { fail("connect \(path): errno \(errno)") }
    return fd
}

/// Writes all of `bytes`, waiting with poll(2) when the socket's buffer is full (the socket may be non-blocking).
func sendAll(_ fd: Int32, _ bytes: [UInt8]) {
    var offset = 0
    while offset < bytes.count {
        let sent = bytes.withUnsafeBytes { send(fd, $0.baseAddress.map { $0 + offset }, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
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

/// Reads replies (NUL-terminated) and returns how many arrived; `errors` counts replies carrying an error.
/// Returns nil when the socket has nothing to read yet.
struct ReplyReader {
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    var errors = 0
    /// Whether the bytes read so far of the current reply are still a prefix of `{"error"`.
    var prefix = 0
    var errorPrefix = Array(#"{"error""#.utf8)

    mutating func read(_ fd: Int32) -> Int? {
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if count < 0 && (errno == EAGAIN || errno == EINTR) { return nil }
        guard count > 0 else { fail("recv: closed or errno \(errno)") }
        var replies = 0
        for index in 0..<count {
            let byte = buffer[index]
            if byte == 0 {
                replies += 1
                prefix = 0
                continue
            }
            if prefix >= 0 && prefix < errorPrefix.count {
                if byte == errorPrefix[prefix] {
                    prefix += 1
                    if prefix == errorPrefix.count { errors += 1 }
                } else {
                    prefix = -1
                }
            }
        }
        return replies
    }
}

final class Results: Sendable {
    let state = Mutex<(count: Int, errors: Int, latencies: [UInt64])>((0, 0, []))
}

/// What every driver thread shares: the options, the phase flags and the results.
final class Shared: Sendable {
    let options: Options
    let results = Results()
    let started = Atomic<Bool>(false)
    let measuring = Atomic<Bool>(false)
    let stopped = Atomic<Bool>(false)

    init(options: Options) { self.options = options }
}

final class DriverBox {
    let clients: [Int]
    let shared: Shared
    init(clients: [Int], shared: Shared) {
        self.clients = clients
        self.shared = shared
    }
}

/// Appends one call's frame (NUL included) to `bytes`; every donation has its own id.
func appendFrame(_ options: Options, client: Int, sequence: Int, to bytes: inout [UInt8]) {
    switch options.method {
    case "getstack":
        bytes += #"{"method":"io.smartstack.Shell.GetStack","parameters":{"stack":"load"}}"#.utf8
    default:
        bytes += #"{"method":"io.smartstack.Provider.Donate","parameters":{"app":"org.load.app\#(client % 10)","intent":"open","id":"\#(options.runID)-\#(client)-\#(sequence)"}}"#.utf8
    }
    bytes.append(0)
}

func setUp(_ options: Options) {
    let fd = connectUnix(options.path)
    var reader = ReplyReader()
    var calls: [String] = []
    for app in 0..<10 {
        calls.append(#"{"method":"io.smartstack.Provider.RegisterWidget","parameters":{"app":"org.load.app\#(app)","kind":"main","families":["systemMedium"]}}"#)
    }
    let widgets = (0..<10).map { #"{"instance":"w\#($0)","app":"org.load.app\#($0)","kind":"main"}"# }.joined(separator: ",")
    calls.append(#"{"method":"io.smartstack.Shell.ConfigureStack","parameters":{"stack":"load","family":"systemMedium","widgets":[\#(widgets)]}}"#)
    for call in calls {
        sendAll(fd, Array(call.utf8) + [0])
        var got = 0
        while got == 0 { got = reader.read(fd) ?? 0 }
    }
    if reader.errors > 0 { fail("setting up the stack failed: \(reader.errors) error replies") }
    close(fd)
}

func threadEntry(_ raw: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    guard let raw else { return nil }
    let box = Unmanaged<DriverBox>.fromOpaque(raw).takeRetainedValue()
    runDriver(box.clients, box.shared)
    return nil
}

/// One client: its socket, its next sequence number and the send times of its calls in flight (oldest first;
/// replies come back in call order).
struct Client {
    let number: Int
    let fd: Int32
    var sequence = 0
    var sent: [UInt64] = []
    var firstSent = 0
    var reader = ReplyReader()
}

/// Drives `numbers` clients on one thread: each keeps `window` calls in flight, sending the next as soon as a
/// reply arrives, all waited for with one epoll set.
func runDriver(_ numbers: [Int], _ shared: Shared) {
    let options = shared.options
    var clients = numbers.map { Client(number: $0, fd: connectUnix(options.path)) }
    let poller = epoll_create1(Int32(EPOLL_CLOEXEC))
    guard poller >= 0 else { fail("epoll_create1: errno \(errno)") }
    for (index, client) in clients.enumerated() {
        _ = fcntl(client.fd, F_SETFL, fcntl(client.fd, F_GETFL) | O_NONBLOCK)
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.u64 = UInt64(index)
        guard epoll_ctl(poller, EPOLL_CTL_ADD, client.fd, &event) == 0 else { fail("epoll_ctl: errno \(errno)") }
    }
    var latencies: [UInt64] = []
    latencies.reserveCapacity(1 << 20)
    var count = 0
    var out: [UInt8] = []
    out.reserveCapacity(options.window * 200)
    func refill(_ index: Int) {
        out.removeAll(keepingCapacity: true)
        let now = monotonicNanos()
        while clients[index].sent.count - clients[index].firstSent < options.window {
            appendFrame(options, client: clients[index].number, sequence: clients[index].sequence, to: &out)
            clients[index].sequence += 1
            clients[index].sent.append(now)
        }
        if !out.isEmpty { sendAll(clients[index].fd, out) }
    }
    while !shared.started.load(ordering: .acquiring) { usleep(100) }
    for index in clients.indices { refill(index) }
    var events = [epoll_event](repeating: epoll_event(), count: 64)
    while !shared.stopped.load(ordering: .relaxed) {
        let ready = events.withUnsafeMutableBufferPointer { epoll_wait(poller, $0.baseAddress, Int32($0.count), 100) }
        if ready < 0 && errno == EINTR { continue }
        guard ready >= 0 else { fail("epoll_wait: errno \(errno)") }
        let counting = shared.measuring.load(ordering: .relaxed)
        for slot in 0..<Int(ready) {
            let index = Int(events[slot].data.u64)
            guard let replies = clients[index].reader.read(clients[index].fd), replies > 0 else { continue }
            let now = monotonicNanos()
            for _ in 0..<replies {
                let sentAt = clients[index].sent[clients[index].firstSent]
                clients[index].firstSent += 1
                if counting {
                    latencies.append(now - sentAt)
                    count += 1
                }
            }
            if clients[index].firstSent > 4096 {
                clients[index].sent.removeFirst(clients[index].firstSent)
                clients[index].firstSent = 0
            }
            refill(index)
        }
    }
    var errors = 0
    for client in clients {
        errors += client.reader.errors
        close(client.fd)
    }
    close(poller)
    shared.results.state.withLock {
        $0.count += count
        $0.errors += errors
        $0.latencies += latencies
    }
}

func runLoad(_ options: Options) {
    let shared = Shared(options: options)
    setUp(options)
    var threads: [pthread_t] = []
    for driver in 0..<options.threads {
        let numbers = Array(stride(from: driver, to: options.clients, by: options.threads))
        var thread = pthread_t()
        let box = Unmanaged.passRetained(DriverBox(clients: numbers, shared: shared))
        guard pthread_create(&thread, nil, threadEntry, box.toOpaque()) == 0 else { fail("pthread_create failed") }
        threads.append(thread)
    }
    shared.started.store(true, ordering: .releasing)
    usleep(UInt32(options.warmup * 1_000_000))
    shared.measuring.store(true, ordering: .relaxed)
    let began = monotonicNanos()
    usleep(UInt32(options.seconds * 1_000_000))
    shared.measuring.store(false, ordering: .relaxed)
    let elapsed = Double(monotonicNanos() - began) / 1e9
    shared.stopped.store(true, ordering: .relaxed)
    for thread in threads { pthread_join(thread, nil) }
    let (count, errors, latencies) = shared.results.state.withLock { ($0.count, $0.errors, $0.latencies.sorted()) }
    func percentile(_ p: Double) -> Double {
        guard !latencies.isEmpty else { return 0 }
        return Double(latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))]) / 1_000
    }
    print(
        "method \(options.method) clients \(options.clients) window \(options.window) threads \(options.threads): "
            + "\(Int(Double(count) / elapsed)) calls/s, "
            + "p50 \(percentile(0.5)) µs, p99 \(percentile(0.99)) µs, p99.9 \(percentile(0.999)) µs, errors \(errors)")
    if errors > 0 { exit(1) }
}
