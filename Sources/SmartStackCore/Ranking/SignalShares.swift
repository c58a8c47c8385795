/// Each signal's share of a widget's score: a fixed-size value, so building a decision allocates nothing.
///
/// Reads like a dictionary: `shares[.recency]` is `nil` when the signal contributed nothing (less than
/// `resolution`).
public struct SignalShares: Sendable, Hashable, CustomStringConvertible {
    /// One share per signal, by `Signal.index`. A tuple rather than a SIMD vector: it keeps the value's
    /// alignment at 8 bytes, so arrays of values holding shares (entries, standings) come from plain `malloc`
    /// instead of its slower aligned path, and it holds exactly the thirteen signals.
    private var values:
        (Double, Double, Double, Double, Double, Double, Double, Double, Double, Double, Double, Double, Double) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)

    /// How many shares `values` holds.
    static let capacity = 13

    /// A share smaller than this (in log-odds) is none. Centring values that were all equal leaves rounding (about
    /// 1e-16), not a contribution: it showed in every explanation and could decide a reason (`engagement`).
    public static let resolution = 1e-9

    /// `share`, or 0 when it is below `resolution`.
    @inline(__always)
    static func significant(_ share: Double) -> Double { abs(share) < resolution ? 0 : share }

    public init() {}

    /// The `capacity` shares at `shares`, by `Signal.index`.
    init(copying shares: UnsafePointer<Double>) {
        withUnsafeMutableBytes(of: &values) { bytes in
            for index in 0..<Self.capacity {
                bytes.storeBytes(
                    of: Self.significant(shares[index]), toByteOffset: index * MemoryLayout<Double>.stride,
                    as: Double.self)
            }
        }
    }

    /// An explicit set of shares.
    public init(_ dictionary: [Signal: Double]) {
        for (signal, share) in dictionary { self[signal] = share }
    }

    public subscript(signal: Signal) -> Double? {
        get {
            let share = share(at: signal.index)
            return share != 0 ? share : nil
        }
        set {
            withUnsafeMutableBytes(of: &values) { bytes in
                bytes.storeBytes(
                    of: Self.significant(newValue ?? 0), toByteOffset: signal.index * MemoryLayout<Double>.stride,
                    as: Double.self)
            }
        }
    }

    /// The share of the signal with `Signal.index` `index`, 0 when it contributed nothing.
    @inline(__always)
    func share(at index: Int) -> Double {
        precondition(index >= 0 && index < Self.capacity)
        return withUnsafeBytes(of: values) {
            $0.load(fromByteOffset: index * MemoryLayout<Double>.stride, as: Double.self)
        }
    }

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

    /// Equal when every share is (`==` on each: 0 and -0 are equal).
    public static func == (lhs: SignalShares, rhs: SignalShares) -> Bool {
        (0..<capacity).allSatisfy { lhs.share(at: $0) == rhs.share(at: $0) }
    }

    public func hash(into hasher: inout Hasher) {
        for index in 0..<Self.capacity { hasher.combine(share(at: index)) }
    }
}
