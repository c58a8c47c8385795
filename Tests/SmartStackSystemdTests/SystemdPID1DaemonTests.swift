import Foundation
import SmartStackSystemd
import Testing

/// The real smartstackd under the repository's units and a real systemd as PID 1 (the machinery of
/// `SystemdPID1Tests`: private /run, /tmp, /var/tmp, /var/lib and /etc/systemd/system, nothing of the
/// machine's boot): activation by a Varlink client, READY=1 and STATUS= with live counts, decision entries
/// in `journalctl -u smartstackd`, a stalled engine (test-only fault injection) killed by the watchdog and
/// restarted, and a clean stop.
extension SystemdPID1Tests {
    /// The only changes to the shipped units: a short watchdog, a quick restart, and the test-only switch
    /// that lets SIGUSR2 stall the engine.
    static let daemonDropIn = """
        [Service]
        WatchdogSec=2s
        RestartSec=200ms
        Environment=SMARTSTACK_TEST_FAULTS=1

        """

    @Test(.enabled(if: TestEnvironment.daemon != nil, "needs smartstackd: swift build --build-tests"))
    func smartstackdUnderSystemd() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try stage(directory, executable: try #require(TestEnvironment.daemon), dropIn: Self.daemonDropIn)
        let machine = try boot(directory)
        defer { shutDown(machine) }
        try waitUntilRunning(machine)

        let started = try machine.run(["systemctl", "start", "smartstackd.socket"])
        try #require(started.status == 0, "systemctl start smartstackd.socket: \(started.errorOutput)")
        #expect(try machine.show("ActiveState") == "inactive")

        // A client's first call starts the service by activation; it answers once READY=1 was sent.
        let connection = try RawVarlinkConnection(path: machine.socketPath, timeout: .seconds(20))
        #expect(try connection.call("org.varlink.service.GetInfo")["product"] as? String == "smartstackd")
        #expect(try machine.show("ActiveState") == "active")
        #expect(try machine.show("SubState") == "running")
        #expect(try machine.show("StatusText").hasPrefix("serving 0 stacks, 0 widgets"))

        // STATUS= follows the live counts.
        try connection.setUpStack(apps: ["mail", "news", "maps"])
        try connection.call(
            "io.smartstack.Provider.Donate", ["app": "org.example.mail", "intent": "open", "id": "d1"])
        let counted = try eventually(.seconds(10)) {
            try machine.show("StatusText") == "serving 1 stack, 3 widgets, 0 subscribers, 1 donations/min"
        }
        let statusText = try machine.show("StatusText")
        #expect(counted, "StatusText=\(statusText)")

        // The decision entries are in the unit's journal, native, from the dynamic user.
        let entry = try #require(
            try machine.firstEntry(.orderChanged, within: .seconds(10)),
            "order-changed entry in journalctl -u smartstackd")
        #expect(entry["SMARTSTACK_STACK"] as? String == "home")
        #expect(entry["SMARTSTACK_ORDER"] as? String == "mail,news,maps")
        #expect(entry["SMARTSTACK_TOP"] as? String == "mail")
        #expect(entry["_SYSTEMD_UNIT"] as? String == "smartstackd.service")
        #expect(entry["_TRANSPORT"] as? String == "journal")
        let uid = try #require((entry["_UID"] as? String).flatMap(Int.init))
        #expect((61184...65519).contains(uid), "DynamicUser= uid")
        let lifecycle = try machine.journal().compactMap { $0["MESSAGE_ID"] as? String }
        #expect(lifecycle.contains(SmartStackEvent.started.messageID.hex))
        #expect(lifecycle.contains(SmartStackEvent.stateLoaded.messageID.hex))

        // Under the unit's system call filter the event loop still gets its short time slice (EEVDF's slice
        // request, Linux 6.12 and later; docs/storage.md): the filter gives sched_setattr back.
        let firstPID = try machine.show("MainPID")
        let threads = try machine.run([
            "sh", "-c", "for t in /proc/\(firstPID)/task/*; do echo \"$(cat $t/comm):$(grep se.slice $t/sched)\"; done",
        ])
        #expect(threads.status == 0, "\(threads.errorOutput)")
        let loop = threads.output.split(separator: "\n").first { $0.hasPrefix("NIO-SGLTN") }
        let slice = loop.flatMap { UInt64($0.split(separator: ":").last?.filter(\.isNumber) ?? "") }
        if Self.kernelAtLeast(6, 12) {
            #expect(slice == 100_000, "the event loop's thread: \(loop ?? "not found") in \(threads.output)")
        }

        // A stalled engine stops the watchdog pings: systemd kills it (SIGABRT) and Restart= brings it back.
        let stall = try machine.run(["systemctl", "kill", "--kill-who=main", "-s", "SIGUSR2", "smartstackd.service"])
        #expect(stall.status == 0, "\(stall.errorOutput)")
        let restarted = try eventually(.seconds(20)) {
            try machine.show("NRestarts") == "1" && machine.show("ActiveState") == "active"
                && machine.show("MainPID") != firstPID
        }
        let restarts = try machine.show("NRestarts")
        #expect(restarted, "NRestarts=\(restarts)")
        let messages = try machine.journal().compactMap { $0["MESSAGE"] as? String }
        #expect(messages.contains { $0.contains("test fault injection: stalling the engine") })
        #expect(messages.contains { $0.contains("Watchdog timeout (limit 2s)") })
        #expect(messages.contains { $0.contains("status=6/ABRT") })
        // The new instance serves the same socket, with the state the aborted one had stored.
        let again = try RawVarlinkConnection(path: machine.socketPath, timeout: .seconds(20))
        let statistics = try again.call("io.smartstack.Admin.GetStatistics")
        #expect(statistics["stacks"] as? Int == 1, "\(statistics)")
        #expect(statistics["donations"] as? Int == 1, "\(statistics)")

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
    }

    /// Whether this kernel's release is at least major.minor.
    static func kernelAtLeast(_ major: Int, _ minor: Int) -> Bool {
        var names = utsname()
        uname(&names)
        let release = withUnsafeBytes(of: &names.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let parts = release.split(whereSeparator: { !$0.isNumber }).prefix(2).compactMap { Int($0) }
        let found = (parts.first ?? 0, parts.dropFirst().first ?? 0)
        return found.0 > major || (found.0 == major && found.1 >= minor)
    }
}
