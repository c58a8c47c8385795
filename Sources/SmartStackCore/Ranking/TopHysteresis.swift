#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Stability of the published top: the widget on top keeps its place unless a challenger's behaviour
/// probability beats its own by a margin, and each stack raises that margin for itself while its top changes
/// more often than MRU's would.
///
/// A person glances at the top of a stack; a top that flips with every small change of the model's odds costs
/// attention and is right barely more often than one that waits for clear evidence. The margin is a ratio of
/// probabilities (a difference of log-odds), so it means the same for any stack size and any person: a
/// challenger must be at least 1.3 times as likely as the top to replace it. A top the user saw and then passed
/// over for another widget of the stack (the latest labelled look went elsewhere) is not held: the evidence
/// against it is in.
///
/// How often a fixed margin lets the top change depends on the person (how spread their choices are, how fast
/// the model follows them), so the margin is also **learned per stack, online**: at every look with a target, the
/// stack compares the top it showed with the one it showed at the previous such look, and MRU's top likewise (MRU
/// is the simple ranker whose top changes are the yardstick), and moves an extra margin by `rate` × (1 if its own
/// top changed, − `target` if MRU's did), never below 0 nor above `maxExtra`. While the stack's top changes more
/// than `target` times as often as MRU's, the extra margin grows; when it changes less, it shrinks back to the
/// base. Measured on the development logs (README, "The evaluation", docs/engine.md "Hysteresis of the learned
/// top"), this keeps top changes under 1.25 × MRU's on a phone and below MRU's on desktops, with the phone's hits
/// of a fixed margin of 1.55 and more on the desktops.
enum TopHysteresis {
    /// How much likelier than the seen top a challenger must at least be to take its place: e^margin = 1.3 times.
    /// (It was a fixed 1.55, what `phone.tsv` needed to stay under 1.25 × MRU's top changes; see `target`.)
    static let margin = log(1.3)
    /// The top-change rate a stack keeps to, as a multiple of MRU's: the 1.25 × of issue 14. A person whose top
    /// changes less keeps the base margin (every desktop of the development logs, and phones whose model follows
    /// them steadily); 1.2 kept every week of `phone.tsv` under 1.25 × but cost the whole log 0.0027 hit@1.
    static let target = 1.25
    /// How far one look with a target moves the extra margin (in log-odds): about a hundred looks' evidence to
    /// move it by one.
    static let rate = 0.01
    /// The extra margin's bound: a challenger 4 × 1.3 times as likely as the top always takes its place.
    static let maxExtra = log(4.0)

    /// The margin as a ratio of probabilities, with a stack's extra.
    static func ratio(extra: Double) -> Double { exp(margin + extra) }

    /// The extra margin after a look with a target, given whether the stack's seen top and MRU's top changed
    /// since the previous look with a target.
    static func adjusted(_ extra: Double, ownChanged: Bool, mruChanged: Bool) -> Double {
        let step = (ownChanged ? 1.0 : 0.0) - target * (mruChanged ? 1.0 : 0.0)
        return min(max(extra + rate * step, 0), maxExtra)
    }

    /// The behaviour the published top (`incumbent`, an index among `count` widgets whose behaviour `behaviour`
    /// gives) must have to stay first: just above the best challenger's, when that challenger is likelier but
    /// by less than the margin; `nil` when the incumbent leads already or a challenger wins clearly.
    static func heldBehaviour(
        of incumbent: Int, count: Int, margin: Double = TopHysteresis.margin, _ behaviour: (Int) -> Double
    ) -> Double? {
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
    /// challenger's) unless a challenger beats it by `TopHysteresis.margin` plus the stack's learned extra
    /// (`StackState.holdExtra`); before the first look nothing is
    /// held (what was published meanwhile depends on when the service published, not on the events). A top that
    /// is not one of the stack's widgets (a
    /// suggestion, a Live Activity) holds nothing, nor does a top the user went past to another widget after the
    /// latest look with a target (`previousLookTarget`); developer mode lifts the rule as it lifts the other
    /// stability limits. Only the learned model's order is held: a simple ranker that orders the stack instead
    /// (`RankerSelector`) keeps its own order exactly. Returns the index of the widget it held, if any.
    @discardableResult
    func holdPublishedTop(of state: StackState, standings: inout [WidgetStanding]) -> Int? {
        guard !state.configuration.developerMode, let top = state.seenTop,
            let incumbent = state.instances.firstIndex(where: { $0.rawValue == top }),
            state.previousLookTarget.map({ $0 == state.keys[incumbent] }) ?? true,
            let held = TopHysteresis.heldBehaviour(
                of: incumbent, count: standings.count, margin: TopHysteresis.margin + state.holdExtra,
                { standings[$0].behaviour })
        else { return nil }
        // The probabilities still sum to 1 (the interface promises it): the others are scaled down with the raised
        // incumbent, which is then set just above the best of them again (a division could round the two equal, and
        // a tie goes to the user's order).
        let total = standings.indices.reduce(0.0) { $0 + ($1 == incumbent ? held : standings[$1].behaviour) }
        var best = 0.0
        for index in standings.indices where index != incumbent {
            standings[index].behaviour /= total
            best = max(best, standings[index].behaviour)
        }
        standings[incumbent].behaviour = max(held / total, best.nextUp)
        return incumbent
    }
}
