import SmartStackClient
public import SmartStackProtocol
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// What a replay did: calls made, errors by name, and — when evaluating — how the service ranked the home
/// moments (the measures of docs/usage-log.md, as the service answered them).
public struct ReplayOutcome: Sendable {
    public var rows = 0
    public var users = 0
    public var calls = 0
    public var seconds = 0.0
    /// Typed errors the service returned, by error name.
    public var errors: [String: Int] = [:]
    /// The first error of each name, with its call, for the report.
    public var firstErrors: [String: String] = [:]
    /// Home moments queried with a target.
    public var moments = 0
    /// Moments whose target is in the user's stack.
    public var counted = 0
    public var hits1 = 0
    public var hits3 = 0
    public var reciprocalRanks = 0.0

    public init() {}

    public var errorCount: Int { errors.values.reduce(0, +) }

    /// The outcome as one JSON document.
    public var jsonObject: JSONObject {
        var errorObject = JSONObject()
        for (name, count) in errors.sorted(by: { $0.key < $1.key }) { errorObject[name] = .int(Int64(count)) }
        var object: JSONObject = [
            "rows": .int(Int64(rows)), "users": .int(Int64(users)), "calls": .int(Int64(calls)),
            "seconds": .double(seconds), "callsPerSecond": .double(seconds > 0 ? Double(calls) / seconds : 0),
            "errors": .object(errorObject),
        ]
        if moments > 0 {
            object["evaluation"] = .object(evaluationObject)
        }
        return object
    }

    var evaluationObject: JSONObject {
        let denominator = Double(max(counted, 1))
        return [
            "moments": .int(Int64(moments)), "counted": .int(Int64(counted)),
            "coverage": .double(Double(counted) / Double(max(moments, 1))),
            "hit1": .double(Double(hits1) / denominator), "hit3": .double(Double(hits3) / denominator),
            "mrr": .double(reciprocalRanks / denominator),
        ]
    }

    /// The outcome for people.
    public func render(style: Style = .plain) -> String {
        var lines = [
            "replayed \(Format.count(rows)) rows of \(users) user\(users == 1 ? "" : "s") in \(Format.count(calls)) calls, "
                + "\(Format.duration(seconds)) (\(Format.count(Int(seconds > 0 ? Double(calls) / seconds : 0))) calls/s)"
        ]
        if errors.isEmpty {
            lines.append(style.good("no errors"))
        } else {
            lines.append(style.warn("\(Format.count(errorCount)) calls failed:"))
            for (name, count) in errors.sorted(by: { $0.key < $1.key }) {
                lines.append("  \(Format.count(count)) × \(name)" + (firstErrors[name].map { " (first: \($0))" } ?? ""))
            }
        }
        if moments > 0 {
            let denominator = Double(max(counted, 1))
            lines.append(
                "home moments \(Format.count(moments)), counted \(Format.count(counted)): "
                    + "hit@1 \(Format.number(Double(hits1) / denominator)), hit@3 \(Format.number(Double(hits3) / denominator)), "
                    + "MRR \(Format.number(reciprocalRanks / denominator)) (the service's own orders)")
        }
        return lines.joined(separator: "\n")
    }
}

/// Runs a ``ReplayPlan`` over one connection, pipelined.
public enum ReplayRunner {
    /// Makes every call of `plan` on `path`; `progress(rowsDone, rowsTotal)` is called as replies arrive.
    public static func run(
        _ plan: ReplayPlan, path: String, window: Int = 256, progress: @escaping @Sendable (Int, Int) -> Void
    ) async throws -> ReplayOutcome {
        var initial = ReplayOutcome()
        initial.rows = plan.rows
        initial.users = plan.users.count
        initial.calls = plan.calls.count
        let started = monotonicSeconds()
        let calls = plan.calls
        let total = plan.rows
        let first = initial
        var outcome = try await withFailures(address: "unix:" + path) {
            try await VarlinkClient.withConnection(path: path) { client in
                var result = first
                var lastReported = -1
                try await client.pipeline(count: calls.count, window: window) { index in
                    (calls[index].method, calls[index].parameters)
                } reply: { index, reply in
                    let call = calls[index]
                    switch reply {
                    case .success(let parameters):
                        if let moment = call.moment { score(moment, parameters, into: &result) }
                    case .failure(let error):
                        result.errors[error.name, default: 0] += 1
                        if result.firstErrors[error.name] == nil {
                            let parameters = String(decoding: JSON.serialize(.object(error.parameters)), as: UTF8.self)
                            result.firstErrors[error.name] = "\(call.method) of row \(call.row + 1): \(parameters)"
                        }
                    }
                    let done = index == calls.count - 1 ? total : call.row
                    if done != lastReported, done % 64 == 0 || done == total {
                        lastReported = done
                        progress(done, total)
                    }
                }
                return result
            }
        }
        outcome.seconds = monotonicSeconds() - started
        return outcome
    }

    /// Runs `body`, turning client errors into ``CtlFailure``s naming `address`.
    static func withFailures<Result>(address: String, _ body: () async throws -> Result) async throws -> Result {
        do { return try await body() } catch let error as VarlinkClientError {
            throw CtlFailure(error, address: address)
        }
    }

    /// Scores one home moment from the `GetStack` reply, as docs/usage-log.md does.
    static func score(_ moment: ReplayPlan.Moment, _ reply: JSONObject, into outcome: inout ReplayOutcome) {
        guard let target = moment.target else { return }
        outcome.moments += 1
        guard moment.stack.contains(target) else { return }
        outcome.counted += 1
        let order = reply.objects("order").compactMap { $0.string("instance") }.filter { moment.stack.contains($0) }
        guard let index = order.firstIndex(of: target) else { return }
        let rank = index + 1
        if rank == 1 { outcome.hits1 += 1 }
        if rank <= 3 { outcome.hits3 += 1 }
        outcome.reciprocalRanks += 1 / Double(rank)
    }

    static func monotonicSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}

/// A one-line progress bar on standard error, redrawn at most ten times a second.
public final class ProgressBar: Sendable {
    private let label: String
    private let width: Int
    private let started = ReplayRunner.monotonicSeconds()
    /// When the bar was last drawn.
    private let lastDraw = Mutex(0.0)

    public init(label: String, width: Int = 30) {
        self.label = label
        self.width = width
    }

    /// Draws `done` of `total`.
    public func update(_ done: Int, _ total: Int) {
        let now = ReplayRunner.monotonicSeconds()
        let due = lastDraw.withLock { last in
            guard done == total || now - last >= 0.1 else { return false }
            last = now
            return true
        }
        guard due else { return }
        Output.write(
            "\r\u{1B}[K" + Self.line(label: label, done: done, total: total, elapsed: now - started, width: width),
            to: 2)
    }

    /// Clears the bar's line.
    public func finish() {
        Output.write("\r\u{1B}[K", to: 2)
    }

    /// `replay [██████▌       ]  45%  9,500/21,086 rows  2.1s  ETA 2.6s`.
    public static func line(label: String, done: Int, total: Int, elapsed: Double, width: Int) -> String {
        let fraction = total > 0 ? Double(done) / Double(total) : 1
        let bar = Format.bar(fraction, width: width)
        let padding = String(repeating: " ", count: max(0, width - Style.visibleWidth(bar)))
        var text = "\(label) [\(bar)\(padding)] \(Format.number(fraction * 100, decimals: 0))%"
        text += "  \(Format.count(done))/\(Format.count(total)) rows  \(Format.duration(elapsed))"
        if done > 0, done < total { text += "  ETA " + Format.duration(elapsed / fraction - elapsed) }
        return text
    }
}
