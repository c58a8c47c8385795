/// Each signal's share of a widget's score: a fixed-size value, so building a decision allocates nothing.
///
/// Reads like a dictionary: `shares[.recency]` is `nil` when the signal contributed nothing.
public struct SignalShares: Sendable, Hashable, CustomStringConvertible {
    var values = SIMD16<Double>()

    public init() {}

    /// An explicit set of shares.
    public init(_ dictionary: [Signal: Double]) {
        for (signal, share) in dictionary { values[signal.index] = share }
    }

    public subscript(signal: Signal) -> Double? {
        get { values[signal.index] != 0 ? values[signal.index] : nil }
        set { values[signal.index] = newValue ?? 0 }
    }

    @inline(__always)
    mutating func add(_ share: Double, at index: Int) { values[index] += share }

    /// The signals that contributed, in `Signal.allCases` order.
    public var nonZero: [(signal: Signal, share: Double)] {
        Signal.allCases.compactMap { signal in self[signal].map { (signal, $0) } }
    }

    /// The shares as a dictionary (for encoding).
    public var dictionary: [Signal: Double] {
        Dictionary(uniqueKeysWithValues: nonZero.map { ($0.signal, $0.share) })
    }

    public var isEmpty: Bool { nonZero.isEmpty }

    public var description: String {
        nonZero.map { "\($0.signal.rawValue)=\($0.share)" }.joined(separator: " ")
    }
}
