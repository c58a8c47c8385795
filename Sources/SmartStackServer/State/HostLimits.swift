import SmartStackCore
public import SmartStackProtocol

/// The host's limits beyond the engine's own (which `EngineSettings` holds).
public struct HostLimits: Sendable, Hashable {
    /// The most donations stored at once, over all apps.
    public var maxDonations = 5_000_000
    /// The most donations stored at once for one app, so one app (a buggy one flooding) cannot take the room of
    /// every other.
    public var maxDonationsPerApp = 1_000_000
    /// The most donations the apps one uid owns may keep at once (system mode: an app's owner is the uid that claimed
    /// it; root and the service's own uid aside), so one uid cannot fill `maxDonations` for every other.
    public var maxDonationsPerUID = 1_250_000
    /// The most widget kinds the apps one uid owns may register (as `maxDonationsPerUID`), so one uid cannot fill
    /// `maxKinds` for every other.
    public var maxKindsPerUID = 2_500
    /// The most Live Activities visible at once, over all apps: each holds up to 32 KiB of attributes and content,
    /// and every stack of its app shows it.
    public var maxLiveActivities = 1_024
    /// The most Live Activities the apps one uid owns may have visible at once (as `maxDonationsPerUID`), so one uid
    /// cannot fill `maxLiveActivities` for every other through many apps.
    public var maxLiveActivitiesPerUID = 128
    /// The most concurrent subscriptions (`Subscribe` and `WatchReloads` streams).
    public var maxSubscriptions = 1_024
    /// How many published decisions may wait for a subscriber before it is cut off.
    public var subscriberQueue = 256
    /// The most donations one `ListDonations` page returns.
    public var maxListLimit = 1_000
    /// The largest `ListDonations` reply, in bytes: a page over it is `LimitExceeded(maxListReplyBytes)`, to be asked
    /// for again with a smaller limit. Clients take replies of at most 16 MiB (`smartstackctl`, systemd's sd-varlink),
    /// and 1,000 donations with 16 KiB of parameters each are about 17 MB.
    public var maxListReplyBytes = 8 << 20
    /// How far ahead of the service's clock a recording call's `date` may be, in seconds (clocks of clients
    /// differ a little); later dates are refused.
    public var maxFutureSkew = 300.0
    /// Seconds between two looks for donations past the retention period.
    public var retentionSweepInterval = 3_600.0
    /// The most reads of the stored history answered at once: `ListDonations` pages (up to 1,000 donations each)
    /// and questions about a past time (`GetStack`/`Explain` with an earlier `at`, each rebuilding an engine from
    /// the log). They run off the event loop and hold what they read; more wait their turn, in call order.
    public var maxHistoryReads = 4

    public init() {}
}

/// Counters for `GetStatistics`.
public struct HostStatistics: Sendable, Hashable {
    public var stacks = 0
    public var widgets = 0
    public var kinds = 0
    public var liveActivities = 0
    public var donations = 0
    /// The apps keeping the most donations, most first (at most `topAppCount`, ties by app id).
    public var topApps: [AppDonationCount] = []
    public static let topAppCount = 10
    public var subscribers = 0
    public var reloadWatchers = 0
    public var uptimeSeconds = 0.0
    /// Events the engine took since start.
    public var eventsRecorded = 0
    /// Decisions published (sent to subscribers) since start.
    public var decisionsPublished = 0
    /// Subscribers cut off because they did not read.
    public var subscribersCutOff = 0
    /// Reload requests sent to providers since start.
    public var reloadsRequested = 0
    /// Donations taken since start (deletions and retention aside): what STATUS= shows per minute.
    public var donationsReceived = 0
}
