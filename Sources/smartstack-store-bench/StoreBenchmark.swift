import Foundation
import GRDB
import Logging
import SmartStackCore
import SmartStackStore

/// Appends through the store alone: `clients` concurrent callers, each queueing one donation and waiting for its
/// commit before the next (as acknowledged calls do), queued from one actor as the engine's owner queues them.
enum StoreBenchmark {
    actor Queue {
        let log: SQLiteEventLog
        init(_ log: SQLiteEventLog) { self.log = log }
        func enqueue(_ event: EngineEvent) -> CommitTicket { log.enqueue([event]) }
    }

    static func run(_ options: BenchOptions) async {
        let directory = temporaryDirectory()
        var storeOptions = StoreOptions()
        storeOptions.durability = options.durability == "power" ? .power : .process
        let logger = Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() }
        let log: SQLiteEventLog
        do { log = try SQLiteEventLog.open(directory: directory, options: storeOptions, logger: logger) } catch {
            fatalError("\(error)")
        }
        _ = try? log.load()
        let queue = Queue(log)
        let app = (try? AppID("org.bench.app")) ?? { fatalError("app id") }()
        let deadline = monotonicSeconds() + options.seconds
        let started = monotonicSeconds()
        let total = await withTaskGroup(of: Int.self) { group in
            for client in 0..<options.clients {
                group.addTask {
                    var count = 0
                    while monotonicSeconds() < deadline {
                        let donation = Donation(
                            id: "c\(client)-\(count)", app: app, intent: "open",
                            date: Timestamp(microseconds: 1_700_000_000_000_000 + Int64(count)))
                        do { try await queue.enqueue(.donate(donation)).committed() } catch { fatalError("\(error)") }
                        count += 1
                    }
                    return count
                }
            }
            return await group.reduce(0, +)
        }
        let elapsed = monotonicSeconds() - started
        let statistics = log.statistics()
        await log.close()
        let commits = statistics?.commits ?? 0
        let latency = statistics?.latency
        print(
            "store alone, durability \(options.durability), \(options.clients) callers: "
                + "\(Int(Double(total) / elapsed)) appends/s, \(commits) commits "
                + "(\(commits > 0 ? total / commits : 0) calls per commit), commit wait p50 \(latency?.p50 ?? 0) ms "
                + "p99 \(latency?.p99 ?? 0) ms")
    }
}

/// Raw insert speed: batches of `clients` donations queued at once, one commit each.
enum BatchBenchmark {
    static func run(_ options: BenchOptions) async {
        let directory = temporaryDirectory()
        let logger = Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() }
        let log: SQLiteEventLog
        do { log = try SQLiteEventLog.open(directory: directory, options: StoreOptions(), logger: logger) } catch {
            fatalError("\(error)")
        }
        _ = try? log.load()
        let app = (try? AppID("org.bench.app")) ?? { fatalError("app id") }()
        let started = monotonicSeconds()
        var total = 0
        while monotonicSeconds() - started < options.seconds {
            var events: [EngineEvent] = []
            for _ in 0..<options.clients {
                events.append(
                    .donate(
                        Donation(
                            id: "b\(total)", app: app, intent: "open",
                            date: Timestamp(microseconds: 1_700_000_000_000_000))))
                total += 1
            }
            do { try await log.enqueue(events).committed() } catch { fatalError("\(error)") }
        }
        let elapsed = monotonicSeconds() - started
        await log.close()
        print("batches of \(options.clients): \(Int(Double(total) / elapsed)) rows/s")
    }
}

/// The commit path alone on one thread: one transaction per `clients` rows, no tasks or wake-ups.
enum RawBenchmark {
    static func run(_ options: BenchOptions) {
        let directory = temporaryDirectory()
        do {
            var configuration = Configuration()
            configuration.busyMode = .timeout(10)
            let queue = try DatabaseQueue(path: directory + "/raw.sqlite", configuration: configuration)
            try queue.writeWithoutTransaction { db in
                _ = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
                try db.execute(sql: "PRAGMA synchronous = NORMAL; PRAGMA wal_autocheckpoint = 0")
                try db.execute(
                    sql:
                        "CREATE TABLE event (seq INTEGER PRIMARY KEY, kind INTEGER NOT NULL, app TEXT, donation TEXT, body BLOB NOT NULL)"
                )
                if options.durability == "index" {
                    try db.execute(
                        sql: "CREATE UNIQUE INDEX event_donation ON event(app, donation) WHERE donation IS NOT NULL")
                }
            }
            let body = [UInt8](repeating: 7, count: 60)
            let started = monotonicSeconds()
            var total = 0
            var transactions = 0
            while monotonicSeconds() - started < options.seconds {
                try queue.writeWithoutTransaction { db in
                    try db.inTransaction(.immediate) {
                        let statement = try db.cachedStatement(
                            sql:
                                "INSERT INTO event(seq, kind, app, donation, body) VALUES (?, 1, 'org.bench.app', ?, ?)"
                        )
                        for _ in 0..<options.clients {
                            total += 1
                            try statement.execute(arguments: [total, "d\(total)", Data(body)])
                        }
                        return .commit
                    }
                }
                transactions += 1
            }
            let elapsed = monotonicSeconds() - started
            print(
                "raw GRDB, \(options.clients) rows per transaction (\(options.durability)): \(Int(Double(total) / elapsed)) rows/s, \(Int(elapsed / Double(transactions) * 1e6)) µs per transaction"
            )
        } catch {
            fatalError("\(error)")
        }
    }
}

/// Reading a state directory's log: how long `load()` takes, apart from what the host does with it.
enum LoadBenchmark {
    static func run(_ options: BenchOptions) {
        let logger = Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() }
        do {
            let log = try SQLiteEventLog.open(directory: options.state, options: StoreOptions(), logger: logger)
            for _ in 0..<3 {
                let started = monotonicSeconds()
                let history = try log.load()
                print("load: \(history.events.count) records in \(Int((monotonicSeconds() - started) * 1_000)) ms")
            }
            log.closeNow()
        } catch {
            fatalError("\(error)")
        }
    }
}
