#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Stability of the published top: the widget on top keeps its place unless a challenger's behaviour
/// probability beats its own by a margin.
///
/// A person glances at the top of a stack; a top that flips with every small change of the model's odds costs
/// attention and is right barely more often than one that waits for clear evidence. The margin is a ratio of
/// probabilities (a difference of log-odds), so it means the same for any stack size and any person: a
/// challenger must be 1.55 times as likely as the top to replace it. A top the user saw and then passed over for
/// another widget of the stack (the latest labelled look went elsewhere) is not held: the evidence against it is
/// in. Measured on the development logs (README, "The evaluation", docs/engine.md "Hysteresis of the learned
/// top"), this keeps top changes below 1.25 × MRU's on a phone and well below MRU's on desktops.
enum TopHysteresis {
    /// How much likelier than the seen top a challenger must be to take its place: e^margin = 1.55 times. (1.4
    /// left `phone.tsv` at 1.2501 × MRU's top changes, and at 1.2523 × once the learner's first steps were damped;
    /// 1.45 at 1.2453 × until a passed-over top stopped being held, which left 1.45 at 1.2592 × and 1.5 at 1.2505 ×.)
    static let margin = log(1.55)

    /// The behaviour the published top (`incumbent`, an index among `count` widgets whose behaviour `behaviour`
    /// gives) must have to stay first: just above the best challenger's, when that challenger is likelier but
    /// by less than the margin; `nil` when the incumbent leads already or a challenger wins clearly.
    static func heldBehaviour(of incumbent: Int, count: Int, _ behaviour: (Int) -> Double) -> Double? {
        guard incumbent >= 0, incumbent < count else { return nil }
        let own = behaviour(incumbent)
        var best = own
        for other in 0..<count where other != incumbent { best = max(best, behaviour(other)) }
        guard best > own, own > 0, log(best / own) < margin else { return nil }
        return best.nextUp
    }
}

extension Engine {
    /// Keeps the top the user saw at the latest look first (its behaviour raised just above the best
    /// challenger's) unless a challenger beats it by `TopHysteresis.margin`; before the first look nothing is
    /// held (what was published meanwhile depends on when the service published, not on the events). A top that
    /// is not one of the stack's widgets (a
    /// suggestion, a Live Activity) holds nothing, nor does a top the user went past to another widget after the
    /// latest look with a target (`previousLookTarget`); developer mode lifts the rule as it lifts the other
    /// stability limits. Only the learned model's order is held: a simple ranker that orders the stack instead
    /// (`RankerSelector`) keeps its own order exactly.
    func holdPublishedTop(of state: StackState, standings: inout [WidgetStanding]) {
        guard !state.configuration.developerMode, let top = state.seenTop,
            let incumbent = state.instances.firstIndex(where: { $0.rawValue == top }),
            state.previousLookTarget.map({ $0 == state.keys[incumbent] }) ?? true,
            let held = TopHysteresis.heldBehaviour(of: incumbent, count: standings.count, { standings[$0].behaviour })
        else { return }
        standings[incumbent].behaviour = held
    }
}
