import SmartStackClient
import SmartStackCore
import SmartStackDesktop
public import SmartStackEval
import SmartStackProtocol

/// A usage log (`smartstack-usage/1`) fed through the live path: each `open` row is an application unit
/// becoming active (`app-<escaped user.app>-<row>.scope`, an invocation id of its own, the row's time)
/// and each `home` row an unlock, both through ``DesktopTracker`` and ``CallSender`` exactly as the D-Bus
/// handlers feed them. Before each unlock the stack's order at the row's time is read (`GetStack`) and
/// scored as docs/usage-log.md scores it, so the live path's orders can be compared with smartstack-eval.
///
/// Every user is a desktop of their own (stack `desktop.apps.USER`, app ids `USER.APP`), replayed into one
/// service with the rows of all users merged in time order, as `smartstackctl replay` does.
public enum DesktopReplay {
    public struct Options: Sendable {
        /// K.
        public var stackSize = 10
        public var family = "systemMedium"
        /// Each user's stack is the protocol's: the K apps they open most in the whole log (a person's own
        /// choice, configuration key `apps`). When false, the live default: the K most launched so far.
        public var protocolStacks = true
        public init() {}
    }

    /// The measures of docs/usage-log.md over the replayed home moments.
    public struct Score: Sendable {
        public var moments = 0
        public var counted = 0
        public var hits1 = 0
        public var hits3 = 0
        public var reciprocalRanks = 0.0
        public var calls = 0
        /// Calls smartstackd refused, by error name.
        public var refused: [String: Int] = [:]

        public var hit1: Double { Double(hits1) / Double(max(counted, 1)) }
        public var hit3: Double { Double(hits3) / Double(max(counted, 1)) }
        public var mrr: Double { reciprocalRanks / Double(max(counted, 1)) }
        public var coverage: Double { Double(counted) / Double(max(moments, 1)) }

        mutating func score(target: String, stack: [String], order: [String]) {
            moments += 1
            guard stack.contains(target) else { return }
            counted += 1
            guard let index = order.filter({ stack.contains($0) }).firstIndex(of: target) else { return }
            if index == 0 { hits1 += 1 }
            if index < 3 { hits3 += 1 }
            reciprocalRanks += 1 / Double(index + 1)
        }
    }

    /// Replays `log` into the smartstackd at `socket`.
    public static func run(_ log: UsageLog, socket: String, options: Options = Options()) async throws -> Score {
        var trackers = log.users.map { user in
            var configuration = DesktopConfiguration()
            configuration.stack = "desktop.apps." + AppUnit.smartStackAppID(user.name)
            configuration.stackSize = options.stackSize
            configuration.family = options.family
            if options.protocolStacks {
                configuration.apps = Evaluation.stack(of: user.events, size: options.stackSize).map {
                    AppUnit.smartStackAppID(user.name + "." + $0)
                }
            }
            return DesktopTracker(configuration: configuration)
        }
        return try await VarlinkClient.withConnection(path: socket) { client in
            var score = Score()
            // Calls wait here until a GetStack needs their effect, then go pipelined (Varlink applies and answers
            // a connection's calls in order, so the service sees exactly the sequence the live agent sends).
            var queued: [DesktopCall] = []
            func send(_ calls: [DesktopCall], _ client: inout VarlinkClient) async throws {
                queued += calls
            }
            func flush(_ client: inout VarlinkClient) async throws {
                let calls = queued
                queued.removeAll()
                score.calls += calls.count
                for error in try await CallSender.sendAll(calls, over: &client) {
                    score.refused[error.name, default: 0] += 1
                }
            }
            for (chosen, position) in log.chronological {
                let user = log.users[chosen]
                let event = user.events[position]
                if position == 0 { try await send(trackers[chosen].prepare(at: event.time), &client) }
                switch event.kind {
                case .open(let app):
                    let unit = UnitStart(
                        name: "app-" + AppUnit.escape(user.name + "." + app) + "-\(position + 1).scope",
                        invocationID: invocationID(user: chosen, row: position), date: event.time)
                    if case .launch(_, let calls) = trackers[chosen].unitStarted(unit) {
                        try await send(calls, &client)
                    }
                case .home:
                    let configuration = trackers[chosen].configuration
                    if let target = Evaluation.target(ofHomeAt: position, in: user.events) {
                        let stack = trackers[chosen].state.stackApps
                        var order: [String] = []
                        if !stack.isEmpty {
                            try await flush(&client)
                            score.calls += 1
                            let reply = try await client.call(
                                "io.smartstack.Shell.GetStack",
                                ["stack": .string(configuration.stack), "at": .string(event.time.rfc3339)])
                            let apps = Dictionary(
                                stack.map { (DesktopCall.instance(stack: configuration.stack, app: $0), $0) },
                                uniquingKeysWith: { first, _ in first })
                            order = (reply["order"]?.arrayValue ?? []).compactMap {
                                $0.objectValue?["instance"]?.stringValue
                            }
                            .compactMap { apps[$0] }
                        }
                        score.score(
                            target: AppUnit.smartStackAppID(
                                AppUnit.unescape(AppUnit.escape(user.name + "." + target)) ?? ""),
                            stack: stack, order: order)
                    }
                    try await send(trackers[chosen].unlocked(at: event.time), &client)
                }
            }
            try await flush(&client)
            return score
        }
    }

    /// 32 hex digits, unique per user and row, as a manager's invocation id is per start.
    static func invocationID(user: Int, row: Int) -> String {
        let high = String(UInt64(user + 1), radix: 16)
        let low = String(UInt64(row + 1), radix: 16)
        return String(repeating: "0", count: 16 - high.count) + high + String(repeating: "0", count: 16 - low.count)
            + low
    }
}
