import SmartStackCore
import SmartStackStore

/// What the engine's owner keeps about the stored donations, so that a donation needs no read of the store: how
/// many there are, which ids are surely free (a filter), those logged and not yet committed, and the earliest date
/// (retention's scan is skipped while it is within the period).
struct DonationIndex {
    /// Which donation ids may be taken (certain "no" without asking the store).
    var keys = DonationKeyFilter()
    /// Whether `keys` holds every stored donation (filled off the loop after start); until then every id is looked
    /// up in the store.
    var keysComplete = false
    /// Donations logged whose commit may still be pending (the store cannot find them yet).
    var unconfirmed = UnconfirmedDonations()
    /// Donations stored or logged.
    var count = 0
    /// Donations stored or logged, per app (`maxDonationsPerApp`).
    var perApp: [AppID: Int] = [:]
    /// The dates the latest donations stored at the service's time were sent with (dated a little ahead), so a
    /// retry after that date has passed is still the same donation; at most `clampedKept`, the oldest forgotten
    /// first (and all at a restart: such a retry is then a conflict).
    private(set) var clampedDates: [DonationKey: Timestamp] = [:]
    private var clampedOrder: [DonationKey] = []
    static let clampedKept = 4_096

    mutating func rememberClamped(_ key: DonationKey, sent: Timestamp) {
        if clampedDates.updateValue(sent, forKey: key) == nil { clampedOrder.append(key) }
        if clampedOrder.count > Self.clampedKept {
            let dropped = clampedOrder.count - Self.clampedKept / 2
            for old in clampedOrder.prefix(dropped) { clampedDates[old] = nil }
            clampedOrder.removeFirst(dropped)
        }
    }

    /// The earliest date of a stored donation, when known.
    var oldest: Timestamp?
    /// The earliest date of a donation applied since a retention scan began.
    var oldestApplied = Timestamp(microseconds: .max)

    /// Whether `probe`'s id is surely not taken, without asking the store.
    func surelyFree(_ probe: DonationKeyFilter.Probe) -> Bool { keysComplete && !keys.mayContain(probe) }

    /// A donation was applied (and is being logged): counted, its key taken, its date noted.
    mutating func applied(_ donation: Donation, probe: DonationKeyFilter.Probe) {
        count += 1
        perApp[donation.app, default: 0] += 1
        keys.insert(probe)
        if donation.date < oldestApplied { oldestApplied = donation.date }
        if let known = oldest, donation.date < known { oldest = donation.date }
    }

    /// A rebuild removed `removed`; `oldestLeft` is the earliest date of those kept.
    mutating func removed(_ removed: [Donation], oldestLeft: Timestamp) {
        count -= removed.count
        for donation in removed {
            let left = (perApp[donation.app] ?? 1) - 1
            perApp[donation.app] = left > 0 ? left : nil
        }
        oldest = oldestLeft
        unconfirmed.remove(Set(removed.map(DonationKey.init)))
    }
}
