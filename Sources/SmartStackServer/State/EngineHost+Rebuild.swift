import Dispatch
import SmartStackCore
import SmartStackStore

extension EngineHost {
    // MARK: Rebuilding without donations (deletion, retention)

    /// Rebuilds the engine as if the donations `doomed` selects had never been made, and removes them from the
    /// history, the donation index and the log (with a snapshot of the rebuilt engine, in one transaction).
    ///
    /// The long part, replaying the history, runs on another thread from a copy of it while the event loop goes
    /// on serving calls; the events that arrived meanwhile are then replayed here onto the rebuilt engine, which
    /// takes over (revisions counting on from the live engine's). With a million donations the loop stalled
    /// ~0.6 s when it did the whole replay itself. Callers hold the rebuild lock. Returns nil when the service
    /// began stopping meanwhile (nothing changed).
    func rebuild(without doomed: @escaping @Sendable (Donation) -> Bool) async -> (
        removed: [Donation], ticket: CommitTicket
    )? {
        let base = history
        let epoch = historyEpoch
        let settings = engine.settings
        var rebuilt = await Self.offLoop {
            var rebuilt = Engine(settings: settings)
            rebuilt.take(base, excluding: doomed)
            return rebuilt
        }
        guard !stopping else { return nil }
        if historyEpoch == epoch {
            // Only appended to meanwhile: take what came since the copy.
            rebuilt.take(history[base.count...], excluding: doomed)
            logger.debug(
                "rebuilt off the loop", metadata: ["events": "\(base.count)", "arrived meanwhile": "\(history.count - base.count)"])
        } else {
            // Replaced meanwhile (a rollback to the stored state after a failed commit): start over, here.
            rebuilt = Engine(settings: settings)
            rebuilt.take(history, excluding: doomed)
        }
        let changed = engine.adopt(rebuilt)
        engineChanged()
        let removed = forget(doomed)
        let ticket = log.delete(donations: removed.map { ($0.app, $0.id) }, engine: engine)
        fanOut(decisions: changed, effects: [])
        scheduleWakeUp()
        return (removed, ticket)
    }

    /// Waits until no other rebuild runs, then holds the lock (deletions and retention sweeps take turns).
    func lockRebuild() async {
        while rebuilding {
            await withCheckedContinuation { rebuildWaiters.append($0) }
        }
        rebuilding = true
    }

    func unlockRebuild() {
        rebuilding = false
        if !rebuildWaiters.isEmpty { rebuildWaiters.removeFirst().resume() }
    }

    /// Runs `work` on a global queue's thread and returns its result.
    static func offLoop<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: work()) }
        }
    }
}
