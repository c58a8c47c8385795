import Foundation

/// `struct ucred` and `SCM_CREDENTIALS`, which Glibc only declares under `_GNU_SOURCE`.
private struct Credentials {
    var pid: Int32
    var uid: UInt32
    var gid: UInt32
}

private let scmCredentials: Int32 = 2

/// A bound `AF_UNIX` datagram socket standing in for systemd's notify socket. It enables
/// `SO_PASSCRED`, as systemd does, so each datagram comes with its sender's pid.
final class DatagramReceiver {
    let path: String
    private let descriptor: Int32

    init(path: String) throws {
        self.path = path
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var on: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_PASSCRED, &on, socklen_t(MemoryLayout<Int32>.size))
        let result = withUnixAddress(path) { bind(descriptor, $0, $1) }
        guard result == 0 else {
            close(descriptor)
            throw POSIXError(.init(rawValue: errno) ?? .EIO)
        }
    }

    deinit {
        close(descriptor)
    }

    /// The next datagram and its sender's pid, or `nil` if none arrives within `timeout`.
    func receive(timeout: Duration = .seconds(5)) -> (text: String, senderPID: Int32?)? {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(
            timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        guard poll(&poller, 1, milliseconds) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 65536)
        // cmsghdr, then a ucred (pid, uid, gid), aligned as CMSG_SPACE would.
        var control = [UInt8](repeating: 0, count: MemoryLayout<cmsghdr>.size + MemoryLayout<Credentials>.size + 16)
        let count = buffer.withUnsafeMutableBytes { data in
            control.withUnsafeMutableBytes { controlBytes in
                var vector = iovec(iov_base: data.baseAddress, iov_len: data.count)
                return withUnsafeMutablePointer(to: &vector) { vectorPointer in
                    var message = msghdr()
                    message.msg_iov = vectorPointer
                    message.msg_iovlen = 1
                    message.msg_control = controlBytes.baseAddress
                    message.msg_controllen = controlBytes.count
                    return recvmsg(descriptor, &message, 0)
                }
            }
        }
        guard count >= 0 else { return nil }
        let text = String(decoding: buffer[0..<count], as: UTF8.self)
        let header = control.withUnsafeBytes { $0.loadUnaligned(as: cmsghdr.self) }
        guard header.cmsg_level == SOL_SOCKET, header.cmsg_type == scmCredentials else { return (text, nil) }
        let credentials = control.withUnsafeBytes {
            $0.loadUnaligned(fromByteOffset: MemoryLayout<cmsghdr>.size, as: Credentials.self)
        }
        return (text, credentials.pid)
    }
}

/// Connects to a Unix stream socket, sends `request` if any, and reads until the peer closes (or `timeout`).
func readAll(fromUnixSocket path: String, sending request: String? = nil, timeout: Duration = .seconds(10)) throws
    -> String
{
    let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard descriptor >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    defer { close(descriptor) }
    var limit = timeval(tv_sec: Int(timeout.components.seconds), tv_usec: 0)
    setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    guard withUnixAddress(path, { connect(descriptor, $0, $1) }) == 0 else {
        throw POSIXError(.init(rawValue: errno) ?? .EIO)
    }
    if let request {
        let bytes = Array(request.utf8)
        guard bytes.withUnsafeBytes({ send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == bytes.count
        else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    }
    var received: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        if count < 0 { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        if count == 0 { break }
        received += buffer[0..<count]
    }
    return String(decoding: received, as: UTF8.self)
}

/// Calls `body` with a `sockaddr_un` for `path` (`@…` for the abstract namespace).
func withUnixAddress<Result>(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    var bytes = Array(path.utf8)
    let abstract = bytes.first == UInt8(ascii: "@")
    if abstract { bytes[0] = 0 }
    withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes.prefix($0.count - 1)) }
    let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (abstract ? 0 : 1))
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) }
    }
}

/// Waits until `path` exists, polling; `false` after `timeout`.
func waitForFile(_ path: String, timeout: Duration = .seconds(10)) -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if FileManager.default.fileExists(atPath: path) { return true }
        usleep(10_000)
    }
    return false
}
