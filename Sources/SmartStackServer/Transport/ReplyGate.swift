import NIOCore

/// What a queued reply waits for before it is written (the commit of the call's event), as the transport sees it:
/// opaque, open or not yet, and able to say when it opens. The store's `CommitWaiter` is one (the dispatcher's
/// side); the transport knows nothing of the store.
public protocol ReplyGate: AnyObject, Sendable {
    /// Whether it is open: the reply waiting for it can be made and written.
    var isOpen: Bool { get }
    /// Runs `action`, on any thread, once it is open (at once when it already is).
    func whenOpen(_ action: @escaping @Sendable () -> Void)
}

/// What waits on the event loop for a gate to open: a connection whose first queued reply waits for it.
protocol GateWatcher: AnyObject {
    /// The gate with this identifier opened (on the event loop).
    func gateOpened(_ gate: ObjectIdentifier)
}

/// Tells the connections of one event loop when gates open: whatever opens a gate (the store's writer) hops to the
/// loop once per gate, however many connections wait for it.
///
/// A connection waits as itself, not as a closure: a durable call's reply then costs no allocation to wait (a closure
/// capturing the connection weakly was an allocation and a weak reference per reply). The notifier holds the
/// connections until their gate opens, which a commit or its failure does; a connection that closed meanwhile has
/// nothing to write when told.
///
/// Only used on its event loop (hence `@unchecked Sendable`: it is captured by the hop back to the loop).
final class GateNotifier: @unchecked Sendable {
    let eventLoop: any EventLoop
    private var waiting: [ObjectIdentifier: [any GateWatcher]] = [:]

    init(eventLoop: any EventLoop) { self.eventLoop = eventLoop }

    /// Tells `watcher` on the event loop once `gate` is open.
    func notify(when gate: any ReplyGate, _ watcher: any GateWatcher) {
        eventLoop.assertInEventLoop()
        let key = ObjectIdentifier(gate)
        if waiting[key] != nil {
            waiting[key, default: []].append(watcher)
            return
        }
        // The gate stays alive while a connection holds it, so its identifier is not reused meanwhile.
        waiting[key] = [watcher]
        gate.whenOpen { [self] in eventLoop.execute { self.fire(key) } }
    }

    private func fire(_ key: ObjectIdentifier) {
        for watcher in waiting.removeValue(forKey: key) ?? [] { watcher.gateOpened(key) }
    }
}
