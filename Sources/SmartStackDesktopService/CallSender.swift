public import SmartStackClient
public import SmartStackDesktop
public import SmartStackProtocol

/// How smartstackd answered one call.
public enum CallResult: Sendable {
    /// Done (or, for a donation sent again, already done).
    case accepted(JSONObject)
    /// Refused for good (a bad value, a conflict, no permission): sending it again would be refused again.
    case refused(VarlinkError)
}

/// Sends ``DesktopCall``s; the one place the live service and the replay make their calls.
public enum CallSender {
    /// Errors after which the same call may succeed later: the caller keeps the call and retries.
    static let transient: Set<String> = [
        "io.smartstack.Provider.ServiceStopping", "io.smartstack.Shell.ServiceStopping",
        "io.smartstack.Provider.StorageFailed", "io.smartstack.Shell.StorageFailed",
        "io.smartstack.Provider.RateLimited", "io.smartstack.Shell.RateLimited",
    ]

    /// Makes one call. Throws a connection error, or the typed error when it is transient.
    public static func send(_ call: DesktopCall, over client: inout VarlinkClient) async throws(VarlinkClientError)
        -> CallResult
    {
        do throws(VarlinkClientError) {
            return .accepted(try await client.call(call.method, call.parameters))
        } catch {
            guard case .remote(let remote) = error else { throw error }
            if transient.contains(remote.name) || remote.name.hasSuffix(".ServiceStopping") { throw error }
            return .refused(remote)
        }
    }

    /// Makes `calls` pipelined on one connection and returns the typed errors, in order (a replay: nothing is
    /// retried). Throws when the connection breaks.
    public static func sendAll(_ calls: [DesktopCall], over client: inout VarlinkClient) async throws -> [VarlinkError]
    {
        var errors: [VarlinkError] = []
        try await client.pipeline(count: calls.count, window: 64) { index in
            (calls[index].method, calls[index].parameters)
        } reply: { _, result in
            if case .failure(let error) = result { errors.append(error) }
        }
        return errors
    }
}
