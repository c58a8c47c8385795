// The epoll drivers: each thread drives its share of the clients (and subscribers), every client keeping
// `--window` calls in flight; then the report.

#if canImport(Glibc)
    import Glibc
#endif
import BenchSupport
import CEpoll
import Synchronization

final class Results: Sendable {
    let state = Mutex<(count: Int, errors: Int, pushed: Int, latencies: [UInt64])>((0, 0, 0, []))
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
    let subscribers: Int
    let shared: Shared
    init(clients: [Int], subscribers: Int, shared: Shared) {
        self.clients = clients
        self.subscribers = subscribers
        self.shared = shared
    }
}

func threadEntry(_ raw: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    guard let raw else { return nil }
    let box = Unmanaged<DriverBox>.fromOpaque(raw).takeRetainedValue()
    runDriver(box.clients, subscribers: box.subscribers, box.shared)
    return nil
}

/// One connection: a client's socket, its next sequence number and the send times of its calls in flight
/// (oldest first; replies come back in call order), or a subscriber's.
struct Client {
    let number: Int
    let fd: Int32
    let subscriber: Bool
    var sequence = 0
    var sent: [UInt64] = []
    var firstSent = 0
    /// With `--rate`: when its next call is due (monotonic nanoseconds).
    var due: UInt64 = 0
    var reader: ReplyReader
}

/// Drives `numbers` clients and `subscribers` subscribers on one thread, all waited for with one epoll set: each
/// client sends its next call as soon as a reply arrives; each subscriber only reads.
func runDriver(_ numbers: [Int], subscribers: Int, _ shared: Shared) {
    let options = shared.options
    let wire = options.method.wireProtocol
    var clients = numbers.map {
        Client(number: $0, fd: connectUnix(options.path), subscriber: false, reader: ReplyReader(wire))
    }
    for number in 0..<subscribers {
        clients.append(
            Client(number: number, fd: subscriberConnection(options), subscriber: true, reader: ReplyReader(wire)))
    }
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
    var pushed = 0
    var out: [UInt8] = []
    out.reserveCapacity(options.window * 300)
    // Paced (`--rate`): each client's calls are due every `interval` nanoseconds, the clients' schedules staggered.
    let interval: UInt64 = options.rate > 0 ? UInt64(1e9 * Double(options.clients) / Double(options.rate)) : 0
    func refill(_ index: Int) {
        out.removeAll(keepingCapacity: true)
        let now = monotonicNanos()
        while clients[index].sent.count - clients[index].firstSent < options.window {
            if interval > 0 {
                guard clients[index].due <= now else { break }
                // A client that fell behind (a slow reply) does not catch up in a burst.
                clients[index].due = max(clients[index].due + interval, now - min(now, interval))
            }
            appendCall(options, client: clients[index].number, sequence: clients[index].sequence, to: &out)
            clients[index].sequence += 1
            clients[index].sent.append(now)
        }
        if !out.isEmpty { sendAll(clients[index].fd, out) }
    }
    while !shared.started.load(ordering: .acquiring) { usleep(100) }
    let begun = monotonicNanos()
    for index in clients.indices where !clients[index].subscriber {
        clients[index].due = begun + interval * UInt64(clients[index].number) / UInt64(max(1, options.clients))
        refill(index)
    }
    var events = [epoll_event](repeating: epoll_event(), count: 64)
    while !shared.stopped.load(ordering: .relaxed) {
        if interval > 0 {
            for index in clients.indices where !clients[index].subscriber { refill(index) }
        }
        let timeout: Int32 = interval > 0 ? 1 : 100
        let ready = events.withUnsafeMutableBufferPointer {
            epoll_wait(poller, $0.baseAddress, Int32($0.count), timeout)
        }
        if ready < 0 && errno == EINTR { continue }
        guard ready >= 0 else { fail("epoll_wait: errno \(errno)") }
        let counting = shared.measuring.load(ordering: .relaxed)
        for slot in 0..<Int(ready) {
            let index = Int(events[slot].data.u64)
            guard let replies = clients[index].reader.read(clients[index].fd), replies > 0 else { continue }
            if clients[index].subscriber {
                if counting { pushed += replies }
                continue
            }
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
        $0.pushed += pushed
        $0.latencies += latencies
    }
}

/// The nearest-rank percentile (BenchSupport's) of sorted latencies in nanoseconds, in microseconds.
func percentile(_ sorted: [UInt64], _ p: Double) -> Double {
    Double(BenchSupport.percentile(sorted: sorted, p)) / 1_000
}

func runLoad(_ options: Options) {
    let shared = Shared(options: options)
    setUp(options)
    var threads: [pthread_t] = []
    for driver in 0..<options.threads {
        let numbers = Array(stride(from: driver, to: options.clients, by: options.threads))
        // Subscribers are dealt out like clients.
        let subscribers =
            options.subscribers / options.threads + (driver < options.subscribers % options.threads ? 1 : 0)
        var thread = pthread_t()
        let box = Unmanaged.passRetained(DriverBox(clients: numbers, subscribers: subscribers, shared: shared))
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
    let (count, errors, pushed, latencies) = shared.results.state.withLock {
        ($0.count, $0.errors, $0.pushed, $0.latencies.sorted())
    }
    let rate = Int(Double(count) / elapsed)
    let (p50, p99, p999) = (percentile(latencies, 0.5), percentile(latencies, 0.99), percentile(latencies, 0.999))
    if options.json {
        print(
            #"{"method":"\#(options.method.rawValue)","clients":\#(options.clients),"window":\#(options.window),"#
                + #""subscribers":\#(options.subscribers),"callsPerSecond":\#(rate),"p50Micros":\#(p50),"#
                + #""p99Micros":\#(p99),"p999Micros":\#(p999),"errors":\#(errors),"pushed":\#(pushed)}"#)
    } else {
        print(
            "method \(options.method.rawValue) clients \(options.clients) window \(options.window) threads \(options.threads)"
                + (options.subscribers > 0 ? " subscribers \(options.subscribers)" : "") + ": "
                + "\(rate) calls/s, p50 \(p50) µs, p99 \(p99) µs, p99.9 \(p999) µs, errors \(errors)"
                + (options.subscribers > 0 ? ", \(pushed) decisions pushed" : ""))
    }
    if errors > 0 { exit(1) }
}
