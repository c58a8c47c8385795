#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif
import SystemPackage

/// Sends one datagram to an `AF_UNIX` socket named by path, the way `sd_notify()` does.
///
/// Used when the notify socket is given explicitly rather than through `NOTIFY_SOCKET`, which
/// libsystemd only reads from the environment.
enum DatagramSender {
    static func send(_ bytes: [UInt8], to path: String) throws(Errno) {
        guard var address = UnixAddress(path) else { throw Errno.invalidArgument }
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw Errno.current }
        defer { close(descriptor) }
        while true {
            let sent = bytes.withUnsafeBytes { buffer in
                address.withSockaddr { pointer, length in
                    sendto(descriptor, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL), pointer, length)
                }
            }
            if sent >= 0 { return }
            let error = Errno.current
            if error != .interrupted { throw error }
        }
    }
}

/// A `sockaddr_un` for a filesystem path, or the abstract namespace when the path starts with `@`.
struct UnixAddress {
    private var storage = sockaddr_un()
    private let length: socklen_t

    init?(_ path: String) {
        var bytes = Array(path.utf8)
        let isAbstract = bytes.first == UInt8(ascii: "@")
        if isAbstract { bytes[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: storage.sun_path)
        // A filesystem path needs room for its terminating NUL; an abstract name does not.
        guard !bytes.isEmpty, bytes.count + (isAbstract ? 0 : 1) <= capacity else { return nil }
        guard isAbstract || !bytes.contains(0) else { return nil }
        storage.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &storage.sun_path) { target in
            target.copyBytes(from: bytes)
        }
        let pathOffset = MemoryLayout<sockaddr_un>.size - capacity
        length = socklen_t(pathOffset + bytes.count + (isAbstract ? 0 : 1))
    }

    mutating func withSockaddr<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
        let length = length
        return withUnsafePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) }
        }
    }
}
