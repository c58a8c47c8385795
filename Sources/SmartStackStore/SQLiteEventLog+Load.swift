import Dispatch
import GRDB
import SmartStackCore
import Synchronization

extension SQLiteEventLog {
    /// Reads the snapshot and every record in order, into memory (tools and tests; the service starts from
    /// ``loadStart()`` and replays from the file instead).
    ///
    /// Called when nothing is being written. A large log is read in two
    /// halves on two connections at once (decoding is most of the cost). A row that cannot be read is an error
    /// naming the file and the row: the history is never silently shortened.
    public func load() throws(StoreFailure) -> StoredHistory {
        var history = StoredHistory()
        var bounds: (low: Int64, high: Int64, count: Int) = (0, 0, 0)
        do {
            try readerDatabase.read { db in
                history.snapshot = try Self.storedSnapshot(db)
                history.owners = try Self.owners(db)
                try loadKeyTail(db)
                let range = try RawStatement(
                    db, sql: "SELECT ifnull(min(seq), 0), ifnull(max(seq), 0), count(*) FROM event")
                if try range.next() {
                    bounds = (range.int64(0), range.int64(1), Int(range.int64(2)))
                    _ = try range.next()
                }
            }
        } catch {
            throw StoreFailure(reason: "cannot read \(path): \(Self.describe(error))")
        }
        let parts: [ClosedRange<Int64>]
        if bounds.count >= 100_000 {
            let middle = bounds.low + (bounds.high - bounds.low) / 2
            parts = [bounds.low...middle, (middle + 1)...bounds.high]
        } else {
            parts = [bounds.low...bounds.high]
        }
        let results = Mutex<[Int: Result<Part, StoreFailure>]>([:])
        let expected = bounds.count / parts.count
        DispatchQueue.concurrentPerform(iterations: parts.count) { part in
            let result = Result { () throws(StoreFailure) in
                try read(parts[part], expected: expected, onSecondConnection: part > 0)
            }
            results.withLock { $0[part] = result }
        }
        let decoded = results.withLock { $0 }
        for part in parts.indices {
            guard let result = decoded[part] else { throw StoreFailure(reason: "cannot read \(path)") }
            let read = try result.get()
            if part == 0 {
                history.events = read.events
                history.sequences = read.sequences
                history.donationsPerApp = read.donationsPerApp
            } else {
                history.events += read.events
                history.sequences += read.sequences
                history.donationsPerApp.merge(read.donationsPerApp, uniquingKeysWith: +)
            }
        }
        let donations = history.donationsPerApp.values.reduce(0, +)
        let last = max(history.sequences.last ?? 0, history.snapshot?.through ?? 0)
        reopened(lastSequence: last, snapshot: history.snapshot, events: history.events.count, donations: donations)
        return history
    }

    /// One range of the log, decoded.
    struct Part: Sendable {
        var events: [EngineEvent] = []
        var sequences: [Int64] = []
        var donationsPerApp: [AppID: Int] = [:]
    }

    /// Reads and decodes the records whose sequence numbers are in `range`, in order.
    private func read(_ range: ClosedRange<Int64>, expected: Int, onSecondConnection: Bool) throws(StoreFailure)
        -> Part
    {
        var part = Part()
        part.events.reserveCapacity(expected + 1_024)
        part.sequences.reserveCapacity(expected + 1_024)
        do {
            let database: DatabaseQueue
            if onSecondConnection {
                var configuration = Configuration()
                configuration.readonly = true
                configuration.label = "smartstackd.store.loader"
                database = try DatabaseQueue(path: path, configuration: configuration)
            } else {
                database = readerDatabase
            }
            defer { if onSecondConnection { try? database.close() } }
            try database.read { db in
                let rows = try RawStatement(
                    db, sql: "SELECT seq, kind, body FROM event WHERE seq BETWEEN ? AND ? ORDER BY seq")
                rows.bind(1, range.lowerBound)
                rows.bind(2, range.upperBound)
                var recentApps: [AppID] = []
                while try rows.next() {
                    let sequence = rows.int64(0)
                    let kind = rows.int64(1)
                    let event: EngineEvent
                    do throws(CodecError) {
                        guard kind == StoreSchema.eventKind else { throw CodecError("unknown record kind \(kind)") }
                        event = try EngineEvent(decoding: rows.blob(2), recentApps: &recentApps)
                    } catch {
                        throw StoreFailure(reason: "\(path): record \(sequence) cannot be read: \(error)")
                    }
                    if case .donate(let donation) = event { part.donationsPerApp[donation.app, default: 0] += 1 }
                    part.events.append(event)
                    part.sequences.append(sequence)
                }
            }
        } catch let failure as StoreFailure {
            throw failure
        } catch {
            throw StoreFailure(reason: "cannot read \(path): \(Self.describe(error))")
        }
        return part
    }
}
