#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Per-stack weights of the behaviour signals, learned online from what the user does after looking.
///
/// A multinomial logistic (softmax) model over the stack's widgets: the probability that the user goes to
/// widget *i* next is `exp(w·xᵢ) / Σ exp(w·xⱼ)`. After each look at the stack, the widget the user goes to
/// (the next donation after the look, of any app, when it comes within ten minutes and matches a widget of the
/// stack; a tap opens the app, whose donation is that one) is a label; one AdaGrad step moves the weights
/// toward it, with a pull toward the prior so a few surprising looks cannot undo what holds for people in
/// general (the widget used last is the one most likely to be wanted again).
struct OnlineRanker: Sendable, Hashable {
    /// The learning rates of the two weight vectors: one follows a change of habits quickly, the other
    /// averages over more looks. Neither step size is right for every person; their geometric mean hedges.
    static let learningRates = (fast: 0.2, slow: 0.1)
    static let priorPull = 0.01
    /// What each weight's AdaGrad accumulator starts at: one unit of squared gradient (features are O(1), so a
    /// gradient is too). A step is `rate · g / √(G₀ + Σg²)`; with a tiny G₀ (it was 10⁻²) the first look moves a
    /// weight by almost the full rate whatever the size of its gradient, so a stack's first few looks, and a
    /// feature that rarely fires, jerk the weights away from the prior. With G₀ = 1 a small gradient makes a small
    /// step; after a few dozen looks Σg² dominates and G₀ hardly matters. Measured (README, "The evaluation"): on
    /// `desktop.tsv` +0.004 hit@1, +0.002 MRR (sur-D, the person with fewest looks, +0.019 / +0.017), the phone
    /// within 0.001; under cross-fitted priors sur-D +0.031 / +0.027 and everyone else within ±0.006.
    static let initialSquaredGradient = 1.0

    /// The prior this ranker started from and is pulled toward.
    var prior: RankingPrior
    /// The weights the stack is ranked with: the average of the two learned vectors. Ranking by
    /// `x·(w_fast + w_slow)/2` is ranking by the normalised geometric mean of the two softmax experts
    /// (`logsoftmax(x·w_fast) + logsoftmax(x·w_slow)` differs from it by the same constant for every widget).
    /// The stack's own copy from the start (not the prior's buffer), so learning never allocates.
    var weights: [Double]
    var fastWeights: [Double]
    var slowWeights: [Double]
    var fastSquaredGradients: [Double] = Array(repeating: Self.initialSquaredGradient, count: Feature.count)
    var slowSquaredGradients: [Double] = Array(repeating: Self.initialSquaredGradient, count: Feature.count)
    /// Labels learned from so far.
    var updates: Int = 0

    init(prior: RankingPrior = .shipped) {
        self.prior = prior
        weights = prior.weights.map { $0 }
        fastWeights = prior.weights.map { $0 }
        slowWeights = prior.weights.map { $0 }
    }

    /// Linear scores (log-odds up to a constant) of the rows of a feature matrix.
    func scores(_ matrix: [Double], rows: Int) -> [Double] {
        [Double](unsafeUninitializedCapacity: rows) { scores, initialized in
            Self.withRowBlocks(of: matrix, rows: rows, weights: weights) { first, block, w in
                var sums = (0.0, 0.0, 0.0, 0.0)
                for column in 0..<Feature.count {
                    let weight = w[column]
                    sums.0 += weight * block.0[column]
                    sums.1 += weight * block.1[column]
                    sums.2 += weight * block.2[column]
                    sums.3 += weight * block.3[column]
                }
                scores[first] = sums.0
                if first + 1 < rows { scores[first + 1] = sums.1 }
                if first + 2 < rows { scores[first + 2] = sums.2 }
                if first + 3 < rows { scores[first + 3] = sums.3 }
            }
            initialized = rows
        }
    }

    /// Four rows of a feature matrix.
    typealias RowBlock = (UnsafePointer<Double>, UnsafePointer<Double>, UnsafePointer<Double>, UnsafePointer<Double>)

    /// Calls `body` with the first `rows` rows of `matrix` four at a time (rows past the end read as zeros),
    /// and the weights, as pointers.
    ///
    /// Four rows side by side give four independent sums: each row still adds its terms in column order, so
    /// every result is bitwise what one row at a time gives, but an addition no longer waits for the one before.
    /// The loops over a row have a fixed width and no bounds or overflow checks.
    @inline(__always)
    private static func withRowBlocks(
        of matrix: [Double], rows: Int, weights: [Double], _ body: (Int, RowBlock, UnsafePointer<Double>) -> Void
    ) {
        precondition(matrix.count >= rows * Feature.count && weights.count == Feature.count)
        withUnsafeTemporaryAllocation(of: Double.self, capacity: Feature.count) { zeros in
            zeros.initialize(repeating: 0)
            matrix.withUnsafeBufferPointer { matrix in
                weights.withUnsafeBufferPointer { weights in
                    guard let x = matrix.baseAddress, let w = weights.baseAddress, let zero = zeros.baseAddress else {
                        return
                    }
                    func row(_ index: Int) -> UnsafePointer<Double> {
                        index < rows ? x + index &* Feature.count : UnsafePointer(zero)
                    }
                    for first in stride(from: 0, to: rows, by: 4) {
                        body(first, (row(first), row(first + 1), row(first + 2), row(first + 3)), w)
                    }
                }
            }
        }
    }

    /// Softmax probabilities of the rows of a feature matrix (the scores' buffer, reused).
    func probabilities(matrix: [Double], rows: Int) -> [Double] {
        var result = scores(matrix, rows: rows)
        Self.softmax(&result)
        return result
    }

    /// Turns scores into softmax probabilities in place.
    static func softmax(_ values: inout [Double]) {
        guard let top = values.max() else { return }
        var total = 0.0
        for index in values.indices {
            values[index] = exp(values[index] - top)
            total += values[index]
        }
        for index in values.indices { values[index] /= total }
    }

    /// One learning step: the user went to row `target` of the matrix the stack was shown with. Each weight
    /// vector takes an AdaGrad step of its own softmax's log-likelihood gradient.
    mutating func learn(matrix: [Double], rows: Int, target: Int) {
        guard rows > 1, target >= 0, target < rows else { return }
        let rates = Self.learningRates
        Self.step(
            &fastWeights, &fastSquaredGradients, prior: prior.weights, rate: rates.fast, matrix: matrix, rows: rows,
            target: target)
        Self.step(
            &slowWeights, &slowSquaredGradients, prior: prior.weights, rate: rates.slow, matrix: matrix, rows: rows,
            target: target)
        for column in 0..<Feature.count { weights[column] = (fastWeights[column] + slowWeights[column]) / 2 }
        updates += 1
    }

    private static func step(
        _ weights: inout [Double], _ squaredGradients: inout [Double], prior: [Double], rate: Double,
        matrix: [Double], rows: Int, target: Int
    ) {
        let width = Feature.count
        var probabilities = [Double](repeating: 0, count: rows)
        for row in 0..<rows {
            var sum = 0.0
            for column in 0..<width { sum += weights[column] * matrix[row * width + column] }
            probabilities[row] = sum
        }
        softmax(&probabilities)
        for column in 0..<width {
            var expected = 0.0
            for row in 0..<rows { expected += probabilities[row] * matrix[row * width + column] }
            var gradient = matrix[target * width + column] - expected
            gradient -= priorPull * (weights[column] - prior[column])
            squaredGradients[column] += gradient * gradient
            weights[column] += rate * gradient / squaredGradients[column].squareRoot()
        }
    }

    /// Each signal's additive share of the score of each of the first `count` rows, relative to the stack's
    /// average row, handed to `body` row by row.
    ///
    /// The softmax ignores anything added to every row alike, so centring makes the shares comparable
    /// across widgets: a positive share is what lifts this widget above the others.
    func contributions(matrix: [Double], rows: Int, count: Int, _ body: (_ row: Int, SignalShares) -> Void) {
        let width = Feature.count
        guard rows > 0, count > 0 else { return }
        let runs = Feature.signalRuns
        withUnsafeTemporaryAllocation(of: Double.self, capacity: width + 4 * SignalShares.capacity) { scratch in
            guard let means = scratch.baseAddress else { return }
            let shares = means + width
            means.initialize(repeating: 0, count: width)
            matrix.withUnsafeBufferPointer { matrix in
                for row in 0..<rows {
                    for column in 0..<width { means[column] += matrix[row &* width &+ column] }
                }
            }
            for column in 0..<width { means[column] /= Double(rows) }
            Self.withRowBlocks(of: matrix, rows: count, weights: weights) { first, block, w in
                // Each signal's terms w·(x − mean), summed in feature order. Features are finite, so the term of
                // a zero weight is ±0 and leaves a sum as it was.
                shares.initialize(repeating: 0, count: 4 * SignalShares.capacity)
                for run in runs {
                    var sums = (0.0, 0.0, 0.0, 0.0)
                    for column in run.columns {
                        let weight = w[column]
                        let mean = means[column]
                        sums.0 += weight * (block.0[column] - mean)
                        sums.1 += weight * (block.1[column] - mean)
                        sums.2 += weight * (block.2[column] - mean)
                        sums.3 += weight * (block.3[column] - mean)
                    }
                    shares[run.signal] = sums.0
                    shares[SignalShares.capacity + run.signal] = sums.1
                    shares[2 * SignalShares.capacity + run.signal] = sums.2
                    shares[3 * SignalShares.capacity + run.signal] = sums.3
                }
                for lane in 0..<4 where first + lane < count {
                    body(first + lane, SignalShares(copying: shares + lane * SignalShares.capacity))
                }
            }
        }
    }
}
