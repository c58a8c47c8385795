/// SplitMix64 (Steele, Lea, Flood 2014): a small, fast generator that gives the same numbers for the same seed,
/// for the benchmark's synthetic workloads and the seeded randomised tests.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        return mix64(state)
    }
}
