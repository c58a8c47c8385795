#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Per-stack weights of the behaviour signals, learned online from what the user does after looking.
///
/// A multinomial logistic (softmax) model over the stack's widgets: the probability that the user goes to
/// widget *i* next is `exp(w·xᵢ) / Σ exp(w·xⱼ)`. After each look at the stack, the widget the user goes to
/// (the next matching donation within ten minutes, or a tap) is a label; one AdaGrad step moves the weights
/// toward it, with a pull toward the prior so a few surprising looks cannot undo what holds for people in
/// general (the widget used last is the one most likely to be wanted again).
struct OnlineRanker: Sendable, Hashable {
    static let learningRate = 0.2
    static let priorPull = 0.01
    static let prior: [Double] = {
        var weights = Array(repeating: 0.0, count: Feature.count)
        weights[Feature.mostRecent.rawValue] = 2
        weights[Feature.secondRecent.rawValue] = 1
        weights[Feature.thirdRecent.rawValue] = 0.5
        return weights
    }()

    /// The stack's own copy from the start (not the shared prior's buffer), so learning never allocates.
    private(set) var weights: [Double] = OnlineRanker.prior.map { $0 }
    private var squaredGradients: [Double] = Array(repeating: 1e-2, count: Feature.count)
    /// Labels learned from so far.
    private(set) var updates: Int = 0

    /// Linear scores (log-odds up to a constant) of the rows of a feature matrix.
    func scores(_ matrix: [Double], rows: Int) -> [Double] {
        [Double](unsafeUninitializedCapacity: rows) { scores, initialized in
            Self.withRows(of: matrix, rows: rows, weights: weights) { row, x, w in
                var sum = 0.0
                for column in 0..<Feature.count { sum += w[column] * x[column] }
                scores[row] = sum
            }
            initialized = rows
        }
    }

    /// Calls `body` with each row of `matrix` (the first `rows`) and the weights, as pointers: the loops over a
    /// row then have a fixed width and no bounds or overflow checks.
    @inline(__always)
    private static func withRows(
        of matrix: [Double], rows: Int, weights: [Double],
        _ body: (Int, UnsafePointer<Double>, UnsafePointer<Double>) -> Void
    ) {
        precondition(matrix.count >= rows * Feature.count && weights.count == Feature.count)
        matrix.withUnsafeBufferPointer { matrix in
            weights.withUnsafeBufferPointer { weights in
                guard let x = matrix.baseAddress, let w = weights.baseAddress else { return }
                for row in 0..<rows { body(row, x + row &* Feature.count, w) }
            }
        }
    }

    /// Softmax probabilities of the rows of a feature matrix (the scores' buffer, reused).
    func probabilities(matrix: [Double], rows: Int) -> [Double] {
        var result = scores(matrix, rows: rows)
        Self.softmax(&result)
        return result
    }

    /// Softmax probabilities of the scores.
    static func probabilities(_ scores: [Double]) -> [Double] {
        var result = scores
        softmax(&result)
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

    /// One learning step: the user went to row `target` of the matrix the stack was shown with.
    mutating func learn(matrix: [Double], rows: Int, target: Int) {
        guard rows > 1, target >= 0, target < rows else { return }
        let width = Feature.count
        let probabilities = probabilities(matrix: matrix, rows: rows)
        for column in 0..<width {
            var expected = 0.0
            for row in 0..<rows { expected += probabilities[row] * matrix[row * width + column] }
            var gradient = matrix[target * width + column] - expected
            gradient -= Self.priorPull * (weights[column] - Self.prior[column])
            squaredGradients[column] += gradient * gradient
            weights[column] += Self.learningRate * gradient / squaredGradients[column].squareRoot()
        }
        updates += 1
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
        withUnsafeTemporaryAllocation(of: Double.self, capacity: 2 * width) { scratch in
            guard let means = scratch.baseAddress else { return }
            let terms = means + width
            means.initialize(repeating: 0, count: width)
            Self.withRows(of: matrix, rows: rows, weights: weights) { _, x, _ in
                for column in 0..<width { means[column] += x[column] }
            }
            for column in 0..<width { means[column] /= Double(rows) }
            Self.withRows(of: matrix, rows: count, weights: weights) { row, x, w in
                for column in 0..<width { terms[column] = w[column] * (x[column] - means[column]) }
                // Each signal's terms summed in feature order. Features are finite, so the term of a zero
                // weight is ±0 and leaves a sum as it was.
                let shares = SignalShares { shares in
                    for run in runs {
                        var sum = 0.0
                        for column in run.columns { sum += terms[column] }
                        shares[run.signal] = sum
                    }
                }
                body(row, shares)
            }
        }
    }
}
