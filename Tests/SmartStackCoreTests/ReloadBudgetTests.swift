import SmartStackCore
import Testing

/// 2025-03-01T08:00:00Z.
private let start = try! Timestamp(rfc3339: "2025-03-01T08:00:00Z")

private func at(minutes: Double) -> Timestamp { start.adding(seconds: minutes * 60) }

@Suite struct ReloadBudgetTests {
    /// The most grants that fall in any half-open 24-hour window `[g, g + 24h)` starting at a grant.
    static func busiestWindow(_ grants: [Timestamp]) -> Int {
        let sorted = grants.sorted()
        var best = 0
        var low = 0
        for high in sorted.indices {
            while sorted[high] >= sorted[low].adding(seconds: ReloadBudget.window) { low += 1 }
            best = max(best, high - low + 1)
        }
        return best
    }

    @Test(arguments: [40, 70, 1_000, 1_440])
    func acceptedCapacities(capacity: Int) throws {
        #expect(try ReloadBudget.validatedCapacity(capacity) == capacity)
    }

    @Test(arguments: [-1, 0, 39, 1_441])
    func rejectedCapacities(capacity: Int) {
        let error = #expect(throws: CoreError.self) { try ReloadBudget.validatedCapacity(capacity) }
        #expect(error?.parameter == "reloadBudget")
    }

    @Test func defaultsToSeventyPerDay() {
        let state = ReloadBudget().state(at: start)
        #expect(state == BudgetState(capacity: 70, used: 0, left: 70, nextAvailable: start))
        #expect(ReloadBudget.window == 86_400)
    }

    @Test func seventyFirstIsWithheldUntilTheFirstLeavesTheWindow() {
        var budget = ReloadBudget()
        for minute in 0..<70 {
            let granted = budget.consume(at: at(minutes: Double(minute)))
            #expect(granted)
        }
        let full = at(minutes: 70)
        let grantedWhenFull = budget.consume(at: full)
        #expect(!grantedWhenFull)
        // The first grant, at 08:00, leaves the window at 08:00 the next day, not a microsecond earlier.
        let firstLeaves = try! Timestamp(rfc3339: "2025-03-02T08:00:00Z")
        #expect(budget.state(at: full) == BudgetState(capacity: 70, used: 70, left: 0, nextAvailable: firstLeaves))
        #expect(budget.nextAvailable(at: full) == firstLeaves)
        let grantedJustBefore = budget.consume(at: firstLeaves.adding(seconds: -0.000_001))
        #expect(!grantedJustBefore)
        #expect(budget.state(at: firstLeaves).left == 1)
        #expect(budget.state(at: firstLeaves).nextAvailable == firstLeaves)
        let grantedWhenFreed = budget.consume(at: firstLeaves)
        #expect(grantedWhenFreed)
        // Next the 08:01 grant must leave.
        #expect(budget.nextAvailable(at: firstLeaves) == firstLeaves.adding(seconds: 60))
        #expect(budget.state(at: firstLeaves).used == 70)
    }

    @Test func usageDropsAsGrantsLeaveTheWindow() {
        var budget = ReloadBudget(capacity: 40)
        for hour in 0..<4 {
            let granted = budget.consume(at: at(minutes: Double(hour) * 60))
            #expect(granted)
        }
        #expect(budget.state(at: at(minutes: 180)).used == 4)
        #expect(budget.state(at: at(minutes: 24 * 60)).used == 3)
        #expect(budget.state(at: at(minutes: 27 * 60)).used == 0)
        #expect(budget.state(at: at(minutes: 27 * 60)).left == 40)
    }

    @Test("a question about an earlier time counts the grants up to it, not those made since")
    func anEarlierTimeDoesNotCountLaterGrants() {
        var budget = ReloadBudget(capacity: 40)
        for minute in 10..<50 { _ = budget.consume(at: at(minutes: Double(minute))) }
        #expect(
            budget.state(at: at(minutes: 5))
                == BudgetState(capacity: 40, used: 0, left: 40, nextAvailable: at(minutes: 5)))
        #expect(budget.state(at: at(minutes: 19)).used == 10)
        #expect(budget.state(at: at(minutes: 60)).left == 0)
        #expect(budget.state(at: at(minutes: 60)).nextAvailable == at(minutes: 24 * 60 + 10))
        // The scheduler's own question still counts every grant kept (a slot it reports must be one consume takes).
        #expect(budget.nextAvailable(at: at(minutes: 5)) == at(minutes: 24 * 60 + 10))
    }

    @Test func earlierTimesAreRecordedAtTheLatestGrant() {
        var budget = ReloadBudget(capacity: 40)
        let grantedAt0900 = budget.consume(at: at(minutes: 60))
        let grantedAt0800 = budget.consume(at: at(minutes: 0))
        #expect(grantedAt0900 && grantedAt0800)
        // Both count until 09:00 next day, so the window can never be overfilled by a late caller.
        #expect(budget.state(at: at(minutes: 24 * 60 + 59)).used == 2)
        #expect(budget.state(at: at(minutes: 25 * 60)).used == 0)
    }

    @Test func shrinkingKeepsTheNewestGrants() {
        var budget = ReloadBudget(capacity: 70)
        for minute in 0..<70 { _ = budget.consume(at: at(minutes: Double(minute))) }
        budget.setCapacity(40)
        let state = budget.state(at: at(minutes: 70))
        #expect(state.used == 40)
        #expect(state.left == 0)
        // With 70 in the window and room for 40, the 31st grant (08:30) must leave first.
        #expect(state.nextAvailable == at(minutes: 24 * 60 + 30))
    }

    @Test func zeroCapacityNeverGrants() {
        var budget = ReloadBudget(capacity: 0)
        let granted = budget.consume(at: start)
        #expect(!granted)
        #expect(budget.nextAvailable(at: start) == Timestamp(microseconds: .max))
    }

    /// Thousands of random requests: never more than the capacity in any 24 hours, and a request is refused only
    /// when the window really is full.
    @Test(arguments: [40, 70, 200])
    func neverExceedsCapacityInAnyWindow(capacity: Int) {
        var random = SeededGenerator(seed: UInt64(capacity) &* 7_919)
        var budget = ReloadBudget(capacity: capacity)
        var t = start
        var granted: [Timestamp] = []
        for _ in 0..<5_000 {
            // Bursts of requests seconds apart, with occasional long quiet spells.
            t = t.adding(seconds: random.below(10) == 0 ? Double(random.below(20_000)) : Double(random.below(120)))
            let before = budget.state(at: t)
            if budget.consume(at: t) {
                #expect(before.left > 0)
                granted.append(t)
            } else {
                #expect(before.left == 0)
                #expect(before.nextAvailable > t)
                let inWindow = granted.filter { $0 > t.adding(seconds: -ReloadBudget.window) }.count
                #expect(inWindow >= capacity)
            }
            #expect(budget.state(at: t).used <= capacity)
        }
        #expect(granted.count > capacity)
        #expect(Self.busiestWindow(granted) <= capacity)
    }
}
