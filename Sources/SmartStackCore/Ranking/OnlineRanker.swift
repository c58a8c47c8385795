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

    var weights: [Double] = OnlineRanker.prior
    var squaredGradients: [Double] = Array(repeating: 1e-2, count: Feature.count)
    /// Labels learned from so far.
    var updates: Int = 0

    /// Linear scores (log-odds up to a constant) of the rows of a feature matrix.
    func scores(_ matrix: [Double], rows: Int) -> [Double] {
        let width = Feature.count
        var scores = Array(repeating: 0.0, count: rows)
        for row in 0..<rows {
            var sum = 0.0
            let base = row * width
            for column in 0..<width { sum += weights[column] * matrix[base + column] }
            scores[row] = sum
        }
        return scores
    }

    /// Softmax probabilities of the scores.
    static func probabilities(_ scores: [Double]) -> [Double] {
        guard let top = scores.max() else { return [] }
        let exps = scores.map { exp($0 - top) }
        let total = exps.reduce(0, +)
        return exps.map { $0 / total }
    }

    /// One learning step: the user went to row `target` of the matrix the stack was shown with.
    mutating func learn(matrix: [Double], rows: Int, target: Int) {
        guard rows > 1, target >= 0, target < rows else { return }
        let width = Feature.count
        let probabilities = Self.probabilities(scores(matrix, rows: rows))
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

    /// Each signal's additive share of every row's score, relative to the stack's average row.
    ///
    /// The softmax ignores anything added to every row alike, so centring makes the shares comparable
    /// across widgets: a positive share is what lifts this widget above the others.
    func contributions(matrix: [Double], rows: Int, count: Int) -> [SignalShares] {
        let width = Feature.count
        var means = Array(repeating: 0.0, count: width)
        for row in 0..<rows {
            for column in 0..<width { means[column] += matrix[row * width + column] }
        }
        for column in 0..<width { means[column] /= Double(rows) }
        var result: [SignalShares] = []
        result.reserveCapacity(count)
        for row in 0..<count {
            var shares = SignalShares()
            for column in 0..<width where weights[column] != 0 {
                shares.add(weights[column] * (matrix[row * width + column] - means[column]), at: Feature.signalIndex[column])
            }
            result.append(shares)
        }
        return result
    }
}
