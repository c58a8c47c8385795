public import SmartStackStore

/// A commit is what a recording call's reply waits for on its connection.
extension CommitWaiter: ReplyGate {
    public var isOpen: Bool { outcome != nil }

    public func whenOpen(_ action: @escaping @Sendable () -> Void) { whenResolved { _ in action() } }

    /// The outcome a reply waiting for this commit is made from, once its gate opened (a failure if, against the
    /// gate's word, none is known).
    var settledOutcome: Result<Void, StoreFailure> {
        outcome ?? .failure(StoreFailure(reason: "the commit's outcome is unknown"))
    }
}

extension CommitTicket {
    /// The answer to a call once this ticket is stored: at once when its outcome is known, else when its commit
    /// resolves; `complete` gets the outcome.
    func answer(_ complete: @escaping (Result<Void, StoreFailure>) -> CallOutcome) -> ImmediateOutcome {
        if let outcome { return .done(complete(outcome)) }
        guard let waiter else { return .done(complete(.success(()))) }
        return .waiting(for: waiter) { complete(waiter.settledOutcome) }
    }
}
