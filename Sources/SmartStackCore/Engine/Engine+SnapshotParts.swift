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
            writer.optional(entry.liveActivity) { writer, live in
                writer.liveActivity(live.activity)
                writer.string(live.state.rawValue)
            }
        }
    }

    mutating func shares(_ value: SignalShares) {
        for index in 0..<SignalShares.capacity { double(value.share(at: index)) }
    }

    /// The ranked-with average is stored too (not recomputed), so a restored stack scores bit for bit alike.
    mutating func ranker(_ value: OnlineRanker) {
        string(value.prior.id)
        array(value.prior.weights) { $0.double($1) }
        let vectors = [
            value.weights, value.fastWeights, value.slowWeights, value.fastSquaredGradients, value.slowSquaredGradients,
        ]
        for vector in vectors {
            array(vector) { $0.double($1) }
        }
        int(Int64(value.updates))
    }

    /// Every ranker's performance, in `StackRanker` order.
    mutating func rankerSelector(_ value: RankerSelector) {
        count(StackRanker.allCases.count)
        for ranker in StackRanker.allCases { double(value.performance(of: ranker)) }
    }

    mutating func lookContext(_ value: LookContext) {
        int(Int64(value.last))
        int(Int64(value.previous))
        int(Int64(value.third))
        int(Int64(value.level))
        int(Int64(value.gap))
    }

    /// A count table's slots as they lie (probe order and iteration order depend on it), then its count.
    mutating func countTable<Key>(_ table: CountTable<Key>, key: (inout ByteWriter, Key) -> Void) {
        array(table.slots) { writer, slot in
            key(&writer, slot.key)
            writer.double(slot.sum)
        }
        count(table.count)
    }

    mutating func usageModel(_ value: UsageModel) {
        int(value.clock.reference)
        int(value.clock.latest)
        bool(value.clock.started)
        array(value.counters) { $0.double($1) }
        array(value.lastUses) { $0.int($1) }
        for app in [value.lastApp, value.previousApp, value.thirdApp] { optional(app) { $0.int(Int64($1)) } }
        for time in [value.lastTime, value.previousTime] { optional(time) { $0.int($1) } }
        countTable(value.lookOutcomes) { writer, key in
            writer.lookContext(key.context)
            writer.int(Int64(key.key))
        }
        array(value.lookContextFilter.counts) { $0.uint(UInt64($1)) }
        countTable(value.transitions) { $0.uint($1) }
        array(value.transitionTotals) { $0.double($1) }
        countTable(value.afterViewTransitions) { $0.uint($1) }
        countTable(value.contextCounts) { $0.uint($1) }
        optional(value.frecencyBaseDay) { $0.int($1) }
        array(value.frontKeys) { $0.int(Int64($1)) }
        array(value.recencyByGap) { $0.double($1) }
        optional(value.lastLookTime) { $0.int($1) }
        int(Int64(value.reach))
    }

    mutating func reloadScheduler(_ value: ReloadScheduler) {
        int(Int64(value.budget.capacity))
        array(value.budget.grants) { $0.timestamp($1) }
        optional(value.dueDate) { $0.timestamp($1) }
        optional(value.dueReason) { $0.string($1.rawValue) }
        optional(value.withheldUntil) { $0.timestamp($1) }
        optional(value.withheldReason) { $0.string($1.rawValue) }
        optional(value.outstanding) { writer, outstanding in
            writer.timestamp(outstanding.at)
            writer.string(outstanding.reason.rawValue)
        }
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
                liveActivity(activity)
            }
        }
    }

    mutating func liveActivity(_ activity: LiveActivity) {
        string(activity.id)
        app(activity.app)
        strings(activity.attributes)
        strings(activity.contentState)
        timestamp(activity.started)
        timestamp(activity.updated)
        optional(activity.endedExplicitly) { $0.timestamp($1) }
        optional(activity.dismissal) { $0.timestamp($1) }
    }

    mutating func timers(_ value: TimerQueue) {
        // The heap array as it is (superseded wake-ups included), so a restored queue is the same array.
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
        let entries = try array { reader throws(CodecError) in
            let instance = try reader.string()
            let kind = try reader.present() ? try reader.kindID() : nil
            let position = try reader.integer()
            let score = try reader.double()
            let suggested = try reader.bool()
            let pinned = try reader.bool()
            let name = try reader.string()
            guard let reason = DecisionReason(rawValue: name) else { throw CodecError("unknown reason '\(name)'") }
            let contributions = try reader.shares()
            var live: LiveActivityEntry?
            if try reader.present() {
                let activity = try reader.liveActivity()
                let stateName = try reader.string()
                guard let state = LiveActivity.Phase(rawValue: stateName) else {
                    throw CodecError("unknown Live Activity state '\(stateName)'")
                }
                live = LiveActivityEntry(activity: activity, state: state)
            }
            return DecisionEntry(
                instance: instance, kind: kind, position: position, score: score, suggested: suggested,
                pinned: pinned, reason: reason, contributions: contributions, liveActivity: live)
        }
        return Decision(stack: stack, revision: revision, time: time, entries: entries)
    }

    mutating func shares() throws(CodecError) -> SignalShares {
        var values: [Double] = []
        for _ in 0..<SignalShares.capacity { values.append(try double()) }
        return values.withUnsafeBufferPointer { buffer in
            buffer.baseAddress.map { SignalShares(copying: $0) } ?? SignalShares()
        }
    }

    mutating func ranker() throws(CodecError) -> OnlineRanker {
        var value = OnlineRanker()
        func vector() throws(CodecError) -> [Double] {
            let result = try array { reader throws(CodecError) in try reader.double() }
            guard result.count == Feature.count else {
                throw CodecError("ranker of \(result.count) features; this build has \(Feature.count)")
            }
            return result
        }
        let priorID = try string()
        value.prior = RankingPrior(id: priorID, columns: try vector())
        value.weights = try vector()
        value.fastWeights = try vector()
        value.slowWeights = try vector()
        value.fastSquaredGradients = try vector()
        value.slowSquaredGradients = try vector()
        value.updates = try integer()
        return value
    }

    mutating func rankerSelector() throws(CodecError) -> RankerSelector {
        let rankers = try count()
        guard rankers == StackRanker.allCases.count else {
            throw CodecError("\(rankers) rankers; this build has \(StackRanker.allCases.count)")
        }
        var performance = SIMD8<Double>(repeating: 0)
        for lane in 0..<rankers { performance[lane] = try double() }
        return RankerSelector(performance: performance)
    }

    mutating func lookContext() throws(CodecError) -> LookContext {
        func int8(_ value: Int64) throws(CodecError) -> Int8 {
            guard let narrow = Int8(exactly: value) else { throw CodecError("\(value) out of range") }
            return narrow
        }
        return LookContext(
            last: try int32(), previous: try int32(), third: try int32(), level: try int8(try int()),
            gap: try int8(try int()))
    }

    mutating func countTable<Key>(_ key: (inout ByteReader) throws(CodecError) -> Key) throws(CodecError)
        -> CountTable<Key>
    {
        var table = CountTable<Key>()
        let capacity = try count()
        guard capacity == 0 || capacity & (capacity - 1) == 0 else {
            throw CodecError("count table of \(capacity) slots (not a power of two)")
        }
        table.slots.reserveCapacity(capacity)
        for _ in 0..<capacity {
            let slotKey = try key(&self)
            table.slots.append(CountTable<Key>.Slot(key: slotKey, sum: try double()))
        }
        table.count = try count()
        let occupied = table.slots.count(where: { $0.sum != 0 })
        guard table.count == occupied else { throw CodecError("count table count mismatch") }
        return table
    }

    mutating func usageModel() throws(CodecError) -> UsageModel {
        var value = UsageModel()
        value.clock.reference = try int()
        value.clock.latest = try int()
        value.clock.started = try bool()
        value.counters = try array { reader throws(CodecError) in try reader.double() }
        value.lastUses = try array { reader throws(CodecError) in try reader.int() }
        guard value.counters.count == value.lastUses.count * KeyCounter.width else {
            throw CodecError("\(value.counters.count) counters for \(value.lastUses.count) keys")
        }
        value.lastApp = try present() ? try int32() : nil
        value.previousApp = try present() ? try int32() : nil
        value.thirdApp = try present() ? try int32() : nil
        value.lastTime = try present() ? try int() : nil
        value.previousTime = try present() ? try int() : nil
        value.lookOutcomes = try countTable { reader throws(CodecError) in
            LookOutcomeKey(context: try reader.lookContext(), key: try reader.int32())
        }
        value.lookContextFilter.counts = try array { reader throws(CodecError) in
            let raw = try reader.uint()
            guard let count = UInt16(exactly: raw) else { throw CodecError("filter count \(raw) out of range") }
            return count
        }
        value.transitions = try countTable { reader throws(CodecError) in try reader.uint() }
        value.transitionTotals = try array { reader throws(CodecError) in try reader.double() }
        value.afterViewTransitions = try countTable { reader throws(CodecError) in try reader.uint() }
        value.contextCounts = try countTable { reader throws(CodecError) in try reader.uint() }
        value.frecencyBaseDay = try present() ? try int() : nil
        value.frontKeys = try array { reader throws(CodecError) in try reader.int32() }
        let recencyByGap = try array { reader throws(CodecError) in try reader.double() }
        guard recencyByGap.count == value.recencyByGap.count else {
            throw CodecError("recency table of \(recencyByGap.count) cells; this build has \(value.recencyByGap.count)")
        }
        value.recencyByGap = recencyByGap
        value.lastLookTime = try present() ? try int() : nil
        let reach = try int()
        guard reach >= 0, reach < ReachBucket.count else { throw CodecError("reach bucket \(reach) out of range") }
        value.reach = Int8(reach)
        return value
    }

    mutating func reloadReason() throws(CodecError) -> ReloadReason {
        let name = try string()
        guard let reason = ReloadReason(rawValue: name) else { throw CodecError("unknown reload reason '\(name)'") }
        return reason
    }

    mutating func reloadScheduler() throws(CodecError) -> ReloadScheduler {
        var budget = ReloadBudget(capacity: try integer())
        budget.grants = try array { reader throws(CodecError) in try reader.timestamp() }
        var value = ReloadScheduler(budget: budget)
        value.dueDate = try optionalTimestamp()
        value.dueReason = try present() ? try reloadReason() : nil
        value.withheldUntil = try optionalTimestamp()
        value.withheldReason = try present() ? try reloadReason() : nil
        if try present() { value.outstanding = OutstandingReload(at: try timestamp(), reason: try reloadReason()) }
        return value
    }

    mutating func liveActivity() throws(CodecError) -> LiveActivity {
        LiveActivity(
            id: try string(), app: try app(), attributes: try strings(), contentState: try strings(),
            started: try timestamp(), updated: try timestamp(), endedExplicitly: try optionalTimestamp(),
            dismissal: try optionalTimestamp())
    }

    mutating func liveActivities() throws(CodecError) -> LiveActivityRegistry {
        var value = LiveActivityRegistry(maxPerApp: try integer())
        for _ in 0..<(try count()) {
            let app = try app()
            var activities: [String: LiveActivity] = [:]
            for _ in 0..<(try count()) {
                let activity = try liveActivity()
                activities[activity.id] = activity
            }
            value.byApp[app] = activities
        }
        return value
    }

    mutating func timers() throws(CodecError) -> TimerQueue {
        var entries: [TimerQueue.Entry] = []
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
            entries.append((time, sequence, target))
        }
        return TimerQueue(entries: entries, sequence: try int())
    }
}
