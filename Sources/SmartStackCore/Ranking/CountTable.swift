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
/// a lookup hashes a fixed-size key with one multiply-xorshift mix instead of `Hasher` and probes linearly in
/// one flat array of key-and-sum slots, and an entry costs its key and 8 bytes. A sum of 0 marks an empty slot, so only
/// positive amounts are stored. The table grows by doubling past three quarters full; `scale(by:droppingBelow:)`
/// rescales every sum and drops the ones that decayed to nothing.
struct CountTable<Key: CountTableKey>: Sendable {
    /// One slot: a key and its sum, side by side so a probe touches one cache line.
    struct Slot: Sendable {
        var key: Key
        var sum: Double
    }

    var slots: [Slot] = []
    /// Entries in use.
    var count = 0

    /// Slots allocated (a power of two, or 0).
    var capacity: Int { slots.count }

    /// The sum of `key`, 0 when absent.
    @inline(__always)
    func sum(_ key: Key) -> Double {
        guard count > 0 else { return 0 }
        return slots.withUnsafeBufferPointer { slots in
            let mask = slots.count - 1
            var slot = Int(truncatingIfNeeded: key.hashBits) & mask
            while true {
                let sum = slots[slot].sum
                if sum == 0 { return 0 }
                if slots[slot].key == key { return sum }
                slot = (slot + 1) & mask
            }
        }
    }

    /// The sums of `count` keys (`key(i)`, 0 when absent) into `output[i]`, looked up together: every key's
    /// first slot is loaded before any is examined, so their cache misses overlap instead of each waiting
    /// behind the mispredicted branches of the one before.
    @inline(__always)
    func sums(count: Int, of key: (Int) -> Key, into output: UnsafeMutableBufferPointer<Double>) {
        guard self.count > 0 else {
            for i in 0..<count { output[i] = 0 }
            return
        }
        slots.withUnsafeBufferPointer { slots in
            withUnsafeTemporaryAllocation(of: Int.self, capacity: count) { homes in
                let mask = slots.count - 1
                for i in 0..<count {
                    let home = Int(truncatingIfNeeded: key(i).hashBits) & mask
                    homes[i] = home
                    output[i] = slots[home].sum
                }
                for i in 0..<count {
                    var slot = homes[i]
                    var sum = output[i]
                    while sum != 0, slots[slot].key != key(i) {
                        slot = (slot + 1) & mask
                        sum = slots[slot].sum
                    }
                    output[i] = sum
                }
            }
        }
    }

    /// Adds `amount` (> 0; anything else is ignored) to the sum of `key`; returns whether that made a new entry.
    @discardableResult
    mutating func add(_ amount: Double, to key: Key) -> Bool {
        guard amount > 0, amount.isFinite else { return false }
        if (count + 1) * 4 > slots.count * 3 { resize(to: Swift.max(16, slots.count * 2)) }
        let mask = slots.count - 1
        var slot = Int(truncatingIfNeeded: key.hashBits) & mask
        while slots[slot].sum != 0 {
            if slots[slot].key == key {
                slots[slot].sum += amount
                return false
            }
            slot = (slot + 1) & mask
        }
        slots[slot] = Slot(key: key, sum: amount)
        count += 1
        return true
    }

    /// Multiplies every sum by `factor` and drops those that end below `threshold`, in place.
    ///
    /// In place, because rebuilding would hold the old and the new table at once and leave the old one as a
    /// hole in the heap: the table keeps its size, which is what its busiest stretch needed. It shrinks (and
    /// only then reallocates) when what is left fills less than an eighth of it.
    mutating func scale(by factor: Double, droppingBelow threshold: Double, onDrop: (Key) -> Void = { _ in }) {
        guard count > 0 else { return }
        let mask = slots.count - 1
        // Scan from an empty slot, so no run of occupied slots wraps past the scan's start: a removal only
        // moves entries from slots the scan has not reached into the slot it is looking at.
        guard let start = slots.firstIndex(where: { $0.sum == 0 }) else { return }
        var step = 1
        while step <= mask {
            let slot = (start + step) & mask
            guard slots[slot].sum != 0 else {
                step += 1
                continue
            }
            let scaled = slots[slot].sum * factor
            if scaled >= threshold, scaled > 0 {
                slots[slot].sum = scaled
                step += 1
            } else {
                onDrop(slots[slot].key)
                remove(at: slot)  // Another entry may have moved here: look at this slot again.
            }
        }
        if slots.count > 16, count * 8 < slots.count {
            var capacity = 16
            while count * 2 > capacity { capacity *= 2 }
            resize(to: capacity)
        }
    }

    /// Empties `slot` and moves later entries of its run back so every entry stays reachable from its home
    /// slot (backward-shift deletion; linear probing needs no tombstones).
    private mutating func remove(at slot: Int) {
        let mask = slots.count - 1
        var hole = slot
        var next = slot
        while true {
            next = (next + 1) & mask
            guard slots[next].sum != 0 else { break }
            let home = Int(truncatingIfNeeded: slots[next].key.hashBits) & mask
            // The entry may move back into the hole when the hole lies between its home and where it is.
            if (next - hole) & mask <= (next - home) & mask {
                slots[hole] = slots[next]
                hole = next
            }
        }
        slots[hole].sum = 0
        count -= 1
    }

    /// Every entry, in slot order (for tests and statistics).
    var entries: [(key: Key, sum: Double)] {
        slots.compactMap { $0.sum != 0 ? ($0.key, $0.sum) : nil }
    }

    private mutating func resize(to capacity: Int) {
        let old = slots
        slots = Array(repeating: Slot(key: Key(), sum: 0), count: capacity)
        count = 0
        let mask = capacity - 1
        for entry in old where entry.sum != 0 {
            var slot = Int(truncatingIfNeeded: entry.key.hashBits) & mask
            while slots[slot].sum != 0 { slot = (slot + 1) & mask }
            slots[slot] = entry
            count += 1
        }
    }
}
