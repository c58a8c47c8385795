import SmartStackCore
import SmartStackStore

/// An app's donation id: what must be unique.
struct DonationKey: Hashable, Sendable {
    var app: AppID
    var id: String

    init(_ donation: borrowing Donation) {
        app = donation.app
        id = donation.id
    }

    init(app: AppID, id: String) {
        self.app = app
        self.id = id
    }
}

/// Which donation ids may be taken, in a few megabytes whatever the number of stored donations: a Bloom filter
/// over app and id. "No" is certain; "maybe" is checked against the store (a retried call, or one in a few
/// hundred new ids at a million donations). Deleted ids stay in it (a "maybe" the store then answers).
///
/// Blocked: a key's three bits lie in one 64-byte block (a cache line), so a check or an insert reads one line of
/// the 2 MiB table instead of three, each of them a cache miss on every donation.
struct DonationKeyFilter: Sendable {
    /// 2^24 bits (2 MiB) in 2^15 blocks of 512 bits: three bits per key give about one false "maybe" in 210 new
    /// ids at 1,000,000 donations (each then a lookup of ~10 µs in the store's index; 1 in 230 unblocked), one in
    /// 5 at 5,000,000 (`maxDonations`).
    static let bitCount = 1 << 24
    /// Bits in a block: one cache line.
    static let blockBits = 512
    static let blockCount = bitCount / blockBits
    /// Empty until the first key goes in (a filter that never gets one, like the live filter of a service whose
    /// store has no donations until its stored keys are read, allocates nothing and unites in O(1)).
    private var words: [UInt64] = []

    init() {}

    /// Where a key's bits are: one block, three bit positions inside it.
    struct Probe {
        /// The first word of the block.
        var base: Int
        var bits: (Int, Int, Int)
    }

    mutating func insert(app: String, id: String) { insert(Self.probe(app: app, id: id)) }

    /// With the key's probe already computed (a donation is checked, then inserted: hashed once).
    mutating func insert(_ probe: Probe) {
        if words.isEmpty { words = Array(repeating: 0, count: Self.bitCount / 64) }
        set(probe.base, probe.bits.0)
        set(probe.base, probe.bits.1)
        set(probe.base, probe.bits.2)
    }

    func mayContain(_ probe: Probe) -> Bool {
        !words.isEmpty && isSet(probe.base, probe.bits.0) && isSet(probe.base, probe.bits.1)
            && isSet(probe.base, probe.bits.2)
    }

    private mutating func set(_ base: Int, _ bit: Int) { words[base + (bit >> 6)] |= 1 << UInt64(bit & 63) }
    private func isSet(_ base: Int, _ bit: Int) -> Bool { words[base + (bit >> 6)] & (1 << UInt64(bit & 63)) != 0 }

    /// Takes the keys of `other` as well.
    ///
    /// When either holds no key this is O(1): a service's start unites its live filter, usually still empty, with
    /// the one filled from the store (docs/fuzzing.md: the 262,144-word union was 16 % of fuzz-dispatch's time).
    mutating func formUnion(_ other: DonationKeyFilter) {
        if other.words.isEmpty { return }
        if words.isEmpty {
            words = other.words
            return
        }
        words.withUnsafeMutableBufferPointer { mine in
            other.words.withUnsafeBufferPointer { theirs in
                for index in 0..<min(mine.count, theirs.count) { mine[index] |= theirs[index] }
            }
        }
    }

    /// The block and three bit positions from one 64-bit hash: 9 bits per position, 15 for the block, all distinct
    /// bits of the hash. `Hasher`'s seed is the process's, the same on every thread, so a filter filled off the
    /// loop matches the loop's.
    static func probe(_ key: DonationKey) -> Probe { probe(app: key.app.rawValue, id: key.id) }

    static func probe(app: String, id: String) -> Probe {
        var hasher = Hasher()
        hasher.combine(app)
        hasher.combine(id)
        let hash = UInt64(bitPattern: Int64(hasher.finalize()))
        let position = UInt64(blockBits - 1)
        let block = Int(truncatingIfNeeded: (hash >> 27) & UInt64(blockCount - 1))
        return Probe(
            base: block * (blockBits / 64),
            bits: (
                Int(truncatingIfNeeded: hash & position), Int(truncatingIfNeeded: (hash >> 9) & position),
                Int(truncatingIfNeeded: (hash >> 18) & position)
            ))
    }
}

/// Donations applied whose commit may not have happened yet (so the store cannot find them): two generations,
/// the older dropped once the ticket that covers all of it has committed. Holds about two commits' worth.
struct UnconfirmedDonations {
    private var current: [DonationKey: Donation] = [:]
    private var previous: [DonationKey: Donation] = [:]
    /// The newest ticket when `previous` stopped growing: once it committed, all of `previous` is stored.
    private var previousCovered = CommitTicket.committed
    /// The most room a cleared table keeps (a commit holds a few thousand calls at most under load).
    static let keptCapacity = 16_384

    /// Adds a donation just logged; `newest` is the latest ticket (which covers it and everything before).
    mutating func add(_ donation: Donation, newest: CommitTicket) {
        if previousCovered.outcome != nil {
            // The tables are reused (a new one per generation grew from empty, rehashing several times per commit).
            // A table a burst made large is given back.
            swap(&previous, &current)
            if current.capacity > Self.keptCapacity { current = [:] } else { current.removeAll(keepingCapacity: true) }
            previousCovered = newest
        }
        current[DonationKey(donation)] = donation
    }

    func donation(_ key: DonationKey) -> Donation? { current[key] ?? previous[key] }

    /// Forgets donations that were deleted.
    mutating func remove(_ keys: Set<DonationKey>) {
        guard !keys.isEmpty else { return }
        for key in keys {
            current[key] = nil
            previous[key] = nil
        }
    }

    mutating func removeAll() {
        current = [:]
        previous = [:]
        previousCovered = .committed
    }
}
