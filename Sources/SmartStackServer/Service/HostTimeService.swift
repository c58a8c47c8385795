import ServiceLifecycle
import SmartStackCore

/// The engine's owner's time-driven work as a service of the `ServiceGroup`: it sleeps until the next moment the
/// host named (the engine's next change: an entry becoming current, a relevance ending, a Live Activity expiring, a
/// reload coming due; the next retention sweep; the storage retry) and wakes the host (`EngineHost.timerFired`),
/// which publishes what time changed and names the next moment. It stops with the group, or when the host stops.
///
/// Every moment is on the service's clock (`ServiceClock`), never a client's date.
public struct HostTimeService: NamedService {
    let host: EngineHost

    public init(host: EngineHost) {
        self.host = host
    }

    public func run() async {
        let wakeUps = await host.attachTimeService()
        await cancelWhenGracefulShutdown { [host] in
            var sleeper: Task<Void, Never>?
            defer { sleeper?.cancel() }
            for await due in wakeUps {
                // The host named a new moment: the sleep for the previous one is no longer wanted.
                sleeper?.cancel()
                let delay = max(0, due.seconds(since: host.now()))
                sleeper = Task {
                    // A little past the moment, so the clock reads at or after it on waking.
                    try? await Task.sleep(for: .microseconds(Int64(delay * 1_000_000) + 500))
                    guard !Task.isCancelled else { return }
                    await host.timerFired()
                }
            }
        }
    }
}
