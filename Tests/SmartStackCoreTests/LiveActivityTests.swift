import SmartStackCore
import Testing

/// `hh:mm[:ss]` on 2025-03-01 UTC, or on a later day with `day`.
private func at(_ clock: String, day: Int = 1) -> Timestamp {
    let time = clock.count == 5 ? "\(clock):00" : clock
    return try! Timestamp(rfc3339: "2025-03-0\(day)T\(time)Z")
}

private let delivery = try! AppID("com.example.delivery")
private let rides = try! AppID("com.example.rides")

private func registry(starting ids: [String] = ["order-1"], at start: String = "08:00") -> LiveActivityRegistry {
    var registry = LiveActivityRegistry()
    for id in ids {
        try! registry.start(
            app: delivery, id: id, attributes: ["store": "Corner"], contentState: ["eta": "10"],
            at: at(start))
    }
    return registry
}

@Suite struct LiveActivityTests {
    @Test func activeForEightHoursThenEndedForFourThenRemoved() {
        let registry = registry()
        let activity = registry.activity(app: delivery, id: "order-1", at: at("08:00"))
        #expect(activity?.endDate == at("16:00"))
        #expect(activity?.removalDate == at("20:00"))
        let phases: [(String, LiveActivity.Phase)] = [
            ("08:00", .active), ("15:59:59", .active), ("16:00", .ended), ("19:59:59", .ended), ("20:00", .removed),
        ]
        for (clock, phase) in phases {
            #expect(activity?.phase(at: at(clock)) == phase, "at \(clock)")
        }
        #expect(registry.nextChange(after: at("08:00")) == at("16:00"))
        #expect(registry.nextChange(after: at("16:00")) == at("20:00"))
        #expect(registry.nextChange(after: at("20:00")) == nil)
        #expect(registry.activities(at: at("20:00")).isEmpty)
    }

    @Test func explicitEndShowsTheFinalStateForFourHours() throws {
        var registry = registry()
        try registry.end(app: delivery, id: "order-1", contentState: ["eta": "arrived"], at: at("09:00"))
        let activity = try #require(registry.activity(app: delivery, id: "order-1", at: at("09:00")))
        #expect(activity.endedExplicitly == at("09:00"))
        #expect(activity.contentState == ["eta": "arrived"])
        #expect(activity.phase(at: at("09:00")) == .ended)
        #expect(activity.phase(at: at("12:59:59")) == .ended)
        #expect(activity.phase(at: at("13:00")) == .removed)
    }

    @Test(arguments: [(0.0, "09:00"), (600, "09:10"), (14_400, "13:00")])
    func dismissAfterShortensVisibility(seconds: Double, removal: String) throws {
        var registry = registry()
        try registry.end(app: delivery, id: "order-1", dismissAfter: seconds, at: at("09:00"))
        let activity = try #require(registry.activities(at: at("08:59")).first)
        #expect(activity.removalDate == at(removal))
    }

    @Test(arguments: [-1, 14_401, Double.nan])
    func dismissAfterMustBeWithinFourHours(seconds: Double) {
        var registry = registry()
        let error = #expect(throws: CoreError.self) {
            try registry.end(app: delivery, id: "order-1", dismissAfter: seconds, at: at("09:00"))
        }
        #expect(error?.parameter == "dismissAfter")
    }

    @Test("a second end never keeps an activity longer; a late update or end dated back changes nothing before it")
    func endsAndUpdatesOutOfOrder() throws {
        var activities = registry()
        try activities.end(app: delivery, id: "order-1", dismissAfter: 60, at: at("09:00"))
        // A retried end without dismissAfter kept it 4 hours from the retry; it is still removed at 09:01.
        try activities.end(app: delivery, id: "order-1", at: at("09:00:30"))
        #expect(activities.activity(app: delivery, id: "order-1", at: at("09:00:30"))?.removalDate == at("09:01"))
        // A later dismissAfter only brings it sooner.
        try activities.end(app: delivery, id: "order-1", dismissAfter: 600, at: at("09:00:40"))
        #expect(activities.activity(app: delivery, id: "order-1", at: at("09:00:40"))?.removalDate == at("09:01"))
        try activities.end(app: delivery, id: "order-1", dismissAfter: 5, at: at("09:00:40"))
        #expect(activities.activity(app: delivery, id: "order-1", at: at("09:00:40"))?.removalDate == at("09:00:45"))

        var late = registry(starting: ["order-2"], at: "08:00")
        try late.update(app: delivery, id: "order-2", contentState: ["eta": "2"], at: at("08:30"))
        // Queued earlier, arriving after: not rolled back.
        try late.update(app: delivery, id: "order-2", contentState: ["eta": "8"], at: at("08:10"))
        let updated = late.activity(app: delivery, id: "order-2", at: at("08:31"))
        #expect(updated?.contentState == ["eta": "2"] && updated?.updated == at("08:30"))
        // An end dated before the last update is taken at it (not before the activity was updated, nor its start).
        try late.end(app: delivery, id: "order-2", dismissAfter: 60, at: at("07:00"))
        let ended = late.activity(app: delivery, id: "order-2", at: at("08:30"))
        #expect(ended?.endDate == at("08:30") && ended?.removalDate == at("08:31"))
        // Update and end check the id as start does (a 300-byte id was NotFound, echoing it whole).
        let long = String(repeating: "x", count: 300)
        do throws(CoreError) {
            try late.update(app: delivery, id: long, contentState: [:], at: at("08:40"))
            Issue.record("a 300-byte id was taken")
        } catch {
            #expect(error.parameter == "id", "\(error)")  // it was NotFound, which names no parameter
        }
        do throws(CoreError) {
            try late.end(app: delivery, id: long, at: at("08:40"))
            Issue.record("a 300-byte id was taken")
        } catch {
            #expect(error.parameter == "id", "\(error)")
        }
    }

    @Test func endingAnAutoEndedActivityCanDismissItSooner() throws {
        var registry = registry()
        try registry.end(app: delivery, id: "order-1", dismissAfter: 60, at: at("17:00"))
        let activity = try #require(registry.activity(app: delivery, id: "order-1", at: at("17:00")))
        #expect(activity.endDate == at("16:00"))
        #expect(activity.endedExplicitly == nil)
        #expect(activity.removalDate == at("17:01"))
    }

    @Test func startConflictsWhileActiveOrVisibleAndTheIdIsReusableAfterRemoval() throws {
        var registry = registry()
        for clock in ["09:00", "17:00"] {
            let error = #expect(throws: CoreError.self) {
                try registry.start(app: delivery, id: "order-1", attributes: [:], contentState: [:], at: at(clock))
            }
            guard case .conflict(let kind, let id, _) = error else {
                Issue.record("expected a conflict at \(clock), got \(String(describing: error))")
                continue
            }
            #expect(kind == "liveActivity" && id == "order-1")
        }
        // Another app may use the same id.
        try registry.start(app: rides, id: "order-1", attributes: [:], contentState: [:], at: at("09:00"))
        try registry.start(app: delivery, id: "order-1", attributes: [:], contentState: ["eta": "5"], at: at("20:00"))
        #expect(registry.activity(app: delivery, id: "order-1", at: at("20:00"))?.started == at("20:00"))
    }

    @Test func updateReplacesContentWhileActive() throws {
        var registry = registry()
        try registry.update(app: delivery, id: "order-1", contentState: ["eta": "3"], at: at("09:00"))
        let activity = try #require(registry.activity(app: delivery, id: "order-1", at: at("09:00")))
        #expect(activity.contentState == ["eta": "3"])
        #expect(activity.attributes == ["store": "Corner"])
        #expect(activity.updated == at("09:00"))
        // Updating does not extend the 8 hours.
        #expect(activity.endDate == at("16:00"))
    }

    @Test func updateOfUnknownOrRemovedIsNotFoundAndOfEndedIsAConflict() throws {
        var registry = registry()
        let unknown = #expect(throws: CoreError.self) {
            try registry.update(app: delivery, id: "order-2", contentState: [:], at: at("09:00"))
        }
        #expect(unknown == .notFound(kind: "liveActivity", id: "order-2"))
        let ended = #expect(throws: CoreError.self) {
            try registry.update(app: delivery, id: "order-1", contentState: [:], at: at("16:00"))
        }
        if case .conflict = ended {} else { Issue.record("expected a conflict, got \(String(describing: ended))") }
        let removed = #expect(throws: CoreError.self) {
            try registry.end(app: delivery, id: "order-1", at: at("20:00"))
        }
        #expect(removed == .notFound(kind: "liveActivity", id: "order-1"))
    }

    @Test func validatesIdsKeysAndValues() {
        var registry = LiveActivityRegistry()
        let tooManyKeys = Dictionary(uniqueKeysWithValues: (0..<65).map { ("k\($0)", "v") })
        let cases: [(String, [String: String], [String: String], String)] = [
            ("", [:], [:], "id"),
            (String(repeating: "a", count: 256), [:], [:], "id"),
            ("a", tooManyKeys, [:], "attributes"),
            ("a", [:], ["eta": String(repeating: "x", count: 4_097)], "contentState.eta"),
            ("a", ["": "x"], [:], "attributes"),
        ]
        for (id, attributes, content, parameter) in cases {
            let error = #expect(throws: CoreError.self) {
                try registry.start(
                    app: delivery, id: id, attributes: attributes, contentState: content, at: at("08:00"))
            }
            #expect(error?.parameter == parameter)
        }
        let longValue = String(repeating: "v", count: 4_096)
        let maximal = Dictionary(uniqueKeysWithValues: (0..<64).map { ("k\($0)", longValue) })
        #expect(throws: Never.self) {
            try registry.start(
                app: delivery, id: String(repeating: "a", count: 255), attributes: maximal, contentState: maximal,
                at: at("08:00"))
        }
    }

    @Test func limitsActivitiesPerApp() throws {
        var registry = registry(starting: (0..<16).map { "order-\($0)" })
        let error = #expect(throws: CoreError.self) {
            try registry.start(app: delivery, id: "order-16", attributes: [:], contentState: [:], at: at("09:00"))
        }
        #expect(error == .limitExceeded(limit: "maxLiveActivitiesPerApp", maximum: 16))
        try registry.start(app: rides, id: "ride", attributes: [:], contentState: [:], at: at("09:00"))
        // Ended but visible ones still count; removed ones do not.
        try registry.end(app: delivery, id: "order-0", dismissAfter: 0, at: at("09:00"))
        try registry.start(app: delivery, id: "order-16", attributes: [:], contentState: [:], at: at("09:00"))
    }

    @Test func listsActiveByStartThenEnded() throws {
        var registry = registry(starting: ["a"], at: "08:00")
        try registry.start(app: rides, id: "b", attributes: [:], contentState: [:], at: at("08:30"))
        try registry.start(app: delivery, id: "c", attributes: [:], contentState: [:], at: at("08:10"))
        try registry.end(app: delivery, id: "a", at: at("09:00"))
        #expect(registry.activities(at: at("09:00")).map(\.id) == ["c", "b", "a"])
        #expect(registry.active(app: delivery, at: at("09:00")).map(\.id) == ["c"])
        #expect(registry.active(app: rides, at: at("16:30")).isEmpty)
        #expect(registry.nextChange(after: at("09:00")) == at("13:00"))
    }

    @Test func pruneDropsRemovedActivities() throws {
        var registry = registry(starting: ["a", "b"])
        try registry.end(app: delivery, id: "a", dismissAfter: 0, at: at("09:00"))
        var pruned = registry
        pruned.prune(at: at("09:00"))
        #expect(pruned != registry)
        #expect(pruned.activities(at: at("09:00")).map(\.id) == ["b"])
        pruned.prune(at: at("20:00"))
        #expect(pruned == LiveActivityRegistry())
    }
}
