import SmartStackCore

/// Each person's share of time on top per app, from the engine's own decisions: the log replayed through
/// ``EngineRanker`` (publishing after every row, as the daemon does), the top of each published order held until
/// the next row, from the person's first row to the last. What `smartstackctl analyze` should report for a
/// replay of the same log through the daemon (`smartstack-eval --top-shares`).
public enum TopShares {
    /// Per person, in log order: the share of the person's span each app was on top (shares sum to 1 when an app
    /// was on top throughout).
    public static func run(logs: [UsageLog], options: EvaluationOptions = EvaluationOptions())
        -> [(user: String, shares: [String: Double])]
    {
        var result: [(user: String, shares: [String: Double])] = []
        for log in logs {
            for user in log.users {
                let events = user.events
                guard let first = events.first, let last = events.last else { continue }
                var ranker = EngineRanker(stack: Evaluation.stack(of: events, size: options.stackSize))
                var seconds: [String: Double] = [:]
                var top: (app: String, since: Timestamp)?
                for event in events {
                    if let app = event.openedApp {
                        ranker.open(app: app, at: event.time)
                    } else {
                        _ = ranker.order(at: event.time)
                    }
                    let now = ranker.publishedTop
                    guard now != top?.app else { continue }
                    if let top { seconds[top.app, default: 0] += event.time.seconds(since: top.since) }
                    top = now.map { ($0, event.time) }
                }
                if let top { seconds[top.app, default: 0] += last.time.seconds(since: top.since) }
                let span = last.time.seconds(since: first.time)
                result.append((user.name, seconds.mapValues { span > 0 ? $0 / span : 0 }))
            }
        }
        return result
    }
}
