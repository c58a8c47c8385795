import SmartStackClient
import SmartStackCore
public import SmartStackDesktop
import SmartStackProtocol
public import SmartStackSystemd

#if canImport(Glibc)
    import Glibc
#endif

/// The live service: folds the watcher's inputs through the ``DesktopTracker`` and sends the calls it
/// decides to smartstackd, keeping each call until smartstackd acknowledged it. When smartstackd goes away
/// (a restart), it reconnects with back-off and sends the kept calls again: a donation carries the id of
/// its unit's invocation, so a call sent twice is recorded once.
public struct DesktopAgent: Sendable {
    public let configuration: DesktopConfiguration
    public let socket: String
    public let stateFile: StateFile?
    public let journal: JournalWriter
    public let notifier: SystemdNotifier

    public init(
        configuration: DesktopConfiguration, socket: String, stateFile: StateFile?, journal: JournalWriter,
        notifier: SystemdNotifier
    ) {
        self.configuration = configuration
        self.socket = socket
        self.stateFile = stateFile
        self.journal = journal
        self.notifier = notifier
    }

    /// Runs until `inputs` ends.
    public func run(inputs: AsyncStream<DesktopInput>) async throws {
        var contents = try stateFile?.load() ?? StateFile.Contents()
        var tracker = DesktopTracker(configuration: configuration, state: contents.state)
        let prepared = tracker.prepare(at: WallClock.now())
        if !prepared.isEmpty {
            contents.pending += prepared
            contents.state = tracker.state
            save(contents)
        }
        var iterator = inputs.makeAsyncIterator()
        var backoff = 0.2
        var connectedBefore = false
        while true {
            do {
                let finished: Bool = try await VarlinkClient.withConnection(path: socket) { client in
                    if connectedBefore { log(.desktopReconnected, "reconnected to smartstackd at \(socket)") }
                    connectedBefore = true
                    while true {
                        // Everything decided so far, in order, before the next input.
                        while let call = contents.pending.first {
                            switch try await CallSender.send(call, over: &client) {
                            case .accepted:
                                // Served again: the back-off starts over (a connection alone is not enough, a
                                // service that refuses every call for a while is retried ever less often).
                                backoff = 0.2
                            case .refused(let error):
                                log(
                                    nil, "smartstackd refused \(call.method): \(error.name)", priority: .warning,
                                    fields: [.method: call.method, .error: error.name])
                                // Planned again at the next launch (a refused registration or configuration, a
                                // stack smartstackd no longer knows).
                                tracker.refused(call, errorName: error.name)
                                contents.state = tracker.state
                            }
                            contents.pending.removeFirst()
                            save(contents)
                        }
                        guard let input = await iterator.next() else { return true }
                        handle(input, tracker: &tracker, contents: &contents)
                    }
                }
                if finished { return }
            } catch {
                if case .remote(let refused) = error as? VarlinkClientError {
                    // Reached, but it cannot take the call now (stopping, storage failing, over the rate limit):
                    // the call stays first in line; wait at least as long as the service asked.
                    if case .double(let seconds)? = refused.parameters["retryAfterSeconds"] {
                        backoff = max(backoff, min(seconds, 60))
                    }
                    log(
                        .desktopDisconnected,
                        "smartstackd at \(socket) cannot take calls now (\(refused.name)); retrying in \(backoff) s",
                        priority: .warning)
                } else {
                    log(
                        .desktopDisconnected,
                        "cannot reach smartstackd at \(socket): \(error); retrying in \(backoff) s", priority: .warning)
                }
                try await Task.sleep(for: .seconds(backoff))
                backoff = min(backoff * 2, 5)
            }
        }
    }

    /// Folds one input into the tracker and queues its calls (saved before they are sent).
    func handle(_ input: DesktopInput, tracker: inout DesktopTracker, contents: inout StateFile.Contents) {
        switch input {
        case .unitStarted(let unit):
            switch tracker.unitStarted(unit) {
            case .launch(let app, let calls):
                contents.pending += calls
                log(
                    .desktopLaunch, "\(app) launched (\(unit.name))",
                    fields: [.app: app, .unit: unit.name, .invocation: unit.invocationID, .date: unit.date.rfc3339])
                if case .configureStack(let stack, _, _, let apps, _)? = calls.first(where: {
                    if case .configureStack = $0 { true } else { false }
                }) {
                    log(
                        .desktopStackChanged, "stack \(stack) now holds \(apps.joined(separator: ", "))",
                        fields: [.stack: stack, .order: JournalList.join(apps)])
                }
            case .notAnApp:
                return
            case .ignored(let id):
                log(
                    nil, "\(id) is on the ignore list (\(unit.name))", priority: .debug,
                    fields: [.app: id, .unit: unit.name])
                return
            case .autostart(let id):
                log(
                    nil, "\(id) was started by the session's autostart, not by the user (\(unit.name))",
                    priority: .debug,
                    fields: [.app: id, .unit: unit.name])
                return
            case .sameInvocation(let app):
                log(nil, "\(unit.name) was counted already", priority: .debug, fields: [.app: app, .unit: unit.name])
                return
            case .repeatedWithin(let app, let seconds):
                log(
                    nil, "\(unit.name) started again after \(seconds) s: counted once", priority: .debug,
                    fields: [.app: app, .unit: unit.name])
                return
            }
        case .session(let signal, let date, let session):
            let calls = tracker.sessionSignal(signal, session: session, at: date)
            guard !calls.isEmpty else { return }
            contents.pending += calls
            log(
                .desktopLook, "session \(session) unlocked: a look at \(configuration.stack)",
                fields: [.stack: configuration.stack, .session: session, .date: date.rfc3339])
        case .overview(let open, let date):
            let calls = tracker.overview(open: open, at: date)
            guard !calls.isEmpty else { return }
            contents.pending += calls
            log(
                .desktopOverviewLook, "GNOME Shell's overview opened: a look at \(configuration.stack)",
                fields: [.stack: configuration.stack, .date: date.rfc3339])
        case .busConnected(let bus):
            tracker.busConnected()
            log(.desktopBusConnected, "watching the \(bus) service manager and logind over D-Bus", fields: [.bus: bus])
            try? notifier.ready(status: "watching the \(bus) service manager")
            return
        case .busLost(let reason):
            log(
                .desktopBusLost, "lost the D-Bus connection: \(reason); reconnecting", priority: .warning,
                fields: [.reason: reason])
            return
        case .busUnavailable(let reason, let retry):
            log(
                .desktopBusLost,
                "cannot watch the service manager over D-Bus: \(reason); trying again in \(Int(retry)) s, then up to "
                    + "once a minute (logged again if the reason changes)",
                priority: .warning, fields: [.reason: reason])
            return
        }
        contents.state = tracker.state
        save(contents)
    }

    func save(_ contents: StateFile.Contents) {
        guard let stateFile else { return }
        do { try stateFile.save(contents) } catch {
            log(nil, "cannot write \(stateFile.path): \(error)", priority: .error)
        }
    }

    func log(
        _ event: SmartStackEvent?, _ message: String, priority: JournalPriority = .info,
        fields: KeyValuePairs<JournalFieldName, String> = [:]
    ) {
        try? journal.send(JournalEntry(message, priority: priority, messageID: event?.messageID, fields: fields))
    }
}
