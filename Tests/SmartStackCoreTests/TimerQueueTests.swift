@testable import SmartStackCore
import Testing

private typealias F = Fixture

/// The engine's wake-ups: an instance has one pending wake-up, however often its timeline is replaced; a stack has
/// one wake-up per moment; a restored queue is the same.
@Suite("Timer queue")
struct TimerQueueTests {
    private static let a = TimerTarget.instance(F.instance("a"))
    private static let b = TimerTarget.instance(F.instance("b"))

    private func drain(_ queue: inout TimerQueue, through seconds: Double) -> [(Double, TimerTarget)] {
        var woken: [(Double, TimerTarget)] = []
        while let (time, target) = queue.popDue(atOrBefore: F.t(seconds).microseconds) {
            woken.append((Timestamp(microseconds: time).seconds(since: F.t(0)), target))
        }
        return woken
    }

    @Test func anInstanceKeepsOnlyItsEarliestWakeUp() {
        var queue = TimerQueue()
        for second in 0..<1_000 { queue.schedule(Self.a, at: F.t(60 + Double(second))) }
        #expect(queue.count == 1)
        #expect(queue.nextTime == F.t(60).microseconds)
        // An earlier one replaces it; the replaced entry never wakes anyone.
        queue.schedule(Self.a, at: F.t(30))
        queue.schedule(Self.b, at: F.t(45))
        #expect(queue.nextTime == F.t(30).microseconds)
        let woken = drain(&queue, through: 2_000)
        #expect(woken.map(\.0) == [30, 45])
        #expect(woken.map(\.1) == [Self.a, Self.b])
        #expect(queue.count == 0 && queue.nextTime == nil)
        // Woken, the instance may schedule again, at any time.
        queue.schedule(Self.a, at: F.t(3_000))
        #expect(drain(&queue, through: 3_000).map(\.0) == [3_000])
    }

    @Test func stacksKeepEveryMomentOnce() {
        var queue = TimerQueue()
        let stack = TimerTarget.stack(F.stack())
        for second in [300.0, 100, 200, 100] { queue.schedule(stack, at: F.t(second)) }
        queue.schedule(.everyStack, at: F.t(150))
        #expect(drain(&queue, through: 1_000).map(\.0) == [100, 150, 200, 300])
        // A suggestion's end, scheduled at every publish until the candidate is used again: one entry.
        for _ in 0..<1_000 { queue.schedule(stack, at: F.t(86_400)) }
        #expect(queue.count == 1)
        #expect(drain(&queue, through: 86_400).map(\.0) == [86_400])
        // Woken, the moment may be scheduled again.
        queue.schedule(stack, at: F.t(86_400))
        #expect(queue.count == 1)
        // A restored queue knows its stacks' moments.
        var restored = TimerQueue(entries: queue.heap, sequence: queue.sequence)
        restored.schedule(stack, at: F.t(86_400))
        #expect(restored.count == 1)
    }

    @Test func supersededWakeUpsAreDroppedBeforeTheyPileUp() {
        var queue = TimerQueue()
        // Each wake-up earlier than the last: every one supersedes the one before.
        for step in 0..<10_000 { queue.schedule(Self.a, at: F.t(100_000 - Double(step))) }
        #expect(queue.count <= 2 * 1_024 + 2)
        #expect(drain(&queue, through: 200_000).map(\.0) == [90_001])
    }

    @Test func aRestoredQueueIsTheSameArrayAndWakesTheSame() {
        var queue = TimerQueue()
        queue.schedule(Self.a, at: F.t(500))
        queue.schedule(Self.b, at: F.t(400))
        queue.schedule(Self.a, at: F.t(200))  // supersedes 500, which stays in the array
        queue.schedule(.stack(F.stack()), at: F.t(300))
        var restored = TimerQueue(entries: queue.heap, sequence: queue.sequence)
        #expect(restored.heap.map(\.sequence) == queue.heap.map(\.sequence))
        #expect(restored.sequence == queue.sequence)
        let expected = drain(&queue, through: 1_000)
        #expect(drain(&restored, through: 1_000).map(\.0) == expected.map(\.0))
        #expect(expected.map(\.0) == [200, 300, 400])
        // An array from before: duplicates of one instance, in any order, wake it once.
        var old = TimerQueue(
            entries: [
                (F.t(50).microseconds, 3, Self.a), (F.t(20).microseconds, 1, Self.a),
                (F.t(20).microseconds, 2, Self.a),
            ], sequence: 3)
        #expect(old.nextTime == F.t(20).microseconds)
        #expect(drain(&old, through: 100).map(\.0) == [20])
    }
}

@Suite("Engine: wake-ups stay bounded")
struct EngineWakeUpTests {
    /// An app that replaces its timeline every second (a clock, a music widget) leaves one pending wake-up per
    /// instance, and relevance still ends when the last timeline says.
    @Test func timelinesReplacedEverySecondLeaveOneWakeUpPerInstance() throws {
        var engine = try F.engine(apps: ["a", "b", "c"])
        try engine.apply(F.donation("a", at: 1))
        for second in 10..<2_010 {
            let timeline = F.timeline([(Double(second - 1), 5, 60)])
            try engine.apply(.submitTimeline(.instance(F.instance("c")), timeline, at: F.t(Double(second))))
            if second % 50 == 0 { engine.publish(at: F.t(Double(second))) }
        }
        // c's one wake-up and the stack's own timers (time on top, suggestions), not one per timeline.
        #expect(engine.timers.count < 10)
        #expect(try engine.entry("c", at: 2_010)?.reason == .relevance)
        // The last entry (dated 2,008) lasts 60 s, and the engine wakes up for its end.
        #expect(engine.nextWakeUp.map { $0 <= F.t(2_068) } == true)
        #expect(try engine.entry("c", at: 2_067)?.reason == .relevance)
        #expect(try engine.entry("c", at: 2_068)?.reason == .expired)
        #expect(engine.timers.count < 10)
    }

    /// A stack showing a suggestion decides again at every publish after a donation (here of an app with no widget),
    /// and each decision schedules the suggestion's end, the same moment while the candidate is not used: one
    /// wake-up, not one per publish (2,000 before, measured).
    @Test func publishesOfASuggestionLeaveOneWakeUpForItsEnd() throws {
        var (engine, _) = try EngineTests.suggestionEngine()
        for step in 0..<2_000 {
            let time = 400 + Double(step) * 10
            try engine.apply(F.donation("other", at: time))
            let published = engine.publish(at: F.t(time)).decisions
            if step == 0 { #expect(published.first?.entries.first?.suggested == true) }
        }
        #expect(engine.timers.count < 10, "\(engine.timers.count) timers")
        // The suggestion still ends 24 hours after Tokyo's last donation (at 360 s).
        #expect(engine.nextWakeUp.map { $0 <= F.t(360 + 86_400) } == true)
        let later = engine.publish(at: F.t(360 + 86_400)).decisions
        #expect(later.allSatisfy { $0.entries.allSatisfy { !$0.suggested } })
    }

    /// Every Live Activity call schedules the activities' next change for every stack: one wake-up per moment, not
    /// one per call (an activity updated 1,000 times left 1,000 entries, each woken at every change and scheduled
    /// again), and the activity still leaves when its limits say.
    @Test func liveActivityUpdatesLeaveOneWakeUpPerMoment() throws {
        var engine = try F.engine(apps: ["a", "b"])
        try engine.apply(
            .startLiveActivity(app: F.app("b"), id: "game", attributes: [:], contentState: ["n": "0"], at: F.t(10)))
        for step in 1...1_000 {
            try engine.apply(
                .updateLiveActivity(app: F.app("b"), id: "game", contentState: ["n": "\(step)"], at: F.t(10)))
        }
        #expect(engine.timers.count < 10, "\(engine.timers.count) timers")
        #expect(engine.order(at: 20).first == "liveActivity:com.example.b/game")
        #expect(engine.order(at: 10 + 12 * 3_600 + 1).first != "liveActivity:com.example.b/game")
        #expect(engine.timers.count < 10, "\(engine.timers.count) timers")
        try CodecFuzzCorpusTests.expectRoundTrip(engine)
    }

    /// A removed instance's wake-up goes with it, however far ahead (a timeline's reload policy may put it years
    /// ahead): a shell placing fresh instance ids left one entry per instance, kept in every snapshot.
    @Test func aRemovedInstancesWakeUpGoesWithIt() throws {
        var engine = try F.engine(apps: ["a", "b"])
        let far = F.t(200 * 365 * 86_400)
        try engine.apply(
            .submitTimeline(
                .configuration(F.kindID("a"), [:]), F.timeline([(5, 1, 60)], policy: .after(far)), at: F.t(1)))
        for index in 0..<1_000 {
            let widgets = [
                WidgetPlacement(instance: F.instance("a\(index)"), kind: F.kindID("a")),
                WidgetPlacement(instance: F.instance("b"), kind: F.kindID("b")),
            ]
            try engine.apply(
                .configureStack(
                    StackConfiguration(id: F.stack(), family: .systemMedium, widgets: widgets, smartRotate: true),
                    at: F.t(2)))
        }
        #expect(engine.timers.count < 10, "\(engine.timers.count) timers")
        // The instance placed now still wakes up for its timeline's end.
        #expect(try engine.entry("a999", at: 30)?.reason == .relevance)
        #expect(engine.nextWakeUp.map { $0 <= F.t(65) } == true)
        try CodecFuzzCorpusTests.expectRoundTrip(engine)
    }
}
