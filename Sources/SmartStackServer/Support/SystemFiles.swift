#if canImport(Glibc)
    import Glibc
#endif

/// Reading small text files without Foundation.
public enum TextFile {
    /// Why a file could not be read, naming it.
    public struct ReadError: Error, Sendable, CustomStringConvertible {
        public var path: String
        public var reason: String
        public var description: String { "cannot read \(path): \(reason)" }
    }

    /// The whole file as UTF-8 text (at most 16 MiB).
    public static func read(_ path: String) throws(ReadError) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ReadError(path: path, reason: String(cString: strerror(errno))) }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw ReadError(path: path, reason: String(cString: strerror(errno)))
            }
            if count == 0 { break }
            bytes += chunk[0..<count]
            guard bytes.count <= 16 << 20 else { throw ReadError(path: path, reason: "larger than 16 MiB") }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// The process environment as a dictionary.
public enum Environment {
    public static var all: [String: String] {
        var result: [String: String] = [:]
        var pointer = environ
        while let entry = pointer.pointee {
            let text = String(cString: entry)
            if let equals = text.firstIndex(of: "=") {
                result[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            pointer += 1
        }
        return result
    }
}

/// Creating the state directory with owner-only permissions.
enum StateDirectory {
    struct Failure: Error, Sendable, CustomStringConvertible {
        var path: String
        var reason: String
        var description: String { "state directory \(path): \(reason)" }
    }

    static func prepare(_ path: String) throws(Failure) {
        guard path.hasPrefix("/") else { throw Failure(path: path, reason: "must be an absolute path") }
        var built = ""
        for component in path.split(separator: "/") {
            built += "/" + component
            if mkdir(built, 0o700) != 0 && errno != EEXIST {
                throw Failure(path: path, reason: "cannot create \(built): \(String(cString: strerror(errno)))")
            }
        }
        var info = stat()
        if stat(path, &info) == 0, info.st_mode & S_IFMT != S_IFDIR {
            // access(2) reported a regular file as "Permission denied".
            throw Failure(path: path, reason: "not a directory (a file is in the way; --state names a directory)")
        }
        guard access(path, W_OK | X_OK) == 0 else {
            throw Failure(path: path, reason: "not writable: \(String(cString: strerror(errno)))")
        }
    }
}

/// The process's limit on open file descriptors (`RLIMIT_NOFILE`).
public enum DescriptorLimit {
    /// Descriptors the service holds besides its connections: the database's files, the event loops' epoll and
    /// wake-up descriptors, the journal's socket, the listening socket, name-service lookups.
    public static let besidesConnections = 64

    /// Raises the soft limit to the hard one (systemd's default soft limit is 1,024, under the default
    /// `maxConnections`; its hard limit is far above) and returns the soft limit then in force, or nil when it
    /// cannot be read. Past the limit `accept(2)` fails with `EMFILE`: connections would wait unanswered in the
    /// backlog, neither served nor refused.
    @discardableResult
    public static func raise() -> Int? {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        // An infinite hard limit (RLIM_INFINITY, all ones) cannot be the soft one (the kernel caps descriptors at
        // fs.nr_open).
        let wanted = limit.rlim_max == rlim_t.max ? max(limit.rlim_cur, 1 << 20) : limit.rlim_max
        if wanted > limit.rlim_cur {
            var raised = limit
            raised.rlim_cur = wanted
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return limit.rlim_cur == rlim_t.max ? Int.max : Int(clamping: limit.rlim_cur)
    }
}
