/// The one-line state `STATUS=` shows (`systemctl status`), and the donation rate behind it.
public struct ServiceStatus: Sendable, Hashable {
    public var stacks: Int
    public var widgets: Int
    public var subscribers: Int
    public var donationsPerMinute: Int

    public init(stacks: Int, widgets: Int, subscribers: Int, donationsPerMinute: Int) {
        self.stacks = stacks
        self.widgets = widgets
        self.subscribers = subscribers
        self.donationsPerMinute = donationsPerMinute
    }

    /// `serving 2 stacks, 7 widgets, 1 subscriber, 12 donations/min`.
    public var text: String {
        func count(_ value: Int, _ noun: String) -> String { "\(value) \(noun)\(value == 1 ? "" : "s")" }
        return "serving \(count(stacks, "stack")), \(count(widgets, "widget")), \(count(subscribers, "subscriber")), "
            + "\(donationsPerMinute) donations/min"
    }
}

/// Donations in the last minute, from readings of a running total (`HostStatistics.donationsReceived`).
///
/// Keeps one reading per call within the last minute; the rate is the newest total minus the oldest kept,
/// so it is exact when readings come at least once a minute, and counts since start for a younger service.
public struct DonationRate: Sendable {
    private var readings: [(at: ContinuousClock.Instant, total: Int)] = []
    /// How far back the rate looks.
    public let window: Duration

    public init(window: Duration = .seconds(60)) {
        self.window = window
    }

    /// Adds a reading and returns the donations of the last window.
    public mutating func add(total: Int, at now: ContinuousClock.Instant) -> Int {
        readings.append((now, total))
        // Keep the newest reading at or before the window's start as the baseline.
        while readings.count > 1, readings[1].at <= now - window { readings.removeFirst() }
        return max(0, total - (readings.first?.total ?? total))
    }
}
