import Foundation

/// What a finished child process left behind.
struct ProcessResult {
    var status: Int32
    var output: String
    var errorOutput: String
    var processID: Int32
    var timedOut: Bool
}

/// A child process with its output in files (no pipe can fill up and stall it), killed if it
/// outlives its deadline. Started with `posix_spawn` and reaped with `waitpid`, so its exit is seen
/// exactly once and without a run loop. Only processes started here are ever signalled, by pid.
final class ChildProcess {
    let processID: Int32
    private let outputPath: String
    private let errorPath: String
    private var exitStatus: Int32?

    init(_ executable: String, _ arguments: [String], environment: [String: String]? = nil, in directory: URL) throws {
        let id = UUID().uuidString
        outputPath = directory.appendingPathComponent("\(id).out").path
        errorPath = directory.appendingPathComponent("\(id).err").path
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let environment = environment ?? ProcessInfo.processInfo.environment
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, nil, argv, envp)
        guard result == 0 else { throw POSIXError(POSIXErrorCode(rawValue: result) ?? .EIO) }
        processID = pid
    }

    /// Whether the process has exited (reaping it if so).
    var hasExited: Bool {
        if exitStatus != nil { return true }
        var status: Int32 = 0
        if waitpid(processID, &status, WNOHANG) == processID {
            // WIFEXITED/WEXITSTATUS and WTERMSIG by hand: they are macros.
            exitStatus = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
            return true
        }
        return false
    }

    /// Waits for the exit; after `timeout`, SIGTERM, then SIGKILL a second later.
    func wait(timeout: Duration) -> ProcessResult {
        let deadline = ContinuousClock.now + timeout
        var timedOut = false
        while !hasExited {
            if ContinuousClock.now > deadline && !timedOut {
                timedOut = true
                kill(processID, SIGTERM)
                let killAt = ContinuousClock.now + .seconds(1)
                while !hasExited && ContinuousClock.now < killAt { usleep(10_000) }
                if !hasExited { kill(processID, SIGKILL) }
                continue
            }
            usleep(5_000)
        }
        return ProcessResult(
            status: exitStatus ?? -1,
            output: (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "",
            errorOutput: (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "",
            processID: processID,
            timedOut: timedOut
        )
    }

    /// Runs a command to completion.
    static func run(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, in directory: URL,
        timeout: Duration = .seconds(30)
    ) throws -> ProcessResult {
        try ChildProcess(executable, arguments, environment: environment, in: directory).wait(timeout: timeout)
    }
}

/// A private directory under /tmp, removed by `remove()`; short enough for `AF_UNIX` paths.
struct TemporaryDirectory {
    let url: URL

    init() throws {
        url = URL(fileURLWithPath: "/tmp/smartstack-test-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> String {
        url.appendingPathComponent(name).path
    }

    func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}

/// Where the tests find the repository, the probe and the system tools.
enum TestEnvironment {
    /// The package root, from this file's path.
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `smartstack-systemd-probe`, built next to the test bundle by `swift build --build-tests`.
    static let probe: String? = {
        guard let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else {
            return nil
        }
        var directory = URL(fileURLWithPath: executable).deletingLastPathComponent()
        // The test binary may sit inside a bundle directory (`….xctest/…`): look upwards a little.
        for _ in 0..<3 {
            let candidate = directory.appendingPathComponent("smartstack-systemd-probe").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory.deleteLastPathComponent()
        }
        return nil
    }()

    /// The real `smartstackd`, built next to the probe (`swift build --build-tests` builds every product).
    static let daemon: String? = probe.flatMap { probe in
        let directory = URL(fileURLWithPath: probe).deletingLastPathComponent()
        let candidate = directory.appendingPathComponent("smartstackd").path
        return FileManager.default.isExecutableFile(atPath: candidate) ? candidate : nil
    }

    /// The first of `names` found on a standard path, or `nil`.
    static func tool(_ names: String...) -> String? {
        for name in names {
            for directory in ["/usr/bin", "/bin", "/usr/sbin", "/sbin", "/lib/systemd", "/usr/lib/systemd"] {
                let path = directory + "/" + name
                if FileManager.default.isExecutableFile(atPath: path) { return path }
            }
        }
        return nil
    }

    static var isRoot: Bool { getuid() == 0 }

    /// What the journald tests need: root for the mount namespace, and the systemd tools.
    static var canRunJournald: Bool {
        isRoot && tool("unshare") != nil && tool("systemd-journald") != nil && tool("journalctl") != nil
            && tool("systemd-cat") != nil
    }

    /// A minimal environment for children, so the test runner's own variables (a NOTIFY_SOCKET or
    /// JOURNAL_STREAM of its own, say) cannot leak into what a test checks.
    static func cleanEnvironment(_ extra: [String: String] = [:]) -> [String: String] {
        ["PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"]
            .merging(extra) { $1 }
    }
}
