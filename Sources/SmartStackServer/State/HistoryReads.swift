/// The reads of the stored history running (at most `maxHistoryReads`: `ListDonations` pages, rebuilds for questions
/// about a past time), and those waiting, first first.
struct HistoryReads {
    var running = 0 {
        didSet { mostRunning = max(mostRunning, running) }
    }
    /// The most that ran at once since start.
    private(set) var mostRunning = 0
    /// Resumed with whether the read got a place (`false`: the host stopped).
    var waiting: [CheckedContinuation<Bool, Never>] = []
}
