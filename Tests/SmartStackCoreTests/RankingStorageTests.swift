import Foundation
@testable import SmartStackCore
import Testing

/// The ranking engine's internal storage: the pair tables, the shared decay clock, the look-context filter,
/// the instance slots and the fixed layouts the hot paths rely on.
@Suite("Ranking storage")
struct RankingStorageTests {
    /// A key whose hash puts every key in one of four homes, so runs of occupied slots are long and wrap.
    struct CollidingKey: CountTableKey, Hashable {
        var value: UInt64
        init() { value = 0 }
        init(_ value: UInt64) { self.value = value }
        var hashBits: UInt64 { (value % 4) &* 0x4000_0000_0000_0003 }
    }

    /// Random adds and rescales against a dictionary: same entries, same sums, every entry still reachable.
    static func checkAgainstDictionary<Key: CountTableKey & Hashable>(seed: UInt64, key: (UInt64) -> Key) {
        var random = SeededGenerator(seed: seed)
        var table = CountTable<Key>()
        var model: [Key: Double] = [:]
        for round in 0..<40 {
            for _ in 0..<Int(random.below(300)) {
                let k = key(UInt64(random.below(500)))
                let amount = Double(random.below(100) + 1) / 10
                let created = table.add(amount, to: k)
                #expect(created == (model[k] == nil))
                model[k, default: 0] += amount
            }
            // Every few rounds, decay everything and drop what fell below a threshold.
            if round % 3 == 2 {
                let factor = Double(random.below(90) + 10) / 100
                var dropped: [Key] = []
                table.scale(by: factor, droppingBelow: 2) { dropped.append($0) }
                var expectedDrops: Set<Key> = []
                for (k, sum) in model {
                    let scaled = sum * factor
                    if scaled < 2 {
                        model[k] = nil
                        expectedDrops.insert(k)
                    } else {
                        model[k] = scaled
                    }
                }
                #expect(Set(dropped) == expectedDrops)
            }
            #expect(table.count == model.count)
            for (k, sum) in model { #expect(abs(table.sum(k) - sum) <= 1e-9 * sum) }
            #expect(table.sum(key(10_000)) == 0)
            // Looked up together, present and absent keys alike, the sums are the same.
            let probes = (0..<40).map { _ in key(UInt64(random.below(600))) }
            var together = [Double](repeating: -1, count: probes.count)
            together.withUnsafeMutableBufferPointer { table.sums(count: probes.count, of: { probes[$0] }, into: $0) }
            #expect(together == probes.map { table.sum($0) })
        }
        #expect(table.entries.count == model.count)
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func countTableMatchesADictionary(seed: UInt64) {
        Self.checkAgainstDictionary(seed: seed) { $0 }
    }

    @Test(arguments: [4, 5] as [UInt64])
    func countTableStaysCorrectWhenEveryKeyCollides(seed: UInt64) {
        Self.checkAgainstDictionary(seed: seed) { CollidingKey($0) }
    }

    @Test func countTableIgnoresAmountsThatAreNotPositiveAndShrinksWhenMostlyEmpty() {
        var table = CountTable<UInt64>()
        let created = [table.add(0, to: 1), table.add(-1, to: 1), table.add(.nan, to: 1)]
        #expect(created == [false, false, false])
        #expect(table.count == 0 && table.capacity == 0)
        for key in 0..<1_000 as Range<UInt64> { table.add(1, to: key) }
        let full = table.capacity
        #expect(full >= 1_024)
        table.scale(by: 1, droppingBelow: 0.5)
        #expect(table.capacity == full)  // Nothing dropped: kept in place.
        for key in 0..<10 as Range<UInt64> { table.add(1, to: key) }
        table.scale(by: 0.5, droppingBelow: 0.75)  // Only the ten keys that have 2 survive.
        #expect(table.count == 10)
        #expect(table.capacity < full)
        for key in 0..<10 as Range<UInt64> { #expect(table.sum(key) == 1) }
    }

    /// Counts kept against the shared clock read as the direct sum of `exp(-age / tau)`, across rescales.
    @Test func decayedCountsMatchTheirDefinitionAcrossRescales() {
        var model = UsageModel()
        model.ensureKey(0)
        var random = SeededGenerator(seed: 9)
        let start = Fixture.start.microseconds
        var times: [Int64] = []
        var now = start
        // 1,500 donations 0–2 h apart: about 60 days, so the clock rescales several times (every ~10.7 days).
        for _ in 0..<1_500 {
            now += Int64(random.below(7_200)) * 1_000_000
            times.append(now)
            model.recordDonation(
                app: 0, matched: [0], at: Timestamp(microseconds: now, utcOffsetSeconds: 0), contextPairs: [])
        }
        let query = now + 3_600 * 1_000_000
        let factors = model.clock.factors(at: query)
        for (index, scale) in UsageModel.countScales.enumerated() {
            let expected = times.reduce(0.0) { $0 + exp(-Double(query - $1) / 1_000_000 / scale.tau) }
            let read = model.counters[KeyCounter.counts + index] * factors[scale]
            #expect(abs(read - expected) <= 1e-9 * expected)
        }
        // Transitions (app 0 → key 0) decay at 7 days; their total counts every donation but the first.
        let transitions = times.dropFirst().reduce(0.0) {
            $0 + exp(-Double(query - $1) / 1_000_000 / UsageModel.transitionScale.tau)
        }
        let read = model.transitions.sum(UsageModel.pair(0, 0)) * factors[UsageModel.transitionScale]
        #expect(abs(read - transitions) <= 1e-9 * transitions)
    }

    /// Pair-table entries whose counts decayed to nothing are dropped: after a long stream of ever-new
    /// contexts the tables hold what the last few time constants saw, not the whole history.
    @Test func pairTablesStayBoundedOverALongHistory() {
        var model = UsageModel()
        let keys: [Int32] = Array(0..<8)
        for key in keys { model.ensureKey(key) }
        var random = SeededGenerator(seed: 11)
        var now = Fixture.start.microseconds
        var sizes: [Int] = []
        for day in 1...720 {
            for _ in 0..<20 {
                now += Int64(random.below(8_640) + 1) * 1_000_000  // 20 a day on average.
                let app = Int32(random.below(2_000))  // Many apps: transitions and contexts keep being new.
                let time = Timestamp(microseconds: now, utcOffsetSeconds: 0)
                let key = keys[random.below(keys.count)]
                model.recordDonation(app: app, matched: [key], at: time, contextPairs: [])
                model.recordAfterView(
                    key: key, lastAppAtView: app, contexts: model.lookContexts(at: now), recency: nil, lookTime: time,
                    at: time)
            }
            if day % 180 == 0 {
                sizes.append(model.transitions.count + model.lookOutcomes.count + model.afterViewTransitions.count)
            }
        }
        // Counts decay at 7–30 days and go below the threshold within about 9 time constants (at most ~280
        // days): by day 540 the tables have their steady size, well under what the history inserted.
        #expect(sizes[3] <= sizes[2] + sizes[2] / 10)
        #expect(sizes[3] < 720 * 20 * 6 / 2)
    }

    /// The filter never says a context has no outcomes when it has some, through growth and pruning.
    @Test func lookContextFilterNeverHidesAContextWithOutcomes() {
        var model = UsageModel()
        for key in 0..<4 as Range<Int32> { model.ensureKey(key) }
        var random = SeededGenerator(seed: 12)
        var now = Fixture.start.microseconds
        for step in 0..<6_000 {
            now += Int64(random.below(4 * 3_600) + 1) * 1_000_000
            let time = Timestamp(microseconds: now, utcOffsetSeconds: 0)
            model.recordDonation(
                app: Int32(random.below(30)), matched: [Int32(random.below(4))], at: time, contextPairs: [])
            model.recordAfterView(
                key: Int32(random.below(4)), lastAppAtView: nil, contexts: model.lookContexts(at: now), recency: nil,
                lookTime: time, at: time)
            if step % 500 == 0 {
                for (key, _) in model.lookOutcomes.entries {
                    #expect(model.lookContextFilter.mayHaveOutcomes(key.context))
                }
            }
        }
        #expect(model.lookContextFilter.capacity == model.lookOutcomes.capacity)
    }

    @Test func instanceSlotsAreReusedAndTrackRelevanceInputs() throws {
        var store = InstanceStore()
        func state(_ name: String) -> InstanceState {
            InstanceState(
                id: Fixture.instance(name), stack: Fixture.stack(), kind: Fixture.kindID(name),
                configuration: Configuration(), key: 0, reload: ReloadScheduler(budget: ReloadBudget(capacity: 70)))
        }
        store[Fixture.instance("a")] = state("a")
        store[Fixture.instance("b")] = state("b")
        let a = try #require(store.slot(of: Fixture.instance("a")))
        let b = try #require(store.slot(of: Fixture.instance("b")))
        #expect(a != b && store.count == 2)
        #expect(!store.hasRelevanceInputs[Int(a)])
        store[Fixture.instance("a")]?.relevantContexts = [.context(key: "focus", value: "work")]
        #expect(store.hasRelevanceInputs[Int(a)])
        store[Fixture.instance("a")]?.relevance.replace(with: Fixture.timeline([(0, 1, 0)]), at: Fixture.t(0))
        store[Fixture.instance("a")]?.relevantContexts = []
        #expect(store.hasRelevanceInputs[Int(a)])  // Still has a timeline.
        store.removeValue(forKey: Fixture.instance("a"))
        #expect(store[Fixture.instance("a")] == nil && store.count == 1)
        #expect(!store.hasRelevanceInputs[Int(a)])
        store[Fixture.instance("c")] = state("c")
        #expect(store.slot(of: Fixture.instance("c")) == a)  // The freed slot is reused.
        store[Fixture.instance("b")] = nil
        #expect(store.slot(of: Fixture.instance("b")) == nil && store.count == 1)
        #expect(store.values.map(\.id) == [Fixture.instance("c")])
    }

    @Test func sortByScoreOrdersHighestFirstWithTiesInUserOrder() {
        var random = SeededGenerator(seed: 13)
        for _ in 0..<200 {
            let n = random.below(14) + 1
            let scores = (0..<n).map { _ in Double(random.below(5)) / 4 }  // Many ties.
            var order = Array(0..<n)
            Engine.sortByScore(&order, scores)
            let expected = Array(0..<n).sorted { scores[$0] != scores[$1] ? scores[$0] > scores[$1] : $0 < $1 }
            #expect(order == expected)
        }
        var order = [0, 1, 2]
        Engine.sortByScore(&order, [0.5, .nan, 0.7])
        #expect(order.sorted() == [0, 1, 2])  // Still a permutation.
    }

    @Test func fixedLayoutsMatchWhatTheyDescribe() {
        #expect(Feature.count == Feature.allCases.count)
        #expect(SignalShares.capacity == Signal.allCases.count)
        #expect(Set(Signal.allCases.map(\.index)) == Set(0..<SignalShares.capacity))
        #expect(Feature.signalRuns.flatMap { Array($0.columns) } == Array(0..<Feature.count))
        for run in Feature.signalRuns {
            for column in run.columns { #expect(Feature.signalIndex[column] == run.signal) }
        }
        #expect(KeyCounter.scales.count == KeyCounter.width)
        #expect(MemoryLayout<SignalShares>.alignment == MemoryLayout<Double>.alignment)
    }

    @Test func signalSharesCompareAndHashByValue() {
        var a = SignalShares()
        a[.recency] = 0.5
        a[.engagement] = -0.25
        let b = SignalShares([.recency: 0.5, .engagement: -0.25])
        #expect(a == b && a.hashValue == b.hashValue)
        #expect(a.nonZero.map(\.signal) == [.recency, .engagement])
        var c = b
        c[.engagement] = nil
        #expect(c != b && c.dictionary == [.recency: 0.5])
        var zero = SignalShares()
        zero[.context] = -0.0
        #expect(zero == SignalShares() && zero.isEmpty)
    }
}
