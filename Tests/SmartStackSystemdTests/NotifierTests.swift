import Foundation
import SmartStackSystemd
import SystemPackage
import Testing

/// `SystemdNotifier` against a real `AF_UNIX` datagram socket, as systemd's notify socket is.
///
/// In-process tests pass the socket path to the initializer, so nothing touches the process-wide
/// environment; the `NOTIFY_SOCKET`/`WATCHDOG_USEC` path through libsystemd runs in the probe.
@Suite(.timeLimit(.minutes(1))) struct NotifierTests {
    @Test func explicitSocketReceivesEachState() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let receiver = try DatagramReceiver(path: directory.path("notify"))
        let notifier = SystemdNotifier(socketPath: receiver.path, watchdogInterval: .seconds(10))
        #expect(notifier.isEnabled)

        try notifier.ready(status: "3 stacks")
        #expect(receiver.receive()?.text == "READY=1\nSTATUS=3 stacks")
        try notifier.status("line one\nline two\ttab")
        #expect(receiver.receive()?.text == "STATUS=line one line two tab")
        try notifier.watchdog()
        #expect(receiver.receive()?.text == "WATCHDOG=1")
        try notifier.extendTimeout(by: .milliseconds(1500))
        #expect(receiver.receive()?.text == "EXTEND_TIMEOUT_USEC=1500000")
        try notifier.stopping()
        #expect(receiver.receive()?.text == "STOPPING=1")

        try notifier.reloading()
        let reloading = try #require(receiver.receive()?.text).split(separator: "\n")
        #expect(reloading.first == "RELOADING=1")
        #expect(reloading.count == 2 && reloading[1].hasPrefix("MONOTONIC_USEC="))
        #expect(UInt64(reloading.last?.dropFirst("MONOTONIC_USEC=".count) ?? "") ?? 0 > 0)
    }

    @Test func datagramsCarryTheSendersPID() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let receiver = try DatagramReceiver(path: directory.path("notify"))
        try SystemdNotifier(socketPath: receiver.path).ready()
        let received = try #require(receiver.receive())
        // What NotifyAccess=main relies on: systemd reads the sender's pid from SCM_CREDENTIALS.
        #expect(received.senderPID == getpid())
    }

    @Test func abstractNamespaceSocket() throws {
        let name = "@smartstack-test-\(UUID().uuidString)"
        let receiver = try DatagramReceiver(path: name)
        try SystemdNotifier(socketPath: name).ready()
        #expect(receiver.receive()?.text == "READY=1")
    }

    @Test func disabledNotifierSendsNothingAndDoesNotThrow() throws {
        let notifier = SystemdNotifier.disabled
        #expect(!notifier.isEnabled)
        #expect(notifier.watchdogInterval == nil)
        #expect(notifier.watchdogPingInterval == nil)
        try notifier.ready(status: "ignored")
        try notifier.watchdog()
        try notifier.stopping()
    }

    @Test func missingSocketIsAnErrno() {
        let notifier = SystemdNotifier(socketPath: "/tmp/smartstack-test-no-such-dir/notify")
        #expect(throws: Errno.noSuchFileOrDirectory) { try notifier.ready() }
        let tooLong = SystemdNotifier(socketPath: "/tmp/" + String(repeating: "x", count: 200))
        #expect(throws: Errno.invalidArgument) { try tooLong.ready() }
    }

    @Test func watchdogPingsAtHalfTheInterval() {
        let notifier = SystemdNotifier(socketPath: "/unused", watchdogInterval: .seconds(30))
        #expect(notifier.watchdogPingInterval == .seconds(15))
    }
}

/// `SystemdNotifier.fromEnvironment()` in a child process, with the variables systemd sets.
@Suite(.timeLimit(.minutes(1))) struct NotifierEnvironmentTests {
    @Test(.enabled(if: TestEnvironment.probe != nil, "needs smartstack-systemd-probe: swift build --build-tests"))
    func libsystemdSendsToNotifySocketFromEnvironment() throws {
        let probe = try #require(TestEnvironment.probe)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let receiver = try DatagramReceiver(path: directory.path("notify"))
        let child = try ChildProcess(
            probe, ["notify"],
            environment: TestEnvironment.cleanEnvironment(["NOTIFY_SOCKET": receiver.path, "WATCHDOG_USEC": "3000000"]),
            in: directory.url
        )
        var messages: [String] = []
        for _ in 0..<4 {
            guard let message = receiver.receive() else { break }
            #expect(message.senderPID == child.processID)
            messages.append(message.text)
        }
        let result = child.wait(timeout: .seconds(10))
        #expect(result.status == 0, "\(result.errorOutput)")
        #expect(result.output == "enabled=true watchdog_usec=3000000\n")
        #expect(messages == ["READY=1\nSTATUS=probe ready", "STATUS=3 stacks 12 widgets", "WATCHDOG=1", "STOPPING=1"])
    }

    @Test(
        .enabled(if: TestEnvironment.probe != nil, "needs smartstack-systemd-probe: swift build --build-tests"),
        arguments: [
            // WATCHDOG_PID names another process (pid 1): the watchdog is not ours.
            (["WATCHDOG_USEC": "3000000", "WATCHDOG_PID": "1"], "enabled=false watchdog_usec=none"),
            (["WATCHDOG_USEC": "not a number"], "enabled=false watchdog_usec=none"),
            ([:], "enabled=false watchdog_usec=none"),
        ]
    )
    func environmentWithoutNotifySocketOrOwnWatchdog(_ variables: [String: String], _ expected: String) throws {
        let probe = try #require(TestEnvironment.probe)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let result = try ChildProcess.run(
            probe, ["notify"], environment: TestEnvironment.cleanEnvironment(variables), in: directory.url)
        #expect(result.status == 0, "\(result.errorOutput)")
        #expect(result.output == expected + "\n")
    }
}
