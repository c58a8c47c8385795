import SmartStackCore
import SmartStackStore

/// An app's donation id: what must be unique.
struct DonationKey: Hashable, Sendable {
    var app: AppID
    var id: String

    init(_ donation: Donation) {
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
/// thousand new ids at a million donations). Deleted ids stay in it (a "maybe" the store then answers).
struct DonationKeyFilter: Sendable {
    /// 2^24 bits (2 MiB): three probes give about one false "maybe" in 230 new ids at 1,000,000 donations (each
    /// then a lookup of ~10 µs in the store's index), one in 20 at 5,000,000 (`maxDonations`).
    static let bitCount = 1 << 24
    private var words: [UInt64]

    init() { words = Array(repeating: 0, count: Self.bitCount / 64) }

    mutating func insert(app: String, id: String) {
        let (a, b, c) = Self.probes(app: app, id: id)
        set(a)
        set(b)
        set(c)
    }

    func mayContain(app: String, id: String) -> Bool {
        let (a, b, c) = Self.probes(app: app, id: id)
        return isSet(a) && isSet(b) && isSet(c)
    }

    private mutating func set(_ bit: Int) { words[bit >> 6] |= 1 << UInt64(bit & 63) }
    private func isSet(_ bit: Int) -> Bool { words[bit >> 6] & (1 << UInt64(bit & 63)) != 0 }

    /// Takes the keys of `other` as well.
    mutating func formUnion(_ other: DonationKeyFilter) {
        for index in words.indices { words[index] |= other.words[index] }
    }

    /// Three bit positions from one 64-bit hash (double hashing). `Hasher`'s seed is the process's, the same on
    /// every thread, so a filter filled off the loop matches the loop's.
    private static func probes(app: String, id: String) -> (Int, Int, Int) {
        var hasher = Hasher()
        hasher.combine(app)
        hasher.combine(id)
        let hash = UInt64(bitPattern: Int64(hasher.finalize()))
        let first = Int(truncatingIfNeeded: hash & 0xFFFF_FFFF)
        let step = Int(truncatingIfNeeded: hash >> 32) | 1
        let mask = bitCount - 1
        return (first & mask, (first &+ step) & mask, (first &+ 2 &* step) & mask)
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
