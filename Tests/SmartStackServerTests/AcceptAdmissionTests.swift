import Foundation
import Logging
import Synchronization
import Testing

@testable import SmartStackServer

#if canImport(Glibc)
    import Glibc
#endif

/// Connections are accepted on a thread of their own, each peer's uid read before it waits for the loop: a uid with
/// `maxPendingConnectionsPerUID` connections waiting is closed at once, so one uid connecting in a loop cannot fill
/// the listen backlog ahead of everyone else's connections (isolation review F2).
@Suite("Accepting connections", .timeLimit(.minutes(1)))
struct AcceptAdmissionTests {
    @Test("a uid's connections waiting to be set up are bounded; exempt uids and other uids are not held by it")
    func pendingPerUID() {
        let registry = ConnectionRegistry(limit: 100, perUIDLimit: 50, pendingPerUIDLimit: 2, exempt: [0])
        #expect(registry.admitPending(uid: 65_534))
        #expect(registry.admitPending(uid: 65_534))
        #expect(!registry.admitPending(uid: 65_534))
        #expect(registry.rejectedCount == 1)
        // Another uid has its own count; root is not counted.
        #expect(registry.admitPending(uid: 1_000))
        for _ in 0..<10 { #expect(registry.admitPending(uid: 0)) }
        // Once one is set up, the uid may have another waiting.
        registry.settlePending(uid: 65_534)
        #expect(registry.admitPending(uid: 65_534))
        #expect(!registry.admitPending(uid: 65_534))
        #expect(registry.rejectedCount == 2)
    }

    /// A client connection to `path`, blocking; -1 when it could not connect.
    static func connect(_ path: String) -> Int32 {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in path.utf8.enumerated() { buffer[index] = byte }
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        if result != 0 {
            close(descriptor)
            return -1
        }
        return descriptor
    }

    @Test("a bound socket's accepting thread reads each peer and closes at once the ones it does not admit")
    func acceptingThreadAdmits() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("smartstack-accept-\(UUID())")
            .path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/sock"
        let socket = try ActivatedSocket.bind(path: path, mode: 0o600, logger: ServerFixture.logger)
        let asked = Mutex<[UInt32]>([])
        // Every other connection is refused.
        let accepted = socket.connections { peer in
            asked.withLock { asked in
                asked.append(peer.uid)
                return asked.count % 2 == 1
            }
        }
        var clients: [Int32] = []
        for _ in 0..<4 {
            let client = Self.connect(path)
            #expect(client >= 0)
            clients.append(client)
        }
        var iterator = accepted.makeAsyncIterator()
        var served: [ActivatedSocket.Accepted] = []
        for _ in 0..<2 { if let next = await iterator.next() { served.append(next) } }
        #expect(served.map(\.peer.uid) == [getuid(), getuid()])
        #expect(asked.withLock { $0 } == Array(repeating: getuid(), count: 4))
        // The refused clients (the second and the fourth) read the end of the stream; the admitted ones do not.
        for (index, client) in clients.enumerated() {
            var pollable = pollfd(fd: client, events: Int16(POLLIN), revents: 0)
            let ready = poll(&pollable, 1, index % 2 == 1 ? 2_000 : 100)
            var byte: UInt8 = 0
            let read = ready > 0 ? recv(client, &byte, 1, Int32(MSG_DONTWAIT)) : -1
            #expect((read == 0) == (index % 2 == 1), "client \(index): ready \(ready), read \(read)")
            close(client)
        }
        for connection in served { close(connection.descriptor) }
        socket.stop()
        while await iterator.next() != nil {}
    }
}
