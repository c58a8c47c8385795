/// A key of a `CountTable`: a small value with well-mixed hash bits.
protocol CountTableKey: Equatable, Sendable {
    /// A placeholder stored in empty slots.
    init()
    /// 64 bits of hash, every input bit affecting every output bit (the table uses the low bits).
    var hashBits: UInt64 { get }
}

/// SplitMix64's finaliser (Steele, Lea, Flood 2014): a cheap, strong 64-bit mix.
@inline(__always)
func mix64(_ value: UInt64) -> UInt64 {
    var z = value
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
}

extension UInt64: CountTableKey {
    var hashBits: UInt64 { mix64(self) }
}

/// Positive sums (decayed counts against a `DecayClock`) keyed by small values, in one open-addressing table.
///
/// Built for the behaviour aggregates' sparse pair tables (app → widget transitions, look outcomes per context):
/// a lookup hashes a fixed-size key with one multiply-xorshift mix instead of `Hasher`, probes linearly in two
/// flat arrays, and an entry costs its key and 8 bytes. A sum of 0 marks an empty slot, so only positive
/// amounts are stored. The table grows by doubling past three quarters full; `scale(by:droppingBelow:)`
/// rescales every sum and drops the ones that decayed to nothing.
struct CountTable<Key: CountTableKey>: Sendable {
    private var keys: [Key] = []
    private var sums: [Double] = []
    /// Entries in use.
    private(set) var count = 0

    /// Slots allocated (a power of two, or 0).
    var capacity: Int { sums.count }

    /// The sum of `key`, 0 when absent.
    @inline(__always)
    func sum(_ key: Key) -> Double {
        guard count > 0 else { return 0 }
        let mask = sums.count - 1
        var slot = Int(truncatingIfNeeded: key.hashBits) & mask
        while true {
            let sum = sums[slot]
            if sum == 0 { return 0 }
            if keys[slot] == key { return sum }
            slot = (slot + 1) & mask
        }
    }

    /// Adds `amount` (> 0; anything else is ignored) to the sum of `key`.
    mutating func add(_ amount: Double, to key: Key) {
        guard amount > 0, amount.isFinite else { return }
        if (count + 1) * 4 > sums.count * 3 { resize(to: Swift.max(16, sums.count * 2)) }
        let mask = sums.count - 1
        var slot = Int(truncatingIfNeeded: key.hashBits) & mask
        while sums[slot] != 0 {
            if keys[slot] == key {
                sums[slot] += amount
                return
            }
            slot = (slot + 1) & mask
        }
        keys[slot] = key
        sums[slot] = amount
        count += 1
    }

    /// Multiplies every sum by `factor` and drops those that end below `threshold`, in place.
    ///
    /// In place, because rebuilding would hold the old and the new table at once and leave the old one as a
    /// hole in the heap: the table keeps its size, which is what its busiest stretch needed. It shrinks (and
    /// only then reallocates) when what is left fills less than an eighth of it.
    mutating func scale(by factor: Double, droppingBelow threshold: Double) {
        guard count > 0 else { return }
        let mask = sums.count - 1
        // Scan from an empty slot, so no run of occupied slots wraps past the scan's start: a removal only
        // moves entries from slots the scan has not reached into the slot it is looking at.
        guard let start = sums.firstIndex(of: 0) else { return }
        var step = 1
        while step <= mask {
            let slot = (start + step) & mask
            guard sums[slot] != 0 else {
                step += 1
                continue
            }
            let scaled = sums[slot] * factor
            if scaled >= threshold, scaled > 0 {
                sums[slot] = scaled
                step += 1
            } else {
                remove(at: slot)  // Another entry may have moved here: look at this slot again.
            }
        }
        if sums.count > 16, count * 8 < sums.count {
            var capacity = 16
            while count * 2 > capacity { capacity *= 2 }
            resize(to: capacity)
        }
    }

    /// Empties `slot` and moves later entries of its run back so every entry stays reachable from its home
    /// slot (backward-shift deletion; linear probing needs no tombstones).
    private mutating func remove(at slot: Int) {
        let mask = sums.count - 1
        var hole = slot
        var next = slot
        while true {
            next = (next + 1) & mask
            guard sums[next] != 0 else { break }
            let home = Int(truncatingIfNeeded: keys[next].hashBits) & mask
            // The entry may move back into the hole when the hole lies between its home and where it is.
            if (next - hole) & mask <= (next - home) & mask {
                keys[hole] = keys[next]
                sums[hole] = sums[next]
                hole = next
            }
        }
        sums[hole] = 0
        count -= 1
    }

    /// Every entry, in slot order (for tests and statistics).
    var entries: [(key: Key, sum: Double)] {
        sums.indices.compactMap { sums[$0] != 0 ? (keys[$0], sums[$0]) : nil }
    }

    private mutating func resize(to capacity: Int) {
        let oldKeys = keys
        let oldSums = sums
        keys = Array(repeating: Key(), count: capacity)
        sums = Array(repeating: 0, count: capacity)
        count = 0
        for slot in oldSums.indices where oldSums[slot] != 0 { insertNew(oldKeys[slot], oldSums[slot]) }
    }

    /// Inserts a key known to be absent, into a table with room for it.
    private mutating func insertNew(_ key: Key, _ sum: Double) {
        let mask = sums.count - 1
        var slot = Int(truncatingIfNeeded: key.hashBits) & mask
        while sums[slot] != 0 { slot = (slot + 1) & mask }
        keys[slot] = key
        sums[slot] = sum
        count += 1
    }
}
