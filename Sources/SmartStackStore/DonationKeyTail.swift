/// The donation keys (app and id) the log has committed but not yet written to `donation_key`, with their rows.
///
/// Each commit adds its donations' keys here instead of to an index on `event`: 50 donations from 50 clients
/// would otherwise write up to 50 index leaves (4 KiB each) to the write-ahead log per commit. When the tail
/// holds `StoreOptions.donationKeyBatch` keys, or before a deletion, the writer copies them from `event` into
/// `donation_key` in one statement, in a transaction that also records the last sequence number they cover
/// (`donationKeysThrough`): a run of ids from one client then dirties a few neighbouring leaves once per batch
/// instead of one per commit. Every key with a later sequence number
/// is in the tail, so at start the log reads it back from `event` (at most one batch of rows).
///
/// Written by the writer thread only, after its transactions commit; read by lookups on any thread.
struct DonationKeyTail: Sendable {
    struct Key: Hashable, Sendable {
        var app: String
        var id: String
    }

    private(set) var sequences: [Key: Int64] = [:]
    /// The last sequence number whose donation keys are all in `donation_key`.
    private(set) var through: Int64 = 0

    var count: Int { sequences.count }

    /// The row of the donation `id` of `app`, if its key is here.
    func sequence(app: String, id: String) -> Int64? { sequences[Key(app: app, id: id)] }

    mutating func add(app: String, id: String, sequence: Int64) {
        sequences[Key(app: app, id: id), default: sequence] = sequence
    }

    /// After a transaction wrote every key here to `donation_key`, covering sequence numbers up to `through`.
    mutating func flushed(through: Int64) {
        sequences.removeAll(keepingCapacity: sequences.count <= 65_536)
        self.through = max(self.through, through)
    }

    /// Replaces everything with what the store holds (at start, and after a failed commit).
    mutating func reset(through: Int64, keys: [(app: String, id: String, sequence: Int64)]) {
        sequences = [:]
        self.through = through
        for key in keys { add(app: key.app, id: key.id, sequence: key.sequence) }
    }

    /// How many keys of each app are here.
    func countsPerApp() -> [String: Int] {
        var counts: [String: Int] = [:]
        for key in sequences.keys { counts[key.app, default: 0] += 1 }
        return counts
    }
}
