// smartstack-systemd-probe: a test-only helper that exercises SmartStackSystemd under real systemd
// components — a notify socket, systemd-socket-activate, systemd-journald — which a test process
// cannot do in-process (they act on the environment, the process's own fds, or a mount namespace).
//
//   smartstack-systemd-probe notify          sends READY, STATUS, WATCHDOG, STOPPING via $NOTIFY_SOCKET
//   smartstack-systemd-probe listen          takes the activated sockets, answers one connection
//   smartstack-systemd-probe journal [--force] -- EVENT MESSAGE [NAME=VALUE…] [-- EVENT MESSAGE …]
//                                            writes one entry per group (EVENT: a SmartStackEvent, or "none")
//   smartstack-systemd-probe service [--listen PATH]   a daemon stand-in for unit tests (ServiceMode.swift)
//
// Each prints one `key=value …` summary line on stdout for the test to check.
import SmartStackSystemd
import SystemPackage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Writes a line straight to a descriptor: unbuffered, so it is out before the probe blocks or exits.
func writeLine(_ text: String, to descriptor: Int32) {
    _ = Array((text + "\n").utf8).withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
}

func say(_ text: String) {
    writeLine(text, to: STDOUT_FILENO)
}

func fail(_ message: String) -> Never {
    writeLine("smartstack-systemd-probe: \(message)", to: STDERR_FILENO)
    exit(1)
}

func runNotify() {
    let notifier = SystemdNotifier.fromEnvironment()
    let watchdog = notifier.watchdogInterval.map { interval in
        String(interval.components.seconds * 1_000_000 + interval.components.attoseconds / 1_000_000_000_000)
    }
    say("enabled=\(notifier.isEnabled) watchdog_usec=\(watchdog ?? "none")")
    do {
        try notifier.ready(status: "probe ready")
        try notifier.status("3 stacks\n12 widgets")
        try notifier.watchdog()
        try notifier.stopping()
    } catch {
        fail("notify: \(error)")
    }
}

func runListen() {
    let sockets: ListenedSockets
    do {
        sockets = try ListenedSockets.take()
    } catch {
        fail("listen: \(error)")
    }
    let names = sockets.sockets.map(\.name).joined(separator: ",")
    let environment = getenv("LISTEN_FDS").map { String(cString: $0) } ?? "unset"
    let summary =
        "fds=\(sockets.sockets.count) names=\(names) varlink=\(sockets.varlink?.name ?? "none")"
        + " unix_stream=\(sockets.varlink?.isListeningUnixStream ?? false) listen_fds_env=\(environment)"
    say(summary)
    guard let socket = sockets.varlink else { return }
    let connection = accept(socket.descriptor.rawValue, nil, nil)
    guard connection >= 0 else { fail("accept: \(Errno(rawValue: errno))") }
    writeLine(summary, to: connection)
    close(connection)
}

func journalEntries(_ arguments: ArraySlice<String>) -> [JournalEntry] {
    arguments.split(separator: "--").map { group in
        guard group.count >= 2, let kind = group.first, let message = group.dropFirst().first else {
            fail("journal: each entry needs EVENT MESSAGE")
        }
        let event = SmartStackEvent(rawValue: kind)
        if event == nil && kind != "none" { fail("journal: unknown event \(kind)") }
        var entry = JournalEntry(message, messageID: event?.messageID)
        for assignment in group.dropFirst(2) {
            guard let equals = assignment.firstIndex(of: "="),
                let name = JournalFieldName(String(assignment[..<equals]))
            else { fail("journal: bad field \(assignment)") }
            entry.append(name, String(assignment[assignment.index(after: equals)...]))
        }
        return entry
    }
}

func runJournal(_ arguments: ArraySlice<String>) {
    let force = arguments.first == "--force"
    let writer = force ? JournalWriter(destination: .journal) : JournalWriter.automatic()
    say("destination=\(writer.destination.rawValue)")
    for entry in journalEntries(force ? arguments.dropFirst() : arguments) {
        do {
            try writer.send(entry)
        } catch {
            fail("journal: \(error)")
        }
    }
}

let arguments = CommandLine.arguments.dropFirst()
switch arguments.first {
case "notify": runNotify()
case "listen": runListen()
case "journal": runJournal(arguments.dropFirst())
case "service":
    var service = ServiceProbe()
    service.run(arguments.dropFirst())
default:
    fail(
        "usage: smartstack-systemd-probe notify | listen | journal [--force] -- EVENT MESSAGE [NAME=VALUE…] … | service"
    )
}
