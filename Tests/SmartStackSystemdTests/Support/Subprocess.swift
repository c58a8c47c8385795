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
/// outlives its deadline. Only processes started here are ever signalled, by their own pid.
final class ChildProcess {
    let process = Process()
    private let outputURL: URL
    private let errorURL: URL

    init(_ executable: String, _ arguments: [String], environment: [String: String]? = nil, in directory: URL) throws {
        let id = UUID().uuidString
        outputURL = directory.appendingPathComponent("\(id).out")
        errorURL = directory.appendingPathComponent("\(id).err")
        _ = FileManager.default.createFile(atPath: outputURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errorURL.path, contents: nil)
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: outputURL)
        process.standardError = try FileHandle(forWritingTo: errorURL)
        try process.run()
    }

    var processID: Int32 { process.processIdentifier }

    /// Waits for the exit; after `timeout`, SIGTERM, then SIGKILL a second later.
    func wait(timeout: Duration) -> ProcessResult {
        let deadline = ContinuousClock.now + timeout
        var timedOut = false
        while process.isRunning {
            if ContinuousClock.now > deadline {
                timedOut = true
                process.terminate()
                let killAt = ContinuousClock.now + .seconds(1)
                while process.isRunning && ContinuousClock.now < killAt { usleep(10_000) }
                if process.isRunning { kill(process.processIdentifier, SIGKILL) }
                break
            }
            usleep(5_000)
        }
        process.waitUntilExit()
        return ProcessResult(
            status: process.terminationStatus,
            output: (try? String(contentsOf: outputURL, encoding: .utf8)) ?? "",
            errorOutput: (try? String(contentsOf: errorURL, encoding: .utf8)) ?? "",
            processID: process.processIdentifier,
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
