public import SmartStackCore

/// The open `Subscribe` and `WatchReloads` streams, each with a bounded queue.
///
/// The owner yields into each stream without waiting; a stream whose queue is full (its client stopped
/// reading) is finished and removed, so a slow client never slows the engine or other clients.
struct SubscriptionRegistry {
    struct Subscriber {
        /// How its decisions reach it.
        enum Delivery {
            /// Into a stream a task reads (tests, in-process callers).
            case stream(AsyncStream<Decision>.Continuation)
            /// Pushed from the loop to its connection: `send` is false once it cannot take more (cut off);
            /// `close` drops it at once, `finish` ends it after what waits (shutdown).
            case push(send: @Sendable (Decision) -> Bool, close: @Sendable () -> Void, finish: @Sendable () -> Void)
        }

        /// The stacks it follows; `nil` follows every stack, including ones configured later.
        var stacks: Set<StackID>?
        var delivery: Delivery

        init(stacks: Set<StackID>?, continuation: AsyncStream<Decision>.Continuation) {
            self.stacks = stacks
            self.delivery = .stream(continuation)
        }

        init(stacks: Set<StackID>?, delivery: Delivery) {
            self.stacks = stacks
            self.delivery = delivery
        }

        /// Sends one decision; false when the subscriber is to be cut off.
        func send(_ decision: Decision) -> Bool {
            switch delivery {
            case .stream(let continuation):
                if case .dropped = continuation.yield(decision) { return false }
                return true
            case .push(let send, _, _):
                return send(decision)
            }
        }

        /// Ends it: `graceful` after what waits for it (shutdown), else at once.
        func finish(graceful: Bool) {
            switch delivery {
            case .stream(let continuation): continuation.finish()
            case .push(_, let close, let finish): graceful ? finish() : close()
            }
        }
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

    mutating func remove(_ id: UInt64, graceful: Bool = false) {
        subscribers.removeValue(forKey: id)?.finish(graceful: graceful)
        watchers.removeValue(forKey: id)?.continuation.finish()
    }

    /// Sends each decision to the subscribers of its stack; returns how many subscribers were cut off.
    mutating func send(_ decisions: [Decision]) -> Int {
        guard !decisions.isEmpty, !subscribers.isEmpty else { return 0 }
        var overflowed: [UInt64] = []
        for (id, subscriber) in subscribers {
            for decision in decisions where subscriber.stacks?.contains(decision.stack) ?? true {
                if !subscriber.send(decision) {
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

    /// Ends the reload watches of `app` (its claim was released: they were opened by the uid that held it).
    mutating func endWatches(of app: AppID) {
        for (id, watcher) in watchers where watcher.app == app { remove(id) }
    }

    /// Ends every stream (at shutdown).
    mutating func finishAll() {
        for id in Array(subscribers.keys) + Array(watchers.keys) { remove(id, graceful: true) }
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
        let initial = try initialDecisions(stacks)
        let (stream, continuation) = AsyncStream.makeStream(
            of: Decision.self, bufferingPolicy: .bufferingOldest(limits.subscriberQueue))
        let ended = OneShotSignal()
        continuation.onTermination = { _ in ended.fire() }
        let id = subscriptions.add(.init(stacks: stacks.map(Set.init), continuation: continuation))
        scheduleWakeUp()
        return HostSubscription(id: id, initial: initial, stream: stream, ended: ended)
    }

    /// The current decisions of `stacks` (every stack when `nil`) a new subscription starts with; checks the limits.
    private func initialDecisions(_ stacks: [StackID]?) throws(HostError) -> [Decision] {
        try refuseWhenStopping()
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
            } else if let decision = try? engine.evaluate(stack: id, at: serviceTime()) {
                initial.append(decision)
            }
        }
        return initial
    }

    /// Opens a stream of an app's reload requests (and withheld reloads).
    public func watchReloads(app: AppID) throws(HostError) -> HostSubscription<EngineEffect> {
        try refuseWhenStopping()
        guard subscriptions.count < limits.maxSubscriptions else {
            throw .core(.limitExceeded(limit: "maxSubscriptions", maximum: limits.maxSubscriptions))
        }
        // First the reloads sent that no timeline answered yet (the app may not have been watching then: its
        // provider not running, the service just started, a request made on another connection a moment before),
        // taken in the same isolation as the registration, so none is missed or sent twice.
        let outstanding = engine.outstandingReloads(of: app)
        let (stream, continuation) = AsyncStream.makeStream(
            of: EngineEffect.self, bufferingPolicy: .bufferingOldest(limits.subscriberQueue + outstanding.count))
        let ended = OneShotSignal()
        continuation.onTermination = { _ in ended.fire() }
        for effect in outstanding { continuation.yield(effect) }
        let id = subscriptions.add(.init(app: app, continuation: continuation))
        return HostSubscription(id: id, initial: [], stream: stream, ended: ended)
    }

    /// Opens a subscription whose decisions are pushed from the loop (`send`, false once the subscriber is to be
    /// cut off; `close` drops it, `finish` ends it after what waits): returns its id and the current decisions it
    /// starts with, taken in the same isolation as the registration (see `subscribe(stacks:)`).
    public func subscribe(
        stacks: [StackID]?, send: @escaping @Sendable (Decision) -> Bool, close: @escaping @Sendable () -> Void,
        finish: @escaping @Sendable () -> Void
    ) throws(HostError) -> (id: UInt64, initial: [Decision]) {
        let initial = try initialDecisions(stacks)
        let id = subscriptions.add(
            .init(stacks: stacks.map(Set.init), delivery: .push(send: send, close: close, finish: finish)))
        // A subscriber is someone to push what time alone changes to (`scheduleWakeUp`).
        scheduleWakeUp()
        return (id, initial)
    }

    /// Closes a stream (its client went away or the call ended).
    public func closeSubscription(_ id: UInt64) {
        subscriptions.remove(id)
    }

    /// Sends what the engine published to the streams that follow it.
    /// `reported`: the decisions as the journal gets them (each for its engine time), when not `decisions`.
    func fanOut(decisions: [Decision], effects: [EngineEffect], reported: [Decision]? = nil) {
        // Most events (a donation) change nothing to send: no reporter or registry is touched for them. (`reported`
        // is drawn from `decisions`.)
        guard !decisions.isEmpty || !effects.isEmpty else { return }
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
