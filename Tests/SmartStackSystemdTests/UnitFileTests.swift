import Foundation
import Testing

/// The unit files in `systemd/`, checked by systemd's own tools.
@Suite(
    .timeLimit(.minutes(1)),
    .enabled(if: TestEnvironment.tool("systemd-analyze") != nil, "needs systemd-analyze (package systemd)")
)
struct UnitFileTests {
    enum Scope: String, CaseIterable, CustomTestStringConvertible {
        case system
        case user

        /// Where the scope's units live in the repository.
        var directory: URL {
            let systemd = TestEnvironment.repository.appendingPathComponent("systemd")
            return self == .system ? systemd : systemd.appendingPathComponent("user")
        }

        var analyzeOptions: [String] { self == .system ? [] : ["--user"] }
        var testDescription: String { rawValue }
    }

    static let unitNames = ["smartstackd.service", "smartstackd.socket"]
    static let installedBinary = "/usr/local/bin/smartstackd"

    /// Copies of the units whose ExecStart names an executable stub, since `systemd-analyze verify`
    /// checks that the binary exists. Nothing else changes (checked).
    private func staged(_ scope: Scope, in directory: TemporaryDirectory) throws -> [String] {
        let stub = directory.path("smartstackd")
        try "#!/bin/sh\nexit 0\n".write(toFile: stub, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: stub)
        return try Self.unitNames.map { name in
            let original = try String(contentsOf: scope.directory.appendingPathComponent(name), encoding: .utf8)
            let copy = original.replacingOccurrences(
                of: "\nExecStart=\(Self.installedBinary)", with: "\nExecStart=\(stub)")
            #expect(name.hasSuffix(".socket") || copy != original, "\(name) should start \(Self.installedBinary)")
            let path = directory.path(name)
            try copy.write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }
    }

    private func analyze(_ scope: Scope, _ arguments: [String], in directory: TemporaryDirectory) throws
        -> ProcessResult
    {
        let runtime = directory.path("runtime")
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true)
        return try ChildProcess.run(
            try #require(TestEnvironment.tool("systemd-analyze")), scope.analyzeOptions + arguments,
            // A user manager's paths (%t) come from XDG_RUNTIME_DIR.
            environment: TestEnvironment.cleanEnvironment(["XDG_RUNTIME_DIR": runtime, "SYSTEMD_COLORS": "0"]),
            in: directory.url
        )
    }

    @Test(arguments: Scope.allCases)
    func verifyIsClean(_ scope: Scope) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let result = try analyze(scope, ["verify"] + staged(scope, in: directory), in: directory)
        #expect(result.status == 0)
        #expect(result.errorOutput.isEmpty, "systemd-analyze verify: \(result.errorOutput)")
    }

    /// The offline exposure score. The system service scores 0.5 with systemd 252; the user
    /// service 1.1, because the offline analysis assumes a user unit runs as root with every
    /// capability (it runs as the user, with none).
    @Test(arguments: [(Scope.system, 1.0), (.user, 1.5)])
    func securityExposure(_ scope: Scope, _ maximum: Double) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let service = try staged(scope, in: directory)[0]
        let result = try analyze(scope, ["security", "--offline=yes", "--no-pager", service], in: directory)
        #expect(result.status == 0, "\(result.errorOutput)")
        let marker = "Overall exposure level for smartstackd.service: "
        let line = try #require(result.output.split(separator: "\n").first { $0.contains(marker) }, "\(result.output)")
        let score = try #require(Double(line.split(separator: marker).last?.split(separator: " ").first ?? ""))
        #expect(score <= maximum, "exposure \(score) for the \(scope) service:\n\(result.output)")
    }

    /// The settings DESIGN.md and docs/systemd.md promise, so that an edit cannot drop one unnoticed.
    @Test(arguments: Scope.allCases)
    func promisedSettings(_ scope: Scope) throws {
        let service = try Self.settings(scope.directory.appendingPathComponent("smartstackd.service"))
        let socket = try Self.settings(scope.directory.appendingPathComponent("smartstackd.socket"))
        var expected: [String: String] = [
            "Type": "notify", "NotifyAccess": "main", "WatchdogSec": "30s",
            "TimeoutStopSec": "15s", "StateDirectory": "smartstack", "UMask": "0077", "PrivateNetwork": "yes",
            "RestrictAddressFamilies": "AF_UNIX", "SystemCallArchitectures": "native", "MemoryDenyWriteExecute": "yes",
            "ProtectSystem": "strict", "PrivateTmp": "yes", "NoNewPrivileges": "yes", "LockPersonality": "yes",
            "RestrictRealtime": "yes", "RestrictNamespaces": "yes", "ProtectKernelTunables": "yes",
            "ProtectKernelModules": "yes", "ProtectKernelLogs": "yes", "ProtectControlGroups": "yes",
            "ProtectClock": "yes", "ProtectHostname": "yes", "CapabilityBoundingSet": "",
        ]
        // The system service says --system: it runs as a transient uid, not root, yet serves the whole system.
        #expect(service["ExecStart"] == [Self.installedBinary + (scope == .system ? " --system" : "")])
        if scope == .system {
            expected.merge([
                "DynamicUser": "yes", "ProtectHome": "yes", "IPAddressDeny": "any", "Requires": "smartstackd.socket",
            ]) { $1 }
            // PrivateUsers=yes would turn every client uid into "nobody" for SO_PEERCRED.
            #expect(service["PrivateUsers"] == nil)
        }
        for (key, value) in expected {
            #expect(
                service[key]?.contains(value) == true, "\(scope) service: \(key)=\(value), found \(service[key] ?? [])")
        }
        #expect(
            service["SystemCallFilter"] == [
                "@system-service", "~@privileged @resources", "sched_setattr sched_setscheduler",
            ])
        #expect(socket["FileDescriptorName"] == ["varlink"])
        let listen = scope == .system ? "/run/smartstack/io.smartstack" : "%t/smartstack/io.smartstack"
        #expect(socket["ListenStream"] == [listen])
    }

    /// The socket's group comes from the sysusers entry, which systemd-sysusers accepts.
    @Test(.enabled(if: TestEnvironment.tool("systemd-sysusers") != nil, "needs systemd-sysusers"))
    func socketGroupIsCreatedBySysusers() throws {
        let socket = try Self.settings(Scope.system.directory.appendingPathComponent("smartstackd.socket"))
        let group = try #require(socket["SocketGroup"]?.first)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try FileManager.default.createDirectory(atPath: directory.path("etc"), withIntermediateDirectories: true)
        let configuration = TestEnvironment.repository.appendingPathComponent("systemd/sysusers.d/smartstackd.conf")
        let result = try ChildProcess.run(
            try #require(TestEnvironment.tool("systemd-sysusers")),
            ["--root=\(directory.url.path)", configuration.path],
            environment: TestEnvironment.cleanEnvironment(), in: directory.url)
        #expect(result.status == 0, "\(result.errorOutput)")
        let groups = try String(contentsOfFile: directory.path("etc/group"), encoding: .utf8)
        #expect(groups.split(separator: "\n").contains { $0.hasPrefix("\(group):x:") })
    }

    /// `Key=value` lines of a unit file, every value of repeated keys in order; comments skipped.
    static func settings(_ url: URL) throws -> [String: [String]] {
        var settings: [String: [String]] = [:]
        for line in try String(contentsOf: url, encoding: .utf8).split(separator: "\n") {
            guard !line.hasPrefix("#"), !line.hasPrefix("["), let equals = line.firstIndex(of: "=") else { continue }
            settings[String(line[..<equals]), default: []].append(String(line[line.index(after: equals)...]))
        }
        return settings
    }
}
