public import SmartStackCore

/// What the service starts from: the latest snapshot and what the log holds besides it, without the events
/// themselves (the engine's owner replays those it needs with ``EventLog/replay(after:through:_:)``, one at a
/// time, so no copy of the history is ever held in memory).
public struct StoredStart: Sendable {
    /// The latest snapshot, if there is one.
    public var snapshot: StoredSnapshot?
    /// The sequence number of the last stored record (0 for an empty log).
    public var lastSequence: Int64
    /// Event rows stored (donations and publish marks included).
    public var events: Int
    /// How many donations each app has stored.
    public var donationsPerApp: [AppID: Int]
    /// The uid each claimed app id belongs to (see ``EventLog/recordOwner(app:uid:)``).
    public var owners: [AppID: UInt32]

    public init(
        snapshot: StoredSnapshot? = nil, lastSequence: Int64 = 0, events: Int = 0, donationsPerApp: [AppID: Int] = [:],
        owners: [AppID: UInt32] = [:]
    ) {
        self.snapshot = snapshot
        self.lastSequence = lastSequence
        self.events = events
        self.donationsPerApp = donationsPerApp
        self.owners = owners
    }
}

/// A log kept in memory: records with their sequence numbers, in order, and each app's donations by id.
///
/// The history of ``InMemoryEventLog`` (the service without a state directory and tests); the SQLite log
/// keeps the same in its file.
struct MemoryHistory: Sendable {
    private(set) var records: [(sequence: Int64, event: EngineEvent)] = []
    private var donations: [AppID: [String: Donation]] = [:]
    private(set) var lastSequence: Int64 = 0

    init() {}

    /// Appends events at the next sequence numbers.
    mutating func append(_ events: [EngineEvent]) {
        for event in events {
            lastSequence += 1
            records.append((lastSequence, event))
            if let donation = event.donation { donations[donation.app, default: [:]][donation.id] = donation }
        }
    }

    /// Removes donations by app and id.
    mutating func delete(_ doomed: [(app: AppID, id: String)]) {
        guard !doomed.isEmpty else { return }
        var ids: [AppID: Set<String>] = [:]
        for (app, id) in doomed {
            ids[app, default: []].insert(id)
            donations[app]?[id] = nil
        }
        records.removeAll { record in
            guard let donation = record.event.donation else { return false }
            return ids[donation.app]?.contains(donation.id) ?? false
        }
    }

    var start: StoredStart {
        StoredStart(
            lastSequence: lastSequence, events: records.count,
            donationsPerApp: donations.compactMapValues { $0.isEmpty ? nil : $0.count })
    }

    func replay(after: Int64, through: Int64, _ body: (EngineEvent) -> Void) {
        for record in records where record.sequence > after && record.sequence <= through { body(record.event) }
    }

    func donation(app: AppID, id: String) -> Donation? { donations[app]?[id] }

    func donations(app: AppID, from start: DonationPageStart, limit: Int) -> DonationPage? {
        let from = start.sequence { id in
            records.first { $0.event.donation?.app == app && $0.event.donation?.id == id }?.sequence
        }
        guard let from else { return nil }
        var page = DonationPage(donations: [], through: from)
        for record in records where record.sequence > from {
            guard page.donations.count < limit else { break }
            guard let donation = record.event.donation, donation.app == app else { continue }
            page.donations.append(donation)
            page.through = record.sequence
        }
        return page
    }

    func forEachDonation(_ body: (Donation) -> Void) {
        for record in records { if let donation = record.event.donation { body(donation) } }
    }
}
