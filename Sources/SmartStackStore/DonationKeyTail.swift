/// The donation keys (app and id) the log has committed but not yet written to `donation_key`, with their rows.
///
/// Each commit adds its donations' keys here instead of to an index on `event`: 50 donations from 50 clients
/// would otherwise write up to 50 index leaves (4 KiB each) to the write-ahead log per commit. When the tail
/// holds `StoreOptions.donationKeyBatch` keys, the writer copies its oldest `donationKeyChunk` into `donation_key`
/// in key order (`DonationKeyCopy`), a slice at a time whenever it has no commit to make, and records the last
/// sequence number they cover (`donationKeysThrough`) with the last slice: a run of ids from one client then dirties
/// a neighbouring leaf or two once per chunk instead of a leaf per commit, and no commit waits behind more than a
/// slice. Before a deletion it copies them all. Every key with a later sequence number is in the tail, so at start
/// the log reads it back from `event` (at most one batch of rows, plus what the copy under way had not finished).
///
/// Written by the writer thread only, after its transactions commit; read by lookups on any thread.
struct DonationKeyTail: Sendable {
    struct Key: Hashable, Sendable {
        var app: String
        var id: String
    }

    private(set) var sequences: [Key: Int64] = [:]
    /// The same keys in the order they were stored (by sequence number), from `head` on.
    private var order: [(key: Key, sequence: Int64)] = []
    private var head = 0
    /// The last sequence number whose donation keys are all in `donation_key`.
    private(set) var through: Int64 = 0

    var count: Int { sequences.count }

    /// The row of the donation `id` of `app`, if its key is here.
    func sequence(app: String, id: String) -> Int64? { sequences[Key(app: app, id: id)] }

    mutating func add(app: String, id: String, sequence: Int64) {
        let key = Key(app: app, id: id)
        sequences[key] = sequence
        order.append((key: key, sequence: sequence))
    }

    /// The sequence number of the last of the oldest `count` keys (the end of the next chunk to copy).
    func end(ofOldest count: Int) -> Int64? {
        guard head < order.count else { return nil }
        return order[min(order.count - 1, head + max(1, count) - 1)].sequence
    }

    /// After a transaction copied the keys of the rows up to `through` to `donation_key`.
    mutating func flushed(through: Int64) {
        while head < order.count, order[head].sequence <= through {
            if sequences[order[head].key] == order[head].sequence { sequences.removeValue(forKey: order[head].key) }
            head += 1
        }
        if head == order.count {
            order.removeAll(keepingCapacity: order.count <= 65_536)
            head = 0
        } else if head >= 4_096, head * 2 >= order.count {
            order.removeFirst(head)
            head = 0
        }
        self.through = max(self.through, through)
    }

    /// Replaces everything with what the store holds (at start, and after a failed commit).
    mutating func reset(through: Int64, keys: [(app: String, id: String, sequence: Int64)]) {
        sequences = [:]
        order = []
        head = 0
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

/// A chunk of the tail's oldest keys being copied to `donation_key`, a slice per transaction. Its first transaction
/// puts the chunk's keys in a temporary table (in memory) sorted as the table's primary key sorts them, so the
/// slices, taken in that order, write each leaf of `donation_key` about once per chunk. The keys stay in the tail
/// until the last slice commits; a slice written before a stop is written again after it (`INSERT OR REPLACE`), and
/// rows of `donation_key` past `donationKeysThrough` are not counted at start. Owned by the writer thread.
struct DonationKeyCopy {
    /// The last sequence number before the chunk.
    let after: Int64
    /// The last sequence number the chunk covers: `donationKeysThrough` once it is written.
    let through: Int64
    /// The chunk's keys, once sorted into the temporary table (nil before its first transaction).
    var count: Int?
    /// The keys (in key order) written so far.
    var next = 0

    /// Whether every key of the chunk is written.
    var isFinished: Bool { count.map { next >= $0 } ?? false }
}
