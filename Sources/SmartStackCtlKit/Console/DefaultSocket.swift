import SmartStackProtocol

/// The socket smartstackctl talks to when no `--address` and no `$SMARTSTACK_ADDRESS` name one.
public enum DefaultSocket {
    /// The user's own socket (`userSocket`, from ``ServiceDefaults``) when it exists; otherwise the system
    /// service's when that exists (a desktop user reaching the system instance, with no user instance running);
    /// otherwise the user's, so that the message names the socket a user instance would have.
    public static func path(userSocket: String, exists: (String) -> Bool) -> String {
        let system = ServiceDefaults.systemSocketPath
        if userSocket == system || exists(userSocket) || !exists(system) { return userSocket }
        return system
    }
}
