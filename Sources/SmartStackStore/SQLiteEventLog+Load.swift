import GRDB
import SmartStackCore

extension SQLiteEventLog {
    /// Reads the snapshot and every record in order, in one read transaction.
    ///
    /// Called at start and after a failed commit (the log is stopped then, so nothing is being written). A row
    /// that cannot be read is an error naming the file and the row: the history is never silently shortened.
    public func load() throws(StoreFailure) -> StoredHistory {
        var history = StoredHistory()
        var donations = 0
        do {
            try readerDatabase.read { db in
                let snapshot = try RawStatement(db, sql: "SELECT through, taken, takenOffset, body FROM snapshot WHERE id = 1")
                if try snapshot.next() {
                    let taken = Timestamp(
                        microseconds: snapshot.int64(1), utcOffsetSeconds: Int32(truncatingIfNeeded: snapshot.int64(2)))
                    history.snapshot = StoredSnapshot(
                        through: snapshot.int64(0), taken: taken, bytes: Array(snapshot.blob(3)))
                    _ = try snapshot.next()
                }
                let count = try Int.fetchOne(db, sql: "SELECT count(*) FROM event") ?? 0
                history.records.reserveCapacity(count)
                let rows = try RawStatement(db, sql: "SELECT seq, kind, body FROM event ORDER BY seq")
                while try rows.next() {
                    let sequence = rows.int64(0)
                    let kind = rows.int64(1)
                    let body = rows.blob(2)
                    let event: EngineEvent
                    do throws(CodecError) {
                        guard kind == StoreSchema.eventKind else { throw CodecError("unknown record kind \(kind)") }
                        event = try EngineEvent(decoding: body)
                    } catch {
                        throw StoreFailure(reason: "\(path): record \(sequence) cannot be read: \(error)")
                    }
                    if event.donation != nil { donations += 1 }
                    history.records.append(StoredRecord(sequence: sequence, event: event))
                }
            }
        } catch let failure as StoreFailure {
            throw failure
        } catch {
            throw StoreFailure(reason: "cannot read \(path): \(Self.describe(error))")
        }
        let last = max(history.records.last?.sequence ?? 0, history.snapshot?.through ?? 0)
        let wasFailed = state.withLock { state -> Bool in
            state.nextSequence = last + 1
            state.snapshotThrough = history.snapshot?.through ?? 0
            guard case .failed(let failure, reloaded: false) = state.phase else { return false }
            state.phase = .failed(failure, reloaded: true)
            return true
        }
        if wasFailed { wake.signal() }
        counters.withLock { counters in
            counters.storedEvents = history.records.count
            counters.storedDonations = donations
            counters.lastSnapshot = history.snapshot?.taken
        }
        return history
    }
}
