@testable import SmartStackCore
import SmartStackProtocol
import SmartStackStore
import Synchronization
import Testing

@testable import SmartStackServer

@Suite("Engine host")
struct EngineHostTests {
    @Test("a donation without an id gets a unique one; a retried id is idempotent; a reused id conflicts")
    func donationIDs() async throws {
        let clock = ManualClock()
        let host = try await ServerFixture.host(apps: ["mail", "news"], clock: clock)
        let first = try await host.donate(ServerFixture.donation("mail", at: clock.now()), idGiven: false)
        let second = try await host.donate(ServerFixture.donation("mail", at: clock.now()), idGiven: false)
        #expect(first != second)
        let given = ServerFixture.donation("mail", id: "abc", at: clock.now())
        #expect(try await host.donate(given, idGiven: true) == "abc")
        #expect(try await host.donate(given, idGiven: true) == "abc")
        #expect(await host.snapshotStatistics().donations == 3)
        var other = given
        other.intent = "compose"
        await #expect(throws: HostError.self) { try await host.donate(other, idGiven: true) }
        // Ids are per app: another app may use the same id.
        #expect(
            try await host.donate(ServerFixture.donation("news", id: "abc", at: clock.now()), idGiven: true) == "abc")
    }

    @Test("a retry sent without a date is the donation stored under its id whatever times the calls were stamped with")
    func undatedRetry() async throws {
        let clock = ManualClock()
        let host = try await ServerFixture.host(apps: ["mail"], clock: clock)
        let first = ServerFixture.donation("mail", id: "u", at: clock.now())
        #expect(try await host.donate(first, idGiven: true, dated: false) == "u")
        // The retry is stamped with the service's time then, later than the first call's.
        clock.advance(seconds: 30)
        #expect(try await host.donate(first.withDate(clock.now()), idGiven: true, dated: false) == "u")
        let stored = try await host.listDonations(app: ServerFixture.app("mail"), from: .beginning, limit: 10).donations
        #expect(stored == [first])
        // Another donation under the id, sent without a date too, is a Conflict.
        var other = first.withDate(clock.now())
        other.parameters = ["folder": "inbox"]
        await #expect(
            throws: HostError.core(
                .conflict(kind: "donation", id: "u", reason: "the app already used this id for another donation"))
        ) { try await host.donate(other, idGiven: true, dated: false) }
        // A retry with a date still compares it: dated 30 s after the stored one, it is another donation.
        await #expect(throws: HostError.self) {
            try await host.donate(first.withDate(clock.now()), idGiven: true)
        }
        #expect(try await host.donate(first, idGiven: true) == "u")
        #expect(await host.snapshotStatistics().donations == 1)
    }

    @Test("deleting many donations of an app at once keeps the others, their order and their ids usable")
    func deleteMany() async throws {
        let clock = ManualClock()
        let host = try await ServerFixture.host(apps: ["mail", "news"], clock: clock)
        for index in 0..<300 {
            clock.advance(seconds: 1)
            let app = index.isMultiple(of: 3) ? "news" : "mail"
            _ = try await host.donate(
                ServerFixture.donation(
                    app, id: "d\(index)", at: clock.now(), group: index.isMultiple(of: 2) ? "even" : nil),
                idGiven: true)
        }
        let mail = ServerFixture.app("mail")
        let kept = (0..<300).filter { !$0.isMultiple(of: 3) && !$0.isMultiple(of: 2) }.map { "d\($0)" }
        #expect(try await host.deleteDonations(app: mail, filter: .group("even")) == 100)
        #expect(try await host.listDonations(app: mail, from: .beginning, limit: 1_000).donations.map(\.id) == kept)
        #expect(
            try await host.listDonations(app: mail, from: .after(id: kept[10]), limit: 3).donations.map(\.id)
                == Array(kept[11..<14]))
        #expect(
            try await host.listDonations(app: ServerFixture.app("news"), from: .beginning, limit: 1_000).donations.count
                == 100)
        #expect(await host.snapshotStatistics().donations == 200)
        // A deleted id may be used again; a kept one is still a retry.
        clock.advance(seconds: 1)
        #expect(try await host.donate(ServerFixture.donation("mail", id: "d2", at: clock.now()), idGiven: true) == "d2")
        #expect(try await host.listDonations(app: mail, from: .beginning, limit: 1_000).donations.last?.id == "d2")
        #expect(await host.snapshotStatistics().donations == 201)
    }

    @Test("one app's donations are limited on their own: others go on, a retry is still one, a deletion frees room")
    func donationsPerApp() async throws {
        let clock = ManualClock()
        var limits = HostLimits()
        limits.maxDonationsPerApp = 2
        let host = try await ServerFixture.host(apps: ["mail", "news"], limits: limits, clock: clock)
        func donate(_ app: String, _ id: String) async throws -> String {
            try await host.donate(ServerFixture.donation(app, id: id, at: clock.now()), idGiven: true)
        }
        #expect(try await donate("mail", "d0") == "d0")
        #expect(try await donate("mail", "d1") == "d1")
        await #expect(throws: HostError.core(.limitExceeded(limit: "maxDonationsPerApp", maximum: 2))) {
            _ = try await donate("mail", "d2")
        }
        #expect(try await donate("mail", "d1") == "d1")  // a retry, not a new donation
        #expect(try await donate("news", "n0") == "n0")
        #expect(try await donate("news", "n1") == "n1")
        #expect(await host.snapshotStatistics().donations == 4)
        #expect(
            await host.snapshotStatistics().topApps == [
                AppDonationCount(app: ServerFixture.app("mail"), donations: 2),
                AppDonationCount(app: ServerFixture.app("news"), donations: 2),
            ])
        let mail = ServerFixture.app("mail")
        #expect(try await host.deleteDonations(app: mail, filter: .ids(["d0"])) == 1)
        #expect(try await donate("mail", "d2") == "d2")
        await #expect(throws: HostError.self) { _ = try await donate("mail", "d3") }
        #expect(
            try await host.listDonations(app: mail, from: .beginning, limit: 10).donations.map(\.id) == ["d1", "d2"])
        _ = try await host.deleteDonations(app: ServerFixture.app("news"), filter: .ids(["n0"]))
        #expect(await host.snapshotStatistics().topApps.map(\.donations) == [2, 1])
        #expect(
            EngineHost.topApps([mail: 1, ServerFixture.app("a"): 1, ServerFixture.app("b"): 3], count: 2).map(
                \.app.rawValue) == ["com.example.b", "com.example.a"])
    }

    @Test("the hourly retention sweep drops donations past the retention period (listed and counted donations)")
    func retentionSweep() async throws {
        let clock = ManualClock()
        var settings = EngineSettings()
        settings.retention = 2 * 86_400
        let host = EngineHost(settings: settings, clock: clock, log: InMemoryEventLog(), logger: ServerFixture.logger)
        for index in 0..<10 {
            if index > 0 { clock.advance(seconds: 3_600) }
            _ = try await host.donate(ServerFixture.donation("mail", id: "d\(index)", at: clock.now()), idGiven: true)
        }
        // Retention counts back from the service's clock: 2 days and 5.5 hours after the first donation.
        clock.advance(seconds: 2 * 86_400 + 5.5 * 3_600 - 9 * 3_600)
        _ = try await host.donate(ServerFixture.donation("mail", id: "fresh", at: clock.now()), idGiven: true)
        // A read past the sweep interval starts the sweep (a rebuild off the loop, then the swap).
        _ = await host.stacks()
        let app = ServerFixture.app("mail")
        var listed = try await host.listDonations(app: app, from: .beginning, limit: 100).donations.map(\.id)
        for _ in 0..<200 where listed.count == 11 {
            try await Task.sleep(for: .milliseconds(10))
            listed = try await host.listDonations(app: app, from: .beginning, limit: 100).donations.map(\.id)
        }
        #expect(listed == ["d6", "d7", "d8", "d9", "fresh"])
        #expect(await host.snapshotStatistics().donations == 5)
    }

    @Test("a deletion's rebuild publishes a decision made at the service's time, not the replayed one's date")
    func rebuildPublishesAtTheServiceTime() async throws {
        let clock = ManualClock()
        let host = try await ServerFixture.host(apps: ["mail", "news"], clock: clock)
        _ = try await host.donate(ServerFixture.donation("news", id: "n", at: clock.now()), idGiven: true)
        _ = try await host.donate(
            ServerFixture.donation("mail", id: "m", at: clock.now().adding(seconds: -1)), idGiven: true)
        let before = try await host.stack(ServerFixture.stack())
        clock.advance(seconds: 3)
        #expect(try await host.deleteDonations(app: ServerFixture.app("mail"), filter: .all) == 1)
        let after = try await host.stack(ServerFixture.stack())
        #expect(after.revision > before.revision)
        #expect(
            after.time == clock.now(), "decided at \(after.time.rfc3339), the service's time \(clock.now().rfc3339)")
    }

    @Test("a retried donation is acknowledged only once the first call's commit is stored")
    func retryWaitsForTheFirstCommit() async throws {
        let clock = ManualClock()
        let log = HeldEventLog()
        let host = EngineHost(
            settings: EngineSettings(), clock: clock, log: log, logger: ServerFixture.logger)
        let donation = ServerFixture.donation("mail", id: "once", at: clock.now())
        let first = try await host.donateNow(donation, idGiven: true)
        let retry = try await host.donateNow(donation, idGiven: true)
        #expect(first.id == "once" && retry.id == "once")
        #expect(first.ticket.outcome == nil)
        #expect(retry.ticket.outcome == nil, "the retry was acknowledged before the first call was stored")
        #expect(log.events.withLock { $0.compactMap(\.donation).count } == 1)
        log.commitAll()
        #expect(retry.ticket.outcome.map { (try? $0.get()) != nil } == true)
        #expect(await host.snapshotStatistics().donations == 1)
    }

    @Test("a stack read while writes wait for their commit answers from the last publish; the commit publishes first")
    func readsWhileACommitIsPending() async throws {
        let clock = ManualClock()
        let log = HeldEventLog()
        let host = EngineHost(settings: EngineSettings(), clock: clock, log: log, logger: ServerFixture.logger)
        let apps = ["mail", "news", "maps"]
        for app in apps { _ = try await host.recordNow(.registerKind(ServerFixture.kind(app), at: clock.now())) }
        let widgets = try apps.map {
            WidgetPlacement(
                instance: ServerFixture.instance($0), kind: try WidgetKindID(app: ServerFixture.app($0), kind: "main"))
        }
        let stack = ServerFixture.stack()
        _ = try await host.recordNow(
            .configureStack(
                StackConfiguration(id: stack, family: .systemMedium, widgets: widgets, smartRotate: true),
                at: clock.now()))
        log.commitAll()
        let before = try await host.stack(stack)
        let bottom = try #require(before.order.last)
        var tickets: [CommitTicket] = []
        for _ in 0..<5 {
            clock.advance(seconds: 30)
            tickets.append(
                try await host.donateNow(ServerFixture.donation(bottom, at: clock.now()), idGiven: false).ticket)
        }
        // Not acknowledged yet: the read waits for nothing (the commit is held) and answers from the last publish.
        let read = await host.readStack()
        #expect(read.outcome != nil, "the read waits for a commit")
        let during = try await host.currentDecision(stack)
        #expect(during.revision == before.revision && during.order == before.order)
        #expect(tickets.allSatisfy { $0.outcome == nil })
        log.commitAll()
        // The commit's publish runs on the loop before anything that waited for the commit, this read included.
        let after = try await host.stack(stack)
        #expect(after.revision > before.revision)
        #expect(after.order != before.order, "the donated widget did not move: \(after.order)")
    }

    @Test("a ChangeStack whose family a widget does not support names add[i].kind or family, not widgets[i]")
    func stackChangeNamesItsOwnParameters() async throws {
        let clock = ManualClock()
        let host = try await ServerFixture.host(apps: ["mail", "news"], clock: clock)
        let small = try WidgetKind(
            id: WidgetKindID(app: ServerFixture.app("clock"), kind: "main"), displayName: "clock",
            families: [.systemSmall], intent: nil, predictionMappings: [])
        try await host.record(.registerKind(small, at: clock.now()))
        let added = WidgetPlacement(instance: try InstanceID("clock"), kind: small.id)
        let stack = ServerFixture.stack()
        func parameter(_ change: StackChange) async -> String? {
            do {
                _ = try await host.stackChange(stack, change, at: clock.now())
                return nil
            } catch {
                if case .core(.invalidParameter(let parameter, _)) = error { return parameter }
                return "\(error)"
            }
        }
        #expect(await parameter(StackChange(add: [added])) == "add[0].kind")
        #expect(await parameter(StackChange(family: .systemSmall)) == "family")
        let everyone = [ServerFixture.instance("mail"), ServerFixture.instance("news")]
        #expect(await parameter(StackChange(family: .systemSmall, add: [added], remove: everyone)) == nil)
        // A required value missing in an added widget: add[0].configuration.NAME (it was widgets[i], its place in
        // the merged stack).
        let schema = try IntentSchema(type: "CityIntent", parameters: [ParameterSchema(name: "city", type: .string)])
        let city = try WidgetKind(
            id: WidgetKindID(app: ServerFixture.app("weather"), kind: "main"), displayName: "weather",
            families: [.systemMedium], intent: schema, predictionMappings: [])
        try await host.record(.registerKind(city, at: clock.now()))
        let unconfigured = WidgetPlacement(instance: try InstanceID("weather"), kind: city.id)
        #expect(await parameter(StackChange(add: [unconfigured])) == "add[0].configuration.city")
    }

    @Test("ListDonations pages in recorded order; DeleteDonations removes rows and rebuilds")
    func listAndDelete() async throws {
        let clock = ManualClock()
        let host = try await ServerFixture.host(apps: ["mail"], clock: clock)
        for index in 0..<10 {
            clock.advance(seconds: 60)
            _ = try await host.donate(
                ServerFixture.donation(
                    "mail", id: "d\(index)", at: clock.now(), group: index.isMultiple(of: 2) ? "even" : nil),
                idGiven: true)
        }
        let app = ServerFixture.app("mail")
        let page1 = try await host.listDonations(app: app, from: .beginning, limit: 4).donations
        #expect(page1.map(\.id) == ["d0", "d1", "d2", "d3"])
        let page2 = try await host.listDonations(app: app, from: .after(id: "d3"), limit: 4).donations
        #expect(page2.map(\.id) == ["d4", "d5", "d6", "d7"])
        let page3 = try await host.listDonations(app: app, from: .after(id: "d7"), limit: 4).donations
        #expect(page3.map(\.id) == ["d8", "d9"])
        await #expect(throws: HostError.self) {
            try await host.listDonations(app: app, from: .after(id: "nope"), limit: 4).donations
        }

        let afterPage2 = try await host.listDonations(app: app, from: .after(id: "d3"), limit: 4).through

        #expect(try await host.deleteDonations(app: app, filter: .group("even")) == 5)
        #expect(
            try await host.listDonations(app: app, from: .beginning, limit: 100).donations.map(\.id) == [
                "d1", "d3", "d5", "d7", "d9",
            ])
        // The second page ended on d6, deleted now: after its id is gone, its cursor is not.
        await #expect(throws: HostError.self) {
            try await host.listDonations(app: app, from: .after(id: "d6"), limit: 4)
        }
        #expect(
            try await host.listDonations(app: app, from: .cursor(afterPage2), limit: 4).donations.map(\.id) == [
                "d9"
            ])
        #expect(try await host.deleteDonations(app: app, filter: .group("even")) == 0)
        #expect(await host.snapshotStatistics().donations == 5)
    }

    @Test("a subscriber gets the current order first, then each published change")
    func subscribe() async throws {
        let clock = ManualClock()
        let host = try await ServerFixture.host(apps: ["mail", "news", "maps"], clock: clock)
        let subscription = try await host.subscribe(stacks: [ServerFixture.stack()])
        #expect(subscription.initial.count == 1)
        let before = try #require(subscription.initial.first)
        // Use the widget at the bottom a lot, so it rises.
        let bottom = try #require(before.order.last)
        for _ in 0..<5 {
            clock.advance(seconds: 30)
            _ = try await host.donate(ServerFixture.donation(bottom, at: clock.now()), idGiven: false)
        }
        var iterator = subscription.stream.makeAsyncIterator()
        let changed = try #require(await iterator.next())
        #expect(changed.revision > before.revision)
        #expect(changed.order != before.order)
        await host.closeSubscription(subscription.id)
    }

    @Test("while anyone subscribes, scores that drift with time alone are decided again within a minute and pushed")
    func timeAloneIsPushedToSubscribers() async throws {
        let clock = ManualClock()
        let host = try await ServerFixture.host(apps: ["mail", "news", "maps"], clock: clock)
        _ = try await host.donate(ServerFixture.donation("news", at: clock.now()), idGiven: false)
        await host.tick()
        // No subscriber: no wake-up for the decisions' age (nothing is scheduled in the engine either).
        let unsubscribed = await host.wakeUp.scheduled
        #expect(unsubscribed.map { $0.seconds(since: clock.now()) > Engine.decisionMaxAge } ?? true)
        let subscription = try await host.subscribe(stacks: [ServerFixture.stack()])
        let before = try #require(subscription.initial.first)
        let due = try #require(await host.wakeUp.scheduled)
        #expect(due.seconds(since: before.time) <= Engine.decisionMaxAge)
        // The wake-up an hour on (the time service fires it): recency has drifted, the new scores are pushed.
        clock.advance(seconds: 3_600)
        await host.timerFired()
        var iterator = subscription.stream.makeAsyncIterator()
        let drifted = try #require(await iterator.next())
        #expect(drifted.revision > before.revision)
        #expect(drifted.time > before.time)
        await host.closeSubscription(subscription.id)
    }

    @Test("a subscriber that does not read is cut off when its queue is full; others are not slowed")
    func slowSubscriberIsCutOff() async throws {
        var limits = HostLimits()
        limits.subscriberQueue = 2
        let clock = ManualClock()
        let apps = ["a", "b", "c", "d"]
        let host = try await ServerFixture.host(apps: apps, limits: limits, clock: clock)
        let slow = try await host.subscribe(stacks: nil)
        // Alternate heavy use so the order keeps changing and decisions pile up unread.
        for round in 0..<40 {
            clock.advance(seconds: 30)
            _ = try await host.donate(ServerFixture.donation(apps[round % apps.count], at: clock.now()), idGiven: false)
        }
        let statistics = await host.snapshotStatistics()
        #expect(statistics.decisionsPublished > limits.subscriberQueue)
        #expect(statistics.subscribersCutOff == 1)
        #expect(statistics.subscribers == 0)
        // The stream holds what was queued and then ends.
        var received = 0
        for await _ in slow.stream { received += 1 }
        #expect(received == limits.subscriberQueue)
    }

    @Test("subscribing to an unknown stack is a typed not-found error")
    func subscribeUnknownStack() async throws {
        let host = try await ServerFixture.host(apps: ["mail"])
        await #expect(throws: HostError.core(.notFound(kind: "stack", id: "nope"))) {
            try await host.subscribe(stacks: [ServerFixture.stack("nope")])
        }
    }

    @Test(
        "the host's phase: storage failing stops publishing and recording, the time service's retry a second later serves again once the store takes records, stopping is final"
    )
    func phases() async throws {
        let clock = ManualClock()
        let log = HeldEventLog()
        let host = EngineHost(settings: EngineSettings(), clock: clock, log: log, logger: ServerFixture.logger)
        let timeService = Task { await HostTimeService(host: host).run() }
        defer { timeService.cancel() }
        _ = try await host.recordNow(.registerKind(ServerFixture.kind("mail"), at: clock.now()))
        log.commitAll()
        #expect(await host.phase == .serving)
        let failure = StoreFailure(reason: "disk full")
        log.failing.withLock { $0 = failure }
        await #expect(throws: HostError.store(failure)) {
            try await host.donate(ServerFixture.donation("mail", at: clock.now()), idGiven: false)
        }
        await host.tick()
        let retryAt = clock.now().adding(seconds: 1)
        #expect(await host.phase == .storageFailed(retryAt: retryAt))
        #expect(await host.wakeUp.scheduled == retryAt)
        // The service's clock a second later, the store still failing: the retry publishes, fails, waits again.
        clock.advance(seconds: 1)
        let nextRetry = clock.now().adding(seconds: 1)
        #expect(await Self.eventually { await host.phase == .storageFailed(retryAt: nextRetry) })
        // The store works again; a second later the retry serves.
        log.failing.withLock { $0 = nil }
        clock.advance(seconds: 1)
        #expect(await Self.eventually { await host.phase == .serving })
        // Failing again, then working before the retry is due: the first publish that finds it working serves.
        log.failing.withLock { $0 = failure }
        await host.tick()
        #expect(await host.phase == .storageFailed(retryAt: clock.now().adding(seconds: 1)))
        log.failing.withLock { $0 = nil }
        await host.tick()
        #expect(await host.phase == .serving)
        _ = try await host.donateNow(ServerFixture.donation("mail", at: clock.now()), idGiven: false)
        await host.stop()
        await host.tick()
        #expect(await host.phase == .stopping)
        await #expect(throws: HostError.stopping) {
            try await host.donateNow(ServerFixture.donation("mail", at: clock.now()), idGiven: false)
        }
        // The time service ends with the host.
        await timeService.value
    }

    /// A timer that falls due while storage fails (a timeline entry coming current) cannot be published then: the
    /// retry is the next wake-up, not the due timer's moment, which stayed in the past and woke the host again at
    /// once, about 2,000 times a second for the whole outage.
    @Test func aDueTimerWhileStorageFailsDoesNotSpinTheTimeService() async throws {
        let clock = ManualClock()
        let log = HeldEventLog()
        let host = EngineHost(settings: EngineSettings(), clock: clock, log: log, logger: ServerFixture.logger)
        _ = try await host.recordNow(.registerKind(ServerFixture.kind("mail"), at: clock.now()))
        _ = try await host.recordNow(
            .configureStack(
                StackConfiguration(
                    id: ServerFixture.stack(), family: .systemMedium,
                    widgets: [
                        WidgetPlacement(
                            instance: ServerFixture.instance("mail"),
                            kind: try WidgetKindID(app: ServerFixture.app("mail"), kind: "main"))
                    ], smartRotate: true), at: clock.now()))
        _ = try await host.recordNow(
            .submitTimeline(
                .instance(ServerFixture.instance("mail")),
                try Timeline.validated(
                    entries: [
                        TimelineEntry(
                            date: clock.now().adding(seconds: 5), relevance: Relevance(score: 1, duration: 60))
                    ],
                    policy: .never
                ).timeline, at: clock.now()))
        log.commitAll()
        await host.tick()
        log.failing.withLock { $0 = StoreFailure(reason: "disk full") }
        clock.advance(seconds: 10)
        #expect(await host.perform { $0.engine.nextWakeUp.map { $0 < clock.now() } } == true)
        await host.timerFired()
        let retryAt = clock.now().adding(seconds: 1)
        #expect(await host.phase == .storageFailed(retryAt: retryAt))
        #expect(await host.wakeUp.scheduled == retryAt)
    }

    /// After a failed commit and the rollback, the failed commit is not waited for again: a deletion and a retry of
    /// a stored donation go through once the store works, without another write first.
    @Test func afterARollbackTheFailedCommitIsNotWaitedForAgain() async throws {
        let clock = ManualClock()
        let log = HeldEventLog()
        let host = EngineHost(settings: EngineSettings(), clock: clock, log: log, logger: ServerFixture.logger)
        _ = try await host.recordNow(.registerKind(ServerFixture.kind("mail"), at: clock.now()))
        let stored = ServerFixture.donation("mail", at: clock.now())
        _ = try await host.donateNow(stored, idGiven: true)
        log.commitAll()
        // A later donation's commit fails, and the store asks for the state to be read again.
        let failure = StoreFailure(reason: "disk full")
        _ = try await host.donateNow(ServerFixture.donation("mail", at: clock.now()), idGiven: false)
        log.failing.withLock { $0 = failure }
        log.reloadNeeded.withLock { $0 = true }
        log.commitAll(failure)
        await #expect(throws: HostError.store(failure)) {
            try await host.donate(ServerFixture.donation("mail", at: clock.now()), idGiven: false)
        }
        // The store works again.
        log.failing.withLock { $0 = nil }
        log.reloadNeeded.withLock { $0 = false }
        let (_, ticket) = try await host.donateNow(stored, idGiven: true)
        #expect(ticket.outcome.map { (try? $0.get()) != nil } == true, "a retry of a stored donation is stored")
        #expect(try await host.deleteDonations(app: stored.app, filter: .ids([stored.id])) == 1)
    }

    /// Waiting reads of the history take turns by caller uid: one uid's many reads delay another's by one.
    @Test func historyReadsTakeTurnsByUID() {
        var reads = HistoryReads<String>()
        for index in 1...4 { reads.wait("a\(index)", uid: 65_534) }
        reads.wait("b1", uid: 1_000)
        reads.wait("c1", uid: 0)
        reads.wait("b2", uid: 1_000)
        #expect(reads.waitingCount == 7)
        var order: [String] = []
        while let next = reads.next() { order.append(next) }
        #expect(order == ["a1", "b1", "c1", "a2", "b2", "a3", "a4"])
        reads.wait("a5", uid: 65_534)
        reads.wait("b3", uid: 1_000)
        #expect(reads.removeAll() == ["a5", "b3"])
        #expect(reads.next() == nil && reads.waitingCount == 0)
    }

    /// Whether `condition` holds within 3 s.
    static func eventually(_ condition: () async -> Bool) async -> Bool {
        for _ in 0..<300 {
            if await condition() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return await condition()
    }

    @Test("rebuilds queue: the deletions waiting go together, then one retention sweep however often it came due")
    func rebuildQueue() {
        var queue = RebuildQueue<String>()
        #expect(queue.next() == nil)
        queue.retentionDue = true
        queue.retentionDue = true
        #expect(queue.nextKind() == "retention")
        #expect(queue.next() == nil)
        queue.retentionDue = true
        queue.deletions = ["mail d1", "news d2"]
        #expect(queue.nextKind() == "deletions 2")
        #expect(queue.nextKind() == "retention")
        #expect(queue.next() == nil)
    }

    @Test("after stop, recording calls are refused and streams end")
    func stop() async throws {
        let host = try await ServerFixture.host(apps: ["mail"])
        let subscription = try await host.subscribe(stacks: nil)
        await host.stop()
        for await _ in subscription.stream {}
        await #expect(throws: HostError.stopping) {
            try await host.donate(ServerFixture.donation("mail", at: ServerFixture.start), idGiven: false)
        }
    }
}

/// A log whose commits wait until the test says so; what it holds is readable at once (an `InMemoryEventLog`'s).
final class HeldEventLog: MemoryBackedEventLog {
    let events = Mutex<[EngineEvent]>([])
    /// Set: the log refuses records, as a store whose commit failed (`status`).
    let failing = Mutex<StoreFailure?>(nil)
    let memory = InMemoryEventLog()
    private let waiter = Mutex(CommitWaiter())

    func enqueue(_ events: [EngineEvent]) -> CommitTicket {
        self.events.withLock { $0 += events }
        _ = memory.enqueue(events)
        return .pending(waiter.withLock { $0 })
    }

    /// Resolves the commit of everything enqueued so far: stored, or failed with `failure`.
    func commitAll(_ failure: StoreFailure? = nil) {
        let current = waiter.withLock { waiter in
            defer { waiter = CommitWaiter() }
            return waiter
        }
        current.resolve(failure)
    }

    /// Set with `failing`: the store asks for the stored state to be read again (`status`).
    let reloadNeeded = Mutex(false)

    var status: EventLogStatus {
        let reload = reloadNeeded.withLock { $0 }
        return failing.withLock { failure in failure.map { .failed($0, reloadNeeded: reload) } ?? .accepting }
    }
}

extension RebuildQueue {
    /// The next rebuild, named: `deletions N` or `retention`.
    mutating func nextKind() -> String? {
        switch next() {
        case .deletions(let batch)?: "deletions \(batch.count)"
        case .retention?: "retention"
        case nil: nil
        }
    }
}

@Suite("Host state parts")
struct HostStatePartTests {
    static let t0 = Timestamp(microseconds: 1_700_000_000_000_000)

    /// Where each event's decision is journaled: live events at the service's time; late ones at their own time
    /// unless dated before the stack's last entry, the next publish then leaving the stack out only when its order is
    /// the one so journaled; a shell's event far back makes a replay (left out until a live event); a provider's event
    /// far back into a stack not being replayed is reported at the service's time.
    @Test func backfillJournal() throws {
        let home = try StackID("home")
        let work = try StackID("work")
        let donation = EngineEvent.donate(
            Donation(id: "d", app: try AppID("org.example.mail"), intent: "open", date: Self.t0))
        let look = EngineEvent.look(stack: home, at: Self.t0)
        var journal = BackfillJournal()
        #expect(journal.isEmpty)
        let decisions = [
            Decision(stack: home, revision: 1, time: Self.t0, entries: []),
            Decision(stack: work, revision: 1, time: Self.t0, entries: []),
        ]
        let order = decisions[0].order
        // Late: at its own time; the next publish leaves the stack out when its order is the one journaled.
        #expect(journal.place(home, donation, lateness: 5, lastEntry: nil, now: Self.t0) == .ownTime)
        #expect(journal.journals(order, for: home, at: Self.t0, published: ["x"]) == true)
        #expect(journal.journals(order, for: home, at: Self.t0, published: ["x"]) == false)
        #expect(!journal.isEmpty)
        #expect(journal.reported(decisions, at: Self.t0)?.map(\.stack) == [work])
        // The next publish reports it; so does one whose order differs from what was journaled.
        #expect(journal.reported(decisions, at: Self.t0) == nil)
        #expect(journal.place(home, donation, lateness: 5, lastEntry: nil, now: Self.t0) == .ownTime)
        #expect(journal.journals(["mail"], for: home, at: Self.t0, published: nil) == true)
        #expect(journal.reported(decisions, at: Self.t0) == nil)
        #expect(journal.isEmpty)
        // An order equal to the last publish's is not journaled again at an event's time.
        #expect(journal.place(home, donation, lateness: 5, lastEntry: nil, now: Self.t0) == .ownTime)
        #expect(journal.journals(["a"], for: home, at: Self.t0, published: ["a"]) == false)
        // Dated before the stack's last entry: reported at the service's time.
        #expect(
            journal.place(work, donation, lateness: 5, lastEntry: Self.t0.adding(seconds: 1), now: Self.t0)
                == .serviceTime)
        #expect(journal.stacks(affected: [work], by: donation, backfilled: true) == [work, home])
        #expect(journal.stacks(affected: [work], by: donation, backfilled: false) == [work])
        // A live event ends the stack's backfill.
        #expect(journal.place(home, donation, lateness: 0, lastEntry: nil, now: Self.t0) == .serviceTime)
        #expect(journal.isEmpty)
        // A provider's event far back into a stack not being replayed: at the service's time, nothing left out.
        #expect(journal.place(home, donation, lateness: 86_400, lastEntry: nil, now: Self.t0) == .serviceTime)
        #expect(journal.isEmpty)
        // A shell's event far back makes a replay: left out of every publish until a live event; the replay's
        // donations (far back too) are journaled at their own times.
        #expect(journal.place(home, look, lateness: 86_400, lastEntry: nil, now: Self.t0) == .ownTime)
        #expect(
            journal.place(home, donation, lateness: 86_400, lastEntry: Self.t0.adding(seconds: 9), now: Self.t0)
                == .ownTime)
        #expect(journal.reported(decisions, at: Self.t0)?.map(\.stack) == [work])
        #expect(journal.reported(decisions, at: Self.t0)?.map(\.stack) == [work])
        #expect(journal.place(home, look, lateness: 0, lastEntry: nil, now: Self.t0) == .serviceTime)
        #expect(journal.reported(decisions, at: Self.t0) == nil)
        journal.forget(home)
        #expect(journal.isEmpty)
        // A replay ends, too, when no backfilled event about its stack came for a second of the service's time: one
        // shell call dated far back does not silence the stack's later decisions.
        #expect(journal.place(home, look, lateness: 7_200, lastEntry: nil, now: Self.t0) == .ownTime)
        #expect(journal.reported(decisions, at: Self.t0.adding(seconds: 0.5))?.map(\.stack) == [work])
        #expect(journal.reported(decisions, at: Self.t0.adding(seconds: 3)) == nil)
        #expect(journal.isEmpty)
    }

    /// A moment is handed to the time service once; after it fired, or to a new service, it is handed again.
    @Test func wakeUpSchedule() async {
        var schedule = WakeUpSchedule(lastRetentionSweep: Self.t0)
        let (stream, continuation) = AsyncStream.makeStream(of: Timestamp.self)
        schedule.attach(continuation)
        schedule.schedule(Self.t0.adding(seconds: 1))
        schedule.schedule(Self.t0.adding(seconds: 1))
        schedule.fired()
        schedule.schedule(Self.t0.adding(seconds: 1))
        schedule.schedule(Self.t0.adding(seconds: 2))
        #expect(schedule.scheduled == Self.t0.adding(seconds: 2))
        schedule.finish()
        var handed: [Timestamp] = []
        for await moment in stream { handed.append(moment) }
        #expect(handed == [Self.t0.adding(seconds: 1), Self.t0.adding(seconds: 1), Self.t0.adding(seconds: 2)])
    }
}
