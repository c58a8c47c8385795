#if canImport(Glibc)
    import Glibc
#endif
import BenchSupport

/// Start-up to serving: from spawning smartstackd on a state directory to the first `GetStack` reply over its
/// socket (the state loaded, the socket bound, a call answered). Each run is stopped with SIGTERM.
enum StartupBenchmark {
    static func run(_ options: BenchOptions) {
        guard !options.daemon.isEmpty, !options.state.isEmpty else { usage() }
        let socketPath = temporaryDirectory() + "/io.smartstack"
        var times: [Double] = []
        var residents: [Double] = []
        for run in 1...options.runs {
            let started = monotonicSeconds()
            let pid = spawn([options.daemon, "--listen", socketPath, "--state", options.state])
            var reply = ""
            while reply.isEmpty {
                if monotonicSeconds() - started > 120 { fatalError("smartstackd did not serve within 120 s") }
                reply = call(socketPath, #"{"method":"io.smartstack.Shell.GetStack","parameters":{"stack":"load"}}"#)
                if reply.isEmpty { usleep(500) }
            }
            let elapsed = monotonicSeconds() - started
            times.append(elapsed)
            let serving = residentMiB(pid)
            // Then a second of idling (the donation id filter fills off the loop) and 1,000 reads.
            usleep(1_000_000)
            for _ in 0..<1_000 {
                _ = call(socketPath, #"{"method":"io.smartstack.Shell.GetStack","parameters":{"stack":"load"}}"#)
            }
            let settled = residentMiB(pid)
            residents.append(settled)
            kill(pid, SIGTERM)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            print(
                "run \(run): serving after \(Int(elapsed * 1_000)) ms (\(reply.hasPrefix("{\"parameters\"") ? "ok" : reply)), "
                    + "resident \(fixed(serving, 1)) MiB then, \(fixed(settled, 1)) MiB after 1 s and 1,000 reads"
            )
        }
        print("start-up to serving: median \(Int(median(times) * 1_000)) ms over \(times.count) runs")
        print(
            "resident memory after start-up, 1 s and 1,000 reads: median \(fixed(median(residents), 1)) MiB, max \(fixed(residents.max() ?? 0, 1)) MiB"
        )
    }

    /// The process's resident memory (VmRSS), MiB.
    static func residentMiB(_ pid: pid_t) -> Double {
        let fd = open("/proc/\(pid)/status", O_RDONLY)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 8_192)
        let count = read(fd, &bytes, bytes.count)
        guard count > 0 else { return 0 }
        let text = String(decoding: bytes[0..<count], as: UTF8.self)
        for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let kilobytes = Double(line.split(separator: " ").dropFirst().first.map(String.init) ?? "") ?? 0
            return kilobytes / 1_024
        }
        return 0
    }

    static func spawn(_ argv: [String]) -> pid_t {
        var pid: pid_t = 0
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let arguments = argv.map { strdup($0) } + [nil]
        defer { arguments.forEach { free($0) } }
        let result = posix_spawn(&pid, argv[0], &actions, nil, arguments, environ)
        posix_spawn_file_actions_destroy(&actions)
        guard result == 0 else { fatalError("cannot start \(argv[0]): \(result)") }
        return pid
    }

    /// One call on a fresh connection; the reply text, or "" when nobody serves yet.
    static func call(_ path: String, _ message: String) -> String {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return "" }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in path.utf8.enumerated() where index < buffer.count - 1 { buffer[index] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else { return "" }
        let bytes = Array(message.utf8) + [0]
        guard bytes.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == bytes.count else {
            return ""
        }
        var reply: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while !reply.contains(0) {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return "" }
            reply += buffer[0..<count]
        }
        return String(decoding: reply.prefix { $0 != 0 }, as: UTF8.self)
    }
}
