public import SmartStackCore

/// Where a page of an app's donations starts (`ListDonations`).
public enum DonationPageStart: Sendable, Equatable {
    /// From the app's first recorded donation.
    case beginning
    /// After the app's donation with this id, which must be stored (a page after a deleted one cannot be found).
    case after(id: String)
    /// After the record with this sequence number: a cursor, which stays good when donations are deleted.
    case cursor(Int64)

    /// The id of `.after`.
    public var afterID: String? {
        if case .after(let id) = self { id } else { nil }
    }

    /// The sequence number the page starts after, `lookUp` finding an id's; `nil` when the id is not found.
    func sequence<Failure: Error>(_ lookUp: (String) throws(Failure) -> Int64?) throws(Failure) -> Int64? {
        switch self {
        case .beginning: 0
        case .cursor(let sequence): sequence
        case .after(let id): try lookUp(id)
        }
    }
}

/// One page of an app's donations in recorded order, and where the next page starts.
public struct DonationPage: Sendable, Equatable {
    /// The donations, in recorded order.
    public var donations: [Donation]
    /// The sequence number of the last donation on the page, or where the page started when it is empty: the
    /// next page is the donations recorded after it.
    public var through: Int64

    public init(donations: [Donation], through: Int64) {
        (self.donations, self.through) = (donations, through)
    }
}
