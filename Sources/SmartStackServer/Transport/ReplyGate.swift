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

/// Tells the connections of one event loop when gates open: whatever opens a gate (the store's writer) hops to the
/// loop once per gate, however many connections wait for it.
///
/// Only used on its event loop (hence `@unchecked Sendable`: it is captured by the hop back to the loop).
final class GateNotifier: @unchecked Sendable {
    let eventLoop: any EventLoop
    private var waiting: [ObjectIdentifier: [() -> Void]] = [:]

    init(eventLoop: any EventLoop) { self.eventLoop = eventLoop }

    /// Runs `action` on the event loop once `gate` is open.
    func notify(when gate: any ReplyGate, _ action: @escaping () -> Void) {
        eventLoop.assertInEventLoop()
        let key = ObjectIdentifier(gate)
        if waiting[key] != nil {
            waiting[key, default: []].append(action)
            return
        }
        // The gate stays alive while a connection holds it, so its identifier is not reused meanwhile.
        waiting[key] = [action]
        gate.whenOpen { [self] in eventLoop.execute { self.fire(key) } }
    }

    private func fire(_ key: ObjectIdentifier) {
        for action in waiting.removeValue(forKey: key) ?? [] { action() }
    }
}
