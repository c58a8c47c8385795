import Foundation

/// A minimal Varlink client over one Unix stream connection (JSON + NUL), for tests that talk to the real
/// smartstackd without the service's own client library.
final class RawVarlinkConnection {
    private let descriptor: Int32
    private var buffer: [UInt8] = []

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Connects to `path`. A refused connection is tried again until `timeout`: a daemon's socket file exists from
    /// its `bind` on, before it listens, and a test that saw the file could connect in between (a loaded machine
    /// made that window long enough: `DaemonJournaldTests` once failed so).
    init(path: String, timeout: Duration = .seconds(10)) throws {
        let deadline = ContinuousClock.now + timeout
        while true {
            let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard descriptor >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
            var limit = timeval(tv_sec: Int(timeout.components.seconds), tv_usec: 0)
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
            if withUnixAddress(path, { connect(descriptor, $0, $1) }) == 0 {
                self.descriptor = descriptor
                return
            }
            let code = errno
            close(descriptor)
            guard code == ECONNREFUSED, ContinuousClock.now < deadline else {
                throw POSIXError(.init(rawValue: code) ?? .EIO)
            }
            usleep(20_000)
        }
    }

    deinit {
        close(descriptor)
    }

    /// Calls `method` and returns the reply's parameters; a Varlink error is thrown with its name.
    @discardableResult
    func call(_ method: String, _ parameters: [String: Any] = [:]) throws -> [String: Any] {
        let message = try JSONSerialization.data(withJSONObject: ["method": method, "parameters": parameters])
        let bytes = Array(message) + [0]
        guard bytes.withUnsafeBytes({ send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == bytes.count
        else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        while !buffer.contains(0) {
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { throw Failure(description: "connection closed or timed out calling \(method)") }
            buffer += chunk[0..<count]
        }
        let end = buffer.firstIndex(of: 0) ?? buffer.endIndex
        let frame = Data(buffer[..<end])
        buffer.removeSubrange(...end)
        guard let reply = try JSONSerialization.jsonObject(with: frame) as? [String: Any] else {
            throw Failure(description: "reply to \(method) is not a JSON object")
        }
        if let error = reply["error"] as? String { throw Failure(description: error) }
        return reply["parameters"] as? [String: Any] ?? [:]
    }

    /// Registers one widget kind per app and places one widget of each in stack `home`, in this order.
    func setUpStack(apps: [String]) throws {
        for app in apps {
            try call(
                "io.smartstack.Provider.RegisterWidget",
                ["app": "org.example.\(app)", "kind": "main", "displayName": app, "families": ["systemMedium"]])
        }
        try configure(order: apps)
    }

    /// Places the widgets in `order` with Smart Rotate off, so the published order is exactly `order`; then
    /// reads the stack, which publishes at once (the service otherwise publishes once per burst of calls).
    func configure(order: [String]) throws {
        let widgets = order.map { ["instance": $0, "app": "org.example.\($0)", "kind": "main"] }
        try call(
            "io.smartstack.Shell.ConfigureStack",
            ["stack": "home", "family": "systemMedium", "widgets": widgets, "smartRotate": false])
        try call("io.smartstack.Shell.GetStack", ["stack": "home"])
    }
}
