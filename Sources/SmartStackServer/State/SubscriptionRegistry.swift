public import SmartStackCore

/// The open `Subscribe` and `WatchReloads` streams, each with a bounded queue.
///
/// The owner yields into each stream without waiting; a stream whose queue is full (its client stopped
/// reading) is finished and removed, so a slow client never slows the engine or other clients.
struct SubscriptionRegistry {
    struct Subscriber {
        /// The stacks it follows; `nil` follows every stack, including ones configured later.
        var stacks: Set<StackID>?
        var continuation: AsyncStream<Decision>.Continuation
    }

    struct Watcher {
        var app: AppID
        var continuation: AsyncStream<EngineEffect>.Continuation
    }

    private var nextID: UInt64 = 0
    private(set) var subscribers: [UInt64: Subscriber] = [:]
    private(set) var watchers: [UInt64: Watcher] = [:]

    var subscriberCount: Int { subscribers.count }
    var watcherCount: Int { watchers.count }
    var count: Int { subscribers.count + watchers.count }

    mutating func add(_ subscriber: Subscriber) -> UInt64 {
        nextID += 1
        subscribers[nextID] = subscriber
        return nextID
    }

    mutating func add(_ watcher: Watcher) -> UInt64 {
        nextID += 1
        watchers[nextID] = watcher
        return nextID
    }

    mutating func remove(_ id: UInt64) {
        subscribers.removeValue(forKey: id)?.continuation.finish()
        watchers.removeValue(forKey: id)?.continuation.finish()
    }

    /// Sends each decision to the subscribers of its stack; returns how many subscribers were cut off.
    mutating func send(_ decisions: [Decision]) -> Int {
        guard !decisions.isEmpty, !subscribers.isEmpty else { return 0 }
        var overflowed: [UInt64] = []
        for (id, subscriber) in subscribers {
            for decision in decisions where subscriber.stacks?.contains(decision.stack) ?? true {
                if case .dropped = subscriber.continuation.yield(decision) {
                    overflowed.append(id)
                    break
                }
            }
        }
        for id in overflowed { remove(id) }
        return overflowed.count
    }

    /// Sends reload effects to the watchers of their apps; returns how many watchers were cut off.
    mutating func send(_ effects: [EngineEffect]) -> Int {
        guard !effects.isEmpty, !watchers.isEmpty else { return 0 }
        var overflowed: [UInt64] = []
        for (id, watcher) in watchers {
            for effect in effects where effect.reloadApp == watcher.app {
                if case .dropped = watcher.continuation.yield(effect) {
                    overflowed.append(id)
                    break
                }
            }
        }
        for id in overflowed { remove(id) }
        return overflowed.count
    }

    /// Ends every stream (at shutdown).
    mutating func finishAll() {
        for id in Array(subscribers.keys) + Array(watchers.keys) { remove(id) }
    }
}

extension EngineEffect {
    /// The app a reload effect is for; `nil` for other effects.
    var reloadApp: AppID? {
        switch self {
        case .reloadRequested(_, let kind, _, _), .reloadWithheld(_, let kind, _, _, _): kind.app
        case .timelineWarnings: nil
        }
    }
}

/// An open stream of a host: its first replies, the stream of later ones, and the id to close it with.
public struct HostSubscription<Element: Sendable>: Sendable {
    public var id: UInt64
    /// What the stream starts with (each followed stack's current decision, for `Subscribe`).
    public var initial: [Element]
    public var stream: AsyncStream<Element>
    /// Fires when the stream ends for any reason — including being cut off while its reader is blocked —
    /// so the connection can stop at once instead of at its next write.
    public var ended: OneShotSignal
}

extension EngineHost {
    /// Opens a subscription to the published decisions of `stacks` (every stack when `nil`).
    ///
    /// Its first elements are the current decisions of those stacks, taken in the same isolation as the
    /// registration, so no decision published in between can be missed or duplicated.
    public func subscribe(stacks: [StackID]?) throws(HostError) -> HostSubscription<Decision> {
        guard !stopping else { throw .stopping }
        guard subscriptions.count < limits.maxSubscriptions else {
            throw .core(.limitExceeded(limit: "maxSubscriptions", maximum: limits.maxSubscriptions))
        }
        tick()
        let ids = stacks ?? engine.stackIDs
        var initial: [Decision] = []
        for id in ids {
            guard engine.configuration(of: id) != nil else { throw .core(.notFound(kind: "stack", id: id.rawValue)) }
            if let decision = engine.published(id) {
                initial.append(decision)
            } else if let decision = try? engine.evaluate(stack: id, at: clock.now()) {
                initial.append(decision)
            }
        }
        let (stream, continuation) = AsyncStream.makeStream(
            of: Decision.self, bufferingPolicy: .bufferingOldest(limits.subscriberQueue))
        let ended = OneShotSignal()
        continuation.onTermination = { _ in ended.fire() }
        let id = subscriptions.add(.init(stacks: stacks.map(Set.init), continuation: continuation))
        return HostSubscription(id: id, initial: initial, stream: stream, ended: ended)
    }

    /// Opens a stream of an app's reload requests (and withheld reloads).
    public func watchReloads(app: AppID) throws(HostError) -> HostSubscription<EngineEffect> {
        guard !stopping else { throw .stopping }
        guard subscriptions.count < limits.maxSubscriptions else {
            throw .core(.limitExceeded(limit: "maxSubscriptions", maximum: limits.maxSubscriptions))
        }
        let (stream, continuation) = AsyncStream.makeStream(
            of: EngineEffect.self, bufferingPolicy: .bufferingOldest(limits.subscriberQueue))
        let ended = OneShotSignal()
        continuation.onTermination = { _ in ended.fire() }
        let id = subscriptions.add(.init(app: app, continuation: continuation))
        return HostSubscription(id: id, initial: [], stream: stream, ended: ended)
    }

    /// Closes a stream (its client went away or the call ended).
    public func closeSubscription(_ id: UInt64) {
        subscriptions.remove(id)
    }

    /// Sends what the engine published to the streams that follow it.
    /// `reported`: the decisions as the journal gets them (each for its engine time), when not `decisions`.
    func fanOut(decisions: [Decision], effects: [EngineEffect], reported: [Decision]? = nil) {
        statistics.decisionsPublished += decisions.count
        reporter.published(decisions: reported ?? decisions, effects: effects)
        for effect in effects { if case .reloadRequested = effect { statistics.reloadsRequested += 1 } }
        let cut = subscriptions.send(decisions) + subscriptions.send(effects)
        if cut > 0 {
            statistics.subscribersCutOff += cut
            logger.warning("cut off slow subscribers", metadata: ["count": "\(cut)"])
        }
    }
}
