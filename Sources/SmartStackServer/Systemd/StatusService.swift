public import Logging
import ServiceLifecycle
public import SmartStackSystemd

/// Tells systemd how the service is doing: `READY=1` once the socket is bound or adopted (and state is
/// loaded, which happens before the listener runs), `STATUS=` with live counts every few seconds and soon
/// after a published decision, `STOPPING=1` and a journal entry when graceful shutdown begins; and writes
/// the journal's periodic summary.
///
/// Put it last in the `ServiceGroup`, which shuts services down in reverse order, so it hears of the
/// shutdown first. Notify errors are logged, never fatal.
public struct StatusService: NamedService {
    let notifier: SystemdNotifier
    let host: EngineHost
    let connections: ConnectionRegistry
    let journal: ServiceJournal
    let listening: OneShotSignal
    /// Fired once `READY=1` was sent (the watchdog starts then).
    let ready: OneShotSignal
    let interval: Duration
    let summaryInterval: Duration
    let logger: Logger

    public init(
        notifier: SystemdNotifier, host: EngineHost, connections: ConnectionRegistry, journal: ServiceJournal,
        listening: OneShotSignal, ready: OneShotSignal = OneShotSignal(), interval: Duration = .seconds(2),
        summaryInterval: Duration = .seconds(300), logger: Logger
    ) {
        self.ready = ready
        self.notifier = notifier
        self.host = host
        self.connections = connections
        self.journal = journal
        self.listening = listening
        self.interval = interval
        self.summaryInterval = summaryInterval
        self.logger = logger
    }

    public func run() async {
        await withGracefulShutdownHandler {
            await cancelWhenGracefulShutdown { await listening.wait() }
            guard !Task.isCancelled, !Task.isShuttingDownGracefully else { return }
            var rate = DonationRate()
            var statistics = await host.snapshotStatistics()
            var status = ServiceStatus(
                statistics, donationsPerMinute: rate.add(total: statistics.donationsReceived, at: .now))
            report("READY=1") { try notifier.ready(status: status.text) }
            ready.fire()
            var summary = SummaryBaseline(
                statistics, journal: journal.counters, dropped: journal.queue.dropped,
                accepted: connections.acceptedCount, at: .now)

            // Wake four times a second; refresh when a decision was published or every `interval` anyway.
            var refreshed = ContinuousClock.now
            while !Task.isCancelled && !Task.isShuttingDownGracefully {
                try? await cancelWhenGracefulShutdown { try await Task.sleep(for: .milliseconds(250)) }
                let now = ContinuousClock.now
                guard !Task.isShuttingDownGracefully, journal.takeChanged() || now >= refreshed + interval else {
                    continue
                }
                refreshed = now
                statistics = await host.snapshotStatistics()
                let next = ServiceStatus(
                    statistics, donationsPerMinute: rate.add(total: statistics.donationsReceived, at: now))
                if next != status {
                    status = next
                    report("STATUS=") { try notifier.status(status.text) }
                }
                if now >= summary.at + summaryInterval {
                    summary = writeSummary(since: summary, statistics, at: now)
                }
            }
        } onGracefulShutdown: {
            report("STOPPING=1") { try notifier.stopping(status: "stopping: finishing calls in progress") }
            journal.event(
                .stopping, "smartstackd is stopping",
                fields: [(.reason, "graceful shutdown (SIGTERM, SIGINT or SIGHUP)")])
        }
    }

    private func report(_ what: String, _ body: () throws -> Void) {
        do {
            try body()
        } catch {
            logger.warning("sd_notify failed", metadata: ["notification": "\(what)", "error": "\(error)"])
        }
    }

    /// The counters at the previous summary.
    struct SummaryBaseline {
        var statistics: HostStatistics
        var journal: ServiceJournal.Counters
        var dropped: Int
        var accepted: Int
        var at: ContinuousClock.Instant

        init(
            _ statistics: HostStatistics, journal: ServiceJournal.Counters, dropped: Int, accepted: Int,
            at: ContinuousClock.Instant
        ) {
            self.statistics = statistics
            self.journal = journal
            self.dropped = dropped
            self.accepted = accepted
            self.at = at
        }
    }

    private func writeSummary(
        since previous: SummaryBaseline, _ statistics: HostStatistics, at now: ContinuousClock.Instant
    )
        -> SummaryBaseline
    {
        let current = SummaryBaseline(
            statistics, journal: journal.counters, dropped: journal.queue.dropped, accepted: connections.acceptedCount,
            at: now)
        journal.summary(since: previous, current)
        return current
    }
}

extension ServiceStatus {
    init(_ statistics: HostStatistics, donationsPerMinute: Int) {
        self.init(
            stacks: statistics.stacks, widgets: statistics.widgets, subscribers: statistics.subscribers,
            donationsPerMinute: donationsPerMinute)
    }
}

extension ServiceJournal {
    /// The periodic summary: counters since the previous one, and the counts now.
    func summary(since previous: StatusService.SummaryBaseline, _ current: StatusService.SummaryBaseline) {
        let seconds = Int((current.at - previous.at).components.seconds)
        let orderChanges = current.journal.orderChanges - previous.journal.orderChanges
        let decisions = current.journal.decisionsPublished - previous.journal.decisionsPublished
        let donations = current.statistics.donationsReceived - previous.statistics.donationsReceived
        let dropped = current.dropped - previous.dropped
        event(
            .periodicSummary,
            "Summary of the last \(seconds) s: \(orderChanges) order changes, \(donations) donations, "
                + "\(current.statistics.stacks) stacks, \(current.statistics.subscribers) subscribers",
            fields: [
                (.count, String(orderChanges)),
                (Field.decisions, String(decisions)),
                (Field.orderEntries, String(current.journal.orderEntries - previous.journal.orderEntries)),
                (Field.donations, String(donations)),
                (Field.events, String(current.statistics.eventsRecorded - previous.statistics.eventsRecorded)),
                (
                    Field.suggestionsInserted,
                    String(current.journal.suggestionsInserted - previous.journal.suggestionsInserted)
                ),
                (
                    Field.suggestionsRemoved,
                    String(current.journal.suggestionsRemoved - previous.journal.suggestionsRemoved)
                ),
                (Field.reloadsRequested, String(current.journal.reloadsRequested - previous.journal.reloadsRequested)),
                (Field.reloadsWithheld, String(current.journal.reloadsWithheld - previous.journal.reloadsWithheld)),
                (Field.connections, String(current.accepted - previous.accepted)),
                (Field.clientsRejected, String(current.journal.clientsRejected - previous.journal.clientsRejected)),
                (Field.journalDropped, String(dropped)),
                (Field.stacks, String(current.statistics.stacks)),
                (Field.widgets, String(current.statistics.widgets)),
                (Field.subscribers, String(current.statistics.subscribers)),
                (Field.intervalSeconds, String(seconds)),
            ])
    }
}
