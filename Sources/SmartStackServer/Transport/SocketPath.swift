#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why the service cannot listen where it was asked to.
public struct ListenError: Error, Sendable, Hashable, CustomStringConvertible {
    public var path: String
    public var reason: String
    public var description: String { "cannot listen on \(path): \(reason)" }
}

/// Prepares a socket path: its directory with safe permissions, and no file in the way.
///
/// A live daemon already answering on the path is an error (two services must never share a socket); a
/// stale socket file (nobody accepts on it) is removed; anything that is not a socket is left alone and is
/// an error, so a typo never deletes a user's file.
enum SocketPath {
    static func prepare(_ path: String, directoryMode: mode_t) throws(ListenError) {
        guard path.utf8.count < 108 else { throw ListenError(path: path, reason: "the path is longer than 107 bytes") }
        guard path.hasPrefix("/") else { throw ListenError(path: path, reason: "the path must be absolute") }
        let directory = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        if !directory.isEmpty { try makeDirectories(directory, mode: directoryMode, for: path) }
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if errno == ENOENT { return }
            throw ListenError(path: path, reason: String(cString: strerror(errno)))
        }
        guard info.st_mode & S_IFMT == S_IFSOCK else {
            throw ListenError(
                path: path, reason: "a file that is not a socket is in the way; remove it or choose another path")
        }
        if isLive(path) {
            throw ListenError(
                path: path, reason: "another program (another smartstackd?) is already serving this socket")
        }
        guard unlink(path) == 0 || errno == ENOENT else {
            throw ListenError(path: path, reason: "cannot remove the stale socket: \(String(cString: strerror(errno)))")
        }
    }

    /// Whether something accepts connections on the socket at `path`.
    static func isLive(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return withAddress(path) { connect(fd, $0, $1) } == 0
    }

    /// Calls `body` with `path` as a Unix socket address and its length (`connect`, `bind`).
    static func withAddress(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in path.utf8.enumerated() where index < buffer.count - 1 { buffer[index] = byte }
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }

    private static func makeDirectories(_ directory: String, mode: mode_t, for path: String) throws(ListenError) {
        var built = ""
        for component in directory.split(separator: "/") {
            built += "/" + component
            if mkdir(built, mode) != 0 && errno != EEXIST {
                throw ListenError(path: path, reason: "cannot create \(built): \(String(cString: strerror(errno)))")
            }
        }
        var info = stat()
        guard stat(directory, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            throw ListenError(path: path, reason: "\(directory) is not a directory")
        }
    }

    /// Sets the socket file's permissions after binding.
    static func setMode(_ path: String, mode: mode_t) {
        chmod(path, mode)
    }
}
