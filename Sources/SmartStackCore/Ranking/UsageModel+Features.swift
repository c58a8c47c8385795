#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Natural logarithm, guarded so that a zero share gives a large negative number and never `-inf`.
@inline(__always)
func safeLog(_ x: Double) -> Double { log(max(x, 1e-9)) }

/// Columns of the per-widget decayed counts read from the keys' rows (column-major scratch).
private enum CountColumn {
    /// Donation counts at the three count scales (3 columns).
    static let frequency = 0
    static let timeOfDay = 3
    static let dayOfWeek = 4
    static let afterLook = 5
    static let taps = 6
    static let swipesTo = 7
    static let swipesAway = 8
    static let count = 9
}

/// Columns of the per-widget counts read from the pair tables, and of the what-follows-a-look back-off
/// (column-major scratch, apart from `CountColumn`'s so that each buffer of a 10-widget stack stays small
/// enough to live on the stack).
private enum PairColumn {
    static let afterLookFromLast = 0
    static let context = 1
    /// Transitions from the last and the previous app, as stored (not yet decayed).
    static let fromLast = 2
    static let fromPrevious = 3
    /// What follows looks in general.
    static let general = 4
    /// The same backed off through the look contexts.
    static let inContext = 5
    /// One context's outcome counts.
    static let outcomes = 6
    static let count = 7
}

extension UsageModel {
    /// The feature matrix (row-major, `keys.count × Feature.count`) for a stack at a time.
    ///
    /// Cost is linear in the stack's size and independent of the history's length: every count is a read of a
    /// flat row or one probe of a pair table, scaled by one decay factor per time constant. `matrix` is reused
    /// when it has the right size; the scratch columns live on the stack.
    /// The index of the one largest positive value of `column[offset..<offset + n]`; `nil` when none is
    /// positive or the largest is shared.
    private func uniqueLargest(_ column: UnsafeMutableBufferPointer<Double>, _ offset: Int, _ n: Int) -> Int? {
        var best: Int?
        var bestValue = 0.0
        var shared = false
        for i in 0..<n {
            let value = column[offset + i]
            if value > bestValue {
                best = i
                bestValue = value
                shared = false
            } else if value == bestValue, best != nil {
                shared = true
            }
        }
        return shared ? nil : best
    }

    func features(for query: FeatureQuery, into matrix: inout [Double]) {
        let n = query.keys.count
        if matrix.count == n * Feature.count {
            matrix.withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
        } else {
            matrix = Array(repeating: 0, count: n * Feature.count)
        }
        guard n > 0 else { return }
        matrix.withUnsafeMutableBufferPointer { matrix in
            query.keys.withUnsafeBufferPointer { keys in
                withUnsafeTemporaryAllocation(of: Double.self, capacity: n * CountColumn.count) { counts in
                    withUnsafeTemporaryAllocation(of: Double.self, capacity: n * PairColumn.count) { pairs in
                        withUnsafeTemporaryAllocation(of: Int64.self, capacity: n) { uses in
                            withUnsafeTemporaryAllocation(of: Int.self, capacity: n) { ranks in
                                fillFeatures(
                                    query, keys: keys, counts: counts, pairs: pairs, uses: uses, ranks: ranks,
                                    matrix: matrix)
                            }
                        }
                    }
                }
            }
        }
    }

    private func fillFeatures(
        _ query: FeatureQuery, keys: UnsafeBufferPointer<Int32>, counts: UnsafeMutableBufferPointer<Double>,
        pairs: UnsafeMutableBufferPointer<Double>, uses: UnsafeMutableBufferPointer<Int64>,
        ranks: UnsafeMutableBufferPointer<Int>, matrix: UnsafeMutableBufferPointer<Double>
    ) {
        let n = keys.count
        // The stack's widgets: the first `m` rows. Everything relative is taken over them alone.
        let m = min(n, max(0, query.widgets ?? n))
        let now = query.time.microseconds
        let decay = clock.factors(at: now)
        counts.initialize(repeating: 0)
        pairs.initialize(repeating: 0)

        // Pair-table counts, every widget's lookup of a table together so that their cache misses overlap.
        func column(_ column: Int) -> UnsafeMutableBufferPointer<Double> {
            UnsafeMutableBufferPointer(rebasing: pairs[(column * n)..<(column * n + n)])
        }
        if let lastApp {
            let afterLookFromLast = column(PairColumn.afterLookFromLast)
            afterViewTransitions.sums(count: n, of: { Self.pair(lastApp, keys[$0]) }, into: afterLookFromLast)
            let decay = decay[Self.afterViewTransitionScale]
            for i in 0..<n { afterLookFromLast[i] *= decay }
            transitions.sums(count: n, of: { Self.pair(lastApp, keys[$0]) }, into: column(PairColumn.fromLast))
        }
        if let previousApp {
            transitions.sums(count: n, of: { Self.pair(previousApp, keys[$0]) }, into: column(PairColumn.fromPrevious))
        }
        if !query.contextPairs.isEmpty {
            let decay = decay[Self.contextScale]
            for i in 0..<n {
                var total = 0.0
                for pair in query.contextPairs { total += contextCounts.sum(Self.pair(pair, keys[i])) * decay }
                pairs[PairColumn.context * n + i] = total
            }
        }

        // Decayed counts, one column per signal.
        let hour = query.time.localHour
        let before = (hour + 23) % 24
        let after = (hour + 1) % 24
        let weekday = query.time.localWeekday
        let hourDecay = decay[Self.hourScale]
        let engagementDecay = decay[Self.engagementScale]
        counters.withUnsafeBufferPointer { counters in
            for i in 0..<n {
                let key = keys[i]
                guard key >= 0, Int(key) < keyCount else { continue }
                let row = Int(key) * KeyCounter.width
                for (scale, tau) in Self.countScales.enumerated() {
                    counts[(CountColumn.frequency + scale) * n + i] =
                        counters[row + KeyCounter.counts + scale] * decay[tau]
                }
                let hours = row + KeyCounter.hours
                counts[CountColumn.timeOfDay * n + i] =
                    counters[hours + hour] * hourDecay + 0.5 * (counters[hours + before] * hourDecay)
                    + 0.5 * (counters[hours + after] * hourDecay)
                counts[CountColumn.dayOfWeek * n + i] =
                    counters[row + KeyCounter.weekdays + weekday] * decay[Self.weekdayScale]
                counts[CountColumn.afterLook * n + i] =
                    counters[row + KeyCounter.afterView] * decay[Self.afterViewScale]
                counts[CountColumn.taps * n + i] = counters[row + KeyCounter.taps] * engagementDecay
                counts[CountColumn.swipesTo * n + i] = counters[row + KeyCounter.swipesTo] * engagementDecay
                counts[CountColumn.swipesAway * n + i] = counters[row + KeyCounter.swipesAway] * engagementDecay
                pairs[PairColumn.general * n + i] =
                    counters[row + KeyCounter.afterLookLong] * decay[Self.lookContextScale]
            }
        }

        // Each widget's share of the stack, with a prior per widget for the sparse signals (a candidate's: its
        // count against the widgets' total). Returns whether the widgets' column held no counts: then every
        // widget has the same share, and its feature is computed once.
        @discardableResult
        func shares(_ column: UnsafeMutableBufferPointer<Double>, _ offset: Int, prior: Double = 0) -> Bool {
            var total = 0.0
            for i in 0..<m { total += column[offset + i] }
            let empty = total == 0
            total += prior * Double(m)
            for i in 0..<n { column[offset + i] = total > 0 ? (column[offset + i] + prior) / total : 1 / Double(m) }
            return empty
        }
        for scale in Self.countScales.indices { shares(counts, (CountColumn.frequency + scale) * n) }
        shares(counts, CountColumn.timeOfDay * n)
        shares(counts, CountColumn.dayOfWeek * n)
        shares(counts, CountColumn.afterLook * n, prior: 0.1)
        let noAfterLookFromLast = shares(pairs, PairColumn.afterLookFromLast * n, prior: 0.1)
        let topAfterLookFromLast = noAfterLookFromLast ? nil : uniqueLargest(pairs, PairColumn.afterLookFromLast * n, m)
        let topAfterLast = uniqueLargest(pairs, PairColumn.fromLast * n, m)
        let noTaps = shares(counts, CountColumn.taps * n, prior: 0.5)
        let noSwipesTo = shares(counts, CountColumn.swipesTo * n, prior: 0.5)
        var noSwipesAway = true
        for i in 0..<m where counts[CountColumn.swipesAway * n + i] != 0 { noSwipesAway = false }
        let noContext: Bool
        if query.contextPairs.isEmpty {
            for i in 0..<n { pairs[PairColumn.context * n + i] = 1 / Double(m) }
            noContext = true
        } else {
            noContext = shares(pairs, PairColumn.context * n, prior: 0.5)
        }

        // What follows a look here: back off from looks in general through ever more specific contexts.
        shares(pairs, PairColumn.general * n, prior: 0.1)
        let general = PairColumn.general * n
        let inContext = PairColumn.inContext * n
        let outcomes = PairColumn.outcomes * n
        for i in 0..<n { pairs[inContext + i] = pairs[general + i] }
        let gap = lookGap(at: now)
        let lookDecay = decay[Self.lookContextScale]
        var contextSeen = false
        for level in 0..<LookContext.levels {
            let context = lookContext(level: level, gap: gap)
            // A context with no outcomes leaves every widget as it was: (0 + 2x) / (0 + 2) is exactly x.
            guard lookContextFilter.mayHaveOutcomes(context) else { continue }
            let counts = column(PairColumn.outcomes)
            lookOutcomes.sums(count: n, of: { LookOutcomeKey(context: context, key: keys[$0]) }, into: counts)
            var total = 0.0
            for i in 0..<n {
                counts[i] *= lookDecay
                if i < m { total += counts[i] }
            }
            for i in 0..<n { pairs[inContext + i] = (pairs[outcomes + i] + 2 * pairs[inContext + i]) / (total + 2) }
            contextSeen = contextSeen || total > 0
        }
        let topInContext = contextSeen ? uniqueLargest(pairs, inContext, m) : nil

        // Sequence and recency state shared by every row, and the features of signals with no counts.
        let transitionScale = decay[Self.transitionScale]
        let lastTotal = lastApp.map { transitionTotal(of: $0) * transitionScale } ?? 0
        let previousTotal = previousApp.map { transitionTotal(of: $0) * transitionScale } ?? 0
        let gapSeconds = lastTime.map { max(0, Double(now - $0) / 1_000_000) } ?? 1e9
        let logGap = log1p(gapSeconds / 60)
        let previousDwell =
            (lastTime != nil && previousTime != nil)
            ? log1p(max(0, Double((lastTime ?? 0) - (previousTime ?? 0)) / 1_000_000) / 60) / 3 : 0
        let gapBucket = GapBucket.of(lastTime.map { now - $0 })
        let uniformTaps = noTaps ? safeLog(counts[CountColumn.taps * n] * Double(m)) : nil
        let uniformSwipesTo = noSwipesTo ? safeLog(counts[CountColumn.swipesTo * n] * Double(m)) : nil
        let uniformSwipesAway = noSwipesAway ? -log1p(0.0) : nil
        let uniformContext = noContext ? safeLog(pairs[PairColumn.context * n] * Double(m)) : nil

        // Last uses (`Int64.min`: never), and each widget's most-recently-used rank among the stack's widgets
        // (ties by the user's order; never used: `Int.max`), counted without branches to mispredict. A candidate
        // ranks among the widgets as if it were placed after them.
        for i in 0..<n { uses[i] = lastUse(of: keys[i]) ?? .min }
        var classSizes = SIMD8<Double>(repeating: 0)
        for i in 0..<n {
            let lastUse = uses[i]
            var r = Int.max
            if lastUse != .min {
                r = 0
                for j in 0..<min(i, m) { r += uses[j] >= lastUse ? 1 : 0 }
                if i + 1 < m { for j in (i + 1)..<m { r += uses[j] > lastUse ? 1 : 0 } }
            }
            ranks[i] = r
            if i < m { classSizes[RecencyClass.of(rank: r)] += 1 }
        }
        let recencyShares = recencyShares(
            gap: gapBucket, reach: Int(reach), sizes: classSizes, decay: lookDecay, widgets: m)
        let frontTime = lastTime ?? .min
        for i in 0..<n {
            let key = keys[i]
            let base = i * Feature.count
            @inline(__always) func set(_ feature: Feature, _ value: Double) { matrix[base + feature.rawValue] = value }
            @inline(__always) func flag(_ condition: Bool) -> Double { condition ? 1 : 0 }
            @inline(__always) func count(_ column: Int) -> Double { counts[column * n + i] }
            let lastUse = uses[i]
            let r = ranks[i]
            set(.afterLookInContext, safeLog(pairs[inContext + i] / pairs[general + i]))
            set(.topAfterLookInContext, flag(topInContext == i))
            set(.recencyInGap, recencyShares[RecencyClass.of(rank: r)])
            set(.mostRecent, flag(r == 0))
            set(.secondRecent, flag(r == 1))
            set(.thirdRecent, flag(r == 2))
            set(.fourthOrFifthRecent, flag(r == 3 || r == 4))
            set(.mostRecentTimesGap, flag(r == 0) * logGap)
            set(.secondRecentTimesGap, flag(r == 1) * logGap)
            let since = lastUse != .min ? max(0, Double(now - lastUse) / 1_000_000) : 1e9
            set(.timeSinceUse, -log1p(since / 60) / 5)
            set(.mostRecentTimesPreviousDwell, flag(r == 0) * previousDwell)
            set(.secondRecentTimesPreviousDwell, flag(r == 1) * previousDwell)
            if r < 3 { matrix[base + Feature.gapColumns + r * GapBucket.count + gapBucket] = 1 }
            if r < 2 { matrix[base + Feature.reachColumns + r * ReachBucket.count + Int(reach)] = 1 }
            // In front: its app donated last. Otherwise how long ago it left the front, and how long it stayed.
            let left = lastUse != .min ? leftFront(of: key) : 0
            if lastUse != .min, lastUse == frontTime || left <= Double(lastUse) {
                set(.sinceLeftFront, 0)
            } else if lastUse != .min {
                set(.sinceLeftFront, -log1p(max(0, Double(now) - left) / 10_000_000) / 5)
                let stay = (left - Double(lastUse)) / 1_000_000
                set(.shortStay, flag(stay < 2))
                set(.briefStay, flag(stay >= 2 && stay < 10))
            } else {
                set(.sinceLeftFront, -log1p(1e9 / 10) / 5)
            }
            let frequencyDays = count(CountColumn.frequency + 1)
            set(.frequencyHours, safeLog(count(CountColumn.frequency) + 1e-3))
            set(.frequencyDays, safeLog(frequencyDays + 1e-3))
            set(.frequencyWeeks, safeLog(count(CountColumn.frequency + 2) + 1e-3))
            set(.timeOfDay, safeLog(count(CountColumn.timeOfDay) + 1e-3))
            set(.dayOfWeek, safeLog(count(CountColumn.dayOfWeek) + 1e-3))
            let fromLast = lastApp != nil ? pairs[PairColumn.fromLast * n + i] * transitionScale : 0
            let fromPrevious = previousApp != nil ? pairs[PairColumn.fromPrevious * n + i] * transitionScale : 0
            let afterLast = (fromLast + 0.5 * frequencyDays) / (lastTotal + 0.5)
            let afterPrevious = (fromPrevious + 0.5 * frequencyDays) / (previousTotal + 0.5)
            set(.afterLastApp, safeLog(afterLast + 1e-3))
            set(.topAfterLastApp, flag(topAfterLast == i))
            set(.topAfterLookFromLastApp, flag(topAfterLookFromLast == i))
            set(.afterPreviousApp, safeLog(afterPrevious + 1e-3))
            set(.afterLook, safeLog(count(CountColumn.afterLook)))
            set(.afterLookFromLastApp, safeLog(pairs[PairColumn.afterLookFromLast * n + i]))
            let wasPreviousTarget = query.previousLookTarget == key
            set(.previousLookTarget, flag(wasPreviousTarget))
            set(.previousLookTargetSecond, flag(wasPreviousTarget && r == 1))
            set(.previousLookTargetFirst, flag(wasPreviousTarget && r == 0))
            set(.taps, uniformTaps ?? safeLog(count(CountColumn.taps) * Double(m)))
            set(.swipesTo, uniformSwipesTo ?? safeLog(count(CountColumn.swipesTo) * Double(m)))
            set(.swipesAway, uniformSwipesAway ?? -log1p(count(CountColumn.swipesAway)))
            set(.context, uniformContext ?? safeLog(pairs[PairColumn.context * n + i] * Double(m)))
            set(.userOrder, 1 / Double(1 + i))
        }
    }

    /// Microseconds when the key's app last left the front (0: not known).
    @inline(__always)
    private func leftFront(of key: Int32) -> Double {
        key >= 0 && Int(key) < keyCount ? counters[Int(key) * KeyCounter.width + KeyCounter.leftFront] : 0
    }

    /// Each recency class's log-share of a widget against the stack's average widget, after a look in gap
    /// bucket `gap`: the user's decayed counts of targets per class in that bucket, backed off to all buckets
    /// and then to the classes' sizes (so with no looks yet every widget gets 0). `sizes` counts the stack's
    /// widgets per class.
    private func recencyShares(gap: Int, reach: Int, sizes: SIMD8<Double>, decay: Double, widgets n: Int)
        -> SIMD8<Double>
    {
        let k = RecencyClass.count
        let reaches = ReachBucket.count
        // Sums of the stored counts (the decay factor is applied once per class below), five classes a row.
        var overall = (0.0, 0.0, 0.0, 0.0, 0.0)
        var gapRow = (0.0, 0.0, 0.0, 0.0, 0.0)
        var cellRow = (0.0, 0.0, 0.0, 0.0, 0.0)
        recencyByGap.withUnsafeBufferPointer { table in
            guard table.count == GapBucket.count * reaches * k else { return }
            for row in 0..<(GapBucket.count * reaches) {
                let base = row &* k
                overall.0 += table[base]
                overall.1 += table[base &+ 1]
                overall.2 += table[base &+ 2]
                overall.3 += table[base &+ 3]
                overall.4 += table[base &+ 4]
            }
            for r in 0..<reaches {
                let base = (gap &* reaches &+ r) &* k
                gapRow.0 += table[base]
                gapRow.1 += table[base &+ 1]
                gapRow.2 += table[base &+ 2]
                gapRow.3 += table[base &+ 3]
                gapRow.4 += table[base &+ 4]
            }
            let base = (gap &* reaches &+ reach) &* k
            cellRow = (table[base], table[base &+ 1], table[base &+ 2], table[base &+ 3], table[base &+ 4])
        }
        let overallCounts = SIMD8(overall.0, overall.1, overall.2, overall.3, overall.4, 0, 0, 0) * decay
        let inGap = SIMD8(gapRow.0, gapRow.1, gapRow.2, gapRow.3, gapRow.4, 0, 0, 0) * decay
        let inCell = SIMD8(cellRow.0, cellRow.1, cellRow.2, cellRow.3, cellRow.4, 0, 0, 0) * decay
        var totals = SIMD4<Double>(repeating: 0)
        for c in 0..<k where sizes[c] > 0 {
            totals[0] += overallCounts[c]
            totals[1] += inGap[c]
            totals[2] += inCell[c]
        }
        var result = SIMD8<Double>(repeating: 0)
        for c in 0..<k where sizes[c] > 0 {
            // Back-off weights: one pseudo-look spread by the classes' sizes, two for the coarser level each.
            let base = (overallCounts[c] + sizes[c] / Double(n)) / (totals[0] + 1)
            let gapShare = (inGap[c] + 2 * base) / (totals[1] + 2)
            let share = (inCell[c] + 2 * gapShare) / (totals[2] + 2)
            result[c] = safeLog(share / sizes[c] * Double(n))
        }
        return result
    }

    /// The decayed sum of donations that followed `app`, at the clock's reference time.
    private func transitionTotal(of app: Int32) -> Double {
        app >= 0 && Int(app) < transitionTotals.count ? transitionTotals[Int(app)] : 0
    }
}
