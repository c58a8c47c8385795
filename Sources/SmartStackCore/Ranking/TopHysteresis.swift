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
/// challenger must be 1.45 times as likely as the top to replace it. Measured on the development logs (README,
/// "The evaluation", docs/engine.md "Hysteresis of the learned top"), this keeps top changes below 1.25 × MRU's
/// on a phone and well below MRU's on desktops, for about 0.007 hit@1 on the phone and about 0.004 on desktops.
enum TopHysteresis {
    /// How much likelier than the seen top a challenger must be to take its place: e^margin = 1.45 times. (1.4
    /// left `phone.tsv` at 1.2501 × MRU's top changes, and at 1.2523 × once the learner's first steps were damped.)
    static let margin = log(1.45)

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
