import Foundation
import SmartStackSystemd
import Testing

/// The repository's system units under a real systemd as PID 1, with the probe standing in for
/// smartstackd (installed as /usr/local/bin/smartstackd, started as `smartstackd service`).
///
/// systemd runs in its own mount, pid, cgroup, UTS, IPC and network namespaces (Tests/pid1), with tmpfs
/// over /run, /tmp, /var/tmp, /var/lib, /var/log/journal, /etc/systemd/{system,user}, /usr/local/bin and /root, its own
/// copies of the user database (with the sysusers group), a cgroup2 tree of its own under
/// a cgroup this test creates and removes, and only the unit files staged here
/// (`SYSTEMD_UNIT_PATH`, no generators): nothing of the machine's boot runs. The test reaches
/// inside with `nsenter` and through `/proc/PID/root`. Killing the namespace's `unshare` (which
/// `timeout -s KILL` also does after two minutes, whatever happens to the test) ends systemd and
/// with it every process in the namespace.
@Suite(
    .serialized,
    .timeLimit(.minutes(2)),
    .enabled(if: TestEnvironment.probe != nil, "needs smartstack-systemd-probe: swift build --build-tests"),
    .enabled(
        if: PID1Environment.unavailableReason == nil,
        "needs root, systemd's tools, a cgroup2 mount, and a host whose PID 1 is not systemd")
)
struct SystemdPID1Tests {
    /// Units copied from the system: just enough for a service's default dependencies, and journald.
    static let systemUnits = [
        "sysinit.target", "basic.target", "sockets.target", "shutdown.target", "paths.target", "timers.target",
        "slices.target", "local-fs.target", "swap.target", "multi-user.target", "systemd-journald.service",
        "systemd-journald.socket", "systemd-journald-dev-log.socket",
    ]

    /// The test's only change to the units: the probe's argument and a short watchdog.
    static let dropIn = """
        [Service]
        ExecStart=
        ExecStart=/usr/local/bin/smartstackd service
        WatchdogSec=2s
        RestartSec=200ms

        """

    /// The namespace and its boot, shared with the desktop scenarios (Tests/e2e/desktop_machine.py): copied into
    /// the staging folder, which inner.sh binds into the namespace.
    static let scripts = TestEnvironment.repository.appendingPathComponent("Tests/pid1")

    /// The namespace is killed after this long whatever happens to the test.
    static let namespaceSeconds = 120

    /// A booted namespace: the host pids of its `unshare` and of systemd.
    struct Machine {
        let directory: TemporaryDirectory
        let outer: ChildProcess
        let unshare: Int32
        let systemd: Int32

        var socketPath: String { "/proc/\(systemd)/root/run/smartstack/io.smartstack" }

        func run(_ arguments: [String]) throws -> ProcessResult {
            try ChildProcess.run(
                try #require(TestEnvironment.tool("nsenter")), ["-t", String(systemd), "-m", "-p"] + arguments,
                environment: TestEnvironment.cleanEnvironment(["SYSTEMD_COLORS": "0", "SYSTEMD_PAGER": "cat"]),
                in: directory.url, timeout: .seconds(20))
        }

        func show(_ property: String) throws -> String {
            try run(["systemctl", "show", "-P", property, "smartstackd.service"]).output
                .trimmingCharacters(in: .newlines)
        }

        func journal() throws -> [[String: Any]] {
            let result = try run(["journalctl", "--no-pager", "-o", "json", "-u", "smartstackd.service"])
            let path = directory.path("journal.json")
            try result.output.write(toFile: path, atomically: true, encoding: .utf8)
            return try JournaldTests.jsonLines(path)
        }

        /// The unit's first journal entry of `event`, polled every 100 ms for up to `timeout`.
        func firstEntry(_ event: SmartStackEvent, within timeout: Duration) throws -> [String: Any]? {
            let deadline = ContinuousClock.now + timeout
            while true {
                let entry = try journal().first { $0["MESSAGE_ID"] as? String == event.messageID.hex }
                if entry != nil || ContinuousClock.now >= deadline { return entry }
                usleep(100_000)
            }
        }

        func request(_ line: String) throws -> String {
            try readAll(fromUnixSocket: socketPath, sending: line + "\n")
        }
    }

    /// Stages the units (with `dropIn` for the service) and `executable` as /usr/local/bin/smartstackd.
    func stage(_ directory: TemporaryDirectory, executable: String, dropIn: String) throws {
        let fileManager = FileManager.default
        let units = directory.url.appendingPathComponent("units")
        let wants = units.appendingPathComponent("sockets.target.wants")
        let dropIns = units.appendingPathComponent("smartstackd.service.d")
        for folder in [wants, dropIns, directory.url.appendingPathComponent("etc")] {
            try fileManager.createDirectory(at: folder, withIntermediateDirectories: true)
        }
        let systemDirectory = try #require(PID1Environment.unitDirectory)
        for unit in Self.systemUnits {
            try fileManager.copyItem(
                atPath: systemDirectory + "/" + unit, toPath: units.appendingPathComponent(unit).path)
        }
        try fileManager.createSymbolicLink(
            atPath: units.appendingPathComponent("default.target").path,
            withDestinationPath: "multi-user.target")
        for socket in ["systemd-journald.socket", "systemd-journald-dev-log.socket"] {
            try fileManager.createSymbolicLink(
                atPath: wants.appendingPathComponent(socket).path,
                withDestinationPath: "../" + socket)
        }
        // The repository's units, verbatim.
        for unit in UnitFileTests.unitNames {
            try fileManager.copyItem(
                at: UnitFileTests.Scope.system.directory.appendingPathComponent(unit),
                to: units.appendingPathComponent(unit))
        }
        try dropIn.write(to: dropIns.appendingPathComponent("test.conf"), atomically: true, encoding: .utf8)
        // journald's own messages stay out of the machine's kernel log.
        let journaldDropIns = units.appendingPathComponent("systemd-journald.service.d")
        try fileManager.createDirectory(at: journaldDropIns, withIntermediateDirectories: true)
        try "[Service]\nEnvironment=SYSTEMD_LOG_TARGET=console\n".write(
            to: journaldDropIns.appendingPathComponent("test.conf"), atomically: true, encoding: .utf8)
        // /etc/group with the sysusers group added by systemd-sysusers itself.
        for file in ["group", "gshadow", "passwd", "shadow"] {
            try fileManager.copyItem(atPath: "/etc/" + file, toPath: directory.path("etc/" + file))
        }
        let sysusers = try ChildProcess.run(
            try #require(TestEnvironment.tool("systemd-sysusers")),
            [
                "--root=\(directory.url.path)",
                TestEnvironment.repository.appendingPathComponent("systemd/sysusers.d/smartstackd.conf").path,
            ],
            environment: TestEnvironment.cleanEnvironment(), in: directory.url)
        try #require(sysusers.status == 0, "systemd-sysusers: \(sysusers.errorOutput)")
        try fileManager.createDirectory(
            at: directory.url.appendingPathComponent("bin"), withIntermediateDirectories: true)
        try fileManager.copyItem(atPath: executable, toPath: directory.path("bin/smartstackd"))
        for script in ["outer.sh", "inner.sh"] {
            try fileManager.copyItem(
                at: Self.scripts.appendingPathComponent(script), to: directory.url.appendingPathComponent(script))
        }
    }

    /// The only child of `pid` (`timeout` and `unshare` have one each), polling until it appears.
    private func child(of pid: Int32, deadline: ContinuousClock.Instant) -> Int32? {
        while ContinuousClock.now < deadline {
            let children = (try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)) ?? ""
            if let first = children.split(separator: " ").first, let child = Int32(first) { return child }
            usleep(20_000)
        }
        return nil
    }

    func boot(_ directory: TemporaryDirectory) throws -> Machine {
        let outer = try ChildProcess(
            "/bin/sh",
            [
                directory.path("outer.sh"), directory.url.path, try #require(PID1Environment.cgroup2Mount),
                "smartstack-test", String(Self.namespaceSeconds),
            ],
            environment: TestEnvironment.cleanEnvironment(), in: directory.url)
        let deadline = ContinuousClock.now + .seconds(10)
        var timeoutPID: Int32?
        while timeoutPID == nil && ContinuousClock.now < deadline {
            timeoutPID = (try? String(contentsOfFile: directory.path("timeout.pid"), encoding: .utf8))
                .flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            if timeoutPID == nil { usleep(20_000) }
        }
        guard let timeout = timeoutPID, let unshare = child(of: timeout, deadline: deadline) else {
            if let timeoutPID { kill(timeoutPID, SIGKILL) }
            let result = outer.wait(timeout: .seconds(5))
            throw BootFailure(details: "no unshare: \(result.errorOutput)")
        }
        guard let systemd = child(of: unshare, deadline: deadline) else {
            kill(unshare, SIGKILL)
            let result = outer.wait(timeout: .seconds(20))
            throw BootFailure(details: "no systemd in the namespace: \(result.errorOutput)")
        }
        return Machine(directory: directory, outer: outer, unshare: unshare, systemd: systemd)
    }

    /// Waits until PID 1 answers and has reached its default target.
    func waitUntilRunning(_ machine: Machine) throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            let state = try machine.run(["systemctl", "is-system-running"]).output
            if state.hasPrefix("running") || state.hasPrefix("degraded") { return }
            usleep(100_000)
        }
        let jobs = try machine.run(["systemctl", "list-jobs"]).output
        throw BootFailure(details: "systemd did not finish booting: \(jobs)")
    }

    struct BootFailure: Error, CustomStringConvertible {
        var details: String
        var description: String { details }
    }

    /// Kills the namespace (its `unshare`, whose death kills systemd and so every process inside)
    /// and waits for the outer script to remove its cgroup.
    func shutDown(_ machine: Machine) {
        kill(machine.unshare, SIGKILL)
        let result = machine.outer.wait(timeout: .seconds(20))
        #expect(result.status == 0, "namespace teardown (cgroup removal): \(result.errorOutput)")
    }

    /// Polls `condition` every 100 ms until it holds or `timeout` passes.
    func eventually(_ timeout: Duration, _ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try condition() { return true }
            usleep(100_000)
        }
        return try condition()
    }

    @Test func socketActivationReadinessWatchdogAndStop() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try stage(directory, executable: try #require(TestEnvironment.probe), dropIn: Self.dropIn)
        let machine = try boot(directory)
        defer { shutDown(machine) }
        try waitUntilRunning(machine)

        // The socket listens; the service starts only on the first connection.
        let started = try machine.run(["systemctl", "start", "smartstackd.socket"])
        try #require(started.status == 0, "systemctl start smartstackd.socket: \(started.errorOutput)")
        #expect(try machine.show("ActiveState") == "inactive")
        let socketInfo = try FileManager.default.attributesOfItem(atPath: machine.socketPath)
        #expect((socketInfo[.posixPermissions] as? Int) == 0o660)
        let groups = try String(contentsOfFile: directory.path("etc/group"), encoding: .utf8)
        let group = groups.split(separator: "\n").first { $0.hasPrefix("smartstack:x:") }?.split(separator: ":")[2]
        #expect((socketInfo[.groupOwnerAccountID] as? Int).map(String.init) == group.map(String.init))

        // Activation: the daemon adopts "varlink", runs as a dynamic user with its state directory,
        // sees the watchdog, and writes to the journal natively (stderr is a journal stream).
        let status = Self.fields(try machine.request("status"))
        let uid = try #require(status["uid"].flatMap { Int($0) })
        #expect((61184...65519).contains(uid), "DynamicUser= uid")
        #expect(status["state"] == "/var/lib/smartstack")
        #expect(status["starts"] == "1")
        #expect(status["destination"] == "journal")
        #expect(status["watchdog_usec"] == "2000000")
        #expect(status["socket"] == "varlink")
        #expect(try machine.show("ActiveState") == "active")
        #expect(try machine.show("StatusText") == "serving; 1 starts")

        // STATUS= follows the daemon, and its entries are in the unit's journal with their fields.
        #expect(try machine.request("order home weather") == "ok\n")
        #expect(try eventually(.seconds(5)) { try machine.show("StatusText") == "serving; weather on top of home" })
        let entry = try #require(
            try machine.firstEntry(.orderChanged, within: .seconds(5)),
            "order-changed entry in journalctl -u smartstackd")
        #expect(entry["SMARTSTACK_STACK"] as? String == "home")
        #expect(entry["SMARTSTACK_TOP"] as? String == "weather")
        #expect(entry["_SYSTEMD_UNIT"] as? String == "smartstackd.service")
        #expect(entry["_TRANSPORT"] as? String == "journal")
        #expect(entry["_UID"] as? String == String(uid))
        let firstPID = try machine.show("MainPID")

        // A stalled daemon stops pinging: systemd kills it (SIGABRT) and Restart= brings it back,
        // with the same socket and the state directory kept.
        #expect(try machine.request("stall") == "stalled\n")
        let restarted = try eventually(.seconds(15)) {
            try machine.show("NRestarts") == "1" && machine.show("ActiveState") == "active"
                && machine.show("StatusText") == "serving; 2 starts"
        }
        let restarts = try machine.show("NRestarts")
        #expect(restarted, "NRestarts=\(restarts)")
        #expect(try machine.show("MainPID") != firstPID)
        #expect(Self.fields(try machine.request("status"))["starts"] == "2")
        let messages = try machine.journal().compactMap { $0["MESSAGE"] as? String }
        #expect(messages.contains { $0.contains("Watchdog timeout (limit 2s)") })
        #expect(messages.contains { $0.contains("status=6/ABRT") })

        // A clean stop: SIGTERM, STOPPING=1, the stopping entry, exit 0; the socket file goes away.
        let stopped = try machine.run(["systemctl", "stop", "smartstackd.service", "smartstackd.socket"])
        #expect(stopped.status == 0, "\(stopped.errorOutput)")
        #expect(try machine.show("ActiveState") == "inactive")
        #expect(try machine.show("Result") == "success")
        #expect(try machine.show("ExecMainStatus") == "0")
        #expect(!FileManager.default.fileExists(atPath: machine.socketPath))
        let stopping = try machine.journal().filter {
            $0["MESSAGE_ID"] as? String == SmartStackEvent.stopping.messageID.hex
        }
        #expect(stopping.count == 1)
        #expect(stopping.first?["SMARTSTACK_REASON"] as? String == "SIGTERM")
    }

    /// `key=value key=value` from a probe reply.
    static func fields(_ line: String) -> [String: String] {
        var result: [String: String] = [:]
        for pair in line.trimmingCharacters(in: .newlines).split(separator: " ") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { result[String(parts[0])] = String(parts[1]) }
        }
        return result
    }
}

/// What the PID 1 test needs of the machine (outside the suite, which its own trait refers to).
enum PID1Environment {
    static let unitDirectory = ["/lib/systemd/system", "/usr/lib/systemd/system"].first {
        FileManager.default.fileExists(atPath: $0 + "/sysinit.target")
    }

    /// Why the machine cannot run this test, or `nil` when it can.
    static var unavailableReason: String? {
        if !TestEnvironment.isRoot { return "not root" }
        for tool in ["unshare", "nsenter", "timeout", "systemctl", "journalctl", "systemd-sysusers"]
        where TestEnvironment.tool(tool) == nil {
            return "no \(tool)"
        }
        if TestEnvironment.tool("systemd") == nil { return "no /lib/systemd/systemd" }
        if unitDirectory == nil { return "no systemd unit directory" }
        // Under a systemd host, cgroups belong to it: use systemd-nspawn or a delegated scope there.
        if FileManager.default.fileExists(atPath: "/run/systemd/system") { return "the host runs systemd" }
        if cgroup2Mount == nil { return "no cgroup2 mount" }
        return nil
    }

    static var cgroup2Mount: String? {
        let mounts = (try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8)) ?? ""
        for line in mounts.split(separator: "\n") {
            let fields = line.split(separator: " ")
            if let dash = fields.firstIndex(of: "-"), fields.count > dash + 1, fields[dash + 1] == "cgroup2" {
                return String(fields[4])
            }
        }
        return nil
    }
}
