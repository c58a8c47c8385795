/// Why the service asks a provider for a new timeline.
public enum ReloadReason: String, Hashable, Sendable {
    /// The timeline's last entry became current (policy `atEnd`).
    case timelineEnded
    /// The timeline's `after(date)` policy date came.
    case policyDate
    /// The provider called `ReloadTimelines`.
    case providerRequest
    /// The user interacted with the widget; exempt from the budget.
    case userInteraction
    /// The provider's app came to the foreground; exempt from the budget.
    case appForeground

    /// Whether a reload for this reason is granted without consuming budget (DESIGN "Reload policy and budget").
    public var isExempt: Bool { self == .userInteraction || self == .appForeground }
}

/// What happened to one reload.
public enum ReloadOutcome: Hashable, Sendable {
    /// The reload was sent to the provider at that time.
    case requested(at: Timestamp, reason: ReloadReason)
    /// The budget was spent; the reload is pending until that time.
    case withheld(until: Timestamp, reason: ReloadReason)
}

/// A reload sent to the provider and not yet answered by a timeline.
public struct OutstandingReload: Hashable, Sendable {
    /// When it was sent.
    public var at: Timestamp
    /// Why.
    public var reason: ReloadReason

    public init(at: Timestamp, reason: ReloadReason) {
        self.at = at
        self.reason = reason
    }
}

/// When one widget instance's timeline is reloaded: its policy's due date, explicit requests and its budget.
///
/// A state machine without I/O: callers feed it submissions, requests and the passing of time, and send the
/// `requested` outcomes to the provider. At most one reload is pending (withheld) at a time: later requests
/// that find the budget spent merge into it, since one reload serves them all.
public struct ReloadScheduler: Hashable, Sendable {
    /// The instance's rolling budget.
    public var budget: ReloadBudget
    /// When the current timeline's policy asks for a reload; `nil` when none is due.
    public internal(set) var dueDate: Timestamp?
    /// Why `dueDate` is due.
    public internal(set) var dueReason: ReloadReason?
    /// When the pending withheld reload can be granted; `nil` when none is pending.
    public internal(set) var withheldUntil: Timestamp?
    /// Why the pending reload was asked for.
    public internal(set) var withheldReason: ReloadReason?
    /// The latest reload requested that no timeline answered yet: when it was sent, and why. A provider that was
    /// not watching then (its app not running, the service just started) gets it when it starts watching.
    public internal(set) var outstanding: OutstandingReload?

    /// A scheduler with nothing due, spending `budget`.
    public init(budget: ReloadBudget = ReloadBudget()) {
        self.budget = budget
    }

    /// The policy's reload, if one is due.
    public var due: (date: Timestamp, reason: ReloadReason)? {
        guard let dueDate, let dueReason else { return nil }
        return (dueDate, dueReason)
    }

    /// The withheld reload, if one is pending.
    public var withheld: (until: Timestamp, reason: ReloadReason)? {
        guard let withheldUntil, let withheldReason else { return nil }
        return (withheldUntil, withheldReason)
    }

    /// Takes the due date from a newly submitted timeline's policy, submitted at `t`.
    ///
    /// A new timeline is the answer to any reload asked for before it, so a pending withheld reload is dropped.
    /// A due date before `t` is due at `t`: the reload it asks for happens now, and is counted now, not in a past
    /// window of the budget (a provider could otherwise gather a day's budget for every day it dates back).
    public mutating func timelineSubmitted(_ timeline: Timeline, at t: Timestamp) {
        clearWithheld()
        outstanding = nil
        switch timeline.policy {
        case .atEnd: setDue(max(timeline.lastEntryDate, t), .timelineEnded)
        case .after(let date): setDue(max(date, t), .policyDate)
        case .never: setDue(nil, nil)
        }
    }

    /// An explicit reload request at `t`.
    ///
    /// Exempt reasons are granted without consuming budget; the others consume budget or are withheld until it
    /// frees up, and stay pending until ``advance(to:)`` grants them. A granted reload also answers a pending one
    /// and a due date that has already come.
    public mutating func request(at t: Timestamp, reason: ReloadReason) -> ReloadOutcome {
        if reason.isExempt || budget.consume(at: t) { return granted(at: t, reason: reason) }
        return withhold(at: t, reason: reason)
    }

    /// Fires what has come due up to `t`, in time order, and returns what happened.
    ///
    /// The policy's reload fires once per due date, consuming budget at that date (or is withheld); a withheld
    /// reload is granted once its time has come. Each uses the time it fell due, so the result does not depend on
    /// how often the caller advances. While the provider's app is in the foreground (`foreground`), a reload that
    /// comes due is exempt, as an explicit request then is: it is granted without consuming budget (DESIGN "Reload
    /// policy and budget"), under its own reason.
    public mutating func advance(to t: Timestamp, foreground: Bool = false) -> [ReloadOutcome] {
        var outcomes: [ReloadOutcome] = []
        while true {
            let dueNow = dueDate.flatMap { $0 <= t ? $0 : nil }
            let withheldNow = withheldUntil.flatMap { $0 <= t ? $0 : nil }
            if let until = withheldNow, let reason = withheldReason, dueNow.map({ until <= $0 }) ?? true {
                // The pending reload's slot has come; it only misses if the capacity shrank meanwhile, and then
                // its new time is strictly later, so the loop makes progress.
                if foreground || budget.consume(at: until) {
                    outcomes.append(granted(at: until, reason: reason))
                } else {
                    let later = budget.nextAvailable(at: until)
                    withheldUntil = later
                    outcomes.append(.withheld(until: later, reason: reason))
                }
            } else if let date = dueNow, let reason = dueReason {
                setDue(nil, nil)
                outcomes.append(
                    foreground || budget.consume(at: date)
                        ? granted(at: date, reason: reason) : withhold(at: date, reason: reason))
            } else {
                return outcomes
            }
        }
    }

    /// The provider's app came to the foreground at `t`: a reload withheld for want of budget is granted now, exempt
    /// (the need it was asked for is still there, and the app in front may spend nothing to meet it).
    public mutating func appCameToForeground(at t: Timestamp) -> ReloadOutcome? {
        guard withheldUntil != nil, withheldReason != nil else { return nil }
        return granted(at: t, reason: .appForeground)
    }

    /// The earliest time, no earlier than `t`, at which ``advance(to:)`` has something to do; `nil` when nothing
    /// is due or pending. After `advance(to: t)` it is later than `t`.
    public func nextEvent(after t: Timestamp) -> Timestamp? {
        let times = [dueDate, withheldUntil].compactMap { $0 }
        return times.min().map { max($0, t) }
    }

    /// The budget at `t`.
    public func budgetState(at t: Timestamp) -> BudgetState { budget.state(at: t) }

    /// Records a reload sent at `t`: it answers the pending reload and a due date that has come, so neither fires
    /// again for the same need.
    private mutating func granted(at t: Timestamp, reason: ReloadReason) -> ReloadOutcome {
        clearWithheld()
        if let dueDate, dueDate <= t { setDue(nil, nil) }
        outstanding = OutstandingReload(at: t, reason: reason)
        return .requested(at: t, reason: reason)
    }

    /// Makes `reason` pending until the budget frees up, merging into a pending reload if there is one.
    private mutating func withhold(at t: Timestamp, reason: ReloadReason) -> ReloadOutcome {
        let until = budget.nextAvailable(at: t)
        if withheldUntil == nil || withheldReason == nil {
            withheldUntil = until
            withheldReason = reason
        }
        return .withheld(until: withheldUntil ?? until, reason: reason)
    }

    private mutating func clearWithheld() {
        withheldUntil = nil
        withheldReason = nil
    }

    private mutating func setDue(_ date: Timestamp?, _ reason: ReloadReason?) {
        dueDate = date
        dueReason = reason
    }
}
