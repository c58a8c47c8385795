import Dispatch
import Logging
import SmartStackCore
import SmartStackServer
import SmartStackStore
import SmartStackSystemd
import Synchronization
import Testing

/// Collects what a journal queue writes.
final class JournalRecorder: Sendable {
    private let items = Mutex<[JournalQueue.Item]>([])

    var entries: [JournalEntry] { items.withLock { $0.map(\.entry) } }
    var all: [JournalQueue.Item] { items.withLock { $0 } }

    func queue(capacity: Int = 4_096) -> JournalQueue {
        JournalQueue(capacity: capacity) { item in self.items.withLock { $0.append(item) } }
    }

    func entries(_ event: SmartStackEvent) -> [JournalEntry] {
        entries.filter { $0.messageID == event.messageID }
    }
}

/// A monotonic clock the test moves by hand.
final class ManualInstant: Sendable {
    private let instant = Mutex(ContinuousClock.now)
    var now: ContinuousClock.Instant { instant.withLock { $0 } }
    func advance(_ duration: Duration) { instant.withLock { $0 += duration } }
}

@Suite("Order-change coalescing")
struct OrderChangeCoalescerTests {
    static func decisions() async throws -> (Decision, Decision) {
        let host = try await ServerFixture.host(apps: ["mail", "news", "maps"])
        var first = try await host.stack(ServerFixture.stack())
        first.revision = 1
        var second = first
        second.entries.reverse()
        second.revision = 2
        return (first, second)
    }

    @Test("the first change is written at once; a burst inside the window becomes one entry with its count")
    func burst() async throws {
        let (first, second) = try await Self.decisions()
        var coalescer = OrderChangeCoalescer(window: .seconds(1))
        let start = ContinuousClock.now
        let recorded = coalescer.record(first, previousOrder: nil, at: start)
        let written = try #require(recorded)
        #expect(written.count == 1 && written.previousOrder == nil)
        for index in 1...9 {
            let decision = index.isMultiple(of: 2) ? first : second
            #expect(coalescer.record(decision, previousOrder: nil, at: start + .milliseconds(index * 100)) == nil)
        }
        #expect(coalescer.heldCount == 9)
        #expect(coalescer.nextDue == start + .seconds(1))
        #expect(coalescer.due(at: start + .milliseconds(999)).isEmpty)
        let burst = coalescer.due(at: start + .seconds(1))
        #expect(burst.count == 1)
        #expect(burst.first?.count == 9)
        #expect(burst.first?.decision == second)
        // Nothing more: the next window closes empty and the stack is quiet again.
        #expect(coalescer.due(at: start + .seconds(2)).isEmpty)
        #expect(coalescer.nextDue == nil)
        #expect(coalescer.record(first, previousOrder: second.order, at: start + .seconds(3))?.count == 1)
    }

    @Test("at a graceful stop every held change is taken, its window ended or not")
    func allAtStop() async throws {
        let (first, second) = try await Self.decisions()
        var coalescer = OrderChangeCoalescer(window: .seconds(1))
        let start = ContinuousClock.now
        _ = coalescer.record(first, previousOrder: nil, at: start)
        _ = coalescer.record(second, previousOrder: first.order, at: start + .milliseconds(10))
        #expect(coalescer.due(at: start + .milliseconds(20)).isEmpty)
        let held = coalescer.all()
        #expect(held.count == 1 && held.first?.decision == second && held.first?.count == 1)
        #expect(coalescer.heldCount == 0 && coalescer.nextDue == nil)
        #expect(coalescer.all().isEmpty)
    }

    @Test("held changes keep the order before the burst; a late change joins an undelivered burst")
    func previousOrderAndLateChange() async throws {
        let (first, second) = try await Self.decisions()
        var coalescer = OrderChangeCoalescer(window: .seconds(1))
        let start = ContinuousClock.now
        _ = coalescer.record(first, previousOrder: nil, at: start)
        _ = coalescer.record(second, previousOrder: first.order, at: start + .milliseconds(10))
        _ = coalescer.record(first, previousOrder: second.order, at: start + .milliseconds(20))
        // Nobody flushed; the next change after the window carries the held ones with it.
        let recordedLate = coalescer.record(second, previousOrder: first.order, at: start + .seconds(2))
        let late = try #require(recordedLate)
        #expect(late.count == 3)
        #expect(late.previousOrder == first.order)
        #expect(late.decision == second)
    }

    @Test("over random bursts: at most one entry per stack per window, and every change counted once")
    func invariants() async throws {
        let (first, second) = try await Self.decisions()
        var generator = SeededGenerator(seed: 42)
        var coalescer = OrderChangeCoalescer(window: .seconds(1))
        let start = ContinuousClock.now
        var now = start
        var written: [(stack: String, at: ContinuousClock.Instant, count: Int)] = []
        var published = 0
        for _ in 0..<3_000 {
            now += .milliseconds(Int.random(in: 0...120, using: &generator))
            for change in coalescer.due(at: now) { written.append((change.decision.stack.rawValue, now, change.count)) }
            var decision = Bool.random(using: &generator) ? first : second
            decision.stack = try StackID("s\(Int.random(in: 0..<4, using: &generator))")
            published += 1
            if let change = coalescer.record(decision, previousOrder: nil, at: now) {
                written.append((decision.stack.rawValue, now, change.count))
            }
        }
        for change in coalescer.due(at: now + .seconds(2)) {
            written.append((change.decision.stack.rawValue, now + .seconds(2), change.count))
        }
        #expect(written.reduce(0) { $0 + $1.count } == published)
        for stack in Set(written.map(\.stack)) {
            let times = written.filter { $0.stack == stack }.map(\.at)
            for (earlier, later) in zip(times, times.dropFirst()) { #expect(later - earlier >= .seconds(1)) }
        }
    }
}

@Suite("Service journal")
struct ServiceJournalTests {
    /// A host whose published decisions go to a journal with a manual clock and a timer the test fires.
    static func setUp() async throws -> (EngineHost, ServiceJournal, JournalRecorder, ManualInstant, ManualClock) {
        let recorder = JournalRecorder()
        let instant = ManualInstant()
        let journal = ServiceJournal(queue: recorder.queue(), now: { instant.now }, schedule: { _, _ in })
        let clock = ManualClock()
        let host = EngineHost(
            settings: EngineSettings(), clock: clock, log: InMemoryEventLog(), logger: ServerFixture.logger,
            reporter: journal)
        for app in ["mail", "news", "maps"] {
            try await host.record(.registerKind(ServerFixture.kind(app), at: clock.now()))
        }
        return (host, journal, recorder, instant, clock)
    }

    /// Submits a timeline that makes maps relevant from `start` for an hour.
    static func mapsRelevant(_ host: EngineHost, from start: Timestamp, at time: Timestamp) async throws {
        _ = try await host.record(
            .submitTimeline(
                .instance(ServerFixture.instance("maps")),
                try Timeline.validated(
                    entries: [TimelineEntry(date: start, relevance: Relevance(score: 1, duration: 3_600))],
                    policy: .never
                ).timeline, at: time))
    }

    static func configure(_ host: EngineHost, _ order: [String], clock: ManualClock, smartRotate: Bool = false)
        async throws
    {
        let widgets = try order.map {
            WidgetPlacement(
                instance: ServerFixture.instance($0), kind: try WidgetKindID(app: ServerFixture.app($0), kind: "main"))
        }
        try await host.record(
            .configureStack(
                StackConfiguration(
                    id: ServerFixture.stack(), family: .systemMedium, widgets: widgets, smartRotate: smartRotate),
                at: clock.now()))
    }

    @Test("a donation a few seconds late is journaled at its time; a later change of the stack is journaled too")
    func lateDonationDoesNotSilenceTheStack() async throws {
        let (host, journal, recorder, instant, clock) = try await Self.setUp()
        try await Self.configure(host, ["mail", "news", "maps"], clock: clock, smartRotate: true)
        clock.advance(seconds: 10)
        // Backfilled: dated 5 s before the service's time (a queued donation, a unit's start).
        _ = try await host.donate(
            ServerFixture.donation("news", id: "late", at: clock.now().adding(seconds: -5)), idGiven: true)
        // Another app's timeline makes maps relevant ten minutes later; nothing else happens to the stack.
        try await Self.mapsRelevant(host, from: clock.now().adding(seconds: 600), at: clock.now())
        clock.advance(seconds: 601)
        instant.advance(.seconds(601))
        let decision = try await host.stack(ServerFixture.stack())
        #expect(decision.top == "maps")
        await journal.queue.flush()
        let entries = recorder.entries(.orderChanged)
        #expect(entries.last?.value(of: .order)?.hasPrefix("maps,") == true, "\(entries.map { $0.value(of: .order) })")
    }

    @Test("a provider's donation dated hours back neither places an entry back then nor silences the stack")
    func oldDonationDoesNotSilenceTheStack() async throws {
        let (host, journal, recorder, instant, clock) = try await Self.setUp()
        try await Self.configure(host, ["mail", "news", "maps"], clock: clock, smartRotate: true)
        clock.advance(seconds: 10)
        let old = clock.now().adding(seconds: -7_200)
        _ = try await host.donate(ServerFixture.donation("news", id: "old", at: old), idGiven: true)
        // Another app's timeline makes maps relevant ten minutes later; nothing else happens to the stack.
        try await Self.mapsRelevant(host, from: clock.now().adding(seconds: 600), at: clock.now())
        clock.advance(seconds: 601)
        instant.advance(.seconds(601))
        #expect(try await host.stack(ServerFixture.stack()).top == "maps")
        await journal.queue.flush()
        let entries = recorder.entries(.orderChanged)
        #expect(entries.last?.value(of: .order)?.hasPrefix("maps,") == true, "\(entries.map { $0.value(of: .order) })")
        #expect(!entries.contains { $0.value(of: .engineTime) == old.rfc3339 })
    }

    @Test("a late swipe dated before the stack's last entry is journaled at the service's time, not before that entry")
    func lateEventBeforeTheLastEntry() async throws {
        let (host, journal, recorder, instant, clock) = try await Self.setUp()
        try await Self.configure(host, ["mail", "news", "maps"], clock: clock, smartRotate: true)
        let swipeTime = clock.now().adding(seconds: 10)
        // maps becomes relevant at 40 s: an entry then.
        clock.advance(seconds: 40)
        instant.advance(.seconds(40))
        try await Self.mapsRelevant(host, from: clock.now(), at: clock.now())
        #expect(try await host.stack(ServerFixture.stack()).top == "maps")
        // At 100 s a swipe to news arrives, dated 10 s: before that entry.
        clock.advance(seconds: 60)
        instant.advance(.seconds(60))
        _ = try await host.record(
            .engage(
                stack: ServerFixture.stack(), instance: ServerFixture.instance("news"), kind: .swipeTo, duration: nil,
                at: swipeTime))
        #expect(try await host.stack(ServerFixture.stack()).top == "news")
        instant.advance(.seconds(2))
        journal.flushDue()
        await journal.queue.flush()
        let entries = recorder.entries(.orderChanged)
        let latest = try #require(entries.max { ($0.value(of: .engineTime) ?? "") < ($1.value(of: .engineTime) ?? "") })
        #expect(latest.value(of: .top) == "news", "\(entries.map { ($0.value(of: .engineTime), $0.value(of: .top)) })")
        #expect(!entries.contains { $0.value(of: .engineTime) == swipeTime.rfc3339 })
    }

    @Test(
        "a stack removed and made again within the window: the old one's held change is written, the new one starts quiet"
    )
    func removedStackWithinTheWindow() async throws {
        let (host, journal, recorder, _, clock) = try await Self.setUp()
        try await Self.configure(host, ["mail", "news", "maps"], clock: clock)
        // Held by the one-second window.
        try await Self.configure(host, ["news", "mail", "maps"], clock: clock)
        try await host.record(.removeStack(ServerFixture.stack(), at: clock.now()))
        try await Self.configure(host, ["maps", "mail"], clock: clock)
        await journal.queue.flush()
        let entries = recorder.entries(.orderChanged)
        // The removal is an entry of its own (no order, reason removed), written at once.
        #expect(entries.map { $0.value(of: .order) } == ["mail,news,maps", "news,mail,maps", "", "maps,mail"])
        #expect(entries.map { $0.value(of: .previousOrder) } == ["", "mail,news,maps", "news,mail,maps", ""])
        #expect(entries.map { $0.value(of: .reason) }[2] == "removed")
        #expect(entries.map { $0.value(of: .count) } == ["1", "1", "1", "1"])
    }

    @Test("a removed stack is forgotten: a stack made again under its id has no previous order, nothing is kept")
    func removedStack() async throws {
        let (host, journal, recorder, instant, clock) = try await Self.setUp()
        try await Self.configure(host, ["mail", "news", "maps"], clock: clock)
        #expect(journal.stacksFollowed == 1)
        try await host.record(.removeStack(ServerFixture.stack(), at: clock.now()))
        #expect(journal.stacksFollowed == 0)
        instant.advance(.seconds(2))
        clock.advance(seconds: 2)
        try await Self.configure(host, ["news", "mail"], clock: clock)
        await journal.queue.flush()
        let entries = recorder.entries(.orderChanged)
        #expect(entries.map { $0.value(of: .order) } == ["mail,news,maps", "", "news,mail"])
        #expect(entries[1].value(of: .reason) == "removed")
        #expect(entries.last?.value(of: .previousOrder) == "")
    }

    @Test("an order change is an entry with every SMARTSTACK_ field; a burst is one more entry with its count")
    func orderChanged() async throws {
        let (host, journal, recorder, instant, clock) = try await Self.setUp()
        try await Self.configure(host, ["mail", "news", "maps"], clock: clock)
        await journal.queue.flush()
        let first = try #require(recorder.entries(.orderChanged).first)
        #expect(first.value(of: .stack) == "home")
        #expect(first.value(of: .order) == "mail,news,maps")
        #expect(first.value(of: .previousOrder) == "")
        #expect(first.value(of: .top) == "mail")
        #expect(first.value(of: .reason) == "userOrder")
        #expect(first.value(of: .count) == "1")
        #expect(first.value(of: .scores)?.hasPrefix("mail=") == true)
        #expect(first.priority == .info)

        // Twenty changes in the same instant: held, then one entry when the window ends.
        for index in 0..<20 {
            try await Self.configure(
                host, index.isMultiple(of: 2) ? ["news", "mail", "maps"] : ["mail", "news", "maps"], clock: clock)
        }
        await journal.queue.flush()
        #expect(recorder.entries(.orderChanged).count == 1)
        instant.advance(.seconds(1))
        journal.flushDue()
        await journal.queue.flush()
        let entries = recorder.entries(.orderChanged)
        #expect(entries.count == 2)
        let burst = try #require(entries.last)
        #expect(burst.value(of: .count) == "20")
        #expect(burst.value(of: .previousOrder) == "mail,news,maps")
        #expect(burst.value(of: .order) == "mail,news,maps")
        #expect(burst.message.contains("20 changes"))
        #expect(journal.counters.decisionsPublished == 21)
        #expect(journal.counters.orderChanges == 21)
        #expect(journal.counters.orderEntries == 2)
        // A decision that changes scores only is a decision, not an order change (the summary's COUNT counted it).
        var scoresOnly = try await host.stack(ServerFixture.stack())
        scoresOnly.entries[0].score += 0.5
        journal.published(decisions: [scoresOnly], effects: [])
        #expect(journal.counters.decisionsPublished == 22)
        #expect(journal.counters.orderChanges == 21)
        // The code location is where the entry was made.
        #expect(
            recorder.all.first { $0.entry.messageID == SmartStackEvent.orderChanged.messageID }?.file.hasSuffix(
                ".swift") == true)
    }

    @Test("refused clients: one entry per uid per interval, the next one counting the refusals in between")
    func rejections() async throws {
        let recorder = JournalRecorder()
        let instant = ManualInstant()
        let journal = ServiceJournal(queue: recorder.queue(), now: { instant.now }, schedule: { _, _ in })
        let peer = PeerCredentials(pid: 9, uid: 1234, gid: 1234)
        for _ in 0..<5 {
            journal.clientRejected(peer, .permissionDenied(method: "io.smartstack.Shell.GetStack", reason: "policy"))
        }
        journal.clientRejected(PeerCredentials(pid: 10, uid: 99, gid: 99), .connectionLimit(8))
        instant.advance(.seconds(2))
        journal.clientRejected(peer, .permissionDenied(method: "io.smartstack.Shell.GetStack", reason: "policy"))
        await journal.queue.flush()
        let entries = recorder.entries(.clientRejected)
        #expect(entries.count == 3)
        #expect(entries.map { $0.value(of: .clientUID) } == ["1234", "99", "1234"])
        #expect(entries.map { $0.value(of: .count) } == ["1", "1", "5"])
        #expect(entries[0].value(of: .error) == "org.varlink.service.PermissionDenied")
        #expect(entries[0].value(of: .method) == "io.smartstack.Shell.GetStack")
        #expect(entries[1].value(of: .reason) == "connection limit (8) reached")
        #expect(entries.allSatisfy { $0.priority == .warning })
        #expect(journal.counters.clientsRejected == 7)
    }

    @Test("refusals held back are written when their window ends, when no later refusal comes")
    func heldRejectionsAreFlushed() async throws {
        let recorder = JournalRecorder()
        let instant = ManualInstant()
        let timers = Mutex<[(Duration, @Sendable () -> Void)]>([])
        let journal = ServiceJournal(
            queue: recorder.queue(), now: { instant.now },
            schedule: { delay, body in timers.withLock { $0.append((delay, body)) } })
        let peer = PeerCredentials(pid: 9, uid: 1234, gid: 1234)
        journal.clientRejected(peer, .permissionDenied(method: "io.smartstack.Admin.GetStatistics", reason: "policy"))
        journal.clientRejected(peer, .connectionLimit(8))
        journal.clientRejected(peer, .connectionLimit(8))
        // One timer for the window, however many were held.
        #expect(timers.withLock { $0.count } == 1)
        instant.advance(.seconds(1))
        for (_, body) in timers.withLock({ $0 }) { body() }
        await journal.queue.flush()
        let entries = recorder.entries(.clientRejected)
        // Before, the connection-limit refusals appeared nowhere but the summary's count.
        #expect(entries.map { $0.value(of: .count) } == ["1", "2"])
        #expect(entries.last?.value(of: .reason) == "connection limit (8) reached")
        #expect(journal.counters.clientsRejected == 3)
    }
}

@Suite("Journal queue and log handler")
struct JournalQueueTests {
    @Test("a full queue drops and counts instead of blocking the caller", .timeLimit(.minutes(1)))
    func boundedAndCounted() async throws {
        let gate = DispatchSemaphore(value: 0)
        let started = Atomic<Int>(0)
        let written = Mutex<[String]>([])
        let queue = JournalQueue(capacity: 4) { item in
            started.add(1, ordering: .relaxed)
            gate.wait()
            written.withLock { $0.append(item.entry.message) }
        }
        queue.enqueue(JournalQueue.Item(JournalEntry("blocked")))
        while started.load(ordering: .relaxed) == 0 { try await Task.sleep(for: .milliseconds(5)) }
        // The writer is stuck in journald; callers are not.
        let accepted = (0..<10).map { queue.enqueue(JournalQueue.Item(JournalEntry("e\($0)"))) }
        #expect(accepted == [true, true, true, true, false, false, false, false, false, false])
        #expect(queue.dropped == 6)
        for _ in 0..<5 { gate.signal() }
        await queue.flush()
        #expect(written.withLock { $0 } == ["blocked", "e0", "e1", "e2", "e3"])
        #expect(queue.counts.written == 5)
        await queue.close()
        #expect(!queue.enqueue(JournalQueue.Item(JournalEntry("after close"))))
    }

    @Test("an entry that reached no one (journald and stderr both gone) is dropped, not written")
    func lostEntriesAreCounted() async throws {
        struct Gone: Error {}
        let queue = JournalQueue(capacity: 8) { item in
            if item.entry.message.hasPrefix("lost") { throw Gone() }
        }
        for message in ["kept", "lost 1", "lost 2", "kept"] { queue.enqueue(JournalQueue.Item(JournalEntry(message))) }
        await queue.flush()
        #expect(queue.counts.written == 2)
        #expect(queue.dropped == 2)
    }

    @Test("a close with a limit returns when journald is stalled, and takes no more entries", .timeLimit(.minutes(1)))
    func closeWithinALimit() async throws {
        let gate = DispatchSemaphore(value: 0)
        let started = Atomic<Int>(0)
        let stalled = JournalQueue(capacity: 16) { _ in
            started.add(1, ordering: .relaxed)
            gate.wait()
        }
        stalled.enqueue(JournalQueue.Item(JournalEntry("stuck in journald")))
        while started.load(ordering: .relaxed) == 0 { try await Task.sleep(for: .milliseconds(5)) }
        stalled.enqueue(JournalQueue.Item(JournalEntry("waiting")))
        let began = ContinuousClock.now
        #expect(await stalled.close(within: .milliseconds(200)) == false)
        #expect(ContinuousClock.now - began < .seconds(30))
        #expect(!stalled.enqueue(JournalQueue.Item(JournalEntry("after close"))))
        gate.signal()
        gate.signal()

        let written = Mutex<[String]>([])
        let healthy = JournalQueue(capacity: 16) { item in written.withLock { $0.append(item.entry.message) } }
        for i in 0..<3 { healthy.enqueue(JournalQueue.Item(JournalEntry("e\(i)"))) }
        #expect(await healthy.close(within: .seconds(30)))
        #expect(written.withLock { $0 } == ["e0", "e1", "e2"])
        #expect(!healthy.enqueue(JournalQueue.Item(JournalEntry("after close"))))
    }

    @Test("the capacity set after start (the journalQueue key) bounds what waits from then on", .timeLimit(.minutes(1)))
    func capacityChanged() async throws {
        let gate = DispatchSemaphore(value: 0)
        let started = Atomic<Int>(0)
        let queue = JournalQueue(capacity: 4_096) { _ in
            started.add(1, ordering: .relaxed)
            gate.wait()
        }
        queue.capacity = 2
        #expect(queue.capacity == 2)
        queue.enqueue(JournalQueue.Item(JournalEntry("blocked")))
        while started.load(ordering: .relaxed) == 0 { try await Task.sleep(for: .milliseconds(5)) }
        let accepted = (0..<4).map { queue.enqueue(JournalQueue.Item(JournalEntry("e\($0)"))) }
        #expect(accepted == [true, true, false, false])
        queue.capacity = 0
        #expect(queue.capacity == 1)
        for _ in 0..<3 { gate.signal() }
        await queue.flush()
        #expect(queue.counts.written == 3)
        #expect(queue.counts.dropped == 2)
        await queue.close()
    }

    @Test("log messages become entries: priority, SMARTSTACK_ fields from metadata, the call's location, the level")
    func logHandler() async throws {
        let recorder = JournalRecorder()
        let queue = recorder.queue()
        let levels = LogLevelControl(.info)
        let logger = Logger(label: "test") { JournalLogHandler(label: $0, control: levels, queue: queue) }
        logger.warning("slow subscriber", metadata: ["peer": "pid 1", "client.uid": "1000"])
        logger.debug("hidden at info")
        levels.level = .debug
        logger.debug("shown at debug", metadata: ["donation-id": "x"])
        await queue.flush()
        let items = recorder.all
        #expect(items.map(\.entry.message) == ["slow subscriber", "shown at debug"])
        #expect(items[0].entry.priority == .warning)
        #expect(items[0].entry.value(of: .clientUID) == "1000")
        let peer = try #require(JournalFieldName.smartstack("PEER"))
        let donation = try #require(JournalFieldName.smartstack("DONATION_ID"))
        #expect(items[0].entry.value(of: peer) == "pid 1")
        #expect(items[0].file.hasSuffix("JournalTests.swift"))
        #expect(items[0].function.hasPrefix("logHandler"))
        #expect(items[1].entry.priority == .debug)
        #expect(items[1].entry.value(of: donation) == "x")
    }
}

@Suite("Service status")
struct ServiceStatusTests {
    @Test("STATUS= text")
    func text() {
        #expect(
            ServiceStatus(stacks: 1, widgets: 3, subscribers: 0, donationsPerMinute: 12).text
                == "serving 1 stack, 3 widgets, 0 subscribers, 12 donations/min")
        #expect(
            ServiceStatus(stacks: 2, widgets: 1, subscribers: 1, donationsPerMinute: 0).text
                == "serving 2 stacks, 1 widget, 1 subscriber, 0 donations/min")
    }

    @Test("donations per minute from a running total")
    func donationRate() {
        var rate = DonationRate()
        let start = ContinuousClock.now
        #expect(rate.add(total: 0, at: start) == 0)
        #expect(rate.add(total: 30, at: start + .seconds(20)) == 30)
        #expect(rate.add(total: 50, at: start + .seconds(50)) == 50)
        // A minute on: the reading from 20 s is the baseline.
        #expect(rate.add(total: 55, at: start + .seconds(80)) == 25)
        #expect(rate.add(total: 55, at: start + .seconds(200)) == 0)
    }
}
