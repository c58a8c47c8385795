public import SmartStackEval
public import SmartStackProtocol

/// The calls that feed a usage log (`smartstack-usage/1`) into a running service, as the evaluation drives
/// its engine (`SmartStackEval.EngineRanker`), on the wire.
///
/// Each user gets a stack of the K apps they opened most (ties by first appearance), one widget kind
/// `main` per app, registered and configured at the user's first row. Every `open` row is a `Donate` of
/// intent `open` by the app at the row's time; every `home` row is a `RecordLook` at its time (preceded by a
/// `GetStack` at that time when evaluating). Users are replayed in one service, so their app ids are kept
/// apart: `USER.APP`, with bytes outside `[A-Za-z0-9.-]` written `_HH` as the evaluation does. Rows of all
/// users are merged in time order, so the service's clock only moves forward. Donation ids are derived
/// from the row (`r<N>`), so replaying a log twice into one service adds nothing the second time.
public struct ReplayPlan: Sendable {
    /// One call and the log row it comes from.
    public struct Call: Sendable {
        public var method: String
        public var parameters: JSONObject
        /// The 0-based row of the merged log this call belongs to; setup calls carry their user's first row.
        public var row: Int
        /// For a `GetStack` of a home moment: the app ids of the stack's widgets and the moment's target.
        public var moment: Moment?
    }

    /// A home moment to score: the target app id the user opened next (`nil`: no target).
    public struct Moment: Sendable {
        public var target: String?
        public var stack: [String]
    }

    /// A user's stack.
    public struct UserStack: Sendable {
        public var user: String
        public var stack: String
        /// App ids, which are also the instance ids, in the stack's own (most-opened) order.
        public var widgets: [String]
    }

    /// Options of a replay.
    public struct Options: Sendable {
        /// K: apps in each user's stack.
        public var stackSize = 10
        /// The family of every stack.
        public var family = "systemMedium"
        /// Put before each user's name to make the stack id.
        public var stackPrefix = ""
        /// Query each home moment's order (`GetStack` at its time) to score the service's ranking.
        public var evaluate = false

        public init() {}
    }

    public var calls: [Call] = []
    public var users: [UserStack] = []
    /// Rows in the log.
    public var rows = 0

    /// The plan for `log`.
    public init(log: UsageLog, options: Options = Options()) {
        var configured = log.users.map { _ in false }
        var donations = 0
        let stacks = log.users.map { user in Evaluation.stack(of: user.events, size: options.stackSize) }
        users = log.users.enumerated().map { index, user in
            UserStack(
                user: user.name, stack: options.stackPrefix + Self.identifier(user.name),
                widgets: stacks[index].map { Self.appID(user: user.name, app: $0) })
        }
        rows = log.eventCount
        calls.reserveCapacity(rows + log.users.count * (options.stackSize + 1))
        for (row, (chosen, position)) in log.chronological.enumerated() {
            let user = log.users[chosen]
            let event = user.events[position]
            let date = JSONValue.string(event.time.rfc3339)
            let stackID = users[chosen].stack
            if !configured[chosen] {
                configured[chosen] = true
                for (app, id) in zip(stacks[chosen], users[chosen].widgets) {
                    calls.append(
                        Call(
                            method: "io.smartstack.Provider.RegisterWidget",
                            parameters: [
                                "app": .string(id), "kind": "main", "displayName": .string(String(app.prefix(4096))),
                                "families": [.string(options.family)], "date": date,
                            ], row: row))
                }
                let widgets: [JSONValue] = users[chosen].widgets.map {
                    ["instance": .string($0), "app": .string($0), "kind": "main"]
                }
                calls.append(
                    Call(
                        method: "io.smartstack.Shell.ConfigureStack",
                        parameters: [
                            "stack": .string(stackID), "family": .string(options.family), "widgets": .array(widgets),
                            "smartRotate": true, "date": date,
                        ], row: row))
            }
            switch event.kind {
            case .open(let app):
                donations += 1
                calls.append(
                    Call(
                        method: "io.smartstack.Provider.Donate",
                        parameters: [
                            "app": .string(Self.appID(user: user.name, app: app)), "intent": "open", "date": date,
                            "id": .string("r\(position + 1)"),
                        ], row: row))
            case .home:
                if options.evaluate {
                    let target = Evaluation.target(ofHomeAt: position, in: user.events).map {
                        Self.appID(user: user.name, app: $0)
                    }
                    calls.append(
                        Call(
                            method: "io.smartstack.Shell.GetStack",
                            parameters: ["stack": .string(stackID), "at": date],
                            row: row, moment: Moment(target: target, stack: users[chosen].widgets)))
                }
                calls.append(
                    Call(
                        method: "io.smartstack.Shell.RecordLook",
                        parameters: ["stack": .string(stackID), "date": date],
                        row: row))
            }
        }
    }

    /// `USER.APP` as an app id.
    public static func appID(user: String, app: String) -> String {
        String((identifier(user) + "." + identifier(app)).prefix(255))
    }

    /// Bytes outside `[A-Za-z0-9.-]` (and `_` itself) as `_HH`, so the mapping is one-to-one.
    public static func identifier(_ text: String) -> String {
        var result = ""
        for byte in text.utf8 {
            let scalar = Unicode.Scalar(byte)
            let plain =
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: ".")
                || byte == UInt8(ascii: "-")
            if plain {
                result.unicodeScalars.append(scalar)
            } else {
                let hex = String(byte, radix: 16, uppercase: true)
                result += "_" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return result.isEmpty ? "_" : result
    }
}
