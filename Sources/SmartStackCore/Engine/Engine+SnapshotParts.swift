// The snapshot layout of the engine's inner state: decisions, the learned model, reload schedules, Live
// Activities and timers. Each `write` has its `read`; see Engine+Snapshot.swift for the rules.

extension ByteWriter {
    mutating func decision(_ value: Decision) {
        stack(value.stack)
        int(Int64(value.revision))
        timestamp(value.time)
        array(value.entries) { writer, entry in
            writer.string(entry.instance)
            writer.optional(entry.kind) { $0.kindID($1) }
            writer.int(Int64(entry.position))
            writer.double(entry.score)
            writer.bool(entry.suggested)
            writer.bool(entry.pinned)
            writer.string(entry.reason.rawValue)
            writer.shares(entry.contributions)
        }
    }

    mutating func shares(_ value: SignalShares) {
        for index in 0..<16 { double(value.values[index]) }
    }

    mutating func ranker(_ value: OnlineRanker) {
        array(value.weights) { $0.double($1) }
        array(value.squaredGradients) { $0.double($1) }
        int(Int64(value.updates))
    }

    mutating func lookContext(_ value: LookContext) {
        int(Int64(value.level))
        int(Int64(value.last))
        int(Int64(value.previous))
        int(Int64(value.third))
        int(Int64(value.gap))
    }

    mutating func decayed(_ value: DecayedCount) {
        double(value.value)
        int(value.time)
    }

    mutating func decayedTable<Key: Comparable>(_ table: [Key: DecayedCount], key: (inout ByteWriter, Key) -> Void) {
        count(table.count)
        for name in table.keys.sorted() {
            key(&self, name)
            table[name].map { decayed($0) }
        }
    }

    mutating func usageModel(_ value: UsageModel) {
        array(value.keys) { writer, usage in
            writer.optional(usage.lastUse) { $0.int($1) }
            writer.array(usage.counts) { $0.decayed($1) }
            writer.array(usage.hours) { $0.decayed($1) }
            writer.array(usage.weekdays) { $0.decayed($1) }
            writer.decayed(usage.afterView)
            writer.decayed(usage.afterLookLong)
            writer.decayed(usage.taps)
            writer.decayed(usage.swipesTo)
            writer.decayed(usage.swipesAway)
            writer.decayedTable(usage.contexts) { $0.int(Int64($1)) }
        }
        for app in [value.lastApp, value.previousApp, value.thirdApp] { optional(app) { $0.int(Int64($1)) } }
        for time in [value.lastTime, value.previousTime] { optional(time) { $0.int($1) } }
        let outcomes = value.lookOutcomes.keys.sorted {
            ($0.key, $0.context.level, $0.context.last, $0.context.previous, $0.context.third, $0.context.gap)
                < ($1.key, $1.context.level, $1.context.last, $1.context.previous, $1.context.third, $1.context.gap)
        }
        count(outcomes.count)
        for outcome in outcomes {
            lookContext(outcome.context)
            int(Int64(outcome.key))
            value.lookOutcomes[outcome].map { decayed($0) }
        }
        decayedTable(value.transitions) { $0.int($1) }
        decayedTable(value.transitionTotals) { $0.int(Int64($1)) }
        decayedTable(value.afterViewTransitions) { $0.int($1) }
    }

    mutating func reloadScheduler(_ value: ReloadScheduler) {
        int(Int64(value.budget.capacity))
        array(value.budget.grants) { $0.timestamp($1) }
        optional(value.dueDate) { $0.timestamp($1) }
        optional(value.dueReason) { $0.string($1.rawValue) }
        optional(value.withheldUntil) { $0.timestamp($1) }
        optional(value.withheldReason) { $0.string($1.rawValue) }
    }

    mutating func liveActivities(_ value: LiveActivityRegistry) {
        int(Int64(value.maxPerApp))
        count(value.byApp.count)
        for app in value.byApp.keys.sorted() {
            self.app(app)
            let activities = value.byApp[app] ?? [:]
            count(activities.count)
            for id in activities.keys.sorted() {
                guard let activity = activities[id] else { continue }
                string(activity.id)
                self.app(activity.app)
                strings(activity.attributes)
                strings(activity.contentState)
                timestamp(activity.started)
                timestamp(activity.updated)
                optional(activity.endedExplicitly) { $0.timestamp($1) }
                optional(activity.dismissal) { $0.timestamp($1) }
            }
        }
    }

    mutating func timers(_ value: TimerQueue) {
        // The heap array as it is: its order decides which of two timers due together fires first.
        array(value.heap) { writer, entry in
            writer.int(entry.time)
            writer.int(entry.sequence)
            switch entry.target {
            case .instance(let id):
                writer.byte(0)
                writer.instance(id)
            case .stack(let id):
                writer.byte(1)
                writer.stack(id)
            case .everyStack:
                writer.byte(2)
            }
        }
        int(value.sequence)
    }
}

extension ByteReader {
    mutating func decision() throws(CodecError) -> Decision {
        let stack = try stack()
        let revision = try integer()
        let time = try timestamp()
        var entries: [DecisionEntry] = []
        for _ in 0..<(try count()) {
            let instance = try string()
            let kind = try present() ? try kindID() : nil
            let position = try integer()
            let score = try double()
            let suggested = try bool()
            let pinned = try bool()
            let name = try string()
            guard let reason = DecisionReason(rawValue: name) else { throw CodecError("unknown reason '\(name)'") }
            entries.append(
                DecisionEntry(
                    instance: instance, kind: kind, position: position, score: score, suggested: suggested,
                    pinned: pinned, reason: reason, contributions: try shares()))
        }
        return Decision(stack: stack, revision: revision, time: time, entries: entries)
    }

    mutating func shares() throws(CodecError) -> SignalShares {
        var value = SignalShares()
        for index in 0..<16 { value.values[index] = try double() }
        return value
    }

    mutating func ranker() throws(CodecError) -> OnlineRanker {
        var value = OnlineRanker()
        value.weights = []
        for _ in 0..<(try count()) { value.weights.append(try double()) }
        value.squaredGradients = []
        for _ in 0..<(try count()) { value.squaredGradients.append(try double()) }
        value.updates = try integer()
        guard value.weights.count == Feature.count, value.squaredGradients.count == Feature.count else {
            throw CodecError("ranker of \(value.weights.count) features; this build has \(Feature.count)")
        }
        return value
    }

    mutating func lookContext() throws(CodecError) -> LookContext {
        func int8(_ value: Int64) throws(CodecError) -> Int8 {
            guard let narrow = Int8(exactly: value) else { throw CodecError("\(value) out of range") }
            return narrow
        }
        return LookContext(
            level: try int8(try int()), last: try int32(), previous: try int32(), third: try int32(),
            gap: try int8(try int()))
    }

    mutating func decayed() throws(CodecError) -> DecayedCount {
        var value = DecayedCount()
        value.value = try double()
        value.time = try int()
        return value
    }

    mutating func decayedList(expected: Int) throws(CodecError) -> [DecayedCount] {
        var list: [DecayedCount] = []
        for _ in 0..<(try count()) { list.append(try decayed()) }
        guard list.count == expected else { throw CodecError("\(list.count) counts where \(expected) belong") }
        return list
    }

    mutating func usageModel() throws(CodecError) -> UsageModel {
        var value = UsageModel()
        for _ in 0..<(try count()) {
            var usage = KeyUsage()
            usage.lastUse = try present() ? try int() : nil
            usage.counts = try decayedList(expected: UsageModel.countTaus.count)
            usage.hours = try decayedList(expected: 24)
            usage.weekdays = try decayedList(expected: 7)
            usage.afterView = try decayed()
            usage.afterLookLong = try decayed()
            usage.taps = try decayed()
            usage.swipesTo = try decayed()
            usage.swipesAway = try decayed()
            for _ in 0..<(try count()) {
                let pair = try int32()
                usage.contexts[pair] = try decayed()
            }
            value.keys.append(usage)
        }
        value.lastApp = try present() ? try int32() : nil
        value.previousApp = try present() ? try int32() : nil
        value.thirdApp = try present() ? try int32() : nil
        value.lastTime = try present() ? try int() : nil
        value.previousTime = try present() ? try int() : nil
        for _ in 0..<(try count()) {
            let context = try lookContext()
            let key = try int32()
            value.lookOutcomes[LookOutcomeKey(context: context, key: key)] = try decayed()
        }
        for _ in 0..<(try count()) {
            let pair = try int()
            value.transitions[pair] = try decayed()
        }
        for _ in 0..<(try count()) {
            let app = try int32()
            value.transitionTotals[app] = try decayed()
        }
        for _ in 0..<(try count()) {
            let pair = try int()
            value.afterViewTransitions[pair] = try decayed()
        }
        return value
    }

    mutating func reloadReason() throws(CodecError) -> ReloadReason {
        let name = try string()
        guard let reason = ReloadReason(rawValue: name) else { throw CodecError("unknown reload reason '\(name)'") }
        return reason
    }

    mutating func reloadScheduler() throws(CodecError) -> ReloadScheduler {
        var budget = ReloadBudget(capacity: try integer())
        for _ in 0..<(try count()) { budget.grants.append(try timestamp()) }
        var value = ReloadScheduler(budget: budget)
        value.dueDate = try optionalTimestamp()
        value.dueReason = try present() ? try reloadReason() : nil
        value.withheldUntil = try optionalTimestamp()
        value.withheldReason = try present() ? try reloadReason() : nil
        return value
    }

    mutating func liveActivities() throws(CodecError) -> LiveActivityRegistry {
        var value = LiveActivityRegistry(maxPerApp: try integer())
        for _ in 0..<(try count()) {
            let app = try app()
            var activities: [String: LiveActivity] = [:]
            for _ in 0..<(try count()) {
                let activity = LiveActivity(
                    id: try string(), app: try self.app(), attributes: try strings(), contentState: try strings(),
                    started: try timestamp(), updated: try timestamp(), endedExplicitly: try optionalTimestamp(),
                    dismissal: try optionalTimestamp())
                activities[activity.id] = activity
            }
            value.byApp[app] = activities
        }
        return value
    }

    mutating func timers() throws(CodecError) -> TimerQueue {
        var value = TimerQueue()
        for _ in 0..<(try count()) {
            let time = try int()
            let sequence = try int()
            let target: TimerTarget
            switch try byte() {
            case 0: target = .instance(try instance())
            case 1: target = .stack(try stack())
            case 2: target = .everyStack
            case let tag: throw CodecError("unknown timer target \(tag)")
            }
            value.heap.append((time, sequence, target))
        }
        value.sequence = try int()
        return value
    }
}
