/// Stability of the published top: the widget on top keeps its place unless a challenger's behaviour
/// probability beats its own by a margin.
///
/// A person glances at the top of a stack; a top that flips with every small change of the model's odds costs
/// attention and is right barely more often than one that waits for clear evidence. The margin is a difference
/// of probabilities: holding the top while a challenger is likelier by `d` costs `d` of an expected hit at the
/// top (the probabilities are the model's, trained on the same log-likelihood), so holding below a fixed
/// difference trades top changes for hits at one fixed price, whatever the stack's size or the model's
/// confidence: a change is worth at most a tenth of a hit. (The margin was a ratio of probabilities, 1.45: it
/// held a 0.50 top against a 0.70 challenger, a fifth of a hit, and let a 0.05 top go to a 0.08 one. Measured
/// in the README, "The evaluation", and docs/engine.md "Hysteresis of the learned top": at the same or fewer top
/// changes the difference gives more hits on both logs.) Probabilities are shares, with no unit and no scale.
enum TopHysteresis {
    /// How much likelier than the seen top a challenger must be to take its place: 0.1 in probability, one
    /// round value (top changes on `phone.tsv` 1.24 × MRU's, on `desktop.tsv` 0.73 ×).
    static let margin = 0.1

    /// The behaviour the published top (`incumbent`, an index among `count` widgets whose behaviour `behaviour`
    /// gives) must have to stay first: just above the best challenger's, when that challenger is likelier but
    /// by less than the margin; `nil` when the incumbent leads already or a challenger wins clearly.
    static func heldBehaviour(of incumbent: Int, count: Int, _ behaviour: (Int) -> Double) -> Double? {
        guard incumbent >= 0, incumbent < count else { return nil }
        let own = behaviour(incumbent)
        var best = own
        for other in 0..<count where other != incumbent { best = max(best, behaviour(other)) }
        guard best > own, best - own < margin else { return nil }
        return best.nextUp
    }
}

extension Engine {
    /// Keeps the stack's published top first (its behaviour raised just above the best challenger's) unless a
    /// challenger beats it by `TopHysteresis.margin`. A top that is not one of the stack's widgets (a
    /// suggestion, a Live Activity) holds nothing, and developer mode lifts the rule as it lifts the other
    /// stability limits. Only the learned model's order is held: a simple ranker that orders the stack instead
    /// (`RankerSelector`) keeps its own order exactly.
    func holdPublishedTop(of state: StackState, standings: inout [WidgetStanding]) {
        guard !state.configuration.developerMode, let top = state.seenTop ?? state.published?.top,
            let incumbent = state.instances.firstIndex(where: { $0.rawValue == top }),
            let held = TopHysteresis.heldBehaviour(of: incumbent, count: standings.count, { standings[$0].behaviour })
        else { return }
        standings[incumbent].behaviour = held
    }
}
