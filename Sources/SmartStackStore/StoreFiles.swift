import SmartStackCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The monotonic clock, for latencies and the snapshot policy.
enum Monotonic {
    static func nanoseconds() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    static func sleep(microseconds: Int) {
        var request = timespec(tv_sec: 0, tv_nsec: microseconds * 1_000)
        var remaining = timespec()
        _ = nanosleep(&request, &remaining)
    }
}

/// The real-time clock, for when snapshots were taken.
enum Wallclock {
    static func now() -> Timestamp {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        var seconds = spec.tv_sec
        var local = tm()
        localtime_r(&seconds, &local)
        return Timestamp(
            microseconds: Int64(spec.tv_sec) * 1_000_000 + Int64(spec.tv_nsec) / 1_000,
            utcOffsetSeconds: Int32(local.tm_gmtoff))
    }
}

/// File checks done before SQLite touches a file.
enum StoreFiles {
    /// The size of a file in bytes (0 when missing).
    static func size(_ path: String) -> Int {
        var info = stat()
        guard stat(path, &info) == 0 else { return 0 }
        return Int(info.st_size)
    }

    /// Creates the database file readable by the owner only, if missing: SQLite gives its write-ahead log and
    /// shared-memory files the database file's permissions.
    static func createPrivate(_ path: String) throws(StoreOpenError) {
        let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if fd >= 0 {
            close(fd)
            return
        }
        guard errno == EEXIST else {
            throw StoreOpenError(
                .notWritable, path: path, reason: "cannot be created: \(String(cString: strerror(errno)))")
        }
    }

    /// Refuses a file that exists, is not empty and does not start with SQLite's header: SQLite would report it
    /// only on first use, and it must never be turned into a database.
    ///
    /// The file (and a write-ahead log or shared-memory file beside it) must also be writable: SQLite opens a file it
    /// may only read without complaint, and the service then started, reported ready, and failed every write with
    /// `StorageFailed` (a restore that left the file with another owner or mode). A file the service may not open is
    /// `notWritable` (exit 73), as a directory it cannot write is; only damage is `unreadable` (exit 65).
    static func checkHeader(_ path: String) throws(StoreOpenError) {
        let fd = open(path, O_RDWR | O_CLOEXEC)
        if fd < 0 {
            let code = errno
            if code == ENOENT { return }
            let reason = String(cString: strerror(code))
            if code == EACCES || code == EPERM || code == EROFS {
                throw StoreOpenError(
                    .notWritable, path: path,
                    reason: "cannot be opened for reading and writing: \(reason) (check its owner and mode)")
            }
            throw StoreOpenError(.unreadable, path: path, reason: "cannot be read: \(reason)")
        }
        defer { close(fd) }
        for companion in [path + "-wal", path + "-shm"] where access(companion, F_OK) == 0 {
            guard access(companion, R_OK | W_OK) == 0 else {
                let reason = String(cString: strerror(errno))
                throw StoreOpenError(
                    .notWritable, path: path,
                    reason: "its file \(companion) cannot be read and written: \(reason) (check its owner and mode)")
            }
        }
        var header = [UInt8](repeating: 0, count: 16)
        let count = header.withUnsafeMutableBytes { read(fd, $0.baseAddress, 16) }
        if count == 0 { return }
        guard count == 16, header == Array("SQLite format 3\0".utf8) else {
            throw StoreOpenError(
                .unreadable, path: path,
                reason:
                    "not a database (damaged, or another program's file); not touched — move it away to start afresh")
        }
    }
}

/// An exclusive lock on the state directory's database, so two services never write it at once.
///
/// Taking it is also the first write to the directory: a directory the service cannot write fails here, with
/// the database file named.
final class DirectoryLock: Sendable {
    private let descriptor: Int32
    private let released = Atomic<Bool>(false)

    private init(descriptor: Int32) { self.descriptor = descriptor }

    static func acquire(directory: String, database: String) throws(StoreOpenError) -> DirectoryLock {
        // Beside the file the database really is: a database that is a symbolic link to another state directory's
        // (or a directory that links to another) is locked where that directory's service locks it, so the two are
        // never open at once (each took the lock of its own directory and both wrote the one file).
        let path = Self.resolved(database) + ".lock"
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let reason = String(cString: strerror(errno))
            throw StoreOpenError(
                .notWritable, path: database, reason: "cannot write the state directory \(directory): \(reason)")
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let reason = errno == EWOULDBLOCK ? "in use by another smartstackd" : String(cString: strerror(errno))
            close(fd)
            throw StoreOpenError(.locked, path: database, reason: reason)
        }
        // Opening the lock file may succeed where writing does not (an existing file on a read-only mount).
        guard access(directory, W_OK) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw StoreOpenError(
                .notWritable, path: database, reason: "cannot write the state directory \(directory): \(reason)")
        }
        return DirectoryLock(descriptor: fd)
    }

    /// `path` with every symbolic link resolved (`realpath`); itself when it does not exist yet.
    static func resolved(_ path: String) -> String {
        guard let real = realpath(path, nil) else { return path }
        defer { free(real) }
        return String(cString: real)
    }

    /// Unlocks (once).
    func release() {
        guard !released.exchange(true, ordering: .relaxed) else { return }
        close(descriptor)
    }
}

/// Free space on the file system holding a file.
enum FreeSpace {
    /// The bytes an unprivileged process may still write on the file system holding `path` (or its directory when
    /// the file is missing); nil when it cannot be told.
    static func bytesAvailable(near path: String) -> Int? {
        var info = statvfs()
        if statvfs(path, &info) != 0 {
            let directory = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(
                separator: "/")
            guard statvfs(directory.isEmpty ? "." : directory, &info) == 0 else { return nil }
        }
        let (bytes, overflow) = Int(clamping: info.f_bavail).multipliedReportingOverflow(
            by: Int(clamping: info.f_frsize))
        return overflow ? Int.max : bytes
    }
}
