// What the clients send and how their replies are counted: smartstackd's Varlink frames (NUL-terminated JSON) and
// Redis's RESP, so both servers are measured by the same client.

#if canImport(Glibc)
    import Glibc
#endif
import BenchSupport

/// Appends one call (its frame) to `bytes`: every write has its own id or member.
func appendCall(_ options: Options, client: Int, sequence: Int, to bytes: inout [UInt8]) {
    switch options.method {
    case .getstack:
        LoadFrames.getStack(to: &bytes)
    case .donate:
        LoadFrames.donate(runID: options.runID, client: client, sequence: sequence, to: &bytes)
    case .mixed:
        // 90% reads, 9% donations, 1% timelines, spread over each client's calls and out of phase between clients.
        // `sequence % 100` alone made each client's nine donations consecutive, at the same point of every client's
        // 100 calls: paced clients, started together, then all donated in the same tenth of each second (2,500
        // writes a second for 0.2 s, then none), and the soak's probe measured those bursts (BENCHMARKS.md).
        // Multiplying by 11 (coprime with 100) still visits each slot once per 100 calls, 9 calls apart.
        switch mixedSlot(client: client, sequence: sequence) {
        case 0: LoadFrames.submitTimeline(client: client, sequence: sequence, to: &bytes)
        case 1...9: LoadFrames.donate(runID: options.runID, client: client, sequence: sequence, to: &bytes)
        default: LoadFrames.getStack(to: &bytes)
        }
    case .zadd:
        appendRESP(["ZADD", "load", String(sequence), "\(options.runID)-\(client)-\(sequence)"], to: &bytes)
    case .zrevrange:
        appendRESP(["ZREVRANGE", "load", "0", String(options.widgets - 1)], to: &bytes)
    }
}

/// Which of 100 slots a mixed-load call takes: a permutation of each client's 100 consecutive calls, shifted by
/// client.
func mixedSlot(client: Int, sequence: Int) -> Int { (sequence % 100 * 11 + client * 37) % 100 }

private func appendSubscribe(to bytes: inout [UInt8]) {
    bytes += #"{"method":"io.smartstack.Shell.Subscribe","parameters":{"stacks":["load"]},"more":true}"#.utf8
    bytes.append(0)
}

/// A RESP command: an array of bulk strings.
func appendRESP(_ words: [String], to bytes: inout [UInt8]) {
    bytes += "*\(words.count)\r\n".utf8
    for word in words {
        bytes += "$\(word.utf8.count)\r\n".utf8
        bytes += word.utf8
        bytes += "\r\n".utf8
    }
}

/// Counts the complete replies in what a socket returns, and those that are errors.
struct ReplyReader {
    let wireProtocol: WireProtocol
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    var errors = 0
    /// Varlink: how much of `{"error"` the current reply has matched so far (-1: it is not an error).
    private var prefix = 0
    private static let errorPrefix = Array(#"{"error""#.utf8)
    /// RESP: the current line so far, the elements each open array still needs, and whether the next line is a
    /// bulk string's data.
    private var line: [UInt8] = []
    private var open: [Int] = []
    private var bulkData = false

    init(_ wireProtocol: WireProtocol) { self.wireProtocol = wireProtocol }

    /// How many replies completed; nil when the socket had nothing to read yet.
    mutating func read(_ fd: Int32) -> Int? {
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if count < 0 && (errno == EAGAIN || errno == EINTR) { return nil }
        guard count > 0 else { fail("recv: closed or errno \(errno)") }
        switch wireProtocol {
        case .varlink: return varlinkReplies(count)
        case .redis: return respReplies(count)
        }
    }

    /// Varlink replies end with a NUL: found with `memchr` (a reply of 2.4 KB scanned byte by byte cost the client
    /// microseconds per reply, counted in the latency it measures); only a reply's first bytes are compared with
    /// `{"error"`.
    private mutating func varlinkReplies(_ count: Int) -> Int {
        var replies = 0
        var prefix = self.prefix
        var errors = self.errors
        let expected = Self.errorPrefix
        buffer.withUnsafeBufferPointer { bytes in
            guard let base = bytes.baseAddress else { return }
            var index = 0
            while index < count {
                // The start of the current reply, while it may still be an error.
                while prefix >= 0, prefix < expected.count, index < count, bytes[index] != 0 {
                    if bytes[index] == expected[prefix] {
                        prefix += 1
                        if prefix == expected.count { errors += 1 }
                        index += 1
                    } else {
                        prefix = -1
                    }
                }
                guard index < count, let end = memchr(base + index, 0, count - index) else { return }
                replies += 1
                prefix = 0
                index = UnsafeRawPointer(base).distance(to: UnsafeRawPointer(end)) + 1
            }
        }
        self.prefix = prefix
        self.errors = errors
        return replies
    }

    /// RESP replies are lines (`+`, `-`, `:`, `$n` then n bytes, `*n` then n elements); the members written here
    /// never contain CR or LF, so a bulk string's data is one line too.
    private mutating func respReplies(_ count: Int) -> Int {
        var replies = 0
        for index in 0..<count {
            let byte = buffer[index]
            guard byte == UInt8(ascii: "\n") else {
                if byte != UInt8(ascii: "\r") { line.append(byte) }
                continue
            }
            defer { line.removeAll(keepingCapacity: true) }
            var complete = false
            if bulkData {
                bulkData = false
                complete = true
            } else if let type = line.first {
                let number = Int(String(decoding: line.dropFirst(), as: UTF8.self)) ?? 0
                switch type {
                case UInt8(ascii: "*"):
                    if number > 0 { open.append(number) } else { complete = true }
                case UInt8(ascii: "$"):
                    if number >= 0 { bulkData = true } else { complete = true }
                case UInt8(ascii: "-"):
                    errors += 1
                    complete = true
                default:
                    complete = true
                }
            }
            // An element completed: it may complete the arrays holding it, up to a whole reply.
            while complete {
                guard let last = open.last else {
                    replies += 1
                    break
                }
                if last > 1 {
                    open[open.count - 1] = last - 1
                    complete = false
                } else {
                    open.removeLast()
                }
            }
        }
        return replies
    }
}

/// Sends `calls` one at a time on a new connection and waits for each reply; fails on any error reply.
private func callEach(_ path: String, _ wireProtocol: WireProtocol, _ calls: [[UInt8]], what: String) {
    let fd = connectUnix(path)
    var reader = ReplyReader(wireProtocol)
    for call in calls {
        sendAll(fd, call)
        var got = 0
        while got == 0 { got = reader.read(fd) ?? 0 }
    }
    if reader.errors > 0 { fail("\(what) failed: \(reader.errors) error replies") }
    close(fd)
}

/// Prepares what the reads read: smartstackd's stack `load` of `--widgets` widgets (10), each of its own app, or
/// Redis's sorted set `load` of as many members.
func setUp(_ options: Options) {
    switch options.method.wireProtocol {
    case .varlink:
        callEach(options.path, .varlink, LoadFrames.setUp(widgets: options.widgets), what: "setting up the stack")
    case .redis:
        var call: [UInt8] = []
        appendRESP(["DEL", "load"], to: &call)
        var zadd = ["ZADD", "load"]
        for member in 0..<options.widgets { zadd += [String(member), "w\(member)"] }
        var add: [UInt8] = []
        appendRESP(zadd, to: &add)
        callEach(options.path, .redis, [call, add], what: "setting up the sorted set")
    }
}

/// Opens a subscriber: a connection that called `Subscribe` and reads what is pushed.
func subscriberConnection(_ options: Options) -> Int32 {
    let fd = connectUnix(options.path)
    var call: [UInt8] = []
    appendSubscribe(to: &call)
    sendAll(fd, call)
    return fd
}
