public import SmartStackSystemd
import SmartStackCore

/// One of smartstackd's journal entries that the analysis reads, reduced to what it needs.
///
/// Entries are recognised by `MESSAGE_ID` (``SmartStackEvent``) and read through the `SMARTSTACK_*` fields of
/// docs/systemd.md. Engagement has no event type of its own: an entry of any kind that carries
/// `SMARTSTACK_ENGAGEMENT` (`tap`, `swipeTo`, `swipeAway`, `impression`), `SMARTSTACK_STACK` and
/// `SMARTSTACK_WIDGET` counts as one (the daemon writes one at info level for every `RecordEngagement`).
public struct DecisionRecord: Sendable, Hashable {
    /// The largest `SMARTSTACK_COUNT` an entry is taken to hold (smartstackd writes small counts; anything can
    /// write an entry with its identifier).
    public static let maximumCount = 1 << 32

    /// The engine time the entry is for (`SMARTSTACK_ENGINE_TIME`: when the decision was decided for, a
    /// replay's log time included), else when journald received it: microseconds since the Unix epoch.
    public var time: Int64
    /// What the entry says.
    public var event: Event
    /// The machine that wrote it: `_MACHINE_ID` (empty when the entry has none). A fleet's collected journals
    /// (systemd-journal-remote) hold entries of many machines.
    public var machineID: String
    /// `_HOSTNAME` of the machine that wrote it (empty when the entry has none).
    public var hostname: String

    /// What an entry says.
    public enum Event: Sendable, Hashable {
        /// A stack's published order changed (possibly a coalesced burst).
        case orderChanged(OrderChange)
        /// A suggested widget was inserted into a stack.
        case suggestionInserted(stack: String, widget: String)
        /// A suggested widget was removed from a stack.
        case suggestionRemoved(stack: String, widget: String)
        /// The service asked a provider to reload a widget's timeline.
        case reloadRequested(widget: String, reason: String?)
        /// A reload was due but withheld.
        case reloadWithheld(widget: String, reason: String?)
        /// The user did something with a widget of a stack.
        case engagement(stack: String, widget: String, kind: String)
    }

    /// An order-changed entry's fields.
    public struct OrderChange: Sendable, Hashable {
        /// `SMARTSTACK_STACK`.
        public var stack: String
        /// `SMARTSTACK_REVISION`, when present and numeric.
        public var revision: Int?
        /// `SMARTSTACK_ORDER`: instance ids, top first.
        public var order: [String]
        /// `SMARTSTACK_PREVIOUS_ORDER`: the order the stack's previous entry showed (empty for its first).
        public var previousOrder: [String]
        /// `SMARTSTACK_TOP`, or the order's first instance when the field is missing.
        public var top: String
        /// `SMARTSTACK_REASON`: the top entry's reason code.
        public var reason: String
        /// `SMARTSTACK_SCORES`: instance to score.
        public var scores: [String: Double]
        /// `SMARTSTACK_COUNT`: how many published changes the entry stands for (1 when missing).
        public var count: Int

        public init(
            stack: String, revision: Int? = nil, order: [String], previousOrder: [String] = [], top: String? = nil,
            reason: String = "", scores: [String: Double] = [:], count: Int = 1
        ) {
            self.stack = stack
            self.revision = revision
            self.order = order
            self.previousOrder = previousOrder
            self.top = top ?? order.first ?? ""
            self.reason = reason
            self.scores = scores
            self.count = count
        }
    }

    public init(time: Int64, event: Event, machineID: String = "", hostname: String = "") {
        self.time = time
        self.event = event
        self.machineID = machineID
        self.hostname = hostname
    }

    /// Field names of the machine an entry came from (journald's trusted fields).
    public enum MachineField {
        public static let machineID = "_MACHINE_ID"
        public static let hostname = "_HOSTNAME"
    }

    /// Field names beyond `JournalFieldName`'s constants.
    public enum Field {
        /// The engagement kind of an engagement entry.
        public static let engagement = "SMARTSTACK_ENGAGEMENT"
    }

    /// The engagement kinds an engagement entry may carry.
    public static let engagementKinds = ["tap", "swipeTo", "swipeAway", "impression"]

    /// The event types the analysis reads.
    public static let events: [SmartStackEvent] = [
        .orderChanged, .suggestionInserted, .suggestionRemoved, .reloadRequested, .reloadWithheld,
    ]

    /// Reads a journal entry; `nil` when it is not one the analysis uses or lacks a required field.
    public init?(_ entry: JournalReader.Entry) {
        self.init(fields: entry.fields, time: Int64(clamping: entry.realtimeMicroseconds))
    }

    /// Reads an entry's fields; `nil` when it is not one the analysis uses or lacks a required field.
    public init?(fields: [String: String], time: Int64) {
        func field(_ name: JournalFieldName) -> String? {
            guard let value = fields[name.rawValue], !value.isEmpty else { return nil }
            return value
        }
        self.time =
            fields[JournalFieldName.engineTime.rawValue].flatMap { try? Timestamp(rfc3339: $0) }?.microseconds ?? time
        self.machineID = fields[MachineField.machineID] ?? ""
        self.hostname = fields[MachineField.hostname] ?? ""
        let event = fields["MESSAGE_ID"].flatMap(MessageID.init).flatMap(SmartStackEvent.init(messageID:))
        // The fields the daemon cut to fit the journal: a cut list's last item is not a whole id.
        let cut = Set((fields[JournalFieldName.truncated.rawValue] ?? "").split(separator: ",").map(String.init))
        func list(_ name: JournalFieldName) -> [String] {
            JournalList.split(fields[name.rawValue] ?? "", wasCut: cut.contains(name.rawValue))
        }
        switch event {
        case .orderChanged:
            guard let stack = field(.stack) else { return nil }
            let order = list(.order)
            self.event = .orderChanged(
                OrderChange(
                    stack: stack, revision: field(.revision).flatMap { Int($0) }, order: order,
                    previousOrder: list(.previousOrder),
                    top: field(.top) ?? order.first ?? "", reason: field(.reason) ?? "",
                    scores: Self.scores(list(.scores)),
                    // A count from the journal is anyone's text: bounded, so sums over a report cannot overflow.
                    count: min(max(1, field(.count).flatMap { Int($0) } ?? 1), Self.maximumCount)))
        case .suggestionInserted, .suggestionRemoved:
            guard let stack = field(.stack), let widget = field(.widget) else { return nil }
            self.event =
                event == .suggestionInserted
                ? .suggestionInserted(stack: stack, widget: widget) : .suggestionRemoved(stack: stack, widget: widget)
        case .reloadRequested:
            guard let widget = field(.widget) else { return nil }
            self.event = .reloadRequested(widget: widget, reason: field(.reason))
        case .reloadWithheld:
            guard let widget = field(.widget) else { return nil }
            self.event = .reloadWithheld(widget: widget, reason: field(.reason))
        default:
            guard let kind = fields[Field.engagement], Self.engagementKinds.contains(kind), let stack = field(.stack),
                let widget = field(.widget)
            else { return nil }
            self.event = .engagement(stack: stack, widget: widget, kind: kind)
        }
    }

    /// `widget=score` pairs (the items of `SMARTSTACK_SCORES`); pairs that do not parse are skipped.
    static func scores(_ pairs: [String]) -> [String: Double] {
        var scores: [String: Double] = [:]
        for pair in pairs {
            guard let equals = pair.lastIndex(of: "="), let score = Double(pair[pair.index(after: equals)...]) else {
                continue
            }
            scores[String(pair[..<equals])] = score
        }
        return scores
    }
}
