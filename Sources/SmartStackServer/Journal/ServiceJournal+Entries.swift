import SmartStackCore
import SmartStackSystemd

extension ServiceJournal {
    /// `SMARTSTACK_*` names beyond `JournalFieldName`'s constants (valid by construction; a test checks).
    enum Field {
        static let stacks = name("STACKS")
        static let widgets = name("WIDGETS")
        static let kinds = name("KINDS")
        static let donations = name("DONATIONS")
        static let subscribers = name("SUBSCRIBERS")
        static let events = name("EVENTS")
        static let decisions = name("DECISIONS")
        static let orderEntries = name("ORDER_ENTRIES")
        static let suggestionsInserted = name("SUGGESTIONS_INSERTED")
        static let suggestionsRemoved = name("SUGGESTIONS_REMOVED")
        static let reloadsRequested = name("RELOADS_REQUESTED")
        static let reloadsWithheld = name("RELOADS_WITHHELD")
        static let connections = name("CONNECTIONS")
        static let clientsRejected = name("CLIENTS_REJECTED")
        static let journalDropped = name("JOURNAL_DROPPED")
        static let intervalSeconds = name("INTERVAL_SECONDS")
        static let address = name("ADDRESS")
        static let version = name("VERSION")
        static let withheldUntil = name("WITHHELD_UNTIL")

        static let all = [
            stacks, widgets, kinds, donations, subscribers, events, decisions, orderEntries, suggestionsInserted,
            suggestionsRemoved, reloadsRequested, reloadsWithheld, connections, clientsRejected, journalDropped,
            intervalSeconds, address, version, withheldUntil,
        ]

        private static func name(_ suffix: String) -> JournalFieldName {
            // Every suffix above is upper case, digits and underscores (the e2e summary test reads them back).
            JournalFieldName.smartstack(suffix) ?? JournalFieldName.reason
        }
    }

    /// `started`: the service is up and about to load its state.
    public func started(version: String, file: String = #fileID, line: Int = #line, function: String = #function) {
        event(
            .started, "smartstackd \(version) started", fields: [(Field.version, version)], file: file, line: line,
            function: function)
    }

    /// `stateLoaded`: what was loaded and how long it took.
    public func stateLoaded(
        _ statistics: HostStatistics, in duration: Duration, file: String = #fileID, line: Int = #line,
        function: String = #function
    ) {
        event(
            .stateLoaded, "state loaded: \(statistics.stacks) stacks, \(statistics.widgets) widgets",
            fields: [
                (Field.stacks, String(statistics.stacks)), (Field.widgets, String(statistics.widgets)),
                (Field.donations, String(statistics.donations)), (.reason, "loaded in \(duration)"),
            ], file: file, line: line, function: function)
    }

    /// The order-changed entry of a (possibly coalesced) change.
    static func orderChangedEntry(_ change: OrderChangeCoalescer.Change) -> JournalQueue.Item {
        let decision = change.decision
        let top = decision.top ?? ""
        var message = "Order of stack \(decision.stack.rawValue) changed"
        message += decision.removed ? ": the stack was removed" : top.isEmpty ? ": empty" : ": \(top) on top"
        if change.count > 1 { message += " (\(change.count) changes in a burst)" }
        var entry = JournalEntry(.orderChanged, message)
        entry.append(.stack, decision.stack.rawValue)
        entry.append(.revision, decision.revision)
        entry.append(.engineTime, decision.time.rfc3339)
        entry.append(.order, JournalList.join(decision.order))
        entry.append(.previousOrder, change.previousOrder.map(JournalList.join) ?? "")
        entry.append(.top, top)
        entry.append(.reason, decision.removed ? "removed" : decision.entries.first?.reason.rawValue ?? "")
        entry.append(
            .scores,
            decision.entries.map { "\(JournalList.encode($0.instance))=\(score($0.score))" }.joined(separator: ","))
        entry.append(.count, change.count)
        return JournalQueue.Item(entry)
    }

    /// The suggested entries that appeared in and disappeared from a stack's order.
    static func suggestionChanges(_ decision: Decision, previous: Decision?) -> (
        inserted: [DecisionEntry], removed: [DecisionEntry]
    ) {
        let before = previous?.entries.filter(\.suggested) ?? []
        let now = decision.entries.filter(\.suggested)
        guard !before.isEmpty || !now.isEmpty else { return ([], []) }
        let beforeIDs = Set(before.map(\.instance))
        let nowIDs = Set(now.map(\.instance))
        return (now.filter { !beforeIDs.contains($0.instance) }, before.filter { !nowIDs.contains($0.instance) })
    }

    static func suggestionEntry(_ event: SmartStackEvent, _ suggestion: DecisionEntry, _ decision: Decision)
        -> JournalQueue.Item
    {
        let inserted = event == .suggestionInserted
        var entry = JournalEntry(
            event,
            "Suggestion \(suggestion.instance) \(inserted ? "inserted into" : "removed from") stack \(decision.stack.rawValue)"
        )
        entry.append(.stack, decision.stack.rawValue)
        entry.append(.widget, suggestion.instance)
        if let kind = suggestion.kind {
            entry.append(.kind, kind.kind)
            entry.append(.app, kind.app.rawValue)
        }
        entry.append(.revision, decision.revision)
        entry.append(.engineTime, decision.time.rfc3339)
        entry.append(.reason, inserted ? suggestion.reason.rawValue : "no longer suggested")
        return JournalQueue.Item(entry)
    }

    /// The entry of a reload effect; `nil` for effects that are not journal events.
    static func effectEntry(_ effect: EngineEffect) -> JournalQueue.Item? {
        switch effect {
        case .reloadRequested(let instance, let kind, let reason, _):
            var entry = JournalEntry(
                .reloadRequested, "Reload of \(kind) requested from \(kind.app.rawValue) for \(instance.rawValue)")
            entry.append(.widget, instance.rawValue)
            entry.append(.kind, kind.kind)
            entry.append(.app, kind.app.rawValue)
            entry.append(.reason, reason.rawValue)
            return JournalQueue.Item(entry)
        case .reloadWithheld(let instance, let kind, let reason, let until, _):
            var entry = JournalEntry(
                .reloadWithheld, "Reload of \(kind) for \(instance.rawValue) withheld until \(until.rfc3339)",
                priority: .notice)
            entry.append(.widget, instance.rawValue)
            entry.append(.kind, kind.kind)
            entry.append(.app, kind.app.rawValue)
            entry.append(.reason, "\(reason.rawValue): reload budget spent")
            entry.append(Field.withheldUntil, until.rfc3339)
            return JournalQueue.Item(entry)
        case .timelineWarnings:
            return nil
        }
    }

    static func rejectionEntry(_ peer: PeerCredentials, _ rejection: ClientRejection, count: Int)
        -> JournalQueue.Item
    {
        let method: String
        let error: String
        let reason: String
        switch rejection {
        case .connectionLimit(let limit):
            (method, error, reason) = ("", "connection closed", "connection limit (\(limit)) reached")
        case .connectionsPerUID(let limit):
            (method, error, reason) = (
                "", "connection closed", "connections per uid (\(limit), maxConnectionsPerUID) reached"
            )
        case .pendingConnectionsPerUID(let limit):
            (method, error, reason) = (
                "", "connection closed",
                "connections per uid waiting to be set up (\(limit), maxPendingConnectionsPerUID) reached"
            )
        case .permissionDenied(let called, let why):
            (method, error, reason) = (called, "org.varlink.service.PermissionDenied", why)
        }
        var message = "Refused client uid \(peer.uid) (pid \(peer.pid))"
        message += method.isEmpty ? ": \(reason)" : " calling \(method): \(reason)"
        if count > 1 { message += " (\(count) refusals)" }
        var entry = JournalEntry(.clientRejected, message, priority: .warning)
        entry.append(.clientUID, peer.uid)
        entry.append(.clientPID, peer.pid)
        if !method.isEmpty { entry.append(.method, method) }
        entry.append(.error, error)
        entry.append(.reason, reason)
        entry.append(.count, count)
        return JournalQueue.Item(entry)
    }

    /// A score as the journal shows it: three decimals.
    static func score(_ value: Double) -> String {
        guard value.isFinite else { return "\(value)" }
        let scaled = (value * 1_000).rounded()
        let sign = scaled < 0 ? "-" : ""
        let magnitude = Int64(abs(scaled))
        let fraction = String(magnitude % 1_000)
        return "\(sign)\(magnitude / 1_000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
    }
}
