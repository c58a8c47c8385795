// `smartstack-systemd-probe service`: a stand-in for smartstackd under a real systemd, run by the
// PID 1 test with the repository's unit files. It does what the daemon will do with this library:
// adopt the socket named "varlink", report to the journal, READY=1 with STATUS=, watchdog pings at
// half WATCHDOG_USEC, STOPPING=1 on SIGTERM, and keep a counter in $STATE_DIRECTORY. Each connection
// sends one line and gets one line back:
//
//   status              → uid=… state=… starts=… destination=… watchdog_usec=… socket=…
//   order STACK TOP     → logs an order-changed entry, updates STATUS=; replies "ok"
//   stall               → stops the watchdog pings (fault injection); replies "stalled"
import SmartStackSystemd
import SystemPackage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

struct ServiceProbe {
    let journal = JournalWriter.automatic()
    let notifier = SystemdNotifier.fromEnvironment()
    var stalled = false
    var starts = 0
    var stateDirectory = ""
    var socketName = "none"

    func log(_ event: SmartStackEvent?, _ message: String, _ fields: KeyValuePairs<JournalFieldName, String> = [:]) {
        var entry = JournalEntry(message, fields: fields)
        entry.messageID = event?.messageID
        do {
            try journal.send(entry)
        } catch {
            writeLine("journal: \(error)", to: STDERR_FILENO)
        }
    }

    mutating func run(_ arguments: ArraySlice<String>) -> Never {
        log(.started, "smartstack-systemd-probe started")
        // SIGTERM is taken synchronously in the loop (sigtimedwait), never by a handler.
        var terminate = sigset_t()
        sigemptyset(&terminate)
        sigaddset(&terminate, SIGTERM)
        sigprocmask(SIG_BLOCK, &terminate, nil)

        let listener = adoptOrBind(arguments)
        countStart()
        log(.stateLoaded, "state loaded", [.count: String(starts)])
        reportErrors { try notifier.ready(status: "serving; \(starts) starts") }

        let pingInterval = notifier.watchdogPingInterval
        var nextPing = ContinuousClock.now
        while true {
            var zero = timespec()
            if sigtimedwait(&terminate, nil, &zero) == SIGTERM {
                reportErrors { try notifier.stopping(status: "stopping on SIGTERM") }
                log(.stopping, "stopping", [.reason: "SIGTERM"])
                exit(0)
            }
            if let pingInterval, !stalled, ContinuousClock.now >= nextPing {
                reportErrors { try notifier.watchdog() }
                nextPing = ContinuousClock.now + pingInterval
            }
            var poller = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            if poll(&poller, 1, 50) == 1 { serveOne(listener) }
        }
    }

    /// The activated socket named "varlink", or `--listen PATH` bound here.
    mutating func adoptOrBind(_ arguments: ArraySlice<String>) -> Int32 {
        do {
            if let socket = try ListenedSockets.take().varlink {
                socketName = socket.name
                return socket.descriptor.rawValue
            }
        } catch {
            fail("listen fds: \(error)")
        }
        guard let index = arguments.firstIndex(of: "--listen"), arguments.index(after: index) < arguments.endIndex
        else {
            fail("service: not socket-activated and no --listen PATH")
        }
        let path = arguments[arguments.index(after: index)]
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8).prefix($0.count - 1)) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard descriptor >= 0, bound == 0, listen(descriptor, 16) == 0 else {
            fail("bind \(path): \(Errno(rawValue: errno))")
        }
        socketName = "--listen"
        return descriptor
    }

    /// Appends a line to $STATE_DIRECTORY/starts and counts the lines: proof the directory is
    /// writable under ProtectSystem=strict and survives restarts.
    mutating func countStart() {
        stateDirectory = getenv("STATE_DIRECTORY").map { String(cString: $0) } ?? "/tmp"
        let path = stateDirectory + "/starts"
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { fail("open \(path): \(Errno(rawValue: errno))") }
        writeLine("start", to: descriptor)
        close(descriptor)
        var buffer = [UInt8](repeating: 0, count: 65536)
        let reader = open(path, O_RDONLY | O_CLOEXEC)
        let count = buffer.withUnsafeMutableBytes { read(reader, $0.baseAddress, $0.count) }
        close(reader)
        starts = buffer.prefix(max(0, count)).filter { $0 == UInt8(ascii: "\n") }.count
    }

    mutating func serveOne(_ listener: Int32) {
        let connection = accept(listener, nil, nil)
        guard connection >= 0 else { return }
        defer { close(connection) }
        var limit = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while line.count < 1024, recv(connection, &byte, 1, 0) == 1, byte != UInt8(ascii: "\n") { line.append(byte) }
        let words = String(decoding: line, as: UTF8.self).split(separator: " ").map(String.init)
        switch words.first {
        case "status":
            let watchdog = notifier.watchdogInterval.map { String($0.components.seconds * 1_000_000) } ?? "none"
            writeLine(
                "uid=\(getuid()) state=\(stateDirectory) starts=\(starts) destination=\(journal.destination.rawValue)"
                    + " watchdog_usec=\(watchdog) socket=\(socketName)", to: connection)
        case "order" where words.count == 3:
            log(.orderChanged, "Order of \(words[1]) changed", [.stack: words[1], .top: words[2], .count: "1"])
            reportErrors { try notifier.status("serving; \(words[2]) on top of \(words[1])") }
            writeLine("ok", to: connection)
        case "stall":
            stalled = true
            writeLine("stalled", to: connection)
        default:
            writeLine("unknown", to: connection)
        }
    }

    func reportErrors(_ body: () throws -> Void) {
        do {
            try body()
        } catch {
            writeLine("notify: \(error)", to: STDERR_FILENO)
        }
    }
}
