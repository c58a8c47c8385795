// The load generator: options, blocking Unix-socket clients on their own threads, and the report.

#if canImport(Glibc)
    import Glibc
#endif
import Synchronization

struct Options {
    var path = ""
    var clients = 50
    var window = 1
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
        while index < arguments.count {
            switch arguments[index] {
            case "--socket": options.path = value()
            case "--clients": options.clients = Int(value()) ?? options.clients
            case "--window": options.window = Int(value()) ?? options.window
            case "--seconds": options.seconds = Double(value()) ?? options.seconds
            case "--warmup": options.warmup = Double(value()) ?? options.warmup
            case "--method": options.method = value()
            default: fail("unknown argument \(arguments[index])")
            }
            index += 1
        }
        if options.path.isEmpty { fail("usage: smartstack-load --socket PATH [--clients N] [--window W] [--seconds S] [--method donate|getstack]") }
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

func sendAll(_ fd: Int32, _ bytes: [UInt8]) {
    var offset = 0
    while offset < bytes.count {
        let sent = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
        guard sent > 0 else { fail("send: errno \(errno)") }
        offset += sent
    }
}

/// Reads replies (NUL-terminated) and returns how many arrived; `errors` counts replies carrying an error.
struct ReplyReader {
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    var errors = 0
    var pending: [UInt8] = []

    mutating func read(_ fd: Int32) -> Int {
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { fail("recv: closed or errno \(errno)") }
        var replies = 0
        var start = 0
        for index in 0..<count where buffer[index] == 0 {
            let frame = pending + buffer[start..<index]
            if frame.starts(with: Array("{\"error\"".utf8)) { errors += 1 }
            pending.removeAll(keepingCapacity: true)
            replies += 1
            start = index + 1
        }
        pending += buffer[start..<count]
        return replies
    }
}

final class Results: Sendable {
    let state = Mutex<(count: Int, errors: Int, latencies: [UInt64])>((0, 0, []))
}

/// What every client thread shares: the options, the phase flags and the results.
final class Shared: Sendable {
    let options: Options
    let results = Results()
    let started = Atomic<Bool>(false)
    let measuring = Atomic<Bool>(false)
    let stopped = Atomic<Bool>(false)

    init(options: Options) { self.options = options }
}

final class ClientBox {
    let client: Int
    let shared: Shared
    init(client: Int, shared: Shared) {
        self.client = client
        self.shared = shared
    }
}

func frame(_ options: Options, client: Int, sequence: Int) -> [UInt8] {
    let text: String
    switch options.method {
    case "getstack":
        text = #"{"method":"io.smartstack.Shell.GetStack","parameters":{"stack":"load"}}"#
    default:
        text = #"{"method":"io.smartstack.Provider.Donate","parameters":{"app":"org.load.app\#(client % 10)","intent":"open","id":"\#(options.runID)-\#(client)-\#(sequence)"}}"#
    }
    return Array(text.utf8) + [0]
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
        while got == 0 { got = reader.read(fd) }
    }
    close(fd)
}

func threadEntry(_ raw: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    guard let raw else { return nil }
    let box = Unmanaged<ClientBox>.fromOpaque(raw).takeRetainedValue()
    runClient(box.client, box.shared)
    return nil
}

func runClient(_ client: Int, _ shared: Shared) {
    let options = shared.options
    let fd = connectUnix(options.path)
    var reader = ReplyReader()
    var sequence = 0
    var inFlight: [UInt64] = []
    var latencies: [UInt64] = []
    var count = 0
    while !shared.started.load(ordering: .acquiring) { usleep(100) }
    while !shared.stopped.load(ordering: .relaxed) {
        while inFlight.count < options.window {
            sendAll(fd, frame(options, client: client, sequence: sequence))
            sequence += 1
            inFlight.append(monotonicNanos())
        }
        let replies = reader.read(fd)
        let now = monotonicNanos()
        let counting = shared.measuring.load(ordering: .relaxed)
        for _ in 0..<replies {
            let sent = inFlight.removeFirst()
            if counting {
                latencies.append(now - sent)
                count += 1
            }
        }
    }
    close(fd)
    shared.results.state.withLock {
        $0.count += count
        $0.errors += reader.errors
        $0.latencies += latencies
    }
}

func runLoad(_ options: Options) {
    let shared = Shared(options: options)
    setUp(options)
    var threads: [pthread_t] = []
    for client in 0..<options.clients {
        var thread = pthread_t()
        let box = Unmanaged.passRetained(ClientBox(client: client, shared: shared))
        pthread_create(&thread, nil, threadEntry, box.toOpaque())
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
        "method \(options.method) clients \(options.clients) window \(options.window): \(Int(Double(count) / elapsed)) calls/s, "
            + "p50 \(percentile(0.5)) µs, p99 \(percentile(0.99)) µs, p99.9 \(percentile(0.999)) µs, errors \(errors)")
}
